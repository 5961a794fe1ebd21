"""rackproof.probes.kernellog: journalctl's short-iso entries, and what each kernel line reports.

The messages are real (selftests/samples, sources in SOURCES.md: Xid 119 / 13 / 43 and a GPU
fallen off the bus on NVIDIA nodes, PCIe AER in a 5.x and a 6.x kernel's words, mlx5's port and
link lines of a DGX Spark and an mlx5 node, phylib's "Link is Down" as nvethernet prints it);
journalctl's short-iso frame around them is systemd's format (logs-show.c: "%Y-%m-%dT%H:%M:%S" and
the offset, "+0000" before systemd 255, "+00:00" from it), no capture of a Thor's or a Spark's
journal having been found.
"""

import re

import pytest

from rackproof.probes.kernellog import (
    MAX_LINES, MAX_TEXT_LINES, JournalError, KernelLog, classify, parse_kernel_log, reported)
from rackproof_sim.formats.kernellog import render_journal
from selftests.robustness import sample

NOW = 1765100000   # 2025-12-07T09:33:20Z
_PREFIX = re.compile(r"^(?:\[[^\]]*\] |kern  :\w+  : \S+ |\w{3} \d\d \d\d:\d\d:\d\d \S+ kernel: )")


def messages(name: str) -> list[str]:
    """The sample's messages without dmesg's or journalctl's prefix; an indented line continues
    the message above it (dmesg and journalctl indent continuation lines alike)."""
    found: list[str] = []
    for row in sample(name).splitlines():
        if row.startswith(" ") and found:
            found[-1] += "\n" + row.strip()
        else:
            found.append(_PREFIX.sub("", row))
    return found


def journal(texts: list[str], *, start: float = NOW - 100, offset: str = "+00:00", host: str = "spark-1") -> str:
    return render_journal(NOW, host, [(start + k, "kernel", text) for k, text in enumerate(texts)], offset=offset)


def kinds(texts: list[str]) -> list[str | None]:
    log = parse_kernel_log(journal(texts))
    return [(r.kind if (r := classify(line)) else None) for line in log.lines]


def test_real_xid_lines_name_number_and_meaning():
    log = parse_kernel_log(journal(messages("kernel_xid_119_dmesg_ctime_gpud.txt")
                                   + messages("kernel_xid_13_43_dmesg_decode_iso_gpud.txt")))
    found = [classify(line) for line in log.lines]
    assert [f and f.meaning for f in found] == [
        None, None, "Xid 119 (GSP RPC timeout) on 0000:9b:00",
        "Xid 13 (Graphics Engine Exception) on 0000:38:00", "Xid 13 (Graphics Engine Exception) on 0000:38:00",
        "Xid 43 (GPU stopped processing (a reset channel)) on 0000:38:00"]


def test_a_gpu_fallen_off_the_bus_in_three_lines_is_one_entry_and_xid_79():
    log = parse_kernel_log(journal(messages("kernel_fallen_off_bus_multiline_nvsentinel_155.txt")))
    assert len(log.lines) == 3 and log.lines[0].text.count("\n") == 2
    assert classify(log.lines[0]).meaning == "Xid 79 (GPU has fallen off the bus) on 0000:b3:00.0"
    assert [classify(line) for line in log.lines[1:]] == [None, None]


def test_aer_in_both_kernels_words_with_its_severity():
    assert kinds(messages("journalctl_k_aer_uncorrectable_nonfatal_kernel6_ms02.txt")) == [
        None, None, "AER corrected", "AER non-fatal", "AER non-fatal", None, None]
    assert kinds(messages("dmesg_aer_corrected_older_kernel_alx.txt")) == [
        "AER corrected", "AER corrected", None, None]
    fatal = parse_kernel_log(journal(["pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0"]))
    assert classify(fatal.lines[0]).kind == "AER fatal"


def test_ordinary_mlx5_and_boot_noise_is_not_judged():
    assert kinds(messages("journalctl_k_mlx5_link_init_active_gpud_1209.txt")) == [None, None, None, None]
    assert kinds(messages("dmesg_dgx_spark_cx7_hotplug.txt")) == [None, None, None]


def test_mlx5_firmware_and_command_errors():
    assert kinds(["mlx5_core 0000:01:00.0: mlx5_health_try_recover:325:(pid 231): handling bad device here",
                  "mlx5_core 0000:01:00.0: cmd_work_handler:877:(pid 7): failed to allocate command entry",
                  "mlx5_core 0000:01:00.0: wait_func:1169:(pid 12): QUERY_VPORT_COUNTER(0x770) timeout. Will cause "
                  "a leak of a command resource"]) == ["mlx5 error", None, "mlx5 error"]


