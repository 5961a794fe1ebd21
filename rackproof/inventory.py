"""cluster.toml -> a typed, validated Inventory (pydantic v2).

A bad inventory is reported as one line per problem, each naming the field path
(`nodes[2].lanes[1].switch_port: port 3 is already used by thor-1 mgbe2_0`), so
that a run stops before any test with everything that needs fixing at once.
"""

from __future__ import annotations

import difflib
import ipaddress
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

Platform = Literal["thor", "spark"]
FecMode = Literal["RS", "BaseR", "Off", "None", "Auto", "LLRS"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
FINISHED = 9  # "The order to build it" has nine steps; no --step means the finished cluster


class InventoryError(Exception):
    """An inventory that cannot be used; `problems` holds one line per mistake."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Expect(Model):
    """What the checks compare against. Platform defaults, overridable per file."""

    lane_speed_mbps: int = 25000
    lane_floor_fraction: float = Field(0.9, gt=0, le=1)   # iperf3 one stream vs lane speed
    bond_floor_fraction: float = Field(0.9, gt=0, le=1)   # -P 4 vs lanes x lane speed
    single_stream_ceiling_lanes: float = Field(1.3, gt=0)  # one stream stays on about one lane
    bond_rejoin_seconds: int = Field(60, ge=1, le=600)     # a lane back up is in the aggregator again
    cx7_speed_mbps: int = 200000
    roce_floor_gbps: float = 180.0
    nccl_test: str = "all_gather_perf"
    nccl_busbw_floor_gbs: float = 21.875
    run_nccl: bool = False
    mtu: int | None = None
    l4t_release: str | None = None        # pin, e.g. "R38.2.0"
    jetpack_version: str | None = None    # pin, e.g. "7.0"
    tensorrt_version: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    dgx_os_version: str | None = None
    remote_tokens_ratio_floor: float = Field(0.9, gt=0, le=1)
    all_pairs_max_nodes: int = Field(6, ge=2)  # above this, a covering set of pairs
    iperf_seconds: int = Field(5, ge=1, le=60)


PLATFORM_DEFAULTS: dict[str, dict] = {
    "thor": {"lane_speed_mbps": 25000},
    "spark": {"lane_speed_mbps": 200000, "run_nccl": True},
}


class Switch(Model):
    name: str = "switch"
    ports: int = Field(24, ge=1)
    port_speed_mbps: int = 25000
    fec: FecMode = "RS"


class Lane(Model):
    name: str
    switch_port: int | None = None
    connected: bool = True
    joins_at_step: int = Field(1, ge=1, le=FINISHED)
    cable: str | None = None   # the label on both ends of the cable


class Bond(Model):
    name: str = "bond0"
    mode: Literal["802.3ad"] = "802.3ad"
    xmit_hash_policy: str = "layer3+4"
    miimon: int = Field(100, ge=1)
    lanes: list[str]
    joins_at_step: int = Field(8, ge=1, le=FINISHED)


class Cx7Interface(Model):
    """One logical interface of a Spark's cabled QSFP port, with its RoCE device."""

    name: str
    rdma_device: str
    address: str

    @field_validator("address")
    @classmethod
    def _interface_address(cls, v: str) -> str:
        return _check_interface_address(v)


class Node(Model):
    name: str
    ssh: str | None = None          # what the controller connects to; defaults to name
    address: str | None = None      # cluster address with prefix, e.g. 10.10.0.11/24
    interface: str | None = None    # where that address lives when not bonded
    joins_at_step: int = Field(1, ge=1, le=FINISHED)
    lanes: list[Lane] = []
    bond: Bond | None = None
    cx7: list[Cx7Interface] = []
    local: bool = False             # the controller is this node: run commands locally

    @property
    def ssh_name(self) -> str:
        return self.ssh or self.name

    @property
    def ip(self) -> str | None:
        return self.address.split("/")[0] if self.address else None

    @property
    def prefixlen(self) -> int | None:
        return int(self.address.split("/")[1]) if self.address else None

    def lane(self, name: str) -> Lane:
        return next(lane for lane in self.lanes if lane.name == name)

    @field_validator("address")
    @classmethod
    def _interface_address(cls, v: str | None) -> str | None:
        return None if v is None else _check_interface_address(v)


class Engine(Model):
    """One `--engine MODEL=HOST:PORT` of the agent, or a reference engine (agent=false)."""

    model: str
    node: str
    port: int = Field(ge=1, le=65535)
    host: str | None = None   # as written on the agent's command line; default: the node's name
    listen: str | None = None  # address the server must listen on; default: the node's cluster address
    agent: bool = True         # routed by the agent; false: a reference run (e.g. local tokens/s)
    tokens_per_s_floor: float | None = None


class Agent(Model):
    node: str
    listen: str = "127.0.0.1:8080"
    key_env: str | None = None
    key_file: str | None = None
    process: str = "thor-tigress-agent"

    @model_validator(mode="after")
    def _one_key_source(self) -> "Agent":
        if bool(self.key_env) == bool(self.key_file):
            raise ValueError("give exactly one of key_env or key_file (the key itself never goes in the TOML)")
        return self

    @property
    def host(self) -> str:
        return self.listen.rsplit(":", 1)[0]

    @property
    def port(self) -> int:
        return int(self.listen.rsplit(":", 1)[1])


class SshSettings(Model):
    config: str | None = None          # an ssh_config file; default ~/.ssh/config
    identity: str | None = None
    jump: str | None = None            # a jump host, as ssh -J takes it
    connect_timeout: float = Field(5.0, gt=0)
    command_timeout: float = Field(60.0, gt=0)


class Cluster(Model):
    name: str
    platform: Platform
    user: str
    sim_scale: float | None = None  # set by the simulated rack: its lanes run at rate x scale


class Inventory(Model):
    cluster: Cluster
    switch: Switch | None = None
    ssh: SshSettings = SshSettings()
    expect: Expect = Expect()
    nodes: list[Node] = Field(min_length=1)
    agent: Agent | None = None
    engines: list[Engine] = []

    @model_validator(mode="before")
    @classmethod
    def _platform_defaults(cls, data):
        if isinstance(data, dict):
            platform = (data.get("cluster") or {}).get("platform")
            expect = data.get("expect") or {}
            if isinstance(expect, dict):
                data = {**data, "expect": {**PLATFORM_DEFAULTS.get(platform, {}), **expect}}
        return data

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    @property
    def rate_scale(self) -> float:
        """Rates are expected at this fraction of the hardware's (a simulated rack runs slower)."""
        return self.cluster.sim_scale or 1.0

    def lane_bps(self) -> float:
        return self.expect.lane_speed_mbps * 1e6 * self.rate_scale

    @property
    def head(self) -> Node:
        """node_0: the first node (Cordatus: the head serves the API; workers follow in order)."""
        return self.nodes[0]

    def nodes_at(self, step: int) -> list[Node]:
        return [n for n in self.nodes if n.joins_at_step <= step]

    def engine_node(self, engine: Engine) -> Node:
        return self.node(engine.node)

    def engine_flag_host(self, engine: Engine) -> str:
        """HOST of the agent's `--engine MODEL=HOST:PORT`: as written, else 127.0.0.1 on the
        agent's own node (the chapter's rule), else the node's name."""
        if engine.host:
            return engine.host
        return "127.0.0.1" if self.agent and engine.node == self.agent.node else engine.node

    def engine_listen(self, engine: Engine) -> str:
        """The address the engine's server must listen on: a model on the agent's node that the
        agent reaches at 127.0.0.1 listens there; every other one on its node's cluster address."""
        if engine.listen:
            return engine.listen
        if self.engine_flag_host(engine) in LOOPBACK:
            return "127.0.0.1"
        return self.engine_node(engine).ip

    def engine_url(self, engine: Engine) -> str:
        """Where the engine answers, as seen from the agent's node."""
        return f"http://{self.engine_listen(engine)}:{engine.port}"

    def lanes_at(self, step: int) -> list[tuple[Node, Lane]]:
        """The lanes that are cabled by `step`, of the nodes that have joined by then."""
        return [(n, lane) for n in self.nodes_at(step) for lane in n.lanes
                if lane.connected and lane.joins_at_step <= step]

    def ordered_pairs_at(self, step: int) -> list[tuple[Node, Node]]:
        nodes = self.nodes_at(step)
        return [(a, b) for a in nodes for b in nodes if a is not b]

    def bonded(self, node: Node, step: int) -> bool:
        return node.bond is not None and node.bond.joins_at_step <= step

    def cluster_interface(self, node: Node, step: int) -> str | None:
        """Where the node's cluster address lives at `step`: the bond once it is built,
        else the given interface, else its first cabled lane (the chapter's nmcli line)."""
        if self.bonded(node, step):
            return node.bond.name
        if node.interface:
            return node.interface
        lanes = [lane.name for lane in node.lanes if lane.connected and lane.joins_at_step <= step]
        return lanes[0] if lanes else None

    def where(self, node: Node, lane: Lane | None = None) -> str:
        """How a failure message names a place: node, interface, switch port, cable."""
        if lane is None:
            return node.name
        parts = []
        if lane.switch_port is not None:
            switch = f"{self.switch.name} " if self.switch else ""
            parts.append(f"switch {switch}port {lane.switch_port}")
        if lane.cable:
            parts.append(f"cable {lane.cable}")
        return f"{node.name} {lane.name}" + (f" ({', '.join(parts)})" if parts else "")


def _check_interface_address(v: str) -> str:
    try:
        iface = ipaddress.ip_interface(v)
    except ValueError:
        raise ValueError(f"{v!r} is not an address with a prefix such as 10.10.0.11/24") from None
    if "/" not in v:
        raise ValueError(f"{v!r} has no prefix length; write it as {v}/24")
    return str(iface)


class _Parts:
    """The parts of an inventory that validated on their own, so that rules spanning
    fields are checked (and reported) even when another field is broken."""

    def __init__(self, data: dict):
        def part(model, value):
            try:
                return model.model_validate(value)
            except ValidationError:
                return None

        cluster = part(Cluster, data.get("cluster"))
        self.platform = cluster.platform if cluster else None
        self.switch = part(Switch, data["switch"]) if "switch" in data else None
        raw_nodes = data.get("nodes") if isinstance(data.get("nodes"), list) else []
        self.nodes = [(i, n) for i, n in enumerate(part(Node, raw) for raw in raw_nodes) if n]
        # a node that failed validation still exists: don't report its references as dangling
        self.node_names = {raw.get("name") for raw in raw_nodes if isinstance(raw, dict)}
        self.agent = part(Agent, data["agent"]) if "agent" in data else None
        raw_engines = data.get("engines") if isinstance(data.get("engines"), list) else []
        self.engines = [(k, e) for k, e in enumerate(part(Engine, raw) for raw in raw_engines) if e]


def _cross_check(inv: _Parts):
    """Rules that span fields; yields (field path, message)."""
    names: dict[str, int] = {}
    for i, node in inv.nodes:
        if node.name in names:
            yield f"nodes[{i}].name", f"{node.name} is already nodes[{names[node.name]}]"
        names.setdefault(node.name, i)

    addresses: dict[str, str] = {}
    ports: dict[int, str] = {}
    for i, node in inv.nodes:
        for label, addr in [(f"nodes[{i}].address", node.address)] + [
            (f"nodes[{i}].cx7[{k}].address", c.address) for k, c in enumerate(node.cx7)
        ]:
            if addr is None:
                continue
            ip = addr.split("/")[0]
            if ip in addresses:
                yield label, f"{ip} is already used by {addresses[ip]}"
            addresses.setdefault(ip, node.name)
        lane_names = [lane.name for lane in node.lanes]
        for k, lane in enumerate(node.lanes):
            path = f"nodes[{i}].lanes[{k}]"
            if lane_names.index(lane.name) != k:
                yield f"{path}.name", f"{node.name} already has a lane named {lane.name}"
            if lane.switch_port is None:
                if lane.connected:
                    yield f"{path}.switch_port", f"{node.name} {lane.name} is connected but has no switch port"
                continue
            if inv.switch and not 1 <= lane.switch_port <= inv.switch.ports:
                yield f"{path}.switch_port", (
                    f"port {lane.switch_port} does not exist on {inv.switch.name} (ports 1-{inv.switch.ports})")
            if lane.switch_port in ports:
                yield f"{path}.switch_port", f"port {lane.switch_port} is already used by {ports[lane.switch_port]}"
            ports.setdefault(lane.switch_port, f"{node.name} {lane.name}")
        if node.bond:
            for k, member in enumerate(node.bond.lanes):
                if member not in lane_names:
                    yield f"nodes[{i}].bond.lanes[{k}]", f"{node.name} has no lane named {member}"
        if inv.platform == "thor":
            if node.address is None:
                yield f"nodes[{i}].address", f"{node.name} needs its cluster address, e.g. 10.10.0.1{i + 1}/24"
            if node.lanes and inv.switch is None:
                yield "switch", "a Thor shelf with lanes needs a [switch] table (its FEC mode and port speed)"
            if not node.bond and not node.interface and not node.lanes:
                yield f"nodes[{i}]", f"{node.name} has no lanes, bond or interface to carry its cluster address"
        if inv.platform == "spark" and len(node.cx7) not in (0, 2):
            yield f"nodes[{i}].cx7", (
                f"{node.name} lists {len(node.cx7)} CX7 interfaces; a cabled QSFP port has two logical interfaces")

    if inv.agent and inv.agent.node not in inv.node_names:
        yield "agent.node", f"no node named {inv.agent.node}"
    seen: dict[str, int] = {}
    for k, engine in inv.engines:
        if engine.node not in inv.node_names:
            yield f"engines[{k}].node", f"no node named {engine.node}"
        if engine.agent:
            if engine.model in seen:
                yield f"engines[{k}].model", f"{engine.model} is already routed by engines[{seen[engine.model]}]"
            seen.setdefault(engine.model, k)
    if not inv.agent and any(e.agent for _, e in inv.engines):
        yield "engines", "engines routed by an agent need an [agent] table"


def _error_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problems(err: ValidationError) -> list[str]:
    errors = err.errors()
    # a typo'd key is both an unknown field and a missing one: report it once, as the typo
    missing = {(e["loc"][:-1], e["loc"][-1]) for e in errors if e["type"] == "missing"}
    typos = {}
    for e in errors:
        if e["type"] == "extra_forbidden":
            parent = e["loc"][:-1]
            close = difflib.get_close_matches(str(e["loc"][-1]), [m for p, m in missing if p == parent], n=1)
            if close:
                typos[e["loc"]] = close[0]
    meant = {(loc[:-1], name) for loc, name in typos.items()}
    lines = []
    for e in errors:
        loc = e["loc"]
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "missing":
            if (loc[:-1], loc[-1]) in meant:
                continue
            msg = "required field is missing"
        elif e["type"] == "extra_forbidden":
            msg = f"unknown field; did you mean {typos[loc]!r}?" if loc in typos else "unknown field (a typo?)"
        lines.append(f"{_error_path(loc) or '(top level)'}: {msg}")
    return lines


def parse_inventory(text: str, source: str = "cluster.toml") -> Inventory:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InventoryError(source, [f"not valid TOML: {e}"]) from None
    problems = [f"{path}: {msg}" for path, msg in _cross_check(_Parts(data))]
    try:
        inventory = Inventory.model_validate(data)
    except ValidationError as e:
        problems = _problems(e) + problems
    if problems:
        raise InventoryError(source, problems)
    return inventory


def load_inventory(path: str | Path) -> Inventory:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise InventoryError(str(path), [f"cannot read the inventory: {e.strerror}"]) from None
    return parse_inventory(text, str(path))
