"""The SSH mesh, measured at once: every node tries all its peers in one command (SSH_FANOUT),
all nodes at the same time; each ordered pair's check judges its own row.

n*(n-1) pairs cost about what the slowest node's fan-out costs, and a peer that does not answer
costs one connect timeout for the whole mesh (every node waits for it at the same time), not one
per pair. Each node tries `fanout` peers at once ([ssh] fanout), starting with the peer after it
in the inventory, so at any moment a peer is tried by about `fanout` nodes: under sshd's
MaxStartups (10 unauthenticated connections before it starts refusing some).
"""

from __future__ import annotations

from .host import Host
from .probes.sshcheck import SSH_FANOUT, SSH_HOSTNAME, SshAttempt
from .remote import Evidence, EvidenceLog, Result
from .together import Part, at_once


def in_turn(names: list[str], source: str) -> list[str]:
    """The others of `names`, starting with the one after `source` (and around)."""
    k = names.index(source)
    return names[k + 1:] + names[:k]


def tried(hosts: dict[str, Host], ssh_names: dict[str, str], seconds: float, fanout: int,
          log: EvidenceLog) -> dict[str, Part[dict[str, SshAttempt]]]:
    """node -> its attempts to every other node (by SSH name), all nodes at once."""
    names = list(ssh_names)
    limit = 3 * seconds   # connect, key exchange and login: as the single probe is bounded

    def fan_out(node: str) -> dict[str, SshAttempt]:
        peers = [ssh_names[n] for n in in_turn(names, node)]
        rounds = -(-len(peers) // fanout)
        return hosts[node].read(SSH_FANOUT, timeout=limit * rounds + 30, peers=peers, parallel=fanout,
                                limit=f"{limit:g}", seconds=f"{seconds:g}")

    return at_once(names, fan_out, log, workers=len(names))


def attempt(source: Host, part: Part[dict[str, SshAttempt]], peer: str, seconds: float, fanout: int) -> Result:
    """`peer`'s row of the source's fan-out, as a Result of `ssh PEER hostname`: the fan-out's
    evidence and the row's own go to the current test (a source that could not be reached
    raises here, in each of its pairs' checks)."""
    log = source.remote.log
    rows = part.get(log)
    row = rows[peer]
    command = str(SSH_HOSTNAME.command(seconds=f"{seconds:g}", peer=peer))
    started = part.evidence[0].started if part.evidence else 0.0
    log.add(Evidence(source.name, command, row.exit_status, row.stdout, row.stderr, 0.0, started,
                     note=f"one row of {source.name}'s fan-out to its {len(rows)} peers ({fanout} at a time)"))
    return Result(command, row.exit_status, row.stdout, row.stderr, 0.0)
