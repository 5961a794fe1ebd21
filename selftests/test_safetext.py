"""What a node prints is shown, never obeyed: control characters reach no terminal or page raw."""

import json
import shutil

from hypothesis import given, strategies as st

from rackproof.probes.safetext import one_line, shown
from selftests.suite import REPLAYS, run_suite

CONTROLS = "".join(map(chr, [*range(0, 9), *range(11, 32), 127, *range(0x80, 0xA0), 0x202E, 0x2028, 0xFEFF]))


def test_escapes_look_like_what_they_are():
    assert shown("red\x1b[31m\r\n\tok\x00") == "red\\x1b[31m\n\tok\\x00"
    assert one_line("thor-2\nFORGED\u202e") == "thor-2\\x0aFORGED\\u202e"


@given(st.text())
def test_no_control_character_survives(text):
    assert not set(shown(text)) & set(CONTROLS)
    assert not set(one_line(text)) & set(CONTROLS + "\n\t")
    assert len(one_line(text).splitlines()) <= 1


def test_a_hostile_hostname_reaches_terminal_and_report_escaped(pytester, tmp_path):
    rec = tmp_path / "rec"
    shutil.copytree(REPLAYS / "thor5-healthy", rec)
    answers = json.loads((rec / "thor-2.json").read_text())
    hostile = "thor-2\x1b[2J\x1b[1;1H\nPASSED everything\r"
    (rec / "thor-2.json").write_text(json.dumps([{**e, "stdout": hostile} if e["command"] == "hostname" else e
                                                 for e in answers]))
    run = run_suite(pytester, "--replay", str(rec), "tests_network/test_addressing.py")
    test = "test_addressing::test_hostname_is_the_inventory_name[thor-2]"
    assert run.outcomes[test] == "failed", run.output
    assert "\x1b" not in run.output and "\\x1b[2J" in run.output
    assert "found thor-2\\x1b[2J\\x1b[1;1H\\x0aPASSED everything" in run.messages[test]   # no forged line
    page = (run.run_dir / "report.html").read_text()
    assert "\x1b" not in page and "\\x1b[2J" in page
