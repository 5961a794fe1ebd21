"""`rackproof discover`: a first cluster.toml written from what the nodes say.

Each node is asked, read-only and through the suite's own probes, what a cluster.toml states:
its host name, the login, the platform, the lanes that have link and the bond over them, the
ConnectX-7 pairs, the cluster address, the FEC and speed the lanes run at, the MTU, the versions,
the agent and the engines it routes to, and, where the nodes run lldpd, the switch's name and the
port each lane is in (as the switch announces them over LLDP). What a node cannot tell (the
switch's name and port numbers without LLDP, the cable labels, the build step a node joined at, where the agent's key lives, figures
only the operator knows) comes from the build guide's rules or from the command line, and its
line says so in a comment: the person checking the file knows which lines to look at.

A fault seen while discovering is never written as the expectation: a lane without link is
written as not cabled with a comment saying so, an engine listening on every address keeps the
default (its cluster address), and versions are offered as commented pins.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from pydantic import TypeAdapter, ValidationError

from rackproof.inventory import tomltext
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import Expect, InventoryError, Node, SshTarget, parse_inventory
from rackproof.probes.agent import AGENT_PROCESS, AgentCommand
from rackproof.probes.bonding import BONDING, BondInfo
from rackproof.probes.ethtool import ETHTOOL, LinkInfo
from rackproof.probes.fec import FEC
from rackproof.probes.ibdev2netdev import IBDEV2NETDEV, RdmaMap
from rackproof.probes.ip import Interface
from rackproof.probes.jetson import DPKG_VERSIONS, NV_TEGRA_RELEASE
from rackproof.probes.lldp import NEIGHBOURS, Neighbour, newest_by_interface
from rackproof.probes.nvidia_smi import NVIDIA_SMI
from rackproof.probes.sockets import LISTENING, Listener, scope
from rackproof.probes.system import HOSTNAME, LOGIN
from rackproof.nodes.remote import EvidenceLog, NoAnswer, NodeUnreachable, Remote, SshTransport
from rackproof.probes.safetext import one_line
from rackproof.inventory.userinput import read_regular_file

THOR_LANE = re.compile(r"mgbe([0-9]+)_0")
LANES_PER_THOR = 4                  # the chapter: four ports in a row per Thor on the switch
CHAPTER_SWITCH_PORTS = 24
FIRST_PAIR_STEP, SHELF_STEP, LANES_STEP = 1, 7, 8   # thor-1/2 join at step 1, the rest at 7, lanes 2-4 at 8
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
WORKERS = 8
TARGETS_BYTES = 1 << 20   # --ssh-file: a line per node; a bigger file is the wrong file
GUESSED = "guessed"   # the word that marks a value chosen by rule in the written file


class DiscoverError(Exception):
    """What stopped discovery, one line each: a target refused, a node unreachable or unreadable."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass
class Connection:
    """How the controller reaches the nodes, as the [ssh] table will say."""
    user: str | None = None
    config: str | None = None
    identity: str | None = None
    jump: str | None = None
    connect_timeout: float = 5.0
    command_timeout: float = 60.0


@dataclass
class Found:
    """What one node said."""
    target: str
    hostname: str
    login: str
    platform: str                          # "thor" or "spark"
    interfaces: dict[str, Interface]
    links: dict[str, LinkInfo] = field(default_factory=dict)      # Thor lanes
    fec: dict[str, tuple[str, ...]] = field(default_factory=dict)  # cabled lane -> active FEC
    bond: tuple[str, BondInfo] | None = None
    rdma: list[RdmaMap] = field(default_factory=list)              # Spark CX7 pairs
    versions: dict[str, str] = field(default_factory=dict)         # setting of [expect] -> value found
    agent: AgentCommand | None = None
    listening: list[Listener] = field(default_factory=list)
    heard: dict[str, Neighbour] = field(default_factory=dict)     # lane -> the switch's newest LLDP announcement

    def cabled(self) -> list[str]:
        return [lane for lane, link in self.links.items() if link.link_detected]


# --- asking the nodes ---------------------------------------------------------------------------

