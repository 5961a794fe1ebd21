"""/proc/net/bonding/BOND as the kernel prints it (parsed by rackproof.probes.bonding)."""

from __future__ import annotations

from rackproof.probes.bonding import BondInfo, BondSlave


# The kernel's speed codes (bond_3ad.c, enum ad_link_speed_type): the actor's operational key
# is the code shifted left once, plus 1 for full duplex; 10G ports show 15, 25G 21, 100G 29.
_SPEED_CODES = {1: 1, 10: 2, 100: 3, 1000: 4, 2500: 5, 5000: 6, 10000: 7, 14000: 8, 20000: 9, 25000: 10,
                40000: 11, 50000: 12, 56000: 13, 100000: 14, 200000: 15, 400000: 16, 800000: 17}
_SYNC = 0x08     # LACP port state bit: in sync with its aggregator


def _actor_key(slave: BondSlave) -> int:
    """The key a member's actor announces; 0 while it is down (no speed), as real files show."""
    if slave.mii_status != "up" or slave.speed_mbps is None:
        return 0
    return _SPEED_CODES.get(slave.speed_mbps, 0) << 1 | (slave.duplex == "full")


def _churn(port_state: int | None) -> str:
    # the churn machine ends in "none" once the port is in sync, "churned" when it never got there
    # (a real file shows "monitoring" for a port's first minute instead)
    return "none" if port_state is not None and port_state & _SYNC else "churned"


_HASH_POLICY_NUMBERS = {"layer2": 0, "layer3+4": 1, "layer2+3": 2, "encap2+3": 3, "encap3+4": 4,
                        "vlan+srcmac": 5}


def render_bonding(info: BondInfo, bond_name: str = "bond0") -> str:
    """/proc/net/bonding/BOND as a current kernel prints it to root.

    Lines for fields that are None are left out, so parse_bonding(render_bonding(info)) == info.
    What BondInfo does not hold is printed with the kernel's defaults (delays 0, min links 0,
    ad_select stable, priorities 65535/255, queue ID 0); churn states follow the port states.
    """
    lines = []
    if info.driver_version is not None:
        lines += [f"Ethernet Channel Bonding Driver: {info.driver_version}", ""]
    lines.append(f"Bonding Mode: {info.mode}")
    if info.xmit_hash_policy is not None:
        number = _HASH_POLICY_NUMBERS.get(info.xmit_hash_policy, 0)
        lines.append(f"Transmit Hash Policy: {info.xmit_hash_policy} ({number})")
    lines.append(f"MII Status: {info.mii_status}")
    if info.miimon is not None:
        lines.append(f"MII Polling Interval (ms): {info.miimon}")
    lines += ["Up Delay (ms): 0", "Down Delay (ms): 0", "Peer Notification Delay (ms): 0"]
    if info.is_lacp:
        lines += _render_lacp_info(info, bond_name)
    for number, slave in enumerate(info.slaves, start=1):
        lines += _render_slave(info, slave, number)
    return "\n".join(lines) + "\n"


def _render_lacp_info(info: BondInfo, bond_name: str) -> list[str]:
    lines = ["", "802.3ad info", "LACP active: on"]
    if info.lacp_rate is not None:
        lines.append(f"LACP rate: {info.lacp_rate}")
    lines += ["Min links: 0", "Aggregator selection policy (ad_select): stable", "System priority: 65535"]
    if info.system_mac is not None:
        lines.append(f"System MAC address: {info.system_mac}")
    if info.active_aggregator_id is None:
        return lines + [f"bond {bond_name} has no active aggregator"]
    members = [s for s in info.slaves if s.aggregator_id == info.active_aggregator_id]
    partner_key = next((s.partner_oper_key for s in members if s.partner_oper_key is not None), 1)
    actor_key = next((_actor_key(s) for s in members if _actor_key(s)), 0)
    lines += ["Active Aggregator Info:",
              f"\tAggregator ID: {info.active_aggregator_id}",
              f"\tNumber of ports: {len(members)}",
              f"\tActor Key: {actor_key}",
              f"\tPartner Key: {partner_key}"]
    if info.partner_mac is not None:
        lines.append(f"\tPartner Mac Address: {info.partner_mac}")
    return lines


def _render_slave(info: BondInfo, slave: BondSlave, number: int) -> list[str]:
    lines = ["", f"Slave Interface: {slave.name}", f"MII Status: {slave.mii_status}",
             f"Speed: {slave.speed_mbps} Mbps" if slave.speed_mbps is not None else "Speed: Unknown",
             f"Duplex: {slave.duplex}" if slave.duplex is not None else "Duplex: Unknown"]
    if slave.link_failure_count is not None:
        lines.append(f"Link Failure Count: {slave.link_failure_count}")
    if slave.perm_hwaddr is not None:
        lines.append(f"Permanent HW addr: {slave.perm_hwaddr}")
    lines.append("Slave queue ID: 0")
    if not info.is_lacp:
        return lines
    if slave.aggregator_id is None:
        return lines + ["Aggregator ID: N/A"]
    lines += [f"Aggregator ID: {slave.aggregator_id}",
              f"Actor Churn State: {_churn(slave.actor_port_state)}",
              f"Partner Churn State: {_churn(slave.partner_port_state)}",
              "Actor Churned Count: 0", "Partner Churned Count: 0"]
    actor = [("system priority", 65535), ("system mac address", info.system_mac),
             ("port key", _actor_key(slave)), ("port priority", 255),
             ("port number", number), ("port state", slave.actor_port_state)]
    partner = [("system priority", 65535), ("system mac address", slave.partner_mac),
               ("oper key", slave.partner_oper_key), ("port priority", 255),
               ("port number", number), ("port state", slave.partner_port_state)]
    for header, block in (("details actor lacp pdu:", actor), ("details partner lacp pdu:", partner)):
        lines.append(header)
        lines += [f"    {key}: {value}" for key, value in block if value is not None]
    return lines
