"""Prerequisites: what a node lacks (a tool, a group, a daemon, a sudo right) is said before a
run by `rackproof doctor`, and in a run it makes each check that needs it "not verified" in the
same words, never a hardware failure; `rackproof sudoers` writes exactly the root commands, and
visudo accepts the file."""

import re
from pathlib import Path

import pytest

from rackproof.checks import catalog
from rackproof.subcommands.doctor import step_checks
from rackproof.judging.failure import NotVerified
from rackproof.nodes.host import Host
from rackproof.inventory.model import FINISHED, ClusterAtStep, load_inventory
from rackproof.nodes.prerequisites import TOOLS, NodePrerequisites, needed_on, survey_findings, tools_of
from rackproof.probes import ParseError
from rackproof.probes.iperf import IPERF3_CLIENT
from rackproof.probes.slurm import MUNGE_TO
from rackproof.probes.sockets import LISTENING_PROCESSES
from rackproof.probes.sparkrun import SPARKRUN_VERSION
from rackproof.probes.sshcheck import SSH_CONNECTION
from rackproof.probes.sshkeys import AUTHORIZED_KEYS
from rackproof.probes.survey import Ran, parse_survey
from rackproof.probes.system import HOSTNAME
from rackproof.nodes.remote import EvidenceLog, Remote, Result
from rackproof.subcommands.sudoers import render, visudo_problem
from selftests.suite import EXAMPLES
from selftests.test_causes import Scripted

SAMPLES = Path(__file__).parent / "samples"
INVENTORY = load_inventory(EXAMPLES / "thor5.toml")
CLUSTER = ClusterAtStep(INVENTORY, FINISHED)
THOR1 = INVENTORY.node("thor-1")
# what a Debian or Ubuntu base system has: a probe whose command starts with one needs no row of TOOLS
BASE = {"getent", "ps", "cat", "ip", "ss", "stat", "dpkg-query", "sysctl", "hostname", "id", "date", "echo", "ping",
        "kill", "pkill", "dmesg", "systemctl", "printenv", "grep", "uname", "for", "if", "t=$(mktemp", "{commands}", "{command}", "{down}", "sudo", "{client}"}


def healthy(**changes: str) -> str:
    """A survey of thor-1 with everything there; `changes` replace whole lines by their first two words."""
    prerequisites = NodePrerequisites(CLUSTER, THOR1)
    lines = {f"tool {t}": f"tool {t} /usr/bin/{t}" for t in re.findall(r"for t in ([^;]*);", prerequisites.command)[0]
             .split()}
    lines["groups"] = "groups nvidia adm"
    lines.update({f"daemon {d}": f"daemon {d} 0" for d in ("lldpd", "chronyd", "munged")})
    lines.update({f"runs {t}": f"runs {t} 0 {t} 1.0" for t in re.findall(r"awk -v t=(\S+)", prerequisites.command)})
    lines["runs iperf3"] = "runs iperf3 0 iperf 3.16 (cJSON 1.7.15)"
    lines.update({f"sudo {k}": f"sudo {k} 0" for k in range(len(prerequisites.roots))})
    for key, line in changes.items():
        lines[key.replace("_", " ", 1)] = line
    return "\n".join(lines.values()) + "\n"


def findings(text: str, tools=None) -> list[str]:
    """thor-1's findings for `tools` (default: every tool a node of thor5 needs)."""
    prerequisites = NodePrerequisites(CLUSTER, THOR1)
    tools = [t for t in TOOLS.values() if needed_on(t, CLUSTER, THOR1)] if tools is None else tools
    return [str(f) for f in survey_findings(CLUSTER, THOR1, parse_survey(text), prerequisites.roots, tools)]


def test_a_real_survey_reads_as_what_the_node_has():
    survey = parse_survey((SAMPLES / "survey_local_debian12_nobody.txt").read_text())
    assert survey.tools["iperf3"].path == "/usr/bin/iperf3" and survey.tools["ethtool"].path is None
    assert survey.groups == ("nogroup",) and survey.daemons == {"munged": False}
    assert survey.runs["iperf3"] == Ran(0, "iperf 3.12 (cJSON 1.7.15)") and survey.runs["iperf3"].ran
    assert survey.runs["scontrol"].status == 1 and survey.runs["scontrol"].ran   # its own error: it ran
    assert survey.sudo and not any(survey.sudo.values())      # nobody may sudo anything


@pytest.mark.parametrize("line", ["tool", "tool iperf3 relative/iperf3", "sudo x 0", "daemon lldpd", "hello",
                                  "tool iperf3 /usr/bin/iperf3"])
def test_a_line_the_survey_does_not_print_is_refused(line):
    with pytest.raises(ParseError):
        parse_survey(healthy() + line + "\n")     # the last: said twice


