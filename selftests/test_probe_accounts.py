"""rackproof.probes.accounts against getent_passwd_local_debian12_*.txt (`getent passwd root`,
`getent passwd munge` on the dev machine, glibc 2.36) and ps_eo_user_pid_comm_sim_thor3_holder_job.txt
(`ps -eo user:32=,pid=,comm=` on the simulated thor-3, procps-ng 4.0.2, with mira's job running)."""

from pathlib import Path

import pytest

from rackproof.probes import ParseError
from rackproof.probes.accounts import parse_passwd, parse_processes

SAMPLES = Path(__file__).parent / "samples"


def test_an_account():
    account = parse_passwd((SAMPLES / "getent_passwd_local_debian12_munge.txt").read_text())
    assert (account.login, account.uid, account.home) == ("munge", 104, "/nonexistent")


def test_no_account():
    assert parse_passwd("") is None


def test_whose_processes():
    rows = parse_processes((SAMPLES / "ps_eo_user_pid_comm_sim_thor3_holder_job.txt").read_text())
    assert ("mira", "sleep") in {(p.user, p.command) for p in rows}
    assert {p.user for p in rows} == {"root", "munge", "mira", "nvidia"}


@pytest.mark.parametrize("parse, text", [(parse_passwd, "root:x:0:0\n"), (parse_passwd, "a:x:b:0::/h:/s\n"),
                                         (parse_processes, "root\n"), (parse_processes, "root pid sshd\n")])
def test_unreadable(parse, text):
    with pytest.raises(ParseError):
        parse(text)


# --- real outputs of other machines (samples/SOURCES.md) ---

def test_a_login_useradd_made_on_ubuntu_24_04():
    """useradd without -m on an Ubuntu 24.04 VM: the entry names /home/testuser2 (which it did not
    create) and the default shell /bin/sh; the empty GECOS field is read as a field."""
    account = parse_passwd((SAMPLES / "getent_passwd_ubuntu24.04_useradd_testuser2.txt").read_text())
    assert (account.login, account.uid, account.home) == ("testuser2", 1000, "/home/testuser2")


def test_root_on_a_course_server():
    account = parse_passwd((SAMPLES / "getent_passwd_root_serveur_course.txt").read_text())
    assert (account.login, account.uid, account.home) == ("root", 0, "/root")


def without_header(name: str) -> str:
    """`ps -eo user,pid,comm` as others ran it: with the header our `user:32=,pid=,comm=` leaves out."""
    header, _, rows = (SAMPLES / name).read_text().partition("\n")
    assert header.split() == ["USER", "PID", "COMMAND"]
    return rows


def test_whose_processes_in_a_kubernetes_pod():
    rows = parse_processes(without_header("ps_eo_user_pid_comm_kubernetes_pod_with_header.txt"))
    assert [(p.user, p.pid, p.command) for p in rows] == [
        ("node", 1, "bun"), ("node", 58, "Xvfb"), ("node", 62, "openbox"), ("node", 64, "tint2"),
        ("node", 65, "x11vnc"), ("root", 109, "ps")]


def test_a_rhel_hosts_first_processes_with_a_command_cut_to_15_characters():
    rows = parse_processes(without_header("ps_eo_user_pid_comm_rhel_lab_head4_with_header.txt"))
    assert [(p.user, p.pid, p.command) for p in rows] == [
        ("root", 1, "systemd"), ("root", 2, "kthreadd"), ("root", 3, "pool_workqueue_")]


def test_the_header_is_no_process():
    """The header line is why the probe asks `user:32=,pid=,comm=`: read as a row it is refused."""
    with pytest.raises(ParseError):
        parse_processes((SAMPLES / "ps_eo_user_pid_comm_kubernetes_pod_with_header.txt").read_text())
