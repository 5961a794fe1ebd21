"""rackproof.measuring.bondrate: when -P 4 over a bond is measured again, and which cause a shortfall is
given, from per-stream figures and the members' speeds (no rack: the nodes are stand-ins)."""

from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from rackproof.measuring import bondrate

from rackproof.measuring import traffic
from rackproof.probes import bondhash
from rackproof.nodes.host import ProbeFailed
from rackproof.inventory.model import FINISHED, load_inventory
from rackproof.probes.ethtool import ETHTOOL, LinkInfo
from rackproof.probes.ip import Interface
from rackproof.probes.iperf import IperfResult, IperfStream
from rackproof.probes.ping import PingResult
from rackproof.inventory.references import lane_gbps
from rackproof.nodes.remote import Result

INVENTORY = load_inventory(Path(__file__).parents[1] / "examples" / "thor5.toml")
CLUSTER = INVENTORY.at(FINISHED)
LANE = lane_gbps(INVENTORY.expect) * 1e9        # 25 Gbit/s
FLOOR = 4 * LANE * INVENTORY.expect.bond_floor_fraction


@dataclass
class Node:
    """A node as bondrate sees one: its inventory entry, what ethtool says of each lane, and
    which of its members a packet of the MTU gets no reply over (by bond order)."""
    name: str
    speeds: dict = field(default_factory=dict)   # lane -> Mb/s, None (no link) or an error text
    mtu_lost: tuple = ()
    pinged: list = field(default_factory=list)

    @property
    def spec(self):
        return INVENTORY.node(self.name)

    def interfaces(self):
        return {"bond0": Interface("bond0", "UP", 1500, None)}

    def path_mtu(self, targets, mtu, members):
        self.pinged.append((tuple(targets), mtu, members))
        result = {k: PingResult(targets[0], 1, int(k not in self.mtu_lost), 0.0, None, None, None, None)
                  for k in range(members)}
        return {targets[0]: tuple(result.values())}, {}

    def read(self, probe, interface):
        assert probe is ETHTOOL
        lane = interface
        speed = self.speeds.get(lane, 25000)
        if isinstance(speed, str):
            raise ProbeFailed(self.name, Result(f"LC_ALL=C ethtool {lane}", 1, "", speed, 0.0), "exited with status 1")
        return LinkInfo(interface=lane, speed_mbps=speed, link_detected=speed is not None)


def ports_on(saddr: str, daddr: str, dports: list[int], members: list[int]) -> list[int]:
    """Client ports, one per server port and all different, that the kernel's hash sends
    saddr -> daddr on these members (of four): chosen to collide, unlike the suite's."""
    ports: list[int] = []
    for dport, want in zip(dports, members):
        ports.append(next(p for p in bondhash.CLIENT_PORTS
                          if p not in ports and bondhash.member(saddr, daddr, p, dport, 4) == want))
    return ports


def attempt(*gbits, retransmits=0, attempt_no=0) -> IperfResult:
    """An attempt thor-1 -> thor-2 whose streams got these rates, from the ports the suite chooses."""
    dports = [5201, 5202, 5203, 5204][:len(gbits)]
    ports = bondhash.spread_ports("10.10.0.11", "10.10.0.12", dports, 4, attempt_no)
    streams = tuple(IperfStream(p, d, g * 1e9, g * 1e9, 0) for p, d, g in zip(ports, dports, gbits))
    total = sum(gbits) * 1e9
    return IperfResult(total, total, retransmits, len(gbits), 5.0, "10.10.0.11", "10.10.0.12", 5201, False, streams)


def rate(*attempts, sender=None, receiver=None) -> bondrate.BondedRate:
    return bondrate.BondedRate(sender or Node("thor-1"), receiver or Node("thor-2"), "10.10.0.12", LANE, attempts)


