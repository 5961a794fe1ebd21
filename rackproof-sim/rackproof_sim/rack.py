"""Bring a simulated rack up, report on it, and take it down again.

    rack = Rack.up("thor5")          # -> Rack; rack.inventory is the generated cluster.toml
    Rack.find("thor5").status()
    Rack.find("thor5").down()        # idempotent; also cleans up after a crashed `up`
"""

from __future__ import annotations

import datetime
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import icalendar

import rackproof
from rackproof.inventory import tomltext
from rackproof.probes.safetext import one_line
from . import lldp, netns, node as nodemod, slurm, sparkrun
from .bond import bonding_view
from .netns import Topology, mac
from .profiles import MGMT_NET, USER, Profile, get_profile, node_model
from .standins import MEASURING, SPARK_TOOLS, THOR_TOOLS
from .standins.server import MAX_REQUEST, SOCKET as STANDIN_SOCKET
from .state import NODE_PROC, ROOT, RackState, all_racks, valid_name
from .util import SimError, in_netns, pid_alive, probe_tcp, run, wait_until, write

UP_TIMEOUT = 20


class AlreadyUp(SimError):
    pass


def require_root() -> None:
    if os.geteuid() != 0:
        raise SimError("the simulated rack needs root (network namespaces, mounts, sshd): run it with sudo")


