"""Faults planted in a running rack, and healed.

Each fault changes the real thing where one exists (a link taken down, a key removed from
authorized_keys, a server killed or bound elsewhere, sshd stopped) and the node's model only
where nothing real exists (the PHY's speed and FEC, release files, an engine's speed). Every
planted fault is recorded with what heal needs to put back exactly what was there.

    plant(rack, "thor-2", "lane-down", ["mgbe1_0"])
    heal(rack, "thor-2", "lane-down")
    heal_all(rack)
"""

from __future__ import annotations

import copy
import datetime
import os
import re
import shlex
import signal
import time
from pathlib import Path

from rackproof.inventory import tomltext
from . import lifeevents, lldp, node as nodemod, profiles, slurm, sparkrun
from .util import SimError, batch, pid_alive, run, wait_until


# --- planting --------------------------------------------------------------------------------

def plant(rack, node: str, kind: str, args: list[str]) -> str:
    if kind not in FAULT_KINDS:
        raise SimError(f"no fault kind {kind!r}; kinds: {', '.join(FAULT_KINDS)}")
    with rack.state.locked():
        rack.record = rack.state.load()
        if rack.record.get("phase") != "up":
            raise SimError(f"rack {rack.name} is not up (it is {rack.record.get('phase') or 'gone'})")
        if node == "bench" and kind in ("ssh-key-missing", "controller-disk-full"):
            spec = None
        else:
            spec = rack.node_spec(node)
        for f in rack.record.get("faults", []):
            if f["node"] == node and f["kind"] == kind and (f["args"] == list(args) or not args or not f["args"]):
                raise SimError(f"{kind} is already planted on {node} ({f['target']}): heal it first")
        target, undo, said = _PLANT_AND_UNDO[kind][0](rack, spec, node, list(args))
        rack.record.setdefault("faults", []).append(
            {"node": node, "kind": kind, "args": list(args), "target": target, "undo": undo, "at": time.time()})
        rack.state.save(rack.record)
    return f"planted {kind} on {node}: {said}"


def heal(rack, node: str, kind: str, args: list[str] | None = None) -> str:
    with rack.state.locked():
        rack.record = rack.state.load()
        faults = rack.record.get("faults", [])
        matches = [f for f in faults if f["node"] == node and f["kind"] == kind
                   and (not args or f["args"] == list(args) or f["target"] == " ".join(args))]
        if not matches:
            raise SimError(f"no {kind} fault is planted on {node}")
        f = matches[-1]
        spec = None if node == "bench" else rack.node_spec(node)
        _PLANT_AND_UNDO[kind][1](rack, spec, node, f["target"], f["undo"])
        faults.remove(f)
        rack.state.save(rack.record)
    return f"healed {kind} on {node} ({f['target']})"


def heal_all(rack) -> list[str]:
    out = []
    while True:
        faults = rack.state.load().get("faults", [])
        if not faults:
            break
        f = faults[-1]
        out.append(heal(rack, f["node"], f["kind"], f["args"]))
    return out or ["no fault was planted"]


# --- helpers ---------------------------------------------------------------------------------

def _lane(spec, args, *, bonded: bool = False, default_index: int = 0) -> str:
    if spec.platform != "thor":
        raise SimError(f"{spec.name} has no switch lanes (a Spark: use roce-link-down)")
    names = [lane.name for lane in spec.lanes if lane.connected]
    if bonded:
        if not spec.bond_lanes:
            raise SimError(f"{spec.name} has no bond in this profile")
        names = list(spec.bond_lanes)
    lane = args[0] if args else names[min(default_index, len(names) - 1)]
    if lane not in names:
        raise SimError(f"{spec.name} has no cabled {'bond member' if bonded else 'lane'} {lane} "
                       f"(choose from {', '.join(names)})")
    return lane


def _model_edit(rack, node: str, fn):
    model = rack.state.load_model(node)
    before = copy.deepcopy(model)
    fn(model)
    rack.state.save_model(node, model)
    return before


def _wait_bond_view(rack, spec, lane: str, status: str) -> None:
    """Give the bond monitor (100 ms poll) the time to follow a lane's change."""
    if not spec.bond_lanes or lane not in spec.bond_lanes:
        return
    path = rack.state.node_dir(spec.name) / "proc" / "net" / "bonding" / "bond0"

    def follows():
        try:
            text = path.read_text()
        except OSError:
            return False
        block = text.split(f"Slave Interface: {lane}\n", 1)
        return len(block) == 2 and block[1].startswith(f"MII Status: {status}")
    try:
        wait_until(f"the bond of {spec.name} following {lane}", follows, 3, 0.05)
    except SimError:
        if not pid_alive(rack.record.get("monitor")):
            raise SimError(f"the bond monitor of rack {rack.name} is not running: the bond of "
                           f"{spec.name} cannot follow {lane}") from None
        raise


def _engine(rack, spec, args):
    engines = [e for e in rack.profile.engines if e.node == spec.name]
    if not engines:
        raise SimError(f"{spec.name} runs no engine in this profile")
    if args and not args[0].replace(".", "").isdigit():
        found = [e for e in engines if e.model == args[0]]
        if not found:
            raise SimError(f"{spec.name} runs no engine {args[0]!r} (it runs {', '.join(e.model for e in engines)})")
        return found[0], args[1:]
    return engines[0], args


def _engine_key(e) -> str:
    return f"{e.model}@{e.port}"


def _kill_engine(rack, spec, e) -> None:
    pid = rack.record["nodes"][spec.name].get("engines", {}).get(_engine_key(e))
    if pid and pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        wait_until(f"engine {e.model} on {spec.name} to stop", lambda: not pid_alive(pid), 5, 0.02)


def _start_engine(rack, spec, e, listen: str) -> None:
    from .util import in_netns, probe_tcp
    n = rack.node(spec.name)
    pid = rack.start_engine(n, e, listen)
    rack.record["nodes"][spec.name].setdefault("engines", {})[_engine_key(e)] = pid
    wait_until(f"engine {e.model} on {spec.name} ({listen}:{e.port})",
               lambda: in_netns(rack.topo.node_ns(spec.name), probe_tcp, listen, e.port), 10)


def _authorized_keys(rack, node: str) -> Path:
    return rack.state.node_dir(node) / "home" / profiles.USER / ".ssh" / "authorized_keys"


def _pubkey_of(rack, src: str) -> str:
    if src == "bench":
        return rack.state.bench_key.with_suffix(".pub").read_text().strip()
    return (rack.state.node_dir(src) / "home" / profiles.USER / ".ssh" / "id_ed25519.pub").read_text().strip()


# --- the kinds -------------------------------------------------------------------------------
# plant(rack, spec, node, args) -> (target, undo, what it did); undo(rack, spec, node, target, undo)

def _p_lane_down(rack, spec, node, args, bonded=False):
    lane = _lane(spec, args, bonded=bonded, default_index=1 if bonded else 0)
    ns, dev = rack.topo.far_end(spec, lane)
    rack.topo.set_far_end(spec, lane, False)
    _wait_bond_view(rack, spec, lane, "down")
    return lane, {}, f"{lane} has no link (switch port {dev} down: the cable is out)"


def _u_lane_down(rack, spec, node, lane, undo):
    rack.topo.set_far_end(spec, lane, True)
    _wait_bond_view(rack, spec, lane, "up")


def _p_lane_slowed(rack, spec, node, args):
    """The lane carries FRACTION of its speed (a tiring module, a shaper left on a switch port)
    while its link and its reported speed stay: a figure that slides but may stay above its floor."""
    lane = _lane(spec, args)
    try:
        fraction = float(args[1]) if len(args) > 1 else 0.9
    except ValueError:
        raise SimError(f"lane-slowed's fraction must be a number, not {args[1]!r}") from None
    if not 0 < fraction < 1:
        raise SimError("lane-slowed's fraction must be between 0 and 1 (of the lane's speed)")
    speed = rack.state.load_model(node)["interfaces"][lane]["speed"]
    rack.topo.set_rate(spec, lane, speed * rack.profile.scale * fraction)
    return lane, {"speed": speed}, f"{lane} carries {fraction:.0%} of its speed; ethtool still says {speed}Mb/s"


def _u_lane_slowed(rack, spec, node, lane, undo):
    rack.topo.set_rate(spec, lane, undo["speed"] * rack.profile.scale)


def _p_bond_lane_down(rack, spec, node, args):
    lane, undo, said = _p_lane_down(rack, spec, node, args, bonded=True)
    return lane, undo, said + "; the bond rehashes over the other lanes"


def _p_port_10g(rack, spec, node, args):
    lane = _lane(spec, args)
    before = _model_edit(rack, node, lambda m: m["interfaces"][lane].update(speed=10000))
    rack.topo.set_rate(spec, lane, 10000 * rack.profile.scale)
    return lane, {"speed": before["interfaces"][lane]["speed"]}, \
        f"{lane} runs at 10G: ethtool says 10000Mb/s, the link carries {10000 * rack.profile.scale:g} Mbit/s"


def _u_port_10g(rack, spec, node, lane, undo):
    _model_edit(rack, node, lambda m: m["interfaces"][lane].update(speed=undo["speed"]))
    rack.topo.set_rate(spec, lane, undo["speed"] * rack.profile.scale)


