"""Jetson platform facts: /etc/nv_tegra_release, installed package versions, `nvpmodel -q`,
`jetson_clocks --show`.

The guide wants the same JetPack release (and so the same TensorRT) on every node, because an
engine built on one Thor must load on the others.
"""

import re
import shlex
from dataclasses import dataclass

from . import ParseError
from ._text import int_value
from rackproof.probes.probe import Probe

TOOL_RELEASE = "nv_tegra_release"
TOOL_DPKG = "dpkg-query"
TOOL_NVPMODEL = "nvpmodel"
TOOL_CLOCKS = "jetson_clocks"

# L4T major -> JetPack major: R32 = JetPack 4, R35 = 5, R36 = 6, R38 = 7.0/7.1, R39 = 7.2
_JETPACK_OF_L4T = {32: 4, 34: 5, 35: 5, 36: 6, 38: 7, 39: 7}
# The major in bounded ASCII digits: int() refuses over 4300 digits, and \d matches other scripts' digits.
_RELEASE = re.compile(r"^# R(?P<major>[0-9]{1,9}) \(release\), REVISION: (?P<revision>[0-9]+(?:\.[0-9]+)*)")


@dataclass(frozen=True)
class L4TRelease:
    release: str                 # "R38"
    revision: str                # "2.0"
    major: int                   # 38

    @property
    def version(self) -> str:
        """"38.2.0", the form nvidia-l4t-core's package version starts with."""
        return f"{self.major}.{self.revision}"

    @property
    def jetpack_major(self) -> int | None:
        """JetPack major release of this L4T; None for an L4T this table does not know."""
        return _JETPACK_OF_L4T.get(self.major)


def parse_nv_tegra_release(text: str) -> L4TRelease:
    """The first line: `# R38 (release), REVISION: 2.0, GCID: ..., BOARD: ..., DATE: ...`."""
    match = _RELEASE.match(text)
    if match is None:
        raise ParseError(TOOL_RELEASE, "first line is not '# R<n> (release), REVISION: <x.y>'", text)
    major = int(match["major"])
    return L4TRelease(release=f"R{major}", revision=match["revision"], major=major)


# Status-Abbrev tells installed packages from removed ones that dpkg still remembers
# ("rc": config files left), which `dpkg-query -W` would otherwise list with an old version.
DPKG_QUERY_FORMAT = r"${Package}\t${db:Status-Abbrev}\t${Version}\n"


def _check_packages(values: dict) -> None:
    packages = list(values["packages"])
    if not packages or any(not p or p.startswith("-") for p in packages):
        raise ValueError(f"not package names: {packages!r}")


def parse_dpkg_versions(text: str) -> dict[str, str]:
    """package -> version of the installed packages, from the output of DPKG_VERSIONS.

    Also reads dpkg-query's default `-W` output ("package[:arch]<TAB>version"), which cannot
    tell a removed package with config files left from an installed one: every listed
    package with a version counts as installed there.
    """
    versions: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) == 3:
            package, status, version = fields
            # the second letter of Status-Abbrev is the current state; "i" = installed
            installed = len(status) >= 2 and status[1] == "i"
        elif len(fields) == 2:
            package, version = fields
            package = package.split(":")[0]  # ${binary:Package} adds ":arm64" for a foreign arch
            installed = bool(version.strip())
        else:
            raise ParseError(TOOL_DPKG, f"expected package<TAB>[status<TAB>]version: {line!r}", text)
        if not package or any(c.isspace() for c in package):
            raise ParseError(TOOL_DPKG, f"not a package name: {package!r}", text)
        if installed:
            versions[package] = version.strip()
    return versions


@dataclass(frozen=True)
class PowerMode:
    name: str                    # "MAXN"
    id: int                      # 0


_POWER_MODE = re.compile(r"NV Power Mode: ?(?P<name>\S+)\s*$")


def parse_nvpmodel(text: str) -> PowerMode:
    """`nvpmodel -q` prints the mode name line, then its number; --verbose adds NVPM lines
    and prefixes the name line with "NVPM VERB: Current mode: "."""
    lines = [line.strip() for line in text.splitlines()]
    for index, line in enumerate(lines):
        match = _POWER_MODE.search(line)
        if match is None:
            continue
        following = [rest for rest in lines[index + 1:] if rest and not rest.startswith("NVPM")]
        if not following or not re.fullmatch(r"[0-9]{1,9}", following[0]):
            raise ParseError(TOOL_NVPMODEL, "no mode number after the power mode name", text)
        return PowerMode(name=match["name"], id=int(following[0]))
    raise ParseError(TOOL_NVPMODEL, "no 'NV Power Mode:' line", text)


@dataclass(frozen=True)
class ClockRange:
    name: str                    # "cpu0"; the GPU: "GPU" (Orin and older), "gpu-gpc-0", "gpu-nvd-0" (Thor)
    min_freq: int                # as printed: kHz for a CPU, Hz for the GPU
    max_freq: int
    online: bool = True          # a CPU the power mode took offline: jetson_clocks leaves its range alone

    @property
    def gpu(self) -> bool:
        return not self.name.startswith("cpu")