def test_a_link_down_counts_on_cluster_interfaces_once_they_were_up():
    spark_up = messages("dmesg_dgx_spark_cx7_hotplug.txt")[2]          # ...enp1s0f0np0: Link up
    spark_down = spark_up.replace("Link up", "Link down")
    thor = messages("dmesg_phylib_link_is_down_up_dwmac.txt")           # end0: Link is Down / Link is Up
    # since its boot: the first down is the link training after the driver loaded, the second a flap;
    # end0 never came up in this boot
    log = parse_kernel_log(journal(["Linux version 6.17.0-1014-nvidia", spark_down, spark_up, spark_down, spark_up,
                                    *thor]))
    found = reported(log, NOW - 3600, {"enp1s0f0np0", "end0"}, [])
    assert [(r.kind, r.meaning, r.line.epoch - (NOW - 100)) for r in found] == [("link flap", "enp1s0f0np0 went down", 3)]
    # no boot in the window: the interface was up before it
    found = reported(parse_kernel_log(journal(thor)), NOW - 3600, {"end0"}, [])
    assert [(r.kind, r.meaning) for r in found] == [("link flap", "end0 went down")]
    assert reported(log, NOW - 3600, {"mgbe0_0"}, []) == []           # not a cluster interface


def test_the_window_and_the_allowlist():
    log = parse_kernel_log(journal(messages("kernel_xid_13_43_dmesg_decode_iso_gpud.txt")))
    assert len(reported(log, NOW - 3600, set(), [])) == 3
    assert len(reported(log, NOW - 99, set(), [])) == 2              # the first line is older than the window
    assert [r.meaning for r in reported(log, 0, set(), [re.compile(r"Xid \(PCI:0000:38:00\): 13,")])] == [
        "Xid 43 (GPU stopped processing (a reset channel)) on 0000:38:00"]


def test_an_unclean_previous_shutdown_from_journald_and_ext4():
    text = render_journal(NOW, "thor-1", [
        (NOW - 50, "systemd-journald", "File /var/log/journal/3f1c/system.journal corrupted or uncleanly shut down, "
                                       "renaming and replacing."),
        (NOW - 40, "kernel", "EXT4-fs (nvme0n1p1): recovery complete"),
        (NOW - 30, "systemd-journald", "Journal started")])
    assert [(r.kind if (r := classify(line)) else None) for line in parse_kernel_log(text).lines] == [
        "unclean shutdown", "unclean shutdown", None]


@pytest.mark.parametrize("offset", ["+00:00", "+0000", "-05:30", "+0200"])
def test_both_offsets_of_short_iso_give_the_same_instant(offset):
    log = parse_kernel_log(journal(["Linux version 6.8.12-tegra"], start=NOW - 10, offset=offset))
    assert log.lines[0].epoch == NOW - 10 and log.now == NOW and not log.truncated


def test_boot_markers_count_boots_and_no_entries_is_empty():
    text = journal(["a"]) + "-- Boot 0123456789abcdef0123456789abcdef --\n" + journal(["b"]).split("\n", 1)[1]
    assert [line.boot for line in parse_kernel_log(text).lines] == [0, 1]
    assert parse_kernel_log(f"{NOW}\n-- No entries --\n") == KernelLog(NOW, (), False)


def test_a_bounded_read_is_said_so():
    log = parse_kernel_log(journal(["x"] * MAX_LINES))
    assert log.truncated and len(log.lines) == MAX_LINES


@pytest.mark.parametrize("text, says", [
    ("", "clock"), ("hello\n", "clock"), (f"{NOW}\nsudo: a password is required\n", "not a short-iso entry"),
    (f"{NOW}\n   indented first\n", "indented"), (f"{NOW}\n2025-13-45T99:99:99+00:00 h kernel: x\n", "not a time"),
    (f"{NOW}\n" + "x\n" * (MAX_TEXT_LINES + 1), "more than"),
])
def test_anything_else_is_the_parsers_own_error(text, says):
    with pytest.raises(JournalError, match=says):
        parse_kernel_log(text)


def test_node_text_cannot_forge_a_marker_or_an_entry():
    forged = "x\n-- Boot 0123456789abcdef0123456789abcdef --\n2025-12-07T00:00:00+00:00 h kernel: NVRM: Xid (PCI:0:1:0): 79,"
    log = parse_kernel_log(journal([forged]))
    assert [(line.epoch, line.boot, line.source) for line in log.lines] == [(NOW - 100, 0, "kernel")]
