"""The racks the simulator can build: the documents' clusters, as plain data.

A profile says what the shelf looks like (nodes, lanes, switch ports, addresses, engines, the
agent) and what the modelled hardware reports (speeds, FEC, releases, GPU). `rack.py` builds it;
`inventory_toml()` writes the cluster.toml a user would write for it.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, field

SCALE = 0.001         # every modelled rate x scale = the rate the rack really shapes to (at most this)
# The traffic itself is a large cost in CPU: a whole thor5 run took 33 CPU-seconds of the two
# cores at 0.01 (250 Mbit/s a lane), 25-27 at 0.004 and 22 at 0.001, the same 41 s of wall time
# (/proc/stat around the run, 2026-12-07); the selftests run dozens of such runs side by side.
# What the rack carries at once: a round of throughput tests loads every lane at the same time
# (thor5's five -P 4 pairs, 20 lanes of 25 Mbit/s); a rack with more lanes is shaped to a smaller
# scale. At 25 Mbit/s a lane a 3 s measurement still moves 9 MB, 140 of htb's 64 KB bursts.
CARRIES_MBIT = 500
USER = "nvidia"       # the same login on every node
MGMT_NET = "192.168.77"  # house network: bench .1, node i (1-based) .10+i

THOR_RELEASE = {
    "l4t": "R38.2.0",
    "nv_tegra_release": (
        "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, "
        "DATE: Fri Aug 22 00:55:42 UTC 2025\n"
        "# KERNEL_VARIANT: oot\n"
        "TARGET_USERSPACE_LIB_DIR=nvidia\n"
        "TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n"
        "INSTALL_TYPE=\n"),
    "packages": {
        "nvidia-jetpack": "7.0+b128",
        "nvidia-l4t-core": "38.2.0-20250821174705",
        "tensorrt": "10.13.3.9-1+cuda13.0",
        "libnvinfer10": "10.13.3.9-1+cuda13.0",
        "cuda-toolkit-13-0": "13.0.0-1",
    },
    "driver": "580.00",
    "cuda": "13.0",
    # uname -r of a Thor on JetPack 7.0 (jetson_stats issue 711's jtop report: "Release: 6.8.12-tegra")
    "kernel": "6.8.12-tegra",
}

# What jetpack-mismatch plants: the node was updated to JetPack 7.1 alone.
THOR_RELEASE_71 = {
    "l4t": "R38.4.0",
    "nv_tegra_release": (
        "# R38 (release), REVISION: 4.0, GCID: 42586012, BOARD: generic, EABI: aarch64, "
        "DATE: Wed Nov 19 10:12:31 UTC 2025\n"
        "# KERNEL_VARIANT: oot\n"
        "TARGET_USERSPACE_LIB_DIR=nvidia\n"
        "TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n"
        "INSTALL_TYPE=\n"),
    "packages": {
        "nvidia-jetpack": "7.1+b72",
        "nvidia-l4t-core": "38.4.0-20251119101231",
        "tensorrt": "10.14.1.48-1+cuda13.0",
        "libnvinfer10": "10.14.1.48-1+cuda13.0",
        "cuda-toolkit-13-0": "13.0.2-1",
    },
    "driver": "580.00",
    "cuda": "13.0",
    "kernel": "6.8.12-tegra",   # modelled: the fault changes JetPack, not the kernel
}

SPARK_RELEASE = {
    "dgx_release": (
        'DGX_NAME="DGX Spark"\n'
        'DGX_PRETTY_NAME="NVIDIA DGX Spark"\n'
        'DGX_SWBUILD_DATE="2025-10-03-09-11-42"\n'
        'DGX_SWBUILD_VERSION="7.2.3"\n'
        'DGX_COMMIT_ID="b6c0e6a"\n'
        'DGX_PLATFORM="DGX Spark"\n'),
    "dgx_os_version": "7.2.3",
    "packages": {
        "nvidia-driver-580-open": "580.95.05-0ubuntu1",
        "cuda-toolkit-13-0": "13.0.2-1",
        "dgx-release": "7.2.3",
        "libnccl2": "2.28.3-1+cuda13.0",
    },
    "driver": "580.95.05",
    "cuda": "13.0",
    # uname -r of DGX OS 7.2.3 (its login banner: "NVIDIA DGX Spark Version 7.2.3 (GNU/Linux 6.11.0-1016-nvidia aarch64)")
    "kernel": "6.11.0-1016-nvidia",
}

# A second release for jetpack-mismatch on a Spark: one node left on an older DGX OS.
SPARK_RELEASE_OLD = {
    "dgx_release": SPARK_RELEASE["dgx_release"].replace("7.2.3", "7.1.0").replace("2025-10-03-09-11-42",
                                                                                     "2025-08-14-17-02-11"),
    "dgx_os_version": "7.1.0",
    "packages": {
        "nvidia-driver-580-open": "580.65.06-0ubuntu1",
        "cuda-toolkit-13-0": "13.0.0-1",
        "dgx-release": "7.1.0",
        "libnccl2": "2.27.7-1+cuda13.0",
    },
    "driver": "580.65.06",
    "cuda": "13.0",
    "kernel": "6.11.0-1016-nvidia",   # modelled: the fault changes the DGX OS release, not the kernel
}


@dataclass
class LaneSpec:
    name: str
    switch_port: int | None            # None: not cabled (the plug is not in a switch port)
    joins_at_step: int = 1
    cable: str | None = None

    @property
    def connected(self) -> bool:
        return self.switch_port is not None


@dataclass
class Cx7Spec:
    name: str            # the logical netdev, e.g. enp1s0f1np1
    rdma_device: str     # its RoCE device, e.g. rocep1s0f1
    address: str | None  # with prefix; None: the uncabled port (f0), shown Down
    link: str | None     # which cable link joins it to the peer (None: not cabled)


@dataclass
class NodeSpec:
    name: str
    index: int                      # 1-based position on the shelf
    platform: str
    address: str | None = None      # cluster address with prefix
    interface: str | None = None    # where it lives when not bonded
    joins_at_step: int = 1
    lanes: list[LaneSpec] = field(default_factory=list)
    bond_lanes: list[str] | None = None
    cx7: list[Cx7Spec] = field(default_factory=list)
    mgmt_iface: str = "enP2p1s0"

    def lane(self, name: str) -> LaneSpec:
        return next(lane for lane in self.lanes if lane.name == name)

    @property
    def mgmt_ip(self) -> str:
        return f"{MGMT_NET}.{10 + self.index}"

    @property
    def ip(self) -> str | None:
        return self.address.split("/")[0] if self.address else None

    @property
    def cluster_ip(self) -> str | None:
        """The address other nodes use for this node's name (/etc/hosts)."""
        if self.address:
            return self.ip
        cabled = [c for c in self.cx7 if c.address]
        return cabled[0].address.split("/")[0] if cabled else None


