#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs rackproof's own tests. Run as root: the selftests bring
# up simulated racks in network namespaces (each under a name of its own) and always take
# them down; the report selftests drive headless Chromium, offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# the selftests start hundreds of Pythons (the suite's runs in pytester, the CLI, xdist workers,
# a rack's `rackproof sudoers`): where the environment says PYTHONDONTWRITEBYTECODE each of them
# compiled rackproof's source again and pytest rewrote the plugin's asserts again. Their bytecode
# goes to one cache of this run's instead, outside the checkout, removed at the end.
PYTHONPYCACHEPREFIX="$(mktemp -d "${TMPDIR:-/tmp}/rackproof-pycache.XXXXXX")"
export PYTHONPYCACHEPREFIX
unset PYTHONDONTWRITEBYTECODE
trap 'rm -rf "$PYTHONPYCACHEPREFIX"' EXIT
# the layers (pyproject.toml's [tool.importlinter]): the product apart from the simulator, pytest
# in the plugin alone, probes apart from the checks; no cache written into the checkout
.venv/bin/lint-imports --no-cache
# five workers: three take the modules that bring up simulated racks, the other two the other tests
# (selftests/conftest.py); the log ends with the 25 slowest modules and tests (where the CI's minutes go).
# The selftests assert: pytest rewrites their asserts to say what each side was (pytest.ini's
# --assert=plain is the suite's, whose checks never assert)
.venv/bin/python -m pytest selftests -q -p no:cacheprovider --assert=rewrite -n 5 --dist loadscope --durations=25 "$@"
