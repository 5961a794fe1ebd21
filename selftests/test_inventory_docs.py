"""docs/inventory.md's [expect] section is written from the code (rackproof/inventory/docs.py):
the page in the repository is what the code writes, and a page that says other than the code
(a default, a range, a line) is found and written back."""

from pathlib import Path

from rackproof.inventory.docs import HEADING, rewritten, section

PAGE = Path(__file__).parents[1] / "docs" / "inventory.md"


def test_the_page_says_what_the_code_checks():
    page = PAGE.read_text(encoding="utf-8")
    assert rewritten(page) == page, "docs/inventory.md's [expect] section drifted: run " \
                                    "`.venv/bin/python -m rackproof.inventory.docs docs/inventory.md`"


def test_a_page_that_drifted_is_found_and_written_back():
    page = PAGE.read_text(encoding="utf-8")
    row = "| `lane_floor_fraction` | number | > 0 and <= 1 | 0.9 |"
    drifted = page.replace(row, row.replace("0.9", "0.8"))
    assert drifted != page and rewritten(drifted) == page


def test_only_the_expect_section_is_written():
    page = f"# title\n\n{HEADING}\n\nold text\n\n## [[nodes]]\n\nkept\n"
    assert rewritten(page) == f"# title\n\n{section()}## [[nodes]]\n\nkept\n"
