"""rackproof.probes.slurm against the real Slurm 22.05.8 and munge 0.5.15 of Debian 12, run
on the simulated thor5 rack (rackproof sim up thor5: slurmctld on thor-1, slurmd on every
node) and captured as they printed:

- slurm_scontrol_ping_sim_22.05.8_up.txt: `scontrol ping` on thor-1;
- slurm_sinfo_sim_22.05.8_healthy.txt, _drained_reason.txt (after `scontrol update
  nodename=thor-4 state=drain reason='fan replaced, burn-in pending'`), and
  _completing_after_failed_launch.txt (thor-5's slurmd killed, then an srun to it):
  `sinfo -h -N -o '%N|%T|%E'`;
- slurm_partition_sim_22.05.8_maxtime_8h.txt: `scontrol show partition -o thor`;
- slurm_srun_sim_22.05.8_*_stderr.txt: what srun printed for a drained node and a dead slurmd;
- unmunge_sim_0.5.15_success_over_ssh.txt: `munge -n | ssh thor-2 unmunge` run on thor-1;
- unmunge_sim_0.5.15_invalid_credential_other_key_over_ssh.txt: `munge -n | ssh thor-1 unmunge
  2>&1` run on thor-3 after `rackproof sim fault thor-3 munge-key-differs` (thor-3's munged
  restarted with another key; unmunge exited 14). Two munged with their own keys on one machine
  printed the same line for a credential of one decoded by the other.
"""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.slurm import (
    MUNGE_TO, SRUN_HOSTNAME, TAKES_JOBS, parse_partition, parse_scontrol_ping, parse_sinfo_nodes, parse_unmunge,
    slurm_time_hours)

SAMPLES = Path(__file__).parent / "samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_the_controller_is_up():
    (controller,) = parse_scontrol_ping(read("slurm_scontrol_ping_sim_22.05.8_up.txt"))
    assert (controller.role, controller.host, controller.up) == ("primary", "thor-1", True)


def test_a_controller_down_is_read_as_down():
    (controller,) = parse_scontrol_ping("Slurmctld(primary) at thor-1 is DOWN\n")
    assert not controller.up


def test_healthy_nodes_take_jobs():
    nodes = parse_sinfo_nodes(read("slurm_sinfo_sim_22.05.8_healthy.txt"))
    assert sorted(nodes) == [f"thor-{i}" for i in range(1, 6)]
    assert all(n.base in TAKES_JOBS and n.responding and n.reason is None for n in nodes.values())


def test_a_drained_node_and_its_reason():
    state = parse_sinfo_nodes(read("slurm_sinfo_sim_22.05.8_drained_reason.txt"))["thor-4"]
    assert (state.base, state.reason) == ("drained", "fan replaced, burn-in pending")
    assert state.base not in TAKES_JOBS


def test_a_node_not_responding_keeps_its_flag():
    state = parse_sinfo_nodes("thor-2|idle*|none\n")["thor-2"]
    assert state.base == "idle" and not state.responding


def test_the_partition_max_time():
    assert parse_partition(read("slurm_partition_sim_22.05.8_maxtime_8h.txt"))["MaxTime"] == "08:00:00"


def test_munge_decoded_on_another_node():
    decoded = parse_unmunge(read("unmunge_sim_0.5.15_success_over_ssh.txt"))
    assert decoded.ok and decoded.encode_host == "thor-1"


def test_an_expired_credential_is_not_ok():
    decoded = parse_unmunge("STATUS:          Expired credential (15)\n")
    assert not decoded.ok and decoded.error == "Expired credential"


def test_a_credential_made_with_another_key_is_unmunges_error_alone():
    decoded = parse_unmunge(read("unmunge_sim_0.5.15_invalid_credential_other_key_over_ssh.txt"))
    assert (decoded.ok, decoded.status, decoded.error, decoded.encode_host) == \
        (False, "Invalid credential", "Invalid credential", None)


def test_an_ssh_warning_before_unmunges_error_is_passed_over():
    text = "Warning: Permanently added 'thor-1' (ED25519) to the list of known hosts.\r\n" \
           "unmunge: Error: Invalid credential\n"
    assert parse_unmunge(text).error == "Invalid credential"


def test_the_commands():
    assert SRUN_HOSTNAME.command(seconds=10, node="thor-3") == \
        "srun --immediate=10 -N1 --exclusive -w thor-3 -t 1 hostname"
    assert MUNGE_TO.command(seconds="5", peer="thor-1") == \
        "munge -n | ssh -o BatchMode=yes -o ConnectTimeout=5 thor-1 unmunge 2>&1"


@pytest.mark.parametrize("parse, text", [
    (parse_scontrol_ping, ""), (parse_scontrol_ping, "Slurmctld is UP\n"),
    (parse_sinfo_nodes, "thor-1 idle none\n"), (parse_sinfo_nodes, "|idle|none\n"),
    (parse_partition, "MaxTime=1:00:00\n"), (parse_partition, "PartitionName=a\nPartitionName=b\n"),
    (parse_unmunge, read("slurm_srun_sim_22.05.8_slurmd_down_stderr.txt")),
])
def test_unreadable(parse, text):
    with pytest.raises(ParseError):
        parse(text)


@pytest.mark.parametrize("value, hours", [("08:00:00", 8), ("1-00:00:00", 24), ("00:30:00", 0.5),
                                          ("UNLIMITED", None), ("2-12:00:00", 60)])
def test_time_limits(value, hours):
    assert slurm_time_hours(value) == hours


def test_a_max_time_that_is_not_a_limit_is_unreadable():
    with pytest.raises(ParseError):
        parse_partition("PartitionName=thor MaxTime=soon\n")
