"""The CX7 ports: link, RDMA, addresses, cabling, pings, RoCE bandwidth and latency, and the netplan
files that keep them."""

from __future__ import annotations

from rackproof.judging import addressing, staleinit

from rackproof.measuring import lldp, nichardware, plan, traffic
from rackproof.measuring.plan import Phase
from rackproof.probes.ethtool import ETHTOOL
from rackproof.probes.files import BACKUP_FILES, CONFIG_FILES
from rackproof.probes.netplan import CX7_NETPLAN, MODE_OWNER, NAMING_INTERFACES
from rackproof.probes.perftest import WRITE_BANDWIDTH, WRITE_LATENCY
from rackproof.probes.sshcheck import SSH_CONNECTION


def _backups(cx7_node, ctx: plan.Context) -> tuple:
    """The node's configuration files, which of them name its CX7 interfaces, and the copies in
    the inventory's backup folder."""
    names = "|".join(c.name for c in cx7_node.spec.cx7)
    return (cx7_node.read(CONFIG_FILES), cx7_node.read(NAMING_INTERFACES, pattern=names),
            cx7_node.read(BACKUP_FILES, folder=ctx.cluster.inventory.rollback.backup_dir))


def _netplan(cx7_node, ctx: plan.Context) -> tuple:
    """What the netplan check judges, in its order: the CX7 file's mode and owner, the netplan
    files naming the CX7 interfaces, the Down twins netplan names instead, and the addresses set
    at run time only."""
    names = [c.name for c in cx7_node.spec.cx7]
    return (cx7_node.read(MODE_OWNER, path=CX7_NETPLAN), cx7_node.read(NAMING_INTERFACES, pattern="|".join(names)),
            cx7_node.netplan_on_down_twins(names), cx7_node.set_at_run_time(names)[0])


def _management_path(cx7_node, ctx: plan.Context) -> tuple:
    """The two ends of the controller's SSH connection as the node sees them, and the node's
    route back to the controller (None when the commands did not come over SSH)."""
    seen = cx7_node.read(SSH_CONNECTION)
    return seen, cx7_node.route_to([seen.client])[seen.client] if seen else None


CX7_HEARD = plan.each("cx7.heard", Phase.FACTS, "cx7", lambda cx7, ctx: lldp.heard(cx7.host, ctx.cluster.cluster.user))
CX7_RDMA = plan.each("cx7.rdma", Phase.FACTS, "cx7", lambda cx7, ctx: cx7.host.rdma_links())
CX7_ADDRESSES = plan.each("cx7.addresses", Phase.FACTS, "cx7", lambda cx7, ctx: cx7.host.interfaces())
CX7_LINK = plan.each("cx7.link", Phase.FACTS, "cx7", lambda cx7, ctx: cx7.host.read(ETHTOOL, interface=cx7.spec.name))
CX7_NODE_NETPLAN = plan.each("cx7_node.netplan", Phase.FACTS, "cx7_node", _netplan)
CX7_NODE_BACKUPS = plan.each("cx7_node.backups", Phase.FACTS, "cx7_node", _backups)
CX7_NODE_MANAGEMENT_PATH = plan.each("cx7_node.management_path", Phase.FACTS, "cx7_node", _management_path)
CX7_PEER_PINGS = plan.each("cx7.peer_pings", Phase.FACTS, "cx7", lambda cx7, ctx: cx7.host.ping(
    [c.address.split("/")[0] for _, c in addressing.cx7_peers(ctx.cluster.nodes, cx7.host.name, cx7.spec.address)]))
CX7_ROCE = plan.in_rounds("cx7.roce", "cx7_pair", lambda sender, receiver, ctx: traffic.over_links(
    WRITE_BANDWIDTH, sender, receiver, addressing.cx7_links(sender.spec, receiver.spec),
    seconds=ctx.cluster.expect.iperf_seconds))
# each ordered pair is a direction; its links one after the other (WRITE_LATENCY), so no run is another's load
CX7_LATENCY = plan.in_rounds("cx7.latency", "cx7_pair", lambda sender, receiver, ctx: traffic.over_links(
    WRITE_LATENCY, sender, receiver, addressing.cx7_links(sender.spec, receiver.spec),
    seconds=ctx.cluster.expect.iperf_seconds))


def _slowest_link_cause(pair, results, ctx: plan.Context) -> str | None:
    link = staleinit.slowest(results)
    sender, receiver = pair.src, pair.dst
    return nichardware.link_cause(sender, receiver, addressing.cx7_links(sender.spec, receiver.spec)[link],
                                  results[link].gbits_average)


# a link under its floor: both ends' speed, PCIe link and firmware, and whether they name NVIDIA's stale initialisation
CX7_ROCE_CAUSE = plan.diagnosis("cx7.roce.cause", [(CX7_ROCE, lambda pair, results, cluster: staleinit.under_floor(
    results[staleinit.slowest(results)].gbits_average, cluster))], _slowest_link_cause)
