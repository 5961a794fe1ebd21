"""rackproof.probes.sshcheck against OpenSSH client messages.

ssh_batchmode_failure_messages_catalogue.txt: verbatim messages from public fixtures, one block
per failure under a "# ----" heading. ssh_local_openssh9.2_*.txt: stderr of `ssh -o BatchMode=yes
... true` (OpenSSH 9.2p1) against a throwaway sshd on 127.0.0.1:2222 in a private network
namespace with no route out (all exited 255). ssh writes CRLF to stderr here: kept as captured.
"""

from pathlib import Path

import pytest

from rackproof.probes import sshcheck
from rackproof.probes.sshcheck import classify_ssh_failure

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
