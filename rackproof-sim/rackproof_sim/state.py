"""Where a rack keeps everything it makes: one directory, /run/rackproof-sim/<name>/.

    <root>/<name>/
        rack.json            the record: profile, namespaces, processes, planted faults
        cluster.toml         the generated inventory (what `sim up` prints)
        slices.ics           the shared calendar of step 9 (profiles with slice holders)
        ssh_config           Host thor-1 ... for the controller (bench namespace)
        known_hosts          every node's host key, by name and by address
        agent.key            the agent's access key (mode 600)
        bench/id_ed25519     the controller's key
        lib/                 copies of rackproof_sim and of rackproof.probes the nodes run
        monitor.log          the bond monitor (miimon)
        nodes/<node>/
            model.json       the modelled hardware of the node (what the stand-ins print)
            etc.upper/       the node's own /etc (an overlay over the host's /etc)
            etc.work/
            home/<user>/     the node's /home (its ~/.ssh)
            bin/             the node's /usr/local/bin: stand-ins, thor-tigress-agent
            tmp/             the node's /tmp
            run/             mount point for the node's private /run (tmpfs; /var/log is one too)
            proc/net/bonding/bond0   the bonding view (seen in the node at /run/rackproof/proc/...)
            sshd/            sshd_config, host keys, log
            log/             engine and agent logs

Inside a node, lib/ and the node's own directory appear at these same paths (under its private
/run); the rest of the state (other nodes, keys of the bench, the agent key) does not.
Nothing outside this directory is created or changed, except the network namespaces
(/run/netns/rp-<name>-*), which `down` deletes.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(os.environ.get("RACKPROOF_SIM_ROOT", "/run/rackproof-sim"))
NODE_PROC = "/run/rackproof/proc"   # where a node sees its modelled /proc files (bonding)


def valid_name(name: str) -> bool:
    return bool(name) and len(name) <= 24 and all(c.isalnum() or c in "-_" for c in name) and name[0].isalnum()


class RackState:
    def __init__(self, name: str, root: Path | None = None):
        self.name = name
        self.root = (root or ROOT) / name
        # the rack's files, as the layout above names them
        self.record_path = self.root / "rack.json"
        self.inventory = self.root / "cluster.toml"
        self.ssh_config = self.root / "ssh_config"
        self.known_hosts = self.root / "known_hosts"
        self.agent_key = self.root / "agent.key"
        self.calendar = self.root / "slices.ics"
        self.bench_key = self.root / "bench" / "id_ed25519"
        self.lib = self.root / "lib"
        self.monitor_log = self.root / "monitor.log"

    def node_dir(self, node: str) -> Path:
        return self.root / "nodes" / node

    def model_path(self, node: str) -> Path:
        return self.node_dir(node) / "model.json"

    @property
    def ns_prefix(self) -> str:
        return f"rp-{self.name}-"

    def ns(self, part: str) -> str:
        return f"{self.ns_prefix}{part}"

    # record --------------------------------------------------------------------------------
    def exists(self) -> bool:
        return self.record_path.exists()

    def load(self) -> dict:
        try:
            return json.loads(self.record_path.read_text())
        except FileNotFoundError:
            return {}
        except json.JSONDecodeError:
            return {"corrupt": True}

    def save(self, record: dict) -> None:
        tmp = self.record_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
        os.replace(tmp, self.record_path)

    @contextmanager
    def locked(self):
        """Serialise changes to one rack (fault, heal, down) across processes."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    @contextmanager
    def update(self):
        with self.locked():
            record = self.load()
            yield record
            self.save(record)

    # models --------------------------------------------------------------------------------
    def load_model(self, node: str) -> dict:
        return json.loads(self.model_path(node).read_text())

    def save_model(self, node: str, model: dict) -> None:
        path = self.model_path(node)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(model, indent=1, sort_keys=True))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)


def all_racks(root: Path | None = None) -> list[RackState]:
    base = root or ROOT
    if not base.is_dir():
        return []
    return [RackState(p.name, base) for p in sorted(base.iterdir()) if p.is_dir()]


def now() -> float:
    return time.time()
