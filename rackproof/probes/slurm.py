"""Slurm and munge, as the chapter's step 9 uses them: `scontrol ping` (does this node reach
the controller), `sinfo` (every node's state and the reason Slurm gives), the partition's
limits (`scontrol show partition -o`), a real one-node job (`srun ... hostname`), and a munge
credential made on one node and decoded on another (`unmunge`).

Formats are those of Slurm 22.05 and munge 0.5 as Debian ships them (selftests/samples/slurm).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probes.probe import Probe

TOOL = "slurm"
MUNGE_TTL_S = 300   # munge's default credential lifetime: a clock further off than this breaks every credential

# "Slurmctld(primary) at thor-1 is UP"; each backup controller adds a line, numbered from the
# second one on ("backup1", "backup2")
_PING = re.compile(r"Slurmctld\((?P<role>[a-z]+[0-9]*)\) at (?P<host>\S+) is (?P<state>UP|DOWN)")


@dataclass(frozen=True)
class Controller:
    role: str        # "primary", "backup"
    host: str
    up: bool


def parse_scontrol_ping(text: str) -> tuple[Controller, ...]:
    found = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _PING.fullmatch(line.strip())
        if not match:
            raise ParseError(TOOL, f"not a `scontrol ping` line: {line[:200]!r}", text)
        found.append(Controller(match["role"], match["host"], match["state"] == "UP"))
    if not found:
        raise ParseError(TOOL, "`scontrol ping` printed no controller", text)
    return tuple(found)


@dataclass(frozen=True)
class NodeState:
    state: str           # sinfo's long form: "idle", "allocated", "drained", "down*", ...
    reason: str | None   # what the admin or slurmctld wrote, None when sinfo says "none"

    @property
    def base(self) -> str:
        """The state without sinfo's flags: "*" not responding, "~" powered off, "#" powering
        up, "!" powering down, "%" powering down, "$" maintenance reservation, "@" reboot."""
        return self.state.rstrip("*~#!%$@^-")

    @property
    def responding(self) -> bool:
        return not self.state.endswith("*")

    @property
    def takes_jobs(self) -> bool:
        return self.responding and self.base in TAKES_JOBS


# the states in which the node takes a new job (sinfo(1), NODE STATE CODES)
TAKES_JOBS = frozenset({"idle", "mixed", "allocated", "completing", "planned"})

SEP = "|"


def parse_sinfo_nodes(text: str) -> dict[str, NodeState]:
    """`sinfo -h -N -o '%N|%T|%E'`: node -> its state and reason. A node in two partitions
    is listed twice with the same state; the first row is kept."""
    nodes: dict[str, NodeState] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(SEP, 2)
        if len(parts) != 3 or not parts[0] or not re.fullmatch(r"[a-z_]+[*~#!%$@^-]*", parts[1].strip()):
            raise ParseError(TOOL, f"not a `sinfo -o '%N|%T|%E'` row: {line[:200]!r}", text)
        reason = parts[2].strip()
        nodes.setdefault(parts[0].strip(), NodeState(parts[1].strip(), None if reason in ("", "none") else reason))
    return nodes


def parse_partition(text: str) -> dict[str, str]:
    """`scontrol show partition -o NAME`: its KEY=VALUE settings. Values have no spaces but a
    partition's name may ("PartitionName=GPU nodes (nvidia)"): a word without "=" continues the
    value before it."""
    line = text.strip()
    if "\n" in line or not line.startswith("PartitionName="):
        raise ParseError(TOOL, "not one `scontrol show partition -o` line", text)
    words: dict[str, list[str]] = {}
    value_words: list[str] = []
    for field in line.split():
        name, sep, value = field.partition("=")
        if sep:
            value_words = words[name] = [value]
        else:
            value_words.append(field)
    settings = {key: " ".join(value) for key, value in words.items()}
    slurm_time_hours(settings.get("MaxTime", "UNLIMITED"), text)   # a limit the check can read
    return settings


_SLURM_TIME = re.compile(r"(?:(?P<days>[0-9]{1,5})-)?(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2}):(?P<s>[0-9]{2})")


def slurm_time_hours(value: str, text: str = "") -> float | None:
    """A time limit as scontrol prints it ("08:00:00", "1-00:00:00") in hours; None for
    "UNLIMITED" (or "INFINITE"): no limit."""
    if value in ("UNLIMITED", "INFINITE"):
        return None
    match = _SLURM_TIME.fullmatch(value)
    if not match:
        raise ParseError(TOOL, f"not a Slurm time limit: {value[:40]!r}", text)
    return int(match["days"] or 0) * 24 + int(match["h"]) + int(match["m"]) / 60 + int(match["s"]) / 3600


@dataclass(frozen=True)
class MungeDecode:
    status: str             # "Success (0)", "Expired credential (15)", or unmunge's error: "Invalid credential"
    encode_host: str | None

    @property
    def ok(self) -> bool:
        return self.status.startswith("Success")

    @property
    def error(self) -> str:
        """munge's words without the code: "Expired credential", "Invalid credential"."""
        return re.sub(r" \([0-9]+\)$", "", self.status)