def targets(given: list[str]) -> list[str]:
    """The ssh targets, each checked as cluster.toml checks a node's `ssh` (no option, no space)."""
    adapter, problems, seen = TypeAdapter(SshTarget), [], set()
    for target in given:
        try:
            adapter.validate_python(target)
        except ValidationError as e:
            problems.append(f"--ssh {one_line(target)!r}: {e.errors()[0]['msg']}")
            continue
        if target.lower() in seen:
            problems.append(f"--ssh {target}: given twice")
        seen.add(target.lower())
    if not given:
        problems.append("no node given: name each with --ssh TARGET (or list them in --ssh-file)")
    if problems:
        raise DiscoverError(problems)
    return given


def read_targets_file(path: str) -> list[str]:
    """One ssh target a line; blank lines and # comments ignored."""
    try:
        raw = read_regular_file(path, TARGETS_BYTES)
        if len(raw) > TARGETS_BYTES:
            raise ValueError(f"larger than {TARGETS_BYTES >> 20} MiB: not a list of nodes")
        text = raw.decode("utf-8")
    except (OSError, ValueError) as e:   # a UnicodeDecodeError is a ValueError
        raise DiscoverError([f"{one_line(path)}: cannot be read: {one_line(getattr(e, 'strerror', None) or str(e))}"]) \
            from None
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def ask(target: str, how: Connection) -> Found:
    """One node's answers; a DiscoverError names the node and what it would not say."""
    transport = SshTransport(target, target, how.user, how.connect_timeout, ssh_config=how.config,
                             identity=how.identity, jump=how.jump)
    # not yet a node of an inventory: its name is the target until it says its host name
    host = Host(Node.model_construct(name=target, ssh=target), Remote(target, transport, EvidenceLog(),
                                                                       how.command_timeout))
    try:
        return _answers(target, host)
    except NodeUnreachable as e:
        raise DiscoverError([f"{one_line(target)}: unreachable: {one_line(e.reason)}"]) from None
    except ProbeFailed as e:
        raise DiscoverError([f"{one_line(target)}: `{one_line(e.result.command)}` {one_line(e.reason)}"]) from None
    except NoAnswer as e:
        raise DiscoverError([one_line(str(e))]) from None
    finally:
        transport.close()


def _answers(target: str, host: Host) -> Found:
    found = Found(target, host.read(HOSTNAME), host.read(LOGIN), _platform(host), host.interfaces())
    if found.platform == "thor":
        lanes = sorted((name for name in found.interfaces if THOR_LANE.fullmatch(name)), key=_lane_number)
        found.links = host.read_each(ETHTOOL, lanes)
        found.fec = {lane: info.active for lane, info in host.read_each(FEC, found.cabled()).items()}
        found.bond = _bond(host, found)
        try:
            found.heard = newest_by_interface(host.read(NEIGHBOURS))
        except ProbeFailed:
            pass   # no lldpd (or closed to the login): the switch's name and ports stay guessed
        release = host.read(NV_TEGRA_RELEASE)
        found.versions["l4t_release"] = f"{release.release}.{release.revision}"
        if jetpack := host.read(DPKG_VERSIONS, packages=["nvidia-jetpack"]).get("nvidia-jetpack"):
            found.versions["jetpack_version"] = jetpack
    else:
        found.rdma = host.read(IBDEV2NETDEV)
        banner = host.read(NVIDIA_SMI)
        found.versions["driver_version"] = banner.driver_version
        if banner.cuda_version:
            found.versions["cuda_version"] = banner.cuda_version
    found.agent = host.read(AGENT_PROCESS, program="thor-tigress-agent")
    found.listening = host.read(LISTENING)
    return found


def _bond(host: Host, found: Found) -> tuple[str, BondInfo] | None:
    """The bond over the cabled lanes: their master, else an addressed interface the bonding
    driver reports on (/proc/net/bonding) with those lanes as members."""
    masters = [found.interfaces[lane].master for lane in found.cabled() if found.interfaces[lane].master]
    addressed = [name for name in found.interfaces if name not in found.links and _ipv4(found, name)]
    for name in dict.fromkeys(masters + addressed):
        try:
            bond = host.read(BONDING, bond=name)
        except ProbeFailed:
            continue   # not a bond
        if {s.name for s in bond.slaves} & set(found.cabled()):
            return name, bond
    return None