def _p_fec(rack, spec, node, args):
    lane = _lane(spec, args[:1])
    mode = args[1] if len(args) > 1 else ("BaseR" if (rack.profile.switch or {}).get("fec") != "BaseR" else "RS")
    if mode not in ("RS", "BaseR", "Off", "None", "Auto", "LLRS"):
        raise SimError(f"{mode!r} is not an FEC mode (RS, BaseR, Off, None, Auto, LLRS)")
    before = _model_edit(rack, node, lambda m: m["interfaces"][lane].update(fec_configured=[mode], fec_active=mode))
    iface = before["interfaces"][lane]
    return lane, {"fec_configured": iface["fec_configured"], "fec_active": iface["fec_active"]}, \
        f"{lane} uses FEC {mode}, the switch port {(rack.profile.switch or {}).get('fec')} (the link stays up)"


def _u_fec(rack, spec, node, lane, undo):
    _model_edit(rack, node, lambda m: m["interfaces"][lane].update(**undo))


def _p_ssh_key(rack, spec, node, args):
    if len(args) != 1:
        raise SimError("ssh-key-missing wants the peer: rackproof sim fault SRC ssh-key-missing DST "
                       "(SRC's key is removed from DST's authorized_keys)")
    dst = args[0]
    rack.node_spec(dst)
    if node == dst:
        raise SimError("ssh-key-missing wants two different nodes")
    path = _authorized_keys(rack, dst)
    text = path.read_text()
    key = _pubkey_of(rack, node)
    kept = [line for line in text.splitlines() if line.strip() != key]
    if len(kept) == len(text.splitlines()):
        raise SimError(f"{node}'s key is not in {dst}'s authorized_keys")
    st = path.stat()
    with open(path, "w") as f:              # same file, same owner and mode
        f.write("\n".join(kept) + "\n")
    os.chown(path, st.st_uid, st.st_gid)
    return dst, {"text": text}, f"{node}'s key is no longer in {dst}:~{profiles.USER}/.ssh/authorized_keys " \
                                f"({node} -> {dst} asks for a password)"


def _u_ssh_key(rack, spec, node, dst, undo):
    path = _authorized_keys(rack, dst)
    with open(path, "w") as f:
        f.write(undo["text"])


def _p_jetpack(rack, spec, node, args):
    other = profiles.THOR_RELEASE_71 if spec.platform == "thor" else profiles.SPARK_RELEASE_OLD
    before = _model_edit(rack, node, lambda m: m.__setitem__("release", copy.deepcopy(other)))
    _write_release_files(rack, spec, other)
    label = other.get("l4t") or f"DGX OS {other.get('dgx_os_version')}"
    return "release", {"release": before["release"]}, \
        f"{node} runs {label} ({', '.join(f'{k} {v}' for k, v in list(other['packages'].items())[:2])})"


def _u_jetpack(rack, spec, node, target, undo):
    _model_edit(rack, node, lambda m: m.__setitem__("release", undo["release"]))
    _write_release_files(rack, spec, undo["release"])


def _write_release_files(rack, spec, release: dict) -> None:
    n = rack.node(spec.name)
    if "nv_tegra_release" in release:
        n.sh("cat > /etc/nv_tegra_release", input=release["nv_tegra_release"])
    if "dgx_release" in release:
        n.sh("cat > /etc/dgx-release", input=release["dgx_release"])


def _p_engine_down(rack, spec, node, args):
    e, _ = _engine(rack, spec, args)
    _kill_engine(rack, spec, e)
    return e.model, {}, f"the {e.model} engine ({e.listen}:{e.port}) is killed"


def _u_engine_down(rack, spec, node, model, undo):
    e, _ = _engine(rack, spec, [model])
    _start_engine(rack, spec, e, e.listen)


def _p_engine_loopback(rack, spec, node, args):
    e, _ = _engine(rack, spec, args)
    if e.listen == "127.0.0.1":
        raise SimError(f"the {e.model} engine on {node} already listens on 127.0.0.1 in this profile")
    _kill_engine(rack, spec, e)
    _start_engine(rack, spec, e, "127.0.0.1")
    return e.model, {}, f"the {e.model} engine listens on 127.0.0.1:{e.port} instead of {e.listen}:{e.port}"


def _u_engine_loopback(rack, spec, node, model, undo):
    e, _ = _engine(rack, spec, [model])
    _kill_engine(rack, spec, e)
    _start_engine(rack, spec, e, e.listen)


def _p_slow(rack, spec, node, args):
    e, rest = _engine(rack, spec, args)
    try:
        factor = float(rest[0]) if rest else 4.0
    except ValueError:
        raise SimError(f"slow-engine's factor must be a number, not {rest[0]!r}") from None
    if factor <= 1:
        raise SimError("slow-engine's factor must be above 1 (how many times slower)")
    before = _model_edit(rack, node, lambda m: m.setdefault("engines", {}).setdefault(e.model, {}).update(slow_factor=factor))
    prev = before.get("engines", {}).get(e.model, {}).get("slow_factor")
    return e.model, {"slow_factor": prev}, f"the {e.model} engine generates {factor:g}x slower " \
                                           f"({e.tokens_per_s / factor:.1f} tokens/s)"


def _u_slow(rack, spec, node, model, undo):
    def fix(m):
        entry = m.setdefault("engines", {}).setdefault(model, {})
        if undo.get("slow_factor") is None:
            entry.pop("slow_factor", None)
        else:
            entry["slow_factor"] = undo["slow_factor"]
    _model_edit(rack, node, fix)


def _set_engine_control(rack, node, model: str, key: str, value) -> dict:
    """One setting of an engine's control entry in the node's model file (sim/engines.py reads
    it per request); what _u_engine_control needs to take it back."""
    before = _model_edit(rack, node, lambda m: m.setdefault("engines", {}).setdefault(model, {}).update({key: value}))
    return {"key": key, "had_entry": model in before.get("engines", {})}


def _u_engine_control(rack, spec, node, model, undo):
    def fix(m):
        engines = m.setdefault("engines", {})
        engines.get(model, {}).pop(undo["key"], None)
        if not undo["had_entry"] and not engines.get(model):
            engines.pop(model, None)
    _model_edit(rack, node, fix)


def _p_stalled(rack, spec, node, args):
    e, _ = _engine(rack, spec, args)
    return e.model, _set_engine_control(rack, node, e.model, "stalled", True), \
        f"the {e.model} engine lists its model and answers /health, and never sends a token"


def _p_stream_stops(rack, spec, node, args):
    """Every streamed answer stops after TOKENS tokens (default 5) and the connection stays open:
    an engine that hangs in the middle of generating."""
    e, rest = _engine(rack, spec, args)
    if rest and not (rest[0].isdigit() and 1 <= int(rest[0]) <= 100):
        raise SimError(f"stream-stops takes a number of tokens from 1 to 100, not {rest[0]!r}")
    tokens = int(rest[0]) if rest else 5
    return e.model, _set_engine_control(rack, node, e.model, "stops_after_tokens", tokens), \
        f"the {e.model} engine stops every streamed answer after {tokens} tokens"


def _p_late_first_token(rack, spec, node, args):
    """The first token of every answer comes SECONDS late (default 20), the rest at the engine's
    rate: an engine that queues requests behind other work, not one that does not generate."""
    e, rest = _engine(rack, spec, args)
    try:
        seconds = float(rest[0]) if rest else 20.0
    except ValueError:
        raise SimError(f"late-first-token's delay must be a number of seconds, not {rest[0]!r}") from None
    if not 0 < seconds <= 300:
        raise SimError("late-first-token's delay must be above 0 and at most 300 seconds")
    return e.model, _set_engine_control(rack, node, e.model, "first_token_delay_s", seconds), \
        f"the {e.model} engine sends its first token after {seconds:g} s, then {e.tokens_per_s:g} tokens/s"


def _cabled(spec, node: str, args: list[str], kind: str, by: str = "name") -> tuple[str, list[str]]:
    """The cabled CX7 link a fault names, by its interface (`name`) or its RoCE device (`rdma_device`),
    default the first cabled one; and the rest of the fault's args."""
    cabled = [getattr(c, by) for c in spec.cx7 if c.link]
    if not cabled:
        raise SimError(f"{node} has no CX7 links ({kind} is for a Spark)")
    chosen = args[0] if args else cabled[0]
    if chosen not in cabled:
        what = "CX7 interface" if by == "name" else "RoCE device"
        raise SimError(f"{node} has no cabled {what} {chosen} (choose from {', '.join(cabled)})")
    return chosen, args[1:]


def _p_roce(rack, spec, node, args):
    iface, _ = _cabled(spec, node, args, "roce-link-down")
    _cable_link(rack, spec, iface, False)
    return iface, {}, f"the QSFP link of {iface} is down at both ends (ibdev2netdev shows it Down on " \
                      f"both nodes; RoCE, NCCL and SSH over it fail)"


def _u_roce(rack, spec, node, iface, undo):
    _cable_link(rack, spec, iface, True)


def _cable_link(rack, spec, iface: str, up: bool) -> None:
    """Both ends of one logical link of the direct cable (a fault of the cable, not of one port)."""
    link = next(c.link for c in spec.cx7 if c.name == iface)
    for other in rack.profile.nodes:
        for c in other.cx7:
            if c.link == link:
                rack.topo.set_far_end(other, c.name, up)


def _p_unreachable(rack, spec, node, args):
    rack.topo.set_far_end(spec, spec.mgmt_iface, False)
    return spec.mgmt_iface, {}, f"{node}'s {spec.mgmt_iface} has no link: the controller cannot reach it"


def _u_unreachable(rack, spec, node, iface, undo):
    rack.topo.set_far_end(spec, iface, True)


