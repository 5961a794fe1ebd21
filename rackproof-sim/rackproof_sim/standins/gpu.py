"""nvidia-smi (the table, -L, --query-gpu=... --format=csv[,noheader][,nounits]), nvpmodel -q and
jetson_clocks --show."""

from __future__ import annotations

import sys
import time
import zlib

from . import model

# CSV values of a unified-memory Jetson Thor / DGX Spark GB10; None prints as [N/A]
def _fields(m: dict) -> dict[str, str | None]:
    gpu = m["gpu"]
    rel = m["release"]
    return {
        "index": "0", "count": "1", "name": gpu["name"], "gpu_name": gpu["name"],
        "driver_version": rel["driver"], "cuda_version": rel.get("cuda"),
        "memory.total": None, "memory.used": None, "memory.free": None, "memory.reserved": None,
        "compute_cap": gpu["compute_cap"], "pci.bus_id": gpu["bus_id"], "gpu_bus_id": gpu["bus_id"],
        "uuid": "GPU-" + ("8d1c7f7a-5b5e-4a0e-9e51-" + format(zlib.crc32(m["node"].encode()), "012x")),
        "temperature.gpu": str(gpu["temp"]), "utilization.gpu": "0 %", "utilization.memory": None,
        "power.draw": None, "power.limit": None, "persistence_mode": "Enabled" if gpu["persistence"] == "On" else "Disabled",
        "pstate": gpu["perf"] if gpu["perf"] != "N/A" else None, "clocks.sm": None, "clocks.max.sm": None,
        "mig.mode.current": None, "display_active": "Disabled", "vbios_version": None,
        "serial": None, "fan.speed": None, "ecc.mode.current": None,
    }


def run(tool: str, args: list[str]) -> int:
    m = model()
    if tool == "nvpmodel":
        return _nvpmodel(m, args)
    if tool == "jetson_clocks":
        return _jetson_clocks(m, args)
    if m.get("gpu_lost"):   # the driver is loaded and sees no GPU: every query answers so
        print("No devices were found")
        return 6
    query = fmt = None
    for a in args:
        if a.startswith("--query-gpu="):
            query = a.split("=", 1)[1]
        elif a.startswith("--format="):
            fmt = a.split("=", 1)[1]
        elif a in ("-L", "--list-gpus"):
            gpu = m["gpu"]
            print(f"GPU 0: {gpu['name']} (UUID: {_fields(m)['uuid']})")
            return 0
    if query is not None:
        return _query(m, query, fmt or "csv")
    from rackproof.probes.nvidia_smi import NvidiaSmiBanner
    from rackproof_sim.formats.nvidia_smi import render_nvidia_smi_banner
    banner = NvidiaSmiBanner(driver_version=m["release"]["driver"], cuda_version=m["release"].get("cuda"),
                             gpu_names=(m["gpu"]["name"],))
    sys.stdout.write(render_nvidia_smi_banner(banner, date=time.strftime("%a %b %e %H:%M:%S %Y")))
    return 0


def _query(m: dict, query: str, fmt: str) -> int:
    from rackproof_sim.formats.nvidia_smi import render_nvidia_smi_query
    fields = [f.strip() for f in query.split(",") if f.strip()]
    known = _fields(m)
    for f in fields:
        if f not in known:
            sys.stdout.write(f'Field "{f}" is not a valid field to query.\n\n')
            return 2
    opts = {o.strip() for o in fmt.split(",")}
    if "csv" not in opts:
        sys.stdout.write(f'"{fmt}" is not a valid format.\n')
        return 2
    row = {f: known[f] for f in fields}
    if "nounits" in opts and row.get("utilization.gpu"):
        row["utilization.gpu"] = row["utilization.gpu"].split()[0]
    sys.stdout.write(render_nvidia_smi_query([row], fields, header="noheader" not in opts))
    return 0


def _nvpmodel(m: dict, args: list[str]) -> int:
    mode = m.get("nvpmodel")
    if not mode:
        sys.stderr.write("nvpmodel: command not found\n")
        return 127
    if "-q" in args or "--query" in args:
        from rackproof.probes.jetson import PowerMode
        from rackproof_sim.formats.jetson import render_nvpmodel
        sys.stdout.write(render_nvpmodel(PowerMode(mode["name"], mode["id"])))
        return 0
    sys.stderr.write("NVPM ERROR: changing the power mode needs root (sudo nvpmodel -m N)\n")
    return 1


def _jetson_clocks(m: dict, args: list[str]) -> int:
    """--show: the model's CPU and GPU clock domains, locked (min = max) unless the model says not."""
    from rackproof.probes.jetson import ClockRange
    from rackproof_sim.formats.jetson import render_jetson_clocks
    clocks = m.get("clocks")
    if not clocks or args != ["--show"]:
        sys.stderr.write("jetson_clocks: only --show is modelled\n")
        return 1

    def domain(name: str, low: int, high: int) -> ClockRange:
        return ClockRange(name, high if clocks["locked"] else low, high)

    ranges = tuple(domain(f"cpu{k}", *clocks["cpu_khz"]) for k in range(clocks["cpus"]))
    sys.stdout.write(render_jetson_clocks(ranges + tuple(domain(name, *hz) for name, hz in clocks["gpu_hz"].items()),
                                          m["nvpmodel"]["name"]))
    return 0