@dataclass
class EngineSpec:
    model: str
    node: str
    port: int
    host: str              # as written on the agent's command line
    listen: str            # address the server binds
    agent: bool = True
    tokens_per_s: float = 40.0
    default_listen: bool = True   # listen == the node's cluster address (leave it out of the TOML)
    tokens_per_s_floor: float | None = None  # what the generated inventory expects at least


@dataclass
class JobSpec:
    """A slice holder's job started with `systemd-run --user` (the chapter's step 9): a real
    process of that login on the node, and the unit its user manager would show."""
    node: str
    person: str
    unit: str                      # "finetune.service"
    runtime_max: str | None        # "6h"; None: started without -p RuntimeMaxSec


@dataclass
class Reservation:
    """A row of the shared calendar, in hours from the moment the rack comes up."""
    person: str
    node: str
    start_h: float
    end_h: float


@dataclass
class Sharing:
    """Step 9: who holds slices, their reservations and jobs, and the Slurm controller."""
    holders: list[str]
    reservations: list[Reservation]
    jobs: list[JobSpec]
    slurm_controller: str
    partition: str = "thor"
    max_time_hours: int = 8        # the partition's MaxTime, and the site's limit in cluster.toml


@dataclass
class Profile:
    name: str
    cluster_name: str
    platform: str
    description: str
    nodes: list[NodeSpec]
    lane_rate_mbps: int            # what ethtool reports for a healthy lane / CX7 interface
    shaped_rate_mbps: float        # the modelled throughput of one lane/link before scaling
    switch: dict | None = None     # name, ports, port_speed_mbps, fec
    engines: list[EngineSpec] = field(default_factory=list)
    agent_node: str | None = None
    agent_listen: str = "127.0.0.1:8080"
    expect: dict = field(default_factory=dict)
    release: dict = field(default_factory=dict)
    roce_gbps_per_link: float = 0.0
    nccl_busbw_gbs: float = 0.0
    step_note: str = ""
    sharing: Sharing | None = None
    sparkrun_cluster: str | None = None   # the cluster sparkrun defines on the head (node_0)
    images: list[str] = field(default_factory=list)   # container images its recipes need (on the head)

    def node(self, name: str) -> NodeSpec:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    @property
    def scale(self) -> float:
        lanes = sum(lane.connected for n in self.nodes for lane in n.lanes)
        return min(SCALE, CARRIES_MBIT / (lanes * self.shaped_rate_mbps)) if lanes else SCALE

    @property
    def shaped_mbit(self) -> float:
        return self.shaped_rate_mbps * self.scale

    @property
    def bonded(self) -> bool:
        return any(n.bond_lanes for n in self.nodes)


