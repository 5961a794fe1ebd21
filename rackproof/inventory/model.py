"""cluster.toml -> a typed, validated Inventory (pydantic v2, strict).

A bad inventory is reported as one line per problem, each naming the field path
(`nodes[2].lanes[1].switch_port: port 3 is already used by thor-1 mgbe2_0`), so
that a run stops before any test with everything that needs fixing at once.

Nothing is coerced: "24" is not 24 and "no" is not false (an integer may stand for a
number with a fraction). Every floor, fraction, rate, timeout and count is finite and in a
sensible range, so that no setting makes a check that cannot fail. A name that reaches a
command line (host, interface, ssh target) cannot be read as an option. A problem line never
holds a raw control character and never shows the value given for the access key. Any input
gives an Inventory or an InventoryError, nothing else. docs/inventory.md has every rule and
its reason.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from rackproof.inventory.ics import CalendarError, parse_calendar
from rackproof.inventory.references import (BOND_FLOOR, FEC_PER_GB, FIRST_TOKEN, FIRST_TOKEN_WAIT_FACTOR, FIRST_TOKEN_WAIT_MIN_S,
                         LANE_FLOOR, LANE_RATE, MAX_GBPS, NCCL_FLOOR, ONE_STREAM_LANES, RDMA_LATENCY, REMOTE_RATIO,
                         ROCE_FLOOR, Setting)
from rackproof.inventory.references import ROCE_LINK_FLOOR   # issue 43: per CX7 link
from rackproof.inventory.references import KERNEL_LOG_WINDOW   # issue 43: the kernel's own reports
from rackproof.probes.safetext import one_line
from rackproof.inventory.userinput import read_regular_file

Platform = Literal["thor", "spark"]
FecMode = Literal["RS", "BaseR", "Off", "None", "Auto", "LLRS"]
HashPolicy = Literal["layer2", "layer2+3", "layer3+4", "encap2+3", "encap3+4", "vlan+srcmac"]
NcclTest = Literal["all_reduce_perf", "all_gather_perf", "broadcast_perf", "reduce_perf", "reduce_scatter_perf",
                   "alltoall_perf", "scatter_perf", "gather_perf", "sendrecv_perf", "hypercube_perf"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
FINISHED = 9  # "The order to build it" has nine steps; no --step means the finished cluster

MAX_BYTES = 1 << 20     # an inventory is a few kilobytes; a bigger file is the wrong file
MAX_DEPTH = 32          # tables and arrays within one another; an inventory needs 5
MAX_PROBLEMS = 100      # problem lines shown; the rest are counted
MAX_NODES = 256
MAX_LANES = 16          # per node
MAX_PORTS = 1024        # on one switch
MAX_MBPS = int(MAX_GBPS * 1000)   # 1.6 Tb/s (references.MAX_GBPS)
MAX_HOLDERS = 1000      # slice holders: a class, a lab
MAX_RESERVATIONS = 10_000
MAX_CONNECT_SECONDS = 300


class InventoryError(Exception):
    """An inventory that cannot be used; `problems` holds one line per mistake, each one line
    of printable text (control characters escaped)."""

    def __init__(self, source: str, problems: list[str]):
        self.source = printable(str(source))
        self.problems = [printable(p) for p in problems]
        super().__init__("\n".join(f"{self.source}: {p}" for p in self.problems))


def printable(text: str, limit: int = 1000) -> str:
    """One line with every control character escaped (\\x1b, \\x0a, \\u2028); at most `limit` characters."""
    text = one_line(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _show(value: str, limit: int = 40) -> str:
    """A value quoted for a problem line, escaped and cut short."""
    return repr(value[:limit]) + ("…" if len(value) > limit else "")


# --- field types: strings -------------------------------------------------------------------

def _text(what: str, max_length: int, pattern: str | None = None, *, spaces: bool = False, forbid: str = "",
          secret: bool = False):
    """A check for a string: 1..max_length printable characters (spaces only if `spaces`), none
    of `forbid`, not beginning with '-' (a command would read it as an option), matching
    `pattern` when given. `what` describes the string in the problem line; a `secret` value is
    never shown in it."""
    regex = re.compile(pattern) if pattern else None

    def unfit(c: str) -> bool:
        return not c.isprintable() or (c.isspace() and not spaces) or c in forbid

    def check(v: str) -> str:
        shown = "the value" if secret else _show(v)
        if not v:
            raise ValueError(f"is empty; give {what}")
        if v.startswith("-"):
            raise ValueError(f"{shown} begins with '-', which a command would read as an option; give {what}")
        if len(v) > max_length:
            raise ValueError(f"is {len(v)} characters long (at most {max_length}); give {what}")
        if not (v.isprintable() and (spaces or " " not in v)) or forbid and any(c in v for c in forbid):
            bad = next(c for c in v if unfit(c))
            raise ValueError(f"{shown} contains {bad!r}; give {what}")
        if regex and not regex.fullmatch(v):
            raise ValueError(f"{shown} is not {what}")
        return v

    return check


_DNS_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_hostname = _text("a hostname (RFC 1123: letters, digits and '-' in dot-separated labels of 1-63 characters, "
                  "none beginning or ending with '-')", 253, rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")
_folder_name = _text("one folder name: 1-64 of letters, digits, '.', '_', '-', beginning with a letter or digit",
                     64, r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _cluster_name(v: str) -> str:
    v = _folder_name(v)
    if ".." in v:
        raise ValueError(f"{_show(v)} contains '..'; the name becomes a folder in reports/")
    return v


_KEY_BELONGS = ("the access key belongs in the environment (key_env names the variable, e.g. "
                "key_env = \"THOR_AGENT_KEY\") or in a file (key_file), never in cluster.toml; the value is not shown")


def _looks_like_a_key(v: str) -> bool:
    """Long, or letters and digits mixed the way generated keys are (variable names rarely are)."""
    digits = sum(c.isdigit() for c in v)
    mixed_case = any(c.islower() for c in v) and any(c.isupper() for c in v)
    return (len(v) > 64 or (len(v) >= 20 and digits > 0 and mixed_case)
            or (len(v) >= 24 and digits >= 6 and "_" not in v))


def _env_name(v: str) -> str:
    # the value is never shown: it may be the key itself, pasted where the variable's name belongs
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
        raise ValueError(f"is not the name of an environment variable ([A-Za-z_][A-Za-z0-9_]*); {_KEY_BELONGS}")
    if _looks_like_a_key(v):
        raise ValueError(f"looks like an access key, not the name of an environment variable; {_KEY_BELONGS}")
    return v


_key_path = _text("a file path", 4096, spaces=True, secret=True)


def _key_file(v: str) -> str:
    if _looks_like_a_key(v) and not any(c in v for c in "/.~"):
        raise ValueError(f"looks like an access key, not the path of a file that holds it; {_KEY_BELONGS}")
    return _key_path(v)


def _address(v: str, with_prefix: bool = False) -> str:
    """An IP address (with its prefix length when `with_prefix`), normalised; IPv4-mapped IPv6
    and zones are refused, so that one address has one spelling."""
    try:
        ip = None if "%" in v else ipaddress.ip_interface(v) if with_prefix else ipaddress.ip_address(v)
    except ValueError:
        ip = None
    if ip is None:
        raise ValueError(f"{_show(v)} is not an address such as 10.10.0.11{'/24' if with_prefix else ''}")
    plain = ip.ip if with_prefix else ip
    if plain.version == 6 and plain.ipv4_mapped:
        raise ValueError(f"{_show(v)} is an IPv4-mapped IPv6 address; write the IPv4 address {plain.ipv4_mapped}")
    return str(ip)


def _interface_address(v: str) -> str:
    normal = _address(v, with_prefix=True)
    if "/" not in v:
        raise ValueError(f"{_show(v)} has no prefix length; write it as {v}/24")
    interface = ipaddress.ip_interface(normal)
    ip, network = interface.ip, interface.network
    if ip.is_loopback or ip.is_unspecified or ip.is_multicast:
        raise ValueError(f"{_show(v)} is a loopback, unspecified or multicast address, not a cluster address")
    if network.prefixlen == 0:   # every address: the default route's, no cluster's
        raise ValueError(f"{normal} is in the network of every address (/0): give the cluster network's prefix, "
                         f"such as /24")
    # a /31 or /32 (/127, /128) holds no other node; a network's first address names the network
    # itself and its last (IPv4) is its broadcast: no node can answer at either
    if network.max_prefixlen - network.prefixlen < 2:
        raise ValueError(f"{normal} is a network of {network.num_addresses} address"
                         f"{'es' if network.num_addresses > 1 else ''}: no room for the other nodes; "
                         f"give the cluster network's prefix, such as /24")
    if ip == network.network_address:
        raise ValueError(f"{normal} is the address of the network {network} itself, not a node's")
    if ip.version == 4 and ip == network.broadcast_address:
        raise ValueError(f"{normal} is the broadcast address of {network}, not a node's")
    return normal


def _host(v: str) -> str:
    """A hostname, an IPv4 address or an IPv6 address."""
    return _address(v) if ":" in v else _hostname(v)


def _host_port(v: str) -> str:
    """HOST:PORT, an IPv6 host in brackets ([::1]:8080)."""
    host, _, port = v.rpartition(":")
    if not re.fullmatch(r"[0-9]{1,5}", port) or not 1 <= int(port) <= 65535:
        raise ValueError(f"{_show(v)} is not HOST:PORT with a port 1-65535, such as 127.0.0.1:8080")
    if host.startswith("[") and host.endswith("]") and ":" in host:
        _address(host[1:-1])
    elif ":" in host:
        raise ValueError(f"{_show(v)}: write an IPv6 host in brackets, such as [::1]:8080")
    else:
        _hostname(host)
    return v


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as e:
        raise ValueError(f"not a regular expression ({e})") from None
    return pattern


def _str(check):
    return Annotated[str, AfterValidator(check)]


Hostname = _str(_hostname)
InterfaceName = _str(_text("a Linux interface name (1-15 of letters, digits, '_', '.', '-', beginning with a "
                           "letter, digit or '_')", 15, r"[A-Za-z0-9_][A-Za-z0-9_.-]*"))
DeviceName = _str(_text("an RDMA device name (letters, digits, '_', '.', '-')", 63, r"[A-Za-z0-9_][A-Za-z0-9_.-]*"))
LoginName = _str(_text("a login name (1-32 of letters, digits, '_', '.', '-', beginning with a letter or '_')", 32,
                       r"[A-Za-z_][A-Za-z0-9_.-]*"))
ProcessName = _str(_text("a program name (letters, digits, '_', '.', '+', '-'; no '/')", 64,
                         r"[A-Za-z0-9_][A-Za-z0-9_.+-]*"))
ClusterName = _str(_cluster_name)
Label = _str(_text("a label of printable characters", 64, spaces=True))
KernelLinePattern = Annotated[str, AfterValidator(_text("a regular expression of printable characters", 200,
                                                      spaces=True)), AfterValidator(_compiles)]
ModelName = _str(_text("a model name without spaces or '='", 128, forbid="="))
SshTarget = _str(_text("an ssh destination without spaces (a host, user@host, host:port or a Host of your "
                       "ssh config)", 255))
FilePath = _str(_text("a file path", 4096, spaces=True))
# docker's reference grammar, simplified: [registry[:port]/]path[:tag][@sha256:digest], lower-case path
ImageName = _str(_text("a container image (such as nvcr.io/nvidia/vllm:25.09-py3: lower-case path, optional :tag "
                       "and @sha256:digest)", 255,
                       r"(?:[A-Za-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*"
                       r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?"))
# how a switch names port N in LLDP, "{port}" standing for the number: swp{port}, Ethernet{port}, sfp28-{port}
PortName = _str(_text("a port name with {port} once where the number goes (swp{port}, Ethernet1/{port}, sfp28-{port}), "
                      "no other braces", 64, r"[^{}]*\{port\}[^{}]*", spaces=True))
NodeFolder = _str(_text("an absolute folder on the nodes, without spaces", 1024, r"/[A-Za-z0-9_.@+/-]*"))
KeyFile = _str(_key_file)
EnvName = _str(_env_name)
Host = _str(_host)
HostPort = _str(_host_port)
IpAddress = _str(_address)
InterfaceAddress = _str(_interface_address)

# --- field types: numbers (an integer is accepted where a number with a fraction is expected) ---


def _positive(le: float):
    """A finite number > 0 and <= le: a floor, a rate, a time."""
    return Annotated[float, Field(gt=0, le=le, allow_inf_nan=False)]


Fraction = _positive(1)
_PINNED = "the version every node must run"
Mbps = Annotated[int, Field(ge=1, le=MAX_MBPS)]
Step = Annotated[int, Field(ge=1, le=FINISHED)]
SwitchPort = Annotated[int, Field(ge=1, le=MAX_PORTS)]
TcpPort = Annotated[int, Field(ge=1, le=65535)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _bound(setting: Setting):
    """An [expect] field a bound follows from, made from its setting (references.SETTINGS): its
    default, range and docs line are stated there once."""
    return Field(setting.default, gt=setting.gt, ge=setting.ge, lt=setting.lt, le=setting.le, allow_inf_nan=False,
                 description=setting.doc, json_schema_extra={"setting": setting.name, "unit": setting.unit,
                                                             "none": setting.none})


def _about(default, line: str, *, none: str = "", also: str = ""):
    """Any other [expect] field: its default and its line in docs/inventory.md (`none`: what no
    value means; `also`: a rule beyond its range)."""
    return Field(default, description=line, json_schema_extra={"none": none, "also": also})


class Expect(Model):
    """What the checks compare against. Platform defaults, overridable per file. The fields a
    bound follows from are made from references.SETTINGS; docs/inventory.md's [expect] section
    is written from this class (rackproof/inventory/docs.py)."""

    lane_speed_mbps: Mbps = _about(25000, "ethtool speed of a lane")
    lane_rate_gbps: float | None = _bound(LANE_RATE)
    lane_floor_fraction: float = _bound(LANE_FLOOR)
    bond_floor_fraction: float = _bound(BOND_FLOOR)
    single_stream_ceiling_lanes: float = _bound(ONE_STREAM_LANES)
    bond_rejoin_seconds: Annotated[int, Field(ge=1, le=600)] = _about(
        60, "a lane back up is in the aggregator again within this many seconds")
    cx7_speed_mbps: Mbps = _about(200000, "ethtool speed of a CX7 interface")
    roce_floor_gbps: float = _bound(ROCE_FLOOR)
    roce_link_floor_gbps: float = _bound(ROCE_LINK_FLOOR)
    rdma_latency_max_us: float = _bound(RDMA_LATENCY)
    nccl_test: NcclTest = _about("all_gather_perf", "the nccl-tests program run (it is a command: only these names)")
    nccl_busbw_floor_gbs: float = _bound(NCCL_FLOOR)
    run_nccl: bool = _about(False, "run `nccl_test` over the nodes' CX7 interfaces")
    # NCCL's settings for the cluster's jobs (issue 43): the NCCL check's run passes them to every rank
    nccl_ib_hca: Label | None = _about(
        None, "NCCL_IB_HCA of the cluster's NCCL jobs, passed to every rank of the NCCL check's run; it must name "
        "both PCIe functions of each cabled CX7 port (e.g. `rocep1s0f1,roceP2p1s0f1`)",
        none="none (NCCL takes every active RoCE device)")
    nccl_ib_gid_index: Annotated[int, Field(ge=0, le=255)] | None = _about(
        None, "NCCL_IB_GID_INDEX of the cluster's NCCL jobs, passed like `nccl_ib_hca`",
        none="none (NCCL picks the RoCE v2 GID itself)")
    mtu: Annotated[int, Field(ge=68, le=65535)] | None = _about(None, "the same MTU everywhere", none="none (not checked)")
    l4t_release: Label | None = _about(None, _PINNED, none="none (not pinned)")   # e.g. "R38.2.0"
    jetpack_version: Label | None = _about(None, _PINNED, none="none (not pinned)")   # e.g. "7.0"
    tensorrt_version: Label | None = _about(None, _PINNED, none="none (not pinned)")
    driver_version: Label | None = _about(None, _PINNED, none="none (not pinned)")
    cuda_version: Label | None = _about(None, _PINNED, none="none (not pinned)")
    dgx_os_version: Label | None = _about(None, _PINNED, none="none (not pinned)")
    gpus_per_node: Annotated[int, Field(ge=1, le=16)] = _about(
        1, "GPUs each node's driver must see (`nvidia-smi --query-gpu`; \"No devices were found\" is none)")
    gpu_name: Label | None = _about(None, "the name nvidia-smi gives each of them")
    power_mode: Label | None = _about(
        None, "the nvpmodel power mode every Thor must be in (`nvpmodel -q`), e.g. `MAXN`; unset, the odd Thor is named",
        none="none (the mode most Thors are in)")
    clocks_locked: bool = _about(
        False, "every Thor's CPU and GPU clocks locked (`sudo -n jetson_clocks --show`: MinFreq = MaxFreq on every "
        "online CPU and every GPU clock domain, a Thor's `gpu-gpc-0` and `gpu-nvd-0`; CPUs the power mode took "
        "offline are left out and named; the login needs that sudo rule: `rackproof sudoers` writes it)")
    time_source: Literal["server", "local"] = _about(
        "server", "where every node's chrony takes its time: `server`, an NTP server or a reference clock; `local`, "
        "its own clock (chrony's `local` directive, a cluster without a time server on purpose). With `server`, a "
        "node that follows its local reference (`chronyc tracking`: Reference ID 7F7F0101, as chrony does when its "
        "servers are unreachable) is not synchronised to a time server and fails the clock check")
    remote_tokens_ratio_floor: float = _bound(REMOTE_RATIO)
    # the kernel's own reports (issue 43)
    kernel_log_window_hours: float = _bound(KERNEL_LOG_WINDOW)
    kernel_log_allow: list[KernelLinePattern] | None = _about(
        None, "kernel log lines known to be harmless on this cluster: regular expressions (Python's); a line whose "
        "message one of them matches (re.search) is not reported by the kernel log check, e.g. "
        "`['pcieport 0000:00:01.0: AER: Corrected']`", none="none (every reported line fails)")
    all_pairs_max_nodes: Annotated[int, Field(ge=2, le=MAX_NODES)] = _about(
        6, "above this many nodes, throughput is measured in one round (each node to the next: every node sends "
        "once and receives once) instead of every ordered pair in n-1 rounds")
    iperf_seconds: Annotated[int, Field(ge=1, le=60)] = _about(
        5, "measured length of each iperf3 run; one second of warm-up before it is sent but not counted (`-O 1`: "
        "TCP's slow start)")
    fec_corrected_per_gb: float = _bound(FEC_PER_GB)
    first_token_seconds: float = _bound(FIRST_TOKEN)
    first_token_wait_seconds: Annotated[float, Field(gt=0, le=600, allow_inf_nan=False)] | None = _about(
        None, "how long a streamed chat may stay silent, the first token included: a later first token is measured "
        "and judged against the bound; an engine that sends none by then \"accepts requests but does not generate\"",
        none=f"{FIRST_TOKEN_WAIT_FACTOR} x `first_token_seconds`, at least {FIRST_TOKEN_WAIT_MIN_S:g}",
        also="above `first_token_seconds`")

    @model_validator(mode="after")
    def _waits_beyond_the_bound(self) -> "Expect":
        if self.first_token_wait_seconds is not None and self.first_token_wait_seconds <= self.first_token_seconds:
            raise ValueError(f"first_token_wait_seconds ({self.first_token_wait_seconds:g}) must be above "
                             f"first_token_seconds ({self.first_token_seconds:g}): a first token later than the "
                             "bound is measured only if the chat waits for it")
        return self


PLATFORM_DEFAULTS: dict[str, dict] = {
    "thor": {"lane_speed_mbps": 25000, "gpu_name": "NVIDIA Thor"},
    "spark": {"lane_speed_mbps": 200000, "run_nccl": True, "gpu_name": "NVIDIA GB10"},
}


class Switch(Model):
    name: Label = "switch"
    ports: SwitchPort = 24
    port_speed_mbps: Mbps = 25000
    fec: FecMode = "RS"
    # its name and port names as it announces them in LLDP (chassis name; port id or description)
    lldp_port: PortName = "swp{port}"

    def port_name(self, port: int) -> str:
        return self.lldp_port.replace("{port}", str(port))

    def port_number(self, name: str) -> int | None:
        """The number of the port LLDP calls `name`, if it is named as lldp_port says."""
        prefix, _, suffix = self.lldp_port.partition("{port}")
        number = name.removeprefix(prefix).removesuffix(suffix) if name.startswith(prefix) and \
            name.endswith(suffix) and len(name) > len(prefix) + len(suffix) else ""
        return int(number) if number.isascii() and number.isdigit() and len(number) <= 6 else None


class Lane(Model):
    name: InterfaceName
    switch_port: SwitchPort | None = None
    connected: bool = True
    joins_at_step: Step = 1
    cable: Label | None = None   # the label on both ends of the cable


class Bond(Model):
    name: InterfaceName = "bond0"
    mode: Literal["802.3ad"] = "802.3ad"
    xmit_hash_policy: HashPolicy = "layer3+4"
    miimon: Annotated[int, Field(ge=1, le=10_000)] = 100   # milliseconds
    lanes: list[InterfaceName] = Field(min_length=1, max_length=MAX_LANES)
    joins_at_step: Step = 8


class Cx7Interface(Model):
    """One logical interface of a Spark's cabled QSFP port, with its RoCE device."""

    name: InterfaceName
    rdma_device: DeviceName
    address: InterfaceAddress

    @property
    def ip(self) -> str:
        return self.address.split("/")[0]