@pytest.mark.parametrize("gbits, shared", [
    ((24, 24, 12.5, 12.5), True),     # two streams split a lane evenly
    ((24, 24, 20, 4.5), True),        # ... or 80:20
    ((8.3, 8.3, 8.3, 24), True),      # three on one lane
    ((24, 24, 24, 9.6), False),       # one stream on a lane at 10G
    ((22, 21, 21.5, 24), False),      # every stream a little short: the hosts, not a shared lane
])
def test_streams_sharing_a_lane_are_told_from_a_slow_lane(gbits, shared):
    result = attempt(*gbits)
    assert rate(result).shared_a_lane(result) is shared


def test_a_collision_below_the_floor_is_measured_again_with_other_ports(monkeypatch):
    calls = []
    results = iter([attempt(24, 24, 12.5, 12.5), attempt(24, 24, 24, 24, attempt_no=1)])

    def iperf3(sender, receiver, address, streams, seconds, attempt=0, client_ports=None):
        calls.append((attempt, client_ports))
        return next(results)
    monkeypatch.setattr(traffic, "iperf3", iperf3)
    run = bondrate.BondedRate(Node("thor-1"), Node("thor-2"), "10.10.0.12", LANE, traffic.attempts(
        Node("thor-1"), Node("thor-2"), "10.10.0.12", FLOOR, 5, 4, first_ports=[1, 2, 3, 4]))
    assert calls == [(0, [1, 2, 3, 4]), (1, None)]
    assert run.best is run.attempts[1] and run.others == (run.attempts[0],)
    assert run.figures().startswith("attempt 1 of 2: 73 Gbit/s = 24 (port ") and "attempt 2 of 2: 96 Gbit/s" in run.figures()


def test_no_retry_for_a_pass(monkeypatch):
    first = attempt(24, 24, 24, 24)
    monkeypatch.setattr(traffic, "iperf3", lambda *args, **kw: first)
    assert traffic.attempts(Node("thor-1"), Node("thor-2"), "10.10.0.12", FLOOR, 5, 4) == (first,)


def test_a_short_first_attempt_without_a_collision_is_measured_again_too(monkeypatch):
    slow = attempt(24, 24, 24, 9.6)   # a lone slow stream: a slow member, or a moment's load
    monkeypatch.setattr(traffic, "iperf3", lambda *args, **kw: slow)
    assert traffic.attempts(Node("thor-1"), Node("thor-2"), "10.10.0.12", FLOOR, 5, 4) == (slow, slow)


def test_the_figures_name_each_streams_port_and_the_lane_the_hash_gave_it():
    result = attempt(24, 24, 24, 9.6)
    text = rate(result).figures()
    lanes = [text.split(f"port {s.local_port} -> ")[1][:7] for s in result.streams]
    assert sorted(lanes) == ["mgbe0_0", "mgbe1_0", "mgbe2_0", "mgbe3_0"]
    assert text.endswith("; retransmits 0")


def test_a_member_at_10g_on_either_node_is_the_cause_named():
    slow = rate(attempt(24, 24, 24, 9.6), receiver=Node("thor-2", {"mgbe1_0": 10000}))
    cause = slow.cause(25000, CLUSTER)
    assert cause.startswith("a bond member without link or slow: thor-2 mgbe1_0 (switch port 6) at 10000Mb/s")
    assert "flash time" in cause   # the 10G causes the lane check gives too
    dead = rate(attempt(24, 24, 24, 0.1), sender=Node("thor-1", {"mgbe3_0": None}))
    assert "thor-1 mgbe3_0 (switch port 4) without link" in dead.cause(25000, CLUSTER)


def test_streams_still_sharing_after_the_retry_on_whole_lanes_blame_the_switch():
    run = rate(attempt(24, 24, 12.5, 12.5), attempt(24, 12.5, 24, 12.5, attempt_no=1))
    cause = run.cause(25000, CLUSTER)
    assert cause.startswith("the switch's hash folds streams together: thor-1 sent the 4 streams on 4 lanes")
    assert "in the best of 2 attempt(s), each with other client ports" in cause and "towards thor-2" in cause


