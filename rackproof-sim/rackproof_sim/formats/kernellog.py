"""What rackproof.probes.kernellog's command prints: the node's clock (`date +%s`), then
journalctl's short-iso entries (systemd's logs-show.c: "%Y-%m-%dT%H:%M:%S" and the offset as
systemd 255 of Ubuntu 24.04 prints it, "+00:00"; the hostname; the identifier; a multi-line
message's further lines indented under its first), or "-- No entries --".

The kernel lines a simulated node's journal holds: its boot's ordinary noise (BOOT_NOISE, per
platform; none of it a fault) and the lines a fault plants (Xid, AER, a link flap), each in
the words the driver prints (selftests/samples: the Xid, AER and link samples and their sources).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone


def render_journal(now: float, host: str, entries: list[tuple[float, str, str]], *, offset: str = "+00:00") -> str:
    """The whole answer: `date +%s`, then journalctl's (render_entries)."""
    return f"{int(now)}\n" + render_entries(host, entries, offset=offset)


def render_entries(host: str, entries: list[tuple[float, str, str]], *, offset: str = "+00:00") -> str:
    """journalctl's short-iso output; `entries`: (seconds since 1970, identifier, message), oldest first."""
    sign = -1 if offset[0] == "-" else 1
    zone = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[-2:])))
    out = []
    for epoch, source, text in entries:
        head = f"{datetime.fromtimestamp(epoch, zone).strftime('%Y-%m-%dT%H:%M:%S')}{offset} {host} {source}: "
        first, *rest = text.split("\n")
        out.append(head + first)
        out += [" " * len(head) + line for line in rest]
    if not entries:
        out.append("-- No entries --")
    return "\n".join(out) + "\n"


# seconds after boot, identifier, message; a line with {lane} (its {device}, its RDMA {port})
# repeats for each cluster interface. The first lines are every arm64 kernel's (the version lines
# are the releases of JetPack 7 and DGX OS 7, their build hosts not from a real node); the link
# lines are the drivers' own words on coming up (mlx5e_update_carrier: "Link up"; phylib's
# phy_print_status, which nvethernet calls: "Link is Up - <speed>/Full - flow control off"); the
# device address of a Thor's mgbe is not from a real Thor
BOOT_NOISE = {
    "thor": [
        (0.0, "kernel", "Booting Linux on physical CPU 0x0000000000 [0x410fd830]"),
        (0.0, "kernel", "Linux version 6.8.12-tegra (buildbrain@mobile-u64-6336-d8000) (aarch64-buildroot-linux-gnu-gcc"
                        ".br_real (Buildroot 2022.08) 11.3.0, GNU ld (GNU Binutils) 2.38) #1 SMP PREEMPT Thu Aug 21 "
                        "19:49:15 PDT 2025"),
        (4.1, "kernel", "EXT4-fs (nvme0n1p1): mounted filesystem 0f3cd65a-338b-4574-bba3-ecef214e1917 r/w with "
                        "ordered data mode. Quota mode: none."),
        (6.0, "systemd-journald[312]", "Journal started"),
        (9.5, "kernel", "nvethernet a808a10000.ethernet {lane}: Link is Up - 25Gbps/Full - flow control off"),
        (12.0, "kernel", "workqueue: ib_cache_event_task [ib_core] hogged CPU for >10000us 4 times, consider "
                         "switching to WQ_UNBOUND"),
    ],
    "spark": [
        (0.0, "kernel", "Booting Linux on physical CPU 0x0000010000 [0x410fd871]"),
        (0.0, "kernel", "Linux version 6.17.0-1014-nvidia (buildd@bos03-arm64-042) (aarch64-linux-gnu-gcc-13 "
                        "(Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #14-Ubuntu "
                        "SMP PREEMPT_DYNAMIC Fri Mar  6 12:01:22 UTC 2026"),
        (3.8, "kernel", "EXT4-fs (nvme0n1p2): mounted filesystem 0f3cd65a-338b-4574-bba3-ecef214e1917 r/w with "
                        "ordered data mode. Quota mode: none."),
        (6.0, "systemd-journald[312]", "Journal started"),
        (8.2, "kernel", "mlx5_core {device} {lane}: Link up"),
        (8.3, "kernel", "mlx5_core {device} {port}: Port: 1 Link ACTIVE"),
    ],
}
