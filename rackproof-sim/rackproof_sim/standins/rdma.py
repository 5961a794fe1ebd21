"""ibdev2netdev, ib_write_bw and ib_write_lat for a node whose RoCE devices are modelled.

ibdev2netdev maps each modelled RDMA device to its netdev, Up or Down from the real veth.
ib_write_bw and ib_write_lat do a real TCP exchange with their peer over the addressed link (the
port perftest uses for its out-of-band exchange, 18515 unless -p); ib_write_bw moves some data
and prints the bandwidth of the model (~96 Gb/s per logical CX7 link of a DGX Spark; less from a
device whose sending direction is degraded, `rdma_send_gbps`, and over a link with a device in a
stale initialisation at either end, `rdma_stale_gbps`, which the server tells its client), ib_write_lat
bounces small messages and prints the model's latency (a DGX Spark's 1.47 us typical, its real
sample; the model's `rdma_latency_us` when set). A link that is down fails the way perftest fails.
"""

from __future__ import annotations

import json
import random
import socket
import sys
import time

from . import ipv4_of, link_up, model

DEFAULT_PORT = 18515


def _devices(m: dict) -> dict[str, str]:
    """rdma device -> netdev"""
    return {spec["rdma_device"]: name for name, spec in m["interfaces"].items() if spec.get("rdma_device")}


def run(tool: str, args: list[str]) -> int:
    if tool != "ibdev2netdev" and args[:1] in (["--version"], ["-V"]):   # the survey's question: no device opened
        from rackproof_sim.formats.perftest import VERSION_LINE, VERSION_STATUS
        sys.stdout.write(VERSION_LINE)
        return VERSION_STATUS
    m = model()
    if tool == "ibdev2netdev":
        from rackproof.probes.ibdev2netdev import RdmaMap
        from rackproof_sim.formats.ibdev2netdev import render_ibdev2netdev
        maps = tuple(RdmaMap(dev, 1, netdev, link_up(netdev)) for dev, netdev in sorted(_devices(m).items()))
        sys.stdout.write(render_ibdev2netdev(maps))
        return 0
    return _ib_write_lat(m, args) if tool == "ib_write_lat" else _ib_write_bw(m, args)


def _parse(args: list[str]) -> dict:
    o = {"dev": None, "port": DEFAULT_PORT, "size": 65536, "iters": 5000, "duration": None,
         "infinite": False, "gbits": False, "server": None}
    takes = {"-d": "dev", "--ib-dev": "dev", "-p": "port", "--port": "port", "-s": "size", "--size": "size",
             "-n": "iters", "--iters": "iters", "-D": "duration", "--duration": "duration"}
    skip_value = {"-i", "--ib-port", "-x", "--gid-index", "-q", "--qp", "-m", "--mtu", "-t", "--tx-depth",
                  "-S", "--sl", "-I", "--inline_size", "-u", "--qp-timeout", "-R"}
    i = 0
    while i < len(args):
        a = args[i]
        key, value = (a.split("=", 1) + [None])[:2] if a.startswith("--") and "=" in a else (a, None)
        if key in takes:
            if value is None:
                i += 1
                value = args[i] if i < len(args) else ""
            o[takes[key]] = value
        elif key in skip_value:
            if value is None:
                i += 1
        elif key == "--run_infinitely":
            o["infinite"] = True
        elif key == "--report_gbits":
            o["gbits"] = True
        elif key == "-a" or key == "--all":
            o["size"] = 8388608
        elif not a.startswith("-"):
            o["server"] = a
        i += 1
    for k in ("port", "size", "iters"):
        o[k] = int(o[k])
    o["duration"] = float(o["duration"]) if o["duration"] else None
    return o


def _stale(m: dict, device: str) -> float | None:
    """The rate a device in a stale initialisation caps its link at, both ways (faults: cx7-stale-init)."""
    return m.get("rdma_stale_gbps", {}).get(device)