def _thor_node(i: int, lanes_connected: int, bonded: bool, join: int, lane_join: int) -> NodeSpec:
    lanes = []
    for k in range(4):
        if k < lanes_connected:
            lanes.append(LaneSpec(f"mgbe{k}_0", (i - 1) * 4 + k + 1, join if k == 0 else lane_join,
                                  f"thor-{i}/{k + 1}"))
        else:
            lanes.append(LaneSpec(f"mgbe{k}_0", None, lane_join))
    return NodeSpec(
        name=f"thor-{i}", index=i, platform="thor", address=f"10.10.0.{10 + i}/24",
        interface=None if bonded else "mgbe0_0", joins_at_step=join, lanes=lanes,
        bond_lanes=[f"mgbe{k}_0" for k in range(lanes_connected)] if bonded else None)   # the cabled lanes


def _thor_profile(name: str, cluster_name: str, nodes, engines, agent_node: str | None = "thor-1",
                  **rest) -> Profile:
    """What every Thor profile shares: the chapter's 25 GbE switch with RS FEC, the agent on
    thor-1, JetPack 7.0 (L4T R38.2.0) pinned."""
    return Profile(
        name=name, cluster_name=cluster_name, platform="thor",
        nodes=nodes, lane_rate_mbps=25000, shaped_rate_mbps=25000,
        switch={"name": "sw-25g", "ports": 24, "port_speed_mbps": 25000, "fec": "RS", "lldp_port": "swp{port}"},
        engines=engines, agent_node=agent_node,
        # three measured seconds: a shaped veth lane settles within the warm-up second
        expect={"l4t_release": "R38.2.0", "jetpack_version": "7.0", "iperf_seconds": 3, "clocks_locked": True},
        release=THOR_RELEASE, **rest)


def thor5() -> Profile:
    nodes = [_thor_node(i, 4, True, 1 if i <= 2 else 7, 8) for i in range(1, 6)]
    engines = [
        EngineSpec("qwen3-8b", "thor-1", 8081, host="127.0.0.1", listen="127.0.0.1", tokens_per_s=42.0,
                   default_listen=False),
        EngineSpec("llama-3.1-8b", "thor-2", 8081, host="thor-2", listen="10.10.0.12", tokens_per_s=40.0,
                   tokens_per_s_floor=30.0),
        EngineSpec("gemma-3-12b", "thor-3", 8081, host="thor-3", listen="10.10.0.13", tokens_per_s=28.0,
                   tokens_per_s_floor=20.0),
    ]
    # figure 29.6: Mira holds thor-3 this morning and Kofi after her, Ms. Rao's class has thor-4,
    # Yuki draws on thor-5 later; a running job of each holder whose window is open
    sharing = Sharing(
        holders=["mira", "kofi", "rao", "yuki"],
        reservations=[Reservation("mira", "thor-3", -1, 5), Reservation("kofi", "thor-3", 6, 11),
                      Reservation("rao", "thor-4", -2, 6), Reservation("yuki", "thor-5", 1, 4)],
        jobs=[JobSpec("thor-3", "mira", "finetune.service", "6h"),
              JobSpec("thor-4", "rao", "class-notebook.service", "8h")],
        slurm_controller="thor-1")
    return _thor_profile(
        "thor5", "thor-shelf", nodes, engines, sharing=sharing,
        description="five Jetson AGX Thors, four 25 GbE lanes each bonded (802.3ad, layer3+4), agent on thor-1, "
                    "Slurm (controller on thor-1) and four slice holders")


