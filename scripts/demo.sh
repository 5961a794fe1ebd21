#!/usr/bin/env bash
# Sets up (scripts/setup.sh), brings up the simulated five-Thor rack, runs the whole acceptance
# suite against it from the rack's controller namespace, takes the rack down again (also on
# failure or Ctrl-C) and leaves the report under reports/<time>-thor-shelf/. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/rackproof sim run thor5 -- -n 2 --ticket DEMO-1 --operator "$(id -un)" "$@"
