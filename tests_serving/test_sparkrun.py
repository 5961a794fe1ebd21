"""A Spark cluster launched with sparkrun (the Cordatus Sparkrun-cluster page): the head node,
node_0, runs the sparkrun CLI, holds the container images the recipes need and the cluster
definition, whose hosts are the inventory's nodes, head first and the workers in the inventory's
order ("their order is the node order"), and whose user is the inventory's login; sparkrun's own
preflight (`sparkrun setup check`) finds no gap on any node, and a gap is the part of it that
failed (SSH, the CX7 network or sparkrun's runtime); and the multi-node path uses CX7 addresses,
not the Wi-Fi or management ones (the Spark guide's minimal acceptance, item 4)."""

import pytest

from rackproof.judging import sparkrun
from rackproof.judging.capabilities import MULTI_NODE, SPARKRUN
from rackproof.judging.failure import Failure, together
from rackproof.measurements.launcher import SPARKRUN_DEFINITION, SPARKRUN_FABRIC, SPARKRUN_IMAGE, \
    SPARKRUN_SETUP_CHECK, SPARKRUN_VERSION

pytestmark = [pytest.mark.platform("spark"), pytest.mark.needs("sparkrun"), pytest.mark.step(5)]


def _definition(head, found, inventory):
    """The definition on the head, from what the plan read there (sparkrun's version, the
    definition); the check is left to test_sparkrun_runs_on_the_head's failure when there is no
    sparkrun to ask."""
    version, definition = found[:2]
    if version is None:
        pytest.skip(f"sparkrun is not on {head.name} (test_sparkrun_runs_on_the_head fails): "
                    "its cluster definition is read once it is installed")
    name = inventory.sparkrun.cluster
    if definition is None:
        raise Failure(head.name, f"no sparkrun cluster {name} (sparkrun cluster show {name})",
                      cause=f"define it on the head: sparkrun cluster create {name} --hosts HEAD,WORKER,... "
                            "(CX7 addresses, the head first)")
    return definition


def _placed(written, interfaces, inventory):
    return sparkrun.placed(tuple(written), inventory.nodes, interfaces)


@pytest.mark.capability(SPARKRUN)
def test_sparkrun_runs_on_the_head(sparkrun_head, planned):
    if planned(SPARKRUN_VERSION) is None:
        raise Failure(sparkrun_head.name, "sparkrun is not installed on the head (node_0): nothing can be launched",
                      cause="install it on the head with Python 3.12 (pip install sparkrun, or the Cordatus wizard's "
                            "'Install now'), on the login's PATH")


@pytest.mark.capability(SPARKRUN)
def test_the_definition_lists_the_nodes_head_first(sparkrun_head, inventory, planned):
    found = planned(SPARKRUN_DEFINITION)
    definition = _definition(sparkrun_head, found, inventory)
    failure = together(sparkrun.definition_differences(f"{sparkrun_head.name} sparkrun cluster {definition.name}",
                                                       definition, _placed(definition.hosts, found[2], inventory),
                                                       inventory))
    if failure:
        raise failure


@pytest.mark.capability(MULTI_NODE)
def test_the_multi_node_path_uses_cx7_addresses(sparkrun_fabric, inventory, planned):
    found = planned(SPARKRUN_FABRIC)
    definition = _definition(sparkrun_fabric, found, inventory)
    where = f"{sparkrun_fabric.name} sparkrun cluster {definition.name}"
    off_cx7 = [h for h in _placed(definition.hosts, found[2], inventory) if not h.cx7]
    failure = together([
        Failure(where, "hosts not on CX7: " + ", ".join(
            f"{h.written} ({h.node or 'no node of the inventory'}"
            + (f", on {h.interface}" if h.interface else "") + ")" for h in off_cx7),
            cause="the definition names the Wi-Fi or management addresses, so model traffic between the nodes "
                  "leaves the CX7 link: list each node's CX7 address") if off_cx7 else None,
        Failure(where, "transfer interface mgmt: models and images reach the workers over the management network",
                cause=f"sparkrun cluster update {definition.name} --transfer-interface cx7")
        if definition.transfer_interface == "mgmt" else None])
    if failure:
        raise failure


@pytest.mark.capability(SPARKRUN)
def test_the_image_is_on_the_head(sparkrun_image, planned):
    head, image = sparkrun_image.host, sparkrun_image.image
    found = planned(SPARKRUN_IMAGE)
    if found.unusable:
        raise Failure(head.name, f"cannot look for {image}: {found.unusable}",
                      cause="sparkrun starts its recipes' containers with the login's Docker on the head: "
                            "sparkrun setup check names the fix")
    if found.id is None:
        raise Failure(head.name, f"container image {image} is not in the head's Docker",
                      cause=f"pull it on the head before the launch (docker pull {image}); otherwise the first "
                            "launch pulls it over the management network while the workload waits")


@pytest.mark.capability(SPARKRUN)
def test_sparkrun_setup_check_finds_no_gap(sparkrun_node, hosts, inventory, warn, guards, planned):
    head = hosts[inventory.nodes[0].name]
    version, definition, report, interfaces = planned(SPARKRUN_SETUP_CHECK)
    definition = _definition(head, (version, definition), inventory)
    if report is None:
        raise Failure(head.name, f"sparkrun setup check does not know cluster {definition.name}")
    host = next((h.written for h in _placed(report.hosts, interfaces, inventory) if h.node == sparkrun_node.name), None)
    if host is None:
        pytest.skip(f"{sparkrun_node.name} is not a host of sparkrun cluster {definition.name} "
                    "(test_the_definition_lists_the_nodes_head_first fails): sparkrun checks only the hosts it lists")
    where = f"{sparkrun_node.name} ({host}, sparkrun setup check on {head.name})"
    readiness = report.hosts[host]
    if not readiness.reachable:
        part = sparkrun.unreached_part(readiness.error, host in {c.ip for c in sparkrun_node.spec.cx7})
        _takes_away(guards, {part}, definition, inventory)
        raise Failure(where, f"{part} failed: {readiness.error}", seen=True,
                      cause=sparkrun.unreached_cause(part, host, readiness.error, definition, inventory))
    gaps = [i for i in readiness.items if i.status == "fail"]
    warnings = [i for i in readiness.items if i.status == "warn"]
    if gaps:
        parts = {sparkrun.part_of(i.key) for i in gaps}
        _takes_away(guards, parts, definition, inventory)
        raise Failure(where, f"{len(gaps)} critical gap{'s' * (len(gaps) > 1)} ({', '.join(sorted(parts))}): "
                      + "; ".join(map(_said, gaps)),
                      details="\n".join([*(_fix(i) for i in gaps), *(f"also warned: {_said(i)}; {_fix(i)}"
                                                                       for i in warnings)]))
    for item in warnings:
        warn(Failure(where, _said(item), details=_fix(item)))


def _takes_away(guards, parts, definition, inventory) -> None:
    taken = sparkrun.takes_away(parts, definition, inventory)
    if taken:
        guards(*taken)


def _said(item) -> str:
    return item.label + (f" ({item.detail})" if item.detail else "")


def _fix(item) -> str:
    return f"fix {item.label}: {item.guidance or 'sparkrun setup wizard'}"
