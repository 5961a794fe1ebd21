"""Hostile and broken inventories (issue 10): every input gives an Inventory or an
InventoryError whose problems are single, printable, field-path lines; never another exception,
never a traceback, never a floor that cannot fail, never the access key in a problem line.

Per run, hypothesis tries 2 x 1,500 mutated inventories (both examples, mutated as data, written
back as TOML text), 2 x 1,000 mutated files (both examples, mutated as bytes), 500 sets of
[expect] numbers and 500 values for key_env: 6,000 inventories in all.
"""

from __future__ import annotations

import copy
import math
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

from rackproof.inventory import tomltext
from rackproof.inventory.model import (Agent, Bond, Cluster, Cx7Interface, Engine, Expect, Inventory, InventoryError, Lane,
                                 Node, SshSettings, Switch, load_inventory, parse_inventory)
from rackproof.inventory.references import SETTINGS
from rackproof_sim.profiles import PROFILES
from rackproof_sim.rack import calendar_ics, inventory_toml
from rackproof_sim.state import RackState
from selftests.suite import EXAMPLES, REPLAYS, run_suite

THOR5 = (EXAMPLES / "thor5.toml").read_text()
SPARK2 = (EXAMPLES / "spark2.toml").read_text()
EXAMPLE_DATA = {"thor5": tomllib.loads(THOR5), "spark2": tomllib.loads(SPARK2)}
SECRET = "sk-live-9f8E7d6C5b4A3f2E1d0CbAzz"

# problem lines that are about the file as a whole, not one field
FILE_LINES = ("not valid TOML", "the file is", "tables or arrays are nested", "cannot read the inventory", "... and ")
ROOTS = set(Inventory.model_fields) | {"(top level)"}
# a problem line's field path (rackproof.inventory.model._error_path): names, [N], and the file's own
# keys as Python shows a string, cut short with "…"
FIELD_PATH = re.compile(r"\(top level\)|(?:\.?[A-Za-z0-9_-]{1,64}|\[[0-9]+\]"
                        r"|\[(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")…?\])+")


# --- TOML text from data (inline tables: every value of any shape can be written) --------------