def test_a_survey_cut_short_is_refused():
    with pytest.raises(ParseError, match="did not finish"):
        parse_survey("tool iperf3 /usr/bin/iperf3\n")


def test_a_healthy_node_lacks_nothing():
    assert findings(healthy()) == []


@pytest.mark.parametrize("changes, said", [
    ({"tool_iperf3": "tool iperf3"}, "thor-1: iperf3 is not on the login's PATH (sudo apt install iperf3)"),
    ({"tool_lldpcli": "tool lldpcli /usr/sbin/lldpcli adm"},
     "thor-1: /usr/sbin/lldpcli may not be run by nvidia (it is for group adm) (sudo usermod -aG adm nvidia, then log "
     "in again)"),
    ({"daemon_lldpd": "daemon lldpd 1"},
     "thor-1: lldpd does not answer `lldpcli show configuration` (sudo systemctl enable --now lldpd)"),
    ({"runs_iperf3": "runs iperf3 0 iperf 3.0.11"},
     "thor-1: iperf3 is 3.0.11, older than 3.1 (install iperf3 3.1 or newer (sudo apt install iperf3))"),
    ({"sudo_0": "sudo 0 1"}, "thor-1: nvidia may not run `sudo -n ss -Hltnup` (the sudoers line nvidia ALL=(root) "
                             "NOPASSWD: /usr/bin/ss -Hltnup (rackproof sudoers writes it))"),
])
def test_each_missing_thing_is_named_with_its_fix(changes, said):
    assert findings(healthy(**changes)) == [said]


def test_a_tool_that_is_there_and_does_not_run_is_named_with_the_loaders_words():
    """A broken install (a real survey: libiperf.so.0 emptied): the tool is on the PATH, its run
    exits 127, and the finding quotes the loader; a node that was ready before is not now."""
    text = (SAMPLES / "survey_local_debian12_broken_iperf3.txt").read_text()
    assert parse_survey(text).runs["iperf3"].status == 127
    said = [str(f) for f in survey_findings(CLUSTER, THOR1, parse_survey(text), [], [TOOLS["iperf3"]])]
    assert said == ['thor-1: /usr/bin/iperf3 does not run: `iperf3 -v` exited 127, saying "iperf3: error while loading '
                    'shared libraries: /lib/x86_64-linux-gnu/libiperf.so.0: file too short" (sudo apt install '
                    '--reinstall iperf3, and the packages of the library it names)']
    healthy_text = (SAMPLES / "survey_local_debian12_nobody.txt").read_text()
    assert survey_findings(CLUSTER, THOR1, parse_survey(healthy_text), [], [TOOLS["iperf3"]]) == []


@pytest.mark.parametrize("line, broken", [("runs ethtool 126 sh: 1: ethtool: Permission denied", True),
                                          ("runs ethtool 139 ", True),        # died of SIGSEGV before answering
                                          ("runs ethtool 1 ethtool: bad command line argument(s)", False),
                                          ("runs ethtool 124 ", False)])      # slow to answer: it ran
def test_only_the_shell_the_loader_or_a_signal_make_a_tool_not_run(line, broken):
    said = findings(healthy(runs_ethtool=line), tools=[TOOLS["ethtool"]])
    assert bool(said) == broken, said
    assert not said or "/usr/bin/ethtool does not run: `ethtool --version`" in said[0]


def test_a_tool_the_step_does_not_need_is_no_finding():
    assert findings(healthy(tool_iperf3="tool iperf3"), tools=[TOOLS["ethtool"]]) == []


def host_answering(survey: str | Exception):
    asked = []

    def answer(command):
        if "for t in " in command:     # the survey (after the locale export)
            if isinstance(survey, Exception):
                raise survey
            return Result(command, 0, survey, "", 0.01)
        asked.append(command.removeprefix("export LC_ALL=C; "))    # the locale every command runs in
        return Result(command, 0, "thor-1\n", "", 0.01)
    prerequisites = NodePrerequisites(CLUSTER, THOR1)
    return Host(THOR1, Remote("thor-1", Scripted(answer), EvidenceLog()), prerequisites=prerequisites), asked


def test_a_check_needing_what_the_node_lacks_is_not_verified_in_the_doctors_words():
    host, asked = host_answering(healthy(tool_iperf3="tool iperf3", sudo_0="sudo 0 1"))
    with pytest.raises(NotVerified) as caught:
        host.run(IPERF3_CLIENT, address="10.10.0.12", port=5201, seconds=5, streams=1)
    assert "iperf3 is not on the login's PATH. To verify it: sudo apt install iperf3" in str(caught.value)
    with pytest.raises(NotVerified, match=r"may not run `sudo -n ss -Hltnup`"):
        host.run(LISTENING_PROCESSES)
    assert host.read(HOSTNAME) == "thor-1" and asked == ["hostname"]   # what it has still runs; the rest never ran


