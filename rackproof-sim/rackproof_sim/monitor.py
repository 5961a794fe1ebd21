"""The bond monitor of a rack (miimon=100). Every 100 ms it

- reads the state of every bonded lane over rtnetlink; when the set of lanes that are up
  changes (a fault, or an admin's `ip link set dev mgbe1_0 down`) it rehashes the node's bond
  and the switch's LAG over the lanes that are up and rewrites the node's bonding view
  (/proc/net/bonding/bond0 format);
- reads each bonded node's TCP counters (/proc/net/snmp: connections opened and established);
  when they moved, it reads the node's TCP connections on the cluster subnet (sock_diag, as `ss`
  does), pins each new one to the lane the kernel's layer3+4 hash gives it (see bond.py) and
  forgets closed ones.

    python3 -m rackproof_sim.monitor --name thor5
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import socket
import struct
import sys
import time

from . import bond
from .netns import Topology
from .profiles import get_profile
from .state import RackState
from .util import batch, in_netns, set_proctitle

RTM_NEWLINK, RTM_GETLINK = 16, 18
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
IFLA_IFNAME, IFLA_LINK = 3, 5
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY, TCPDIAG_GETSOCK = 4, 20, 18
# TCP states worth a lane: everything but TIME_WAIT, CLOSE and LISTEN
TCP_STATES = sum(1 << s for s in (1, 2, 3, 4, 5, 8, 9, 11))
POLL_S = 0.1          # lanes: miimon=100
# A look at the connections walks the kernel's whole TCP hash (every bucket, host-wide: about a
# millisecond of system time), so it is made only when these counters of the node moved: a new
# connection raises an Opens, a closed one lowers CurrEstab. (Walking every 200 ms cost a thor5
# rack 4.4 ms of CPU a poll, 4% of a core all the time it is up; a 32-node rack, 40%.)
OPENS = (b"ActiveOpens", b"PassiveOpens", b"CurrEstab")


def open_rtnl(ns: str, proto: int = socket.NETLINK_ROUTE) -> socket.socket:
    """A netlink socket bound to netns `ns` (a socket keeps the namespace it was made in)."""
    return in_netns(ns, lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto))


def _messages(sock: socket.socket):
    """Yield (type, payload) of a dump's messages until NLMSG_DONE."""
    while True:
        data = sock.recv(1 << 16)
        off = 0
        while off + 16 <= len(data):
            length, kind, _flags, _seq, _pid = struct.unpack_from("=IHHII", data, off)
            if length < 16 or kind in (NLMSG_DONE, NLMSG_ERROR):
                return
            yield kind, data[off + 16: off + length]
            off += (length + 3) & ~3


def link_table(sock: socket.socket, seq: int) -> dict[str, tuple[int, bool, int | None]]:
    """name -> (index, up (IFF_UP and carrier), the index of its veth peer or None) for every
    link of the socket's namespace."""
    sock.send(struct.pack("=IHHII", 32, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq, 0)
              + struct.pack("=BxHiII", 0, 0, 0, 0, 0))
    out: dict[str, tuple[int, bool, int | None]] = {}
    for kind, msg in _messages(sock):
        if kind != RTM_NEWLINK:
            continue
        _fam, _type, index, flags, _change = struct.unpack_from("=BxHiII", msg, 0)
        attr, name, peer = 16, None, None
        while attr + 4 <= len(msg):
            alen, atype = struct.unpack_from("=HH", msg, attr)
            if alen < 4:
                break
            if atype == IFLA_IFNAME:
                name = msg[attr + 4: attr + alen].split(b"\0", 1)[0].decode()
            elif atype == IFLA_LINK:
                (peer,) = struct.unpack_from("=i", msg, attr + 4)
            attr += (alen + 3) & ~3
        if name:
            out[name] = (index, bool(flags & IFF_UP) and bool(flags & IFF_LOWER_UP), peer)
    return out


def link_states(sock: socket.socket, seq: int) -> dict[str, bool]:
    """name -> up (IFF_UP and carrier) for every link of the socket's namespace."""
    return {name: up for name, (_, up, _) in link_table(sock, seq).items()}


