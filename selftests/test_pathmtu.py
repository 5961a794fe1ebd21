"""rackproof.measuring.pathmtu: what a node's don't-fragment pings say of its paths, per peer and per bond
member (no rack: the answers are PingResults as the ping parser reads them)."""

from rackproof.measuring import pathmtu
from rackproof.probes.ip import Interface
from rackproof.probes.ping import PingResult

PEERS = {"10.10.0.12": "thor-2", "10.10.0.13": "thor-3", "10.10.0.14": "thor-4"}
MEMBERS = [(f"mgbe{k}_0", f"thor-1 mgbe{k}_0 (switch sw-25g port {k + 1}, cable thor-1/{k + 1})") for k in range(4)]
MINE = {f"mgbe{k}_0": Interface(f"mgbe{k}_0", "UP", 1500, None) for k in range(4)}
OVER = {ip: PingResult(ip, 1, 0, 100.0, None, None, None, None, errors=1) for ip in PEERS}


def ping(ip: str, answered: bool) -> PingResult:
    return PingResult(ip, 1, int(answered), 0.0 if answered else 100.0, *(0.1 if answered else None,) * 4)


def fits(lost: dict[str, set[int]], members: int = 4) -> dict:
    """Each peer's packet of the MTU over each member, lost over the members given."""
    return {ip: tuple(ping(ip, k not in lost.get(ip, set())) for k in range(members)) for ip in PEERS}


def problems(found, members=MEMBERS, over=OVER, theirs=None):
    asked = []

    def mine():
        asked.append("mine")
        return MINE
    return pathmtu.problems("thor-1", 1500, PEERS, found, over, "bond0" if members else "mgbe0_0", members,
                            theirs or (lambda ip: None), mine), asked


def test_every_path_over_every_member_crossing_is_no_problem():
    assert problems(fits({})) == ([], [])


def test_a_member_that_carries_the_mtu_to_no_peer_is_its_own_switch_port():
    found, asked = problems(fits({ip: {1} for ip in PEERS}))
    assert found == ["thor-1 mgbe1_0 (switch sw-25g port 2, cable thor-1/2): a 1500-byte packet sent over it got no "
                     "reply from any peer, over the other members it crossed (its switch port drops them: the port's "
                     "MTU is below 1500)"]
    assert asked == ["mine"]


def test_a_member_with_a_lower_mtu_of_its_own_says_so():
    lowered = {**MINE, "mgbe1_0": Interface("mgbe1_0", "UP", 1400, None)}
    found = pathmtu.problems("thor-1", 1500, PEERS, fits({ip: {1} for ip in PEERS}), OVER, "bond0", MEMBERS,
                             lambda ip: None, lambda: lowered)
    assert found[0].endswith("(mgbe1_0 has MTU 1400)")


def test_a_member_failing_towards_one_peer_only_points_at_that_peers_side():
    found, asked = problems(fits({"10.10.0.12": {1}}))
    assert found == ["thor-1 -> thor-2: a 1500-byte packet sent over mgbe1_0 got no reply, while over thor-1's other "
                     "members it crossed and mgbe1_0 carried it to other peers: it is dropped on thor-2's side (a port "
                     "of its LAG; thor-2's own check names the member)"]
    assert asked == []


def test_every_member_failing_towards_one_peer_reads_that_peers_interface():
    theirs = {"10.10.0.13": Interface("bond0", "UP", 1400, None)}
    found, _ = problems(fits({"10.10.0.13": {0, 1, 2, 3}}), theirs=theirs.get)
    assert found == ["thor-1 -> thor-3: a 1500-byte packet got no reply over every bond member (thor-3 bond0 has MTU 1400)"]


def test_without_a_bond_one_packet_per_peer_as_before():
    found, _ = problems(fits({"10.10.0.12": {0}}, members=1), members=[],
                        theirs=lambda ip: Interface("mgbe0_0", "UP", 1500, None))
    assert found == ["thor-1 -> thor-2: a 1500-byte packet got no reply (thor-2 something on the path (the switch "
                     "ports' MTU) drops them)"]


def test_no_peer_reached_over_any_member_is_the_nodes_own_side():
    found, asked = problems(fits({ip: {0, 1, 2, 3} for ip in PEERS}))
    assert found == ["thor-1 -> every peer: a 1500-byte packet got no reply over any bond member (thor-1's own switch "
                     "port or LAG drops them: its MTU is below 1500)"]
    assert asked == ["mine"]


def test_a_packet_one_byte_over_the_mtu_that_crosses_is_named():
    over = {**OVER, "10.10.0.14": ping("10.10.0.14", True)}
    found, _ = problems(fits({}), over=over)
    assert found == ["thor-1 -> thor-4: a 1501-byte packet crossed whole (an MTU above 1500 on the way)"]


def test_a_blocked_path_names_the_members_or_every_one():
    one = pathmtu.Blocked("thor-1", "thor-2", 1500, ("mgbe1_0",), False)
    assert str(one).startswith("packets of the MTU (1500 bytes, don't-fragment) sent from thor-1 over thor-1 mgbe1_0 "
                               "(over its other members they cross) get no reply from thor-2: a path that drops")
    assert "over any bond member get no reply" in str(pathmtu.Blocked("thor-1", "thor-2", 1500, ("a", "b"), True))
    assert "sent from thor-1 get no reply" in str(pathmtu.Blocked("thor-1", "thor-2", 1500, (), True))
