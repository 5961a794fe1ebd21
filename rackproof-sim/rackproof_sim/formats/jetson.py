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


def render_jetson_clocks(ranges: tuple[ClockRange, ...], power_mode: str) -> str:
    """`jetson_clocks --show` as a Jetson prints it (the layout of the samples), current = max."""
    lines = [f"Online CPUs: 0-{sum(r.name != 'GPU' for r in ranges) - 1}"]
    for r in ranges:
        if r.name == "GPU":
            lines.append(f"GPU MinFreq={r.min_freq} MaxFreq={r.max_freq} CurrentFreq={r.max_freq}")
        else:
            idle = "WFI=0 c7=0" if r.min_freq == r.max_freq else "WFI=1 c7=1"
            lines.append(f"{r.name}:  Online=1 Governor=schedutil MinFreq={r.min_freq} MaxFreq={r.max_freq} "
                         f"CurrentFreq={r.max_freq} IdleStates: {idle} ")
    return "\n".join(lines + [f"NV Power Mode: {power_mode}"]) + "\n"
