"""The report's "Spark minimal acceptance": the Spark guide's five items, each passed only when
every check behind it ran and passed (one of NCCL and the RoCE link check for the third), and
what a check that failed, ended in error, was waived or did not run makes of its item; and a
check that carries a tool's warnings ends warned, with them as its message."""

import pytest

from rackproof.judging.failure import Failure
from rackproof.report import spark_acceptance
from rackproof.report.outcomes import PytestReport, outcome_of

ALL_GREEN = {check: "passed" for item in spark_acceptance.ITEMS for check in item.checks}


def recorded(outcomes: dict[str, str]) -> list[dict]:
    return [{"id": f"tests_x/test_x.py::{check}[spark-1]", "check": check, "outcome": outcome}
            for check, outcome in outcomes.items()]


def states(outcomes: dict[str, str]) -> list[str]:
    return [i["state"] for i in spark_acceptance.build("spark", recorded(outcomes))]


def test_every_check_green_passes_all_five_items_with_their_tests():
    items = spark_acceptance.build("spark", recorded(ALL_GREEN))
    assert [i["state"] for i in items] == ["passed"] * 5
    assert items[1]["tests"] == [f"tests_x/test_x.py::{c}[spark-1]" for c in spark_acceptance.ITEMS[1].checks]


@pytest.mark.parametrize("check, outcome, item, state", [
    ("test_passwordless_ssh_over_cx7", "failed", 1, "failed"),
    ("test_cx7_ping_on_its_subnet", "error", 0, "unconfirmed"),
    ("test_the_multi_node_path_uses_cx7_addresses", "skipped", 3, "not checked"),
    ("test_cx7_netplan_files_are_backed_up", "waived", 4, "waived"),
    ("test_nccl_across_the_nodes", "failed", 2, "failed"),
])
def test_one_check_decides_its_item_and_no_other(check, outcome, item, state):
    found = states(ALL_GREEN | {check: outcome})
    assert found[item] == state
    assert [s for i, s in enumerate(found) if i != item] == ["passed"] * 4


def test_the_nccl_or_link_check_one_suffices_but_a_check_not_run_leaves_an_item_open():
    without_nccl = {k: v for k, v in ALL_GREEN.items() if k != "test_nccl_across_the_nodes"}
    assert states(without_nccl)[2] == "passed"
    without_backup = {k: v for k, v in ALL_GREEN.items() if k != "test_cx7_netplan_files_are_backed_up"}
    item = spark_acceptance.build("spark", recorded(without_backup))[4]
    assert (item["state"], item["why"]) == ("not checked", "test_cx7_netplan_files_are_backed_up: did not run or was skipped")
    scope = [{"check": "test_cx7_netplan_files_are_backed_up", "reasons": ["no [rollback] in the inventory"], "count": 2}]
    item = spark_acceptance.build("spark", recorded(without_backup), scope)[4]
    assert item["why"] == "test_cx7_netplan_files_are_backed_up: no [rollback] in the inventory"
    assert states({}) == ["not checked"] * 5


def test_a_thor_cluster_has_no_such_section():
    assert spark_acceptance.build("thor", recorded(ALL_GREEN)) is None


def test_a_tools_warnings_make_the_check_warned_with_their_text():
    record = Failure("spark-2", "NVIDIA CDI spec: 1 of 3 referenced paths missing").as_dict()
    warned = [PytestReport("setup", "passed"), PytestReport("call", "passed", properties={"rackproof_warnings": [record]}),
              PytestReport("teardown", "passed")]
    assert outcome_of(warned) == ("warned", "spark-2: NVIDIA CDI spec: 1 of 3 referenced paths missing")
    failed = [PytestReport("setup", "passed"), PytestReport("call", "failed", "a gap", properties={"rackproof_warnings": [record]})]
    assert outcome_of(failed) == ("failed", "a gap")