def thor2() -> Profile:
    nodes = [_thor_node(i, 1, False, 1, 8) for i in (1, 2)]
    engines = [
        EngineSpec("llama-3.1-8b", "thor-2", 8081, host="thor-2", listen="10.10.0.12", tokens_per_s=40.0),
        EngineSpec("llama-3.1-8b", "thor-1", 8081, host="127.0.0.1", listen="127.0.0.1", agent=False,
                   tokens_per_s=40.0, default_listen=False),
    ]
    return _thor_profile(
        "thor2", "thor-pair", nodes, engines, step_note="run the suite with --step 6",
        description="two Jetson AGX Thors at build step 6: one lane each (switch ports 1 and 5), no bond")


def _spark_node(i: int) -> NodeSpec:
    """Spark i: its cabled port's two logical interfaces on links a and b (192.168.100/101.(9+i))."""
    host = 9 + i
    return NodeSpec(
        name=f"spark-{i}", index=i, platform="spark", mgmt_iface="enP7s7",
        cx7=[
            Cx7Spec("enp1s0f1np1", "rocep1s0f1", f"192.168.100.{host}/24", "a"),
            Cx7Spec("enP2p1s0f1np1", "roceP2p1s0f1", f"192.168.101.{host}/24", "b"),
            Cx7Spec("enp1s0f0np0", "rocep1s0f0", None, None),
            Cx7Spec("enP2p1s0f0np0", "roceP2p1s0f0", None, None),
        ])


def spark2() -> Profile:
    nodes = [_spark_node(i) for i in (1, 2)]
    return Profile(
        name="spark2", cluster_name="spark-pair", platform="spark",
        description="two DGX Sparks joined by one QSFP cable (two logical CX7 links, RoCE devices)",
        nodes=nodes, lane_rate_mbps=200000, shaped_rate_mbps=100000,
        expect={"nccl_test": "all_gather_perf"}, release=SPARK_RELEASE,
        roce_gbps_per_link=96.9, nccl_busbw_gbs=22.1, sparkrun_cluster="spark-pair",
        images=["nvcr.io/nvidia/vllm:25.09-py3", "ghcr.io/spark-arena/dgx-vllm-eugr-nightly:latest"])


PROFILES = {"thor5": thor5, "thor2": thor2, "spark2": spark2}
GENERATED = ("thor", "spark")     # racks of any size, made from the same rules: `sim up thor --nodes 32`
MAX_SIM_NODES = 64                # what a 2-core machine brings up in seconds (a real sshd per node)
ENGINE_MODELS = ["llama-3.1-8b", "qwen3-8b", "gemma-3-12b"]


def _model(i: int) -> str:
    """Engine i's model (from 1): the agent routes by model, so past the three, each round of
    them is a fine-tune of its own ("llama-3.1-8b-ft2")."""
    base, again = ENGINE_MODELS[(i - 1) % len(ENGINE_MODELS)], (i - 1) // len(ENGINE_MODELS)
    return f"{base}-ft{again + 1}" if again else base


def generated_name(platform: str, nodes: int, lanes: int = 1, engines: int = 0) -> str:
    """The name a generated rack's profile carries: enough to make it again (`get_profile`)."""
    return f"{platform}-n{nodes}" + (f"-l{lanes}" if lanes != 1 else "") + (f"-e{engines}" if engines else "")


