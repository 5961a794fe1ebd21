"""rackproof.ticket.anonymise: a recording with the site's names, addresses, MACs, serial numbers and
keys masked replays to the same outcomes, and holds none of them.

The shipped thor5 recordings are anonymised here; live thor5 (`--record DIR --anonymise`) and
spark2 (`--record DIR`, then `rackproof anonymise`) runs use `assert_replays_alike` and
`assert_nothing_of_the_site` from test_acceptance_sim.py."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rackproof.ticket.anonymise import Anonymiser, anonymise_recording
from rackproof.inventory.model import load_inventory
from rackproof.nodes.replay import Recording
from selftests.suite import REPLAYS, REPO

KEY = bytes(32)


def _inventory(text: str, tmp_path: Path):
    path = tmp_path / "cluster.toml"
    path.write_text(text)
    return load_inventory(path)


SHELF = """
[cluster]
name = "acme-lab-7"
platform = "thor"
user = "kofi"
[switch]
name = "core-sw-3"
[[nodes]]
name = "thor-1"
ssh = "ops@thor-1.lab.acme.example"
address = "192.168.40.11/24"
lanes = [{ name = "mgbe0_0", switch_port = 1 }]
[[nodes]]
name = "thor-10"
address = "192.168.40.20/24"
lanes = [{ name = "mgbe0_0", switch_port = 2 }]
"""


@pytest.fixture
def shelf(tmp_path) -> Anonymiser:
    return Anonymiser(_inventory(SHELF, tmp_path), KEY)


def test_names_are_masked_as_whole_words_in_sorted_order(shelf):
    assert shelf.names == {"acme-lab-7": "cluster-1", "core-sw-3": "switch-1", "thor-1": "node-1",
                           "thor-10": "node-2", "thor-1.lab.acme.example": "host-1", "kofi": "login-1"}
    text = shelf.text("thor-1 thor-10 thor-1/1 thor-1.local thor-tigress-agent /home/kofi kofi-x "
                      "Nodes=thor-[1,10] Nodes=thor-[2-3] thor-1->thor-10")
    assert text == ("node-1 node-2 node-1/1 node-1.local thor-tigress-agent /home/login-1 kofi-x "
                    "Nodes=node-1,node-2 Nodes=thor-[2-3] node-1->node-2")


def test_an_address_keeps_its_class_its_host_part_and_its_shared_prefixes(shelf):
    text = shelf.text("inet 192.168.40.11/24 brd 192.168.40.255 via 192.168.40.20 dst 10.10.0.11 10.10.7.11")
    a, brd, b, c, d = re.findall(r"\d+\.\d+\.\d+\.\d+", text)
    assert a.startswith("192.168.") and a.endswith(".11") and a != "192.168.40.11"
    assert brd.endswith(".255") and a.rsplit(".", 1)[0] == brd.rsplit(".", 1)[0] == b.rsplit(".", 1)[0]
    assert c.startswith("10.") and c.endswith(".11") and c != "10.10.0.11"
    # 10.10.0.x and 10.10.7.x share 21 bits: so do their masks, and no more
    shared = lambda x, y: 32 - (int(ipaddress.IPv4Address(x)) ^ int(ipaddress.IPv4Address(y))).bit_length()
    assert shared(c, d) == shared("10.10.0.11", "10.10.7.11") == 21
    kept = "127.0.0.1:8080 0.0.0.0:* 255.255.255.0 224.0.0.251 version 580.159.03"
    assert shelf.text(kept) == kept
    assert shelf.text("192.168.40.11") == shelf.text("192.168.40.11") == a
    # as a command's regular expression writes it
    assert shelf.text("grep -E '(^|[^0-9])192[.]168[.]40[.]11/24($|[^0-9])'") == \
        f"grep -E '(^|[^0-9]){a.replace('.', '[.]')}/24($|[^0-9])'"
    assert shelf.text(r"192\.168\.40\.11") == a.replace(".", r"\.")


def test_a_roce_gid_is_masked_as_the_address_and_mac_it_carries(shelf):
    """A GID file's line (grep -H, rackproof.probes.rdmasysfs) holds the port's IPv4 address in hex and
    a link-local id made from its MAC: both masked, the IPv4 one as the address itself is."""
    lines = ("/sys/class/infiniband/rocep1s0f1/ports/1/gids/3:0000:0000:0000:0000:0000:ffff:c0a8:280b\n"
             "/sys/class/infiniband/rocep1s0f1/ports/1/gids/0:fe80:0000:0000:0000:4ebb:47ff:fe0a:1b2c\n")
    masked = shelf.text(lines)
    mapped, link_local = (line.split("gids/", 1)[1].split(":", 1)[1] for line in masked.splitlines())
    assert mapped == ipaddress.IPv6Address("::ffff:" + shelf.text("192.168.40.11")).exploded
    assert mapped != "0000:0000:0000:0000:0000:ffff:c0a8:280b"
    assert link_local.startswith("fe80:0000:0000:0000:") and "47ff:fe0a:1b2c" not in link_local
    assert shelf.text("::ffff:192.168.40.11") == "::ffff:" + shelf.text("192.168.40.11")


def test_macs_keys_uuids_and_serials_are_masked_consistently_and_protocol_values_stay(shelf):
    kept = "link/ether 00:00:00:00:00:00 brd ff:ff:ff:ff:ff:ff lldp 01:80:c2:00:00:0e ::1"
    assert shelf.text(kept) == kept
    mac = shelf.text("3c:6d:66:10:02:00")
    assert mac != "3c:6d:66:10:02:00" and int(mac[:2], 16) & 3 == 2 and shelf.text("3c:6d:66:10:02:00") == mac
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKQ7pLdYoVWmHLdtCDN6QrXF6PLBExtJq2v5ffGDSrvj ops@thor-1"
    masked = shelf.text(key)
    assert masked.startswith("ssh-ed25519 AAAA") and "AAAAC3NzaC1lZDI1NTE5AAAAIKQ7" not in masked
    assert masked.endswith(" ops@node-1") and len(masked) == len(key)
    fingerprint = "256 SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s kofi@thor-10 (ED25519)"
    assert "uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s" not in shelf.text(fingerprint)
    boot = "c3a8b4b1-3d7e-4e8a-9d0f-2b1e6f5a7c10"
    assert shelf.text(boot) != boot and shelf.text(boot) == shelf.text(boot)
    assert shelf.text("Serial Number: 1422921011482\nVendor SN: MT2243VS01234") == \
        shelf.text("Serial Number: 1422921011482\nVendor SN: MT2243VS01234")
    assert "1422921011482" not in shelf.text("Serial Number: 1422921011482")
    assert "MT2243VS01234" not in shelf.text("Vendor SN: MT2243VS01234")
    link_local = shelf.text("inet6 fe80::3e6d:66ff:fe10:200/64")
    assert link_local.startswith("inet6 fe80:") and "3e6d:66ff:fe10:200" not in link_local


# --- recordings: the same outcomes, none of the site ---------------------------------------

def replayed(recording: Path, inventory: Path | None = None) -> dict:
    """The verdict, every check's outcome and figures of the suite replayed from `recording`, and
    the checks it leaves to a live run (they judge a load)."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pytest", "-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO), "-q",
                        "-p", "no:cacheprovider", f"--html={tmp}/report.html", f"--replay={recording}",
                        *([f"--inventory={inventory}"] if inventory else [])],
                       cwd=REPO, capture_output=True, timeout=300, env=os.environ | {"TMPDIR": tmp})
        results = json.loads((Path(tmp) / "results.json").read_text())
    return {"verdict": results["verdict"]["decision"],
            "outcomes": {t["id"]: t["outcome"] for t in results["tests"]},
            "figures": sorted(f"{t['id']}: {m['kind']} {m['subject']} {m['value']} {m['unit']} {m['verdict']}"
                              for t in results["tests"] for m in t["measurements"]),
            "live_only": {s["check"] for s in results["scope"] if any("carries no load" in r for r in s["reasons"])}}