def _p_duplicate_address(rack, spec, node, args):
    """The node is given another node's cluster address instead of its own (a copied nmcli line)."""
    if len(args) != 1:
        raise SimError("duplicate-address needs the node whose address to take: duplicate-address thor-5 thor-4")
    other = rack.node_spec(args[0])
    if not (spec.address and other.address) or other.name == spec.name:
        raise SimError(f"{node} and {args[0]} must be two nodes with cluster addresses")
    dev = _cluster_iface(spec)
    prefix = spec.address.split("/")[1]
    taken = f"{other.ip}/{prefix}"
    rack.node(node).sh(f"ip addr del {spec.address} dev {dev} && ip addr add {taken} dev {dev}")
    return args[0], {"dev": dev, "taken": taken}, f"{node} {dev} holds {other.ip} ({args[0]}'s) instead of {spec.ip}"


def _u_duplicate_address(rack, spec, node, target, undo):
    rack.node(node).sh(f"ip addr del {undo['taken']} dev {undo['dev']}; ip addr add {spec.address} dev {undo['dev']}")


def _p_ssh_hang(rack, spec, node, args):
    pid = rack.record["nodes"][node].get("sshd")
    if not pid_alive(pid):
        raise SimError(f"sshd of {node} is not running")
    os.kill(pid, signal.SIGSTOP)
    return "sshd", {"pid": pid}, f"{node}'s sshd accepts connections and never answers (stopped)"


def _u_ssh_hang(rack, spec, node, target, undo):
    try:
        os.kill(undo["pid"], signal.SIGCONT)
    except ProcessLookupError:
        pass


def _p_life_event(event: str, default_seconds: float):
    """sshd-restart / node-reboot [SECONDS] [WHEN] (rackproof_sim.lifeevents): a watcher makes it
    happen at the moment WHEN names, the node back after SECONDS."""
    def plant(rack, spec, node, args):
        if len(args) > 2:
            raise SimError(f"{event} takes at most SECONDS and WHEN: {event} {node} 3 first-connect")
        try:
            seconds = float(args[0]) if args else default_seconds
        except ValueError:
            raise SimError(f"{event}: SECONDS must be a number, not {args[0]!r}") from None
        when = args[1] if len(args) > 1 else "now"
        if not (0 <= seconds <= lifeevents.WHEN_WAIT_S) or not lifeevents.valid_when(when):
            raise SimError(f"{event}: SECONDS from 0 to {lifeevents.WHEN_WAIT_S}, WHEN now, first-connect or a "
                           f"program's name (ssh, iperf3); got {seconds:g} {when!r}")
        sshd = rack.record["nodes"][node].get("sshd")
        if not pid_alive(sshd):
            raise SimError(f"sshd of {node} is not running")
        watcher = lifeevents.start(rack.state, node, event, seconds, when)
        if when == "first-connect":   # sshd stopped and the controller's SYN watched before the run can connect
            wait_until(f"the first-connect watcher of {node} stopping its sshd",
                       lambda: not pid_alive(sshd) or not pid_alive(watcher), 30)
            if not pid_alive(watcher):
                raise SimError(f"{event} on {node}: its watcher ended at once (see {node}'s log/lifeevents.log)")
        return "sshd", {"watcher": watcher}, f"{node}: {lifeevents.describe(event, seconds, when)}"
    return plant


def _u_life_event(rack, spec, node, target, undo):
    """The watcher stopped, sshd listening, the node's first boot id back."""
    lifeevents.stop_watcher(undo["watcher"])
    n = rack.node(node)
    lifeevents.first_boot(rack.state, node, n.pid)
    if not pid_alive(rack.record["nodes"][node].get("sshd")):
        rack.record["nodes"][node]["sshd"] = n.start_sshd()


def _p_address_moved(rack, spec, node, args):
    """The cluster address taken off its interface and put on another (a connection edited by
    hand): a change, as a change-control snapshot sees it."""
    dev = _cluster_iface(spec)
    to = args[0] if args else next((lane.name for lane in spec.lanes if lane.name != dev), None)
    if not spec.address or to is None or to == dev:
        raise SimError(f"{node}: address-moved needs an interface other than {dev} to move {spec.address} to")
    rack.node(node).sh(f"ip addr del {spec.address} dev {dev} && ip addr add {spec.address} dev {to}")
    return to, {"dev": dev}, f"{spec.address} moved from {dev} to {to}"


def _u_address_moved(rack, spec, node, to, undo):
    rack.node(node).sh(f"ip addr del {spec.address} dev {to}; ip addr add {spec.address} dev {undo['dev']}")


def _netplan_files(rack, node: str) -> list[Path]:
    return sorted((rack.state.node_dir(node) / "etc.upper" / "netplan").glob("*.yaml"))


def _p_netplan_mode(rack, spec, node, args):
    """A netplan file made readable by everyone (netplan warns; a change that did a chmod)."""
    files = _netplan_files(rack, node)
    path = next((f for f in files if not args or f.name == args[0]), None)
    if path is None:
        raise SimError(f"{node} has no netplan file {args[0] if args else ''}".rstrip())
    mode = path.stat().st_mode & 0o7777
    os.chmod(path, 0o644)
    return f"/etc/netplan/{path.name}", {"mode": mode}, f"/etc/netplan/{path.name} mode {mode:o} -> 644"


def _u_netplan_mode(rack, spec, node, target, undo):
    os.chmod(rack.state.node_dir(node) / "etc.upper" / "netplan" / Path(target).name, undo["mode"])


def _p_hosts_edited(rack, spec, node, args):
    """One /etc/hosts line of the node edited: another node's name at another address."""
    hosts = rack.state.node_dir(node) / "etc.upper" / "hosts"
    text = hosts.read_text()
    name = args[0] if args else next(n.name for n in rack.profile.nodes if n.name != node)
    address = args[1] if len(args) > 1 else "10.10.0.99"
    lines = text.splitlines()
    index = next((k for k, line in enumerate(lines) if name in line.split()[1:]), None)
    if index is None:
        raise SimError(f"{node}'s /etc/hosts has no line for {name}")
    lines[index] = "\t".join([address, *lines[index].split()[1:]])
    hosts.write_text("\n".join(lines) + "\n")
    return name, {"text": text}, f"/etc/hosts line of {name} now says {address}"


def _u_hosts_edited(rack, spec, node, name, undo):
    (rack.state.node_dir(node) / "etc.upper" / "hosts").write_text(undo["text"])


# --- step 9: Slurm, slices, a closed network ---------------------------------------------------

def _sharing(rack, spec):
    if not rack.profile.sharing:
        raise SimError(f"rack {rack.name} has no Slurm or slice holders (profile {rack.profile.name}; use thor5)")
    return rack.profile.sharing


def _holder(rack, spec, args) -> str:
    """The login named, else the one holding the node now, else the first holder."""
    sharing = _sharing(rack, spec)
    if args:
        if args[0] not in sharing.holders:
            raise SimError(f"{args[0]} is not a slice holder (holders: {', '.join(sharing.holders)})")
        return args[0]
    return next((r.person for r in sharing.reservations if r.node == spec.name and r.start_h <= 0 < r.end_h),
                sharing.holders[0])


def _controller(rack, spec):
    return rack.node(_sharing(rack, spec).slurm_controller)


def _p_slurmd_down(rack, spec, node, args):
    _sharing(rack, spec)
    pid = rack.record["nodes"][node].get("slurmd")
    if not pid_alive(pid):
        raise SimError(f"slurmd of {node} is not running")
    os.kill(pid, signal.SIGTERM)
    wait_until(f"slurmd of {node} to stop", lambda: not pid_alive(pid), 5, 0.02)
    return "slurmd", {}, f"{node}'s slurmd stopped (slurmctld still lists the node)"


def _u_slurmd_down(rack, spec, node, target, undo):
    # a job launched meanwhile stays "completing" on the node: an admin's down and resume
    # clears it, and slurmd's fresh registration marks the node responding
    ctl = _controller(rack, spec)
    ctl.sh(f"scontrol update nodename={node} state=down reason='rackproof sim heal'; "
           f"scontrol update nodename={node} state=resume")
    n = rack.node(node)
    pid = rack.record["nodes"][node].get("slurmd")
    if not pid_alive(pid):
        rack.record["nodes"][node]["slurmd"] = n.spawn(["slurmd", "-D"], n.dir / "log" / "slurmd.out")
    wait_until(f"{node} idle again in sinfo", lambda: ctl.sh(f"sinfo -h -N -n {node} -o %T", check=False)
               .stdout.strip() == "idle", 20, 0.2)


def _p_node_drained(rack, spec, node, args):
    reason = " ".join(args) or "fan replaced, burn-in pending"
    _controller(rack, spec).sh(f"scontrol update nodename={node} state=drain reason={shlex.quote(reason)}")
    return reason, {}, f"{node} drained in Slurm (reason: {reason})"


def _u_node_drained(rack, spec, node, target, undo):
    _controller(rack, spec).sh(f"scontrol update nodename={node} state=resume")


def _munge_key(rack, node: str) -> Path:
    return rack.state.node_dir(node) / "etc.upper" / "munge" / "munge.key"


def _restart_munged(rack, node: str) -> None:
    """munged reads its key when it starts."""
    pid = rack.record["nodes"][node].get("munged")
    if pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        wait_until(f"munged of {node} to stop", lambda: not pid_alive(pid), 5, 0.02)
    n = rack.node(node)
    rack.record["nodes"][node]["munged"] = slurm.spawn_munged(n)
    slurm.wait_munged(n)