def thor_n(nodes: int, lanes: int = 1, engines: int = 0) -> Profile:
    """N Thors on one switch, as thor5 is built: node i at 10.10.0.(10+i), its lanes in switch
    ports 4(i-1)+1.., cables labelled thor-i/k; more than one lane is a bond (its lanes join at
    step 8). With engines, thor-1 runs the agent and nodes thor-1..thor-E one engine each."""
    bonded = lanes > 1
    node_specs = [_thor_node(i, lanes, bonded, 1, 8) for i in range(1, nodes + 1)]
    # as on thor5: the agent's own node serves on 127.0.0.1, the others on their cluster address
    served = [EngineSpec(_model(i), f"thor-{i}", 8081,
                         host="127.0.0.1" if i == 1 else f"thor-{i}", listen="127.0.0.1" if i == 1 else f"10.10.0.{10 + i}",
                         tokens_per_s=40.0, tokens_per_s_floor=30.0, default_listen=i != 1)
              for i in range(1, min(engines, nodes) + 1)]
    profile = _thor_profile(
        generated_name("thor", nodes, lanes, engines), f"thor-{nodes}", node_specs, served,
        agent_node="thor-1" if served else None,
        description=f"{nodes} Jetson AGX Thors, {lanes} 25 GbE lane{'s' * (lanes > 1)} each"
                    + (" bonded (802.3ad, layer3+4)" if bonded else "")
                    + (f", {len(served)} engine{'s' * (len(served) > 1)} behind the agent on thor-1" if served else ""))
    profile.switch["ports"] = max(24, 4 * nodes)
    return profile


def spark_n(nodes: int) -> Profile:
    """N DGX Sparks whose cabled CX7 port is in a switch: every node's two logical interfaces on
    the two CX7 subnets, as spark2 has them over one cable."""
    profile = spark2()
    profile.nodes = [_spark_node(i) for i in range(1, nodes + 1)]
    profile.name, profile.cluster_name = generated_name("spark", nodes), f"spark-{nodes}"
    profile.sparkrun_cluster = profile.cluster_name
    profile.description = f"{nodes} DGX Sparks, their CX7 ports in one switch (two logical links each)"
    return profile


def get_profile(name: str) -> Profile:
    if name in PROFILES:
        return PROFILES[name]()
    made = re.fullmatch(r"(thor|spark)-n(\d+)(?:-l(\d+))?(?:-e(\d+))?", name)
    if made:
        platform, nodes, lanes, engines = made[1], int(made[2]), int(made[3] or 1), int(made[4] or 0)
        return generate(platform, nodes, lanes, engines)
    from .util import SimError
    raise SimError(f"no profile named {name!r}; choose one of: {', '.join(PROFILES)}, "
                   f"or {' / '.join(GENERATED)} --nodes N")


def generate(platform: str, nodes: int, lanes: int = 1, engines: int = 0) -> Profile:
    """A rack of `nodes` nodes of a platform, checked against what the simulator can build."""
    from .util import SimError
    if not 2 <= nodes <= MAX_SIM_NODES:
        raise SimError(f"--nodes {nodes}: a generated rack has 2 to {MAX_SIM_NODES} nodes")
    if platform == "thor":
        if not 1 <= lanes <= 4:
            raise SimError(f"--lanes {lanes}: a Thor has 1 to 4 25 GbE lanes")
        if not 0 <= engines <= nodes:
            raise SimError(f"--engines {engines}: 0 to {nodes} (one engine per node at most)")
        return thor_n(nodes, lanes, engines)
    if lanes != 1 or engines:
        raise SimError("--lanes and --engines are Thor options (a Spark has its CX7 port)")
    return spark_n(nodes)


# --- the modelled hardware of one node (what the stand-ins print) -----------------------------

THOR_LANE_MODES = ["10000baseT/Full", "25000baseCR/Full", "25000baseSR/Full"]
SPARK_CX7_MODES = ["100000baseCR4/Full", "200000baseCR4/Full", "200000baseSR4/Full"]


def _jobs_on(profile: Profile, node: str) -> dict[str, list[dict]]:
    jobs: dict[str, list[dict]] = {}
    for j in profile.sharing.jobs if profile.sharing else []:
        if j.node == node:
            jobs.setdefault(j.person, []).append({"unit": j.unit, "runtime_max": j.runtime_max})
    return jobs


# what a healthy DAC's RS-FEC corrects per GB received (a few: a pre-FEC BER well under 1e-8);
# the fault marginal-cable raises it and adds uncorrectable blocks and CRC errors, enough that one
# 3 s measurement of a lane at the rack's scale (about 9 MB) counts a few of each
HEALTHY_LANE_ERRORS = {"fec_corrected": 20, "fec_uncorrectable": 0, "crc": 0}
MARGINAL_LANE_ERRORS = {"fec_corrected": 60000, "fec_uncorrectable": 400, "crc": 400}