def _result(m: dict, o: dict, device: str, peer_cap: float | None = None):
    """The model's run from `device`: its link's rate, capped by a slow direction of this device
    (rdma-direction-slow) or a stale device at either end (`peer_cap`: the receiver's)."""
    from rackproof.probes.perftest import PerftestResult
    caps = (m.get("rdma_send_gbps", {}).get(device), _stale(m, device), peer_cap)
    gbps = min([m.get("roce_gbps") or 96.9, *(c for c in caps if c is not None)])
    gbps = round(gbps * random.uniform(0.995, 1.004), 2)
    size = o["size"]
    seconds = o["duration"] or max(o["iters"] * size * 8 / (gbps * 1e9), 0.001)
    iterations = o["iters"] if not o["duration"] else int(gbps * 1e9 * seconds / (size * 8))
    average = gbps if o["gbits"] else round(gbps * 1e9 / 8 / 2 ** 20, 2)
    peak = 0.0 if (o["infinite"] or o["duration"]) else average
    return PerftestResult(bytes=size, iterations=iterations, bw_peak=peak, bw_average=average,
                          unit="Gb/sec" if o["gbits"] else "MB/sec",
                          msg_rate=round(gbps * 1e9 / 8 / size / 1e6, 6), device=device, link_type="Ethernet")


def _fail(lines: list[str], code: int = 1) -> int:
    sys.stdout.flush()
    sys.stderr.write("\n".join(lines) + "\n")
    return code


def _ib_write_bw(m: dict, args: list[str]) -> int:
    from rackproof_sim.formats.perftest import render_ib_write_bw
    o = _parse(args)
    devices = _devices(m)
    if not devices:
        return _fail([" Did not detect devices ", " If device exists, check if driver is up"])
    device = o["dev"] or sorted(devices)[0]
    if device not in devices:
        return _fail([f"IB device {device} not found", " Unable to find the Infiniband/RoCE device"])
    netdev = devices[device]
    local_ip = ipv4_of(netdev)
    if o["server"] is None:
        return _server(m, o, device, netdev, local_ip, render_ib_write_bw)
    sock = _connected(o, local_ip)
    if isinstance(sock, int):
        return sock
    f = sock.makefile("rwb")
    f.write(json.dumps({"device": device, "ip": local_ip, "up": link_up(netdev), "size": o["size"]}).encode() + b"\n")
    f.flush()
    try:
        peer = json.loads(f.readline() or b"{}")
    except ValueError:
        peer = {}
    if not peer or not link_up(netdev) or not peer.get("up"):
        sock.close()
        return _fail(["Failed to modify QP to RTS", " Unable to Connect the HCA's through the link"])
    # move real data over the link: a slice of the modelled run
    chunk = b"\0" * 65536
    deadline = time.monotonic() + min(o["duration"] or 0.3, 30)
    sent = 0
    try:
        while time.monotonic() < deadline or sent < (1 << 20):
            sock.sendall(chunk)
            sent += len(chunk)
        sock.shutdown(socket.SHUT_WR)
        f.readline()
    except OSError:
        return _fail(["got completion with error:", " Completion with error at client",
                      " Failed status 12: wr_id 0 syndrom 0x81", " Failed to complete run_iter_bw function successfully"])
    sock.close()
    result = _result(m, o, device, peer.get("stale_gbps"))
    sys.stdout.write(render_ib_write_bw(result, run_infinitely=o["infinite"], duration=o["duration"] is not None,
                                        local_ip=local_ip, remote_ip=peer.get("ip")))
    sys.stdout.flush()
    if o["infinite"]:
        while True:               # as perftest: runs until it is killed
            time.sleep(3600)
    return 0


def _connected(o: dict, local_ip: str | None) -> socket.socket | int:
    """A client's connection to its server over the link, or perftest's exit status when none answers."""
    try:
        sock = socket.create_connection((o["server"], o["port"]), timeout=5,
                                        source_address=(local_ip, 0) if local_ip else None)
    except OSError:
        return _fail([f"Couldn't connect to {o['server']}:{o['port']}", " Unable to init the socket connection"])
    sock.settimeout(15)
    return sock


