"""rackproof's pytest plugin is the package rackproof.plugin, registered by its pytest11 entry
point when rackproof is installed (scripts/setup.sh); naming it here too loads it in a checkout
that is not installed. pytest loads a plugin once by its name, so the two never clash. The
fixtures checks ask for are the suite's own, in fixtures/ (see its __init__)."""

pytest_plugins = ["rackproof.plugin", "fixtures.cluster", "fixtures.targets", "fixtures.plan",
                  "fixtures.records", "fixtures.serving", "fixtures.changes"]
