"""Fixtures for the serving checks: the agent's access key, kept out of every output."""

import pytest

from .options import RECORDING
from rackproof.serving import read_access_key


@pytest.fixture(scope="session")
def access_key(pytestconfig, inventory, evidence_log) -> str:
    """The agent's key, from where the inventory says; registered as a secret before first use,
    so it is redacted from evidence, recordings and reports. A replay answers without it."""
    if pytestconfig.stash[RECORDING] is not None:
        return "replay-needs-no-key"
    key = read_access_key(inventory.agent)
    evidence_log.add_secret(key)
    return key