def _platform(host: Host) -> str:
    """A Jetson has /etc/nv_tegra_release; a DGX Spark has ConnectX-7 devices (ibdev2netdev)."""
    try:
        host.read(NV_TEGRA_RELEASE)
        return "thor"
    except ProbeFailed:
        pass
    try:
        if host.read(IBDEV2NETDEV):
            return "spark"
    except ProbeFailed:
        pass
    raise DiscoverError([f"{host.name}: neither a Jetson Thor (no /etc/nv_tegra_release) nor a DGX Spark "
                         "(no ConnectX-7 device in ibdev2netdev)"])


def _lane_number(lane: str) -> int:
    return int(THOR_LANE.fullmatch(lane)[1])


def ask_all(given: list[str], how: Connection) -> list[Found]:
    """Every node's answers, in the order given (the order of the inventory: on a Spark pair
    the first is the head); every node that could not be read is named."""
    with ThreadPoolExecutor(min(WORKERS, len(given))) as pool:
        futures = [pool.submit(ask, target, how) for target in given]
    answers, problems = [], []
    for future in futures:
        try:
            answers.append(future.result())
        except DiscoverError as e:
            problems += e.problems
    platforms = Counter(f.platform for f in answers)
    if len(platforms) > 1:
        problems.append("the nodes are not one platform: " + ", ".join(f"{f.target} is a {f.platform}" for f in answers))
    names = Counter(f.hostname.lower() for f in answers)
    problems += [f"{', '.join(f.target for f in answers if f.hostname.lower() == name)} all answer as host "
                 f"{one_line(name)}: one machine given twice?" for name, count in names.items() if count > 1]
    if problems:
        raise DiscoverError(problems)
    return answers


# --- writing cluster.toml -------------------------------------------------------------------------

@dataclass
class Operator:
    """What only the operator knows, from the command line."""
    name: str | None = None
    expect: dict[str, object] = field(default_factory=dict)
    agent_key_env: str | None = None
    agent_key_file: str | None = None


def parse_expect(settings: list[str]) -> dict[str, object]:
    """`SETTING=VALUE` pairs for [expect]; VALUE as the setting takes it: 0.25, true, or text (7.0)."""
    out, problems = {}, []
    for setting in settings:
        name, sep, raw = setting.partition("=")
        if not sep or name not in Expect.model_fields:
            problems.append(f"--expect {one_line(setting)!r}: not SETTING=VALUE with a setting of [expect] "
                            f"(see docs/inventory.md)")
            continue
        try:
            candidates = [tomllib.loads(f"v = {raw}")["v"], raw]
        except tomllib.TOMLDecodeError:
            candidates = [raw]
        errors = []
        for value in candidates:
            try:
                Expect.model_validate({name: value})
            except ValidationError as e:
                errors.append(e.errors()[0]["msg"])   # the first: what the value as written is refused for
                continue
            out[name] = value
            break
        else:
            problems.append(f"--expect {one_line(setting)!r}: {one_line(errors[0])}")
    if problems:
        raise DiscoverError(problems)
    return out


class _Text:
    """Lines of TOML, each value with the comment that says where it came from."""

    def __init__(self):
        self.lines: list[str] = []
        self.guessed = 0   # values (or groups of values) chosen by rule, not read

    def comment(self, *text: str) -> None:
        self.guessed += any(GUESSED in t for t in text)
        self.lines += [f"# {one_line(t)}" if t else "#" for t in text]

    def table(self, header: str) -> None:
        self.lines += ["", header]

    def set(self, key: str, value, how: str = "") -> None:
        self.guessed += GUESSED in how
        self.lines.append(f"{key} = {tomltext.value(value)}" + (f"   # {one_line(how)}" if how else ""))

    def array(self, key: str, items: list[tuple[dict, str]]) -> None:
        self.lines.append(f"{key} = [")
        self.lines += [f"    {tomltext.value(item)}," + (f"   # {one_line(how)}" if how else "") for item, how in items]
        self.lines.append("]")


