"""Small helpers shared by the rack's modules: running commands, entering a network
namespace from one thread, waiting for things to come up."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import socket
import subprocess
import threading
import time
from pathlib import Path

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class SimError(Exception):
    """A problem that `rackproof sim` reports as one line, without a traceback."""


def run(cmd: list[str], *, input: str | None = None, check: bool = True, timeout: float = 30,
        env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a command; on failure raise SimError naming the command and its first error line."""
    try:
        proc = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        raise SimError(f"{cmd[0]} is not installed (needed by the simulated rack)") from None
    except subprocess.TimeoutExpired:
        raise SimError(f"`{shlex.join(cmd)[:200]}` did not finish within {timeout:g}s") from None
    if check and proc.returncode != 0:
        err = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
        first = next((line for line in err if "rror" in line), err[0] if err else "")
        raise SimError(f"`{shlex.join(cmd)[:200]}` failed (exit {proc.returncode}): {first.strip()}")
    return proc


def batch(tool: str, ns: str | None, lines: list[str], *, check: bool = True) -> subprocess.CompletedProcess | None:
    """Run many `ip`/`tc` commands with one process (`ip -n NS -batch -`)."""
    if not lines:
        return None
    cmd = [tool] + (["-n", ns] if ns else []) + ["-force", "-batch", "-"]
    return run(cmd, input="\n".join(lines) + "\n", check=check)


@contextlib.contextmanager
def netns_thread(name: str):
    """Move the *calling thread* into netns `name` for the duration (setns is per thread)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise SimError(f"cannot enter network namespace {name}: {os.strerror(ctypes.get_errno())}")
        try:
            yield
        finally:
            _libc.setns(own, CLONE_NEWNET)
    finally:
        os.close(own)
        os.close(target)


def in_netns(name: str, fn, *args, **kwargs):
    """Call fn(*args) in a helper thread that sits in netns `name`; return its result."""
    box: dict = {}

    def body():
        try:
            with netns_thread(name):
                box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed back to the caller
            box["error"] = e

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def probe_tcp(host: str, port: int, timeout: float = 0.5, expect: bytes | None = None) -> bool:
    """True if host:port accepts a TCP connection (and, if given, sends `expect` first)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            if expect is None:
                return True
            s.settimeout(timeout)
            return s.recv(len(expect)) == expect
    except OSError:
        return False


def wait_until(what: str, check, timeout: float, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SimError(f"{what} did not happen within {timeout:g}s")
        time.sleep(interval)


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not alive
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False


def write(path: Path, text: str, mode: int = 0o644, uid: int | None = None, gid: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, mode)
    if uid is not None:
        os.chown(path, uid, gid if gid is not None else uid)
    return path


def set_proctitle(args: list[str]) -> None:
    """Make `ps -eo args` show `args` for this process (overwrite the original argv area, as
    setproctitle does) and `ps -o comm` show args[0]. Best effort."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])      # arg_start, arg_end (fields 48, 49)
        size = end - start
        new = b"\0".join(a.encode() for a in args)[: size - 1] + b"\0"
        ctypes.memmove(start, new.ljust(size, b"\0"), size)
    except (OSError, ValueError, IndexError):
        pass
    try:
        name = os.path.basename(args[0]).encode()[:15]
        _libc.prctl(15, ctypes.c_char_p(name), 0, 0, 0)   # PR_SET_NAME
    except (AttributeError, OSError):
        pass
