"""Change control: the snapshot a run compares the cluster with (--expect-unchanged)."""

import pytest

from .options import SNAPSHOT


@pytest.fixture(scope="session")
def snapshot_before(pytestconfig: pytest.Config) -> dict:
    """The snapshot --expect-unchanged names, read and checked when the run started."""
    return pytestconfig.stash[SNAPSHOT]
