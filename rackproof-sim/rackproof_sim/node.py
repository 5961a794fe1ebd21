"""One node: a network namespace plus a persistent mount + UTS namespace with its own /etc
(an overlay over the host's), /home, /usr/local/bin (stand-ins), /run, /tmp and /var/log.

The mount + UTS namespace is held by a long-lived `sleep` started with
`ip netns exec NS unshare --mount --uts --propagation private`; everything else enters it with
`nsenter -t PID -m -u -n`. Mounts happen only inside it, and only onto paths that already exist
on the host or that lie inside the rack's state directory.
"""

from __future__ import annotations

import os
import pwd
import shlex
import subprocess
from pathlib import Path

from .profiles import USER, NodeSpec, Profile
from .state import NODE_PROC, RackState
from .util import SimError, run, wait_until, write

SSHD = "/usr/sbin/sshd"
PY = "/usr/bin/python3"     # the system Python: readable by the node's user, stdlib only
# a login's PATH as Ubuntu (JetPack, DGX OS) gives it from /etc/environment: sbin included
LOGIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def host_ids(count: int = 1) -> list[int]:
    """uids (each its own group's gid too) that no account or group on the host uses: the
    login user's first, then the slice holders'."""
    used_uids = {p.pw_uid for p in pwd.getpwall()}
    used_gids = set()
    try:
        for line in Path("/etc/group").read_text().splitlines():
            parts = line.split(":")
            if len(parts) > 2 and parts[2].isdigit():
                used_gids.add(int(parts[2]))
    except OSError:
        pass
    free, uid = [], 1000
    while len(free) < count:
        if uid not in used_uids and uid not in used_gids:
            free.append(uid)
        uid += 1
    return free


def nsenter(pid: int, *cmd: str, pidns: bool = True) -> list[str]:
    """Enter a node (its init's pid). With the PID namespace, nsenter forks: the command is
    nsenter's child (see children())."""
    return ["nsenter", "-t", str(pid), "-m", "-u", "-n", *(["-p"] if pidns else []), "--", *cmd]


def as_user(pid: int, uid: int, *cmd: str) -> list[str]:
    return nsenter(pid, "setpriv", f"--reuid={uid}", f"--regid={uid}", "--init-groups", "--", *cmd)


def children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def child_of(pid: int, what: str, timeout: float = 5) -> int:
    """The process nsenter forked into the node's PID namespace."""
    def found():
        kids = children(pid)
        if kids:
            return kids[0]
        if not Path(f"/proc/{pid}").exists():
            raise SimError(f"{what} exited at start")
        return None
    return wait_until(what, found, timeout, 0.005)


