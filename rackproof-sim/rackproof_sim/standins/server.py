"""A node's stand-in server: the tools that only read and print (ethtool, nvidia-smi, ...) answer
from one process per node that has imported them once.

A fresh Python for every call spent ~30 ms of CPU importing (the product's parsers' dataclasses
and typing, json), so a Thor rack's ~170 reads of a run kept both cores busy for seconds while the
real tools, compiled, take a millisecond or two. The tool on the node's PATH is a small compiled
client (rackproof_sim/standin_client.c) that hands the server its arguments and its stdin, stdout and
stderr over a Unix socket; the server forks, the child becomes the caller (uid, gid and groups,
from the socket's peer credentials, so `sudo -n jetson_clocks` runs as root and a login as the
login), prints as the tool does on the caller's own descriptors, and returns the exit status.
The tools a measurement runs (ib_write_bw, mpirun, nccl-tests) are not served: they run for
seconds, are signalled and listed as processes of their own, so each is a process of its own.

    python3 -S -m rackproof_sim.standins.server MODEL_PATH TOOL...   (as root, in the node)
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import pwd
import signal
import socket
import struct
import sys
import traceback

from .. import formats
from ..node import LOGIN_PATH
from . import STANDINS, main

SOCKET = "/run/rackproof-standins.sock"     # in the node's own /run
MAX_REQUEST = 64 << 10                     # the client's too (rack.py builds it with this)


def _preload(tools: list[str]) -> None:
    """Import what the tools print with, so a call's child imports nothing."""
    for tool in tools:
        importlib.import_module(f"{__package__}.{STANDINS[tool]}")
    for module in pkgutil.iter_modules(formats.__path__):
        importlib.import_module(f"{formats.__name__}.{module.name}")


def _become_caller(conn: socket.socket) -> None:
    """The caller's uid, gid and groups (those of its process: a session keeps the groups it
    logged in with), from the socket's peer. A caller outside the node's PID namespace (pid 0
    here: the rack itself, entering the node) gets its account's groups."""
    pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    if pid:
        with open(f"/proc/{pid}/status") as status:
            groups = [int(g) for g in next(line.split()[1:] for line in status if line.startswith("Groups:"))]
    else:
        groups = os.getgrouplist(pwd.getpwuid(uid).pw_name, gid)
    os.setgroups(groups)
    os.setgid(gid)
    os.setuid(uid)


def _status(exit: SystemExit) -> int:
    """The exit status a Python process gives for this SystemExit (a message: printed, 1)."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code & 0xFF
    sys.stderr.write(f"{exit.code}\n")
    return 1


def _answer(conn: socket.socket, served: frozenset[str]) -> int:
    """In the forked child: one call, as the caller, on the caller's descriptors."""
    conn.settimeout(5)
    request, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
    if len(fds) != 3:
        return 2
    _become_caller(conn)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    argv = request.decode(errors="surrogateescape").split("\0")
    if argv[0] not in served:
        sys.stderr.write(f"rackproof sim: {argv[0]!r} is not a tool this node's stand-in server answers\n")
        status = 127
    else:
        try:
            main(argv)
            status = 0
        except SystemExit as e:
            status = _status(e)
        except Exception:  # noqa: BLE001 - as an uncaught exception ends a Python process
            traceback.print_exc()
            status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    conn.sendall(bytes([status]))
    return 0


def serve(model_path: str, tools: list[str]) -> None:
    # a stand-in that asks a real tool finds it where a login would
    os.environ.update(RACKPROOF_SIM_MODEL=model_path, PATH=LOGIN_PATH)
    _preload(tools)
    served = frozenset(tools)
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as server:
        if os.path.exists(SOCKET):
            os.unlink(SOCKET)
        server.bind(SOCKET)
        os.chmod(SOCKET, 0o666)     # every account of the node runs its tools
        server.listen(64)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)     # the kernel reaps the children
        while True:
            conn, _ = server.accept()
            if os.fork() == 0:
                server.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)    # a stand-in waits for its own children
                try:
                    code = _answer(conn, served)
                except Exception:  # noqa: BLE001 - the caller gets no status and says so
                    code = 1
                os._exit(code)
            conn.close()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2:])
