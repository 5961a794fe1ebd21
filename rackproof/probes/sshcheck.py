"""Why `ssh -o BatchMode=yes HOST true` failed, in a few words a person can act on; and the two
ends of the SSH connection a command came over ($SSH_CONNECTION: the management path).

ssh exits 255 for its own failures; any other status is the remote command's.
BatchMode=yes never prompts, so a missing key shows as "Permission denied", not a
password prompt that hangs the run.
"""

import ipaddress
import re
from dataclasses import dataclass

from . import ParseError
from rackproof.probe import Probe

OK = "no failure"
HOST_KEY_CHANGED = "host key changed (node reinstalled? remove the old key from known_hosts)"
HOST_KEY_UNKNOWN = "host key not in known_hosts (first connection never accepted)"
KEY_NOT_AUTHORISED = "key not authorised (public key missing from authorized_keys, or wrong user)"
KEY_FILE_PERMISSIONS = "private key or ssh config has too open permissions"
NAME_NOT_RESOLVED = "host name does not resolve (/etc/hosts, DNS)"
CONNECTION_REFUSED = "connection refused (sshd not running, or wrong port)"
TIMED_OUT = "connection timed out (node down, wrong address, or filtered)"
NO_ROUTE = "no route to host (node down, or not on this subnet)"
NETWORK_UNREACHABLE = "network unreachable (no address on that subnet here)"
CONNECTION_CLOSED = "connection closed by the server before login (MaxStartups, AllowUsers, host.deny)"

# First match wins: "Host key verification failed." ends both the changed-key and the
# unknown-key messages, so the changed key is looked for first.
_CAUSES = (
    ("REMOTE HOST IDENTIFICATION HAS CHANGED", HOST_KEY_CHANGED),
    ("Host key verification failed", HOST_KEY_UNKNOWN),
    ("host key is known for", HOST_KEY_UNKNOWN),
    ("UNPROTECTED PRIVATE KEY FILE", KEY_FILE_PERMISSIONS),
    ("Bad owner or permissions", KEY_FILE_PERMISSIONS),
    ("Permission denied", KEY_NOT_AUTHORISED),
    ("Too many authentication failures", KEY_NOT_AUTHORISED),
    ("Could not resolve hostname", NAME_NOT_RESOLVED),
    ("Connection refused", CONNECTION_REFUSED),
    ("Connection timed out", TIMED_OUT),
    ("Operation timed out", TIMED_OUT),
    ("No route to host", NO_ROUTE),
    ("Network is unreachable", NETWORK_UNREACHABLE),
    ("Connection closed by", CONNECTION_CLOSED),
    ("Connection reset by", CONNECTION_CLOSED),
)


def classify_ssh_failure(exit_status: int, stderr: str) -> str:
    """A short cause. Unknown ssh failures give ssh's own last message."""
    if exit_status == 0:
        return OK
    if exit_status != 255:
        return f"logged in; the remote command failed with exit status {exit_status}"
    for needle, cause in _CAUSES:
        if needle in stderr:
            return cause
    messages = [line.strip() for line in stderr.splitlines()
                if line.strip() and not line.startswith("Warning: Permanently added")]
    return f"ssh failed: {messages[-1]}" if messages else "ssh failed without a message"


# ssh's own line when the network did not carry it to the peer (not a refusal by sshd or a key)
_PATH_FAILED = re.compile(r"ssh: connect to host (\S{1,255}) port [0-9]{1,5}: "
                          r"(?:No route to host|Connection timed out|Network is unreachable)")


def unreached_host(stderr: str) -> str | None:
    """The host (a name or an address, as ssh was given it) ssh could not reach over the network
    ("ssh: connect to host spark-2 port 22: No route to host"), None when the failure was
    anything else."""
    match = _PATH_FAILED.search(stderr)
    return match[1] if match else None


# judged by its exit status and stderr (classify_ssh_failure), and by the name that answers
SSH_HOSTNAME = Probe("ssh to a peer", "passwordless SSH from this node to a peer, and which host answers",
                     "ssh -o BatchMode=yes -o ConnectTimeout={seconds} {peer} hostname")


@dataclass(frozen=True)
class SshConnection:
    client: str          # the controller's address, as the node sees it
    server: str          # the node's address the controller came in on


def parse_ssh_connection(text: str) -> SshConnection | None:
    """sshd's SSH_CONNECTION, `CLIENT_IP CLIENT_PORT SERVER_IP SERVER_PORT`; None when empty (the
    command did not come over SSH)."""
    fields = text.split()
    if not fields:
        return None
    if len(fields) != 4 or not all(f.isdigit() and len(f) <= 5 for f in fields[1::2]):
        raise ParseError("SSH_CONNECTION", "expected 'CLIENT_IP CLIENT_PORT SERVER_IP SERVER_PORT'", text)
    try:
        client, server = (str(ipaddress.ip_address(a)) for a in fields[0::2])
    except ValueError:
        raise ParseError("SSH_CONNECTION", "an end is not an IP address", text) from None
    return SshConnection(client, server)


SSH_CONNECTION = Probe("$SSH_CONNECTION", "the two ends of the controller's SSH connection (the management path)",
                       'echo "$SSH_CONNECTION"', parse_ssh_connection)


def parse_offered_methods(text: str) -> tuple[str, ...]:
    """The authentication methods sshd offers, from the refusal a client gets when it has
    none of them: `nvidia@10.10.0.11: Permission denied (publickey,password).`"""
    match = re.search(r"Permission denied \(([a-z0-9@.,-]+)\)\.", text)
    if not match:
        raise ParseError("ssh", "no 'Permission denied (METHODS).' line: sshd was not reached", text)
    return tuple(match[1].split(","))


# No key and BatchMode: nothing is ever typed or sent, and sshd's refusal lists the methods it
# would take; the server's host key is not what is checked here, so it is not recorded
OFFERED_METHODS = Probe(
    "ssh methods", "which login methods sshd offers on an address (password login must be off)",
    "ssh -o BatchMode=yes -o PubkeyAuthentication=no -o PreferredAuthentications=password,keyboard-interactive "
    "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout={seconds} "
    "{address} true 2>&1", parse_offered_methods, ok_exit=(255,))
