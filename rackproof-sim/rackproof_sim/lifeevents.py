"""A node's own life, timed against the run that checks it (faults sshd-restart and node-reboot):
wait for a moment the node itself can see, then

- sshd-restart: the listening sshd stops (connections are refused; sessions live on, as with
  `systemctl restart ssh`) and starts again SECONDS later;
- node-reboot: sshd and every session it carries end (the controller's connection drops), the
  node's boot id changes (a file bind-mounted over /proc/sys/kernel/random/boot_id inside the
  node: the one part of a reboot a namespace cannot have), and sshd starts again SECONDS later.

The moment (WHEN): "now"; "first-connect", the controller's first SSH connect to the node (sshd
stops before the run starts, and the window opens when the controller's SYN to the node's port 22
arrives on its management interface, seen by a packet socket in the node's namespace: counters
that any refused connect raises, the bench's AttemptFails or the node's OutRsts, opened it early,
and the window could pass before the run reached the node); or a
program's name, when that program first starts on
a node of the rack (`xargs`: the SSH mesh's fan-out; `iperf3 -c`: the throughput rounds' clients;
`ssh` or `iperf3` alone first start when the survey asks each tool its version), told by the kernel's
process events. Every wait is bounded.

    python3 -m rackproof_sim.lifeevents --name thor5 --node thor-3 --event sshd-restart --seconds 3 --when xargs
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

from . import node as nodemod
from .state import RackState
from .profiles import MGMT_NET
from .util import SimError, in_netns, pid_alive, run, set_proctitle

EVENTS = ("sshd-restart", "node-reboot")
WHEN_WAIT_S = 600     # a moment that never comes: the event happens anyway after this
POLL_S = 0.02
BOOT_ID = "/proc/sys/kernel/random/boot_id"
PROCTITLE = "rackproof-sim-lifeevent"


def valid_when(when: str) -> bool:
    """now, first-connect, or a program's name with the options it must be started with ("iperf3 -c")."""
    return when in ("now", "first-connect") or bool(re.fullmatch(r"[a-z0-9][a-z0-9_.+-]{0,14}( -[A-Za-z0-9-]{1,20})*",
                                                                 when))


def describe(event: str, seconds: float, when: str) -> str:
    moment = {"now": "from now", "first-connect": "from the controller's first SSH connect to it"}.get(
        when, f"from the moment {when} first starts on a node of the rack")
    what = "its sshd refuses connections" if event == "sshd-restart" else \
        "it reboots (sshd and its sessions end, a new boot id) and is away"
    return f"{what} for {seconds:g} s, {moment}"


def start(state: RackState, node: str, event: str, seconds: float, when: str) -> int:
    """The event's watcher, detached; its pid (heal stops it, stop_watcher)."""
    log = open(state.node_dir(node) / "log" / "lifeevents.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "rackproof_sim.lifeevents", "--name", state.name, "--node", node,
                             "--event", event, "--seconds", f"{seconds:g}", "--when", when],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    log.close()
    return proc.pid


def stop_watcher(pid: int | None) -> None:
    """End the watcher if it still runs (its pid is checked to be one: a pid is reused)."""
    try:
        if pid and b"lifeevent" in Path(f"/proc/{pid}/cmdline").read_bytes():   # its title, or its module
            os.kill(pid, signal.SIGTERM)
    except (OSError, ProcessLookupError):
        return
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def boot_id_file(state: RackState, node: str) -> Path:
    return state.node_dir(node) / "boot_id"


def rebooted(holder: int) -> bool:
    """Whether the node has a boot id of its own (the bind mount over the kernel's is in place)."""
    mounts = Path(f"/proc/{holder}/mountinfo").read_text()
    return f" {BOOT_ID} " in mounts


def new_boot_id(state: RackState, node: str, holder: int) -> None:
    """A fresh boot id for the node; the file is mounted over the kernel's once, then rewritten."""
    path = boot_id_file(state, node)
    path.write_text(f"{uuid.uuid4()}\n")
    path.chmod(0o444)
    if not rebooted(holder):
        run(nodemod.nsenter(holder, "mount", "-n", "--bind", str(path), BOOT_ID, pidns=False), timeout=10)


def first_boot(state: RackState, node: str, holder: int) -> None:
    """The node's boot id as before its reboots (heal): the kernel's own, written into the file
    mounted over it (the mount stays until the node's namespaces go)."""
    if rebooted(holder):
        boot_id_file(state, node).write_text(Path(BOOT_ID).read_text())


CONTROLLER = f"{MGMT_NET}.1"   # the bench namespace's address on the house network
ETH_P_IP, PACKET_OUTGOING, TCP_SYN, TCP_ACK = 0x0800, 4, 0x02, 0x10


def _ssh_syns(netns: str, interface: str) -> socket.socket:
    """A packet socket in the node's namespace that sees the IPv4 packets of its management
    interface (opened before sshd stops: no SYN can pass unseen)."""
    def opened() -> socket.socket:
        sniffer = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_IP))
        sniffer.bind((interface, ETH_P_IP))
        return sniffer
    return in_netns(netns, opened)


def _controller_connects(sniffer: socket.socket, gone) -> None:
    """Return when the controller's SYN to port 22 arrives (its first SSH connect to the node;
    with sshd stopped the kernel refuses it), when gone(), or after WHEN_WAIT_S."""
    deadline = time.monotonic() + WHEN_WAIT_S
    while (left := deadline - time.monotonic()) > 0 and not gone():
        if not select.select([sniffer], [], [], min(left, 1.0))[0]:
            continue
        data, address = sniffer.recvfrom(256)
        if address[2] == PACKET_OUTGOING or len(data) < 20 or data[0] >> 4 != 4 or data[9] != socket.IPPROTO_TCP:
            continue
        tcp = (data[0] & 0x0F) * 4
        if len(data) < tcp + 14 or socket.inet_ntoa(data[12:16]) != CONTROLLER:
            continue
        if struct.unpack_from("!H", data, tcp + 2)[0] == 22 and data[tcp + 13] & (TCP_SYN | TCP_ACK) == TCP_SYN:
            return