def _p_munge_key_differs(rack, spec, node, args):
    """Another munge key on the node (one made there by hand, or copied from another cluster):
    its credentials no longer decode on the others, nor theirs on it."""
    if node == _sharing(rack, spec).slurm_controller:
        raise SimError(f"{node} runs slurmctld: plant munge-key-differs on another node")
    path = _munge_key(rack, node)
    path.write_bytes(slurm.new_key())     # same file, same owner and mode 400
    _restart_munged(rack, node)
    return "/etc/munge/munge.key", {}, f"{node}'s munge key differs from the controller's (munged restarted)"


def _u_munge_key_differs(rack, spec, node, target, undo):
    _munge_key(rack, node).write_bytes(_munge_key(rack, _sharing(rack, spec).slurm_controller).read_bytes())
    _restart_munged(rack, node)
    _u_slurmd_down(rack, spec, node, "slurmd", {})   # the node back to idle, should slurmctld have marked it


def _p_partition_unlimited(rack, spec, node, args):
    partition = _sharing(rack, spec).partition
    _controller(rack, spec).sh(f"scontrol update partitionname={partition} maxtime=unlimited")
    return partition, {}, f"partition {partition} has no MaxTime (a job without --time never ends)"


def _u_partition_unlimited(rack, spec, node, partition, undo):
    hours = _sharing(rack, spec).max_time_hours
    _controller(rack, spec).sh(f"scontrol update partitionname={partition} maxtime={hours}:00:00")


def _p_holder_sudo(rack, spec, node, args):
    login = _holder(rack, spec, args)
    rack.node(node).sh(f"usermod -aG sudo {shlex.quote(login)}")
    return login, {}, f"{login} is in {node}'s sudo group"


def _u_holder_sudo(rack, spec, node, login, undo):
    rack.node(node).sh(f"gpasswd -d {shlex.quote(login)} sudo >/dev/null")


def _p_home_open(rack, spec, node, args):
    login = _holder(rack, spec, args)
    home = rack.state.node_dir(node) / "home" / login
    mode = home.stat().st_mode & 0o7777
    os.chmod(home, 0o755)
    return login, {"mode": mode}, f"/home/{login} on {node}: mode {mode:o} -> 755"


def _u_home_open(rack, spec, node, login, undo):
    os.chmod(rack.state.node_dir(node) / "home" / login, undo["mode"])


def _p_job_no_limit(rack, spec, node, args):
    login = _holder(rack, spec, args)
    unit = "run-u42.service"     # what systemd-run names a job given no --unit
    pid = rack.node(node).spawn_user(["sleep", "infinity"], f"job-{login}-{unit}.log", login=login)
    _model_edit(rack, node, lambda m: m["user_jobs"].setdefault(login, []).append({"unit": unit, "runtime_max": None}))
    return f"{unit} of {login}", {"pid": pid, "login": login, "unit": unit}, \
        f"{login} runs {unit} on {node} without RuntimeMaxSec"


def _u_job_no_limit(rack, spec, node, target, undo):
    def remove(m):
        m["user_jobs"][undo["login"]] = [j for j in m["user_jobs"][undo["login"]] if j["unit"] != undo["unit"]]
    _model_edit(rack, node, remove)
    if pid_alive(undo["pid"]):
        os.kill(undo["pid"], signal.SIGTERM)


def _p_overlap(rack, spec, node, args):
    """A second person's row in cluster.toml over the current holder's window in the shared
    calendar: an hour around now."""
    sharing = _sharing(rack, spec)
    current = next((r for r in sharing.reservations if r.node == node and r.start_h <= 0 < r.end_h), None)
    if current is None:
        raise SimError(f"nobody holds {node} now in the calendar")
    other = next(h for h in sharing.holders if h != current.person)
    now = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    row = tomltext.value({"person": other, "node": node, "start": now - datetime.timedelta(minutes=30),
                          "end": now + datetime.timedelta(minutes=30)})
    text = rack.state.inventory.read_text()
    holders = text.index("\n", text.index("[slices]\nholders = ")) + 1
    rack.state.inventory.write_text(f"{text[:holders]}reservations = [{row}]\n{text[holders:]}")
    return other, {"text": text}, f"{other} also holds {node} during {current.person}'s window"


def _u_overlap(rack, spec, node, target, undo):
    rack.state.inventory.write_text(undo["text"])


def _p_stray_job(rack, spec, node, args):
    """A process of a slice holder who does not hold the node now (a job that outlived its window)."""
    sharing = _sharing(rack, spec)
    holding = {r.person for r in sharing.reservations if r.node == node and r.start_h <= 0 < r.end_h}
    login = args[0] if args else next(h for h in sharing.holders if h not in holding)
    _holder(rack, spec, [login])
    pid = rack.node(node).spawn_user(["sleep", "infinity"], f"stray-{login}.log", login=login)
    return login, {"pid": pid}, f"{login} has a process on {node} outside any window of theirs"


def _u_stray_job(rack, spec, node, login, undo):
    if pid_alive(undo["pid"]):
        os.kill(undo["pid"], signal.SIGTERM)


def _p_login_missing(rack, spec, node, args):
    login = _holder(rack, spec, args)
    rack.node(node).sh(f"userdel {shlex.quote(login)}")
    return login, {}, f"{login} has no login on {node} (userdel; the home stays)"


def _u_login_missing(rack, spec, node, login, undo):
    uid = rack.record["holders"][login]
    rack.node(node).sh(f"groupadd -g {uid} {shlex.quote(login)} 2>/dev/null; "
                       f"useradd -u {uid} -g {uid} -d /home/{shlex.quote(login)} -s /bin/bash {shlex.quote(login)}")


def _p_forwarding(rack, spec, node, args):
    rack.node(node).sh("sysctl -q -w net.ipv4.ip_forward=1")
    return "net.ipv4.ip_forward", {}, f"{node} forwards IPv4 packets between its interfaces"


def _u_forwarding(rack, spec, node, target, undo):
    rack.node(node).sh("sysctl -q -w net.ipv4.ip_forward=0")


def _p_open_listener(rack, spec, node, args):
    port = int(args[0]) if args and args[0].isdigit() else 9999
    n = rack.node(node)
    pid = n.spawn_user([nodemod.PY, "-S", "-c", "import socket, time\ns = socket.socket()\n"
                        f"s.bind(('0.0.0.0', {port}))\ns.listen()\ntime.sleep(86400)"], f"listener-{port}.log")
    wait_until(f"a listener on {node} 0.0.0.0:{port}",
               lambda: f":{port} " in n.sh("ss -Hltn", check=False).stdout, 5, 0.02)
    return str(port), {"pid": pid}, f"a python3 server listens on {node} 0.0.0.0:{port}"


def _u_open_listener(rack, spec, node, target, undo):
    if pid_alive(undo["pid"]):
        os.kill(undo["pid"], signal.SIGTERM)


def _p_stray_iperf3(rack, spec, node, args):
    """Someone's own `iperf3 -s`, left running on every address under the operator's login:
    the same program and user as the suite's measurement servers, on a port of their range."""
    port = int(args[0]) if args and args[0].isdigit() else 5201
    n = rack.node(node)
    pid = n.spawn_user(["iperf3", "-s", "-p", str(port)], f"stray-iperf3-{port}.log")
    wait_until(f"iperf3 -s on {node} port {port}", lambda: f":{port} " in n.sh("ss -Hltn", check=False).stdout, 5, 0.02)
    return str(port), {"pid": pid}, f"someone's iperf3 -s listens on {node} port {port}, every address"


def _p_clock_off(rack, spec, node, args):
    seconds = float(args[0]) if args else 600.0
    before = _model_edit(rack, node, lambda m: m.update(clock_offset_s=seconds))
    return f"{seconds:g} s", {"offset": before["clock_offset_s"]}, f"{node}'s clock is {seconds:g} s off (chrony)"


def _u_clock_off(rack, spec, node, target, undo):
    _model_edit(rack, node, lambda m: m.update(clock_offset_s=undo["offset"]))


def _p_netplan_down_twin(rack, spec, node, args):
    """40-cx7.yaml written for the other port of the pair (the guide's interface-name trap):
    it names the Down interfaces, with the addresses of the Up ones."""
    path = rack.state.node_dir(node) / "etc.upper" / "netplan" / "40-cx7.yaml"
    if not spec.cx7 or not path.exists():
        raise SimError(f"{node} has no CX7 netplan file (a Spark: use spark2)")
    text = path.read_text()
    swapped = text
    for c in spec.cx7:
        if c.address:
            down = c.name.replace("f1np1", "f0np0")
            swapped = swapped.replace(f"    {c.name}:", f"    {down}:")
    path.write_text(swapped)
    return "/etc/netplan/40-cx7.yaml", {"text": text}, f"{node}'s 40-cx7.yaml names the Down twins (f0np0)"


def _u_netplan_down_twin(rack, spec, node, target, undo):
    (rack.state.node_dir(node) / "etc.upper" / "netplan" / "40-cx7.yaml").write_text(undo["text"])


# --- sparkrun on a Spark head -------------------------------------------------------------------

def _sparkrun_head(rack, spec):
    if not rack.profile.sparkrun_cluster:
        raise SimError(f"rack {rack.name} defines no sparkrun cluster (profile {rack.profile.name}; use spark2)")
    return rack.node(rack.profile.nodes[0].name), rack.profile.sparkrun_cluster