def node_model(profile: Profile, node: NodeSpec, mac_of) -> dict:
    """The per-node state file: everything a namespace cannot have."""
    ifaces: dict[str, dict] = {}
    if node.platform == "thor":
        for lane in node.lanes:
            ifaces[lane.name] = {
                "kind": "lane", "speed": profile.lane_rate_mbps, "duplex": "Full",
                "port": "Direct Attach Copper", "autoneg": "off", "modes": THOR_LANE_MODES,
                "fec_configured": ["RS"] if profile.switch else ["Auto"],
                "fec_active": (profile.switch or {}).get("fec", "RS"),
                "supported_fec": ["None", "RS", "BASER"], "mac": mac_of(lane.name),
                "errors_per_gb": HEALTHY_LANE_ERRORS,
            }
        ifaces[node.mgmt_iface] = {
            "kind": "mgmt", "speed": 5000, "duplex": "Full", "port": "Twisted Pair", "autoneg": "on",
            "modes": ["1000baseT/Full", "2500baseT/Full", "5000baseT/Full"], "fec_configured": ["Not reported"],
            "fec_active": "None", "supported_fec": [], "mac": mac_of(node.mgmt_iface)}
    else:
        for c in node.cx7:
            ifaces[c.name] = {
                "kind": "cx7", "speed": profile.lane_rate_mbps, "duplex": "Full",
                "port": "Direct Attach Copper", "autoneg": "on", "modes": SPARK_CX7_MODES,
                "fec_configured": ["Auto"], "fec_active": "RS" if c.address else "None",
                "supported_fec": ["Auto", "Off", "RS", "LLRS"], "mac": mac_of(c.name),
                "rdma_device": c.rdma_device, "cabled": bool(c.link)}
        ifaces[node.mgmt_iface] = {
            "kind": "mgmt", "speed": 10000, "duplex": "Full", "port": "Twisted Pair", "autoneg": "on",
            "modes": ["1000baseT/Full", "2500baseT/Full", "5000baseT/Full", "10000baseT/Full"],
            "fec_configured": ["Not reported"], "fec_active": "None", "supported_fec": [],
            "mac": mac_of(node.mgmt_iface)}
    model = {
        "node": node.name,
        "platform": node.platform,
        "cluster": profile.cluster_name,
        "cluster_nodes": [n.name for n in profile.nodes],
        "profile": profile.name,
        "interfaces": ifaces,
        "release": copy.deepcopy(profile.release),
        "gpu": ({"name": "NVIDIA Thor", "bus_id": "00000000:01:00.0", "compute_cap": "11.0",
                 "persistence": "Off", "perf": "N/A", "power": "N/A", "temp": 37}
                if node.platform == "thor" else
                {"name": "NVIDIA GB10", "bus_id": "0000000F:01:00.0", "compute_cap": "12.1",
                 "persistence": "On", "perf": "P8", "power": "3W", "temp": 46}),
        "nvpmodel": {"name": "MAXN", "id": 0} if node.platform == "thor" else None,
        # jetson_clocks --show of a Thor (14 cores; its GPU's two devfreq domains) after `sudo jetson_clocks`,
        # as the profile's site asks: the maxima of a real Thor in MAXN; the minima, which unlocked clocks
        # fall back to, are not from a real Thor
        "clocks": {"cpus": 14, "cpu_khz": [972000, 2601000],
                   "gpu_hz": {"gpu-gpc-0": [306000000, 1575000000], "gpu-nvd-0": [345000000, 1692000000]},
                   "locked": True} if node.platform == "thor" else None,
        "bond": None,
        "roce_gbps": profile.roce_gbps_per_link,
        "nccl_busbw_gbs": profile.nccl_busbw_gbs,
        "scale": profile.scale,
        # what a namespace cannot have: a slice holder's user manager (its transient units) and
        # chrony's view of the clock
        "user_jobs": _jobs_on(profile, node.name),
        "clock_offset_s": -0.000004211,
        # the head's Docker image store (reference -> image id), which sparkrun launches from
        "docker_images": {image: "sha256:" + hashlib.sha256(image.encode()).hexdigest()
                          for image in profile.images} if node is profile.nodes[0] else {},
    }
    if node.bond_lanes:
        model["bond"] = {"name": "bond0", "lanes": list(node.bond_lanes), "mode": "802.3ad",
                         "xmit_hash_policy": "layer3+4", "miimon": 100, "mac": mac_of(node.bond_lanes[0])}
    return model