# the kernel's process events (the proc connector): each exec is told at once, so an event timed
# on a program's start comes before that program has connected anywhere (polling /proc came late:
# every node's mesh starts its ssh at the same moment)
NETLINK_CONNECTOR, CN_IDX_PROC, CN_VAL_PROC = 11, 1, 1
PROC_CN_MCAST_LISTEN, PROC_EVENT_EXEC = 1, 2
SO_RCVBUFFORCE = 33   # SO_RCVBUF past net.core.rmem_max (root); not in Python's socket module
_NLMSG, _CN_MSG, _EVENT_HEAD = 16, 20, 16


def _first_exec(when: str, netns: set[int], gone) -> None:
    """Return when the program `when` names first starts (with its options, if it names some) in
    one of the network namespaces `netns` (the rack's nodes), when gone() (the node went down
    with its rack), or after WHEN_WAIT_S."""
    program, *options = when.split()
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR) as events:
        # every exec of the machine comes here: a buffer that holds a burst of them (the mesh's
        # fan-out starts many at once), and a burst that overran it is dropped, not the watch
        events.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        events.bind((0, CN_IDX_PROC))
        listen = struct.pack("=I", PROC_CN_MCAST_LISTEN)
        message = struct.pack("=IIIIHH", CN_IDX_PROC, CN_VAL_PROC, 0, 0, len(listen), 0) + listen
        events.send(struct.pack("=IHHII", _NLMSG + len(message), 3, 0, 0, 0) + message)   # 3: NLMSG_DONE
        deadline = time.monotonic() + WHEN_WAIT_S
        while (left := deadline - time.monotonic()) > 0 and not gone():
            if not select.select([events], [], [], min(left, 1.0))[0]:
                continue
            try:
                data = events.recv(4096)
            except OSError as e:
                if e.errno == errno.ENOBUFS:
                    continue
                raise
            at = _NLMSG + _CN_MSG
            if len(data) < at + _EVENT_HEAD + 8 or struct.unpack_from("=I", data, at)[0] != PROC_EVENT_EXEC:
                continue
            tgid = struct.unpack_from("=II", data, at + _EVENT_HEAD)[1]
            try:
                if Path(f"/proc/{tgid}/comm").read_text().strip() == program and \
                        os.stat(f"/proc/{tgid}/ns/net").st_ino in netns and \
                        set(options) <= set(Path(f"/proc/{tgid}/cmdline").read_bytes().decode(errors="replace")
                                            .split("\0")):
                    return
            except OSError:    # gone meanwhile
                continue


def _away(seconds: float, gone) -> None:
    """For `seconds`, unless gone() first."""
    deadline = time.monotonic() + seconds
    while not gone() and time.monotonic() < deadline:
        time.sleep(POLL_S)


def _descendants(pid: int) -> list[int]:
    try:
        found = nodemod.children(pid)
    except OSError:    # gone meanwhile
        return []
    return found + [d for child in found for d in _descendants(child)]


def _end(pid: int, sessions: bool) -> None:
    """The listening sshd ends; with `sessions`, every session it carries first and what runs in
    them (as a reboot ends them: the connections drop)."""
    if sessions:
        for child in _descendants(pid):
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)


def happen(name: str, node: str, event: str, seconds: float, when: str) -> None:
    from .rack import Rack   # the whole rack (its profile, the node's paths) only here

    rack = Rack(RackState(name))
    n = rack.node(node)

    def gone() -> bool:   # the rack went down meanwhile: nothing left to happen to
        return not pid_alive(n.pid)

    def listener() -> int | None:   # read when it is stopped: another event may have started it again meanwhile
        return rack.state.load()["nodes"][node].get("sshd")
    if when == "first-connect":
        with _ssh_syns(rack.topo.node_ns(node), n.spec.mgmt_iface) as sniffer:
            _end(listener(), sessions=event == "node-reboot")
            _controller_connects(sniffer, gone)
        if gone():
            return
    else:
        if when != "now":
            _first_exec(when, {os.stat(f"/proc/{info['holder']}/ns/net").st_ino
                               for info in rack.record["nodes"].values() if pid_alive(info.get("holder"))}, gone)
        if gone():
            return
        _end(listener(), sessions=event == "node-reboot")
    if event == "node-reboot":
        new_boot_id(rack.state, node, n.pid)
    print(f"{time.strftime('%H:%M:%S')} {node}: {event} ({when}), sshd back in {seconds:g} s", flush=True)
    _away(seconds, gone)
    if gone():
        return
    pid = n.start_sshd()
    with rack.state.locked():
        record = rack.state.load()
        record["nodes"][node]["sshd"] = pid
        rack.state.save(record)
    print(f"{time.strftime('%H:%M:%S')} {node}: sshd listens again (pid {pid})", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog=PROCTITLE)
    ap.add_argument("--name", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--event", choices=EVENTS, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--when", required=True)
    a = ap.parse_args(argv)
    set_proctitle([PROCTITLE, "--name", a.name, a.node, a.event])   # --name: a process of that rack
    signal.signal(signal.SIGTERM, lambda *x: os._exit(0))
    try:
        happen(a.name, a.node, a.event, a.seconds, a.when)
    except SimError as e:
        print(f"{a.node}: {a.event}: {e}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