class Node(Model):
    name: Hostname
    ssh: SshTarget | None = None          # what the controller connects to; defaults to name
    address: InterfaceAddress | None = None  # cluster address with prefix, e.g. 10.10.0.11/24
    interface: InterfaceName | None = None   # where that address lives when not bonded
    joins_at_step: Step = 1
    lanes: list[Lane] = Field([], max_length=MAX_LANES)
    bond: Bond | None = None
    cx7: list[Cx7Interface] = Field([], max_length=MAX_LANES)
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


class Engine(Model):
    """One `--engine MODEL=HOST:PORT` of the agent, or a reference engine (agent=false)."""

    model: ModelName
    node: Hostname
    port: TcpPort
    host: Host | None = None        # as written on the agent's command line; default: the node's name
    listen: IpAddress | None = None  # address the server must listen on; default: the node's cluster address
    agent: bool = True              # routed by the agent; false: a reference run (e.g. local tokens/s)
    tokens_per_s_floor: _positive(1_000_000) | None = None


class Agent(Model):
    node: Hostname
    listen: HostPort = "127.0.0.1:8080"
    key_env: EnvName | None = None
    key_file: KeyFile | None = None
    process: ProcessName = "thor-tigress-agent"

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
    config: FilePath | None = None          # an ssh_config file; default ~/.ssh/config
    identity: FilePath | None = None
    jump: SshTarget | None = None            # a jump host, as ssh -J takes it
    connect_timeout: _positive(MAX_CONNECT_SECONDS) = 5.0
    # how long a node's fresh connect is tried again (refused, reset, timed out, no route: an sshd
    # restarting, a node rebooting) before it is declared unreachable; 0: one attempt (docs/checks.md)
    connect_budget: Annotated[float, Field(ge=0, le=MAX_CONNECT_SECONDS, allow_inf_nan=False)] = 20.0
    command_timeout: _positive(3600) = 60.0
    # the SSH mesh: how many peers each node tries at once (all nodes at the same time); each
    # node starts with the next one, so a peer sees about this many logins at once, under
    # sshd's MaxStartups (10)
    fanout: Annotated[int, Field(ge=1, le=10)] = 8


