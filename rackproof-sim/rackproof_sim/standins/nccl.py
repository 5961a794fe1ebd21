"""mpirun and the nccl-tests binaries (all_gather_perf, all_reduce_perf) of a DGX Spark pair.

mpirun starts the remote ranks over real SSH (as Open MPI's rsh launcher does); the ranks
exchange real data over the CX7 link towards the host they were given; the table printed comes
from the node's model (bus bandwidth of the pair). An SSH failure gives Open MPI's daemon
failure text, a CX7 link that is down gives NCCL's network error, as on the real pair.

With NCCL_DEBUG=INFO each rank prints NCCL's set-up lines as NCCL 2.28 prints them on a Spark
pair (selftests/samples/nccl_debug_dgx_spark_2node_init_both_functions_PARTIAL.txt): its
settings, read as NCCL reads them (the environment, then NCCL_CONF_FILE or ~/.nccl.conf, then
/etc/nccl.conf), its version (the node's libnccl2, or the model's `nccl_build`), and the RoCE
devices NCCL_IB_HCA leaves it. The bus bandwidth follows: one function of the port, a
development build, TCP sockets each move what they moved on a real pair.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import socket
import subprocess
import sys
import time

from . import ipv4_of, link_up, model

ORTE_FAILURE = """--------------------------------------------------------------------------
ORTE was unable to reliably start one or more daemons.
This usually is caused by:

* not finding the required libraries and/or binaries on
  one or more nodes. Please check your PATH and LD_LIBRARY_PATH
  settings, or configure OMPI with --enable-orterun-prefix-by-default

* lack of authority to execute on one or more specified nodes.
  Please verify your allocation and authorities.

* the inability to write startup files into /tmp (--tmpdir/orte_tmpdir_base).
  Please check with your sys admin to determine the correct location to use.

*  compilation of the orted with dynamic libraries when static are required
  (e.g., on Cray). Please check your configure cmd line and consider using
  one of the contrib/platform definitions for your system type.

* an inability to create a connection back to mpirun due to a
  lack of common network interfaces and/or no route found between
  them. Please check network interface and/or routing tables.
--------------------------------------------------------------------------
"""

JOB_FAILED = """--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpirun detected that one or more processes exited with a non-zero status, thus causing
the job to be terminated. The first process to do so was:

  Process name: [[48213,1],1]
  Exit code:    3