def toml_value(v) -> str:
    """tomltext's form, and the non-finite numbers rackproof never writes but must refuse."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else "inf" if v > 0 else "-inf"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{tomltext.key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    return tomltext.value(v)


def toml_dumps(data: dict) -> str:
    return "".join(f"{tomltext.key(k)} = {toml_value(v)}\n" for k, v in data.items())


# --- what every answer must look like --------------------------------------------------------

def assert_problem_lines(err: InventoryError) -> None:
    assert err.problems
    for line in err.problems:
        assert line.isprintable(), line           # no control character, no line break
        if line.startswith(FILE_LINES):
            continue
        # the field path first: a file's own odd key is quoted in it and may hold ": " itself
        at = FIELD_PATH.match(line)
        assert at and line[at.end():].startswith(": ") and line[at.end() + 2:], line
        path, message = at.group(), line[at.end() + 2:]
        known = re.match(r"[^.\[]*", path).group() in ROOTS   # else only a key of the file's own
        assert known or message.startswith("unknown field"), line


def positive(value, upper=math.inf) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and 0 < value <= upper


def assert_sane(inv: Inventory) -> None:
    """No accepted inventory has a floor that cannot fail, or a name that is an option."""
    e = inv.expect
    assert e.lane_rate_gbps is None or positive(e.lane_rate_gbps, 2e3)
    for floor in (e.lane_speed_mbps, e.cx7_speed_mbps, e.roce_floor_gbps, e.nccl_busbw_floor_gbs, e.iperf_seconds,
                  e.bond_rejoin_seconds, inv.ssh.connect_timeout, inv.ssh.command_timeout):
        assert positive(floor, 2e6), floor
    for fraction in (e.lane_floor_fraction, e.bond_floor_fraction, e.remote_tokens_ratio_floor):
        assert positive(fraction, 1), fraction
    assert 1 <= e.single_stream_ceiling_lanes < 2
    assert e.mtu is None or 68 <= e.mtu <= 65535
    if inv.switch:
        assert positive(inv.switch.ports, 1024) and positive(inv.switch.port_speed_mbps, 2e6)
    assert all(x.tokens_per_s_floor is None or positive(x.tokens_per_s_floor, 1e6) for x in inv.engines)
    for node in inv.nodes:
        assert not node.name.startswith("-") and not node.ssh_name.startswith("-")
        assert node.name.isprintable() and node.ssh_name.isprintable() and " " not in node.ssh_name
        assert node.bond is None or positive(node.bond.miimon, 10_000)
        assert all(lane.switch_port is None or positive(lane.switch_port, 1024) for lane in node.lanes)
    assert len({n.name.lower() for n in inv.nodes}) == len(inv.nodes)
    assert len({n.ssh_name.lower() for n in inv.nodes}) == len(inv.nodes)
    assert "/" not in inv.cluster.name and ".." not in inv.cluster.name and len(inv.cluster.name) <= 64


def load_or_refuse(text: str) -> None:
    try:
        inv = parse_inventory(text, "mutated.toml")
    except InventoryError as err:
        assert_problem_lines(err)
        assert not err.problems[0].startswith("not valid TOML"), "the test wrote bad TOML"
        event("refused")
        return
    assert_sane(inv)
    event("loaded")


# --- mutations ---------------------------------------------------------------------------------

def nested(depth: int):
    value = 1
    for i in range(depth):
        value = [value] if i % 2 else {"x": value}
    return value


FIELD_NAMES = sorted({name for model in (Expect, Switch, Lane, Bond, Cx7Interface, Node, Engine, Agent, SshSettings,
                                          Cluster, Inventory) for name in model.model_fields})
ODD_STRINGS = ["-oProxyCommand=touch /tmp/pwned", "..", "../../etc", "a" * 300, "24", "no", "", " ", "thor-1", "THOR-1",
               "::ffff:10.10.0.14/120", "10.10.0.11/24", "10.10.0.11", "fe80::1%eth0/64", "127.0.0.1:8080", SECRET,
               "thor\x1b[31m-1", "thor-1\nforged: line", "thor-1\u2028x", "\u202etxt", "x" * 5000]
scalars = st.one_of(
    st.integers(), st.sampled_from([0, -1, 1, 10 ** 400, 2 ** 63, -(2 ** 63) - 1, 65536, 69]),
    st.floats(), st.sampled_from([0.0, -0.0, 1e-300, 1e300, math.nan, math.inf, -math.inf]),
    st.booleans(), st.text(max_size=20), st.sampled_from(ODD_STRINGS))
hostile = st.one_of(
    scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=6), scalars, max_size=3),
    st.integers(1, 120).map(nested))


def places(data) -> list[tuple]:
    """Every (container, key) in the tree."""
    out, todo = [], [data]
    while todo:
        c = todo.pop()
        for k in (range(len(c)) if isinstance(c, list) else list(c)):
            out.append((c, k))
            if isinstance(c[k], (dict, list)):
                todo.append(c[k])
    return out


def mutate(data, draw) -> None:
    container, key = draw(st.sampled_from(places(data)))
    old = container[key]
    kind = draw(st.sampled_from(["replace", "replace", "tweak", "drop", "extra", "duplicate", "swap"]))
    if kind == "replace":
        container[key] = draw(hostile)
    elif kind == "tweak" and isinstance(old, str):
        container[key] = draw(st.sampled_from([old.upper(), "-" + old, old + "\x1b", old * 40, old + " x", ""]))
    elif kind == "tweak" and isinstance(old, (int, float)) and not isinstance(old, bool):
        container[key] = draw(st.sampled_from([-old, 0, 10 ** 400, 1e300, math.nan, math.inf, -math.inf,
                                               str(old), 0.5]))
    elif kind == "drop":
        del container[key]
    elif kind == "extra" and isinstance(container, dict):
        container[draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=8))] = draw(hostile)
    elif kind == "duplicate" and isinstance(container, list):
        container.append(copy.deepcopy(old))
    elif kind == "swap":
        other, other_key = draw(st.sampled_from(places(data)))
        if other[other_key] is not old:   # a value somewhere else, where it does not belong
            container[key] = copy.deepcopy(other[other_key])


@pytest.mark.parametrize("example", ["thor5", "spark2"])
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_inventories_load_or_give_field_path_lines(example, data):
    inventory = copy.deepcopy(EXAMPLE_DATA[example])
    for _ in range(data.draw(st.integers(1, 4))):
        if places(inventory):
            mutate(inventory, data.draw)
    load_or_refuse(toml_dumps(inventory))


@pytest.mark.parametrize("example", ["thor5", "spark2"])
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_files_load_or_give_problem_lines(example, data):
    raw = bytearray((EXAMPLES / f"{example}.toml").read_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        cut = data.draw(st.integers(0, 12))
        raw[at:at + cut] = data.draw(st.binary(max_size=8) | st.sampled_from(
            [b"\xe9", b"\xff\xfe", b"[" * 400, b"\x00", b"\x1b", b"\n[[nodes]]\n", b" = ", b"\"", b"1" * 5000]))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.toml"
        path.write_bytes(bytes(raw))
        try:
            assert_sane(load_inventory(path))
        except InventoryError as err:
            assert_problem_lines(err)


EXPECT_NUMBERS = [name for name, field in Expect.model_fields.items() if field.annotation in (int, float)]


@settings(max_examples=500, deadline=None)
@given(example=st.sampled_from(sorted(EXAMPLE_DATA)),
       overrides=st.dictionaries(st.sampled_from(EXPECT_NUMBERS), st.integers() | st.floats() | st.sampled_from(
           [0, -1, 1e-300, 10 ** 400, 0.5, 1, 2, 1.999, 65536]), min_size=1, max_size=4))
def test_no_accepted_inventory_has_a_floor_that_cannot_fail(example, overrides):
    inventory = copy.deepcopy(EXAMPLE_DATA[example])
    inventory.setdefault("expect", {}).update(overrides)
    load_or_refuse(toml_dumps(inventory))


def _key_env_problems(value: str) -> str:
    try:
        parse_inventory(THOR5.replace('key_env = "THOR_AGENT_KEY"', f"key_env = {tomltext.value(value)}"))
    except InventoryError as err:
        assert_problem_lines(err)
        return "\n".join(err.problems)
    return ""


@settings(max_examples=500, deadline=None)
@given(value=st.text(min_size=10))
def test_a_key_given_as_key_env_is_never_shown(value):
    # a value that is part of the problem's own wording ("cluster.to") proves nothing either way
    wording = _key_env_problems("an access key, not a name!")
    assume(value not in wording and repr(value)[1:-1] not in wording)
    shown = _key_env_problems(value)
    assert value not in shown and repr(value)[1:-1] not in shown


# --- each case of the issue, one by one ---------------------------------------------------------

def problems_of(text: str) -> list[str]:
    with pytest.raises(InventoryError) as err:
        parse_inventory(text, "c.toml")
    assert_problem_lines(err.value)
    return err.value.problems


def one_of(text: str, expected: str) -> None:
    found = problems_of(text)
    assert any(line.startswith(expected) or expected in line for line in found), found


CLUSTER = '[cluster]\nname = "thor-shelf"\nplatform = "thor"\nuser = "nvidia"            # the same login on every Thor\n'
assert CLUSTER in THOR5


@pytest.mark.parametrize("text, expected", [
    (THOR5.replace(CLUSTER, "cluster = 5\n"), "cluster: should be a table, not an integer"),
    (THOR5.replace('platform = "thor"', 'platform = ["thor"]'), "cluster.platform: should be 'thor' or 'spark'"),
    (THOR5.replace('name = "thor-2"', 'name = ["thor-2"]'), "nodes[1].name: should be a string, not an array"),
    ('nodes = 5\n' + SPARK2.split("[[nodes]]")[0], "nodes: should be an array, not an integer"),
    ('nodes = [1, "x"]\n' + SPARK2.split("[[nodes]]")[0], "nodes[0]: should be a table, not an integer"),
    (SPARK2.replace("[[nodes]]", "[nodes]", 1).split("[[nodes]]")[0], "nodes: should be an array, not a table"),
    ('[cluster]\nname="x"\nplatform="thor"\nuser="u"\n[[nodes]]\nname = "n"\nlanes = 3\n', "nodes[0].lanes: should be"),
    ('[cluster]\nname="x"\nplatform="thor"\nuser="u"\n[[nodes]]\nname = "n"\nlanes = [{name = "e0", switch_port = "3"}]\n',
     "nodes[0].lanes[0].switch_port: should be an integer, not a string"),
    (THOR5.replace("ports = 24", 'ports = "24"'), "switch.ports: should be an integer, not a string"),
    (THOR5.replace("ports = 24", "ports = 24.0"), "switch.ports: should be an integer, not a number with a fraction"),
    (THOR5.replace("ports = 24", "ports = 1979-05-27"), "switch.ports: should be an integer, not a date or time"),
    (THOR5.replace("joins_at_step = 7\nbond", 'local = "no"\njoins_at_step = 7\nbond', 1),
     "nodes[2].local: should be true or false, not a string"),
    (THOR5 + "\n[agent2]\n", "agent2: unknown field"),
])
def test_a_value_of_the_wrong_shape_is_a_field_path_line(text, expected):
    one_of(text, expected)


# every bound's setting (references.SETTINGS), and the other numbers of [expect]
FLOORS = [(s.name, "spark" if s.unit in ("Gb/s", "GB/s") else "thor") for s in SETTINGS] + [
    ("lane_speed_mbps", "thor"), ("cx7_speed_mbps", "spark"), ("iperf_seconds", "thor"), ("bond_rejoin_seconds", "thor"),
    ("mtu", "thor"), ("all_pairs_max_nodes", "thor")]


@pytest.mark.parametrize("value", ["0", "-1", "-0.5", "nan", "inf", "-inf", "1" + "0" * 400, "1e400", "1e300", '"24"',
                                   "true"])
@pytest.mark.parametrize("field, platform", FLOORS)
def test_no_floor_can_be_zero_negative_not_finite_or_absurd(field, platform, value):
    text = (THOR5 if platform == "thor" else SPARK2).replace("[expect]", f"[expect]\n{field} = {value}")
    assert any(line.startswith(f"expect.{field}: ") for line in problems_of(text))


@pytest.mark.parametrize("text, field", [
    (THOR5.replace("ports = 24", "ports = 0"), "switch.ports"),
    (THOR5.replace("port_speed_mbps = 25000", "port_speed_mbps = -25000"), "switch.port_speed_mbps"),
    (THOR5.replace("miimon = 100", "miimon = 0", 1), "nodes[0].bond.miimon"),
    (THOR5.replace("switch_port = 1,", "switch_port = -1,"), "nodes[0].lanes[0].switch_port"),
    (THOR5.replace("connect_timeout = 5", "connect_timeout = nan"), "ssh.connect_timeout"),
    (THOR5.replace("command_timeout = 60", "command_timeout = 1e9"), "ssh.command_timeout"),
    (THOR5.replace("[expect]", "[expect]\nlane_rate_gbps = 0"), "expect.lane_rate_gbps"),
    (THOR5.replace("[expect]", "[expect]\nlane_rate_gbps = -0.25"), "expect.lane_rate_gbps"),
    (THOR5.replace('model = "gemma-3-12b"\nnode = "thor-3"', 'model = "gemma-3-12b"\nnode = "thor-3"\n'
                   'tokens_per_s_floor = -inf'), "engines[2].tokens_per_s_floor"),
    (THOR5.replace("port = 8081", "port = 70000", 1), "engines[0].port"),
])
def test_other_numbers_are_in_range(text, field):
    assert any(line.startswith(f"{field}: ") for line in problems_of(text))


def test_an_integer_stands_for_a_number_with_a_fraction():
    inv = parse_inventory(THOR5.replace("[expect]", "[expect]\nroce_floor_gbps = 150\nlane_floor_fraction = 1"))
    assert inv.ssh.connect_timeout == 5.0 and inv.expect.roce_floor_gbps == 150.0


@pytest.mark.parametrize("text, expected", [
    (THOR5.replace('ssh = "thor-2"', 'ssh = "-oProxyCommand=touch /tmp/x"'), "nodes[1].ssh: '-oProxyCommand"),
    (THOR5.replace('ssh = "thor-2"', 'ssh = "thor 2"'), "nodes[1].ssh: 'thor 2' contains ' '"),
    (THOR5.replace("connect_timeout = 5", 'connect_timeout = 5\njump = "-J evil"'),
     "ssh.jump: '-J evil' begins with '-'"),
    (THOR5.replace('name = "thor-2"', 'name = "-thor-2"'), "nodes[1].name: '-thor-2' begins with '-'"),
    (THOR5.replace('name = "thor-2"', 'name = "thor_2"'), "nodes[1].name: 'thor_2' is not a hostname"),
    (THOR5.replace('{ name = "mgbe1_0", switch_port = 2', '{ name = "mgbe1_0_is_too_long", switch_port = 2'),
     "nodes[0].lanes[1].name: is 19 characters long (at most 15)"),
    (THOR5.replace('{ name = "mgbe1_0", switch_port = 2', '{ name = "mgbe/1", switch_port = 2'),
     "nodes[0].lanes[1].name: 'mgbe/1' is not a Linux interface name"),
    (THOR5.replace('{ name = "mgbe1_0", switch_port = 2', '{ name = "-mgbe", switch_port = 2'),
     "nodes[0].lanes[1].name: '-mgbe' begins with '-'"),
    (THOR5.replace('user = "nvidia"', 'user = "nvidia root"'), "cluster.user: 'nvidia root' contains ' '"),
    (THOR5.replace('user = "nvidia"', 'user = "-nvidia"'), "cluster.user: '-nvidia' begins with '-'"),
    (THOR5.replace('name = "thor-shelf"', 'name = "../../etc"'), "cluster.name: '../../etc' is not one folder name"),
    (THOR5.replace('name = "thor-shelf"', 'name = "a/b"'), "cluster.name: 'a/b' is not one folder name"),
    (THOR5.replace('name = "thor-shelf"', 'name = "a..b"'), "cluster.name: 'a..b' contains '..'"),
    (THOR5.replace('name = "thor-shelf"', f'name = "{"a" * 300}"'),
     "cluster.name: is 300 characters long (at most 64)"),
    (THOR5.replace('cable = "thor-1/1"', 'cable = "thor-1/1\\u0007"'),
     "nodes[0].lanes[0].cable: 'thor-1/1\\x07' contains"),
    (THOR5.replace('name = "sw-25g"', f'name = "{"s" * 65}"'), "switch.name: is 65 characters long"),
    (THOR5.replace('model = "qwen3-8b"', 'model = "qwen3 8b"'), "engines[0].model: 'qwen3 8b' contains ' '"),
    (THOR5.replace('model = "qwen3-8b"', 'model = "a=b"'), "engines[0].model: 'a=b' contains '='"),
    (THOR5.replace('key_env = "THOR_AGENT_KEY"', 'key_env = "K"\nprocess = "/usr/bin/agent"'),
     "agent.process: '/usr/bin/agent' is not a program name"),
    (THOR5.replace('host = "127.0.0.1"', 'host = "-x"'), "engines[0].host: '-x' begins with '-'"),
    (THOR5.replace('host = "127.0.0.1"', 'host = "::ffff:127.0.0.1"'),
     "engines[0].host: '::ffff:127.0.0.1' is an IPv4-mapped"),
    (THOR5.replace('host = "127.0.0.1"', 'host = "127.0.0.1"\nlisten = "localhost"'),
     "engines[0].listen: 'localhost' is not an address"),
    (THOR5.replace('listen = "127.0.0.1:8080"', 'listen = "127.0.0.1"'), "agent.listen: '127.0.0.1' is not HOST:PORT"),
    (THOR5.replace('listen = "127.0.0.1:8080"', 'listen = "127.0.0.1:0"'),
     "agent.listen: '127.0.0.1:0' is not HOST:PORT"),
    (THOR5.replace('listen = "127.0.0.1:8080"', 'listen = "::1:8080"'), "agent.listen: '::1:8080': write an IPv6 host"),
    (THOR5.replace('listen = "127.0.0.1:8080"', 'listen = "-h:8080"'), "agent.listen: '-h' begins with '-'"),
    (THOR5.replace('xmit_hash_policy = "layer3+4"', 'xmit_hash_policy = "layer3+4; reboot"', 1),
     "nodes[0].bond.xmit_hash_policy: should be"),
    (THOR5.replace("[expect]", '[expect]\nnccl_test = "all_gather_perf; reboot"'), "expect.nccl_test: should be"),
    (THOR5.replace('address = "10.10.0.14/24"', 'address = "127.0.0.1/8"'),
     "nodes[3].address: '127.0.0.1/8' is a loopback"),
    (THOR5.replace('address = "10.10.0.14/24"', 'address = "fe80::1%eth0/64"'),
     "nodes[3].address: 'fe80::1%eth0/64' is not an address"),
])
def test_names_and_targets_that_could_smuggle_or_break_are_refused(text, expected):
    one_of(text, expected)


def test_ssh_targets_and_ipv6_hosts_in_their_usual_forms_are_accepted():
    inv = parse_inventory(THOR5.replace('host = "127.0.0.1"', 'host = "::1"')
                          .replace('listen = "127.0.0.1:8080"', 'listen = "[::1]:8080"')
                          .replace('ssh = "thor-2"', 'ssh = "nvidia@thor-2.tailnet.ts.net:2222"')
                          .replace("connect_timeout = 5", 'connect_timeout = 5\njump = "admin@bastion:22,gw"'))
    assert inv.agent.host == "[::1]" and inv.agent.port == 8080 and inv.engines[0].host == "::1"


@pytest.mark.parametrize("text, expected", [
    (THOR5.replace('name = "thor-2"', 'name = "THOR-1"'),
     "nodes[1].name: THOR-1 is already nodes[0] (thor-1: names are"),
    (THOR5.replace('name = "thor-2"', 'name = "thor-1"'), "nodes[1].name: thor-1 is already nodes[0]"),
    (THOR5.replace('ssh = "thor-2"', 'ssh = "Thor-1"'), "nodes[1].ssh: Thor-1 is already the ssh target of nodes[0]"),
    (THOR5.replace('address = "10.10.0.14/24"', 'address = "::ffff:10.10.0.13/120"'),
     "nodes[3].address: '::ffff:10.10.0.13/120' is an IPv4-mapped IPv6 address; write the IPv4 address 10.10.0.13"),
    (THOR5.replace('address = "10.10.0.14/24"', 'address = "10.10.0.13/16"'),
     "nodes[3].address: 10.10.0.13 is already used by thor-3"),
    (SPARK2.replace('"192.168.101.11/24"', '"192.168.100.10/24"'),
     "nodes[1].cx7[1].address: 192.168.100.10 is already used by spark-1"),
])
def test_sameness_is_caught(text, expected):
    one_of(text, expected)


ENGINE_ON_SPARK_2 = '\n[[engines]]\nmodel = "m"\nnode = "spark-2"\nport = 8000\nagent = false\n'


@pytest.mark.parametrize("text, expected", [
    (THOR5.replace('"10.10.0.14/24"', '"10.10.0.14/32"'), "nodes[3].address: 10.10.0.14/32 is a network of 1 address:"),
    (THOR5.replace('"10.10.0.14/24"', '"10.10.0.14/31"'),
     "nodes[3].address: 10.10.0.14/31 is a network of 2 addresses"),
    (THOR5.replace('"10.10.0.14/24"', '"fd00::14/128"'), "nodes[3].address: fd00::14/128 is a network of 1 address"),
    (THOR5.replace('"10.10.0.14/24"', '"10.10.0.255/24"'),
     "nodes[3].address: 10.10.0.255/24 is the broadcast address of 10.10.0.0/24"),
    (THOR5.replace('"10.10.0.14/24"', '"10.10.0.0/24"'),
     "nodes[3].address: 10.10.0.0/24 is the address of the network 10.10.0.0/24 itself"),
    (SPARK2.replace('"192.168.101.11/24"', '"192.168.101.255/24"'),
     "nodes[1].cx7[1].address: 192.168.101.255/24 is the broadcast address"),
    (THOR5.replace('"10.10.0.14/24"', '"10.10.1.14/24"'),
     "nodes[3].address: 10.10.1.14/24 is not in the cluster network 10.10.0.0/24 of nodes[0]"),
    (THOR5.replace('"10.10.0.14/24"', '"10.10.0.14/16"'),
     "nodes[3].address: 10.10.0.14/16 is not in the cluster network 10.10.0.0/24 of nodes[0]"),
    (THOR5.replace('model = "gemma-3-12b"\nnode = "thor-3"', 'model = "gemma-3-12b"\nnode = "thor-2"'),
     "engines[2].port: thor-2 10.10.0.12:8081 is already engines[1]: one server cannot be two engines"),
    (SPARK2 + ENGINE_ON_SPARK_2, "engines[0].node: spark-2 has no cluster address for the engine to listen on"),
    (THOR5.replace('"mgbe2_0", "mgbe3_0"] }', '"mgbe2_0", "mgbe0_0"] }', 1),
     "nodes[0].bond.lanes[3]: mgbe0_0 is already nodes[0].bond.lanes[0]"),
    (THOR5.replace('"layer3+4", lanes', '"layer3+4", joins_at_step = 7, lanes', 1),
     "nodes[0].bond.joins_at_step: the bond is built at step 7, before its lanes are cabled: mgbe1_0 (step 8), "
     "mgbe2_0 (step 8), mgbe3_0 (step 8)"),
    (THOR5.replace("joins_at_step = 1\nbond", "joins_at_step = 1\nlocal = true\nbond"),
     "nodes[1].local: nodes[0] is already the local node: the controller is one machine"),
])
def test_what_no_cluster_can_have_is_refused(text, expected):
    one_of(text, expected)


def test_what_a_cluster_can_have_still_loads():
    one_local = THOR5.replace("joins_at_step = 1\nbond", "joins_at_step = 1\nlocal = true\nbond", 1)
    assert [node.local for node in parse_inventory(one_local).nodes] == [True, False, False, False, False]
    wider = parse_inventory(THOR5.replace("/24", "/16").replace('"10.10.0.14/16"', '"10.10.1.14/16"'))
    assert wider.nodes[3].address == "10.10.1.14/16"
    beside = parse_inventory(THOR5.replace('model = "gemma-3-12b"\nnode = "thor-3"\nport = 8081',
                                           'model = "gemma-3-12b"\nnode = "thor-2"\nport = 8082'))
    assert [beside.engine_url(e) for e in beside.engines][1:] == ["http://10.10.0.12:8081", "http://10.10.0.12:8082"]
    spark = parse_inventory(SPARK2 + ENGINE_ON_SPARK_2.replace("port = 8000", 'port = 8000\nlisten = "192.168.100.11"'))
    assert spark.engine_url(spark.engines[0]) == "http://192.168.100.11:8000"


@pytest.mark.parametrize("key", [SECRET, "AbC123xyz987SECRETq1w2e3r4", "9f86d081884c7d659a2feaa0c55ad015", "my key",
                                 "x" * 65, "key\x1bwith-escape"])
def test_a_key_where_a_variable_name_belongs_is_refused_and_never_shown(key, tmp_path):
    text = THOR5.replace('key_env = "THOR_AGENT_KEY"', f"key_env = {tomltext.value(key)}")
    lines = problems_of(text)
    assert len(lines) == 1 and lines[0].startswith("agent.key_env: "), lines
    assert "environment" in lines[0] and "key_file" in lines[0] and "not shown" in lines[0]
    assert key not in "\n".join(lines) and repr(key)[1:-1] not in "\n".join(lines)
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    proc = cli(bad)
    assert proc.returncode == 2 and key not in proc.stdout + proc.stderr
    as_file = THOR5.replace('key_env = "THOR_AGENT_KEY"', f"key_file = {tomltext.value(key)}")
    if key == "my key":   # a file could be called that
        assert parse_inventory(as_file).agent.key_file == key
    else:
        file_lines = problems_of(as_file)
        assert len(file_lines) == 1 and file_lines[0].startswith("agent.key_file: "), file_lines
        assert key not in file_lines[0] and repr(key)[1:-1] not in file_lines[0]


def test_a_variable_name_and_a_key_file_are_fine():
    for env in ("THOR_AGENT_KEY", "OPENAI_API_KEY", "key2", "_K"):
        assert parse_inventory(THOR5.replace('"THOR_AGENT_KEY"', f'"{env}"')).agent.key_env == env
    text = THOR5.replace('key_env = "THOR_AGENT_KEY"', 'key_file = "~/.config/thor agent/key"')
    assert parse_inventory(text).agent.key_file == "~/.config/thor agent/key"


def test_control_characters_are_escaped_in_every_line():
    text = (THOR5.replace('name = "thor-2"', 'name = "thor\\u001b[31m-2\\nnodes[9].name: forged"')
            .replace("[expect]", '[expect]\n"a\\u001bb\\u2028c" = 1'))
    lines = problems_of(text)
    assert any("'thor\\x1b[31m-2\\nnodes[9].name: forged' contains '\\x1b'" in line for line in lines), lines
    assert any(line.startswith("expect['a\\x1bb\\u2028c']: unknown field") for line in lines), lines
    assert all(line.isprintable() for line in lines)
    err = InventoryError("dir\x1b/c.toml", ["x: y\nforged"])
    assert str(err) == "dir\\x1b/c.toml: x: y\\x0aforged"


@pytest.mark.parametrize("raw, expected", [
    ("# caf\xe9\n".encode("latin-1") + THOR5.encode(), "the file is not UTF-8: byte 0xe9 on line 1"),
    (THOR5.encode("utf-16"), "the file is UTF-16"),
    (THOR5.encode() + b"x = " + b"[" * 600 + b"]" * 600 + b"\n", "tables or arrays are nested more than 32 levels"),
    (THOR5.encode() + b"x = " + b"{a=" * 300 + b"1" + b"}" * 300 + b"\n",
     "tables or arrays are nested more than 32 levels"),
    (THOR5.encode() + b"[" + b".".join([b"y"] * 200) + b"]\n", "tables or arrays are nested more than 32 levels"),
    (THOR5.encode() + b"# padding\n" * 120_000, "the file is larger than 1 MiB"),
    (THOR5.encode().replace(b"ports = 24", b"ports = 1" + b"0" * 5000), "not valid TOML: a number too long"),
    (THOR5.encode().replace(b"ports = 24", b"ports = 2\x004"), "not valid TOML"),
])
def test_an_unreadable_file_is_one_clear_line(raw, expected, tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_bytes(raw)
    with pytest.raises(InventoryError) as err:
        load_inventory(path)
    assert len(err.value.problems) == 1 and err.value.problems[0].startswith(expected), err.value.problems
    assert_problem_lines(err.value)


def test_a_utf8_byte_order_mark_is_harmless(tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_bytes(b"\xef\xbb\xbf" + THOR5.encode())
    assert load_inventory(path).cluster.name == "thor-shelf"


def test_the_simulated_racks_inventories_and_the_recording_still_load(tmp_path):
    """What `rackproof sim up` writes (its inventory, its shared calendar), generated without
    bringing a rack up."""
    for name, profile in PROFILES.items():
        state = RackState(name, root=tmp_path)
        state.root.mkdir()
        if profile().sharing:
            state.calendar.write_text(calendar_ics(profile()))
        text = inventory_toml(profile(), state)
        assert_sane(parse_inventory(text, f"{name} cluster.toml"))
    for recorded in REPLAYS.glob("*/cluster.toml"):
        assert_sane(load_inventory(recorded))
    for example in EXAMPLES.glob("*.toml"):
        assert_sane(load_inventory(example))


# --- the command and the plugin ---------------------------------------------------------------

def cli(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rackproof.cli", "inventory", "check", str(path)],
                          capture_output=True, text=True, timeout=60)


BROKEN = {
    "cluster-int": THOR5.replace(CLUSTER, "cluster = 5\n").encode(),
    "platform-list": THOR5.replace('platform = "thor"', 'platform = ["thor"]').encode(),
    "latin1": "# caf\xe9\n".encode("latin-1") + THOR5.encode(),
    "utf16": THOR5.encode("utf-16"),
    "deep": THOR5.encode() + b"x = " + b"[" * 600 + b"]" * 600 + b"\n",
    "floor-inf": SPARK2.replace("[expect]", "[expect]\nroce_floor_gbps = inf").encode(),
    "ssh-option": THOR5.replace('ssh = "thor-2"', 'ssh = "-oProxyCommand=x"').encode(),
    "escape": THOR5.replace('name = "thor-2"', 'name = "thor\\u001b-2\\nforged"').encode(),
}


def broken_paths(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / f"{name}.toml" for name in BROKEN}
    for name, path in paths.items():
        path.write_bytes(BROKEN[name])
    paths["missing"] = tmp_path / "missing.toml"
    paths["directory"] = tmp_path
    paths["fifo"] = tmp_path / "fifo.toml"   # reading it would wait for a writer forever
    os.mkfifo(paths["fifo"])
    paths["device"] = Path("/dev/zero")      # never ends
    paths["not-a-directory"] = paths["deep"] / "x.toml"
    return paths


def test_cli_prints_one_line_per_problem_and_exits_2_never_a_traceback(tmp_path):
    for name, path in broken_paths(tmp_path).items():
        proc = cli(path)
        assert proc.returncode == 2 and not proc.stdout, (name, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and "\x1b" not in proc.stderr, (name, proc.stderr)
        lines = proc.stderr.splitlines()
        assert lines and all(line.startswith(f"{path}: ") for line in lines), (name, lines)


@pytest.mark.parametrize("name, kind", [("fifo", "a FIFO"), ("device", "a character device"),
                                        ("directory", "a directory")])
def test_only_a_regular_file_is_read(tmp_path, name, kind):
    path = broken_paths(tmp_path)[name]
    assert cli(path).stderr == f"{path}: cannot read the inventory: {kind}, not a regular file\n"
    calendar = THOR5.replace("[slices]\n", f"[slices]\ncalendar = {tomltext.value(str(path))}\n")
    with pytest.raises(InventoryError) as err:
        parse_inventory(calendar, "c.toml")
    assert err.value.problems == [f"slices.calendar ({path}): cannot read it: {kind}, not a regular file"]


def test_cli_refuses_an_unreadable_file(tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_text(THOR5)
    path.chmod(0)
    # root reads any file: as root (CI), read it as nobody
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    proc = subprocess.run([*as_nobody, sys.executable, "-m", "rackproof.cli", "inventory", "check", str(path)],
                          capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert proc.returncode == 2 and proc.stderr == f"{path}: cannot read the inventory: Permission denied\n", proc.stderr


def test_pytest_given_a_broken_inventory_runs_no_test_and_exits_4(pytester, tmp_path):
    # the examples (the CLI test above has every file; each costs a child pytest here)
    paths = broken_paths(tmp_path)
    for name in ("cluster-int", "platform-list", "latin1", "utf16", "deep", "escape", "missing", "directory", "fifo"):
        path = paths[name]
        run = run_suite(pytester, f"--inventory={path}")
        assert run.exit_status == 4 and not run.outcomes, (name, run.output)
        assert "INTERNALERROR" not in run.output and "Traceback" not in run.output, (name, run.output)
        assert f"{path}: " in run.output and "\x1b" not in run.output, (name, run.output)

