"""Rollback readiness on a simulated spark2 pair: with exact copies of the CX7 netplan file in
the inventory's backup folder (made as an admin would, `sudo cp -p`), the readiness checks
pass; a missing copy or a copy whose content differs fails naming the file and the folder. The
controller reaches the nodes over the house network, not the CX7 link: that check passes. A
netplan file the login may not read (no sudoers rule for grep) fails the netplan check naming
it, instead of passing for a file that names nothing. A CX7 address added with `ip addr add`
fails the netplan check as one the next reboot takes away, and a snapshot diff lists it so."""

from __future__ import annotations

from selftests.simrack import SimRack, rack_marks, unique_name
from selftests.suite import run_suite

pytestmark = rack_marks()

FOLDER = "/home/nvidia/netplan-backup"
BACKED_UP = "test_rollback::test_cx7_netplan_files_are_backed_up"
MANAGEMENT = "test_rollback::test_management_path_does_not_ride_on_the_cx7_link"
PERSISTS = "test_cx7::test_netplan_file_persists_the_cx7_addresses"
AD_HOC = "192.168.100.50/24"


def readiness(pytester, rack: SimRack, inventory):
    """The rollback and CX7 netplan checks at step 2: the two a change's readiness rests on."""
    return run_suite(pytester, f"--inventory={inventory}", "--step", "2", "tests_network/test_rollback.py",
                     "tests_network/test_cx7.py", netns=rack.rack.topo.bench)


def of(run, module: str) -> dict[str, str]:
    return {t: o for t, o in run.outcomes.items() if t.startswith(f"{module}::")}


def test_backups_present_pass_and_a_missing_or_different_copy_fails_naming_the_file(pytester, tmp_path):
    with SimRack("spark2", unique_name("rbk")) as rack:
        inventory = tmp_path / "cluster.toml"
        inventory.write_text(rack.inventory.read_text() + f'\n[rollback]\nbackup_dir = "{FOLDER}"\n')
        without_plan = readiness(pytester, rack, rack.inventory)
        for node in ("spark-1", "spark-2"):
            done = rack.as_root(node, f"mkdir -p {FOLDER} && cp -p /etc/netplan/40-cx7.yaml {FOLDER}/ && "
                                      f"echo 'nvidia ALL=(root) NOPASSWD: /usr/bin/sha256sum -- {FOLDER}/*' "
                                      "> /etc/sudoers.d/backup && chmod 440 /etc/sudoers.d/backup")
            assert done.returncode == 0, done.stderr
        ready = run_suite(pytester, f"--inventory={inventory}", "--step", "2", "tests_network/test_rollback.py",
                          netns=rack.rack.topo.bench)
        # then everything breaks at once, and one run names each break
        rack.as_root("spark-1", f"rm {FOLDER}/40-cx7.yaml")
        rack.as_root("spark-2", f"echo '# edited after the backup' >> {FOLDER}/40-cx7.yaml")
        before = rack.rackproof("snapshot", "--inventory", str(rack.inventory), "-o", str(tmp_path / "before.json"))
        rack.as_root("spark-1", f"ip addr add {AD_HOC} dev enp1s0f1np1")
        after = rack.rackproof("snapshot", "--inventory", str(rack.inventory), "-o", str(tmp_path / "after.json"))
        diff = rack.rackproof("diff", str(tmp_path / "before.json"), str(tmp_path / "after.json"))
        rack.as_root("spark-2", "sed -i '/grep -q -E/d' /etc/sudoers.d/rackproof")   # its netplan rule
        broken = readiness(pytester, rack, inventory)
    assert of(without_plan, "test_rollback") == {f"{MANAGEMENT}[spark-1]": "passed", f"{MANAGEMENT}[spark-2]": "passed"}, \
        without_plan.output
    assert ready.outcomes == {f"{t}[spark-{i}]": "passed" for t in (BACKED_UP, MANAGEMENT) for i in (1, 2)}, ready.output
    # the netplan file is readable and persists the CX7 addresses on both nodes
    assert without_plan.outcomes[f"{PERSISTS}[spark-1]"] == "passed", without_plan.output
    assert without_plan.outcomes[f"{PERSISTS}[spark-2]"] == "passed", without_plan.output
    assert broken.failed == {f"{BACKED_UP}[spark-1]", f"{BACKED_UP}[spark-2]", f"{PERSISTS}[spark-1]",
                             f"{PERSISTS}[spark-2]"}, broken.output
    assert f"/etc/netplan/40-cx7.yaml has no copy in {FOLDER}" in broken.messages[f"{BACKED_UP}[spark-1]"]
    differs = broken.messages[f"{BACKED_UP}[spark-2]"]
    assert f"/etc/netplan/40-cx7.yaml: the copy in {FOLDER} differs (sha256" in differs, differs
    assert "sudo cp -p FILE" in differs
    assert "/etc/netplan/40-cx7.yaml cannot be read by the login" in broken.messages[f"{PERSISTS}[spark-2]"]
    # an address added by hand is named as one the next reboot takes away, in the check and in the diff
    assert f"{AD_HOC} on enp1s0f1np1: in no netplan file, set with ip addr add: gone at the next reboot" in \
        broken.messages[f"{PERSISTS}[spark-1]"]
    assert before.returncode == after.returncode == 0, before.stderr + after.stderr
    assert (diff.returncode, diff.stdout.splitlines()) == (1, [
        f"spark-1: {AD_HOC} added on enp1s0f1np1",
        f"spark-1: address set with ip addr add (gone at a reboot): {AD_HOC} on enp1s0f1np1 added"]), diff.stdout