--------------------------------------------------------------------------
"""

_MPI_FLAGS_WITH_VALUE = {"-np", "-n", "-c", "--np", "-H", "--host", "-host", "--hostfile", "-hostfile",
                         "--map-by", "--bind-to", "--rank-by", "-x", "--prefix", "-wdir", "--wdir", "--npernode",
                         "-npernode", "--report-bindings-file", "--output-filename", "--tag-output-file"}


def run(tool: str, args: list[str]) -> int:
    if tool == "mpirun":
        return mpirun(args)
    return rank(tool, args)


def _local_names() -> set[str]:
    names = {"localhost", "127.0.0.1", socket.gethostname()}
    m = model()
    for name in m["interfaces"]:
        ip = ipv4_of(name)
        if ip:
            names.add(ip)
    return names


def mpirun(args: list[str]) -> int:
    hosts: list[str] = []
    env_pass: dict[str, str] = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        if a in ("--mca", "-mca", "--gmca"):
            i += 3
            continue
        if a in _MPI_FLAGS_WITH_VALUE:
            value = args[i + 1] if i + 1 < len(args) else ""
            if a in ("-H", "--host", "-host"):
                hosts += [h.split(":")[0] for h in value.split(",") if h]
            elif a in ("--hostfile", "-hostfile"):
                try:
                    with open(os.path.expanduser(value)) as f:
                        hosts += [line.split()[0] for line in f if line.strip() and not line.startswith("#")]
                except OSError:
                    sys.stderr.write(f"Open MPI was unable to open the hostfile:\n    {value}\n")
                    return 1
            elif a == "-x":
                k, _, v = value.partition("=")
                env_pass[k] = v if _ else os.environ.get(k, "")
            i += 2
            continue
        i += 1
    program = args[i:] if i < len(args) else []
    if not program:
        sys.stderr.write("mpirun: no executable specified\n")
        return 1
    if not hosts:
        hosts = ["localhost"]
    local = _local_names()
    remote = [h for h in dict.fromkeys(hosts) if h not in local]
    tool = os.path.basename(program[0])
    if tool not in ("all_gather_perf", "all_reduce_perf"):
        sys.stderr.write(f"mpirun: this simulated node runs only the nccl-tests stand-ins, not {program[0]}\n")
        return 1
    # start the remote ranks over SSH, as Open MPI's rsh launcher starts orted
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    peers = []
    for host in remote:
        try:
            addr = socket.gethostbyname(host)
        except OSError:
            sys.stderr.write(f"ssh: Could not resolve hostname {host}: Name or service not known\n" + ORTE_FAILURE)
            return 1
        peers.append((host, addr))
    bind_ip = _source_for(peers[0][1]) if peers else "127.0.0.1"
    listener.bind((bind_ip or "0.0.0.0", 0))
    listener.listen(len(peers) or 1)
    port = listener.getsockname()[1]
    procs = []
    for r, (host, addr) in enumerate(peers, start=1):
        passed = " ".join(shlex.quote(f"{k}={v}") for k, v in env_pass.items())
        cmd = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host,
               f"{passed} RACKPROOF_NCCL_RANK={r} RACKPROOF_NCCL_ROOT={bind_ip}:{port} {tool}"]
        procs.append((host, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    listener.settimeout(0.2)
    ok = True
    errors = []
    accepted = 0
    names: list[str] = []
    factors: list[float] = []
    deadline = time.monotonic() + 20
    while accepted < len(procs) and time.monotonic() < deadline:
        try:
            conn, _a = listener.accept()
        except socket.timeout:
            if all(p.poll() is not None for _h, p in procs):
                break          # every remote rank has exited without reaching us
            continue
        accepted += 1
        conn.settimeout(10)
        try:
            f = conn.makefile("rb")
            name, _, factor = f.readline().decode(errors="replace").strip().partition(" ")
            names.append(name or "?")
            factors.append(float(factor or 1.0))
            while f.read(1 << 16):
                pass
        except OSError:
            ok = False
        conn.close()
    if accepted < len(procs):
        ok = False
    lines, factor = setup({**os.environ, **env_pass})
    sys.stdout.write(lines)
    for host, p in procs:
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        if p.returncode == 255:          # ssh itself failed
            sys.stderr.write(err + ORTE_FAILURE)
            return 1
        if p.returncode != 0:
            ok = False
            errors.append(out + err)
        else:
            sys.stdout.write(out)
    if not ok:
        for e in errors:
            sys.stdout.write(e)
        sys.stdout.write(JOB_FAILED)
        return 1
    m = model()
    ranks = [socket.gethostname()] + names
    sys.stdout.write(_table(tool, ranks, program[1:], m, min([factor] + factors)))
    return 0


def _source_for(addr: str) -> str | None:
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((addr, 9))
        ip = s.getsockname()[0]
        s.close()
        return ip
    except OSError:
        return None


def rank(tool: str, args: list[str]) -> int:
    """A rank started by mpirun on another node: send data to the root over the CX7 link."""
    root = os.environ.get("RACKPROOF_NCCL_ROOT")
    if not root:
        # started by hand, without mpirun: one rank on this node
        m = model()
        sys.stdout.write(_table(tool, [socket.gethostname()], args, m))
        return 0
    host, _, port = root.rpartition(":")
    m = model()
    down = [name for name, spec in m["interfaces"].items()
            if spec.get("kind") == "cx7" and spec.get("cabled") and not link_up(name)]
    try:
        if down:
            raise OSError
        lines, factor = setup(dict(os.environ))
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(f"{socket.gethostname()} {factor}\n".encode())
        payload = b"\0" * 65536
        for _ in range(64):
            s.sendall(payload)
        s.close()
        sys.stdout.write(lines)
        return 0
    except OSError:
        me = socket.gethostname()
        hca = next((m["interfaces"][n]["rdma_device"] for n in down), "roceP2p1s0f1")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        sys.stdout.write(
            f"[{stamp}] {me}:{os.getpid()}:{os.getpid() + 10} [0] transport/net_ib.cc:2470 NCCL WARN NET/IB:\n"
            f"Got completion from peer {host}<{port}> with status=12 opcode=129 len=65536 vendor err 129 (Recv)\n"
            f"localGid ::ffff:{_source_for(host) or '0.0.0.0'} remoteGids::ffff:{host} hca {hca}\n\n"
            f"{me}: Test NCCL failure common.cu:401 'remote process exited or there was a network error / '\n")
        return 3


_SIZE = re.compile(r"([0-9]+)([KMGkmg]?)")


def _size(text: str, default: int) -> int:
    match = _SIZE.fullmatch(text or "")
    if not match:
        return default
    return int(match[1]) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[match[2].lower()]


def _table(tool: str, hosts: list[str], args: list[str], m: dict, share: float = 1.0) -> str:
    from rackproof.probes.nccl import NcclResult, NcclRow
    opts = {"-b": "8", "-e": "128M", "-f": "2"}
    i = 0
    while i < len(args):
        if args[i] in ("-b", "-e", "-f", "--minbytes", "--maxbytes", "--stepfactor") and i + 1 < len(args):
            key = {"--minbytes": "-b", "--maxbytes": "-e", "--stepfactor": "-f"}.get(args[i], args[i])
            opts[key] = args[i + 1]
            i += 2
        else:
            i += 1
    lo, hi, factor = _size(opts["-b"], 8), _size(opts["-e"], 1 << 27), max(int(opts["-f"] or 2), 2)
    n = len(hosts)
    peak = (m.get("nccl_busbw_gbs") or 22.0) * share
    gather = tool == "all_gather_perf"
    rows = []
    size = lo
    while size <= hi and len(rows) < 40:
        busbw = round(peak * size / (size + (4 << 20)) * random.uniform(0.985, 1.01), 2) if n > 1 else 0.0
        algbw = round(busbw * (n / (n - 1) if gather else n / (2 * (n - 1))), 2) if n > 1 else round(size / 1e4, 2)
        t = round(size / (algbw * 1e3), 1) if algbw else 0.1
        count = size // (4 * n) if gather else size // 4
        rows.append(NcclRow(size=size, count=count, type="float", redop="none" if gather else "sum", root=-1,
                            oop_time_us=t, oop_algbw=algbw, oop_busbw=busbw, oop_wrong=0.0,
                            ip_time=round(t * 0.97, 1), ip_algbw=round(algbw * 1.02, 2),
                            ip_busbw=round(busbw * 1.02, 2), ip_wrong=0.0))
        size *= factor
    avg = round(sum(r.oop_busbw + r.ip_busbw for r in rows) / (2 * len(rows)), 4) if rows else 0.0
    result = NcclResult(rows=tuple(rows), avg_busbw_gbs=avg, out_of_bounds=0, ok=True,
                        ranks=tuple(enumerate(hosts)), collective=tool)
    from rackproof_sim.formats.nccl import render_nccl
    return render_nccl(result)


# what NCCL moved on a real Spark pair, against both functions of the port with a release build
# (NVIDIA/dgx-spark-playbooks#102/#103): one function ~98 Gb/s of ~190, TCP sockets and a
# development build ~3 GB/s of ~23.7
ONE_FUNCTION = 98 / 190
SOCKETS = 3.0 / 23.74
DEVELOPMENT_BUILD = 3.04 / 23.74
# NCCL prints these as numbers ("... set by environment to 1."), the rest as they are ("... set to X")
_DOMAIN = re.compile(r"roceP([0-9]+)p")
_NUMERIC = ("NCCL_IB_DISABLE", "NCCL_IB_GID_INDEX", "NCCL_IB_TIMEOUT", "NCCL_IB_RETRY_CNT", "NCCL_P2P_DISABLE")


def _conf(path: str) -> list[tuple[str, str]]:
    """A file's settings as NCCL's setEnvFile reads them."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [(line.partition("=")[0], line.partition("=")[2]) for line in lines if not line.startswith("#") and "=" in line]


