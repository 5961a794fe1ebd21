"""nvidia-smi's CSV query and its table (parsed by rackproof.probes.nvidia_smi)."""

from __future__ import annotations

from rackproof.probes.nvidia_smi import NvidiaSmiBanner


# the units nvidia-smi names in a CSV header (nvidia-smi --help-query-gpu); other fields have none
_HEADER_UNITS = {"memory.total": "MiB", "memory.used": "MiB", "memory.free": "MiB", "power.draw": "W",
                 "power.limit": "W", "clocks.sm": "MHz", "clocks.mem": "MHz", "clocks.gr": "MHz",
                 "utilization.gpu": "%", "utilization.memory": "%"}


def render_nvidia_smi_query(rows, fields, header: bool = False) -> str:
    """CSV as nvidia-smi prints it; None becomes `[N/A]`; a header names each field's unit."""
    fields = list(fields)
    lines = [", ".join(f"{f} [{_HEADER_UNITS[f]}]" if f in _HEADER_UNITS else f for f in fields)] if header else []
    lines += [", ".join("[N/A]" if row[field] is None else row[field] for field in fields) for row in rows]
    return "".join(line + "\n" for line in lines)


# What the GPU rows of an idle machine show besides the name, by GPU: persistence mode, the
# PCI domain of the bus id, temperature/performance/power cells and the MIG cell, as captured on
# a Thor (595.78) and a DGX Spark's GB10 (580.159.03); other GPUs are printed as a Thor.
_ROWS = {
    "NVIDIA GB10": ("On ", "0000000F", "| N/A   46C    P8              3W /  N/A  |", "N/A"),
    "NVIDIA Thor": ("Off", "00000000", "| N/A   35C  N/A               1W /  N/A  |", "Disabled"),
}


def render_nvidia_smi_banner(banner: NvidiaSmiBanner, date: str = "Tue Oct  6 12:13:37 2026") -> str:
    """The table of an idle Thor or DGX Spark (layouts of real captures); names up to 30 characters."""
    cuda = banner.cuda_version or "N/A"
    wide = "+" + "-" * 89 + "+"
    split = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
    lines = [
        date,
        wide,
        f"| NVIDIA-SMI {banner.driver_version:<22} Driver Version: {banner.driver_version:<14} "
        f"CUDA Version: {cuda:<9}|",
        split,
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for index, name in enumerate(banner.gpu_names):
        persistence, domain, sensors, mig = _ROWS.get(name, _ROWS["NVIDIA Thor"])
        lines += [
            f"|{index:>4}  {name:<30} {persistence} |   {domain}:{index + 1:02X}:00.0 Off |                  N/A |",
            f"{sensors} Not Supported          |      0%      Default |",
            f"|                                         |                        |{mig:>21} |",
            split,
        ]
    lines += [
        "",
        wide,
        "| Processes:                                                                              |",
        "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
        "|  No running processes found                                                             |",
        wide,
    ]
    return "\n".join(lines) + "\n"