def _p_sparkrun_hosts(hosts_of):
    def plant(rack, spec, node, args):
        head, name = _sparkrun_head(rack, spec)
        hosts = hosts_of(rack.profile)
        sparkrun.update_hosts(head, name, hosts)
        return name, {}, f"sparkrun cluster {name} on {head.spec.name} lists {', '.join(hosts)}"
    return plant


def _u_sparkrun_hosts(rack, spec, node, name, undo):
    head, _ = _sparkrun_head(rack, spec)
    sparkrun.update_hosts(head, name, sparkrun.hosts(rack.profile))


def _p_sparkrun_transfer_mgmt(rack, spec, node, args):
    head, name = _sparkrun_head(rack, spec)
    sparkrun.set_transfer_interface(head, name, "mgmt")
    return name, {}, f"sparkrun cluster {name} on {head.spec.name} transfers over the management network"


def _u_sparkrun_transfer_mgmt(rack, spec, node, name, undo):
    head, _ = _sparkrun_head(rack, spec)
    sparkrun.set_transfer_interface(head, name, "cx7")


def _p_sparkrun_other_user(rack, spec, node, args):
    """The definition's user a login the nodes do not have (`--user ubuntu`, sparkrun's own
    example): sparkrun's SSH to every host is refused, the nodes' SSH mesh is whole."""
    head, name = _sparkrun_head(rack, spec)
    user = args[0] if args else "ubuntu"
    if user == nodemod.USER:
        raise SimError(f"{user} is the rack's login: sparkrun-other-user wants another")
    sparkrun.set_user(head, name, user)
    return name, {}, f"sparkrun cluster {name} on {head.spec.name} logs in as {user}, the nodes' login is {nodemod.USER}"


def _u_sparkrun_other_user(rack, spec, node, name, undo):
    head, _ = _sparkrun_head(rack, spec)
    sparkrun.set_user(head, name, nodemod.USER)


def _p_sparkrun_missing(rack, spec, node, args):
    head, _ = _sparkrun_head(rack, spec)
    path = head.dir / "bin" / "sparkrun"
    text = path.read_text()
    path.unlink()
    return "sparkrun", {"text": text}, f"sparkrun is no longer on {head.spec.name}'s PATH"


def _u_sparkrun_missing(rack, spec, node, target, undo):
    head, _ = _sparkrun_head(rack, spec)
    (head.dir / "bin" / "sparkrun").write_text(undo["text"])
    os.chmod(head.dir / "bin" / "sparkrun", 0o755)


def _p_image_missing(rack, spec, node, args):
    head, _ = _sparkrun_head(rack, spec)
    images = rack.state.load_model(head.spec.name)["docker_images"]
    image = args[0] if args else rack.profile.images[0]
    if image not in images:
        raise SimError(f"{head.spec.name}'s Docker holds no image {image!r} (it has: {', '.join(images) or 'none'})")
    before = _model_edit(rack, head.spec.name, lambda m: m["docker_images"].pop(image))
    return image, {"id": before["docker_images"][image]}, f"{image} is no longer in {head.spec.name}'s Docker"


def _u_image_missing(rack, spec, node, image, undo):
    head, _ = _sparkrun_head(rack, spec)
    _model_edit(rack, head.spec.name, lambda m: m["docker_images"].update({image: undo["id"]}))


def _p_docker_no_access(rack, spec, node, args):
    """The login taken out of the docker group (gpasswd), as on a node set up without the wizard."""
    if spec.platform != "spark":
        raise SimError(f"{node} runs no Docker (a Spark: use spark2)")
    rack.node(node).sh(f"gpasswd -d {nodemod.USER} docker >/dev/null")
    return nodemod.USER, {}, f"{nodemod.USER} is no longer in {node}'s docker group"


def _u_docker_no_access(rack, spec, node, login, undo):
    rack.node(node).sh(f"gpasswd -a {login} docker >/dev/null")


def _sparkrun_sudoers(node: str, rack) -> list[Path]:
    return sorted((rack.state.node_dir(node) / "etc.upper" / "sudoers.d").glob("sparkrun-*"))


def _p_sparkrun_sudoers_missing(rack, spec, node, args):
    files = _sparkrun_sudoers(node, rack)
    if not files:
        raise SimError(f"{node} has no sparkrun sudoers rules (a Spark: use spark2)")
    saved = {f.name: f.read_text() for f in files}
    for f in files:
        f.unlink()
    return "sudoers.d", {"files": saved}, f"{node} lost sparkrun's sudoers rules ({', '.join(saved)})"


def _u_sparkrun_sudoers_missing(rack, spec, node, target, undo):
    folder = rack.state.node_dir(node) / "etc.upper" / "sudoers.d"
    for name, text in undo["files"].items():
        (folder / name).write_text(text)
        os.chmod(folder / name, 0o440)


# --- cabling: plugs in other ports, lldpd ------------------------------------------------------
# A plug moved to another port is the port's name moved: the switch's lldpd announces the new name
# on the same veth, as a real switch announces the port a cable is now in. Traffic follows the
# cable, and so does a fault planted later on the lane (lane-down, port-at-10G): the switch acts
# on the port the cable is in now (Topology.port_of).

def _port_names(rack) -> set[str]:
    out = run(["ip", "-n", rack.topo.fabric_ns, "-o", "link", "show"]).stdout
    return {line.split(": ")[1].split("@")[0] for line in out.splitlines() if ": " in line}


def _trade_ports(rack, a: int, b: int) -> None:
    """The plugs in ports a and b trade places (b may be empty: the plug in a moves there)."""
    names = _port_names(rack)
    lines = [f"link set dev swp{a} name swpmove"]
    if f"swp{b}" in names:
        lines.append(f"link set dev swp{b} name swp{a}")
    lines.append(f"link set dev swpmove name swp{b}")
    batch("ip", rack.topo.fabric_ns, lines)


def _wait_heard_in(rack, node: str, lane: str, port: int) -> None:
    from rackproof.probes.lldp import parse_neighbours

    n = rack.node(node)

    def heard():
        out = n.sh("lldpcli -f json0 show neighbors", check=False).stdout
        on_lane = [x for x in parse_neighbours(out or '{"lldp": []}') if x.interface == lane]
        return bool(on_lane) and min(on_lane, key=lambda x: x.age_s or 0).port_id == f"swp{port}"
    wait_until(f"{node} {lane} hearing switch port swp{port}", heard, 10, 0.2)


def _p_plugs_swapped(rack, spec, node, args):
    """Two plugs of one node in each other's ports (the chapter's most common cabling fault)."""
    cabled = [lane.name for lane in spec.lanes if lane.connected] if spec.platform == "thor" else []
    if len(cabled) < 2:
        raise SimError(f"{node} has fewer than two cabled lanes (a Thor of thor5)")
    a, b = args[:2] if len(args) >= 2 else cabled[1:3] if len(cabled) > 2 else cabled[:2]
    for lane in (a, b):
        _lane(spec, [lane])
    pa, pb = spec.lane(a).switch_port, spec.lane(b).switch_port
    _trade_ports(rack, pa, pb)
    _wait_heard_in(rack, node, a, pb)
    return f"{a} {b}", {"ports": [pa, pb], "heard": [[node, a, pa]]}, \
        f"{a} is in port {pb} and {b} in port {pa} (LLDP announces them so)"


def _p_plug_in_port(rack, spec, node, args):
    """A plug in another node's port: the two plugs trade ports (one port holds one plug)."""
    lane = _lane(spec, args[:1])
    ports = (rack.profile.switch or {}).get("ports", 24)
    planned = spec.lane(lane).switch_port
    owners = {ln.switch_port: (n, ln) for n in rack.profile.nodes for ln in n.lanes if ln.connected}
    if len(args) > 1:
        if not args[1].isdigit() or not 1 <= int(args[1]) <= ports or int(args[1]) == planned:
            raise SimError(f"{args[1]!r} is not another port of the switch (1-{ports}, not {planned})")
        port = int(args[1])
    else:
        port = next(p for p in sorted(owners) if owners[p][0].name != node)
    _trade_ports(rack, planned, port)
    _wait_heard_in(rack, node, lane, port)
    moved = owners.get(port)
    heard = [[node, lane, planned]] + ([[moved[0].name, moved[1].name, port]] if moved else [])
    said = f"{lane} is in port {port}" + (f", {moved[0].name} {moved[1].name}'s plug in port {planned}" if moved else "")
    return lane, {"ports": [planned, port], "heard": heard}, said


def _u_moved_plugs(rack, spec, node, target, undo):
    a, b = undo["ports"]
    _trade_ports(rack, b, a)
    for where, lane, port in undo["heard"]:
        _wait_heard_in(rack, where, lane, port)


def _p_marginal_cable(rack, spec, node, args):
    """A DAC that links at full speed and carries the load while its FEC corrects thousands of
    blocks per GB and some are beyond repair (CRC errors): counters that grow with traffic."""
    lane = _lane(spec, args)
    before = _model_edit(rack, node, lambda m: m["interfaces"][lane].update(errors_per_gb=profiles.MARGINAL_LANE_ERRORS))
    return lane, {"errors_per_gb": before["interfaces"][lane]["errors_per_gb"]}, \
        f"{lane}'s cable is marginal: per GB received, {profiles.MARGINAL_LANE_ERRORS['fec_corrected']} FEC blocks " \
        f"corrected, {profiles.MARGINAL_LANE_ERRORS['fec_uncorrectable']} uncorrectable (the link stays up and fast)"


def _u_marginal_cable(rack, spec, node, lane, undo):
    _model_edit(rack, node, lambda m: m["interfaces"][lane].update(**undo))


