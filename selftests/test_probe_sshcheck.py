"""rackproof.probes.sshcheck against OpenSSH client messages.

ssh_batchmode_failure_messages_catalogue.txt: verbatim messages from public fixtures, one block
per failure under a "# ----" heading. ssh_local_openssh9.2_*.txt: stderr of `ssh -o BatchMode=yes
... true` (OpenSSH 9.2p1) against a throwaway sshd on 127.0.0.1:2222 in a private network
namespace with no route out (all exited 255). ssh writes CRLF to stderr here: kept as captured.
ssh_offered_methods_sim_openssh9.2_publickey_only.txt: the refusal the password-login probe
gets on the simulated thor-1 from its own sshd on 10.10.0.11 (keys only).
fanout_ssh_*.txt: SSH_FANOUT's answer on the simulated thor5 (OpenSSH 9.2p1 on both ends, run by
the suite with --record): thor-1 to its four peers, all fine; thor-2 to its peers with thor-2's
key removed from thor-4's authorized_keys.
"""

from pathlib import Path

import pytest

from rackproof.probes import ParseError, sshcheck
from rackproof.probes.sshcheck import (
    SSH_FANOUT, SshAttempt, SshConnection, classify_ssh_failure, parse_fanout, parse_offered_methods, sshd_answered,
    parse_ssh_connection)
from rackproof.nodes.remote import LocalTransport

SAMPLES = Path(__file__).parent / "samples"


def catalogue_blocks():
    """heading -> message lines of the catalogue."""
    blocks, heading = {}, None
    for line in (SAMPLES / "ssh_batchmode_failure_messages_catalogue.txt").read_text().splitlines():
        if line.startswith("# ----"):
            heading = line.removeprefix("# ----").strip()
            blocks[heading] = ""
        elif heading and not line.startswith("#"):
            blocks[heading] += line + "\n"
    return blocks


def test_catalogue():
    causes = {heading: classify_ssh_failure(255, text) for heading, text in catalogue_blocks().items()}
    assert causes == {
        "unknown host key with StrictHostKeyChecking=yes / BatchMode=yes": sshcheck.HOST_KEY_UNKNOWN,
        "changed host key": sshcheck.HOST_KEY_CHANGED,
        "key not accepted (BatchMode=yes means no password prompt)": sshcheck.KEY_NOT_AUTHORISED,
        "TCP timeout (Linux)": sshcheck.TIMED_OUT,
        "TCP timeout (macOS wording)": sshcheck.TIMED_OUT,
        "refused": sshcheck.CONNECTION_REFUSED,
        "name resolution": sshcheck.NAME_NOT_RESOLVED,
        # not an error: alone it leaves ssh's failure unexplained
        "first connection with accept-new / StrictHostKeyChecking=no (goes to stderr, not an error)":
            "ssh failed without a message",
    }


@pytest.mark.parametrize("name, cause", [
    ("changed_host_key", sshcheck.HOST_KEY_CHANGED),
    ("unknown_host_key_strict", sshcheck.HOST_KEY_UNKNOWN),
    ("permission_denied_publickey", sshcheck.KEY_NOT_AUTHORISED),
    ("connection_refused", sshcheck.CONNECTION_REFUSED),
    ("network_unreachable", sshcheck.NETWORK_UNREACHABLE),
    ("name_not_resolved", sshcheck.NAME_NOT_RESOLVED),
])
def test_local_captures(name, cause):
    stderr = (SAMPLES / f"ssh_local_openssh9.2_{name}.txt").read_bytes().decode()
    assert "\r\n" in stderr
    assert classify_ssh_failure(255, stderr) == cause


def test_not_an_ssh_failure():
    added = "Warning: Permanently added 'thor-2' (ED25519) to the list of known hosts.\n"
    assert classify_ssh_failure(0, added) == sshcheck.OK
    assert classify_ssh_failure(1, "Permission denied\n") == "logged in; the remote command failed with exit status 1"


def test_unknown_failure_quotes_ssh():
    message = "kex_exchange_identification: banner line contains invalid characters"
    stderr = f"Warning: Permanently added 'x' (ED25519) to the list of known hosts.\r\n{message}\r\n"
    assert classify_ssh_failure(255, stderr) == f"ssh failed: {message}"


# ssh_connection_sim_spark2_openssh9.2.txt: `echo "$SSH_CONNECTION"` over OpenSSH 9.2p1 to a
# node of the simulated spark2 pair (the controller on the house network)

