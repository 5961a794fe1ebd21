"""/proc/net/bonding/BOND as the kernel prints it (parsed by rackproof.probes.bonding)."""

from __future__ import annotations

from rackproof.probes.bonding import BondInfo, BondSlave, lacp_not_carrying


# The actor's operational key (speed and duplex bits) is not modelled; 15 is what 10G/25G
# ports show in real files. A member that is down has key 0.
_ACTOR_KEY = 15


def _churn(port_state: int | None) -> str:
    return "none" if lacp_not_carrying(port_state) is None else "churned"


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
    lines += ["Active Aggregator Info:",
              f"\tAggregator ID: {info.active_aggregator_id}",
              f"\tNumber of ports: {len(members)}",
              f"\tActor Key: {_ACTOR_KEY}",
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
             ("port key", _ACTOR_KEY if slave.mii_status == "up" else 0), ("port priority", 255),
             ("port number", number), ("port state", slave.actor_port_state)]
    partner = [("system priority", 65535), ("system mac address", slave.partner_mac),
               ("oper key", slave.partner_oper_key), ("port priority", 255),
               ("port number", number), ("port state", slave.partner_port_state)]
    for header, block in (("details actor lacp pdu:", actor), ("details partner lacp pdu:", partner)):
        lines.append(header)
        lines += [f"    {key}: {value}" for key, value in block if value is not None]
    return lines