class Rollback(Model):
    """How a change can be undone (the Spark guide's rollback design): the folder on each node
    holding copies of the netplan files a change touches, made before it with `sudo cp -p`."""
    backup_dir: NodeFolder


class Sparkrun(Model):
    """A Spark cluster's sparkrun definition on the head node (node_0): the name Cordatus gives
    its YAML (~/.config/sparkrun/clusters/NAME.yaml), and the container images its recipes need
    (the preflight's "sparkrun runtime": the CLI and the images on the head)."""
    cluster: _str(_text("a sparkrun cluster name (letters, digits, '_', '.', '-')", 64, r"[A-Za-z0-9_][A-Za-z0-9_.-]*"))
    images: list[ImageName] = Field([], max_length=64)   # what its recipes run: in the head's container runtime


class Slurm(Model):
    """Step 9's scheduler: which node runs slurmctld, the partition jobs go to, and the longest
    window the site gives one job (the partition's MaxTime may not exceed it)."""
    controller: Hostname
    partition: _str(_text("a Slurm partition name (letters, digits, '_', '-')", 64, r"[A-Za-z0-9_-]+")) = "batch"
    max_time_hours: _positive(24 * 366) | None = None


class Reservation(Model):
    """A row of the shared calendar: a person holds a node from start to end (TOML times with
    their offset, e.g. 2026-12-04T07:00:00+01:00)."""
    person: LoginName
    node: Hostname
    start: AwareDatetime
    end: AwareDatetime

    @model_validator(mode="after")
    def _ends_after_start(self) -> "Reservation":
        if self.end <= self.start:
            raise ValueError(f"ends ({self.end.isoformat()}) before it starts ({self.start.isoformat()})")
        return self