def _chosen(devices: list[str], hca: str | None) -> list[str]:
    """The devices NCCL_IB_HCA leaves: prefixes, '=' exact names, '^' all but these."""
    if not hca:
        return devices
    exclude, exact = hca.startswith("^"), hca.startswith("=")
    names = [n.split(":")[0] for n in hca.lstrip("^=").split(",") if n]
    hit = [d for d in devices if any(d == n if exact else d.startswith(n) for n in names)]
    return [d for d in devices if d not in hit] if exclude else hit


def setup(env: dict) -> tuple[str, float]:
    """NCCL's set-up on this node for this environment: its INFO lines (with NCCL_DEBUG=INFO)
    and the share of the pair's bus bandwidth it allows."""
    settings = dict(env)
    conf = settings.get("NCCL_CONF_FILE") or os.path.join(settings.get("HOME", "/"), ".nccl.conf")
    for name, value in _conf(conf) + _conf("/etc/nccl.conf"):
        settings.setdefault(name, value)
    m = model()
    build = m.get("nccl_build") or {}
    package = m.get("packages", {}).get("libnccl2", "2.28.3-1+cuda13.0")
    version = build.get("version") or package.split("-")[0] + "+" + package.split("+")[-1]
    # in verbs' order, as NCCL lists them: PCI domain 0000's function (uverbs1) before 0002's (uverbs3)
    cabled = sorted(((n, spec["rdma_device"]) for n, spec in m["interfaces"].items()
                     if spec.get("kind") == "cx7" and spec.get("cabled") and link_up(n)),
                    key=lambda found: (int(_DOMAIN.match(found[1])[1]) if _DOMAIN.match(found[1]) else 0, found[1]))
    devices = [] if settings.get("NCCL_IB_DISABLE") == "1" else \
        _chosen([d for _n, d in cabled], settings.get("NCCL_IB_HCA"))
    factor = 1.0 if len(devices) >= len(cabled) else ONE_FUNCTION if devices else SOCKETS
    if build.get("version"):
        factor = min(factor, DEVELOPMENT_BUILD)
    if settings.get("NCCL_DEBUG", "").upper() != "INFO":
        return "", factor
    me, pid = socket.gethostname(), os.getpid()
    prefix = f"{me}:{pid}:{pid} [0] NCCL INFO "
    ifname = settings.get("NCCL_SOCKET_IFNAME") or (cabled[0][0] if cabled else "enP7s7")
    oob = f"{ifname}:{ipv4_of(ifname) or '0.0.0.0'}<0>"
    lines = ["ENV/Plugin: Could not find: libnccl-env.so"]
    lines += [f"{name} set by environment to {value}." if name in _NUMERIC else f"{name} set to {value}"
              for name, value in sorted(settings.items())
              if name.startswith("NCCL_") and name in ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA") + _NUMERIC]
    lines += ["cudaDriverVersion 13000", f"NCCL version {version}"]
    if build.get("git"):
        lines.append(f"NCCL git version {build['git']}")
    lines.append("NET/Plugin: Could not find: libnccl-net.so")
    if devices:
        used = " ".join(f"[{k}]{d}:1/RoCE" for k, d in enumerate(devices))
        lines += [f"NET/IB : Using {used} [RO]; OOB {oob}", "Initialized NET plugin IB",
                  "Assigned NET plugin IB to comm", "Using network IB"]
    else:
        lines += ([] if settings.get("NCCL_IB_DISABLE") == "1" else ["NET/IB : No device found."])
        lines += [f"NET/Socket : Using [0]{oob}", "Initialized NET plugin Socket", "Assigned NET plugin Socket to comm",
                  "Using network Socket"]
    return "".join(prefix + line + "\n" for line in lines), factor
