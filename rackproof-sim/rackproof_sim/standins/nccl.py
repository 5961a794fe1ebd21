"""mpirun and the nccl-tests binaries (all_gather_perf, all_reduce_perf) of a DGX Spark pair.

mpirun starts the remote ranks over real SSH (as Open MPI's rsh launcher does); the ranks
exchange real data over the CX7 link towards the host they were given; the table printed comes
from the node's model (bus bandwidth of the pair). An SSH failure gives Open MPI's daemon
failure text, a CX7 link that is down gives NCCL's network error, as on the real pair.
"""

from __future__ import annotations

import os
import random
import re
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
        cmd = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", host,
               f"RACKPROOF_NCCL_RANK={r} RACKPROOF_NCCL_ROOT={bind_ip}:{port} {tool}"]
        procs.append((host, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    listener.settimeout(0.2)
    ok = True
    errors = []
    accepted = 0
    names: list[str] = []
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
            names.append(f.readline().decode(errors="replace").strip() or "?")
            while f.read(1 << 16):
                pass
        except OSError:
            ok = False
        conn.close()
    if accepted < len(procs):
        ok = False
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
    if not ok:
        for e in errors:
            sys.stdout.write(e)
        sys.stdout.write(JOB_FAILED)
        return 1
    m = model()
    ranks = [socket.gethostname()] + names
    sys.stdout.write(_table(tool, ranks, program[1:], m))
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
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(socket.gethostname().encode() + b"\n")
        payload = b"\0" * 65536
        for _ in range(64):
            s.sendall(payload)
        s.close()
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


def _table(tool: str, hosts: list[str], args: list[str], m: dict) -> str:
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
    peak = m.get("nccl_busbw_gbs") or 22.0
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
