"""A real Slurm on the simulated rack (the chapter's step 9): Debian's munged on every node,
slurmctld on the controller the profile names, slurmd on every node, started in each node's
namespaces (they end with the node). Only the configuration is the simulator's: no cgroups
in a namespace, so processes are tracked by /proc (proctrack/linuxproc) and tasks are not
bound (task/none); one CPU per node is declared, so `--exclusive` means the whole node.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
from pathlib import Path

from .profiles import Profile
from .util import SimError, wait_until, write

SLURM_PORTS = (6817, 6818)     # slurmctld, slurmd (Slurm's defaults)


def tools_missing() -> list[str]:
    return [tool for tool in ("munged", "slurmctld", "slurmd", "srun") if shutil.which(tool) is None]


def conf(p: Profile) -> str:
    sharing = p.sharing
    ctl = p.node(sharing.slurm_controller)
    lines = [
        f"# slurm.conf of the simulated rack ({p.name}); the controller on {ctl.name}",
        f"ClusterName={p.cluster_name}",
        f"SlurmctldHost={ctl.name}({ctl.ip})",
        "SlurmUser=root",
        f"SlurmctldPort={SLURM_PORTS[0]}",
        f"SlurmdPort={SLURM_PORTS[1]}",
        "AuthType=auth/munge",
        "StateSaveLocation=/run/slurmctld",
        "SlurmdSpoolDir=/run/slurmd",
        "SlurmctldPidFile=/run/slurmctld.pid",
        "SlurmdPidFile=/run/slurmd.pid",
        "SlurmctldLogFile=/var/log/slurmctld.log",
        "SlurmdLogFile=/var/log/slurmd.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "SwitchType=switch/none",
        "MpiDefault=none",
        "ReturnToService=2",
        "SlurmdParameters=config_overrides",
        "SchedulerType=sched/backfill",
        "SelectType=select/linear",
    ]
    lines += [f"NodeName={n.name} NodeAddr={n.ip} CPUs=1 State=UNKNOWN" for n in p.nodes]
    lines.append(f"PartitionName={sharing.partition} Nodes=ALL Default=YES MaxTime={sharing.max_time_hours}:00:00 State=UP")
    return "\n".join(lines) + "\n"


def write_files(p: Profile, node_dir: Path, key: bytes) -> None:
    """slurm.conf and the rack's munge key into the node's /etc, before its overlay is mounted."""
    munge = pwd.getpwnam("munge")
    up = node_dir / "etc.upper"
    write(up / "slurm" / "slurm.conf", conf(p), 0o644, 0, 0)
    # slurmd loads a cgroup plugin even when nothing uses it; autodetection finds no cgroup
    # file system in a network namespace's /sys, and v1 loads without one
    write(up / "slurm" / "cgroup.conf", "CgroupPlugin=cgroup/v1\n", 0o644, 0, 0)
    (up / "munge").mkdir(mode=0o700, exist_ok=True)
    os.chown(up / "munge", munge.pw_uid, munge.pw_gid)
    key_path = up / "munge" / "munge.key"
    key_path.write_bytes(key)
    os.chown(key_path, munge.pw_uid, munge.pw_gid)
    os.chmod(key_path, 0o400)


def new_key() -> bytes:
    return secrets.token_bytes(128)


def spawn_munged(n) -> int:
    """munged in the foreground as the munge user, with the key in the node's /etc/munge."""
    return n.spawn(["setpriv", "--reuid=munge", "--regid=munge", "--init-groups", "munged", "--foreground",
                    "--seed-file=/run/munge/munged.seed"], n.dir / "log" / "munged.log")


def wait_munged(n) -> None:
    wait_until(f"munged on {n.spec.name}", lambda: n.sh("test -S /run/munge/munge.socket.2", check=False)
               .returncode == 0, 10, 0.02)


def start(p: Profile, nodes: dict, record: dict) -> None:
    """munged everywhere, then slurmctld and the slurmds; returns when the controller answers
    and every node has registered."""
    missing = tools_missing()
    if missing:
        raise SimError(f"{', '.join(missing)} not installed: run scripts/setup.sh (Debian's munge, slurmctld, slurmd)")
    ctl = p.sharing.slurm_controller
    for n in nodes.values():
        n.sh("mkdir -p /run/munge /var/log/munge /run/slurmd /run/slurmctld /var/lib/munge-seed && "
             "chown munge:munge /run/munge /var/log/munge && chmod 755 /run/munge")
        record["nodes"][n.spec.name]["munged"] = spawn_munged(n)
    for n in nodes.values():
        wait_munged(n)
    record["nodes"][ctl]["slurmctld"] = nodes[ctl].spawn(["slurmctld", "-D"], nodes[ctl].dir / "log" / "slurmctld.out")
    for n in nodes.values():
        record["nodes"][n.spec.name]["slurmd"] = n.spawn(["slurmd", "-D"], n.dir / "log" / "slurmd.out")
    names = {n.spec.name for n in nodes.values()}

    def registered():
        out = nodes[ctl].sh("sinfo -h -N -o '%N %T'", check=False)
        states = dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
        return names <= {name for name, state in states.items() if state == "idle"}
    wait_until("every slurmd registered with slurmctld (sinfo: idle)", registered, 15, 0.1)
