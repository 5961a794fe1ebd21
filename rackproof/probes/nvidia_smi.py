"""`nvidia-smi --query-gpu=... --format=csv[,noheader]` and the plain `nvidia-smi` table.

Thor and GB10 share memory with the CPU: memory fields read `[N/A]` in CSV and
`Not Supported` in the table, so a missing value is normal there, not an error.
"""

import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "nvidia-smi"

# "[N/A]", "[Not Supported]", "[Insufficient Permissions]": nvidia-smi's no-value markers in CSV
_NO_VALUE = re.compile(r"^\[[^\]]*\]$")


def parse_nvidia_smi_query(csv_text: str, fields) -> tuple[dict[str, str | None], ...]:
    """One dict per GPU, keyed by the queried field names, values as printed ("46068 MiB")
    or None for a no-value marker. A header line (csv without noheader) is skipped when it
    names the queried fields."""
    fields = list(fields)
    lines = [line for line in csv_text.splitlines() if line.strip()]
    if lines and [_without_unit(cell) for cell in lines[0].split(",")] == fields:
        lines = lines[1:]
    rows = []
    for line in lines:
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(fields):
            raise ParseError(TOOL, f"expected {len(fields)} values ({', '.join(fields)}): {line!r}", csv_text)
        rows.append({field: None if _NO_VALUE.match(cell) else cell for field, cell in zip(fields, cells)})
    return tuple(rows)


def _without_unit(cell: str) -> str:
    """A header cell without its unit: "memory.total [MiB]" -> "memory.total". String operations:
    a regex search for " [" ... "]" at the end rescans the rest of the cell from every " [" in it."""
    cell = cell.strip()
    name, bracket, unit = cell.rpartition(" [")
    return name if bracket and unit.endswith("]") and "]" not in unit[:-1] else cell


@dataclass(frozen=True)
class NvidiaSmiBanner:
    driver_version: str
    cuda_version: str | None     # highest CUDA the driver supports; None if it prints N/A
    gpu_names: tuple[str, ...]   # table order (GPU 0 first)


_VERSIONS = re.compile(r"NVIDIA-SMI \S+\s+Driver Version: (?P<driver>\S+)\s+CUDA Version: (?P<cuda>\S+)")
# The Bus-Id at the start of a row's second cell tells a GPU row from the process rows below it.
_BUS_ID = re.compile(r"\s+[0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]\s")
_PERSISTENCE = ("On", "Off", "N/A")


def parse_nvidia_smi_banner(text: str) -> NvidiaSmiBanner:
    versions = _VERSIONS.search(text)
    if versions is None:
        raise ParseError(TOOL, "no 'NVIDIA-SMI ... Driver Version: ... CUDA Version: ...' line", text)
    cuda = versions["cuda"]
    return NvidiaSmiBanner(
        driver_version=versions["driver"],
        cuda_version=None if cuda == "N/A" else cuda,
        gpu_names=tuple(name for line in text.splitlines() if (name := _gpu_name(line))),
    )


def _gpu_name(line: str) -> str | None:
    """The name in a GPU row, "|   0  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |";
    None for other lines. Cut at spaces rather than matched by a lazy name before spaces, which
    backtracks quadratically over a long run of spaces."""
    if not line.startswith("|"):
        return None
    first, bar, second = line[1:].partition("|")
    index, _, name_and_mode = first.strip().partition(" ")
    name, _, mode = name_and_mode.rpartition(" ")
    name = name.strip()
    if bar and index.isascii() and index.isdigit() and name and mode in _PERSISTENCE and _BUS_ID.match(second):
        return name
    return None


@dataclass(frozen=True)
class Gpu:
    name: str                    # "NVIDIA Thor"
    driver_version: str


GPU_FIELDS = ("name", "memory.total", "driver_version")
# what nvidia-smi prints, with exit status 6, when the driver is loaded and sees no GPU
_NO_DEVICES = "No devices were found"


def parse_gpus(text: str) -> tuple[Gpu, ...]:
    """The GPUs the driver sees (GPUS); none when nvidia-smi says "No devices were found"."""
    if text.strip() == _NO_DEVICES:
        return ()
    rows = parse_nvidia_smi_query(text, GPU_FIELDS)
    if not rows or not all(row["name"] and row["driver_version"] for row in rows):   # an empty field names nothing
        raise ParseError(TOOL, f"not one 'name, memory.total, driver_version' line per GPU, nor '{_NO_DEVICES}'", text)
    return tuple(Gpu(row["name"], row["driver_version"]) for row in rows)


GPUS = Probe("nvidia-smi --query-gpu", "the GPUs the driver sees: their names and the driver's version",
             f"nvidia-smi --query-gpu={','.join(GPU_FIELDS)} --format=csv,noheader", parse_gpus, ok_exit=(0, 6),
             once=True,
             seen_on=("DGX Spark", "Jetson AGX Thor JetPack 7.2", "L40"),
             unseen="of a Jetson AGX Thor only a row of another field list was found (memory.total [N/A] there too)")
NVIDIA_SMI = Probe("nvidia-smi", "the GPU driver and CUDA versions (the banner)", "nvidia-smi",
                   parse_nvidia_smi_banner, once=True,
                   seen_on=("DGX Spark", "Jetson AGX Thor JetPack 7"))
