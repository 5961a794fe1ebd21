"""Real LLDP on the simulated rack: Debian's lldpd on the switch's ports and on every node.

The switch runs one lldpd in its namespace, on its ports only (swp*), announcing itself by
the inventory's switch name and each port by its interface name (port id subtype ifname), as a
Cumulus switch does; the bridge does not forward LLDP frames, so a node hears only the port its
lane is plugged into. A moved plug is a renamed port (rackproof_sim.faults). On a Spark pair
the cable's bridges pass LLDP frames, so each host hears the other's lldpd, which names its
host and interface. Every lldpd announces each second (a real one every 30 s), so a rack that
has just come up, or a plug just moved, is heard at once; stale announcements age out in 4 s.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from .util import SimError, wait_until, write

LLDPD = "/usr/sbin/lldpd"
TX_INTERVAL = "configure lldp tx-interval 1"


def require() -> None:
    if not Path(LLDPD).exists():
        raise SimError("lldpd is not installed: run scripts/setup.sh (it installs Debian's lldpd, not started)")


def switch_script(switch_name: str) -> str:
    """lldpd in a mount namespace of its own: its /run (socket, pid file, privsep chroot) is private."""
    conf = [f"configure system hostname {switch_name}", "configure lldp portidsubtype ifname", TX_INTERVAL]
    return "\n".join([
        "mount -t tmpfs -o mode=755,size=1m lldpd-run /run",
        "mkdir -p /run/lldpd",
        "printf '%s\\n' " + " ".join(shlex.quote(line) for line in conf) + " > /run/lldpd-sim.conf",
        f"exec {LLDPD} -d -I 'swp*' -O /run/lldpd-sim.conf",
    ])


def start_switch(ns: str, switch_name: str, log_path: Path) -> int:
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, "unshare", "--mount", "--propagation", "private",
                                 "/bin/sh", "-c", switch_script(switch_name)],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    return proc.pid


def write_node_conf(etc_upper: Path) -> None:
    write(etc_upper / "lldpd.d" / "rackproof-sim.conf", TX_INTERVAL + "\n")


def node_command(interfaces: list[str]) -> list[str]:
    return ["/bin/sh", "-c", f"mkdir -p /run/lldpd && exec {LLDPD} -d -I {shlex.quote(','.join(interfaces))}"]


def cabled(spec) -> list[str]:
    """The node's interfaces with a cable at the far end: where LLDP is heard."""
    return [lane.name for lane in spec.lanes if lane.connected] + [c.name for c in spec.cx7 if c.link]


def wait_heard(node, interfaces: list[str], timeout: float = 10) -> None:
    """Until lldpd on `node` has heard a neighbour on each of `interfaces`."""
    def heard():
        out = node.sh("lldpcli -f keyvalue show neighbors summary", check=False).stdout
        return all(f"lldp.{i}." in out for i in interfaces)
    wait_until(f"LLDP neighbours on {node.spec.name} ({', '.join(interfaces)})", heard, timeout, 0.2)
