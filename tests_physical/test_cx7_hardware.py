"""The hardware behind each CX7 link of a DGX Spark: each PCIe function trained at its full speed
and width (Gen5 x4), the same NIC firmware and MTU at both ends of each link, and each end's RoCE v2
GID of an IPv4 address at the same index. (NVIDIA's dgx-spark-playbooks check-connectx-bandwidth;
operators' reports of GID indexes that differ between two Sparks.)"""

import pytest

from rackproof.judging.capabilities import MULTI_NODE
from rackproof.judging.failure import Failure
from rackproof.measurements.cx7hardware import CX7_HARDWARE, CX7_PAIR_HARDWARE
from rackproof.measuring.nichardware import differing

pytestmark = [pytest.mark.step(3), pytest.mark.capability(MULTI_NODE)]


def test_cx7_pcie_link_at_full_speed_and_width(cx7, planned, facts):
    hw = planned(CX7_HARDWARE)
    facts(cx7.host.name, f"PCIe {cx7.spec.rdma_device}", str(hw.rdma.pcie))
    if not hw.rdma.pcie.full:
        raise Failure(cx7.where, "PCIe link of its function", f"{hw.rdma.pcie.max_speed} x{hw.rdma.pcie.max_width}",
                      f"{hw.rdma.pcie.speed} x{hw.rdma.pcie.width}",
                      "an early BIOS trains the second CX7 controller at x2 (update DGX OS and its firmware, then a "
                      "full power cycle); a link that trained down after a warm reboot comes back with a cold boot")


def test_cx7_firmware_the_same_at_both_ends(cx7_pair, planned, facts):
    links = planned(CX7_PAIR_HARDWARE)
    for end in (e for link in links for e in link):
        facts(end.node, f"firmware {end.interface}", end.driver.firmware)
    if odd := differing(links, lambda end: end.driver.firmware):
        raise Failure(cx7_pair.where, "ConnectX-7 firmware (ethtool -i) differs: " + "; ".join(odd),
                      cause="one unit missed a DGX OS update (its firmware comes with it: sudo apt update && sudo apt "
                            "full-upgrade, then fwupd), or a card was replaced")


def test_cx7_mtu_the_same_at_both_ends(cx7_pair, inventory, planned):
    links = planned(CX7_PAIR_HARDWARE)
    wanted = inventory.expect.mtu
    odd = differing(links, lambda end: end.mtu) + [f"{e.where}: {e.mtu}, the inventory asks {wanted}"
                                                    for link in links for e in link if wanted and e.mtu != wanted]
    if odd:
        raise Failure(cx7_pair.where, "MTU of the CX7 interfaces: " + "; ".join(odd),
                      cause="MTU 9000 set on one end only (netplan's mtu: on each CX7 interface of both nodes); "
                            "NCCL over RoCE then runs at a few GB/s")


def test_roce_v2_gid_index_the_same_at_both_ends(cx7_pair, inventory, planned, facts):
    links, told = planned(CX7_PAIR_HARDWARE), inventory.expect.nccl_ib_gid_index
    ends = [e for link in links for e in link]
    for end in ends:
        facts(end.node, f"RoCE v2 GID index {end.rdma.device}", end.gid_index)
    if missing := [f"{e.where} has no RoCE v2 GID of an IPv4 address" for e in ends if e.gid_index is None]:
        raise Failure(cx7_pair.where, "; ".join(missing), cause="the interface does not hold its address "
                      "(test_cx7_address), and the kernel makes a GID only for an address an interface holds")
    odd = differing(links, lambda end: end.gid_index) \
        or [f"{e.where}: {e.gid_index}, NCCL is told {told} (nccl_ib_gid_index)" for e in ends
            if told is not None and e.gid_index != told]
    if odd:
        raise Failure(cx7_pair.where, "RoCE v2 GID index: " + "; ".join(odd),
                      cause="the GID table's order follows the order the addresses came up (an IPv6 address first "
                            "shifts the IPv4 entry): a fixed NCCL_IB_GID_INDEX or perftest -x names an entry that "
                            "is not this address's RoCE v2 GID on one node (ibv_modify_qp fails); let NCCL choose "
                            "(NCCL_IB_ROCE_VERSION_NUM=2, no nccl_ib_gid_index) or bring the addresses up in one order")
