"""Causes chosen from evidence on the network side, on a simulated thor5 rack (five bonded Thors):

- the switch's LAG towards thor-4 left at MTU 1400: the MTU check fails on every node naming the
  path to thor-4, every throughput check into or out of thor-4 fails pointing at packets of the
  MTU that get no reply, and no pair without thor-4 or thor-2 fails (a stalled connection's client
  port is never taken again: no "Address already in use");
- at the same time, one LAG member's port (thor-2 mgbe1_0, switch port 6) at MTU 1400: the pings
  steered per member name that member and its port; a -P 4 check that fails names the member
  whose packets of the MTU get no reply, never "a cable or port with errors";
- a lane plugged into another node's port (thor-3 mgbe0_0 in thor-5's port 17): the LLDP check
  names both, and the simulated switch carries and shapes each lane on the port its cable is in,
  so no throughput check between the plugged nodes and thor-1 fails.

All three are planted together and judged in one run with one-second iperf3 runs: a rack's
throughput rounds are most of a selftest's time, and each fault's nodes are its own.
"""

from __future__ import annotations

import pytest

from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

MTU = "test_addressing::test_packets_of_the_mtu_cross_whole_and_no_larger"
ONE = "test_throughput::test_iperf3_one_stream"
FOUR = "test_throughput::test_iperf3_bonded_four_streams"
NODES = [f"thor-{i}" for i in range(1, 6)]
CABLING = "test_cabling::test_lane_is_in_its_planned_port"
BLOCKED = "get no reply from {dst}: a path that drops full-size frames"


@pytest.fixture(scope="module")
def thor5():
    with SimRack("thor5", unique_name("paths")) as rack:
        yield rack


def pairs(test: str, node: str) -> set[str]:
    return {f"{test}[{a}->{b}]" for a in NODES for b in NODES if a != b and node in (a, b)}


def test_a_lag_a_lag_member_below_the_mtu_and_a_plug_in_another_port_fail_their_own_checks_named(pytester, thor5,
                                                                                                tmp_path):
    # thor-4's whole LAG and one member's port of thor-2's (mgbe1_0, switch port 6) at MTU 1400;
    # thor-3 mgbe0_0 in thor-5 mgbe0_0's port (the two trade)
    with thor5.planted("thor-4", "switch-mtu-lowered"), thor5.planted("thor-2", "switch-mtu-lowered", "mgbe1_0"), \
            thor5.planted("thor-3", "plug-in-port", "mgbe0_0", "17"):
        run = run_suite(pytester, f"--inventory={thor5.one_second_runs(tmp_path)}", "tests_physical/test_cabling.py",
                        "tests_network/test_addressing.py", "tests_network/test_throughput.py", "-n", "2",
                        netns=thor5.rack.topo.bench)
    mtu_checks = {f"{MTU}[{n}]" for n in NODES}
    through_thor4 = pairs(ONE, "thor-4") | pairs(FOUR, "thor-4")
    plugged = {f"{CABLING}[thor-3:mgbe0_0]", f"{CABLING}[thor-5:mgbe0_0]"}
    # the -P 4 streams hashed onto thor-2's member stall, both ways; a one-stream check fails
    # only when its connection hashed there (the kernel picks its port)
    assert mtu_checks | through_thor4 | pairs(FOUR, "thor-2") | plugged <= run.failed, run.output
    assert run.failed <= mtu_checks | through_thor4 | pairs(FOUR, "thor-2") | pairs(ONE, "thor-2") | plugged, run.output

    assert "thor-4 -> every peer: a 1500-byte packet got no reply over any bond member (thor-4's own switch port or " \
           "LAG drops them: its MTU is below 1500)" in run.messages[f"{MTU}[thor-4]"]
    assert "thor-1 -> thor-4: a 1500-byte packet got no reply over every bond member (thor-4 something on the path " \
           "(the switch ports' MTU) drops them)" in run.messages[f"{MTU}[thor-1]"]
    assert run.messages[f"{MTU}[thor-2]"].startswith(
        "thor-2: packets of the MTU with don't-fragment (ping -M do): thor-2 mgbe1_0 (switch sw-25g port 6, cable "
        "thor-2/2): a 1500-byte packet sent over it got no reply from any peer, over the other members it crossed "
        "(its switch port drops them: the port's MTU is below 1500)")
    assert "thor-1 -> thor-2: a 1500-byte packet sent over mgbe1_0 got no reply, while over thor-1's other members it " \
           "crossed and mgbe1_0 carried it to other peers: it is dropped on thor-2's side" in run.messages[f"{MTU}[thor-1]"]

    for test in run.failed - mtu_checks - plugged:
        src, dst = test.split("[")[1].rstrip("]").split("->")
        message = run.messages[test]
        over = "over any bond member" if "thor-4" in (src, dst) else f"over {src} mgbe1_0 (over its other members they cross)"
        assert f"Cause: packets of the MTU (1500 bytes, don't-fragment) sent from {src} {over} " \
               f"{BLOCKED.format(dst=dst)}" in message, message
        assert "cable" not in message, message
    stalled = run.messages[f"{FOUR}[thor-1->thor-2]"]
    assert "the stream on mgbe1_0 (port " in stalled and "stalled" in stalled, stalled
    # a stalled connection's client port is never taken again
    assert all("Address already in use" not in m for m in run.messages.values())

    # the plugged lanes carry their load on the ports their cables are in: every throughput
    # check among the nodes the MTU faults leave alone passed
    clear = ("thor-1", "thor-3", "thor-5")
    carried = {f"{test}[{a}->{b}]" for test in (ONE, FOUR) for a in clear for b in clear if a != b}
    assert all(run.outcomes.get(t) == "passed" for t in carried), {t: run.outcomes.get(t) for t in carried}