def inventory_text(answers: list[Found], how: Connection, operator: Operator, when: dt.datetime) -> tuple[str, int]:
    """The cluster.toml, and how many of its values (or groups of them) are guessed."""
    platform = answers[0].platform
    out = _Text()
    out.lines += ["# " + one_line(line) for line in (
        f"Written by `rackproof discover` on {when:%Y-%m-%d %H:%M} from {', '.join(f.target for f in answers)}.",
        "Every value was read from the nodes, except where its line says how it was chosen:",
        f"  \"{GUESSED}\" lines follow the build guide's rules and must be checked against the rack;",
        "  \"given\" lines came from the command line. Then: rackproof inventory check THIS_FILE")]
    if platform == "spark":
        out.comment("Node order is the order the nodes were given: the first is the head (node_0).")
    out.table("[cluster]")
    name = operator.name or _cluster_name(answers)
    out.set("name", name, "given" if operator.name else "guessed from the host names: the report's title and folder")
    out.set("platform", platform)
    logins = Counter(f.login for f in answers)
    login = logins.most_common(1)[0][0]
    out.set("user", login, "" if len(logins) == 1 else
            "the login on most nodes; " + ", ".join(f"{f.hostname} logs in as {f.login}" for f in answers
                                                      if f.login != login))
    if platform == "thor":
        _switch(out, answers)
    _ssh(out, how)
    _expect(out, answers, operator)
    if platform == "thor":
        switch = announced(answers)
        for index, found in enumerate(answers, 1):
            _thor_node(out, index, found, switch)
    else:
        for found in answers:
            _spark_node(out, found)
    _agent_and_engines(out, answers, operator)
    if platform == "spark":
        out.table("# [rollback]")
        out.comment("backup_dir = \"/root/netplan-backup\"   # not learned: where the netplan backups of a change live")
    return "\n".join(out.lines) + "\n", out.guessed


def _cluster_name(answers: list[Found]) -> str:
    prefix = os.path.commonprefix([f.hostname.lower() for f in answers]).rstrip("-_.0123456789")
    return f"{prefix}-cluster" if prefix else f"{answers[0].platform}-cluster"


_NUMBERED = re.compile(r"(.*?)([0-9]{1,4})")


@dataclass(frozen=True)
class Announced:
    """The switch as LLDP showed it on every cabled lane: its name, how it spells port N, and
    the port of each (node, lane)."""
    name: str
    lldp_port: str
    ports: dict[tuple[str, str], int]


def announced(answers: list[Found]) -> Announced | None:
    """None unless every cabled lane heard one switch naming its ports PREFIX<number> alike."""
    heard = [(f.hostname, lane, f.heard.get(lane)) for f in answers for lane in f.cabled()]
    if not heard or any(n is None or not n.system or not n.port_names() for *_, n in heard):
        return None
    spelled = {(node, lane): _NUMBERED.fullmatch(n.port_names()[0]) for node, lane, n in heard}
    if len({n.system for *_, n in heard}) != 1 or not all(spelled.values()) or \
            len({m[1] for m in spelled.values()}) != 1:
        return None
    prefix = next(iter(spelled.values()))[1]
    return Announced(heard[0][2].system, prefix + "{port}", {key: int(m[2]) for key, m in spelled.items()})


def _switch(out: _Text, answers: list[Found]) -> None:
    speeds = Counter(f.links[lane].speed_mbps for f in answers for lane in f.cabled() if f.links[lane].speed_mbps)
    fecs = Counter(f.fec[lane][0] for f in answers for lane in f.cabled() if f.fec.get(lane))
    out.table("[switch]")
    switch = announced(answers)
    if switch:
        out.set("name", switch.name, "announced by the switch over LLDP")
        out.set("lldp_port", switch.lldp_port, "how the switch names its ports in LLDP")
    else:
        out.set("name", "switch", "guessed: a node cannot tell the switch's name without LLDP (give the name on its "
                                  "label)")
    highest = max(switch.ports.values() if switch else
                  (_port(i, lane) for i, f in enumerate(answers, 1) for lane in f.cabled()), default=1)
    out.set("ports", max(CHAPTER_SWITCH_PORTS, highest), "guessed: the chapter's 24-port switch")
    if speeds:
        speed = speeds.most_common(1)[0][0]
        out.set("port_speed_mbps", speed, "the speed the cabled lanes link at (ethtool)" + _odd(
            answers, lambda f, lane: f.links[lane].speed_mbps, speed, "Mb/s"))
    if fecs:
        fec = fecs.most_common(1)[0][0]
        out.set("fec", fec, "the FEC the cabled lanes run (ethtool --show-fec): the switch ports' setting" + _odd(
            answers, lambda f, lane: (f.fec.get(lane) or ("none",))[0], fec, ""))


