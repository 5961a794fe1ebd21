"""A Jetson's /etc/nv_tegra_release, dpkg versions, nvpmodel and jetson_clocks as they print
(parsed by rackproof.probes.jetson)."""

from __future__ import annotations

from rackproof.probes.jetson import ClockRange, L4TRelease, PowerMode


def render_nv_tegra_release(release: L4TRelease, gcid: str = "41844464",
                            date: str = "Fri Aug 22 00:55:42 UTC 2025") -> str:
    """The whole file as a JetPack 7 Thor has it (defaults from a real R38.2.0 file)."""
    return (
        f"# {release.release} (release), REVISION: {release.revision}, GCID: {gcid}, BOARD: generic, "
        f"EABI: aarch64, DATE: {date}\n"
        "# KERNEL_VARIANT: oot\n"
        "TARGET_USERSPACE_LIB_DIR=nvidia\n"
        "TARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n"
        "INSTALL_TYPE=\n"
    )


def render_dpkg_versions(versions: dict[str, str]) -> str:
    """What DPKG_VERSIONS prints for installed packages (absent ones print nothing)."""
    return "".join(f"{package}\tii \t{version}\n" for package, version in versions.items())


def render_nvpmodel(mode: PowerMode) -> str:
    return f"NV Power Mode: {mode.name}\n{mode.id}\n"


def _cpu_list(numbers: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8", as /sys/devices/system/cpu/online prints it."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ",".join(f"{low}-{high}" if high > low else f"{low}" for low, high in spans)


# The lines of a real Thor's `jetson_clocks --show` that no check reads (EMC's range, the PVA, the
# fan), as selftests/samples/jetson_clocks_show_thor_jp7_maxn_locked.txt prints them
_THOR_SOC = "SOC family:tegra264  Machine:NVIDIA Jetson AGX Thor Developer Kit"
_THOR_EMC = "EMC MinFreq=665600000 MaxFreq=4266000000 CurrentFreq=4266000000 FreqOverride={override}"
_THOR_REST = ["PVA0_VPS0: Online=0 MinFreq=0 MaxFreq=1215000000 CurrentFreq=1215000000",
              "PVA0_AXI:  Online=0 MinFreq=0 MaxFreq=909000000 CurrentFreq=909000000",
              "FAN Dynamic Speed Control=nvfancontrol hwmon1_pwm1=73",
              "FAN Dynamic Speed Control=nvfancontrol hwmon1_pwm1_enable=1"]


def render_jetson_clocks(ranges: tuple[ClockRange, ...], power_mode: str) -> str:
    """`jetson_clocks --show` as a Jetson prints it, current = max (an offline CPU's: its min). The GPU's domains choose the layout:
    Thor's (gpu-gpc-0, gpu-nvd-0: its SoC line, "Online CPUs: ..., Offline CPUs: ...", CPU lines without
    Online=, idle state cc7, EMC, PVA and fan lines) or Orin's ("GPU": the CPU and GPU lines only, the
    lines no check reads left out). A locked node (every online clock at its max) shows its idle states
    disabled (=0), as jetson_clocks leaves them. A Thor with offline CPUs was never seen: they are listed
    after "Offline CPUs:" and their lines printed alike, as the Orin script prints every CPU's line."""
    cpus = [r for r in ranges if not r.gpu]
    online = [int(r.name[3:]) for r in cpus if r.online]
    locked = all(r.min_freq == r.max_freq for r in ranges if r.online)
    idle = "0" if locked else "1"
    thor = not any(r.name == "GPU" for r in ranges)
    if thor:
        offline = _cpu_list([int(r.name[3:]) for r in cpus if not r.online])
        lines = [_THOR_SOC, f"Online CPUs: {_cpu_list(online)}, Offline CPUs:" + (f" {offline}" if offline else "")]
        lines += [f"{r.name + ':':<6} Governor=schedutil MinFreq={r.min_freq} MaxFreq={r.max_freq} "
                  f"CurrentFreq={r.max_freq} IdleStates: WFI={idle} cc7={idle}" for r in cpus]
    else:
        lines = [f"Online CPUs: {_cpu_list(online)}"]
        lines += [f"{r.name + ':':<6} Online={int(r.online)} Governor=schedutil MinFreq={r.min_freq} "
                  f"MaxFreq={r.max_freq} CurrentFreq={r.max_freq if r.online else r.min_freq} IdleStates: WFI={idle} "
                  f"c7={idle} " for r in cpus]
    lines += [f"{r.name} MinFreq={r.min_freq} MaxFreq={r.max_freq} CurrentFreq={r.max_freq}" for r in ranges if r.gpu]
    if thor:
        lines += [_THOR_EMC.format(override=int(locked))] + _THOR_REST
    return "\n".join(lines + [f"NV Power Mode: {power_mode}"]) + "\n"
