"""The two hypothesis tests every parser must pass: any text at all, and real samples with
lines dropped, repeated, reordered or replaced, give a value of the parser's type or its
ParseError, never another exception.

    test_any_text, test_mangled_samples = robustness_tests(parse_fec, FecInfo, FEC_SAMPLES)
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings, strategies as st

from rackproof.probes import ParseError

SAMPLES = Path(__file__).parent / "samples"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def _value_or_parse_error(parse, kind: type, text: str) -> None:
    try:
        assert isinstance(parse(text), kind)
    except ParseError:
        pass


def robustness_tests(parse, kind: type, samples, *, max_lines: int = 40, text=st.text()):
    @settings(max_examples=150, deadline=None)
    @given(text)
    def any_text(t):
        _value_or_parse_error(parse, kind, t)

    @settings(max_examples=150, deadline=None)
    @given(st.data())
    def mangled_samples(data):
        lines = sample(data.draw(st.sampled_from(samples))).splitlines()
        mangled = data.draw(st.lists(st.sampled_from(lines) | st.text(max_size=30), max_size=max_lines))
        _value_or_parse_error(parse, kind, "\n".join(mangled))

    return any_text, mangled_samples