def masked_check(names: dict[str, str], check: str) -> str:
    """A check's id with the names of its parameters masked: pytest joins them with '-'
    (`[thor-1-no key]`), so a name ends where no letter or digit follows."""
    pattern = "(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + ")(?![A-Za-z0-9])"
    return re.sub(pattern, lambda m: names[m[1]], check)


def site_strings(inventory_path: Path, printed: list[str]) -> set[str]:
    """What must not survive: the inventory's names and addresses, and every MAC, key and
    fingerprint in what the nodes `printed`."""
    inventory = load_inventory(inventory_path)
    found = set(Anonymiser(inventory).names)
    for node in inventory.nodes:
        found |= {str(ipaddress.ip_interface(a).ip) for a in [node.address, *(c.address for c in node.cx7)] if a}
    for text in printed:
        found |= {m for m in re.findall(r"(?:[0-9a-f]{2}:){5}[0-9a-f]{2}", text)
                  if int(m[:2], 16) & 1 == 0 and m != "00:00:00:00:00:00"}
        found |= set(re.findall(r"AAAA[0-9A-Za-z+/]{40,}|SHA256:[0-9A-Za-z+/]{43}", text))
    return found


def printed_in(recording: Path) -> list[str]:
    return [f"{entry.get('stdout', '')} {entry.get('stderr', '')}"
            for entries in Recording(recording).answers.values() for entry in entries.values()]