def _accepted(port: int, warned: str = "") -> socket.socket | int:
    """A server's wait for its client, as perftest prints it (after `warned`): the connection,
    or perftest's exit status when the port cannot be had."""
    sys.stdout.write(warned + "\n************************************\n* Waiting for client to connect... *\n"
                     "************************************\n")
    sys.stdout.flush()
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind(("0.0.0.0", port))
    except OSError:
        return _fail([f"Couldn't listen to port {port}", " Unable to open file descriptor for socket connection"
                      " Unable to init the socket connection"])
    srv.listen(1)
    conn, _addr = srv.accept()
    srv.close()
    return conn


def _server(m, o, device, netdev, local_ip, render) -> int:
    no_peak = o["infinite"] or o["duration"] is not None
    # perftest warns before it waits, as the client does, when it will measure no peak
    from rackproof_sim.formats.perftest import NO_PEAK_WARNING
    conn = _accepted(o["port"], NO_PEAK_WARNING + "\n" if no_peak else "")
    if isinstance(conn, int):
        return conn
    f = conn.makefile("rwb")
    try:
        client = json.loads(f.readline() or b"{}")
    except ValueError:
        client = {}
    f.write(json.dumps({"device": device, "ip": local_ip, "up": link_up(netdev), "stale_gbps": _stale(m, device)}).encode()
            + b"\n")
    f.flush()
    if not client.get("up") or not link_up(netdev):
        conn.close()
        return _fail(["Failed to modify QP to RTS", " Unable to Connect the HCA's through the link"])
    try:
        while conn.recv(1 << 16):
            pass
        f.write(b"done\n")
        f.flush()
    except OSError:
        pass
    conn.close()
    sys.stdout.write(render(_result(m, o, device), run_infinitely=o["infinite"], duration=o["duration"] is not None,
                            local_ip=local_ip, remote_ip=client.get("ip"), warned=True))
    return 0


def _ib_write_lat(m: dict, args: list[str]) -> int:
    """Both ends time the ping-pong and print the table (perftest's write_lat); here a few hundred
    real round trips over the link, then the model's figures."""
    from rackproof.probes.perftest import LatencyResult
    from rackproof_sim.formats.perftest import render_ib_write_lat
    o = _parse(args)
    o["iters"] = o["iters"] if "-n" in args or "--iters" in args else 1000
    devices = _devices(m)
    device = o["dev"] or (sorted(devices)[0] if devices else None)
    if device not in devices:
        return _fail([f"IB device {device} not found", " Unable to find the Infiniband/RoCE device"])
    netdev = devices[device]
    local_ip = ipv4_of(netdev)
    sock = _accepted(o["port"]) if o["server"] is None else _connected(o, local_ip)
    if isinstance(sock, int):
        return sock
    sock.settimeout(15)
    f = sock.makefile("rwb")
    f.write(json.dumps({"ip": local_ip, "up": link_up(netdev)}).encode() + b"\n")
    f.flush()
    try:
        peer = json.loads(f.readline() or b"{}")
        if not peer.get("up") or not link_up(netdev):
            raise OSError
        for _ in range(200):        # the ping-pong, 2 bytes each way
            f.write(b"p\n")
            f.flush()
            if not f.readline():
                raise OSError
    except (OSError, ValueError):
        sock.close()
        return _fail(["Failed to modify QP to RTS", " Unable to Connect the HCA's through the link"])
    sock.close()
    typical = float(m.get("rdma_latency_us") or 1.47)
    t = [round(typical * k * random.uniform(0.99, 1.01), 2) for k in (0.97, 1.31, 1.0, 1.0, 0.0, 1.07, 1.31)]
    t[2], t[3], t[6] = round(typical, 2), round(typical, 2), t[1]
    sys.stdout.write(render_ib_write_lat(LatencyResult(2, o["iters"], *t, device=device, link_type="Ethernet"),
                                         local_ip=local_ip, remote_ip=peer.get("ip")))
    return 0
