#!/usr/bin/env bash
# Installs what rackproof needs on a Debian machine (run as root) into ./.venv.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

# munge, slurmctld, slurmd, slurm-client: the real Slurm of the simulated thor5 rack (step 9);
# gcc, libc6-dev: each simulated rack builds its nodes' stand-in tool client (rackproof_sim/standin_client.c);
# systemd for systemd-analyze, which checks examples/ci's units (chromium pulls it in anyway; where
# systemd is not PID 1, installing it starts nothing and the selftests never boot it)
packages=(iperf3 openssh-server openssh-client sudo iproute2 iputils-ping procps util-linux curl passwd
          python3 python3-venv python3-pip chromium chromium-driver munge slurmctld slurmd slurm-client systemd
          gcc libc6-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# lldpd: the simulated rack's LLDP, real frames between its namespaces. The package would start it
# here and announce this machine on its own network: it is installed neither started nor enabled.
if ! dpkg-query -W -f='${Status}' lldpd 2>/dev/null | grep -q "install ok installed"; then
    echo "setup: installing lldpd (not started on this machine)"
    own_policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        own_policy=1
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lldpd >/dev/null
    if [ -n "$own_policy" ]; then
        rm -f /usr/sbin/policy-rc.d
        trap - EXIT
    fi
    if [ -d /run/systemd/system ]; then
        systemctl disable --now lldpd >/dev/null 2>&1 || true
    fi
fi
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
# (pip's "Location ... is ignored" lines come from this machine's pip.conf, not from us)
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]' 2> >(grep -v 'is ignored' >&2) >/dev/null
# the simulated rack (`rackproof sim`, the selftests' racks) is a distribution of its own: a site's
# controller installs rackproof alone
.venv/bin/pip install -q --disable-pip-version-check -e ./rackproof-sim 2> >(grep -v 'is ignored' >&2) >/dev/null
# sparkrun (the Spark clusters' launcher, run on the simulated spark2's head node) needs Python
# 3.12, which Debian 12 does not package: found on PATH or under pyenv, never assumed. Its
# environment goes where the simulated nodes see it (they have /tmp, /home and /run of their own).
sparkrun_venv=/opt/rackproof/sparkrun
if [ ! -x "$sparkrun_venv/bin/sparkrun" ]; then
    py312=""
    # a pyenv shim on PATH is there even when 3.12 is not selected: each candidate must run
    for candidate in "$(command -v python3.12 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12; do
        if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
            py312=$candidate
            break
        fi
    done
    if [ -z "$py312" ]; then
        echo "setup: sparkrun needs Python 3.12 and none was found (not on PATH, not under pyenv):" \
             "install it (pyenv install 3.12) and run this again" >&2
        exit 1
    fi
    mkdir -p "$(dirname "$sparkrun_venv")"
    "$py312" -m venv "$sparkrun_venv"
    "$sparkrun_venv/bin/pip" install -q --disable-pip-version-check 'sparkrun==0.4.2' 2> >(grep -v 'is ignored' >&2) >/dev/null
fi
# the controller's lock folder: the runs of every operator in group rackproof on one cluster
# are kept apart through it (rackproof/nodes/runfolder.py); this machine is a shared controller too
getent group rackproof >/dev/null || groupadd --system rackproof
install -d -o root -g root -m 0755 /var/lib/rackproof
install -d -o root -g rackproof -m 2770 /var/lib/rackproof/locks
# `--bench`: what bench/scale.py adds: matplotlib for its plot, and its peer pytest-testinfra
# (with paramiko) in an environment of its own, so that its pytest plugin never loads into the suite
if [ "${1:-}" = "--bench" ]; then
    .venv/bin/pip install -q --disable-pip-version-check -e '.[test,bench]' 2> >(grep -v 'is ignored' >&2) >/dev/null
    peers_venv=/opt/rackproof/bench-peers
    if [ ! -x "$peers_venv/bin/pytest" ]; then
        mkdir -p "$(dirname "$peers_venv")"
        python3 -m venv "$peers_venv"
        "$peers_venv/bin/pip" install -q --disable-pip-version-check 'pytest-testinfra>=10' 'paramiko>=3' \
            2> >(grep -v 'is ignored' >&2) >/dev/null
    fi
fi
echo "setup: ready ($(.venv/bin/python --version), rackproof $(.venv/bin/python -c 'import rackproof; print(rackproof.__version__)'), $(SPARKRUN_NO_TELEMETRY=1 "$sparkrun_venv/bin/sparkrun" --version) on $("$sparkrun_venv/bin/python" --version))"
