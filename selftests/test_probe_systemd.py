"""rackproof.probes.systemd: `systemctl --user -M LOGIN@ show -p Id -p Transient -p ActiveState
-p RuntimeMaxUSec '*.service'`. Real output: systemctl_show_nginx_insights_ABRIDGED.txt, the
"typical output of systemctl show nginx" in RedHatInsights/insights-core
(insights/parsers/systemd/config.py, docstring of SystemctlShowNginx, cut where it says "...")
-- a whole unit's properties, so it lacks the ones this probe asks for and must be refused.
This machine has no systemd manager to ask; the block layout (KEY=VALUE, a blank line between
units, time spans such as "1min 30s" or "infinity") is that sample's and systemctl(1)'s, and the
stand-in's rendering is read back below."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.systemd import UNLIMITED, USER_JOBS, UserUnit, parse_systemctl_show
from rackproof_sim.formats.systemd import render_systemctl_show
from rackproof.judging.sharing import without_time_limit

SAMPLES = Path(__file__).parent / "samples"


def test_a_whole_units_output_lacks_what_the_probe_asks_for():
    with pytest.raises(ParseError, match="without Id"):
        parse_systemctl_show((SAMPLES / "systemctl_show_nginx_insights_ABRIDGED.txt").read_text())


def test_two_jobs_one_without_a_limit():
    text = ("RuntimeMaxUSec=6h\nId=finetune.service\nActiveState=active\nTransient=yes\n\n"
            "RuntimeMaxUSec=infinity\nId=run-u42.service\nActiveState=active\nTransient=yes\n\n"
            "RuntimeMaxUSec=infinity\nId=dbus.service\nActiveState=active\nTransient=no\n")
    units = parse_systemctl_show(text)
    assert [u.id for u in units] == ["finetune.service", "run-u42.service", "dbus.service"]
    assert without_time_limit(units) == ["run-u42.service"]


def test_no_units():
    assert parse_systemctl_show("") == ()


def test_the_command_asks_the_users_manager():
    assert USER_JOBS.command(login="mira") == ("sudo -n systemctl --user -M mira@ show -p Id -p Transient "
                                               "-p ActiveState -p RuntimeMaxUSec '*.service'")


units = st.builds(UserUnit, st.from_regex(r"[a-z][a-z0-9-]{0,20}\.service", fullmatch=True), st.booleans(),
                  st.sampled_from(["active", "inactive", "failed", "activating"]),
                  st.sampled_from([UNLIMITED, "6h", "1min 30s", "2d 4h"]))


@given(st.lists(units, max_size=6))
def test_what_the_stand_in_prints_reads_back(listed):
    assert parse_systemctl_show(render_systemctl_show(listed)) == tuple(listed)


@pytest.mark.parametrize("text", ["Id=a.service\n", "Id=a.service\nId=b.service\n",
                                  "RuntimeMaxUSec=6h\nId=a\nActiveState=active\nTransient=maybe\n", "no equals\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_systemctl_show(text)