class Slices(Model):
    """Who holds whole-node slices (their own logins, no sudo, private homes) and when: the
    reservations given here and those of the shared calendar's .ics export (read at load)."""
    holders: list[LoginName] = Field(min_length=1, max_length=MAX_HOLDERS)
    reservations: list[Reservation] = Field([], max_length=MAX_RESERVATIONS)
    calendar: FilePath | None = None


class AllowedListener(Model):
    """A program that may listen on a cluster address or on every address (besides sshd, the
    engines, the agent, Slurm's daemons and the suite's own short-lived servers)."""
    command: ProcessName
    port: TcpPort | None = None     # any port when left out


class ClosedNetwork(Model):
    allow: list[AllowedListener] = Field([], max_length=64)


class History(Model):
    """[history]: where the run history lives (rackproof.ticket.history) and when a figure has drifted."""
    path: FilePath | None = None     # the SQLite file; default reports/history.sqlite beside the reports
    drift_share: Fraction = 0.05     # worse than its recent median by more than this share: a warning
    runs: Annotated[int, Field(ge=1, le=100)] = 5   # the median is of this many earlier runs' figures
    drift_fails: bool = False        # a drift fails its check instead of warning


class Cluster(Model):
    name: ClusterName
    platform: Platform
    user: LoginName


