#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the acceptance suite on a recording of a healthy
# five-Thor shelf, writing the HTML report under reports/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest --replay examples/replay/thor5-healthy --ticket DEMO-1 --operator "$(id -un)" "$@"
