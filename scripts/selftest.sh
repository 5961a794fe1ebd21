#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs rackproof's own tests. Run as root: the selftests bring
# up simulated racks in network namespaces (each under a name of its own) and always take
# them down; the report selftests drive headless Chromium, offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# the layers (pyproject.toml's [tool.importlinter]): the product apart from the simulator, pytest
# in the plugin alone, probes apart from the checks; no cache written into the checkout
.venv/bin/lint-imports --no-cache
# three workers: two take the modules that bring up simulated racks, the third the other tests
# (selftests/conftest.py); the log ends with the 25 slowest (where the CI's minutes go)
exec .venv/bin/python -m pytest selftests -q -p no:cacheprovider -n 3 --dist loadscope --durations=25 "$@"