class Inventory(Model):
    cluster: Cluster
    switch: Switch | None = None
    ssh: SshSettings = SshSettings()
    expect: Expect = Expect()
    nodes: list[Node] = Field(min_length=1, max_length=MAX_NODES)
    agent: Agent | None = None
    engines: list[Engine] = Field([], max_length=MAX_NODES)
    rollback: Rollback | None = None
    slurm: Slurm | None = None
    sparkrun: Sparkrun | None = None
    slices: Slices | None = None
    closed_network: ClosedNetwork = ClosedNetwork()
    history: History = History()

    @model_validator(mode="before")
    @classmethod
    def _platform_defaults(cls, data):
        if isinstance(data, dict):
            cluster, expect = data.get("cluster"), data.get("expect", {})
            platform = cluster.get("platform") if isinstance(cluster, dict) else None
            if isinstance(platform, str) and isinstance(expect, dict):
                data = {**data, "expect": {**PLATFORM_DEFAULTS.get(platform, {}), **expect}}
        return data

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)

    def expectations_changed(self) -> list[dict]:
        """The [expect] settings this file gives other values than the platform's defaults, in
        schema order: {setting, value, default}. The report shows them with the verdict, so a
        bound lowered (or raised, or a version pinned) in cluster.toml is never out of sight."""
        defaults = Expect(**PLATFORM_DEFAULTS.get(self.cluster.platform, {}))
        return [{"setting": name, "value": getattr(self.expect, name), "default": getattr(defaults, name)}
                for name in Expect.model_fields if getattr(self.expect, name) != getattr(defaults, name)]

    def at(self, step: int) -> "ClusterAtStep":
        """The cluster as it stands at build step `step`."""
        return ClusterAtStep(self, step)

    @property
    def head(self) -> Node:
        """node_0: the first node (Cordatus: the head serves the API; workers follow in order)."""
        return self.nodes[0]

    def engine_node(self, engine: Engine) -> Node:
        return self.node(engine.node)

    def engine_flag_host(self, engine: Engine) -> str:
        return _flag_host(engine, self.agent)

    def engine_listen(self, engine: Engine) -> str:
        # a node without a cluster address carries no engine that would listen on it (_cross_check)
        return _listen(engine, self.agent, self.engine_node(engine))

    def engine_url(self, engine: Engine) -> str:
        """Where the engine answers, as seen from the agent's node."""
        return f"http://{self.engine_listen(engine)}:{engine.port}"

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