class Rack:
    def __init__(self, state: RackState, profile: Profile | None = None):
        self.state = state
        record = state.load()
        self.record = record
        name = (profile.name if profile else None) or record.get("profile")
        self.profile = profile or (get_profile(name) if name else None)
        self.topo = Topology(self.profile, state) if self.profile else None

    @property
    def name(self) -> str:
        return self.state.name

    @property
    def standin_client(self) -> Path:
        """The compiled client every read-only stand-in tool on a node's PATH links to."""
        return self.state.lib / "standin-client"

    @property
    def inventory(self) -> Path:
        return self.state.inventory

    # lookup -------------------------------------------------------------------------------
    @classmethod
    def find(cls, name: str | None = None) -> "Rack":
        """The rack called `name`, or the only rack that is up."""
        if name:
            if not valid_name(name):
                raise SimError(f"{name!r} is not a rack name (letters, digits, - and _, up to 24)")
            state = RackState(name)
            if not state.exists() and not stale_namespaces(name):
                raise SimError(f"no rack named {name} is up (`rackproof sim status` lists them)")
            return cls(state)
        racks = [r for r in all_racks() if r.exists()]
        if not racks:
            raise SimError("no simulated rack is up (start one with `rackproof sim up thor5`)")
        if len(racks) > 1:
            raise SimError(f"several racks are up ({', '.join(r.name for r in racks)}): name one with --name")
        return cls(racks[0])

    def node_spec(self, name: str):
        try:
            return self.profile.node(name)
        except KeyError:
            raise SimError(f"rack {self.name} has no node {name!r} (nodes: "
                           f"{', '.join(n.name for n in self.profile.nodes)})") from None

    def node(self, name: str) -> nodemod.Node:
        spec = self.node_spec(name)
        n = nodemod.Node(self.profile, spec, self.state, self.topo.node_ns(name), self.record["uid"],
                         self.record.get("holders", {}))
        n.pid = self.record["nodes"][name]["holder"]
        if not pid_alive(n.pid):
            raise SimError(f"{name}'s namespaces are gone (its holder process {n.pid} died): "
                           f"`rackproof sim down --name {self.name}` and bring the rack up again")
        return n

    # up -----------------------------------------------------------------------------------
    @classmethod
    def up(cls, profile_name: str, name: str | None = None, log=None) -> "Rack":
        require_root()
        lldp.require()
        profile = get_profile(profile_name)
        name = name or profile.name
        if not valid_name(name):
            raise SimError(f"{name!r} is not a rack name (letters, digits, - and _, up to 24)")
        state = RackState(name)
        if state.exists():
            record = state.load()
            if record.get("phase") == "up":
                raise AlreadyUp(f"rack {name} is already up: {state.inventory} (left alone)")
            if pid_alive(record.get("up_pid")) and record.get("up_pid") != os.getpid():
                raise SimError(f"rack {name} is being brought up right now (by pid {record['up_pid']})")
            raise SimError(f"an earlier `up` of rack {name} did not finish: run "
                           f"`rackproof sim down --name {name}` first")
        if stale_namespaces(name):
            raise SimError(f"namespaces of an earlier rack {name} are still there: run "
                           f"`rackproof sim down --name {name}` first")
        netns_dir_existed = Path("/run/netns").exists()
        ROOT.mkdir(parents=True, exist_ok=True)
        os.chmod(ROOT, 0o755)
        try:
            state.root.mkdir()
        except FileExistsError:
            raise SimError(f"{state.root} exists but holds no rack record: run "
                           f"`rackproof sim down --name {name}` first") from None
        os.chmod(state.root, 0o755)
        rack = cls(state, profile)
        t0 = time.monotonic()
        rack.record = {"profile": profile.name, "name": name, "created": time.time(), "phase": "starting",
                       "up_pid": os.getpid(), "namespaces": rack.topo.namespaces(), "nodes": {},
                       "faults": [], "root": str(state.root), "netns_dir_existed": netns_dir_existed}
        state.save(rack.record)
        try:
            rack._build(log or (lambda msg: None))
        except BaseException:
            try:
                rack.down()
            finally:
                pass
            raise
        rack.record["phase"] = "up"
        rack.record["up_seconds"] = round(time.monotonic() - t0, 2)
        state.save(rack.record)
        return rack

    def _build(self, log) -> None:
        p, s, topo = self.profile, self.state, self.topo
        holders = p.sharing.holders if p.sharing else []
        uid, *holder_uids = nodemod.host_ids(1 + len(holders))
        self.record["uid"] = uid
        self.record["holders"] = dict(zip(holders, holder_uids))
        self._copy_lib()
        log("networks")
        netns.make_neighbour_room(netns.neighbour_entries(p))
        topo.create()
        self.state.save(self.record)

        # keys and files
        log("keys and files")
        bench_key = s.bench_key
        bench_key.parent.mkdir(parents=True, exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"rackproof-bench@{self.name}", "-f", str(bench_key)])
        bench_pub = bench_key.with_suffix(".pub").read_text().strip()
        nodes = {spec.name: nodemod.Node(p, spec, s, topo.node_ns(spec.name), uid, self.record["holders"])
                 for spec in p.nodes}
        munge_key = slurm.new_key() if p.sharing else b""
        hosts_lines = [f"{spec.cluster_ip} {spec.name}" for spec in p.nodes if spec.cluster_ip]

        def prep(n: nodemod.Node) -> str:
            n.prepare(hosts_lines, p.release)
            if p.sharing:
                slurm.write_files(p, n.dir, munge_key)
            s.save_model(n.spec.name, node_model(p, n.spec, lambda ifname, spec=n.spec: mac(p, spec, ifname)))
            lldp.write_node_conf(n.dir / "etc.upper")
            self._write_standins(n)
            return n.keygen()

        with ThreadPoolExecutor(max_workers=8) as pool:
            user_keys = dict(zip(nodes, pool.map(prep, nodes.values())))
        known_user, known_bench = [], []
        for n in nodes.values():
            key = " ".join(n.host_key)
            # every address a node is reached by: its name, cluster and CX7 addresses, and the house
            # network's (a sparkrun definition may name those)
            addrs = [n.spec.name] + [c.address.split("/")[0] for c in n.spec.cx7 if c.address]
            addrs += [ip for ip in (n.spec.ip, n.spec.mgmt_ip) if ip]
            known_user.append(f"{','.join(addrs)} {key}")
            known_bench.append(f"{n.spec.name},{n.spec.mgmt_ip} {key}")
        authorized = [bench_pub] + [user_keys[name] for name in nodes]
        for n in nodes.values():
            n.write_ssh(authorized, known_user)
        write(s.known_hosts, "\n".join(known_bench) + "\n")
        write(s.ssh_config, self._ssh_config())
        agent_key = secrets.token_urlsafe(24)
        write(s.agent_key, agent_key + "\n", 0o600)

        # node namespaces
        log("node namespaces")
        for n in nodes.values():
            n.start_holder()
            self.record["nodes"][n.spec.name] = {"unshare": n.unshare_pid}
        self.state.save(self.record)
        for n in nodes.values():
            self.record["nodes"][n.spec.name]["holder"] = n.wait_holder()
        self.state.save(self.record)
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda n: n.setup_mounts(), nodes.values()))
        for n in nodes.values():
            self.record["nodes"][n.spec.name]["standins"] = self.start_standin_server(n)
            self.record["nodes"][n.spec.name]["sshd"] = n.start_sshd()
        self.state.save(self.record)
        log("LLDP")
        if p.platform == "thor":
            self.record["switch_lldpd"] = lldp.start_switch(topo.fabric_ns, p.switch["name"], s.root / "switch-lldpd.log")
        for n in nodes.values():
            self.record["nodes"][n.spec.name]["lldpd"] = self.start_lldpd(n)
        self.state.save(self.record)

        if p.sparkrun_cluster:
            log("sparkrun on the head")
            head = nodes[p.nodes[0].name]
            sparkrun.install(head, sparkrun.executable())
            sparkrun.create_cluster(head, p.sparkrun_cluster, sparkrun.hosts(p), USER)
        if p.sharing:
            log("munge and Slurm")
            slurm.start(p, nodes, self.record)
            for job in p.sharing.jobs:
                self.record["nodes"][job.node].setdefault("jobs", {})[job.unit] = nodes[job.node].spawn_user(
                    ["sleep", "infinity"], f"job-{job.person}-{job.unit}.log", login=job.person)
            self.state.save(self.record)

        # bond views and the monitor
        if p.bonded:
            for n in nodes.values():
                if n.spec.bond_lanes:
                    self._initial_bond_view(n)
            self.record["monitor"] = self._start_monitor()

        # engines and the agent
        log("engines and agent")
        for e in p.engines:
            self.record["nodes"][e.node].setdefault("engines", {})[f"{e.model}@{e.port}"] = \
                self.start_engine(nodes[e.node], e)
        if p.agent_node:
            self.record["nodes"][p.agent_node]["agent"] = self.start_agent(nodes[p.agent_node], agent_key)
        self.state.save(self.record)

        # ready?
        log("waiting for sshd, engines, agent")
        deadline = time.monotonic() + UP_TIMEOUT
        for n in nodes.values():
            wait_until(f"sshd on {n.spec.name} ({n.spec.mgmt_ip}:22 from the bench)",
                       lambda n=n: in_netns(topo.bench, probe_tcp, n.spec.mgmt_ip, 22, 0.5, b"SSH-2.0"),
                       max(deadline - time.monotonic(), 1))
        for e in p.engines:
            wait_until(f"engine {e.model} on {e.node} ({e.listen}:{e.port})",
                       lambda e=e: in_netns(topo.node_ns(e.node), probe_tcp, e.listen, e.port),
                       max(deadline - time.monotonic(), 1))
        if p.agent_node:
            host, port = p.agent_listen.rsplit(":", 1)
            wait_until(f"the agent on {p.agent_node} ({p.agent_listen})",
                       lambda: in_netns(topo.node_ns(p.agent_node), probe_tcp, host, int(port)),
                       max(deadline - time.monotonic(), 1))
        for n in nodes.values():
            lldp.wait_heard(n, lldp.cabled(n.spec), max(deadline - time.monotonic(), 3))
        for ns in topo.namespaces():
            if netns.has_default_route(ns):
                raise SimError(f"namespace {ns} has a default route: the rack must have no way out")
        if p.sharing:
            write(s.calendar, calendar_ics(p))
        write(s.inventory, inventory_toml(p, s))
        _validate_inventory(s.inventory)
        log("the operator's sudo rights (rackproof sudoers)")
        self.install_sudoers()

    def install_sudoers(self) -> None:
        """Each node's /etc/sudoers.d/rackproof: the file `rackproof sudoers --allow-disruptive`
        writes for the rack's inventory, from the bench as a site's operator runs it; the operator's
        login has no other sudo."""
        done = subprocess.run(["ip", "netns", "exec", self.topo.bench, sys.executable, "-m", "rackproof.cli", "sudoers",
                               f"--inventory={self.state.inventory}", "--allow-disruptive"],
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SimError(f"rackproof sudoers failed for rack {self.name}: {one_line(done.stderr.strip())}")
        for spec in self.profile.nodes:   # through the node's own /etc, as an admin installs it
            self.node(spec.name).sh("umask 0337; cat > /etc/sudoers.d/rackproof",
                                    input=done.stdout)

    def _copy_lib(self) -> None:
        """The simulator and the product parts its stand-ins print with (the probes' types, the
        bond's hash), copied where the node's user can read them: the nodes run the system
        Python, which sees neither this environment nor a checkout under /root."""
        product = Path(rackproof.__file__).resolve().parent
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(Path(__file__).resolve().parent, self.state.lib / "rackproof_sim", ignore=ignore)
        dst = self.state.lib / "rackproof"
        dst.mkdir(parents=True)
        write(dst / "__init__.py", '"""rackproof (the parts the simulated nodes run)."""\n')
        shutil.copytree(product / "probes", dst / "probes", ignore=ignore)   # the bond's hash too (probes/bondhash)
        subprocess.run([nodemod.PY, "-m", "compileall", "-q", str(self.state.lib)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for root, dirs, files in os.walk(self.state.lib):
            os.chmod(root, 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
        source = self.state.lib / "rackproof_sim" / "standin_client.c"
        run(["cc", "-O2", "-Wall", "-Werror", f'-DSTANDIN_SOCKET="{STANDIN_SOCKET}"', f"-DMAX_REQUEST={MAX_REQUEST}",
             "-o", str(self.standin_client), str(source)])      # cc makes it 0755

    def _write_standins(self, n: nodemod.Node) -> None:
        tools = THOR_TOOLS if n.spec.platform == "thor" else SPARK_TOOLS
        env = f"RACKPROOF_SIM_MODEL={self.state.model_path(n.spec.name)} PYTHONPATH={self.state.lib}"
        for tool in tools:
            if tool in MEASURING:
                write(n.dir / "bin" / tool, f"#!/bin/sh\n# rackproof sim stand-in for {tool} (prints the real tool's "
                      f"format)\n{env} exec {nodemod.PY} -S -m rackproof_sim.standins {tool} \"$@\"\n", 0o755)
            else:
                (n.dir / "bin" / tool).symlink_to(self.standin_client)    # the client asks for its own name
        if n.spec.bond_lanes:
            # no bonding module in a namespace, and no file can be added to /proc: the node's cat
            # shows the simulated bond's view there, every other file as cat does
            # (bash's exec -a: cat's own messages name it `cat`, as on a node, not /usr/bin/cat)
            write(n.dir / "bin" / "cat",
                  "#!/bin/bash\n# rackproof sim stand-in for cat: /proc/net/bonding/* from the simulated bond\n"
                  f"case $#:$1 in 1:/proc/net/bonding/*) exec -a cat /usr/bin/cat {NODE_PROC}/net/bonding/\"${{1#/proc/net/bonding/}}\";; esac\n"
                  "exec -a cat /usr/bin/cat \"$@\"\n", 0o755)
        if n.spec.platform == "thor":
            write(n.dir / "bin" / "thor-tigress-agent",
                  f"#!/bin/sh\nPYTHONPATH={self.state.lib} exec {nodemod.PY} -S -m rackproof_sim.agent \"$@\"\n", 0o755)
        if n.spec.platform == "spark":
            build = n.home / "nccl-tests" / "build"
            build.mkdir(parents=True, exist_ok=True)
            for tool in ("all_gather_perf", "all_reduce_perf"):
                link = build / tool
                if not link.exists():
                    link.symlink_to(f"/usr/local/bin/{tool}")
            for path in (n.home / "nccl-tests", build):
                os.chown(path, n.uid, n.uid)

    def _ssh_config(self) -> str:
        p, s = self.profile, self.state
        lines = [f"# rackproof sim: how the controller (the bench namespace) reaches rack {self.name}",
                 f"# (profile {p.name}). Generated; `rackproof sim down` removes it.", ""]
        for spec in p.nodes:
            lines += [f"Host {spec.name}", f"    HostName {spec.mgmt_ip}", ""]
        names = " ".join(spec.name for spec in p.nodes)
        lines += [f"Host {names} {MGMT_NET}.*",
                  f"    User {USER}",
                  f"    IdentityFile {s.bench_key}",
                  "    IdentitiesOnly yes",
                  f"    UserKnownHostsFile {s.known_hosts}",
                  "    StrictHostKeyChecking no",
                  "    BatchMode yes",
                  "    LogLevel ERROR",
                  ""]
        return "\n".join(lines)

    def _initial_bond_view(self, n: nodemod.Node) -> None:
        model = self.state.load_model(n.spec.name)
        lanes = [{"name": lane, "up": True, "speed": model["interfaces"][lane]["speed"],
                  "mac": model["interfaces"][lane]["mac"], "failures": 0} for lane in n.spec.bond_lanes]
        path = n.dir / "proc" / "net" / "bonding" / "bond0"
        write(path, bonding_view(n.spec.index, model["bond"], lanes), 0o444)

    def _start_monitor(self) -> int:
        log = open(self.state.monitor_log, "ab")
        env = {"PYTHONPATH": str(self.state.lib), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.Popen([nodemod.PY, "-S", "-m", "rackproof_sim.monitor", "--name", self.name], env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        return proc.pid

    # engines and agent ----------------------------------------------------------------------
    def start_standin_server(self, n: nodemod.Node) -> int:
        tools = [t for t in (THOR_TOOLS if n.spec.platform == "thor" else SPARK_TOOLS) if t not in MEASURING]
        pid = n.spawn(["env", "-i", f"PYTHONPATH={self.state.lib}", "LANG=C.UTF-8", nodemod.PY, "-S", "-m",
                       "rackproof_sim.standins.server", str(self.state.model_path(n.spec.name)), *tools],
                      n.dir / "log" / "standins.log")
        wait_until(f"{n.spec.name}'s stand-in server", lambda: Path(f"/proc/{pid}/root{STANDIN_SOCKET}").exists(), 10)
        return pid

    def start_lldpd(self, n: nodemod.Node) -> int:
        interfaces = [lane.name for lane in n.spec.lanes] + [c.name for c in n.spec.cx7]
        return n.spawn(lldp.node_command(interfaces), n.dir / "log" / "lldpd.log")

    def start_engine(self, n: nodemod.Node, e, listen: str | None = None) -> int:
        return n.spawn_user(
            [nodemod.PY, "-S", "-m", "rackproof_sim.engines", "--model", e.model, "--host", listen or e.listen,
             "--port", str(e.port), "--tokens-per-s", str(e.tokens_per_s),
             "--model-file", str(self.state.model_path(n.spec.name))],
            f"engine-{e.model}-{e.port}.log")

    def start_agent(self, n: nodemod.Node, key: str) -> int:
        args = ["/usr/local/bin/thor-tigress-agent", "--listen", self.profile.agent_listen]
        for e in self.profile.engines:
            if e.agent:
                args += ["--engine", f"{e.model}={e.host}:{e.port}"]
        return n.spawn_user(args, "thor-tigress-agent.log", {"THOR_AGENT_KEY": key})

    # status -------------------------------------------------------------------------------
    def status(self) -> str:
        r = self.record
        if not r:
            return f"rack {self.name}: no record (namespaces left over: {', '.join(stale_namespaces(self.name))})"
        age = time.time() - r.get("created", time.time())
        lines = [f"rack {self.name} (profile {r.get('profile')}): {r.get('phase')} for {_age(age)}"
                 f"{', up in %.1fs' % r['up_seconds'] if r.get('up_seconds') else ''}",
                 f"  inventory  {self.state.inventory}",
                 f"  exec       rackproof sim exec --name {self.name} -- CMD   (bench {self.topo.bench}, "
                 f"{MGMT_NET}.1)"]
        if r.get("monitor"):
            lines.append(f"  monitor    pid {r['monitor']} {'running' if pid_alive(r['monitor']) else 'NOT RUNNING'}")
        present = set(netns.list_netns())
        for spec in self.profile.nodes:
            info = r.get("nodes", {}).get(spec.name, {})
            parts = [f"  {spec.name:<8} {spec.mgmt_ip:<14}"]
            ns = self.topo.node_ns(spec.name)
            if ns not in present:
                parts.append("namespace missing")
            parts.append(f"sshd {'up' if pid_alive(info.get('sshd')) else 'down'}")
            parts.append(f"stand-ins {'up' if pid_alive(info.get('standins')) else 'down'}")
            for key, pid in info.get("engines", {}).items():
                parts.append(f"engine {key} {'up' if pid_alive(pid) else 'down'}")
            if "agent" in info:
                parts.append(f"agent {'up' if pid_alive(info['agent']) else 'down'}")
            links = _link_states(ns) if ns in present else {}
            ifaces = [l.name for l in spec.lanes if l.connected] + [c.name for c in spec.cx7 if c.link]
            down = [i for i in ifaces if not links.get(i)]
            parts.append(f"links {len(ifaces) - len(down)}/{len(ifaces)} up" + (f" ({', '.join(down)} down)" if down else ""))
            lines.append("  ".join(parts))
        faults = r.get("faults", [])
        lines.append("  faults     " + ("; ".join(f"{f['node']} {f['kind']} {' '.join(f.get('args', []))}".strip()
                                              for f in faults) if faults else "none"))
        return "\n".join(lines)

    # down ---------------------------------------------------------------------------------
    def down(self) -> list[str]:
        """Remove every namespace, process and file of this rack. Returns what it removed."""
        require_root()
        removed = []
        record = self.state.load()
        names = set(record.get("namespaces", [])) | set(stale_namespaces(self.name))
        # the monitor first, so it does not react to links going away; found by its command
        # line, since an `up` killed just after starting it never recorded its pid
        monitors = _monitors(self.name)
        if monitors:
            _kill(_held(monitors, lambda pid: _is_monitor(pid, self.name)))
            removed.append(f"monitor {', '.join(map(str, monitors))}")
        present = set(netns.list_netns())
        pids = []
        for ns in sorted(names & present):
            out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
            pids += [int(x) for x in out.split() if x.isdigit()]
        for info in record.get("nodes", {}).values():
            for key in ("unshare", "holder", "sshd", "agent"):
                if info.get(key) and _in_rack_netns(info[key], names & present):
                    pids.append(info[key])
        pids = sorted(set(pids) - {os.getpid()})
        if pids:
            _kill(_held(pids, lambda pid: _in_rack_netns(pid, names & present)))
            removed.append(f"{len(pids)} processes")
        if names & present:
            netns.delete(sorted(names & present))
            removed.append(f"namespaces {', '.join(sorted(names & present))}")
        if self.state.root.exists():
            _umount_under(self.state.root)
            shutil.rmtree(self.state.root, ignore_errors=True)
            if self.state.root.exists():
                raise SimError(f"could not remove {self.state.root}")
            removed.append(str(self.state.root))
        if not [r for r in all_racks() if r.root.exists()]:
            netns.restore_neighbour_limits()
        try:
            ROOT.rmdir()        # only when no other rack is left
        except OSError:
            pass
        if record.get("netns_dir_existed") is False and not ROOT.exists():
            _remove_netns_dir()  # `ip netns add` made /run/netns for us: leave the host as it was
        return removed


# --- helpers --------------------------------------------------------------------------------


def stale_namespaces(name: str) -> list[str]:
    """Namespaces named like this rack's, whatever its record says."""
    prefix = RackState(name).ns_prefix
    known = set()
    try:
        profile = get_profile(RackState(name).load().get("profile") or "")
        known = set(Topology(profile, RackState(name)).namespaces())
    except SimError:
        pass
    out = []
    for ns in netns.list_netns():
        if ns in known:
            out.append(ns)
        elif ns.startswith(prefix):
            rest = ns[len(prefix):]
            # rp-<name>-<part>: make sure `name` is not just the prefix of another rack's name
            if rest in ("bench", "house", "switch", "cable") or rest.startswith(("thor-", "spark-")):
                out.append(ns)
    return out


def _remove_netns_dir() -> None:
    base = Path("/run/netns")
    try:
        if base.is_dir() and not any(base.iterdir()):
            subprocess.run(["umount", base], capture_output=True)
            base.rmdir()
    except OSError:
        pass


def rack_name_of(ns: str) -> str | None:
    """The rack a namespace named rp-<rack>-<part> belongs to."""
    if not ns.startswith("rp-"):
        return None
    rest = ns[3:]
    for part in ("-bench", "-house", "-switch", "-cable"):
        if rest.endswith(part):
            return rest[: -len(part)] or None
    import re
    match = re.fullmatch(r"(.+)-(?:thor|spark)-\d+", rest)
    return match[1] if match else None


def _is_monitor(pid: int, name: str) -> bool:
    """This rack's bond monitor: `python3 -m rackproof_sim.monitor --name NAME` until it renames
    itself `rackproof-sim-monitor --name NAME`."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
    except OSError:
        return False
    return ("rackproof-sim-monitor" in args or "rackproof_sim.monitor" in args) and args[-2:] == ["--name", name]


def _monitors(name: str) -> list[int]:
    return [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit() and _is_monitor(int(e.name), name)]


def _in_rack_netns(pid: int, names: set[str]) -> bool:
    ino = None
    try:
        ino = os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return False
    for ns in names:
        try:
            if os.stat(f"/run/netns/{ns}").st_ino == ino:
                return True
        except OSError:
            continue
    return False


def _held(pids: list[int], ours) -> list[int]:
    """pidfds of those `pids` still ours (`ours(pid)`, asked once the pidfd holds the process).
    Only a pidfd is signalled: a pid freed since it was listed may already be another rack's
    process (pid_max is 32768 on a small machine, and the selftests' racks wrap it in minutes;
    a teardown that killed by number once took a neighbouring rack's munged and slurmctld)."""
    fds = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        if ours(pid):
            fds.append(fd)
        else:
            os.close(fd)
    return fds


def _ended(fd: int) -> bool:
    """A pidfd polls readable once its process has exited."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


def _kill(fds: list[int], grace: float = 1.5) -> None:
    """SIGTERM, then after `grace` SIGKILL, the processes of these pidfds; closes them."""
    def send(fd, sig):
        try:
            signal.pidfd_send_signal(fd, sig)
        except ProcessLookupError:
            pass
    def wait(seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not all(map(_ended, fds)):
            time.sleep(0.02)
    for fd in fds:
        send(fd, signal.SIGCONT)     # a stopped sshd (ssh-hang) must be able to die
        send(fd, signal.SIGTERM)
    wait(grace)
    for fd in fds:
        if not _ended(fd):
            send(fd, signal.SIGKILL)
    wait(2)
    for fd in fds:
        os.close(fd)


def _umount_under(root: Path) -> None:
    """Mounts in the host's mount namespace under the state dir (there should be none)."""
    try:
        mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    except OSError:
        return
    for m in sorted((m for m in mounts if m.startswith(str(root) + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", m], capture_output=True)


def _link_states(ns: str) -> dict[str, bool]:
    from .monitor import link_states, open_rtnl
    try:
        sock = open_rtnl(ns)
        try:
            return link_states(sock, 1)
        finally:
            sock.close()
    except OSError:
        return {}


def _age(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _validate_inventory(path: Path) -> None:
    try:
        from rackproof.inventory.model import InventoryError, load_inventory
    except ImportError:       # pydantic missing: the suite cannot run anyway; the rack can
        return
    try:
        load_inventory(path)
    except InventoryError as e:
        raise SimError(f"the generated inventory does not validate: {e.problems[0]}") from None


# --- the generated inventory ----------------------------------------------------------------

def calendar_ics(p: Profile) -> str:
    """The shelf's shared calendar as a calendar program exports it (one event a reservation:
    the holder in SUMMARY, the node in LOCATION), in hours around now, to the minute."""
    at = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//rackproof sim//shared calendar//EN")
    calendar.add("version", "2.0")
    for k, r in enumerate(p.sharing.reservations):
        event = icalendar.Event()
        event.add("uid", f"{k}-{r.person}-{r.node}@{p.name}.rackproof-sim")
        event.add("dtstamp", at)
        event.add("summary", f"{r.person}: whole-node slice")
        event.add("location", r.node)
        event.add("dtstart", at + datetime.timedelta(hours=r.start_h))
        event.add("dtend", at + datetime.timedelta(hours=r.end_h))
        calendar.add_component(event)
    return calendar.to_ical().decode()


SHARED_CPU_NODES = 8   # above this many nodes, the mesh's logins at once would starve a 2-core machine
SIM_FANOUT = 2         # measured on 32 nodes: 8 at once timed out banners, 1, 2 and 4 took 26-28 s


def cluster_name(p: Profile, s: RackState) -> str:
    """The profile's cluster name for the rack of the profile's own name (`sim up thor5`, whose
    recordings are examples/replay), else that name with the rack's: racks up side by side are
    clusters of their own, as the product keys a cluster's node locks by its name and nodes, and
    two racks of one profile would otherwise take turns at each other's load rounds."""
    return p.cluster_name if s.name == p.name else f"{p.cluster_name}-{s.name}"


def inventory_toml(p: Profile, s: RackState) -> str:
    out = [f"# Generated by `rackproof sim up {p.name}` (rack {s.name}): {p.description}.",
           f"# A simulated rack: lanes are shaped to their rate x {p.scale:g} ([expect] lane_rate_gbps); speeds, FEC,",
           "# releases and GPUs are modelled by stand-ins that print the real tools' formats.",
           f"# `rackproof sim down --name {s.name}` removes the rack and this file."]
    if p.step_note:
        out.append(f"# This shelf is at an early build step: {p.step_note}.")
    out += ["", "[cluster]", f"name = {tomltext.value(cluster_name(p, s))}", f"platform = {tomltext.value(p.platform)}",
            f"user = {tomltext.value(USER)}"]
    if p.switch:
        out += ["", "[switch]"] + [f"{k} = {tomltext.value(v)}" for k, v in p.switch.items()]
    out += ["", "[ssh]", f"config = {tomltext.value(str(s.ssh_config))}",
            f"identity = {tomltext.value(str(s.bench_key))}", "connect_timeout = 5", "command_timeout = 60"]
    if len(p.nodes) > SHARED_CPU_NODES:
        out += ["# every node's logins run on this machine's few cores: fewer at once than a real node takes",
                f"fanout = {SIM_FANOUT}"]
    # the lanes' rates are the simulator's business: it writes what its shaped lanes carry
    expect = p.expect | ({"lane_rate_gbps": p.shaped_mbit / 1000} if any(n.lanes for n in p.nodes) else {})
    if expect:
        out += ["", "[expect]"] + [f"{k} = {tomltext.value(v)}" for k, v in expect.items()]
    for spec in p.nodes:
        out += ["", "[[nodes]]", f"name = {tomltext.value(spec.name)}", f"ssh = {tomltext.value(spec.name)}"]
        if spec.address:
            out.append(f"address = {tomltext.value(spec.address)}")
        if spec.interface and not spec.bond_lanes:
            out.append(f"interface = {tomltext.value(spec.interface)}")
        out.append(f"joins_at_step = {spec.joins_at_step}")
        if spec.bond_lanes:
            out.append("bond = " + tomltext.value({"name": "bond0", "mode": "802.3ad", "miimon": 100,
                                                "xmit_hash_policy": "layer3+4", "lanes": spec.bond_lanes}))
        if spec.lanes:
            out.append("lanes = [")
            for lane in spec.lanes:
                entry = {"name": lane.name}
                if lane.connected:
                    entry.update(switch_port=lane.switch_port, joins_at_step=lane.joins_at_step, cable=lane.cable)
                else:
                    entry.update(connected=False, joins_at_step=lane.joins_at_step)
                out.append(f"    {tomltext.value(entry)},")
            out.append("]")
        cabled = [c for c in spec.cx7 if c.address]
        if cabled:
            out.append("cx7 = [")
            for c in cabled:
                out.append("    " + tomltext.value({"name": c.name, "rdma_device": c.rdma_device, "address": c.address}) + ",")
            out.append("]")
    if p.sparkrun_cluster:
        out += ["", "[sparkrun]", f"cluster = {tomltext.value(p.sparkrun_cluster)}"]
        if p.images:
            out.append(f"images = {tomltext.value(p.images)}")
    if p.sharing:
        out += ["", "[slurm]", f"controller = {tomltext.value(p.sharing.slurm_controller)}",
                f"partition = {tomltext.value(p.sharing.partition)}",
                f"max_time_hours = {tomltext.value(p.sharing.max_time_hours)}",
                "", "# the shared calendar's export: who holds which node when (rackproof sim wrote it)",
                "[slices]", f"holders = {tomltext.value(p.sharing.holders)}",
                f"calendar = {tomltext.value(str(s.calendar))}"]
    if p.agent_node:
        out += ["", "[agent]", f"node = {tomltext.value(p.agent_node)}", f"listen = {tomltext.value(p.agent_listen)}",
                f"key_file = {tomltext.value(str(s.agent_key))}"]
    for e in p.engines:
        out += ["", "[[engines]]", f"model = {tomltext.value(e.model)}", f"node = {tomltext.value(e.node)}"]
        if e.host != e.node:
            out.append(f"host = {tomltext.value(e.host)}")
        if not e.default_listen:
            out.append(f"listen = {tomltext.value(e.listen)}")
        out.append(f"port = {e.port}")
        if e.tokens_per_s_floor is not None:
            out.append(f"tokens_per_s_floor = {e.tokens_per_s_floor}")
        if not e.agent:
            out.append("agent = false")
    return "\n".join(out) + "\n"