def assert_nothing_of_the_site(masked: Path, secrets_of_the_site: set[str]) -> None:
    for path in masked.iterdir():
        text = path.read_text()
        leaked = sorted(s for s in secrets_of_the_site
                        if re.search(rf"(?<![A-Za-z0-9]){re.escape(s)}(?![A-Za-z0-9]|-[A-Za-z0-9])", text))
        assert not leaked, f"{path.name} still holds {leaked[:10]}"


def assert_replays_alike(recording: Path, inventory_path: Path, masked: Path, anonymiser: Anonymiser) -> dict:
    """`masked` (anonymised with `anonymiser`) replays to `recording`'s outcomes, masked alike."""
    before, after = replayed(recording, inventory_path), replayed(masked)
    assert before["outcomes"], "the original recording replayed no check"
    expected = {"verdict": before["verdict"],
                "outcomes": {masked_check(anonymiser.names, k): v for k, v in before["outcomes"].items()},
                "figures": sorted(anonymiser.text(f) for f in before["figures"]),
                "live_only": before["live_only"]}
    assert after == expected
    return after


@pytest.mark.parametrize("name", ["thor5-healthy", "thor5-lane-down-fec-mismatch", "thor5-ssh-thor2-to-thor4"])
def test_a_shipped_recording_anonymised_replays_alike_and_holds_nothing_of_the_site(name, tmp_path):
    recording = REPLAYS / name
    inventory_path = Recording(recording).inventory_path
    anonymiser = Anonymiser(load_inventory(inventory_path))
    anonymise_recording(recording, tmp_path / "masked", anonymiser, inventory_path.read_text())
    after = assert_replays_alike(recording, inventory_path, tmp_path / "masked", anonymiser)
    assert (after["verdict"] == "ACCEPTED") == (name == "thor5-healthy")
    assert_nothing_of_the_site(tmp_path / "masked", site_strings(inventory_path, printed_in(recording)))


def test_the_command_writes_a_new_folder_and_refuses_an_existing_one(tmp_path):
    command = [sys.executable, "-m", "rackproof.cli", "anonymise", str(REPLAYS / "thor5-ssh-thor2-to-thor4")]
    made = subprocess.run([*command, "-o", str(tmp_path / "masked")], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0 and "names, addresses, MACs, serial numbers and keys masked" in made.stdout
    assert sorted(p.name for p in (tmp_path / "masked").iterdir()) == ["cluster.toml"] + [
        f"node-{i}.json" for i in range(1, 6)]
    again = subprocess.run([*command, "-o", str(tmp_path / "masked")], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "name a new one" in again.stderr
    assert "Traceback" not in again.stderr


def test_the_shared_calendar_is_written_into_the_masked_inventory(tmp_path, monkeypatch):
    """The calendar is a file of the controller's: the recipient has not got it, so its
    reservations go into the masked cluster.toml, masked, and the recording stands alone."""
    from selftests.test_ics import calendar, slot
    (tmp_path / "slices.ics").write_bytes(calendar(slot("mira", "thor-10"), slot("kofi", "thor-1", start=8)))
    text = SHELF + f'[slices]\nholders = ["mira", "kofi"]\ncalendar = "{tmp_path / "slices.ics"}"\n'
    inventory = _inventory(text, tmp_path)
    (tmp_path / "recorded").mkdir()
    (tmp_path / "recorded" / "thor-1.json").write_text("[]")
    anonymise_recording(tmp_path / "recorded", tmp_path / "masked", Anonymiser(inventory, KEY), text)
    masked = (tmp_path / "masked" / "cluster.toml").read_text()
    assert "mira" not in masked and "slices.ics" not in masked
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rows = [(r.person, r.node) for r in load_inventory(tmp_path / "masked" / "cluster.toml").slices.reservations]
    assert rows == [("login-2", "node-2"), ("login-1", "node-1")]