def _flag_host(engine: Engine, agent: Agent | None) -> str:
    """HOST of the agent's `--engine MODEL=HOST:PORT`: as written, else 127.0.0.1 on the
    agent's own node (the chapter's rule), else the node's name."""
    if engine.host:
        return engine.host
    return "127.0.0.1" if agent and engine.node == agent.node else engine.node


def _listen(engine: Engine, agent: Agent | None, node: Node) -> str | None:
    """The address the engine's server must listen on: a model on the agent's node that the
    agent reaches at 127.0.0.1 listens there; every other one on its node's cluster address
    (None when the node has none)."""
    if engine.listen:
        return engine.listen
    if _flag_host(engine, agent) in LOOPBACK:
        return "127.0.0.1"
    return node.ip


@dataclass(frozen=True)
class ClusterAtStep:
    """The cluster as it stands at one build step ("The order to build it"): the nodes that have
    joined by then, their lanes cabled by then, a bond once it is built. Everything else (expect,
    ssh, agent, engines, node(), where(), ...) is the inventory's own. Checks get this view, so
    no check, fixture or library function takes a step of its own."""
    inventory: Inventory
    step: int

    def __getattr__(self, name: str):
        if name in ("inventory", "step"):   # not set yet (copy, pickle): never recurse
            raise AttributeError(name)
        return getattr(self.inventory, name)

    @property
    def nodes(self) -> list[Node]:
        """The nodes that have joined (the inventory's `nodes`: every node, joined or not)."""
        return [n for n in self.inventory.nodes if self.joined(n)]

    @property
    def lanes(self) -> list[tuple[Node, Lane]]:
        """The lanes that are cabled by now, of the nodes that have joined by now."""
        return [(n, lane) for n in self.nodes for lane in n.lanes if lane.connected and lane.joins_at_step <= self.step]

    @property
    def ordered_pairs(self) -> list[tuple[Node, Node]]:
        nodes = self.nodes
        return [(a, b) for a in nodes for b in nodes if a is not b]

    def joined(self, node: Node) -> bool:
        return node.joins_at_step <= self.step

    def bonded(self, node: Node) -> bool:
        return node.bond is not None and node.bond.joins_at_step <= self.step

    def cluster_interface(self, node: Node) -> str | None:
        """Where the node's cluster address lives now: the bond once it is built, else the
        given interface, else its first cabled lane (the chapter's nmcli line)."""
        if self.bonded(node):
            return node.bond.name
        if node.interface:
            return node.interface
        lanes = [lane.name for lane in node.lanes if lane.connected and lane.joins_at_step <= self.step]
        return lanes[0] if lanes else None


# --- rules that span fields -----------------------------------------------------------------

class _Parts:
    """The parts of an inventory that validated on their own, so that rules spanning
    fields are checked (and reported) even when another field is broken."""

    def __init__(self, data: dict):
        def part(model, value):
            try:
                return model.model_validate(value)
            except ValidationError:
                return None

        def table_list(key: str) -> list:
            value = data.get(key)
            return value[:MAX_NODES] if isinstance(value, list) else []

        cluster = part(Cluster, data.get("cluster"))
        self.platform = cluster.platform if cluster else None
        self.has_switch, self.has_agent = "switch" in data, "agent" in data
        self.switch = part(Switch, data["switch"]) if self.has_switch else None
        raw_nodes = table_list("nodes")
        self.nodes = [(i, n) for i, n in enumerate(part(Node, raw) for raw in raw_nodes) if n]
        # a node that failed validation still exists: don't report its references as dangling
        self.node_names = {raw["name"] for raw in raw_nodes
                           if isinstance(raw, dict) and isinstance(raw.get("name"), str)}
        self.agent = part(Agent, data["agent"]) if self.has_agent else None
        self.engines = [(k, e) for k, e in enumerate(part(Engine, raw) for raw in table_list("engines")) if e]
        self.slurm = part(Slurm, data["slurm"]) if "slurm" in data else None
        self.has_sparkrun = "sparkrun" in data
        self.slices = part(Slices, data["slices"]) if "slices" in data else None


def _cx7_of_one_node(i: int, node: Node):
    """A cabled port's two logical interfaces: two names, two RoCE devices, two subnets (the
    playbook's pattern: one cable already uses two subnets)."""
    for k, c in enumerate(node.cx7):
        for field in ("name", "rdma_device"):
            first = [getattr(x, field) for x in node.cx7].index(getattr(c, field))
            if first != k:
                yield f"nodes[{i}].cx7[{k}].{field}", f"{getattr(c, field)} is already nodes[{i}].cx7[{first}]"
        nets = [ipaddress.ip_interface(x.address).network for x in node.cx7]
        first = nets.index(nets[k])
        if first != k:
            yield f"nodes[{i}].cx7[{k}].address", (
                f"{c.address} is on the subnet {nets[k]} of nodes[{i}].cx7[{first}]: each logical interface of the "
                "port has a subnet of its own")


def _cx7_subnets_shared(nodes: list[tuple[int, Node]]):
    """Where more than one node has CX7 interfaces, each CX7 subnet is shared with another node's
    (the two ends of the cable on one subnet), else nothing answers on it."""
    cabled = [(i, node) for i, node in nodes if node.cx7]
    if len(cabled) < 2:
        return
    for i, node in cabled:
        others = {ipaddress.ip_interface(c.address).network for j, n in cabled if j != i for c in n.cx7}
        for k, c in enumerate(node.cx7):
            if ipaddress.ip_interface(c.address).network not in others:
                yield f"nodes[{i}].cx7[{k}].address", (
                    f"{c.address}: no other node has a CX7 address on {ipaddress.ip_interface(c.address).network}: "
                    "nothing would answer on it; give the other end of this logical interface an address on it")


