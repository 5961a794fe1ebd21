"""`rackproof sim up|status|fault|heal|exec|run|down`.

rackproof's own command finds `main` by this package's entry point (group rackproof.commands,
pyproject.toml); this module also runs on its own: `python3 -m rackproof_sim.cli up thor5`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

from .profiles import GENERATED, PROFILES, generate, generated_name
from .util import SimError

FAULT_HELP = """fault kinds (NODE is a node of the rack, e.g. thor-2):
  lane-down [LANE]              the lane's cable is pulled (switch end down): no link
  port-at-10G [LANE]            the lane runs at 10G: ethtool says 10000Mb/s, throughput 10G x scale
  lane-slowed [LANE] [FRACTION] the lane carries FRACTION (default 0.9) of its speed; link and speed stay
  fec-mismatch [LANE] [MODE]    the node's FEC differs from the switch's (default BaseR); link stays up
  bond-lane-down [LANE]         one bond member loses its link; the bond rehashes over the others
  switch-mtu-lowered [LANE] [MTU]  the node's switch port (its LAG; with LANE, that lane's port) at MTU
                                (default 1400): larger frames dropped both ways
  ssh-key-missing PEER          NODE's key is removed from PEER's authorized_keys (NODE -> PEER fails);
                                NODE may be `bench` (the controller's key)
  jetpack-mismatch              the node runs another release (nv_tegra_release / dgx-release, dpkg)
  power-mode [NAME NUMBER]      a Thor in another nvpmodel power mode (default 120W, 1)
  gpu-not-visible               the node's driver sees no GPU (nvidia-smi: No devices were found)
  clocks-unlocked               a Thor's CPU and GPU clocks scale again (jetson_clocks not run since boot)
  engine-down [MODEL]           the node's engine is killed
  engine-on-loopback [MODEL]    the engine restarts bound to 127.0.0.1
  slow-engine [MODEL] [FACTOR]  the engine generates FACTOR (default 4) times slower
  roce-link-down [IFACE]        a CX7 link loses its link (Spark)
  rdma-direction-slow [DEVICE] [GBPS]  RDMA writes from DEVICE (default the first cabled link's) move GBPS
                                (default 40); the other direction and the other links stay healthy (Spark)
  cx7-stale-init [DEVICE] [GBPS]  DEVICE in a stale initialisation: its link reports 200000Mb/s, RDMA over it
                                moves GBPS (default 15) both ways (Spark)
  cx7-pcie-x2 [IFACE...]        the CX7 function's PCIe link trained at x2 of x4 (default the second controller's)
  cx7-firmware-differs [IFACE...]  the node's ConnectX-7 on an older firmware than the other nodes' (Spark)
  cx7-speed-100g [IFACE...]     the node's CX7 ports negotiated 100000Mb/s (a 100G cable or switch port)
  cx7-gid-index-differs [IFACE...]  an IPv6 address came up first: the IPv4 RoCE v2 GID at index 5, not 3
  cx7-mtu-1500                  the node's CX7 interfaces at MTU 1500, the other nodes' at 9000 (Spark)
  node-unreachable              the node's management (house network) link goes down
  ssh-hang                      sshd accepts TCP and never answers (SIGSTOP)
  stalled-engine [MODEL]        the engine lists its model and answers /health, but never sends a token
  late-first-token [MODEL] [S]  the engine's first token comes S seconds late (default 20), the rest at its rate
  stream-stops [MODEL] [TOKENS] every streamed answer stops after TOKENS tokens (default 5); the connection stays
  duplicate-address OTHER       the node holds OTHER's cluster address instead of its own
  cabling and link health:
  plugs-swapped [LANE LANE]     two plugs of one node in each other's ports (default its 2nd and 3rd lanes)
  plug-in-port [LANE] [PORT]    the lane's plug in another port (default another node's): the two plugs trade
  lldpd-missing                 the node's lldpd stops (lldpcli cannot reach it)
  tool-missing [TOOL]           TOOL (default iperf3) is gone from the node's PATH (no file there it can run)
  sudo-rule-removed [TEXT]      the operator's sudoers file loses its rules containing TEXT (default ss -Hltnup)
  marginal-cable [LANE]         FEC-corrected, uncorrectable and CRC errors grow with traffic; link stays fast
  mtu-lowered [MTU]             the node's cluster interface at MTU (default 1400), the others at 1500
  the kernel's own reports (a line in the node's journal; nothing else changes):
  kernel-xid                    Xid 79 (GPU has fallen off the bus) from the node's GPU
  kernel-aer-fatal              a fatal PCIe AER error (a Spark's CX7, a Thor's NVMe)
  kernel-link-flap [IFACE]      a cluster link down and up again (default the first lane or cabled CX7 interface)
  changes a snapshot must see:
  address-moved [IFACE]         the cluster address moved onto another interface of the node
  netplan-mode [FILE]           a netplan file made readable by everyone
  hosts-edited [NAME] [ADDRESS] one /etc/hosts line: another node's name at another address (10.10.0.99)
  step 9 (thor5: Slurm and slice holders):
  slurmd-down                   the node's slurmd stops; slurmctld still lists the node
  node-drained [REASON...]      the node is drained in Slurm with REASON
  partition-unlimited           the Slurm partition loses its MaxTime (node: the controller)
  munge-key-differs             the node's munged restarts with another key (not the controller)
  holder-sudo [LOGIN]           a slice holder (default: the node's current one) joins the sudo group
  home-open [LOGIN]             a slice holder's home becomes mode 755
  job-no-time-limit [LOGIN]     a slice holder runs a job (run-u42.service) without RuntimeMaxSec
  overlapping-reservation       a second person's reservation over the node's current window
  forwarding-on                 net.ipv4.ip_forward=1 on the node
  open-listener [PORT]          a python3 server listens on 0.0.0.0:PORT (default 9999)
  stray-iperf3 [PORT]           someone's own iperf3 -s, as the operator's login, on PORT (default 5201)
  clock-off [SECONDS]           chrony reports the clock SECONDS (default 600) fast
  stray-job [LOGIN]             a process of a slice holder who does not hold the node now
  login-missing [LOGIN]         a slice holder's login is deleted on the node (userdel)
  sparkrun (spark2; NODE is any node, the head holds the definition):
  sparkrun-order                the cluster definition lists the workers before the head
  sparkrun-on-mgmt              the cluster definition lists the management (house network) addresses
  sparkrun-one-node             the cluster definition lists the head alone
  sparkrun-missing              the sparkrun CLI is gone from the head's PATH
  netplan-down-twin             the node's 40-cx7.yaml names the Down twins (f0np0) of the cabled interfaces
  sparkrun-transfer-mgmt        the cluster definition's transfer interface becomes mgmt
  sparkrun-other-user [USER]    the cluster definition's user becomes USER (default ubuntu), not the nodes' login
  image-missing [IMAGE]         an image of [sparkrun] images (default: the first) is gone from the head's Docker
  docker-no-access              the login is taken out of the node's docker group (gpasswd -d)
  sparkrun-sudoers-missing      the node loses the sudoers rules sparkrun's wizard installs
  NCCL's set-up (spark2):
  nccl-one-function             the login's ~/.nccl.conf sets NCCL_IB_HCA to one PCIe function of the port
  nccl-dev-build                the node runs NCCL 2.31.0a7+cuda13.0, a build of NCCL's dev branch
  nccl-conf-leftover            a leftover /etc/nccl.conf sets NCCL_IB_DISABLE=1 (NCCL over TCP sockets)
  the rack's own life (bench/rack_life.py):
  sshd-restart [SECONDS] [WHEN] sshd refuses connections for SECONDS (default 3), its sessions live on;
                                WHEN: now, first-connect, or a program starting (xargs, 'iperf3 -c')
  node-reboot [SECONDS] [WHEN]  sshd and its sessions end, a new boot id, sshd back after SECONDS (default 10)
  tool-broken [TOOL]            TOOL (default iperf3) is there but its loader refuses it (exit 127)
  measurement-killed [client|server]  the node's next iperf3 client (or server) is SIGKILLed, once
  controller-disk-full FOLDER   on bench: FOLDER (an empty folder for the report) is a full 64 kB tmpfs
"""


def _fill(sim: argparse.ArgumentParser) -> None:
    sub = sim.add_subparsers(dest="sim_command", metavar="{up,status,fault,heal,exec,run,down}")
    sub.required = True

    p = sub.add_parser("up", help="bring a rack up and print its inventory path")
    _profile_arguments(p)
    p.add_argument("--name", help="rack name (default: the profile's); lets racks run side by side, each a cluster of its own")
    p.add_argument("-v", "--verbose", action="store_true", help="say what is being built")
    p.set_defaults(sim_func=cmd_up)

    p = sub.add_parser("status", help="list the racks that are up")
    p.add_argument("--name")
    p.set_defaults(sim_func=cmd_status)

    p = sub.add_parser("fault", help="plant a fault", epilog=FAULT_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("node")
    p.add_argument("kind")
    p.add_argument("args", nargs="*")
    p.add_argument("--name")
    p.set_defaults(sim_func=cmd_fault)

    p = sub.add_parser("heal", help="heal a planted fault (or --all)")
    p.add_argument("node", nargs="?")
    p.add_argument("kind", nargs="?")
    p.add_argument("args", nargs="*")
    p.add_argument("--all", action="store_true", help="heal every planted fault")
    p.add_argument("--name")
    p.set_defaults(sim_func=cmd_heal)

    p = sub.add_parser("exec", help="run a command in the bench (controller) namespace")
    p.add_argument("--name")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    p.set_defaults(sim_func=cmd_exec)

    p = sub.add_parser("run", help="up, run the suite in the bench namespace, always down")
    _profile_arguments(p)
    p.add_argument("--name")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- PYTEST-ARGS...")
    p.set_defaults(sim_func=cmd_run)

    p = sub.add_parser("down", help="remove a rack: namespaces, processes, files")
    p.add_argument("--name", help="the rack (default: the only rack that is up)")
    p.add_argument("--all", action="store_true", help="every rack")
    p.set_defaults(sim_func=cmd_down)


def _profile_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("profile", choices=sorted(PROFILES) + list(GENERATED),
                   help="a document's cluster, or thor / spark: a rack of --nodes N made from the same rules")
    p.add_argument("--nodes", type=int, help="thor / spark: how many nodes (2 to 64; default 5)")
    p.add_argument("--lanes", type=int, help="thor: 25 GbE lanes per node, 1 to 4; more than one is a bond (default 1)")
    p.add_argument("--engines", type=int, help="thor: nodes serving an engine behind the agent on thor-1 (default 0)")


def _profile_name(a) -> str:
    """The profile `up` and `run` build: a named one, or a generated one (checked here)."""
    sized = {k: v for k in ("nodes", "lanes", "engines") if (v := getattr(a, k, None)) is not None}
    if a.profile not in GENERATED:
        if sized:
            raise SimError(f"--{next(iter(sized))} is for the generated racks ({' / '.join(GENERATED)}); "
                           f"{a.profile} is built as the document has it")
        return a.profile
    sized.setdefault("nodes", 5)
    generate(a.profile, **sized)
    return generated_name(a.profile, **sized)


def _strip_dashes(args: list[str]) -> list[str]:
    return args[1:] if args and args[0] == "--" else args


# --- commands --------------------------------------------------------------------------------

def cmd_up(a) -> int:
    from .rack import AlreadyUp, Rack
    t0 = time.monotonic()
    log = (lambda msg: print(f"[{time.monotonic() - t0:5.1f}s] {msg}", file=sys.stderr)) if a.verbose else None
    try:
        rack = Rack.up(_profile_name(a), a.name, log=log)
    except AlreadyUp as e:
        print(e, file=sys.stderr)
        return 0
    print(rack.inventory)
    print(f"rack {rack.name} is up in {rack.record['up_seconds']:.1f}s; run the suite with: "
          f"rackproof sim exec --name {rack.name} -- python3 -m pytest --inventory={rack.inventory}",
          file=sys.stderr)
    return 0


def cmd_status(a) -> int:
    from .rack import Rack
    from .state import all_racks
    if a.name:
        print(Rack.find(a.name).status())
        return 0
    racks = [r for r in all_racks() if r.exists()]
    if not racks:
        print("no simulated rack is up")
        return 0
    for state in racks:
        print(Rack(state).status())
    return 0


def cmd_fault(a) -> int:
    from .faults import plant
    from .rack import Rack
    rack = Rack.find(a.name)
    print(plant(rack, a.node, a.kind, a.args))
    return 0


def cmd_heal(a) -> int:
    from .faults import heal, heal_all
    from .rack import Rack
    rack = Rack.find(a.name)
    if a.all:
        for line in heal_all(rack):
            print(line)
        return 0
    if not a.node or not a.kind:
        raise SimError("heal wants NODE KIND, or --all")
    print(heal(rack, a.node, a.kind, a.args))
    return 0


def cmd_exec(a) -> int:
    from .rack import Rack
    cmd = _strip_dashes(a.cmd)
    if not cmd:
        raise SimError("exec wants a command: rackproof sim exec -- CMD ARGS...")
    rack = Rack.find(a.name)
    env = dict(os.environ, RACKPROOF_INVENTORY=str(rack.inventory))
    sys.stdout.flush()
    try:
        os.execvpe("ip", ["ip", "netns", "exec", rack.topo.bench, *cmd], env)
    except OSError as e:
        raise SimError(f"cannot run {cmd[0]}: {e.strerror}") from None


def _run_args(a) -> list[str]:
    """`run PROFILE [--name N] -- PYTEST-ARGS`: argparse hands everything after PROFILE to the
    remainder, our own options before `--` included."""
    args = list(a.pytest_args)
    if "--" in args:
        ours, args = args[:args.index("--")], args[args.index("--") + 1:]
        while ours:
            opt, _, value = ours.pop(0).partition("=")
            key = opt.removeprefix("--")
            if key not in ("name", "nodes", "lanes", "engines") or not opt.startswith("--"):
                raise SimError(f"run: unknown option {opt!r} before `--` (pytest's arguments go after it)")
            if not value:
                if not ours:
                    raise SimError(f"run: {opt} wants a value")
                value = ours.pop(0)
            if key != "name" and not value.isdigit():
                raise SimError(f"run: {opt} wants a number, not {value!r}")
            setattr(a, key, value if key == "name" else int(value))
    return args


def cmd_run(a) -> int:
    from .rack import Rack
    args = _run_args(a)
    stop = {"signal": None}
    child = {"proc": None}

    def on_signal(signum, frame):
        again = stop["signal"] is not None
        stop["signal"] = signum
        proc = child["proc"]
        if proc is not None and proc.poll() is None:
            # Ctrl-C reaches pytest from the terminal already (same process group): pass on
            # only what it would not get, and insist on a second interrupt
            if signum != signal.SIGINT or again:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        else:
            raise KeyboardInterrupt

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    rack = None
    try:
        rack = Rack.up(_profile_name(a), a.name)
        print(f"rack {rack.name} is up in {rack.record['up_seconds']:.1f}s: {rack.inventory}", file=sys.stderr)
        cmd = ["ip", "netns", "exec", rack.topo.bench, sys.executable, "-m", "pytest",
               f"--inventory={rack.inventory}", *args]
        env = dict(os.environ, RACKPROOF_INVENTORY=str(rack.inventory))
        child["proc"] = subprocess.Popen(cmd, env=env)
        while True:
            try:
                code = child["proc"].wait()
                break
            except KeyboardInterrupt:
                continue
        if stop["signal"] is not None:
            return 128 + stop["signal"]
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 128 + (stop["signal"] or signal.SIGINT)
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)       # nothing stops the clean-up
        if rack is not None:
            rack.down()
            print(f"rack {rack.name} is down", file=sys.stderr)
        for s, h in old.items():
            signal.signal(s, h)


def cmd_down(a) -> int:
    from .rack import Rack
    from .state import all_racks
    from . import netns
    if a.all:
        names = {r.name for r in all_racks()}
        from .rack import rack_name_of
        names |= {n for n in (rack_name_of(ns) for ns in netns.list_netns()) if n}
        targets = sorted(names)
    elif a.name:
        targets = [a.name]
    else:
        racks = [r for r in all_racks() if r.exists()]
        if len(racks) > 1:
            raise SimError(f"several racks are up ({', '.join(r.name for r in racks)}): name one with --name, or --all")
        targets = [r.name for r in racks] or [r.name for r in all_racks()]
    if not targets:
        print("no simulated rack is up")
        return 0
    from .state import RackState
    for name in targets:
        removed = Rack(RackState(name)).down()
        print(f"rack {name} is down" + (f" (removed {'; '.join(removed)})" if removed else " (nothing was left)"))
    return 0


def main(argv: list[str] | None = None) -> int:
    """`rackproof sim ARGS` (the entry point rackproof's command finds) and `python3 -m rackproof_sim.cli ARGS`."""
    ap = argparse.ArgumentParser(
        prog="rackproof sim", epilog=FAULT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A simulated bench rack in network namespaces: real sshd, links, iperf3 and engines.")
    _fill(ap)
    a = ap.parse_args(argv)
    return run_command(a)


def run_command(a) -> int:
    """Run a parsed `sim` command: errors as one clear line, no traceback."""
    try:
        return a.sim_func(a) or 0
    except SimError as e:
        print(f"rackproof sim: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rackproof sim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
