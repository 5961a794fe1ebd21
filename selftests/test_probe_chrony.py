"""rackproof.probes.chrony against chronyc_tracking_chronyc_manual_example.txt: the `chronyc
tracking` example of chrony's own manual (doc/chronyc.adoc, mlichvar/chrony at 8f2db83), whose
"System time" line client.c prints as "%.9O of NTP time" (an absolute value, then slow or fast);
and real outputs (samples/SOURCES.md): a node synchronised to a stratum-2 server, one following its
local reference with its server unreachable, one serving its local clock with no source on purpose,
a stratum-1 server following its GPS's PPS reference clock."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rackproof.probes import ParseError
from rackproof.probes.chrony import parse_tracking
from rackproof_sim.formats.chrony import render_tracking

SAMPLES = Path(__file__).parent / "samples"


def test_the_manuals_example():
    tracking = parse_tracking((SAMPLES / "chronyc_tracking_chronyc_manual_example.txt").read_text())
    assert tracking.offset_s == pytest.approx(-0.000006523)
    assert tracking.synchronised and tracking.reference == "CB00710F (ntp1.example.net)"


@pytest.mark.parametrize("name, offset, reference, stratum, local", [
    ("chronyc_tracking_synced_stratum3_centos7.txt", 0.000170658, "C39AAED1 (leeto.nicolbolas.org)", 3, False),
    ("chronyc_tracking_localref_7f7f0101_server_unreachable_centos7.txt", 0.0, "7F7F0101 ()", 10, True),
    ("chronyc_tracking_localref_7f7f0101_no_sources_lab_2026.txt", 0.0, "7F7F0101 ()", 10, True),
    ("chronyc_tracking_pps_refclock_stratum1_timeserver.txt", 0.000000072, "50505300 (PPS)", 1, False),
])
def test_real_outputs(name, offset, reference, stratum, local):
    """A node following its own clock reads Leap status Normal and offset 0: only its reference
    (7F7F0101, chrony's local one) tells it from a synchronised one."""
    tracking = parse_tracking((SAMPLES / name).read_text())
    assert (tracking.offset_s, tracking.reference, tracking.stratum) == (pytest.approx(offset), reference, stratum)
    assert tracking.synchronised and tracking.local_reference is local


def test_not_synchronised():
    text = "System time     : 0.000000000 seconds slow of NTP time\nLeap status     : Not synchronised\n"
    assert not parse_tracking(text).synchronised


@given(st.floats(min_value=-1e6, max_value=1e6).filter(lambda x: abs(x) > 1e-9))
def test_the_stand_ins_rendering_reads_back(offset):
    assert parse_tracking(render_tracking(offset, "C0A84D01 (192.168.77.1)")).offset_s == pytest.approx(offset, abs=1e-9)


@pytest.mark.parametrize("text", ["", "System time     : soon\nLeap status     : Normal\n",
                                  "System time     : 1.0 seconds slow of NTP time\n",
                                  "Stratum         : ten\nSystem time     : 1.0 seconds slow of NTP time\n"
                                  "Leap status     : Normal\n"])
def test_unreadable(text):
    with pytest.raises(ParseError):
        parse_tracking(text)