def _cross_check(inv: _Parts):
    """Rules that span fields; yields (field path, message)."""
    # one machine is one node: names are hostnames (no case), and no two nodes share an ssh target
    names: dict[str, tuple[int, str]] = {}
    targets: dict[str, int] = {}
    for i, node in inv.nodes:
        name, target = node.name.lower(), node.ssh_name.lower()
        if name in names:
            first, written = names[name]
            case = "" if written == node.name else f" ({written}: names are compared without case)"
            yield f"nodes[{i}].name", f"{node.name} is already nodes[{first}]{case}"
        elif target in targets:
            yield (f"nodes[{i}].{'ssh' if node.ssh else 'name'}",
                   f"{node.ssh_name} is already the ssh target of nodes[{targets[target]}]: one machine checked twice")
        names.setdefault(name, (i, node.name))
        targets.setdefault(target, i)

    addresses: dict = {}
    ports: dict[int, str] = {}
    network: tuple[int, ipaddress.IPv4Network | ipaddress.IPv6Network] | None = None   # the first node's
    local: int | None = None
    for i, node in inv.nodes:
        if node.address:
            own = ipaddress.ip_interface(node.address).network
            if network is None:
                network = (i, own)
            elif own != network[1]:
                yield f"nodes[{i}].address", (f"{node.address} is not in the cluster network {network[1]} of "
                                              f"nodes[{network[0]}]: the nodes share one network")
        if node.local:
            if local is None:
                local = i
            else:
                yield f"nodes[{i}].local", f"nodes[{local}] is already the local node: the controller is one machine"
        for label, addr in [(f"nodes[{i}].address", node.address)] + [
            (f"nodes[{i}].cx7[{k}].address", c.address) for k, c in enumerate(node.cx7)
        ]:
            if addr is None:
                continue
            ip = ipaddress.ip_interface(addr).ip
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
                first = node.bond.lanes.index(member)
                if first != k:
                    yield f"nodes[{i}].bond.lanes[{k}]", f"{member} is already nodes[{i}].bond.lanes[{first}]"
                elif member not in lane_names:
                    yield f"nodes[{i}].bond.lanes[{k}]", f"{node.name} has no lane named {member}"
            late = [f"{member} (step {node.lane(member).joins_at_step})" for member in dict.fromkeys(node.bond.lanes)
                    if member in lane_names and node.lane(member).joins_at_step > node.bond.joins_at_step]
            if late:
                yield f"nodes[{i}].bond.joins_at_step", (f"the bond is built at step {node.bond.joins_at_step}, "
                                                         f"before its lanes are cabled: {', '.join(late)}")
        if inv.platform == "thor":
            if node.address is None:
                yield f"nodes[{i}].address", f"{node.name} needs its cluster address, e.g. 10.10.0.1{i + 1}/24"
            if not node.bond and not node.interface and not node.lanes:
                yield f"nodes[{i}]", f"{node.name} has no lanes, bond or interface to carry its cluster address"
        if inv.platform == "spark" and len(node.cx7) not in (0, 2):
            yield f"nodes[{i}].cx7", (
                f"{node.name} lists {len(node.cx7)} CX7 interfaces; a cabled QSFP port has two logical interfaces")
        yield from _cx7_of_one_node(i, node)

    yield from _cx7_subnets_shared([(i, node) for i, node in inv.nodes])

    if inv.platform == "thor" and not inv.has_switch and any(node.lanes for _, node in inv.nodes):
        yield "switch", "a Thor shelf with lanes needs a [switch] table (its FEC mode and port speed)"
    if inv.agent and inv.agent.node not in inv.node_names:
        yield "agent.node", f"no node named {inv.agent.node}"
    seen: dict[str, int] = {}
    servers: dict[tuple[str, str, int], int] = {}
    nodes = {node.name: node for _, node in inv.nodes}
    for k, engine in inv.engines:
        if engine.node not in inv.node_names:
            yield f"engines[{k}].node", f"no node named {engine.node}"
        if engine.agent:
            if engine.model in seen:
                yield f"engines[{k}].model", f"{engine.model} is already routed by engines[{seen[engine.model]}]"
            seen.setdefault(engine.model, k)
        if engine.node not in nodes or (inv.has_agent and inv.agent is None):   # reported on its own
            continue
        listen = _listen(engine, inv.agent, nodes[engine.node])
        if listen is None:
            yield f"engines[{k}].node", (f"{engine.node} has no cluster address for the engine to listen on: give "
                                         f"the node its address, or the engine a listen address")
            continue
        server = (engine.node, listen, engine.port)
        if server in servers:
            yield f"engines[{k}].port", (f"{engine.node} {listen}:{engine.port} is already engines[{servers[server]}]: "
                                         f"one server cannot be two engines")
        servers.setdefault(server, k)
    if not inv.has_agent and any(e.agent for _, e in inv.engines):
        yield "engines", "engines routed by an agent need an [agent] table"
    if inv.has_sparkrun and inv.platform == "thor":
        yield "sparkrun", "sparkrun launches on DGX Sparks: a thor cluster has no [sparkrun]"
    if inv.slurm and inv.slurm.controller not in inv.node_names:
        yield "slurm.controller", f"no node named {inv.slurm.controller}"
    if inv.slices:
        for k, r in enumerate(inv.slices.reservations):
            if r.node not in inv.node_names:
                yield f"slices.reservations[{k}].node", f"no node named {r.node}"
            if r.person not in inv.slices.holders:
                yield f"slices.reservations[{k}].person", f"{r.person} is not in slices.holders"


# --- problem lines ----------------------------------------------------------------------------

# a value's kind in the file's words; a JSON file (a snapshot) says "an object" where TOML says "a table"
_KINDS = {bool: "true/false", int: "an integer", float: "a number with a fraction", str: "a string",
          list: "an array", dict: "a table", type(None): "null"}
_EXPECTED = {"string_type": "a string", "int_type": "an integer", "float_type": "a number",
             "bool_type": "true or false", "list_type": "an array", "model_type": "a table", "dict_type": "a table"}


