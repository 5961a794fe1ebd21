"""`rackproof sudoers`: the sudoers.d file that grants the suite's login exactly the commands the
suite runs as root (rackproof.nodes.prerequisites.root_commands) with the inventory's values: each
lane, each slice holder, the bond; a tool at the path each node's survey found it (sudo
compares paths). A wildcard stands only where no fixed list exists (the files of a folder,
the patterns of interfaces found at run time) and is said so beside it. Checked with
`visudo -cf` where visudo is."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from rackproof.inventory.model import FINISHED, ClusterAtStep, Inventory
from rackproof.nodes.prerequisites import LIST, Glob, NodePrerequisites, sudoers_line
from rackproof.probes.safetext import one_line

VISUDO_SECONDS = 30


def render(inventory: Inventory, surveyed: dict[str, NodePrerequisites], disruptive: bool) -> str:
    """The file, from every surveyed node's root commands and tool paths (a tool on no node's
    PATH gets a comment instead of a line)."""
    cluster = ClusterAtStep(inventory, FINISHED)
    login = inventory.cluster.user
    lines = [f"# /etc/sudoers.d/rackproof for cluster {inventory.cluster.name}, written by `rackproof sudoers`:",
             f"# the commands the rackproof suite runs as root as {login}, and nothing else.",
             "# Check it with visudo -cf FILE; install it on every node:",
             "#   sudo install -m 0440 -o root -g root FILE /etc/sudoers.d/rackproof"]
    if not disruptive:
        lines.append("# (without the --allow-disruptive checks' ip link set lines: write it with --allow-disruptive for those)")
    done: set[str] = set()
    for node in cluster.nodes:
        node_survey = surveyed.get(node.name)
        if node_survey is None or node_survey.survey is None:
            continue
        for root in node_survey.roots:
            if not disruptive and root.probe == "ip link set":
                continue
            found = node_survey.survey.tools.get(root.words[0])
            path = found.path if found and found.group is None else None
            if root.words != LIST and path is None:
                line = f"# {root.words[0]} is not on {node.name}'s PATH: install it, then write this file again"
            else:
                line = sudoers_line(login, root, path or "")
            if line in done:
                continue
            done.add(line)
            why = "required" if root.required else "reads more with it"
            wildcard = " (a wildcard: no fixed list exists)" if any(isinstance(w, Glob) for w in root.words) else ""
            if (heading := f"# {root.probe}: {why}{wildcard}") not in done:
                done.add(heading)
                lines.append(heading)
            lines.append(line)
    return "\n".join(lines) + "\n"


def visudo_problem(text: str) -> str | None:
    """What `visudo -cf` says is wrong with the file; None when it parses (or no visudo is here)."""
    visudo = shutil.which("visudo") or next((p for p in ("/usr/sbin/visudo", "/sbin/visudo") if os.path.exists(p)), None)
    if visudo is None:
        return None
    with tempfile.TemporaryDirectory(prefix="rackproof-sudoers-") as folder:
        path = os.path.join(folder, "rackproof")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, 0o440)
        done = subprocess.run([visudo, "-cf", path], capture_output=True, text=True, timeout=VISUDO_SECONDS,
                              stdin=subprocess.DEVNULL)
    return None if done.returncode == 0 else one_line((done.stderr or done.stdout).strip()) or "visudo refused it"
