"""Where each probe's format was seen (Probe.seen_on, `rackproof probes --json`): every platform a
probe names is backed by a real sample in selftests/samples whose SOURCES.md section says that
probe and that platform; every probe of the catalog says where its format was seen, or why not
(the suite's own plumbing: that it prints no tool's format), and docs/checks.md shows it."""

import json
import re
from pathlib import Path

import pytest

from rackproof.checks import catalog

SAMPLES = Path(__file__).parent / "samples"

def sections() -> list[dict]:
    """SOURCES.md's sections: the files its heading names, its probes, its platform."""
    found = []
    for block in re.split(r"^## ", (SAMPLES / "SOURCES.md").read_text(), flags=re.M)[1:]:
        heading, _, body = block.partition("\n")
        fields = dict(re.findall(r"^- (\w+): (.*)$", body, re.M))
        if "probe" not in fields:
            continue
        files = [f.strip() for f in heading.split(" (used by")[0].split(",")]
        probes = {re.sub(r"\s*\(.*$", "", p).strip() for p in re.split(r"[;,]\s+", fields["probe"])}
        found.append({"files": files, "probes": probes, "platform": fields.get("platform", "")})
    return found


def _tokens(text: str) -> list[str]:
    return [t.rstrip(".") for t in re.findall(r"[A-Za-z0-9][\w.+!-]*", text)]


def names(platform: str, field: str) -> bool:
    """Every word of `platform` in the field; a version matches its own later releases (24.04 in 24.04.3)."""
    said = _tokens(field)
    return all(any(u == t or u.startswith(t + ".") or u.startswith(t + "-") for u in said) for t in _tokens(platform))


PROBES = {p.name: p for p in catalog()}


@pytest.mark.parametrize("probe", [p for p in catalog() if p.seen_on], ids=lambda p: p.name)
def test_every_platform_a_probe_names_is_backed_by_a_sample_of_that_probe(probe):
    mine = [s for s in sections() if probe.name in s["probes"]]
    for platform in probe.seen_on:
        backing = [s for s in mine if names(platform, s["platform"])]
        assert backing, f"{probe.name}: no section of SOURCES.md with probe {probe.name!r} and platform {platform!r}"
        assert all((SAMPLES / f).is_file() for s in backing for f in s["files"]), backing


@pytest.mark.parametrize("probe", catalog(), ids=lambda p: p.name)
def test_each_probe_says_where_its_format_was_seen_or_why_not(probe):
    assert probe.seen_on or probe.unseen, f"{probe.name}: neither seen_on nor unseen"
    # a target platform not among those seen is said to be missing
    targets = ("Jetson AGX Thor", "DGX Spark")
    assert all(any(t in s for s in probe.seen_on) for t in targets) or probe.unseen, probe.name


def test_the_matching_is_strict_both_ways():
    field = "Jetson AGX Thor Developer Kit (tegra264), JetPack 7 (Ubuntu 24.04.3)"
    assert names("Jetson AGX Thor JetPack 7", field) and names("Ubuntu 24.04", field)
    assert not names("Ubuntu 22.04", field) and not names("DGX Spark", field) and not names("JetPack 6", field)
    # a probe only counts its own sections
    assert any("bonding" in s["probes"] for s in sections())
    assert not any("bonding" in s["probes"] and "ethtool" in s["probes"] for s in sections())


def test_rackproof_probes_json_and_text_say_it(capsys):
    from rackproof.cli import main
    assert main(["probes", "--json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert listed["bonding"]["seen_on"] == list(PROBES["bonding"].seen_on) != []
    assert listed["ip link set"]["unseen"] == PROBES["ip link set"].unseen != ""
    assert main(["probes"]) == 0
    text = capsys.readouterr().out
    assert f"bonding: {PROBES['bonding'].does}" in text
    assert "    seen on: " + ", ".join(PROBES["bonding"].seen_on) in text
    assert "    not seen: " + PROBES["bonding"].unseen in text
    assert "ip link set: " + PROBES["ip link set"].does + "\n" in text
    assert "    seen on: no real output\n    not seen: " + PROBES["ip link set"].unseen in text


@pytest.mark.parametrize("probe", catalog(), ids=lambda p: p.name)
def test_docs_checks_shows_where_each_format_was_seen(probe):
    def cell(text):
        return text.replace("|", "\\|")
    row = f"| {cell(probe.name)} | {cell(', '.join(probe.seen_on)) or '—'} | {cell(probe.unseen) or '—'} |"
    assert row in (Path(__file__).parents[1] / "docs" / "checks.md").read_text().splitlines()