def test_ssh_connection_names_both_ends():
    text = (SAMPLES / "ssh_connection_sim_spark2_openssh9.2.txt").read_text()
    assert parse_ssh_connection(text) == SshConnection("192.168.77.1", "192.168.77.12")
    assert parse_ssh_connection("fd00::1 51000 fd00::12 22\n") == SshConnection("fd00::1", "fd00::12")


def test_no_ssh_connection_is_none():
    assert parse_ssh_connection("\n") is None


@pytest.mark.parametrize("text", ["192.168.77.1 39414 192.168.77.12\n", "thor-1 39414 192.168.77.12 22\n",
                                  "192.168.77.1 x 192.168.77.12 22\n", "192.168.77.1 1234567 192.168.77.12 22\n"])
def test_ssh_connection_unreadable(text):
    with pytest.raises(ParseError):
        parse_ssh_connection(text)


def test_the_methods_sshd_offers():
    text = (SAMPLES / "ssh_offered_methods_sim_openssh9.2_publickey_only.txt").read_text()
    assert parse_offered_methods(text) == ("publickey",)
    assert parse_offered_methods("nvidia@10.10.0.11: Permission denied (publickey,password).\n") == (
        "publickey", "password")


def test_no_refusal_means_sshd_was_not_reached():
    with pytest.raises(ParseError):
        parse_offered_methods("ssh: connect to host 10.10.0.11 port 22: Connection refused\n")
    assert not sshd_answered("Connection timed out during banner exchange\nConnection to 10.10.0.17 port 22 timed out\n")
    assert sshd_answered("nvidia@10.10.0.11: Permission denied (publickey,password).\n")


def test_a_fan_out_gives_each_peer_its_own_row():
    rows = parse_fanout((SAMPLES / "fanout_ssh_thor2_key_missing_on_thor4.txt").read_text(),
                        ["thor-3", "thor-4", "thor-5", "thor-1"])
    assert rows["thor-3"] == SshAttempt("thor-3", 0, "thor-3\n", "")
    assert rows["thor-4"] == SshAttempt("thor-4", 255, "", "nvidia@thor-4: Permission denied (publickey).\n")
    assert classify_ssh_failure(rows["thor-4"].exit_status, rows["thor-4"].stderr) == sshcheck.KEY_NOT_AUTHORISED
    healthy = parse_fanout((SAMPLES / "fanout_ssh_thor1_healthy.txt").read_text(), ["thor-2", "thor-3", "thor-4", "thor-5"])
    assert {peer: (row.exit_status, row.stdout) for peer, row in healthy.items()} == {
        f"thor-{k}": (0, f"thor-{k}\n") for k in (2, 3, 4, 5)}


@pytest.mark.parametrize("text, reason", [
    ("", "no whole row for thor-2"),
    ("### rackproof-peer 0 0\nthor-2\n", "no whole row for thor-2"),
    ("### rackproof-peer 0 \nthor-2\n### rackproof-stderr 0\n\n", "row header"),
    ("### rackproof-peer 7 0\n", "row header"),
    ("garbage\n### rackproof-peer 0 0\n", "before the first peer"),
])
def test_a_fan_out_that_did_not_finish_is_a_parse_error(text, reason):
    with pytest.raises(ParseError, match=reason):
        parse_fanout(text, ["thor-2"])


def test_a_peer_that_never_answers_is_ended_and_said_so(tmp_path):
    """The fan-out's own shell, run here with an `ssh` that hangs for one peer and answers for the
    other: the hung one ends at the limit with timeout's status, the other is unaffected."""
    fake = tmp_path / "ssh"
    fake.write_text('#!/bin/sh\nfor a; do last=$a; prev=$peer; peer=$a; done\n'
                    'case "$prev" in hung) sleep 30;; esac; echo "$prev"\n')
    fake.chmod(0o755)
    command = SSH_FANOUT.command(peers=["hung", "fine"], parallel=2, limit="1", seconds="5")
    result = LocalTransport("thor-1").execute(f"PATH={tmp_path}:$PATH; {command}", 20)
    rows = parse_fanout(result.stdout, ["hung", "fine"])
    assert rows["hung"].exit_status == sshcheck.TIMEOUT_EXIT and rows["fine"] == SshAttempt("fine", 0, "fine\n", "")
    assert classify_ssh_failure(rows["hung"].exit_status, rows["hung"].stderr) == sshcheck.NO_ANSWER
