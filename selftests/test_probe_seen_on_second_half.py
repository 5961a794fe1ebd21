"""Where the formats of the second half of `rackproof probes` (from `stat` on) were seen: each
of its parsers' probes says seen_on or unseen, and docs/checks.md shows it. Each platform named
is backed by a sample of that probe (test_probe_seen_on's first test checks every probe).
The suite's own plumbing (host.py, traffic.py, disrupt.py: markers, batches, servers, lanes) is
not listed here: it prints nothing of another tool's."""

from pathlib import Path

import pytest

from rackproof.checks import catalog

PROBES = {p.name: p for p in catalog()}
SECOND_HALF = ["stat", "grep netplan", "nvidia-smi --query-gpu", "nvidia-smi", "ib_write_bw server", "ib_write_bw",
               "ping", "ping -M do", "ping -M do -e", "scontrol ping", "sinfo", "scontrol show partition", "srun",
               "munge | ssh PEER unmunge", "munge | unmunge", "ss", "sudo ss", "ss client ports", "sparkrun --version",
               "sparkrun cluster show", "sparkrun setup check", "ssh to a peer", "ssh to every peer",
               "$SSH_CONNECTION", "ssh methods", "ssh-keygen -lf", "sudo -l -U", "tools on PATH", "groups",
               "daemon answers", "tool runs", "sudo -n -l", "survey", "sysctl", "hostname", "id -un",
               "date", "systemctl --user show"]


@pytest.mark.parametrize("name", SECOND_HALF)
def test_each_probe_says_where_its_format_was_seen_or_why_not(name):
    probe = PROBES[name]
    assert probe.seen_on or probe.unseen, f"{name}: neither seen_on nor unseen"
    # a target platform not among those seen is said to be missing
    targets = ("Jetson AGX Thor", "DGX Spark")
    assert all(any(t in s for s in probe.seen_on) for t in targets) or probe.unseen, name


@pytest.mark.parametrize("name", SECOND_HALF)
def test_docs_checks_shows_where_each_format_was_seen(name):
    probe = PROBES[name]

    def cell(text):
        return text.replace("|", "\\|")
    row = f"| {cell(name)} | {cell(', '.join(probe.seen_on)) or '—'} | {cell(probe.unseen) or '—'} |"
    assert row in (Path(__file__).parents[1] / "docs" / "checks.md").read_text().splitlines()
