"""The real sparkrun CLI on the simulated Spark pair's head node (node_0), in its own Python 3.12
environment (scripts/setup.sh makes /opt/rackproof/sparkrun), with a cluster definition made by
`sparkrun cluster create` as the login user, as Cordatus does on the head.

The environment's interpreter may live under /root (pyenv), which the login cannot enter: the
head node gets a /root of its own (a tmpfs) holding only that Python, at the same path. Every
sparkrun the rack runs has telemetry off (SPARKRUN_NO_TELEMETRY=1); the nodes have no route out.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from .profiles import Profile
from .util import SimError, write

ENV = "SPARKRUN_NO_TELEMETRY=1"


INSTALLED = Path("/opt/rackproof/sparkrun/bin/sparkrun")     # where scripts/setup.sh puts it
# what a simulated node has of its own: a sparkrun under these is not the host's inside a node
NODE_OWN = ("/tmp/", "/home/", "/run/", "/var/log/", "/usr/local/bin/", "/etc/")


def executable() -> Path:
    """$RACKPROOF_SPARKRUN, else the environment scripts/setup.sh made."""
    given = os.environ.get("RACKPROOF_SPARKRUN")
    path = Path(given) if given else INSTALLED
    if not os.access(path, os.X_OK):
        raise SimError(f"sparkrun is not installed at {path}: run scripts/setup.sh (it needs Python 3.12), or set "
                       "RACKPROOF_SPARKRUN to a sparkrun executable")
    if str(path.absolute()).startswith(NODE_OWN):
        raise SimError(f"{path} lies where each simulated node has a folder of its own ({', '.join(NODE_OWN)}): "
                       "the head node cannot run it; install sparkrun elsewhere (scripts/setup.sh uses /opt)")
    return path


def base_prefix(exe: Path) -> str:
    python = exe.parent / "python"
    out = subprocess.run([str(python), "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True,
                         timeout=30)
    if out.returncode != 0:
        raise SimError(f"{python} does not run: {out.stderr.strip()[:200]}")
    return out.stdout.strip()


def mount_script(node_dir: Path, prefix: str) -> str:
    """Inside the head node: its own /root, with the Python that sparkrun runs on at its path."""
    if not prefix.startswith("/root/"):
        return ""
    staging = node_dir / "python-prefix"
    q = shlex.quote
    return "\n".join([
        "set -e",
        f"mkdir -p {q(str(staging))}",
        f"mount -n --bind {q(prefix)} {q(str(staging))}",
        "mount -n -t tmpfs -o mode=711,size=1m noderoot /root",
        f"mkdir -p {q(prefix)}",
        f"mount -n --move {q(str(staging))} {q(prefix)}",
    ]) + "\n"


def wrapper(exe: Path) -> str:
    return f"#!/bin/sh\n# the real sparkrun CLI (its own Python 3.12 environment), telemetry off\n{ENV} exec {exe} \"$@\"\n"


def install(node, exe: Path) -> None:
    """sparkrun on the head's PATH (/usr/local/bin); the fault sparkrun-missing removes it."""
    script = mount_script(node.dir, base_prefix(exe))
    if script:
        node.sh(script)
    write(node.dir / "bin" / "sparkrun", wrapper(exe), 0o755)


def hosts(p: Profile) -> list[str]:
    """The head first, then the workers: each node's first CX7 address (the guide's serving
    node list on CX7 addresses, not Wi-Fi ones)."""
    return [spec.cluster_ip for spec in p.nodes]


def create_cluster(node, name: str, hosts: list[str], user: str) -> None:
    out = node.sh(f"sparkrun cluster create {shlex.quote(name)} --hosts {shlex.quote(','.join(hosts))} "
                  f"--user {shlex.quote(user)} --transfer-interface cx7 -d 'rackproof sim: the Spark pair over CX7'",
                  user=True, check=False, timeout=60)
    if out.returncode != 0:
        raise SimError(f"sparkrun cluster create {name} failed on {node.spec.name}: "
                       f"{(out.stderr or out.stdout).strip()[-300:]}")


def _update(node, name: str, option: str, value: str) -> None:
    out = node.sh(f"sparkrun cluster update {shlex.quote(name)} {option} {shlex.quote(value)}",
                  user=True, check=False, timeout=60)
    if out.returncode != 0:
        raise SimError(f"sparkrun cluster update {name} {option} failed: {(out.stderr or out.stdout).strip()[-300:]}")


def update_hosts(node, name: str, hosts: list[str]) -> None:
    _update(node, name, "--hosts", ",".join(hosts))


def set_transfer_interface(node, name: str, interface: str) -> None:
    _update(node, name, "--transfer-interface", interface)


def set_user(node, name: str, user: str) -> None:
    _update(node, name, "--user", user)
