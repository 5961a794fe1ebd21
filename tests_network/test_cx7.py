"""A DGX Spark pair over one QSFP cable: both logical interfaces of the cabled port up and
addressed, ping on each CX7 subnet, RoCE near the port's 200 Gb/s and its latency, and a
netplan file that survives a reboot (NCCL across the pair: test_nccl.py). (Spark playbook;
"Prueba mínima de aceptación".) Steps as on a Thor shelf: 1 the cable and link, 2 addresses,
3 speed and bandwidth."""

import pytest

from rackproof.judging import addressing
from rackproof.judging.capabilities import MULTI_NODE
from rackproof.judging.failure import Failure, NotVerified, judge
from rackproof.measurements.cx7 import CX7_ADDRESSES, CX7_LATENCY, CX7_LINK, CX7_NODE_NETPLAN, CX7_PEER_PINGS, \
    CX7_RDMA, CX7_ROCE, CX7_ROCE_CAUSE
from rackproof.probes.netplan import CX7_NETPLAN

pytestmark = pytest.mark.capability(MULTI_NODE)


@pytest.mark.step(1)
def test_cx7_interface_up(cx7, planned):
    links = planned(CX7_RDMA)
    found = links.get(cx7.spec.name)
    if found is None:
        raise Failure(cx7.where, "ibdev2netdev", f"a line for {cx7.spec.name}", "none; it lists " + ", ".join(sorted(links)),
                      "the interface names differ on this unit: map them from ibdev2netdev")
    if found.device != cx7.spec.rdma_device:
        raise Failure(cx7.where, "RoCE device", cx7.spec.rdma_device, found.device, "the inventory pairs another device")
    if not found.up:
        raise Failure(cx7.where, "link state (ibdev2netdev)", "Up", "Down",
                      "the QSFP cable is in another port or not seated (pull tab up, no force), or the netplan file "
                      "configures the Down pair of interfaces")


@pytest.mark.step(2)
def test_cx7_address(cx7, planned):
    iface = planned(CX7_ADDRESSES).get(cx7.spec.name)
    found = [f"{a.local}/{a.prefixlen}" for a in iface.addresses if a.family == "inet"] if iface else []
    if cx7.spec.address not in found:
        raise Failure(cx7.where, "IPv4 address", cx7.spec.address, ", ".join(found) or "none",
                      f"the netplan file ({CX7_NETPLAN}) was not applied (sudo netplan apply) or names other interfaces")


@pytest.mark.step(3)
def test_cx7_speed(cx7, inventory, planned):
    link = planned(CX7_LINK)
    expected = inventory.expect.cx7_speed_mbps
    if not (link.link_detected and link.speed_mbps == expected):
        raise Failure(cx7.where, "ethtool speed", f"{expected}Mb/s with link",
                      f"{link.speed_mbps or 'Unknown!'}Mb/s, link {'yes' if link.link_detected else 'no'}",
                      f"the port negotiated {link.speed_mbps}Mb/s: a cable or switch port rated lower (a 200G QSFP56 "
                      "or QSFP112 DAC is needed), or a switch port forced lower; `ethtool -s IFACE speed "
                      f"{expected} autoneg on`, or replace the cable" if link.link_detected and link.speed_mbps
                      else "the link is down (each logical interface reports the whole port's speed)")


@pytest.mark.step(2)
def test_cx7_ping_on_its_subnet(cx7, inventory, measure, planned):
    peers = addressing.cx7_peers(inventory.nodes, cx7.host.name, cx7.spec.address)
    if not peers:
        raise NotVerified(cx7.where, "ping on its CX7 subnet", f"no other node has a CX7 interface on the subnet of "
                          f"{cx7.spec.address} in the inventory", "list the peer's CX7 interface on this subnet")
    replies = planned(CX7_PEER_PINGS)
    for node, c in peers:
        if (r := replies.get(c.ip)) is None:
            raise NotVerified(f"{cx7.where} -> {node.name} {c.name} ({c.ip})", "ping on its CX7 subnet",
                              "no ping of it was made", "run the check again")
        if r.rtt_avg_ms is not None:
            measure("rtt", f"{cx7.host.name} -> {node.name} ({c.name})", r.rtt_avg_ms, "ms")
        if not r.received or r.loss_percent:
            raise Failure(f"{cx7.where} -> {node.name} {c.name} ({r.target})", r.error or f"{r.loss_percent:g}% loss",
                          cause="the peer's interface is Down or unaddressed, or the two ends are on different subnets")


def named_links(pair) -> list[str]:
    """Each CX7 link of the pair in this direction, by interface and RDMA device at both ends."""
    links = addressing.cx7_links(pair.src.spec, pair.dst.spec)
    if not links:
        raise Failure(pair.where, "no two CX7 interfaces of these nodes share a subnet in the inventory")
    return [f"{pair.src.name} {s.name} ({s.rdma_device}) -> {pair.dst.name} {d.name} ({d.rdma_device})" for s, d in links]