def _odd(answers: list[Found], value, common, unit: str) -> str:
    odd = [f"{f.hostname} {lane} at {value(f, lane)}{unit}" for f in answers for lane in f.cabled()
           if value(f, lane) != common]
    return f"; not on {', '.join(odd)}: the suite will fail those" if odd else ""


def _port(index: int, lane: str) -> int:
    return (index - 1) * LANES_PER_THOR + _lane_number(lane) + 1


def _ssh(out: _Text, how: Connection) -> None:
    out.table("[ssh]")
    for key, value in (("config", how.config), ("identity", how.identity), ("jump", how.jump)):
        if value:
            out.set(key, value, "given")
    out.set("connect_timeout", how.connect_timeout)
    out.set("command_timeout", how.command_timeout)


def _expect(out: _Text, answers: list[Found], operator: Operator) -> None:
    out.table("[expect]")
    out.comment("The platform's defaults apply to everything not set here (docs/inventory.md).")
    for key, value in operator.expect.items():
        out.set(key, value, "given")
    mtus = Counter(f.interfaces[i].mtu for f in answers for i in _cluster_interfaces(f) if i in f.interfaces)
    if "mtu" not in operator.expect and len(mtus) == 1 and 1500 not in mtus:
        out.set("mtu", next(iter(mtus)), "every cluster interface's MTU")
    elif len(mtus) > 1:
        out.comment("mtu not set: the cluster interfaces differ (" + ", ".join(
            f"{f.hostname} {i} {f.interfaces[i].mtu}" for f in answers for i in _cluster_interfaces(f)
            if i in f.interfaces) + ")")
    for key in dict.fromkeys(k for f in answers for k in f.versions):
        if key in operator.expect:
            continue
        found = Counter(f.versions.get(key, "not installed") for f in answers)
        value, _ = found.most_common(1)[0]
        if len(found) == 1:
            out.comment(f"{key} = {tomltext.value(value)}   # on every node; uncomment to pin this release")
        else:
            out.comment(f"{key}: the nodes differ (" + ", ".join(f"{f.hostname} {f.versions.get(key, 'not installed')}"
                                                                 for f in answers) + "): the suite will name the odd ones")


def _cluster_interfaces(found: Found) -> list[str]:
    if found.platform == "spark":
        return [m.netdev for m in found.rdma if m.up and _ipv4(found, m.netdev)]
    if found.bond:
        return [found.bond[0]]
    return [lane for lane in found.cabled() if _ipv4(found, lane)][:1]


def _ipv4(found: Found, interface: str) -> str | None:
    """The interface's first global IPv4 address with its prefix."""
    for a in found.interfaces[interface].addresses if interface in found.interfaces else ():
        if a.family == "inet" and a.scope == "global":
            return f"{a.local}/{a.prefixlen}"
    return None


def _thor_node(out: _Text, index: int, found: Found, switch: Announced | None) -> None:
    step = FIRST_PAIR_STEP if index <= 2 else SHELF_STEP
    out.table("[[nodes]]")
    out.set("name", found.hostname)
    out.set("ssh", found.target)
    cluster = _cluster_interfaces(found)
    address = _ipv4(found, cluster[0]) if cluster else None
    if address:
        out.set("address", address, f"on {cluster[0]}")
        if not found.bond:
            out.set("interface", cluster[0])
    else:
        out.comment("address: none found on a cabled lane or a bond: give the node its cluster address (nmcli)")
    out.set("joins_at_step", step, "guessed: the chapter's order (thor-1 and thor-2 at step 1, the others at 7)")
    if found.bond:
        name, bond = found.bond
        members = [s.name for s in bond.slaves]
        out.set("bond", {"name": name, "mode": "802.3ad" if "802.3ad" in bond.mode else bond.mode,
                         "miimon": bond.miimon, "xmit_hash_policy": bond.xmit_hash_policy or "layer2",
                         "lanes": members}, "read from /proc/net/bonding")
    cabled = found.cabled()
    if switch:
        out.comment("switch_port: the port the switch announced on each lane (LLDP); cable and joins_at_step guessed:",
                    "labels NODE/N, lanes 2-4 at step 8")
    else:
        out.comment("switch_port, cable and joins_at_step guessed: the chapter's four ports in a row per Thor, in the "
                    "order", "the nodes were given, labels NODE/N, lanes 2-4 at step 8; not verified (no LLDP read)")
    items = []
    for lane in found.links:
        if lane in cabled:
            port = switch.ports[found.hostname, lane] if switch else _port(index, lane)
            items.append(({"name": lane, "switch_port": port,
                           "joins_at_step": step if lane == cabled[0] else LANES_STEP,
                           "cable": f"{found.hostname}/{_lane_number(lane) + 1}"}, ""))
        else:
            items.append(({"name": lane, "connected": False, "joins_at_step": LANES_STEP},
                          "no link when discovered: if a cable is in, fix its link and cable it here"))
    out.array("lanes", items)


