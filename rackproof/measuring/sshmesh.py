"""The SSH mesh, measured at once: every node tries all its peers in one command (SSH_FANOUT),
all nodes at the same time; each ordered pair's check judges its own row.

n*(n-1) pairs cost about what the slowest node's fan-out costs, and a peer that does not answer
costs one connect timeout for the whole mesh (every node waits for it at the same time), not one
per pair. Each node tries `fanout` peers at once ([ssh] fanout), starting with the peer after it
in the inventory, so at any moment a peer is tried by about `fanout` nodes: under sshd's
MaxStartups (10 unauthenticated connections before it starts refusing some).

A row that got no answer in time from an sshd that accepted the connection is asked whether the
path drops full-size frames (pathmtu.blocked): there the TCP handshake passes and the key
exchange, whose packets are full-size, stalls. Such a row's check names that black hole, not a
hung sshd.
"""

from __future__ import annotations

from rackproof.measuring import pathmtu
from rackproof.judging.failure import Failure
from rackproof.nodes.host import Host, ProbeFailed
from rackproof.inventory.model import ClusterAtStep
from rackproof.probes.sshcheck import SSH_FANOUT, SSH_HOSTNAME, TIMEOUT_EXIT, SshAttempt
from rackproof.nodes.remote import Evidence, EvidenceLog, NoAnswer, NodeUnreachable, Result
from rackproof.nodes.together import Part, at_once


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


def rows(hosts: dict[str, Host], ssh_names: dict[str, str], pairs: list[tuple[str, str]], seconds: float,
         fanout: int, log: EvidenceLog) -> dict[tuple[str, str], Part[Result]]:
    """Every pair's row of the whole mesh, tried at once: as a Result of `ssh PEER hostname` run
    on the source, with the source's fan-out and the row as evidence (a source that could not be
    reached is each of its pairs' error)."""
    tried_by = tried(hosts, ssh_names, seconds, fanout, log)
    command = {peer: str(SSH_HOSTNAME.command(seconds=f"{seconds:g}", peer=peer)) for peer in ssh_names.values()}
    found = {}
    for source, target in pairs:
        part, peer = tried_by[source], ssh_names[target]
        if part.error is not None:
            found[(source, target)] = Part(None, part.error, part.evidence)
            continue
        row = part.value[peer]
        started = part.evidence[0].started if part.evidence else 0.0
        own = Evidence(source, command[peer], row.exit_status, row.stdout, row.stderr, 0.0, started,
                       note=f"one row of {source}'s fan-out to its {len(part.value)} peers ({fanout} at a time)")
        found[(source, target)] = Part(Result(command[peer], row.exit_status, row.stdout, row.stderr, 0.0), None,
                                       [*part.evidence, own])
    return found


def through_black_holes(found: dict[tuple[str, str], Part[Result]], hosts: dict[str, Host], cluster: ClusterAtStep,
                        log: EvidenceLog) -> dict[tuple[str, str], Part[Result]]:
    """`found`, with each row that got no answer (ssh ended by its time limit) whose path drops
    packets of the MTU turned into the Failure that names the path, the pings as its evidence."""
    out = dict(found)
    for (source, target), part in found.items():
        if part.value is None or part.value.exit_status != TIMEOUT_EXIT or not cluster.node(target).address:
            continue
        with log.captured() as pings:
            try:
                blocked = pathmtu.blocked(hosts[source], cluster.node(target), cluster)
            except (ProbeFailed, NodeUnreachable, NoAnswer):     # not known: the row says what it saw
                continue
        if blocked is not None:
            failure = Failure(f"{source} -> {target}", f"`{part.value.command}` run on {source} got no answer: {target}'s "
                              "sshd accepted the connection, and the key exchange, whose packets are full-size, "
                              "stalled", cause=str(blocked), seen=True)
            out[(source, target)] = Part(None, failure, [*part.evidence, *pings])
    return out