# Thor (L4T R38) prints each GPU devfreq domain by its name: gpu-gpc-0 (graphics), gpu-nvd-0 (the
# video decoder); Orin and older print one "GPU" line
_GPU_DOMAIN = re.compile(r"GPU|gpu-[a-z]{1,16}-[0-9]{1,4}")
_CPU = re.compile(r"cpu(?P<number>[0-9]{1,6}):")
# "Online CPUs: 0-7" (Orin); "Online CPUs: 0-13, Offline CPUs:" (Thor): sysfs CPU lists
_ONLINE = re.compile(r"Online CPUs: ?(?P<online>[0-9,-]{0,200})(?:, Offline CPUs: ?[0-9,-]{0,200})?")
_SPAN = re.compile(r"(?P<low>[0-9]{1,6})(?:-(?P<high>[0-9]{1,6}))?")


def _cpu_list(text: str, whole: str) -> tuple[tuple[int, int], ...]:
    """"0-3,8" -> ((0, 3), (8, 8)): kept as spans, so a hostile "0-999999" stays small."""
    spans = [_SPAN.fullmatch(part) for part in text.split(",")]
    if not all(spans):
        raise ParseError(TOOL_CLOCKS, f"Online CPUs is not a CPU list: {text!r}", whole)
    return tuple((int(span["low"]), int(span["high"] or span["low"])) for span in spans)


def parse_jetson_clocks(text: str) -> tuple[ClockRange, ...]:
    """Each CPU's and each GPU clock domain's MinFreq and MaxFreq from `jetson_clocks --show`
    (locked: equal), and whether each CPU is online: its own Online= field (Orin and older), else the
    "Online CPUs:" line (Thor prints no Online= on its CPU lines). EMC is left out: jetson_clocks pins
    it with FreqOverride=1 and leaves its MinFreq below."""
    ranges = []
    online_cpus: tuple[tuple[int, int], ...] | None = None
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "Online" and words[1:2] == ["CPUs:"]:
            if not (header := _ONLINE.fullmatch(line.strip())):
                raise ParseError(TOOL_CLOCKS, f"Online CPUs is not a CPU list: {line[:80]!r}", text)
            online_cpus = _cpu_list(header["online"], text)
            continue
        cpu = _CPU.fullmatch(words[0])
        if cpu is None and not _GPU_DOMAIN.fullmatch(words[0]):
            continue
        name = words[0].removesuffix(":")
        fields = dict(word.partition("=")[::2] for word in words[1:])
        if "MinFreq" not in fields or "MaxFreq" not in fields:
            raise ParseError(TOOL_CLOCKS, f"{name}: no MinFreq and MaxFreq", text)
        if cpu is None or "Online" in fields:
            online = fields.get("Online", "1") != "0"
        else:
            online = online_cpus is None or any(low <= int(cpu["number"]) <= high for low, high in online_cpus)
        ranges.append(ClockRange(name, int_value(TOOL_CLOCKS, fields["MinFreq"], f"{name} MinFreq", text),
                                 int_value(TOOL_CLOCKS, fields["MaxFreq"], f"{name} MaxFreq", text), online))
    if not any(r.gpu for r in ranges) or all(r.gpu for r in ranges):
        raise ParseError(TOOL_CLOCKS, "no 'cpuN:' and GPU ('GPU' or 'gpu-gpc-N') MinFreq=... MaxFreq=... lines", text)
    return tuple(ranges)


NVPMODEL = Probe("nvpmodel -q", "a Jetson's power mode", "nvpmodel -q", parse_nvpmodel, once=True,
                 seen_on=("Jetson AGX Thor JetPack 7", "Jetson AGX Orin", "MODE_15W_6CORE", "Jetson Nano R32.5.1"),
                 unseen="the Thor's output is from a report that does not name its JetPack (Thor has only JetPack 7)")


# root only: it reads and could write the clocks' settings
JETSON_CLOCKS = Probe("jetson_clocks --show", "a Jetson's CPU and GPU clock ranges (locked: MinFreq = MaxFreq)",
                      "sudo -n jetson_clocks --show", parse_jetson_clocks,
                      seen_on=("Jetson AGX Thor JetPack 7", "Jetson AGX Orin", "Jetson Orin Nano JetPack 6.2.2",
                               "Jetson Nano"),
                      unseen="of a Thor only one output, locked in MAXN: no Thor with CPUs offline (how its lines mark "
                             "them is read from its 'Online CPUs:' line) or with clocks unlocked was found; a DGX Spark "
                             "has no jetson_clocks")
NV_TEGRA_RELEASE = Probe("nv_tegra_release", "the L4T release a Jetson runs", "cat /etc/nv_tegra_release",
                         parse_nv_tegra_release, once=True, seen_on=("JetPack 7 R38.2.0", "Jetson Orin JetPack 6.2"),
                         unseen="the R38.2.0 note does not name its board (R38 is the Jetson AGX Thor's L4T)")
# A package dpkg never heard of prints nothing on stdout ("dpkg-query: no packages found
# matching X" on stderr) and makes the exit status 1; the others are still listed.
DPKG_VERSIONS = Probe("dpkg-query", "installed versions of packages (JetPack, TensorRT)",
                      "dpkg-query -W -f " + shlex.quote(DPKG_QUERY_FORMAT).replace("{", "{{").replace("}", "}}")
                      + " {packages}", parse_dpkg_versions, ok_exit=(0, 1), check=_check_packages, once=True,
                      seen_on=("Debian 12", "Jetson AGX Orin JetPack 6.2", "Jetson AGX Xavier JetPack 5.1.1"),
                      unseen="the probe's own -f format was seen only here (Debian 12); of a Jetson, dpkg-query's "
                             "default format (JetPack 6.2, 5.1.1); none of a Jetson AGX Thor or a DGX Spark")
