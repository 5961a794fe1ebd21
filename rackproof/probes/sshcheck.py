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
from rackproof.probes.probe import Probe

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
NO_ANSWER = "no answer within the time limit (sshd accepted the connection and never answered: hung or overloaded)"
TIMEOUT_EXIT = 124   # `timeout`'s status for a command it ended: neither ssh (255) nor hostname exits with it

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
    if exit_status == TIMEOUT_EXIT:
        return NO_ANSWER
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


# judged by its exit status and stderr (classify_ssh_failure), and by the name that answers. The
# classic curve25519 key exchange goes first: the post-quantum hybrid OpenSSH 9 prefers costs the
# client about 0.1 s of CPU per connection (measured: 107 against 14 ms), n*(n-1) times in a mesh;
# keys, names and login are checked the same, and a server without it still gets its own choice.
SSH_HOSTNAME = Probe("ssh to a peer", "passwordless SSH from this node to a peer, and which host answers",
                     "ssh -o BatchMode=yes -o ConnectTimeout={seconds} -o KexAlgorithms=^curve25519-sha256 "
                     "{peer} hostname",
                     seen_on=("Debian 12",),
                     unseen="no capture of a Jetson AGX Thor or a DGX Spark was found; OpenSSH's messages are its own"
                            " (others' in ssh_batchmode_failure_messages_catalogue.txt)")


@dataclass(frozen=True)
class SshAttempt:
    """One peer's `ssh PEER hostname` in a fan-out: as if run alone."""
    peer: str
    exit_status: int
    stdout: str
    stderr: str


_ROW = "### rackproof-peer "
_NUMBER = re.compile(r"[0-9]{1,9}")
_ERR = "### rackproof-stderr "


def parse_fanout(text: str, peers: list[str]) -> dict[str, SshAttempt]:
    """peer -> its attempt, from SSH_FANOUT's rows: `### rackproof-peer K STATUS`, what ssh
    printed, `### rackproof-stderr K`, what it printed on stderr (K: the peer's place in
    `peers`; each part ends with a newline the fan-out added)."""
    rows: dict[int, list] = {}
    current: list | None = None
    for line in text.splitlines(keepends=True):
        if line.startswith(_ROW):
            fields = line[len(_ROW):].split()
            if len(fields) != 2 or not all(_NUMBER.fullmatch(f) for f in fields) or int(fields[0]) >= len(peers):
                raise ParseError("ssh fan-out", f"a row header that is not 'PEER-INDEX EXIT-STATUS': {line.strip()!r}",
                                 text)
            current = rows[int(fields[0])] = [int(fields[1]), [], None]
        elif line.startswith(_ERR) and current is not None and current[2] is None:
            current[2] = []
        elif current is not None:
            (current[1] if current[2] is None else current[2]).append(line)
        elif line.strip():
            raise ParseError("ssh fan-out", "output before the first peer's row", text)
    missing = [peer for k, peer in enumerate(peers) if k not in rows or rows[k][2] is None]
    if missing:
        raise ParseError("ssh fan-out", f"no whole row for {', '.join(missing)} (the fan-out did not finish)", text)
    return {peer: SshAttempt(peer, rows[k][0], "".join(rows[k][1])[:-1], "".join(rows[k][2])[:-1])
            for k, peer in enumerate(peers)}


# Every peer's SSH_HOSTNAME, `parallel` at a time (xargs -P), each bounded by `timeout` (a hung
# sshd accepts TCP and never answers: ConnectTimeout does not end that). Each attempt's output
# goes to files named by the peer's place in the list; the rows are printed in list order.
SSH_FANOUT = Probe(
    "ssh to every peer", "passwordless SSH from this node to all its peers, several at once, and which host answers",
    't=$(mktemp -d) || exit 1; k=0; for p in {peers}; do printf "%s\\0%s\\0" "$k" "$p"; k=$((k+1)); done | '
    "xargs -0 -n 2 -P {parallel} sh -c 'timeout -k 1 \"$1\" ssh -o BatchMode=yes -o ConnectTimeout=\"$2\" -o KexAlgorithms=^curve25519-sha256 \"$4\" "
    "hostname >\"$0/$3.out\" 2>\"$0/$3.err\" </dev/null; echo $? >\"$0/$3.rc\"' \"$t\" {limit} {seconds}; "
    'k=0; for p in {peers}; do echo "### rackproof-peer $k $(cat "$t/$k.rc" 2>/dev/null)"; cat "$t/$k.out" 2>/dev/null; '
    'echo; echo "### rackproof-stderr $k"; cat "$t/$k.err" 2>/dev/null; echo; k=$((k+1)); done; rm -rf "$t"',
    parse_fanout, parser_takes=("peers",), seen_on=("Debian 12",),
    unseen="the probe's own rows around ssh's answers: seen only on the simulated rack")


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
    if len(fields) != 4 or not all(f.isascii() and f.isdigit() and len(f) <= 5 for f in fields[1::2]):
        raise ParseError("SSH_CONNECTION", "expected 'CLIENT_IP CLIENT_PORT SERVER_IP SERVER_PORT'", text)
    try:
        client, server = (str(ipaddress.ip_address(a)) for a in fields[0::2])
    except ValueError:
        raise ParseError("SSH_CONNECTION", "an end is not an IP address", text) from None
    return SshConnection(client, server)


SSH_CONNECTION = Probe("$SSH_CONNECTION", "the two ends of the controller's SSH connection (the management path)",
                       'echo "$SSH_CONNECTION"', parse_ssh_connection,
                       seen_on=("RHEL", "Debian 12"),
                       unseen="no capture of a Jetson AGX Thor or a DGX Spark was found")


def parse_offered_methods(text: str) -> tuple[str, ...]:
    """The authentication methods sshd offers, from the refusal a client gets when it has
    none of them: `nvidia@10.10.0.11: Permission denied (publickey,password).`"""
    match = re.search(r"Permission denied \(([a-z0-9@.,-]+)\)\.", text)
    if not match:
        raise ParseError("ssh", "no 'Permission denied (METHODS).' line: sshd was not reached", text)
    return tuple(match[1].split(","))


def sshd_answered(text: str) -> bool:
    """Whether ssh's output is sshd's refusal listing its methods (sshd was reached)."""
    try:
        parse_offered_methods(text)
    except ParseError:
        return False
    return True


# No key and BatchMode: nothing is ever typed or sent, and sshd's refusal lists the methods it
# would take; the server's host key is not what is checked here, so it is not recorded
OFFERED_METHODS = Probe(
    "ssh methods", "which login methods sshd offers on an address (password login must be off)",
    "ssh -o BatchMode=yes -o PubkeyAuthentication=no -o PreferredAuthentications=password,keyboard-interactive "
    "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout={seconds} "
    "{address} true 2>&1", parse_offered_methods, ok_exit=(255,), seen_on=("OpenSSH client", "Debian 12"),
    unseen="no capture of a Jetson AGX Thor or a DGX Spark was found")
