"""rackproof's pytest plugin lives in fixtures/; this file only loads it."""

pytest_plugins = ["fixtures.options", "fixtures.cluster", "fixtures.evidence", "fixtures.serving", "fixtures.scheduling",
                  "fixtures.reporting"]
