"""rackproof.probes.sshcheck against OpenSSH client messages.

ssh_batchmode_failure_messages_catalogue.txt: verbatim messages from public fixtures, one block
per failure under a "# ----" heading. ssh_local_openssh9.2_*.txt: stderr of `ssh -o BatchMode=yes
... true` (OpenSSH 9.2p1) against a throwaway sshd on 127.0.0.1:2222 in a private network
namespace with no route out (all exited 255). ssh writes CRLF to stderr here: kept as captured.
ssh_offered_methods_sim_openssh9.2_publickey_only.txt: the refusal the password-login probe
gets on the simulated thor-1 from its own sshd on 10.10.0.11 (keys only).
"""

from pathlib import Path

import pytest

from rackproof.probes import ParseError, sshcheck
from rackproof.probes.sshcheck import SshConnection, classify_ssh_failure, parse_offered_methods, parse_ssh_connection

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