def user_env(state: RackState, extra: dict | None = None) -> dict:
    env = {"HOME": f"/home/{USER}", "USER": USER, "LOGNAME": USER, "LANG": "C.UTF-8",
           "PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(state.lib),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra or {})
    return env


class Node:
    def __init__(self, profile: Profile, spec: NodeSpec, state: RackState, ns: str, uid: int,
                 holders: dict[str, int] | None = None):
        self.p = profile
        self.spec = spec
        self.s = state
        self.ns = ns
        self.uid = uid
        self.holders = holders or {}     # slice holders' logins -> uid (the same on every node)
        self.dir = state.node_dir(spec.name)
        self.home = self.dir / "home" / USER
        self.pid: int | None = None          # the node's init (PID 1 inside)
        self.unshare_pid: int | None = None

    # files on the host side (all inside the state directory) ------------------------------
    def prepare(self, hosts_lines: list[str], release: dict) -> None:
        d = self.dir
        for sub in ("etc.upper", "etc.work", "bin", "run", "tmp", "sshd", "log",
                    "proc/net/bonding", "home"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(d / "tmp", 0o1777)
        os.chmod(d / "log", 0o777)
        up = d / "etc.upper"
        write(up / "hostname", f"{self.spec.name}\n")
        write(up / "hosts", "\n".join(["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback",
                                       "ff02::1\tip6-allnodes", "ff02::2\tip6-allrouters", ""]
                                      + hosts_lines) + "\n")
        passwd, group, shadow, gshadow = _accounts({USER: self.uid, **self.holders})
        # the login in adm, as Ubuntu's first user (JetPack, DGX OS): Debian's lldpcli (setuid
        # _lldpd) runs for adm only, and the cabling check asks it as the login
        group, gshadow = _with_group(group, gshadow, "adm", USER)
        if self.spec.platform == "spark":
            # Docker's socket group, the login in it (sparkrun's "Docker usable without sudo")
            group, gshadow = _with_group(group, gshadow, "docker", USER)
        write(up / "passwd", passwd)
        write(up / "group", group)
        shadow_gid = _gid("shadow")
        write(up / "shadow", shadow, 0o640, 0, shadow_gid)
        write(up / "gshadow", gshadow, 0o640, 0, shadow_gid)
        self.write_release(release)
        # what the suite may do as root: the operator's sudoers.d file is the one `rackproof sudoers`
        # writes, installed once the nodes answer (Rack.install_sudoers); until then, no sudo at all
        if self.spec.platform == "spark":
            # the scoped rules sparkrun's setup wizard installs (fix-permissions, clear-cache --save-sudo)
            write(up / "sudoers.d" / f"sparkrun-chown-{USER}", "# Installed by: sparkrun setup fix-permissions "
                  f"--save-sudo\n{USER} ALL=(root) NOPASSWD: /usr/bin/chown -R {USER} /home/{USER}/.cache/huggingface\n",
                  0o440, 0, 0)
            write(up / "sudoers.d" / f"sparkrun-dropcaches-{USER}", "# Installed by: sparkrun setup clear-cache "
                  f"--save-sudo\n{USER} ALL=(root) NOPASSWD: /usr/bin/tee /proc/sys/vm/drop_caches\n", 0o440, 0, 0)
        if self.spec.platform == "thor":
            # as a JetPack image ships it: NetworkManager renders every interface (nmcli connections)
            write(up / "netplan" / "01-network-manager-all.yaml", "# Let NetworkManager manage all devices on "
                  "this system\nnetwork:\n  version: 2\n  renderer: NetworkManager\n", 0o600, 0, 0)
        if self.spec.cx7:
            lines = ["network:", "  version: 2", "  ethernets:"]
            for c in self.spec.cx7:
                if c.address:
                    lines += [f"    {c.name}:", "      addresses:", f"        - {c.address}", "      dhcp4: no"]
            write(up / "netplan" / "40-cx7.yaml", "\n".join(lines) + "\n", 0o600, 0, 0)
        # the login user's home
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / ".ssh").mkdir(exist_ok=True)
        write(self.home / ".bashrc", "# ~/.bashrc\n")
        write(self.home / ".profile", "[ -f ~/.bashrc ] && . ~/.bashrc\n")
        for model in {e.model for e in self.p.engines if e.node == self.spec.name}:
            write(self.home / "engines" / model / "config.json",
                  f'{{"model": "{model}", "builder": "tensorrt-edge-llm", "gpu": "Thor"}}\n')
        _chown_tree(self.home, self.uid)
        os.chmod(self.home, 0o750)
        os.chmod(self.home / ".ssh", 0o700)
        # a slice holder's home: theirs alone (mode 700), as the chapter asks
        for login, uid in self.holders.items():
            home = self.dir / "home" / login
            home.mkdir(parents=True, exist_ok=True)
            write(home / ".profile", "[ -f ~/.bashrc ] && . ~/.bashrc\n")
            _chown_tree(home, uid)
            os.chmod(home, 0o700)

    def write_release(self, release: dict) -> None:
        up = self.dir / "etc.upper"
        if "nv_tegra_release" in release:
            write(up / "nv_tegra_release", release["nv_tegra_release"])
        if "dgx_release" in release:
            write(up / "dgx-release", release["dgx_release"])

    def keygen(self) -> str:
        """The node's host key and its user's key pair; returns the user's public key."""
        hk = self.dir / "sshd" / "ssh_host_ed25519_key"
        if not hk.exists():
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{self.spec.name}", "-f", str(hk)])
        uk = self.home / ".ssh" / "id_ed25519"
        if not uk.exists():
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{USER}@{self.spec.name}", "-f", str(uk)])
            os.chown(uk, self.uid, self.uid)
            os.chown(uk.with_suffix(".pub"), self.uid, self.uid)
        return uk.with_suffix(".pub").read_text().strip()

    @property
    def host_key(self) -> str:
        return (self.dir / "sshd" / "ssh_host_ed25519_key.pub").read_text().split()[:2]

    def write_ssh(self, authorized: list[str], known_hosts: list[str]) -> None:
        write(self.home / ".ssh" / "authorized_keys", "\n".join(authorized) + "\n", 0o600, self.uid)
        write(self.home / ".ssh" / "known_hosts", "\n".join(known_hosts) + "\n", 0o644, self.uid)
        cfg = self.dir / "sshd" / "sshd_config"
        write(cfg, "\n".join([
            f"# sshd of the simulated node {self.spec.name} (rackproof sim)",
            "Port 22",
            "ListenAddress 0.0.0.0",
            f"HostKey {self.dir / 'sshd' / 'ssh_host_ed25519_key'}",
            "PidFile /run/sshd.pid",
            "UsePAM no",
            "PermitRootLogin no",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            "AuthorizedKeysFile .ssh/authorized_keys",
            "StrictModes yes",
            "PrintMotd no",
            "PrintLastLog no",
            "X11Forwarding no",
            "UseDNS no",
            # MaxStartups, MaxSessions and LoginGraceTime stay at OpenSSH's defaults (10:30:100, 10,
            # 120 s), as on Debian, Ubuntu, L4T and DGX OS: the suite has to live within them, here first
            "AcceptEnv LANG LC_*",
            f"SetEnv PATH={LOGIN_PATH}",
            "Subsystem sftp /usr/lib/openssh/sftp-server",
            "",
        ]))

    # namespaces ---------------------------------------------------------------------------
    def start_holder(self) -> int:
        """Start the node's init in new mount, UTS and PID namespaces inside its netns."""
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": str(self.s.lib), "LANG": "C.UTF-8",
               "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "unshare", "--mount", "--uts", "--pid", "--fork", "--kill-child",
             "--mount-proc", "--propagation", "private", PY, "-S", "-m", "rackproof_sim.nodeinit", self.spec.name],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        self.unshare_pid = proc.pid
        return proc.pid

    def wait_holder(self) -> int:
        """Wait for the node's init (the child of unshare) to be in its namespaces; returns its pid."""
        own = os.stat("/proc/self/ns/pid").st_ino

        def ready():
            if not Path(f"/proc/{self.unshare_pid}").exists():
                raise SimError(f"the namespaces of {self.spec.name} could not be made (unshare exited)")
            for pid in children(self.unshare_pid):
                try:
                    if os.stat(f"/proc/{pid}/ns/pid").st_ino != own and \
                            Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"rackproof-sim-init"):
                        return pid
                except OSError:
                    continue
            return None
        self.pid = wait_until(f"{self.spec.name}'s namespaces", ready, 5, 0.01)
        return self.pid

    def mount_script(self) -> str:
        d = self.dir
        q = shlex.quote
        lines = [
            "set -e",
            f"hostname {q(self.spec.name)}",
            f"mount -n -t overlay overlay -o lowerdir=/etc,upperdir={q(str(d / 'etc.upper'))},"
            f"workdir={q(str(d / 'etc.work'))} /etc",
            f"mount -n --bind {q(str(d / 'home'))} /home",
            f"mount -n --bind {q(str(d / 'bin'))} /usr/local/bin",
            f"mount -n --bind {q(str(d / 'tmp'))} /tmp",
            "mount -n -t tmpfs -o mode=755,size=16m varlog /var/log",
            f"mount -n -t tmpfs -o mode=755,size=32m run {q(str(d / 'run'))}",
            f"mkdir -p {q(str(d / 'run' / 'sshd'))} {q(str(d / 'run' / 'lock'))} "
            f"{q(str(d / 'run' / NODE_PROC.removeprefix('/run/')))}",
            f"chmod 1777 {q(str(d / 'run' / 'lock'))}",
            f"mount -n --bind {q(str(d / 'proc'))} {q(str(d / 'run' / NODE_PROC.removeprefix('/run/')))}",
        ]
        root = self.s.root
        if str(root).startswith("/run/"):
            # the node sees only what it runs from the rack's state, at the same paths: the code
            # the stand-ins run and its own directory (model, sshd, logs); not the other nodes'
            for part in (self.s.lib, d):
                inner = d / "run" / str(part).removeprefix("/run/")
                lines += [f"mkdir -p {q(str(inner))}", f"mount -n --bind {q(str(part))} {q(str(inner))}"]
        lines.append(f"mount -n --move {q(str(d / 'run'))} /run")
        return "\n".join(lines) + "\n"

    def setup_mounts(self) -> None:
        run(nsenter(self.pid, "/bin/sh", "-c", self.mount_script(), pidns=False), timeout=15)

    def start_sshd(self) -> int:
        return self.spawn([SSHD, "-D", "-f", str(self.dir / "sshd" / "sshd_config"),
                           "-E", str(self.dir / "sshd" / "sshd.log")], self.dir / "sshd" / "sshd.log")

    def spawn(self, cmd: list[str], log_path: Path) -> int:
        """Start a daemon (in the foreground) inside the node's namespaces, PID namespace
        included, so it ends with the node; returns its pid."""
        log = open(log_path, "ab")
        proc = subprocess.Popen(nsenter(self.pid, *cmd), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
        log.close()
        return child_of(proc.pid, f"{Path(cmd[0]).name} on {self.spec.name}")

    def spawn_user(self, cmd: list[str], log_name: str, env_extra: dict | None = None, login: str | None = None) -> int:
        """Start a long-running process as the login user (or a slice holder) inside the node."""
        log = open(self.dir / "log" / log_name, "ab")
        uid = self.holders[login] if login else self.uid
        env = user_env(self.s, env_extra) | ({"HOME": f"/home/{login}", "USER": login, "LOGNAME": login} if login else {})
        proc = subprocess.Popen(as_user(self.pid, uid, *cmd), env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        return child_of(proc.pid, f"{cmd[0]} on {self.spec.name}")

    def sh(self, script: str, *, user: bool = False, check: bool = True, timeout: float = 20,
           input: str | None = None):
        """Run a shell script inside the node (as root, or as the login user)."""
        cmd = (as_user(self.pid, self.uid, "/bin/sh", "-c", script) if user
               else nsenter(self.pid, "/bin/sh", "-c", script, pidns=False))
        return run(cmd, check=check, timeout=timeout, env=user_env(self.s) if user else None, input=input)


def _gid(name: str) -> int:
    for line in Path("/etc/group").read_text().splitlines():
        parts = line.split(":")
        if parts[0] == name:
            return int(parts[2])
    return 0


def _accounts(logins: dict[str, int]) -> tuple[str, str, str, str]:
    """The node's passwd/group/shadow/gshadow: the host's system accounts (names and ids, no
    password hashes) plus the logins (the login user, the slice holders), each with its own
    group. Password fields are `*` (no password login, but not locked: sshd with UsePAM no
    refuses accounts locked with `!`)."""
    def ours(line: str) -> bool:
        return line.split(":", 1)[0] in logins

    passwd_lines = [line for line in Path("/etc/passwd").read_text().splitlines() if line and not ours(line)]
    group_lines = [line for line in Path("/etc/group").read_text().splitlines() if line and not ours(line)]
    for login, uid in logins.items():
        passwd_lines.append(f"{login}:x:{uid}:{uid}:{login},,,:/home/{login}:/bin/bash")
        group_lines.append(f"{login}:x:{uid}:")
    shadow = [f"{line.split(':')[0]}:*:20000:0:99999:7:::" for line in passwd_lines]
    gshadow = [f"{line.split(':')[0]}:*::" for line in group_lines]
    return ("\n".join(passwd_lines) + "\n", "\n".join(group_lines) + "\n",
            "\n".join(shadow) + "\n", "\n".join(gshadow) + "\n")


def _with_group(group: str, gshadow: str, name: str, member: str) -> tuple[str, str]:
    """group and gshadow with group `name` holding `member` (the host's gid when it has one)."""
    lines = group.splitlines()
    taken = {int(line.split(":")[2]) for line in lines}
    gid = _gid(name) or next(g for g in range(999, 100, -1) if g not in taken)
    lines = [line for line in lines if line.split(":", 1)[0] != name] + [f"{name}:x:{gid}:{member}"]
    shadow = [line for line in gshadow.splitlines() if line.split(":", 1)[0] != name] + [f"{name}:*::{member}"]
    return "\n".join(lines) + "\n", "\n".join(shadow) + "\n"


def _chown_tree(path: Path, uid: int) -> None:
    for root, dirs, files in os.walk(path):
        os.chown(root, uid, uid)
        for f in files:
            os.chown(os.path.join(root, f), uid, uid)