# a credential unmunge cannot decode at all gives no metadata, only munge's error (exit 14 for
# "Invalid credential": made with another key); expired, rewound and replayed ones keep STATUS
_UNMUNGE_ERROR = re.compile(r"unmunge: Error: (?P<error>[^\n]{1,300})")


def parse_unmunge(text: str) -> MungeDecode:
    """unmunge's metadata: `STATUS:          Success (0)`, `ENCODE_HOST:     thor-1 (10.10.0.11)`;
    or its error alone: `unmunge: Error: Invalid credential`."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.isupper():
            fields.setdefault(key, value.strip())
    if "STATUS" not in fields:
        error = next((m["error"] for line in text.splitlines() if (m := _UNMUNGE_ERROR.fullmatch(line.strip()))),
                     None)
        if error is None:
            raise ParseError(TOOL, "unmunge printed no STATUS line and no error", text)
        return MungeDecode(error, None)
    host = fields.get("ENCODE_HOST")
    return MungeDecode(fields["STATUS"], host.split()[0] if host else None)


SCONTROL_PING = Probe("scontrol ping", "whether this node reaches the Slurm controller", "scontrol ping",
                      parse_scontrol_ping, ok_exit=(0, 1),
                      seen_on=("Ubuntu 24.04", "Debian 12"),
                      unseen="no Slurm on a Jetson AGX Thor or a DGX Spark was found")
SINFO_NODES = Probe("sinfo", "every Slurm node's state and the reason Slurm gives",
                    f"sinfo -h -N -o '%N{SEP}%T{SEP}%E'", parse_sinfo_nodes, once=True,
                    seen_on=("Debian 12",),
                    unseen="the -o format is the probe's own: other machines' captures show sinfo's default table; "
                           "seen only on the simulated rack (Debian's Slurm 22.05.8)")
PARTITION = Probe("scontrol show partition", "a Slurm partition's limits (MaxTime)",
                  "scontrol show partition -o {partition}", parse_partition,
                  seen_on=("Slurm 20.11.6", "Debian 12"),
                  unseen="no Slurm on a Jetson AGX Thor or a DGX Spark was found")
# --immediate: a job that cannot start now is refused instead of waiting in the queue
SRUN_HOSTNAME = Probe("srun", "a real one-node job on NODE (it answers with the node's name)",
                      "srun --immediate={seconds} -N1 --exclusive -w {node} -t 1 hostname",
                      timeout=60,
                      seen_on=("Debian 12",),
                      unseen="its answer is the node's name (hostname's); srun's refusals were seen only on the "
                             "simulated rack")
# unmunge exits with munge's error code (14: invalid, 15: expired, 16: rewound, ...) after
# printing STATUS or its error; neither (ssh failed) is unreadable, and the failure shows what was
# printed. Read once: the munge check and the checks whose cause it is see the same credential.
_ANY_EXIT = tuple(range(256))
MUNGE_TO = Probe("munge | ssh PEER unmunge", "a munge credential made here decoded on PEER",
                 "munge -n | ssh -o BatchMode=yes -o ConnectTimeout={seconds} {peer} unmunge 2>&1",
                 parse_unmunge, ok_exit=_ANY_EXIT, once=True,
                 seen_on=("Debian 12",),
                 unseen="unmunge over ssh prints unmunge's own lines (seen on Ubuntu for munge | unmunge); no capture"
                        " over ssh was kept")
MUNGE_HERE = Probe("munge | unmunge", "a munge credential made and decoded on this node",
                   "munge -n | unmunge 2>&1", parse_unmunge, ok_exit=_ANY_EXIT, once=True,
                   seen_on=("Ubuntu",),
                   unseen="no munge on a Jetson AGX Thor or a DGX Spark was found; on Debian 12 only over ssh "
                          "(munge | ssh PEER unmunge)")
