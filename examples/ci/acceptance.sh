#!/usr/bin/env bash
# One unattended acceptance run, as the CI templates beside this file call it: the step's checks,
# the report folder, its signed bundle, and the run's exit status (so that the job fails on
# anything but ACCEPTED: `rackproof --help` and docs/ci.md list the statuses).
#
# Settings, from the environment:
#   RACKPROOF_INVENTORY  cluster.toml (a --replay in the arguments may stand for it)
#   RACKPROOF_STEP       the build step to check (default: the finished cluster)
#   RACKPROOF_OUT        this run's folder: report.html, results.json, junit.xml, bundle.tar
#                        (default $RACKPROOF_REPORTS/ci-<time>)
#   RACKPROOF_REPORTS    the folder each run's folder is made in when RACKPROOF_OUT is not given
#                        (default reports in the checkout; the systemd unit's account may not write there)
#   RACKPROOF_HISTORY    the run history (SQLite) the run is added to and compared with: outside the
#                        checkout, which a CI job starts clean (else drift, which needs three earlier
#                        runs, never shows); default [history] path of the inventory, else reports/history.sqlite
#   RACKPROOF_KEY        the SSH private key that signs the bundle (default ~/.ssh/id_ed25519)
#   RACKPROOF_TICKET, RACKPROOF_OPERATOR   the change-control ticket and who ran it
#   RACKPROOF_ARCHIVE    a folder bundle.tar and junit.xml are also copied into (the systemd timer's upload)
#   RACKPROOF_BIN        where pytest and rackproof are (default: the checkout's .venv/bin)
# Further arguments go to pytest.
set -u
home=$(cd "$(dirname "$0")/../.." && pwd)
cd "$home"
bin=${RACKPROOF_BIN:-$home/.venv/bin}
out=${RACKPROOF_OUT:-${RACKPROOF_REPORTS:-reports}/ci-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 2
args=(--html="$out/report.html" --junitxml="$out/junit.xml")
[ -n "${RACKPROOF_INVENTORY:-}" ] && args+=(--inventory="$RACKPROOF_INVENTORY")
[ -n "${RACKPROOF_STEP:-}" ] && args+=(--step "$RACKPROOF_STEP")
[ -n "${RACKPROOF_HISTORY:-}" ] && args+=(--history="$RACKPROOF_HISTORY")
[ -n "${RACKPROOF_TICKET:-}" ] && args+=(--ticket "$RACKPROOF_TICKET")
[ -n "${RACKPROOF_OPERATOR:-}" ] && args+=(--operator "$RACKPROOF_OPERATOR")
"$bin/pytest" "${args[@]}" "$@"
status=$?
if [ ! -f "$out/results.json" ]; then
    echo "acceptance: pytest exited $status before writing a report: nothing to bundle" >&2
    exit "$status"
fi
# a run whose bundle cannot be made has nothing to attach to the ticket: the job fails even if ACCEPTED
if ! "$bin/rackproof" bundle "$out" --key "${RACKPROOF_KEY:-$HOME/.ssh/id_ed25519}"; then
    [ "$status" -eq 0 ] && status=2
fi
if [ -n "${RACKPROOF_ARCHIVE:-}" ]; then
    archive="$RACKPROOF_ARCHIVE/$(basename "$out")"
    mkdir -p "$archive" && cp "$out/junit.xml" "$archive/" && { [ ! -f "$out/bundle.tar" ] || cp "$out/bundle.tar" "$archive/"; } \
        || { echo "acceptance: could not copy the bundle into $archive" >&2; [ "$status" -eq 0 ] && status=2; }
fi
exit "$status"