def _cluster_iface(spec) -> str:
    return "bond0" if spec.bond_lanes else spec.interface


def _p_mtu_lowered(rack, spec, node, args):
    """The cluster interface's MTU set lower on one node (an nmcli line from another network):
    packets of the others' MTU no longer reach it, and nothing says so."""
    if not spec.address:
        raise SimError(f"{node} has no cluster address (a Thor)")
    mtu = args[0] if args else "1400"
    if not mtu.isdigit() or not 576 <= int(mtu) < 1500:
        raise SimError(f"{mtu!r} is not an MTU below the rack's 1500 (576-1499)")
    rack.node(node).sh(f"ip link set dev {_cluster_iface(spec)} mtu {mtu}")
    return _cluster_iface(spec), {}, f"{node} {_cluster_iface(spec)} has MTU {mtu}, the others 1500"


def _u_mtu_lowered(rack, spec, node, iface, undo):
    rack.node(node).sh(f"ip link set dev {iface} mtu 1500")


def _p_switch_mtu_lowered(rack, spec, node, args):
    """The switch's port towards the node left at a lower MTU than the nodes' (a port profile
    without jumbo frames): it drops larger frames both ways, and nothing on the node says so.
    Without a lane, the node's port on the switch's bridge (its LAG when bonded); with a lane,
    the port that lane's cable is in (a LAG member when bonded)."""
    lanes, mtus = [a for a in args if not a.isdigit()], [a for a in args if a.isdigit()]
    mtu = int(mtus[0]) if mtus else 1400
    if not 576 <= mtu < 1500 or len(lanes) > 1 or len(mtus) > 1:
        raise SimError("switch-mtu-lowered takes [LANE] [MTU], the MTU below the rack's 1500 (576-1499)")
    if spec.bond_lanes and not lanes:
        dev, what = rack.topo.lag(spec)[0], "LAG"
    else:
        lane = _lane(spec, lanes or [spec.interface])
        dev, what = rack.topo.port_of(spec, lane), f"{lane}'s port"
    return dev, rack.topo.limit_frames(dev, mtu), \
        f"{node}'s {what} on the switch ({dev}) has MTU {mtu}, the nodes 1500: larger frames are dropped both ways"


def _u_switch_mtu_lowered(rack, spec, node, dev, undo):
    rack.topo.lift_frame_limit(undo)


def _p_lldpd_missing(rack, spec, node, args):
    pid = rack.record["nodes"][node].get("lldpd")
    if not pid_alive(pid):
        raise SimError(f"lldpd is not running on {node}")
    os.kill(pid, signal.SIGTERM)
    wait_until(f"lldpd on {node} to stop", lambda: not pid_alive(pid), 5, 0.05)
    return "lldpd", {}, f"{node} runs no lldpd (lldpcli cannot reach it)"


def _u_lldpd_missing(rack, spec, node, target, undo):
    n = rack.node(node)
    rack.record["nodes"][node]["lldpd"] = rack.start_lldpd(n)
    lldp.wait_heard(n, lldp.cabled(spec))


# a site's node before its set-up is finished: a tool the checks run not installed, the operator's
# sudoers file missing a rule


def _p_tool_missing(rack, spec, node, args):
    """The tool gone from the node's PATH: a FIFO (not a file, not executable) mounted over it in
    the node's own mount namespace: the survey finds no file, the shell none it may run."""
    if len(args) > 1 or args and not re.fullmatch(r"[A-Za-z0-9_.+-]+", args[0]):
        raise SimError("tool-missing takes [TOOL] (default iperf3)")
    tool = args[0] if args else "iperf3"
    found = rack.node(node).sh(f"PATH={nodemod.LOGIN_PATH} command -v {tool} || true").stdout.strip()
    if not found.startswith("/"):
        raise SimError(f"{tool} is not on {node}'s PATH")
    hidden = f"/run/rackproof-missing-{tool}"
    rack.node(node).sh(f"rm -f {hidden} && (umask 0133; mkfifo {hidden}) && mount -n --bind {hidden} {found}")
    return found, {}, f"{tool} is no longer on {node}'s PATH (no file there it can run)"


def _u_tool_missing(rack, spec, node, path, undo):
    # in the node's PID namespace too: umount reads /proc/self/mountinfo, the node's /proc's
    run(nodemod.nsenter(rack.node(node).pid, "umount", "-n", path), timeout=20)


def _p_tool_broken(rack, spec, node, args):
    """The tool there and executable but broken, as a package unpacked halfway leaves it: the
    first shared library it needs (ldd's first outside the C library) emptied by an empty file
    mounted over it in the node's own mount namespace. The real loader then refuses it with its
    own words ("error while loading shared libraries: ...: file too short") and exit status 127."""
    if len(args) > 1 or args and not re.fullmatch(r"[A-Za-z0-9_.+-]+", args[0]):
        raise SimError("tool-broken takes [TOOL] (default iperf3)")
    tool = args[0] if args else "iperf3"
    n = rack.node(node)
    found = n.sh(f"PATH={nodemod.LOGIN_PATH} command -v {tool} || true").stdout.strip()
    if not found.startswith("/"):
        raise SimError(f"{tool} is not on {node}'s PATH")
    libraries = re.findall(r"^\s*(\S+) => (/\S+) ", n.sh(f"ldd {found} 2>/dev/null || true").stdout, re.M)
    own = [(name, path) for name, path in libraries if not re.match(r"lib(c|m|pthread|dl|rt)\.so", name)]
    if not own:
        raise SimError(f"{found} on {node} needs no shared library of its own (a script or a stand-in): "
                       "nothing to break")
    name, path = own[0]
    library = n.sh(f"readlink -f {shlex.quote(path)}").stdout.strip()
    empty = f"/run/rackproof-broken-{name}"
    n.sh(f"rm -f {empty} && (umask 0133; : > {empty}) && mount -n --bind {empty} {shlex.quote(library)}")
    return library, {"tool": tool}, f"{tool} on {node} is broken: {library} ({name}) is an empty file there"


def _p_measurement_killed(rack, spec, node, args):
    """The next iperf3 of a measurement on the node (its client, or with `server` its server)
    killed with SIGKILL a second after it started, once, as the OOM killer or another operator's
    kill does: a watcher in the node, ended by heal, by the node's end, or after 15 minutes."""
    which = args[0] if args else "client"
    if len(args) > 1 or which not in ("client", "server"):
        raise SimError("measurement-killed takes [client|server] (default client)")
    pattern = "^iperf3 -c " if which == "client" else "^iperf3 -s "
    script = (f"while :; do p=$(pgrep -f -- '{pattern}' | head -n 1); if [ -n \"$p\" ]; then sleep 1; "
              "kill -KILL \"$p\" 2>/dev/null && { echo \"killed $p\"; exit 0; }; fi; sleep 0.05; done")
    pid = rack.node(node).spawn(["timeout", "900", "/bin/sh", "-c", script],
                                rack.state.node_dir(node) / "log" / "measurement-killed.log")
    return which, {"pid": pid}, f"the next iperf3 {which} on {node} is killed (SIGKILL) a second after it starts"


def _u_measurement_killed(rack, spec, node, which, undo):
    if pid_alive(undo["pid"]):
        os.kill(undo["pid"], signal.SIGTERM)