def tcp_connections(sock: socket.socket, seq: int) -> set[tuple[str, int, str, int]]:
    """(local ip, local port, remote ip, remote port) of the TCP connections over IPv4, those of
    dual-stack sockets (::ffff:a.b.c.d, e.g. `iperf3 -s` without -B) included. Uses the old
    TCPDIAG_GETSOCK request, which dumps both families in one walk of the kernel's (host-wide)
    connection table: that walk is what a poll costs."""
    req = struct.pack("=BBBB", socket.AF_INET, 0, 0, 0) + bytes(48) + struct.pack("=II", TCP_STATES, 0)
    sock.send(struct.pack("=IHHII", 16 + len(req), TCPDIAG_GETSOCK, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + req)
    out = set()
    for kind, msg in _messages(sock):
        if kind != TCPDIAG_GETSOCK or len(msg) < 4 + 48:
            continue
        sport, dport = struct.unpack_from("!HH", msg, 4)
        if msg[0] == socket.AF_INET:
            src, dst = msg[8:12], msg[24:28]
        elif msg[8:20] == V4_MAPPED and msg[24:36] == V4_MAPPED:
            src, dst = msg[20:24], msg[36:40]
        else:
            continue
        out.add((socket.inet_ntoa(src), sport, socket.inet_ntoa(dst), dport))
    return out


V4_MAPPED = bytes(10) + b"\xff\xff"


def open_counters(ns: str):
    """The TCP counters of netns `ns`, kept open (a /proc/net file read later still reads the
    namespace of the thread that opened it)."""
    return in_netns(ns, lambda: open("/proc/thread-self/net/snmp", "rb", buffering=0))


def opens(counters) -> tuple[int, ...]:
    """OPENS from an open /proc/net/snmp, read again."""
    counters.seek(0)
    names, values = [line.split() for line in counters.read().splitlines() if line.startswith(b"Tcp:")]
    return tuple(int(values[names.index(name)]) for name in OPENS)


class NodeBond:
    def __init__(self, spec, topo: Topology):
        self.spec = spec
        self.ns = topo.node_ns(spec.name)
        self.ip = spec.ip
        self.net = ipaddress.ip_interface(spec.address).network
        self.link = open_rtnl(self.ns)
        self.diag = open_rtnl(self.ns, NETLINK_SOCK_DIAG)
        self.counters = open_counters(self.ns)
        self.opens: tuple[int, ...] | None = None     # OPENS at the last look at the connections
        self.up: tuple[str, ...] | None = None
        self.failures = {lane: 0 for lane in spec.bond_lanes}
        self.flows: dict[tuple[int, str, int], int] = {}   # (lport, rip, rport) -> filter handle
        self.free_handles = list(range(0xffe, 0, -1))   # 800::fff is the anchor
        self.model_mtime = None
        self.cables: dict[str, int | None] = {}   # lane -> the switch's end of its veth pair (index)


class Monitor:
    def __init__(self, name: str):
        self.state = RackState(name)
        record = self.state.load()
        self.profile = get_profile(record["profile"])
        self.topo = Topology(self.profile, self.state)
        self.nodes = [NodeBond(n, self.topo) for n in self.profile.nodes if n.bond_lanes]
        self.switch = open_rtnl(self.topo.fabric_ns)
        self.ports: dict[int, str] = {}           # the switch's devices by index, as last read
        self.seq = 0

    # lanes ------------------------------------------------------------------------------
    def poll(self) -> None:
        changed = False
        for nb in self.nodes:
            self.seq += 1
            table = link_table(nb.link, self.seq)
            up = tuple(lane for lane in nb.spec.bond_lanes if lane in table and table[lane][1])
            nb.cables = {lane: table[lane][2] for lane in nb.spec.bond_lanes if lane in table}
            try:
                mtime = os.stat(self.state.model_path(nb.spec.name)).st_mtime
            except OSError:
                mtime = 0
            before = nb.up
            if up != before:
                if before is not None:
                    for lane in set(before) - set(up):
                        nb.failures[lane] += 1
                        log(f"{nb.spec.name}: {lane} went down; bond carries on over {', '.join(up) or 'nothing'}")
                    for lane in set(up) - set(before):
                        log(f"{nb.spec.name}: {lane} came up; bond over {', '.join(up)}")
                nb.up = up
                changed = True
                self.rehash(nb)
            if up != before or mtime != nb.model_mtime:
                nb.model_mtime = mtime
                self.write_view(nb)
        self.place_flows(everyone=changed)

    # A plug moved to another port takes that port's name (faults.py): the switch sends a
    # node's frames to the port its cable is in now, the other end of the lane's veth pair.
    def read_ports(self) -> None:
        self.seq += 1
        self.ports = {index: name for name, (index, _, _) in link_table(self.switch, self.seq).items()}

    def port_of(self, nb: NodeBond, lane: str) -> str:
        return self.ports[nb.cables[lane]]

    def rehash(self, nb: NodeBond) -> None:
        up = list(nb.up)
        node_tc = bond.spread_lines(bond.BOND_PEER, up, echoes=self.topo.echoes(nb.spec, inbound=False))
        lag, lagp = self.topo.lag(nb.spec)
        self.read_ports()
        switch_tc = bond.spread_lines(lagp, [self.port_of(nb, lane) for lane in up],
                                      echoes=self.topo.echoes(nb.spec, inbound=True))
        # the kernel hashes every connection again modulo the members left (or back)
        for key, handle in list(nb.flows.items()):
            if up:
                node_tc.append(self._node_flow(nb, key, handle))
                switch_tc.append(self._switch_flow(nb, key, handle))
            else:
                node_tc.append(bond.flow_del_line(bond.BOND_PEER, handle))
                switch_tc.append(bond.flow_del_line(lagp, handle))
                del nb.flows[key]
                nb.free_handles.append(handle)
        batch("tc", nb.ns, node_tc, check=False)
        batch("ip", nb.ns, [f"link set {bond.BOND_PEER} {'up' if up else 'down'}"], check=False)
        batch("tc", self.topo.fabric_ns, switch_tc, check=False)
        batch("ip", self.topo.fabric_ns, [f"link set {lag} {'up' if up else 'down'}"], check=False)

    def write_view(self, nb: NodeBond) -> None:
        try:
            model = self.state.load_model(nb.spec.name)
        except (OSError, ValueError):
            return
        lanes = [{"name": lane, "up": lane in nb.up, "speed": model["interfaces"][lane]["speed"],
                  "mac": model["interfaces"][lane]["mac"], "failures": nb.failures[lane]}
                 for lane in nb.spec.bond_lanes]
        text = bond.bonding_view(nb.spec.index, model["bond"], lanes)
        path = self.state.node_dir(nb.spec.name) / "proc" / "net" / "bonding" / "bond0"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)

    # connections ----------------------------------------------------------------------------
    # The node sends a connection's packets on the lane its hash gives; the switch sends the
    # packets towards the node on the port its hash of them gives (the same function, the
    # other direction: the same lane when 2 or 4 lanes are up, not always with 3).
    def _node_flow(self, nb: NodeBond, key, handle: int) -> str:
        lport, rip, rport = key
        lane = bond.lane_for(nb.ip, rip, lport, rport, nb.up)
        return bond.flow_line(bond.BOND_PEER, handle, nb.ip, rip, lport, rport, lane)

    def _switch_flow(self, nb: NodeBond, key, handle: int) -> str:
        lport, rip, rport = key
        lane = bond.lane_for(rip, nb.ip, rport, lport, nb.up)
        return bond.flow_line(self.topo.lag(nb.spec)[1], handle, rip, nb.ip, rport, lport, self.port_of(nb, lane))

    def place_flows(self, everyone: bool) -> None:
        """Pin the new connections of every node whose counters moved (of `everyone`, after a
        rehash) and forget the closed ones."""
        switch_tc: list[str] = []
        ports_read = False
        for nb in self.nodes:
            now = opens(nb.counters)
            if now == nb.opens and not everyone:
                continue
            nb.opens = now
            self.seq += 1
            try:
                conns = tcp_connections(nb.diag, self.seq)
            except OSError:
                conns = set()
            seen = {(lport, rip, rport) for lip, lport, rip, rport in conns
                    if lip == nb.ip and rip != nb.ip and ipaddress.ip_address(rip) in nb.net}
            lagp = self.topo.lag(nb.spec)[1]
            node_tc = []
            for key in sorted(set(nb.flows) - seen):
                handle = nb.flows.pop(key)
                node_tc.append(bond.flow_del_line(bond.BOND_PEER, handle))
                switch_tc.append(bond.flow_del_line(lagp, handle))
                nb.free_handles.append(handle)
            if seen - set(nb.flows) and not ports_read:
                self.read_ports()
                ports_read = True
            for key in sorted(seen - set(nb.flows)):
                if not nb.up or not nb.free_handles:
                    continue
                handle = nb.flows[key] = nb.free_handles.pop()
                node_tc.append(self._node_flow(nb, key, handle))
                switch_tc.append(self._switch_flow(nb, key, handle))
            if node_tc:
                batch("tc", nb.ns, node_tc, check=False)
        if switch_tc:
            batch("tc", self.topo.fabric_ns, switch_tc, check=False)

    def run(self) -> None:
        while self.state.record_path.exists():
            t0 = time.monotonic()
            try:
                self.poll()
            except OSError as e:
                log(f"poll failed: {e}")
            time.sleep(max(POLL_S - (time.monotonic() - t0), 0.01))


def log(msg: str) -> None:
    sys.stderr.write(time.strftime("%H:%M:%S ") + msg + "\n")
    sys.stderr.flush()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="rackproof-sim-monitor")
    ap.add_argument("--name", required=True)
    a = ap.parse_args(argv)
    set_proctitle(["rackproof-sim-monitor", "--name", a.name])
    signal.signal(signal.SIGTERM, lambda *x: os._exit(0))
    mon = Monitor(a.name)
    mon.poll()
    log(f"watching {', '.join(nb.spec.name for nb in mon.nodes)} every {int(POLL_S * 1000)} ms")
    mon.run()


if __name__ == "__main__":
    main()