def test_a_tool_its_own_check_judges_is_never_gated():
    # sparkrun on the head is what test_sparkrun_runs_on_the_head judges: missing, it fails there
    host, asked = host_answering(healthy(tool_sparkrun="tool sparkrun"))
    host.run(SPARKRUN_VERSION)
    assert asked == [SPARKRUN_VERSION.template]


def test_a_survey_that_could_not_be_taken_keeps_nothing_from_running():
    for survey in (TimeoutError("no answer"), "garbage\n"):
        host, asked = host_answering(survey)
        host.run(IPERF3_CLIENT, address="10.10.0.12", port=5201, seconds=5, streams=1)
        assert asked[0].startswith("iperf3 -c")


def test_the_tools_a_probe_runs_are_the_words_of_its_command():
    assert [t.name for t in tools_of(IPERF3_CLIENT)] == ["iperf3"]
    assert [t.name for t in tools_of(AUTHORIZED_KEYS)] == ["ssh-keygen"]
    assert sorted(t.name for t in tools_of(MUNGE_TO)) == ["munge", "ssh", "unmunge"]
    assert tools_of(SSH_CONNECTION) == []


def test_every_probe_starts_with_a_tool_of_the_table_or_of_the_base_system():
    for probe in catalog():
        words = [w for w in probe.template.split() if "=" not in w or w.startswith("t=")]
        first = words[2] if words[:2] == ["sudo", "-n"] and not words[2].startswith("-") else words[0]
        assert first in TOOLS or first in BASE, f"{probe.name}: {first} is in neither TOOLS nor the base system"


def surveyed(text: str) -> dict:
    out = {}
    for node in CLUSTER.nodes:
        prerequisites = NodePrerequisites(CLUSTER, node)
        prerequisites.survey = parse_survey(text)
        out[node.name] = prerequisites
    return out


def test_the_sudoers_file_lists_exactly_the_root_commands_and_visudo_accepts_it():
    text = render(INVENTORY, surveyed(healthy()), disruptive=False)
    rules = [line for line in text.splitlines() if not line.startswith("#")]
    assert "nvidia ALL=(root) NOPASSWD: /usr/bin/ss -Hltnup" in rules and "nvidia ALL=(ALL) NOPASSWD: list" in rules
    holders = INVENTORY.slices.holders
    assert [r for r in rules if "systemctl" in r] == [
        f"nvidia ALL=(root) NOPASSWD: /usr/bin/systemctl --user -M {h}@ show -p Id -p Transient -p ActiveState "
        r"-p RuntimeMaxUSec \*.service" for h in holders]
    assert not any("ip link" in r for r in rules)
    # a wildcard only where no fixed list exists, and said so
    assert [r for r in rules if re.search(r"(?<!\\)\*", r)] == [
        "nvidia ALL=(root) NOPASSWD: /usr/bin/sha256sum -- /etc/netplan/*.yaml",
        "nvidia ALL=(root) NOPASSWD: /usr/bin/sha256sum -- /etc/NetworkManager/system-connections/*",
        "nvidia ALL=(root) NOPASSWD: /usr/bin/sha256sum -- /etc/ssh/sshd_config.d/*",
        "nvidia ALL=(root) NOPASSWD: /usr/bin/grep -q -E * -- /etc/netplan/*.yaml"]
    assert visudo_problem(text) is None
    disruptive = render(INVENTORY, surveyed(healthy()), disruptive=True)
    lanes = [lane for node in CLUSTER.nodes if node.bond for lane in node.bond.lanes]
    assert {f"nvidia ALL=(root) NOPASSWD: /usr/bin/ip link set dev {lane} {state}" for lane in lanes
            for state in ("down", "up")} <= set(disruptive.splitlines())
    assert visudo_problem(disruptive) is None


def test_a_tool_no_node_has_gets_a_comment_not_a_rule():
    text = render(INVENTORY, surveyed(healthy(tool_ss="tool ss")), disruptive=False)
    assert "# ss is not on thor-1's PATH: install it, then write this file again" in text
    assert "-Hltnup" not in text


def test_visudo_refuses_a_broken_file():
    assert visudo_problem("nvidia ALL=(root) NOPASSWD: /usr/bin/ss -Hltnup,\n")


def test_the_doctor_lists_the_checks_pytest_collects_for_the_step():
    checks = step_checks(str(EXAMPLES / "thor5.toml"), 3, False)
    assert "tests_network/test_throughput.py::test_iperf3_one_stream[thor-1->thor-2]" in checks
    assert not any("test_slurm" in c for c in checks)
