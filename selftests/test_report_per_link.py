"""The report's RoCE per link and direction: each CX7 link's bandwidth and latency both ways on
one row (rackproof.report.measurements.per_link), so that a direction slower than its twin
stands out; subjects as tests_network/test_cx7.py records them."""

from rackproof.report import measurements
from rackproof.report.html import _per_link

ONE = "spark-1 enp1s0f1np1 (rocep1s0f1)"
TWO = "spark-2 enp1s0f1np1 (rocep1s0f1)"


def figure(reference, src, dst, value, unit, verdict):
    return {"kind": reference, "reference": reference, "subject": f"{src} -> {dst}", "value": value, "unit": unit,
            "verdict": verdict, "expectation": {"floor": 80.0, "target": None, "better": "higher"}}


def check_of(id_, *figures):
    return {"id": id_, "outcome": "passed", "measurements": list(figures), "evidence": [], "facts": {}}


TESTS = [check_of("test_cx7.py::test_roce_bandwidth_of_each_link[spark-1->spark-2]",
              figure("roce.link", ONE, TWO, 97.21, "Gb/s", "passed")),
         check_of("test_cx7.py::test_roce_bandwidth_of_each_link[spark-2->spark-1]",
              figure("roce.link", TWO, ONE, 41.0, "Gb/s", "failed")),
         check_of("test_cx7.py::test_rdma_latency_of_each_link[spark-1->spark-2]",
              figure("roce.latency", ONE, TWO, 1.47, "µs", "passed")),
         check_of("test_cx7.py::test_roce_bandwidth_over_the_port[spark-1->spark-2]",
              figure("roce.port", "spark-1", "spark-2 (sum of 2 links)", 193.8, "Gb/s", "passed"))]


def test_both_directions_of_a_link_are_one_row():
    links = measurements.per_link(TESTS)
    assert [link["ends"] for link in links] == [(ONE, TWO)]   # the port's sum is no link
    figures = links[0]["figures"]
    assert {key: row["value"] for key, row in figures.items()} == {
        ("roce.link", "forward"): 97.21, ("roce.link", "back"): 41.0, ("roce.latency", "forward"): 1.47}


def test_the_page_shows_the_slow_direction_beside_its_twin():
    page = _per_link({"tests": TESTS})
    assert "RoCE per link and direction" in page and f"{ONE}<br>&#8644; {TWO}" in page
    assert 'data-verdict="failed"' in page and "<b>41</b> Gb/s" in page and "<b>97.21</b> Gb/s" in page
    assert '<td class="muted">—</td>' in page   # no latency measured back
    assert _per_link({"tests": TESTS[3:]}) == ""