def _p_controller_disk_full(rack, spec, node, args):
    """The controller's disk full where a run writes its report: a small tmpfs mounted on FOLDER
    (an empty folder, under the reports folder) and filled to the last byte."""
    if node != "bench" or len(args) != 1:
        raise SimError("controller-disk-full is planted on bench and takes FOLDER (an empty folder for the report)")
    folder = Path(args[0]).resolve()
    if not folder.is_dir() or any(folder.iterdir()) or os.path.ismount(folder):
        raise SimError(f"{folder} is not an empty folder")
    owner = folder.stat()
    run(["mount", "-t", "tmpfs", "-o", f"size=64k,mode=0700,uid={owner.st_uid},gid={owner.st_gid}", "rackproof-disk-full",
         str(folder)])
    try:
        with open(folder / ".filled", "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
    except OSError:
        pass
    return str(folder), {}, f"the controller's disk is full at {folder} (a 64 kB tmpfs, filled)"


def _u_controller_disk_full(rack, spec, node, folder, undo):
    run(["umount", folder])


SUDOERS = "/etc/sudoers.d/rackproof"


def _p_sudo_rule_removed(rack, spec, node, args):
    """The operator's sudoers file on the node without the rules that contain TEXT (default the
    listening-sockets rule, ss -Hltnup), as a site that copied an older or trimmed file."""
    text = " ".join(args) or "ss -Hltnup"
    before = rack.node(node).sh(f"cat {SUDOERS}").stdout
    kept = [line for line in before.splitlines() if line.startswith("#") or text not in line]
    if len(kept) == len(before.splitlines()):
        raise SimError(f"no rule of {node}'s {SUDOERS} contains {text!r}")
    rack.node(node).sh(f"umask 0337; cat > {SUDOERS}", input="\n".join(kept) + "\n")
    return text, {"file": before}, f"{node}'s {SUDOERS} lost its rules containing {text!r}"


def _u_sudo_rule_removed(rack, spec, node, text, undo):
    rack.node(node).sh(f"umask 0337; cat > {SUDOERS}", input=undo["file"])


def _p_power_mode(rack, spec, node, args):
    """A Thor in another nvpmodel power mode (default 120W, mode 1, what a setup script of
    others' sets on Thor): it passes the network checks and serves slower."""
    if spec.platform != "thor" or len(args) not in (0, 2) or args and not args[1].isdigit():
        raise SimError("power-mode takes [NAME NUMBER] (e.g. 120W 1) on a Thor")
    name, number = args or ("120W", "1")
    before = _model_edit(rack, node, lambda m: m.update(nvpmodel={"name": name, "id": int(number)}))
    return name, {"nvpmodel": before["nvpmodel"]}, f"{node} is in power mode {name} ({number}), the others " \
                                                    f"in {before['nvpmodel']['name']}"


def _p_gpu_not_visible(rack, spec, node, args):
    """The driver sees no GPU (nvidia-smi: No devices were found); the rest of the node as it was."""
    _model_edit(rack, node, lambda m: m.update(gpu_lost=True))
    return "gpu", {"gpu_lost": False}, f"{node}'s driver sees no GPU (nvidia-smi: No devices were found)"


def _p_clocks_unlocked(rack, spec, node, args):
    """A Thor whose clocks scale again (rebooted, and jetson_clocks not run since)."""
    if spec.platform != "thor":
        raise SimError(f"{node} is a Spark: it has no jetson_clocks")
    before = _model_edit(rack, node, lambda m: m["clocks"].update(locked=False))
    return "clocks", {"clocks": before["clocks"]}, f"{node}'s CPU and GPU clocks scale (jetson_clocks not run)"


def _u_model(rack, spec, node, target, undo):
    _model_edit(rack, node, lambda m: m.update(undo))


# --- each CX7 link and direction (issue 43) ------------------------------------------------

def _p_rdma_model(kind: str, key: str, default_gbps: float, told: str):
    """A modelled RDMA rate for one device (`key`: which direction it caps, rackproof_sim.standins.rdma)."""
    def plant(rack, spec, node, args):
        device, rest = _cabled(spec, node, args, kind, by="rdma_device")
        try:
            gbps = float(rest[0]) if rest else default_gbps
        except ValueError:
            raise SimError(f"{kind}'s rate must be a number of Gb/s, not {rest[0]!r}") from None
        if not 0 < gbps < 96:
            raise SimError(f"{kind}'s rate must be above 0 and below a healthy link's 96 Gb/s")
        before = _model_edit(rack, node, lambda m: m.setdefault(key, {}).update({device: gbps}))
        return device, {key: before.get(key)}, told.format(node=node, device=device, gbps=gbps)
    return plant


def _u_rdma_model(rack, spec, node, device, undo):
    (key, before), = undo.items()
    _model_edit(rack, node, lambda m: m.update({key: before}) if before else m.pop(key, None))


# --- NCCL's set-up (issue 43) ---------------------------------------------------------------

def _nccl_file(rack, node: str, name: str):
    """Write (text) or remove (None) a file NCCL reads at start, from inside the node: a file new
    to /etc written under its overlay would stay hidden behind the lookup that missed it."""
    path, user = ("/etc/nccl.conf", False) if name == "/etc/nccl.conf" else ('"$HOME/.nccl.conf"', True)

    def write(text: str | None) -> None:
        rack.node(node).sh(f"rm -f {path}" if text is None else f"cat > {path}", user=user, input=text)

    def read() -> str | None:
        out = rack.node(node).sh(f"cat {path}", user=user, check=False)
        return out.stdout if out.returncode == 0 else None
    return read, write


def _p_nccl_file(name: str, line: str):
    """A file NCCL reads at start holding `line` ({device}: the first RoCE device of the port)."""
    def plant(rack, spec, node, args):
        if spec.platform != "spark" or args:
            raise SimError("this fault takes no argument, on a Spark")
        read, write = _nccl_file(rack, node, name)
        text = line.format(device=spec.cx7[0].rdma_device) + "\n"
        before = read()
        write((before or "") + text)
        return name, {"before": before}, f"{node}'s {name} holds {text.strip()}"
    return plant


def _u_nccl_file(rack, spec, node, name, undo):
    _nccl_file(rack, node, name)[1](undo["before"])


def _p_nccl_dev_build(rack, spec, node, args):
    """NCCL built from its dev branch (makefiles/version.mk there: NCCL_SUFFIX a7; 2.29.2 on
    print `git describe`): what NCCL_DEBUG=INFO shows, and what the run then moves."""
    if spec.platform != "spark" or args:
        raise SimError("nccl-dev-build takes no argument, on a Spark")
    build = {"version": "2.31.0a7+cuda13.0", "git": "dev v2.30.7-1-42-g86fa684d"}
    before = _model_edit(rack, node, lambda m: m.update(nccl_build=build))
    return "libnccl", {"nccl_build": before.get("nccl_build")}, f"{node} runs NCCL {build['version']} ({build['git']})"


# --- the hardware behind the CX7 links (issue 43, sparkhw): the PCIe link, firmware, negotiated
# speed and GID table's order modelled (standins/ethtool.py, standins/infiniband.py), the MTU the real one

OLD_CX7_FIRMWARE = "28.45.1016 (NVD0000000087)"     # an older release's number, modelled; same PSID


def _cx7_functions(spec, node: str, args: list[str], kind: str) -> list[str]:
    """The cabled CX7 functions a fault names (default: all of the node's), checked."""
    cabled = [c.name for c in spec.cx7 if c.link]
    if not cabled:
        raise SimError(f"{node} has no cabled CX7 interface ({kind} is for a Spark)")
    if unknown := [a for a in args if a not in cabled]:
        raise SimError(f"{node} has no cabled CX7 interface {', '.join(unknown)} (choose from {', '.join(cabled)})")
    return args or cabled


def _p_cx7_model(kind: str, default: str, edit, told: str):
    """Each named function's model entry changed by edit(entry) (default: `default`: 'all' or 'second', the
    second controller's function, enP2p...)."""
    def plant(rack, spec, node, args):
        functions = _cx7_functions(spec, node, args, kind)
        if not args and default == "second":
            functions = functions[-1:]
        before = _model_edit(rack, node, lambda m: [edit(m["interfaces"][f]) for f in functions])
        said = told.format(node=node, functions=", ".join(functions))
        return " ".join(functions), {"interfaces": before["interfaces"]}, said
    return plant


def _cx7_mtu(rack, node: str, functions: list[str], mtu: int) -> None:
    rack.node(node).sh("; ".join(f"ip link set dev {f} mtu {mtu}" for f in functions))


def _p_cx7_mtu_1500(rack, spec, node, args):
    """MTU 9000 on every other CX7 node's cabled interfaces (jumbo frames as NVIDIA's NCCL set-up asks),
    the node's left at 1500: the real interfaces'."""
    if args:
        raise SimError("cx7-mtu-1500 takes no arguments")
    others = {s.name: [c.name for c in s.cx7 if c.link] for s in rack.profile.nodes if s.name != node}
    _cx7_mtu(rack, node, _cx7_functions(spec, node, [], "cx7-mtu-1500"), 1500)
    for other, functions in others.items():
        if functions:
            _cx7_mtu(rack, other, functions, 9000)
    return "mtu", {"others": others}, f"{node}'s CX7 interfaces at MTU 1500, the other nodes' at 9000"


def _u_cx7_mtu_1500(rack, spec, node, target, undo):
    for other, functions in undo["others"].items():
        if functions:
            _cx7_mtu(rack, other, functions, 1500)


# --- the kernel's own reports (issue 43): lines planted in the node's journal (standins/kernellog),
# in the drivers' words (selftests/samples: Xid, AER, mlx5 and phylib link lines); nothing else changes

def _kernel_lines(rack, node, *texts) -> dict:
    """The texts as the node's kernel lines, now; the undo of _u_model."""
    now = time.time()
    before = _model_edit(rack, node, lambda m: m.setdefault("kernel_log", []).extend(
        {"at": now + k * 0.001, "source": "kernel", "text": text} for k, text in enumerate(texts)))
    return {"kernel_log": before.get("kernel_log", [])}


def _p_kernel_xid(rack, spec, node, args):
    """Xid 79 from the node's GPU, as NVIDIA's driver prints it (its bus id from nvidia-smi's)."""
    domain, bus = rack.state.load_model(node)["gpu"]["bus_id"].split(":")[:2]
    where = f"PCI:{int(domain, 16):04x}:{bus.lower()}:00"
    line = f"NVRM: Xid ({where}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    return "gpu", _kernel_lines(rack, node, line), f"{node}'s kernel: {line}"


def _p_kernel_aer_fatal(rack, spec, node, args):
    """A fatal PCIe AER error from the device behind the node's first root port (a Spark's CX7, a
    Thor's NVMe), in a 6.x kernel's words."""
    port, device, driver = (("0000:00:00.0", "0000:01:00.0", "mlx5_core") if spec.platform == "spark"
                            else ("0001:00:00.0", "0001:01:00.0", "nvme"))
    lines = (f"pcieport {port}: AER: Uncorrectable (Fatal) error message received from {device}",
             f"{driver} {device}: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction Layer, (Receiver ID)")
    return device, _kernel_lines(rack, node, *lines), f"{node}'s kernel: {lines[0]}"


def _p_kernel_link_flap(rack, spec, node, args):
    """A cluster link down and up again in the kernel's words (a Thor lane: nvethernet's phylib
    lines; a Spark CX7 interface: mlx5's); the link itself stays up."""
    if spec.platform == "thor":
        iface = _lane(spec, args)
        lines = (f"nvethernet a808a10000.ethernet {iface}: Link is Down",
                 f"nvethernet a808a10000.ethernet {iface}: Link is Up - 25Gbps/Full - flow control off")
    else:
        names = [c.name for c in spec.cx7 if c.link]
        iface = args[0] if args else names[0]
        if iface not in names:
            raise SimError(f"{node} has no cabled CX7 interface {iface} (choose from {', '.join(names)})")
        from .standins.kernellog import pci_address
        device = pci_address(iface)
        lines = (f"mlx5_core {device} {iface}: Link down", f"mlx5_core {device} {iface}: Link up")
    return iface, _kernel_lines(rack, node, *lines), f"{node}'s kernel: {lines[0]}"


# kind -> (plant, undo)
_PLANT_AND_UNDO = {
    "plugs-swapped": (_p_plugs_swapped, _u_moved_plugs), "plug-in-port": (_p_plug_in_port, _u_moved_plugs),
    "lldpd-missing": (_p_lldpd_missing, _u_lldpd_missing), "marginal-cable": (_p_marginal_cable, _u_marginal_cable),
    "mtu-lowered": (_p_mtu_lowered, _u_mtu_lowered),
    "switch-mtu-lowered": (_p_switch_mtu_lowered, _u_switch_mtu_lowered),
    "lane-down": (_p_lane_down, _u_lane_down), "port-at-10G": (_p_port_10g, _u_port_10g),
    "lane-slowed": (_p_lane_slowed, _u_lane_slowed),
    "fec-mismatch": (_p_fec, _u_fec), "bond-lane-down": (_p_bond_lane_down, _u_lane_down),
    "ssh-key-missing": (_p_ssh_key, _u_ssh_key), "jetpack-mismatch": (_p_jetpack, _u_jetpack),
    "engine-down": (_p_engine_down, _u_engine_down), "engine-on-loopback": (_p_engine_loopback, _u_engine_loopback),
    "slow-engine": (_p_slow, _u_slow), "roce-link-down": (_p_roce, _u_roce),
    "node-unreachable": (_p_unreachable, _u_unreachable), "ssh-hang": (_p_ssh_hang, _u_ssh_hang),
    # the rack's own life, timed against the run (rackproof_sim.lifeevents)
    "sshd-restart": (_p_life_event("sshd-restart", 3.0), _u_life_event),
    "node-reboot": (_p_life_event("node-reboot", 10.0), _u_life_event),
    "stalled-engine": (_p_stalled, _u_engine_control), "duplicate-address": (_p_duplicate_address, _u_duplicate_address),
    "late-first-token": (_p_late_first_token, _u_engine_control),
    "stream-stops": (_p_stream_stops, _u_engine_control),
    "power-mode": (_p_power_mode, _u_model), "gpu-not-visible": (_p_gpu_not_visible, _u_model),
    "clocks-unlocked": (_p_clocks_unlocked, _u_model),
    "tool-missing": (_p_tool_missing, _u_tool_missing), "sudo-rule-removed": (_p_sudo_rule_removed, _u_sudo_rule_removed),
    # the rack's own life (issue 44): a tool that is there and does not run, a measurement killed
    # from outside, the controller's disk full under its report
    "tool-broken": (_p_tool_broken, _u_tool_missing),
    "measurement-killed": (_p_measurement_killed, _u_measurement_killed),
    "controller-disk-full": (_p_controller_disk_full, _u_controller_disk_full),
    # changes a change-control snapshot must see (not faults of the hardware)
    "address-moved": (_p_address_moved, _u_address_moved), "netplan-mode": (_p_netplan_mode, _u_netplan_mode),
    "hosts-edited": (_p_hosts_edited, _u_hosts_edited),
    # step 9
    "slurmd-down": (_p_slurmd_down, _u_slurmd_down), "node-drained": (_p_node_drained, _u_node_drained),
    "holder-sudo": (_p_holder_sudo, _u_holder_sudo), "home-open": (_p_home_open, _u_home_open),
    "job-no-time-limit": (_p_job_no_limit, _u_job_no_limit), "overlapping-reservation": (_p_overlap, _u_overlap),
    "forwarding-on": (_p_forwarding, _u_forwarding), "open-listener": (_p_open_listener, _u_open_listener),
    "stray-iperf3": (_p_stray_iperf3, _u_open_listener),
    "clock-off": (_p_clock_off, _u_clock_off), "stray-job": (_p_stray_job, _u_stray_job),
    "login-missing": (_p_login_missing, _u_login_missing),
    "partition-unlimited": (_p_partition_unlimited, _u_partition_unlimited),
    "munge-key-differs": (_p_munge_key_differs, _u_munge_key_differs),
    # sparkrun (spark2): the definition's hosts in the wrong order, on the management addresses,
    # the head alone, its user not the nodes' login; the CLI gone from the head
    "sparkrun-order": (_p_sparkrun_hosts(lambda p: sparkrun.hosts(p)[::-1]), _u_sparkrun_hosts),
    "sparkrun-on-mgmt": (_p_sparkrun_hosts(lambda p: [n.mgmt_ip for n in p.nodes]), _u_sparkrun_hosts),
    "sparkrun-one-node": (_p_sparkrun_hosts(lambda p: [p.nodes[0].cluster_ip]), _u_sparkrun_hosts),
    "sparkrun-missing": (_p_sparkrun_missing, _u_sparkrun_missing),
    "sparkrun-transfer-mgmt": (_p_sparkrun_transfer_mgmt, _u_sparkrun_transfer_mgmt),
    "sparkrun-other-user": (_p_sparkrun_other_user, _u_sparkrun_other_user),
    "netplan-down-twin": (_p_netplan_down_twin, _u_netplan_down_twin),
    # sparkrun's runtime: an image the recipes need gone from the head, the login out of the docker
    # group (sparkrun setup check: FAIL), sparkrun's scoped sudoers rules missing (WARN)
    "image-missing": (_p_image_missing, _u_image_missing),
    "docker-no-access": (_p_docker_no_access, _u_docker_no_access),
    "sparkrun-sudoers-missing": (_p_sparkrun_sudoers_missing, _u_sparkrun_sudoers_missing),
    # each CX7 link and direction (issue 43): writes from one device slow, the other way and the
    # other links fine; a device in NVIDIA's stale initialisation (its link at 200000Mb/s, PCIe and
    # firmware in order, RDMA 8-25 Gb/s both ways)
    "rdma-direction-slow": (_p_rdma_model("rdma-direction-slow", "rdma_send_gbps", 40.0,
                                          "RDMA writes from {node}'s {device} move {gbps:g} Gb/s; the other way and "
                                          "the other links are fine"), _u_rdma_model),
    "cx7-stale-init": (_p_rdma_model("cx7-stale-init", "rdma_stale_gbps", 15.0,
                                     "{node}'s {device} is in a stale initialisation: its link reports 200000Mb/s and "
                                     "RDMA over it moves {gbps:g} Gb/s both ways"), _u_rdma_model),
    # NCCL's set-up (issue 43): NCCL_IB_HCA naming one function of the port (in the login's
    # ~/.nccl.conf), a development build, a leftover /etc/nccl.conf (IB disabled: TCP sockets)
    "nccl-one-function": (_p_nccl_file("~/.nccl.conf", "NCCL_IB_HCA={device}"), _u_nccl_file),
    "nccl-dev-build": (_p_nccl_dev_build, _u_model),
    "nccl-conf-leftover": (_p_nccl_file("/etc/nccl.conf", "NCCL_IB_DISABLE=1"), _u_nccl_file),
    # the hardware behind the CX7 links (issue 43, sparkhw)
    "cx7-pcie-x2": (_p_cx7_model("cx7-pcie-x2", "second", lambda f: f.update(pcie_width=2),
                                 "{node}'s {functions}: its PCIe function trained at x2 of x4 (an early BIOS)"),
                    _u_model),
    "cx7-firmware-differs": (_p_cx7_model("cx7-firmware-differs", "all",
                                          lambda f: f.update(firmware=OLD_CX7_FIRMWARE),
                                          "{node}'s ConnectX-7 runs firmware " + OLD_CX7_FIRMWARE
                                          + " ({functions}), the other nodes' 28.45.4028"), _u_model),
    "cx7-speed-100g": (_p_cx7_model("cx7-speed-100g", "all", lambda f: f.update(speed=100000),
                                    "{node}'s {functions} negotiated 100000Mb/s (a 100G cable or switch port)"),
                       _u_model),
    "cx7-gid-index-differs": (_p_cx7_model("cx7-gid-index-differs", "all",
                                           lambda f: f.update(gid_ipv6_first=["fd00:c7::" + f["rdma_device"][-2:]]),
                                           "{node}'s {functions}: an IPv6 address came up before the IPv4 one, so "
                                           "the IPv4 RoCE v2 GID is at index 5, the other nodes' at 3"), _u_model),
    "cx7-mtu-1500": (_p_cx7_mtu_1500, _u_cx7_mtu_1500),
    # the kernel's own reports (issue 43): a line in the node's journal, nothing else
    "kernel-xid": (_p_kernel_xid, _u_model), "kernel-aer-fatal": (_p_kernel_aer_fatal, _u_model),
    "kernel-link-flap": (_p_kernel_link_flap, _u_model),
}
FAULT_KINDS = tuple(_PLANT_AND_UNDO)
# the rack's own life, not a fault of the hardware: a healthy rack with one of these is never
# REJECTED, and the run names it (bench/rack_life.py plants them at random)
RACK_LIFE = ("sshd-restart", "node-reboot", "measurement-killed", "tool-broken", "controller-disk-full")