def test_every_stream_short_alike_is_the_nodes_not_a_cable_whatever_the_retransmits():
    """As on the simulated rack with other load on its two cores: 0.222 Gbit/s a stream of 0.25."""
    cause = rate(attempt(22.2, 22.2, 22.3, 22.2, retransmits=90)).cause(25000, CLUSTER)
    assert "every stream is short alike (22.2-22.3 Gbit/s): the nodes do not keep up" in cause
    assert "not errors" in cause


def test_a_short_stream_with_retransmits_names_its_lane():
    result = attempt(24, 24, 24, 15)
    erring = replace(result.streams[3], retransmits=3012)
    cause = rate(replace(result, streams=result.streams[:3] + (erring,))).cause(25000, CLUSTER)
    lane = rate(result).sent_on(erring)
    assert f"the stream on {lane} (port {erring.local_port}) short with 3012 retransmits: a cable or port" in cause
    assert "without retransmits: the receiver does not keep up" in rate(result).cause(25000, CLUSTER)


def test_a_lane_ethtool_cannot_read_is_said_but_blames_nothing():
    run = rate(attempt(22, 22, 22, 22), sender=Node("thor-1", {"mgbe2_0": "Operation not permitted"}))
    cause = run.cause(25000, CLUSTER)
    assert cause.startswith("no member without link or slow")
    assert "ethtool could not tell the speed of thor-1 mgbe2_0 (switch port 3) (exited with status 1)" in cause


def test_ports_that_hash_together_on_the_sender_are_said_to():
    together = attempt(24, 12.5, 12.5, 24)
    ports = ports_on("10.10.0.11", "10.10.0.12", [5201, 5202, 5203, 5204], [0, 1, 1, 2])
    streams = tuple(replace(s, local_port=p) for p, s in zip(ports, together.streams))
    cause = rate(replace(together, streams=streams)).cause(25000, CLUSTER)
    assert cause.startswith("thor-1's own layer3+4 hash put the 4 streams on 3 of its lanes")


def test_a_lane_whose_path_drops_packets_of_the_mtu_is_named_not_a_cable():
    """A LAG member's switch port at a lower MTU: the stream hashed onto it stalls after its
    handshake while the others run; the pings steered per member show which member."""
    result = attempt(24, 24, 24, 0.0)
    stalled = result.streams[3]
    sender = Node("thor-1", mtu_lost=(INVENTORY.node("thor-1").bond.lanes.index(rate(result).sent_on(stalled)),))
    cause = rate(result, sender=sender).cause(25000, CLUSTER)
    lane = rate(result).sent_on(stalled)
    assert cause.startswith(f"packets of the MTU (1500 bytes, don't-fragment) sent from thor-1 over thor-1 {lane} "
                            "(over its other members they cross) get no reply from thor-2: a path that drops full-size "
                            "frames"), cause
    assert f"the stream on {lane} (port {stalled.local_port}, 0 Gbit/s) stalled" in cause
    assert "cable" not in cause and "retransmits" not in cause
    assert sender.pinged == [(("10.10.0.12",), 1500, 4)]


def test_every_member_dropping_packets_of_the_mtu_is_the_path_not_slow_hosts():
    """A LAG at a lower MTU: every stream stalls alike, which is no sign of slow hosts."""
    cause = rate(attempt(0.0, 0.0, 0.0, 0.0), sender=Node("thor-1", mtu_lost=(0, 1, 2, 3))).cause(25000, CLUSTER)
    assert cause.startswith("packets of the MTU (1500 bytes, don't-fragment) sent from thor-1 over any bond member "
                            "get no reply from thor-2"), cause
    assert "do not keep up" not in cause


def test_a_stalled_stream_whose_path_carries_the_mtu_is_still_its_lanes_path():
    result = attempt(24, 24, 0.2, 24)
    cause = rate(result).cause(25000, CLUSTER)
    lane = rate(result).sent_on(result.streams[2])
    assert cause.startswith(f"the stream on {lane} (port {result.streams[2].local_port}, 0.2 Gbit/s) stalled while "
                            "the others ran at full rate, though packets of the MTU cross every member"), cause