def _spark_node(out: _Text, found: Found) -> None:
    out.table("[[nodes]]")
    out.set("name", found.hostname)
    out.set("ssh", found.target)
    items, left_out = [], []
    for m in sorted(found.rdma, key=lambda m: m.netdev.lower()):   # the guide's order: enp1s0f1np1 first
        address = _ipv4(found, m.netdev)
        if m.up and address:
            items.append(({"name": m.netdev, "rdma_device": m.device, "address": address}, ""))
        elif address:
            left_out.append(f"{m.netdev} ({m.device}) has {address} but ibdev2netdev shows it Down: the "
                            "interface-name trap? left out")
    for line in left_out:
        out.comment(line)
    if items:
        out.array("cx7", items)
    else:
        out.comment("cx7: no CX7 interface is Up with an address: cable the pair and address it (netplan)")


def _agent_and_engines(out: _Text, answers: list[Found], operator: Operator) -> None:
    agents = [f for f in answers if f.agent]
    if not agents:
        return
    home = agents[0]
    agent = home.agent
    out.table("[agent]")
    out.set("node", home.hostname, f"runs {agent.args.split()[0]} (pid {agent.pid})")
    out.set("listen", agent.listen or "127.0.0.1:8080", "" if agent.listen else "its default (no --listen)")
    if operator.agent_key_file:
        out.set("key_file", operator.agent_key_file, "given")
    else:
        out.set("key_env", operator.agent_key_env or "THOR_AGENT_KEY",
                "given" if operator.agent_key_env else "not learned: the variable that holds the agent's key at run time")
    for model, target in agent.engines:
        host, _, port = target.rpartition(":")
        node = _node_of(host, home, answers)
        if node is None or not port.isdigit():
            out.comment("", f"engine {model} at {target}: not a node of this cluster; left out")
            continue
        out.table("[[engines]]")
        out.set("model", model, "from the agent's --engine")
        out.set("node", node.hostname)
        if host != node.hostname:
            out.set("host", host)
        out.set("port", int(port))
        _listen(out, node, int(port))


def _node_of(host: str, home: Found, answers: list[Found]) -> Found | None:
    if host.lower() in LOOPBACK_NAMES:
        return home
    for f in answers:
        if host.lower() in (f.hostname.lower(), f.target.lower()):
            return f
        if any(a.local == host for i in f.interfaces.values() for a in i.addresses):
            return f
    return None


def _listen(out: _Text, node: Found, port: int) -> None:
    """Where the engine listens, when that is not its node's cluster address (the default)."""
    cluster = {address.split("/")[0] for i in _cluster_interfaces(node) if (address := _ipv4(node, i))}
    addresses = {listener.local_address for listener in node.listening if listener.port == port}
    if not addresses:
        out.comment(f"nothing listened on port {port} of {node.hostname} when discovered")
    elif any(scope(a) == "any" for a in addresses):
        out.comment(f"listens on every address ({', '.join(sorted(addresses))}); the suite expects its cluster address")
    elif addresses != cluster and len(addresses) == 1:
        (address,) = addresses
        out.set("listen", address, "where it listens (ss)")


def checked(text: str) -> list[str]:
    """inventory check's problems with the text, one a line (none: it loads)."""
    try:
        parse_inventory(text, "the discovered inventory")
    except InventoryError as e:
        return e.problems
    return []
