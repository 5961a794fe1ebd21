"""Step 8's -P 4 over a bond, measured and explained without false alarms (the check judges its rate).

Four TCP streams use four lanes only if they hash apart twice: on the sender (layer3+4, which
the suite steers by choosing the client ports, see traffic.iperf3) and on the switch towards
the receiver (its own hash, which no port choice can promise to steer). Streams that share a
lane show in iperf3's per-stream figures: two of them short of a lane and together about one
lane (a lone slow stream is a slow lane, not a collision). Such a measurement is made once
more with other ports; both attempts are reported and the better one is judged. A rate still
short of the floor is explained from the evidence: a member without link or at a lower speed
(ethtool on both nodes), a path that drops packets of the MTU over some member (pings steered
per member), a stream that stalled while the others ran, streams the switch folded together
although the sender spread them, or, with every lane whole and no lane shared, errors or slow
hosts.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackproof.measuring import pathmtu, traffic
from rackproof.probes import bondhash
from rackproof.judging.failure import SLOW_LANE_CAUSES
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import ClusterAtStep, Node
from rackproof.probes.ethtool import ETHTOOL
from rackproof.probes.iperf import IperfResult, IperfStream
from rackproof.inventory.references import convert, lane_gbps, reference

# A stream alone on a healthy lane gets 90% of it or more (the one-stream check's floor). Two
# streams below SHORT of a lane that together make at most SHARED lanes are sharing one: TCP
# need not split it evenly (80:20 was seen on the simulated rack), but the sum stays about one
# lane, where a stream on a slow lane next to a healthy one sums to more.
SHORT = 0.85
SHARED = 1.15
# Streams within 5% of each other are short alike: whatever slows them is not one lane's.
EVEN = 0.05
# A stream under 5% of a lane next to one at full rate has stalled: its path drops its frames.
STALLED = 0.05


@dataclass(frozen=True)
class BondedRate:
    sender: Host
    receiver: Host
    address: str
    lane_bps: float
    attempts: tuple[IperfResult, ...]   # as run: the first, and the retry when the first was short

    @classmethod
    def of(cls, sender: Host, receiver: Host, cluster: ClusterAtStep,
           attempts: tuple[IperfResult, ...]) -> "BondedRate":
        return cls(sender, receiver, receiver.spec.ip, convert(lane_gbps(cluster.expect), "Gbit/s", "bit/s"), attempts)

    @property
    def best(self) -> IperfResult:
        return traffic.best(self.attempts)

    @property
    def others(self) -> tuple[IperfResult, ...]:
        best = self.best
        return tuple(result for result in self.attempts if result is not best)

    def short(self, result: IperfResult) -> tuple[IperfStream, ...]:
        """The streams that got less than a lane."""
        return tuple(s for s in result.streams if s.received_bps < SHORT * self.lane_bps)

    def shared_a_lane(self, result: IperfResult) -> bool:
        """Two short streams add up to about one lane: a collision, on the sender or the switch."""
        slowest = sorted(s.received_bps for s in self.short(result))[:2]
        return len(slowest) == 2 and sum(slowest) <= SHARED * self.lane_bps

    def sent_on(self, stream: IperfStream) -> str:
        """The sender's lane for a stream by the kernel's layer3+4 hash, every member up."""
        lanes = self.sender.spec.bond.lanes
        return lanes[bondhash.member(self.sender.spec.ip, self.address, stream.local_port, stream.remote_port,
                                     len(lanes))]

    def figures(self) -> str:
        """Each attempt: its total, every stream (client port, the lane the sender's hash gave
        it, rate) and retransmits."""
        parts = []
        for k, result in enumerate(self.attempts, start=1):
            streams = " + ".join(f"{s.received_bps / 1e9:.3g} (port {s.local_port} -> {self.sent_on(s)})"
                                for s in result.streams)
            retransmits = "not reported" if result.retransmits is None else result.retransmits
            parts.append(f"attempt {k} of {len(self.attempts)}: {result.received_bps / 1e9:.3g} Gbit/s = "
                         f"{streams}; retransmits {retransmits}")
        return "; ".join(parts)

    def stalled(self, result: IperfResult) -> tuple[IperfStream, ...]:
        """The streams that moved next to nothing while another ran at full rate."""
        if not any(s.received_bps >= SHORT * self.lane_bps for s in result.streams):
            return ()
        return tuple(s for s in result.streams if s.received_bps < STALLED * self.lane_bps)

    def cause(self, lane_mbps: int, cluster: ClusterAtStep) -> str:
        """Why the best attempt fell short, chosen from what the lanes and the streams show: it
        reads the members and pings, so the controller asks it in the plan's diagnosis phase
        (rackproof.measuring.diagnosis.bond_cause), never a judge."""
        checks = [_member(host, name, lane_mbps) for host in (self.sender, self.receiver) for name in host.spec.bond.lanes]
        slow = [(text, speed) for text, speed, known in checks if text and known]
        unknown = "".join(f"; {text}" for text, _, known in checks if not known)
        if slow:
            why = list(dict.fromkeys(SLOW_LANE_CAUSES[speed] for _, speed in slow if speed in SLOW_LANE_CAUSES))
            return (f"a bond member without link or slow: {'; '.join(text for text, _ in slow)}, expected "
                    f"{lane_mbps}Mb/s (see test_lane_speed and test_bond_state){''.join(': ' + w for w in why)}")
        best = self.best
        stalled = ", ".join(f"the stream on {self.sent_on(s)} (port {s.local_port}, {s.received_bps / 1e9:.3g} Gbit/s)"
                            for s in self.stalled(best))
        path = pathmtu.blocked(self.sender, self.receiver.spec, cluster)
        if path:
            return f"{path}" + (f": {stalled} stalled" if stalled else "") + unknown
        if stalled:
            return (f"{stalled} stalled while the others ran at full rate, though packets of the MTU cross every "
                    f"member: that lane's path drops the stream's frames (the switch port of {self.sender.name}'s "
                    f"member or of {self.receiver.name}'s LAG member it hashes to: its errors and drops, ethtool -S "
                    f"on both nodes){unknown}")
        if self.shared_a_lane(best):
            lanes = {self.sent_on(s) for s in best.streams}
            if len(lanes) == min(len(best.streams), len(self.sender.spec.bond.lanes)):
                return (f"the switch's hash folds streams together: {self.sender.name} sent the {len(best.streams)} "
                        f"streams on {len(lanes)} lanes, yet two of them shared a lane in the best of "
                        f"{len(self.attempts)} attempt(s), each with other client ports. The switch spreads the LAG "
                        f"towards {self.receiver.name} by a hash of its own: set its load balancing to source and "
                        f"destination IP and L4 ports{unknown}")
            return (f"{self.sender.name}'s own layer3+4 hash put the {len(best.streams)} streams on {len(lanes)} "
                    f"of its lanes: their client ports hash together (with every member up; see test_bond_state "
                    f"for members out of the aggregator){unknown}")
        rates = [s.received_bps for s in best.streams]
        if max(rates) - min(rates) <= EVEN * max(rates):
            return (f"no member without link or slow and no two streams on one lane; every stream is short alike "
                    f"({min(rates) / 1e9:.3g}-{max(rates) / 1e9:.3g} Gbit/s): the nodes do not keep up (CPU-bound "
                    "iperf3, other load, power mode) or the switch's ports are oversubscribed; retransmits alike "
                    f"on every lane are TCP probing for the rate, not errors{unknown}")
        erring = [s for s in self.short(best) if s.retransmits]
        if erring:
            return (f"no member without link or slow and no two streams on one lane, but "
                    + ", ".join(f"the stream on {self.sent_on(s)} (port {s.local_port}) short with {s.retransmits} "
                                f"retransmits" for s in erring)
                    + ": a cable or port with errors on that lane, on either node's side (ethtool -S and ethtool "
                    f"--show-fec -I on both nodes){unknown}")
        return ("no member without link or slow, no two streams on one lane, and the short streams without "
                "retransmits: the receiver does not keep up with them (CPU-bound iperf3, power mode) or the "
                f"switch delays that lane{unknown}")

def _member(host: Host, name: str, lane_mbps: int) -> tuple[str, int | None, bool]:
    """(what is wrong with this bond member, or "", its speed, whether ethtool could tell)."""
    where = f"{host.name} {name} (switch port {host.spec.lane(name).switch_port})"
    try:
        link = host.read(ETHTOOL, interface=name)
    except ProbeFailed as error:
        return f"ethtool could not tell the speed of {where} ({error.reason})", None, False
    if link.link_detected is False or link.speed_mbps is None:
        return f"{where} without link", None, True
    if link.speed_mbps < lane_mbps:
        return f"{where} at {link.speed_mbps}Mb/s", link.speed_mbps, True
    return "", link.speed_mbps, True


def lanes_of(sender: Node, receiver: Node) -> int:
    """The lanes a bonded pair's -P 4 can use: the narrower bond's."""
    return min(len(sender.bond.lanes), len(receiver.bond.lanes))


def attempts(sender: Host, receiver: Host, cluster: ClusterAtStep) -> tuple[IperfResult, ...] | None:
    """Four streams from sender to receiver, one client each, when both are bonded (a pair of a
    round that is not gets None); once more when short of the bond's floor (traffic.attempts)."""
    if not (cluster.bonded(sender.spec) and cluster.bonded(receiver.spec)):
        return None
    floor = reference("bond.rate").bound_in("bit/s", cluster.expect, lanes=lanes_of(sender.spec, receiver.spec))
    return traffic.attempts(sender, receiver, receiver.spec.ip, floor, cluster.expect.iperf_seconds, streams=4)