@pytest.mark.step(3)
@pytest.mark.capability(MULTI_NODE)
def test_roce_bandwidth_over_the_port(cx7_pair, measure, planned):
    names = named_links(cx7_pair)
    results = planned(CX7_ROCE)
    m = measure("roce.port", f"{cx7_pair.where} (sum of {len(names)} links)", sum(r.gbits_average for r in results), "Gb/s")
    # each logical interface carries its share of the port: the ones below it are where to look
    short = [name for name, r in zip(names, results) if r.gbits_average < m.expectation.floor / len(names)]
    judge(m, f"{cx7_pair.where} (ib_write_bw)", (
        f"{', '.join(short)} carries less than its share of the port while the rest keeps up: compare that "
        "interface's settings (MTU, PFC) with the others', and check its PCIe link" if len(short) < len(names)
        else "the port runs below 200 Gb/s (a cable rated lower, or a lower negotiated speed: see test_cx7_speed), "
             "or other traffic shares the port"),
          also=", ".join(f"{name}: {r.gbits_average:.2f} Gb/s" for name, r in zip(names, results)))


@pytest.mark.step(3)
@pytest.mark.capability(MULTI_NODE)
def test_roce_bandwidth_of_each_link(cx7_pair, measure, planned):
    """This direction of each CX7 link (each PCIe function of the port): ib_write_bw's figure, the
    port's links at once, the slowest judged against the per-link floor, every link's figure shown."""
    names = named_links(cx7_pair)
    figures = [measure("roce.link", name, r.gbits_average, "Gb/s") for name, r in zip(names, planned(CX7_ROCE))]
    slowest = min(range(len(figures)), key=lambda i: figures[i].value)
    cause = planned(CX7_ROCE_CAUSE) if figures[slowest].verdict == "failed" else None
    judge(figures[slowest], f"{names[slowest]} (ib_write_bw)", cause or (
        "this link or direction moves less while the others keep up: its PCIe function's link (Gen5 x4 expected), "
        "pause frames or drops on its path (ethtool -S: rx_prio*_pause, out_of_buffer), or an MTU that "
        "differs between its two ends"), also=", ".join(f"{name}: {m.value:g} Gb/s" for name, m in zip(names, figures)))


@pytest.mark.step(3)
@pytest.mark.capability(MULTI_NODE)
def test_rdma_latency_of_each_link(cx7_pair, measure, planned):
    """This direction of each CX7 link (each PCIe function of the port): ib_write_lat's typical
    latency of a 2-byte write, the slowest link judged, every link's figure shown."""
    names = named_links(cx7_pair)
    figures = [measure("roce.latency", name, r.t_typical, "µs") for name, r in zip(names, planned(CX7_LATENCY))]
    slowest = max(range(len(figures)), key=lambda i: figures[i].value)
    judge(figures[slowest], f"{names[slowest]} (ib_write_lat)", (
        "this direction or link waits where the others do not: pause frames or a congested queue on its path "
        "(ethtool -S: rx_prio*_pause, out_of_buffer), an MTU that differs between its two ends, or a receiving "
        "CPU in a deep idle state; hundreds of µs is RDMA in software (rxe), not the CX7"),
          also=", ".join(f"{name}: {m.value:g} µs" for name, m in zip(names, figures)))


@pytest.mark.step(2)
def test_netplan_file_persists_the_cx7_addresses(cx7_node, planned):
    node = cx7_node
    names = [c.name for c in node.spec.cx7]
    found, files, trapped, at_run_time = planned(CX7_NODE_NETPLAN)
    if found is None:
        raise Failure(node.name, f"{CX7_NETPLAN} does not exist: the addresses were set with ip addr add and are lost "
                      "at the next reboot")
    if (found.mode, found.owner) != ("600", "root"):
        raise Failure(f"{node.name} {CX7_NETPLAN}", "mode and owner", "600 root", f"{found.mode} {found.owner}",
                      "sudo chmod 600 (netplan warns otherwise)")
    if files.unreadable:
        raise Failure(node.name, f"{', '.join(files.unreadable)} cannot be read by the login, so whether "
                      f"{'it' if len(files.unreadable) == 1 else 'they'} also configure {', '.join(names)} is not known",
                      cause="netplan files are root's: let the login run `sudo -n grep` on /etc/netplan/*.yaml "
                            "(a sudoers.d rule), or run the suite as a login that may read them")
    others = [f for f in files.naming if f != CX7_NETPLAN]
    if others:
        raise Failure(node.name, f"{', '.join(others)} also configure{'s' if len(others) == 1 else ''} "
                      f"{', '.join(names)}: two netplan files for the same interfaces fight at every apply")
    if trapped:
        raise Failure(node.name, "; ".join(f"netplan configures {down} (Down in ibdev2netdev) while its twin {up} (Up, "
                                           "the cabled port) is in no netplan file" for down, up in trapped),
                      cause="the interface-name trap: netplan was written for the other port of the pair; map the "
                            f"names from ibdev2netdev and name {', '.join(up for _, up in trapped)} in {CX7_NETPLAN}")
    if at_run_time:
        raise Failure(node.name, f"{'; '.join(at_run_time)}: in no netplan file, set with ip addr add: gone at the "
                      "next reboot", cause=f"put it in {CX7_NETPLAN}, or, if the change that added it is rolled back, "
                      "remove it (sudo ip addr del ADDRESS dev INTERFACE)")