def _error_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z0-9_-]{1,64}", str(part)):
            out += f".{part}" if out else str(part)
        else:   # a key of the file's own: quoted, escaped, cut short
            out += f"[{_show(str(part))}]"
    return out


def _message(e: dict, table: str = "a table") -> str:
    """pydantic's message in the file's terms; a wrong value's type is named, its value never shown."""
    kind = e["type"]
    if kind in _EXPECTED:
        found = e["input"]
        if kind == "float_type" and type(found) is int:
            return "is too large a number"
        expected, given = _EXPECTED[kind], _KINDS.get(type(found), "a date or time")
        return f"should be {expected}, not {given}".replace("a table", table)
    if kind == "finite_number":
        return "should be a finite number, not nan or inf"
    return e["msg"].removeprefix("Value error, ").removeprefix("Input ")


def problem_lines(err: ValidationError, table: str = "a table") -> list[str]:
    """A line per problem, `field.path: what is wrong`; `table`: what the file calls a table."""
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
        if e["type"] == "missing":
            if (loc[:-1], loc[-1]) in meant:
                continue
            msg = "required field is missing"
        elif e["type"] == "extra_forbidden":
            msg = f"unknown field; did you mean {typos[loc]!r}?" if loc in typos else "unknown field (a typo?)"
        else:
            msg = _message(e, table)
        lines.append(f"{_error_path(loc) or '(top level)'}: {msg}")
    return lines


# --- reading the file -------------------------------------------------------------------------

def _depth(data) -> int:
    """How deep tables and arrays sit within one another (without recursion)."""
    deepest, todo = 0, [(data, 1)]
    while todo:
        value, depth = todo.pop()
        deepest = max(deepest, depth)
        children = value.values() if isinstance(value, dict) else value
        todo.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def _toml(text: str) -> dict:
    """The file's tables, or the one line that says why there are none."""
    if len(text) > MAX_BYTES:
        raise ValueError(f"the file is larger than {MAX_BYTES >> 20} MiB; an inventory is a few kilobytes "
                         "(is this the right file?)")
    too_deep = f"tables or arrays are nested more than {MAX_DEPTH} levels deep; an inventory needs 5"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"not valid TOML: {e}") from None
    except RecursionError:
        raise ValueError(too_deep) from None
    except ValueError:  # Python's limit on an integer's digits
        raise ValueError("not valid TOML: a number too long to read") from None
    if _depth(data) > MAX_DEPTH:
        raise ValueError(too_deep)
    return data


def parse_inventory(text: str, source: str = "cluster.toml") -> Inventory:
    try:
        data = _toml(text)
    except ValueError as e:
        raise InventoryError(source, [str(e)]) from None
    problems = [f"{path}: {msg}" for path, msg in _cross_check(_Parts(data))]
    try:
        inventory = Inventory.model_validate(data)
    except ValidationError as e:
        problems = problem_lines(e) + problems
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more problems"]
    if problems:
        raise InventoryError(source, problems)
    if inventory.slices and inventory.slices.calendar:
        inventory = _with_calendar(inventory, source)
    return inventory


def _with_calendar(inventory: Inventory, source: str) -> Inventory:
    """The inventory with the calendar's events added to slices.reservations, each checked as
    a reservation written in the file would be."""
    slices = inventory.slices
    path = Path(slices.calendar).expanduser()
    label = f"slices.calendar ({slices.calendar})"
    try:
        data = read_regular_file(path, MAX_BYTES)
    except (OSError, ValueError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else "not a usable path"
        raise InventoryError(source, [f"{label}: cannot read it: {reason}"]) from None
    if len(data) > MAX_BYTES:
        raise InventoryError(source, [f"{label}: larger than {MAX_BYTES >> 20} MiB"])
    try:
        rows = parse_calendar(data)
    except CalendarError as e:
        raise InventoryError(source, [f"{label}: {e}"]) from None
    names, problems, added = {n.name for n in inventory.nodes}, [], []
    for k, row in enumerate(rows):
        where = f"{label}: event {k + 1} ({row.person} on {row.node})"
        try:
            added.append(Reservation(person=row.person, node=row.node, start=row.start, end=row.end))
        except ValidationError as e:
            problems.append(f"{where}: {'; '.join(_message(err) for err in e.errors())}")
            continue
        if row.node not in names:
            problems.append(f"{where}: no node named {row.node}")
        if row.person not in slices.holders:
            problems.append(f"{where}: {row.person} is not in slices.holders")
    if len(slices.reservations) + len(added) > MAX_RESERVATIONS:
        problems.append(f"{label}: more than {MAX_RESERVATIONS} reservations in all")
    if problems:
        raise InventoryError(source, problems[:MAX_PROBLEMS])
    return inventory.model_copy(update={"slices": slices.model_copy(
        update={"reservations": [*slices.reservations, *added]})})


def _decode(raw: bytes) -> str:
    if len(raw) > MAX_BYTES:
        raise ValueError(f"the file is larger than {MAX_BYTES >> 20} MiB; an inventory is a few kilobytes "
                         "(is this the right file?)")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError("the file is UTF-16 (it begins with a UTF-16 byte order mark); save it as UTF-8")
    try:
        return raw.decode("utf-8-sig")   # a UTF-8 byte order mark (Windows editors) is harmless
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ValueError(f"the file is not UTF-8: byte 0x{raw[e.start]:02x} on line {line} is not UTF-8 text "
                         "(latin-1?); save the file as UTF-8") from None


def load_inventory(path: str | Path) -> Inventory:
    source = str(path)
    try:
        raw = read_regular_file(path, MAX_BYTES)
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        reason = e.strerror if isinstance(e, OSError) and e.strerror else "not a usable path"
        raise InventoryError(source, [f"cannot read the inventory: {reason}"]) from None
    try:
        text = _decode(raw)
    except ValueError as e:
        raise InventoryError(source, [str(e)]) from None
    return parse_inventory(text, source)
