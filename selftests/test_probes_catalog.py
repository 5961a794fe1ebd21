"""Every command the suite runs on a node is a probe: listed by `rackproof probes`, its values
shell-quoted, and no check writes a command of its own."""

import ast
import json
import subprocess
import sys
from pathlib import Path
from string import Formatter

import pytest

from rackproof.checks import catalog
from rackproof.probes.probe import Command, Probe
from selftests.suite import REPO

HOSTILE = "a b;$(touch /tmp/rackproof-pwned)"
HOSTILE_ONE_WORD = "x;$(touch${IFS}/tmp/rackproof-pwned)"   # for probes that refuse whitespace outright
PROBES = catalog()


def test_names_are_distinct():
    names = [p.name for p in PROBES]
    assert len(names) == len(set(names)) and len(names) >= 30


WITH_VALUES = [p for p in PROBES if p.fields()]


LISTS = {"targets", "packages", "names"}   # fields that take a list: one quoted word each
NUMBERS = {"count", "size", "ident"}


def _hostile(probe: Probe, word: str) -> dict:
    values = {field: [word] if field in LISTS else word for field in probe.fields()}
    # a number of pings, a packet size: checked as numbers
    return values | {field: 1 for field in NUMBERS if field in values}


@pytest.mark.parametrize("probe", WITH_VALUES, ids=[p.name for p in WITH_VALUES])
def test_every_value_is_quoted(probe):
    only_parser = {k: "x" for k in probe.parser_takes if k not in probe.fields()}
    hostile = HOSTILE
    try:
        command = probe.command(**_hostile(probe, hostile), **only_parser)
    except ValueError:   # refused by the probe's own check (ping: no whitespace in a target)
        assert probe.check is not None
        hostile = HOSTILE_ONE_WORD
        command = probe.command(**_hostile(probe, hostile), **only_parser)
    quoted = "'" + hostile + "'"
    given = [field for _, field, _, _ in Formatter().parse(probe.template) if field and field not in NUMBERS]
    assert given and command.count(quoted) == len(given)
    assert hostile not in command.replace(quoted, "")


def test_only_a_probe_built_command_goes_in_as_it_is():
    inner = Probe("inner", "", "echo {word}").command(word="it's")
    outer = Probe("outer", "", "{command} && {text}")
    assert outer.command(command=inner, text="it's") == "echo 'it'\"'\"'s' && 'it'\"'\"'s'"
    assert isinstance(inner, Command)


def test_fields_are_exactly_the_template_s():
    probe = Probe("p", "", "ls {path}", parser=lambda out, path: out, parser_takes=("path",))
    with pytest.raises(TypeError):
        probe.command()
    with pytest.raises(TypeError):
        probe.command(path="/", other="x")


def test_the_cli_lists_every_probe():
    proc = subprocess.run([sys.executable, "-m", "rackproof.cli", "probes"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for probe in PROBES:
        assert f"{probe.name}: {probe.does}" in proc.stdout
    # what a site's security reviewer reads: no hook of the simulator's in any command
    assert "RACKPROOF_" not in proc.stdout


def test_the_cli_says_root_exits_and_checks_of_each_probe_as_json():
    proc = subprocess.run([sys.executable, "-m", "rackproof.cli", "probes", "--json"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    listed = {p["name"]: p for p in json.loads(proc.stdout)}
    assert set(listed) == {probe.name for probe in PROBES}
    assert listed["sudo ss"]["root"] == "yes" and listed["jetson_clocks --show"]["root"] == "yes"
    assert listed["config files"]["root"] == "where the login cannot read" and listed["ethtool -S"]["root"] == "no"
    assert listed["munge | unmunge"]["exit"] == "any" and listed["nvidia-smi --query-gpu"]["exit"] == [0, 6]
    assert listed["nvidia-smi --query-gpu"]["checks"] == ["tests_physical/test_gpus.py::test_gpus_seen_by_the_driver"]
    assert "tests_network/test_link_health.py::test_lane_error_counters_under_load" in listed["ethtool -i"]["checks"]
    assert "tests_physical/test_gpus.py::test_gpus_seen_by_the_driver" not in listed["ethtool -S"]["checks"]
    assert all(p["checks"] for p in listed.values())   # every probe serves a check
    assert "{interface}" in listed["ethtool -S"]["command"]


def _commands_written_in(path: Path) -> list[str]:
    """Calls that hand a node a command of their own: a string (or f-string) as the first
    argument of .run / .read, and any use of remote.quote."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("run", "read"):
            if node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr, ast.BinOp)):
                found.append(f"{path.name}:{node.lineno}")
        if isinstance(node, ast.Name) and node.id == "quote":
            found.append(f"{path.name}:{node.lineno} quote")
    return found


def test_no_check_writes_a_shell_command():
    files = sorted(p for folder in ("tests_physical", "tests_network", "tests_ssh", "tests_serving")
                   for p in (REPO / folder).glob("*.py"))
    assert files
    assert [c for f in files for c in _commands_written_in(f)] == []


def test_a_reader_that_stops_early_gets_no_traceback():
    # `rackproof probes | head -2`: the pipe closes while the list is still being written
    shown = subprocess.run(f"{sys.executable} -m rackproof.cli probes | head -2", shell=True, capture_output=True,
                           text=True, timeout=120)
    assert len(shown.stdout.splitlines()) == 2 and shown.stderr == "", shown.stderr
