"""What every parser must survive (test_parsers_hostile.py runs it on each of them): any text,
real samples damaged the ways real output gets damaged, and large inputs built to make a
backtracking regex or a quadratic loop hang. A parser gives a value of its type with every
figure in it finite, or its ParseError; never another exception.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

from hypothesis import strategies as st

from rackproof.probes import ParseError

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def samples(*patterns: str) -> list[str]:
    """Names of the samples matching any of the glob patterns."""
    names = sorted({path.name for pattern in patterns for path in SAMPLES.glob(pattern)})
    assert names, f"no sample matches {patterns}"
    return names


def value_or_parse_error(parse, kind, *args):
    """parse(*args) when it is a `kind` holding only finite figures; None for a ParseError.
    Any other exception propagates: that is the bug these tests look for."""
    try:
        value = parse(*args)
    except ParseError:
        return None
    assert isinstance(value, kind), f"{value!r} is not a {kind}"
    assert all(math.isfinite(figure) for figure in floats(value)), f"a figure is not finite: {value!r}"
    return value


def floats(value):
    """Every float inside a parser's value (dataclasses, tuples, lists, dicts)."""
    if isinstance(value, float):
        yield value
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from floats(getattr(value, field.name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from floats(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from floats(item)


# --- damaged samples ------------------------------------------------------------------------

# What a printed number turns into when a tool or a pipe breaks, or someone means harm: float()
# reads the first ones as inf/nan, int() and float() read some other scripts' digits, and more
# than 4300 digits is a ValueError from int().
HOSTILE_NUMBERS = ("inf", "-inf", "nan", "-nan", "NaN", "Infinity", "-0", "-0.0", "1e999", "-1e999",
                   "1e-999", "0x1f", "1_000", "\u0663", "\u00b2", "\uff11", "")
hostile_numbers = st.sampled_from(HOSTILE_NUMBERS) | st.integers(300, 6000).map(lambda digits: "9" * digits)
control_characters = (st.characters(categories=["Cc"])
                      | st.sampled_from(["\u2028", "\u2029", "\ufeff", "\u200b", "\x1b[2J"]))
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")


# Strategies made once: a strategy made anew for each draw costs more than the draw.
_INDEX = st.integers(0, 2**16)      # taken modulo the length of what it indexes
_REPEATS = st.integers(1, 3)
_LINE_TEXT = st.text(max_size=30)
_DAMAGE_COUNT = st.integers(0, 8)


def _line(draw, lines: list[str]) -> int:
    return draw(_INDEX) % len(lines)


def _drop_line(draw, lines):
    del lines[_line(draw, lines)]


def _repeat_line(draw, lines):
    at = _line(draw, lines)
    lines[at:at] = [lines[at]] * draw(_REPEATS)


def _move_line(draw, lines):
    lines.insert(_line(draw, lines), lines.pop(_line(draw, lines)))


def _replace_line(draw, lines):
    lines[_line(draw, lines)] = draw(_LINE_TEXT)


def _replace_number(draw, lines):
    at = _line(draw, lines)
    numbers = list(_NUMBER.finditer(lines[at]))
    if numbers:
        number = numbers[draw(_INDEX) % len(numbers)]
        lines[at] = lines[at][:number.start()] + draw(hostile_numbers) + lines[at][number.end():]


def _insert_control_character(draw, lines):
    at = _line(draw, lines)
    column = draw(_INDEX) % (len(lines[at]) + 1)
    lines[at] = lines[at][:column] + draw(control_characters) + lines[at][column:]


_DAMAGES = st.sampled_from([_drop_line, _repeat_line, _move_line, _replace_line, _replace_number,
                            _insert_control_character])


@st.composite
def damaged_samples(draw, names: list[str]) -> str:
    """A real sample with up to eight damages, each a line dropped, repeated, moved or replaced
    by any text, a number made hostile or a control character put in."""
    lines = sample(draw(st.sampled_from(names))).splitlines()
    for _ in range(draw(_DAMAGE_COUNT)):
        lines = lines or [""]
        draw(_DAMAGES)(draw, lines)
    return "\n".join(lines)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10)


def _paths(node, prefix=()):
    """Every key path in a JSON document."""
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in children:
        yield prefix + (key,)
        yield from _paths(value, prefix + (key,))


@st.composite
def damaged_json(draw, names: list[str]) -> str:
    """A real JSON sample with one part removed or replaced by any JSON value (floats include
    NaN and Infinity, which Python's json writes and reads)."""
    document = json.loads(sample(draw(st.sampled_from(names))))
    *parents, last = draw(st.sampled_from(list(_paths(document))))
    container = document
    for step in parents:
        container = container[step]
    if draw(st.booleans()):
        del container[last]
    else:
        container[last] = draw(json_values)
    return json.dumps(document)


# --- large adversarial inputs ---------------------------------------------------------------

# Enough that a quadratic parser takes minutes where a linear one takes milliseconds.
ADVERSARIAL_SIZE = 50_000
# Long runs of one thing, alone and after the start of a line that a probe's patterns look for:
# a regex backtracks where its literal start has matched and the run leaves it ambiguous.
RUNS = {"spaces": " ", "tabs": "\t", "newlines": "\n", "CRs": "\r", "CRLFs": "\r\n", "digits": "1",
        "letters": "a", "key-colons": "a:", "dots": ".", "digits-and-spaces": "1 ", "unit-brackets": " [",
        "open-brackets": "[", "percents": "%", "quotes": "'", "mixed": " \t1a:.\n", "hosts": "a1:1:"}
ENDED_RUNS = {"digits": "1", "spaces": " ", "digits-and-spaces": "1 "}   # then a character that fails
LINE_STARTS = {
    "ping-summary": "3 packets transmitted, 3 received,",
    "ping-rtt": "--- x ping statistics ---\n3 packets transmitted, 3 received, 0% packet loss\n"
                "rtt min/avg/max/mdev = ",
    "ping-statistics": "--- ",
    "ping-error": "ping: ",
    "nccl-average": "# Avg bus bandwidth : ",
    "nccl-row": "1048576 262144 float sum -1 ",
    "nccl-rank": "#  Rank  0 Group  0 Pid 1 on ",
    "nccl-noise": "a" * 252 + ":1:",
    "perftest-row": "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n 65536 1000 ",
    "perftest-failure": "a: ",
    "ethtool-key": "Settings for eth0:\n\tSpeed",
    "ethtool-value": "Settings for eth0:\n\tSpeed: ",
    "fec-modes": "FEC parameters for eth0:\nActive FEC encoding: ",
    "bonding-member": "Bonding Mode: x\nMII Status: up\n\nSlave Interface: e1\nMII Status: up\nSpeed: ",
    "smi-gpu-row": "NVIDIA-SMI 1 Driver Version: 1 CUDA Version: 1\n| 0 x",
    "smi-csv-unit": "name [",
    "tegra-release": "# R",
    "nvpmodel": "NV Power Mode: MAXN\n",
    "ss-port": "LISTEN 0 128 0.0.0.0:",
    "ss-pid": 'LISTEN 0 128 0.0.0.0:80 0.0.0.0:* users:(("a",pid=',
    "ibdev2netdev": "rocep1s0f1 port ",
    "sse-data": "data: ",
    "agent": "1 thor-tigress-agent --engine ",
    "agent-quote": '1 thor-tigress-agent --engine "',   # unclosed: shlex.split took 3 s at 512 KiB
    "getent": "10.0.0.1 ",
    "json": '{"start": ',
}


def adversarial_inputs() -> dict[str, str]:
    """name -> text of about ADVERSARIAL_SIZE characters."""
    def run(unit: str) -> str:
        return unit * (ADVERSARIAL_SIZE // len(unit))
    inputs = {name: run(unit) for name, unit in RUNS.items()}
    for start_name, start in LINE_STARTS.items():
        for run_name, unit in ENDED_RUNS.items():
            inputs[f"{start_name}+{run_name}"] = start + run(unit) + "x"
    inputs["repeated-line-starts"] = run("\n".join(LINE_STARTS.values()) + "\n")
    return inputs


def nested_json(depth: int) -> list[str]:
    """JSON documents whose values nest `depth` deep, at the places parsers read: a decoder may
    accept a depth that a later repr() or json.dumps() a few stack frames deeper cannot handle."""
    nested = "[" * depth + "]" * depth
    return [nested, *(form % nested for key in ("a", "ifname", "error", "data", "start", "choices")
                      for form in ('{"%s": %%s}' % key, '[{"%s": %%s}]' % key))]
