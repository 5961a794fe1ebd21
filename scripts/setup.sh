#!/usr/bin/env bash
# Installs what rackproof needs on a Debian machine (run as root) into ./.venv.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

# munge, slurmctld, slurmd, slurm-client: the real Slurm of the simulated thor5 rack (step 9)
packages=(iperf3 openssh-server openssh-client sudo iproute2 iputils-ping procps util-linux curl passwd
          python3 python3-venv python3-pip chromium chromium-driver munge slurmctld slurmd slurm-client)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
# (pip's "Location ... is ignored" lines come from this machine's pip.conf, not from us)
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]' 2> >(grep -v 'is ignored' >&2) >/dev/null
echo "setup: ready ($(.venv/bin/python --version), rackproof $(.venv/bin/python -c 'import rackproof; print(rackproof.__version__)'))"
