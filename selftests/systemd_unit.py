"""A system service unit run as systemd's documentation says systemd runs it, without systemd.

This machine's PID 1 is not systemd, and booting one in its own namespaces would start every
installed service (sshd on port 22, lldpd sending on its interfaces) and empty its /tmp. So the
unit file is parsed and its settings applied here, by the rules of systemd 252 (Debian 12)
systemd.unit(5), systemd.exec(5) and systemd.syntax(7):

- specifiers as the system manager resolves them: %h is /root and %u root whatever User= says
  ("the user running the service manager instance"), %S /var/lib, %C /var/cache, %L /var/log,
  %E /etc, %t /run, %T /tmp, %V /var/tmp, %n %N %p the unit's name, %% a %; any other is refused;
- Environment=: each line unquoted as a shell word list, later assignments win; no variable is
  expanded. The process gets $PATH (the system manager's fixed value), $USER, $LOGNAME, $HOME and
  $SHELL of User= from the user database, $INVOCATION_ID, $STATE_DIRECTORY, then Environment=;
- StateDirectory=: below /var/lib; missing parents made root's (0755); the innermost owned by
  User= and its primary group (no Group=), recursively when it exists with another owner, with
  mode StateDirectoryMode= (default 0755);
- User= with the groups the group database gives it (initgroups), WorkingDirectory=, ExecStart=
  (a prefix such as - or + is refused: this unit has none).

`python -m selftests.systemd_unit PLAN.json`, as root in a mount namespace of its own (`unshare
--mount --propagation private`), installs the unit's world as docs/ci.md sets it up, inside
overlays of /etc, /var/lib, /opt, /home and /root that vanish with the namespace: the account, the
checkout, the inventory, the signing key; the lock folder as the machine has it (or as README's
set-up makes it). Then it applies the unit, runs its ExecStart when asked, and runs a second
operator's short run. What it saw goes to the plan's `report` file as JSON.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from rackproof.nodes.runfolder import CONTROLLER_LOCKS
from selftests.ci_examples import LEFT_BY_RUNS
from selftests.suite import REPO

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"
SYSTEM_SPECIFIERS = {"h": "/root", "u": "root", "U": "0", "S": "/var/lib", "C": "/var/cache", "L": "/var/log",
                     "E": "/etc", "t": "/run", "T": "/tmp", "V": "/var/tmp", "%": "%"}
STATE_ROOT = Path("/var/lib")
OVERLAID = ("/etc", "/var/lib", "/opt", "/home", "/root")


class UnitError(Exception):
    pass


def sections(text: str) -> dict[str, list[tuple[str, str]]]:
    """[Section] -> its (key, value) lines in order (a key may repeat); comments (# ;) and
    continuation lines (a trailing backslash) as systemd.syntax(7) has them."""
    found: dict[str, list[tuple[str, str]]] = {}
    current, pending = None, ""
    for raw in text.splitlines():
        line = (pending + " " + raw.strip()) if pending else raw.strip()
        pending = ""
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        if line.startswith("[") and line.endswith("]"):
            current = found.setdefault(line[1:-1], [])
        elif current is None or "=" not in line:
            raise UnitError(f"not a unit file line: {line!r}")
        else:
            key, _, value = line.partition("=")
            current.append((key.strip(), value.strip()))
    return found


def resolve(value: str, unit: str) -> str:
    """`value` with its specifiers resolved as the system manager does."""
    names = {"n": unit, "N": unit.rsplit(".", 1)[0], "p": unit.rsplit(".", 1)[0].split("@")[0]}

    def one(match: re.Match) -> str:
        letter = match.group(1)
        if letter in SYSTEM_SPECIFIERS:
            return SYSTEM_SPECIFIERS[letter]
        if letter in names:
            return names[letter]
        raise UnitError(f"{unit}: the specifier %{letter} is not modelled here")

    return re.sub(r"%(.)", one, value)


@dataclass
class Service:
    name: str
    user: str
    working_directory: str
    exec_start: list[str]
    environment: dict[str, str] = field(default_factory=dict)
    state_directories: list[str] = field(default_factory=list)
    state_mode: int = 0o755

    @classmethod
    def load(cls, path: Path) -> "Service":
        settings = sections(path.read_text()).get("Service", [])
        one = {k: v for k, v in settings}   # the last assignment of a key wins
        env: dict[str, str] = {}
        for key, value in settings:
            if key == "Environment":
                for word in shlex.split(resolve(value, path.name)):
                    name, eq, val = word.partition("=")
                    if not eq:
                        raise UnitError(f"{path.name}: Environment= without a value: {word!r}")
                    env[name] = val
        start = resolve(one["ExecStart"], path.name)
        if start[:1] in "-+@:!":
            raise UnitError(f"{path.name}: ExecStart= prefixes are not modelled here: {start!r}")
        states = [resolve(w, path.name) for k, v in settings if k == "StateDirectory" for w in v.split()]
        return cls(path.name, one.get("User", "root"), resolve(one.get("WorkingDirectory", "/"), path.name),
                   shlex.split(start), env, states, int(one.get("StateDirectoryMode", "0755"), 8))

    def apply_state_directories(self) -> list[Path]:
        account = pwd.getpwnam(self.user)
        made = []
        for name in self.state_directories:
            path = STATE_ROOT / name
            for parent in reversed(path.relative_to(STATE_ROOT).parents[:-1]):
                if not (STATE_ROOT / parent).exists():
                    (STATE_ROOT / parent).mkdir(mode=0o755)
            if not path.exists():
                path.mkdir()
                os.chown(path, account.pw_uid, account.pw_gid)
            st = os.lstat(path)
            if (st.st_uid, st.st_gid) != (account.pw_uid, account.pw_gid):
                for item in (path, *path.rglob("*")):
                    os.lchown(item, account.pw_uid, account.pw_gid)
            os.chmod(path, self.state_mode)
            made.append(path)
        return made

    def process_environment(self) -> dict[str, str]:
        account = pwd.getpwnam(self.user)
        env = {"PATH": SYSTEM_PATH, "USER": account.pw_name, "LOGNAME": account.pw_name, "HOME": account.pw_dir,
               "SHELL": account.pw_shell, "INVOCATION_ID": uuid.uuid4().hex}
        if self.state_directories:
            env["STATE_DIRECTORY"] = ":".join(str(STATE_ROOT / d) for d in self.state_directories)
        return {**env, **self.environment}

    def run(self, timeout: float) -> subprocess.CompletedProcess:
        account = pwd.getpwnam(self.user)
        return subprocess.run(as_account(account, self.exec_start), cwd=self.working_directory,
                              env=self.process_environment(), capture_output=True, text=True, timeout=timeout)


def as_account(account: pwd.struct_passwd, argv: list[str]) -> list[str]:
    return ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups", "--", *argv]


# ---- the unit's world, installed inside the overlays -------------------------------------

def _overlay(stage: Path) -> None:
    for where in OVERLAID:
        layer = stage / "overlay" / where.strip("/").replace("/", "-")
        (layer / "upper").mkdir(parents=True)
        (layer / "work").mkdir()
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        f"lowerdir={where},upperdir={layer / 'upper'},workdir={layer / 'work'}", where], check=True)


def _interpreter_reachable() -> None:
    """The selftests' Python may live under root's home (pyenv), which other accounts cannot
    enter: the overlaid /root lets them pass through (o+x), in this namespace only. A real
    controller's .venv is built on a Python every account can run."""
    for parent in Path(os.path.realpath(sys.executable)).parents:
        mode = os.lstat(parent).st_mode
        if not mode & stat.S_IXOTH:
            if str(parent) not in OVERLAID:
                raise UnitError(f"{parent}: the selftests' Python is out of other accounts' reach")
            os.chmod(parent, stat.S_IMODE(mode) | stat.S_IXOTH)


def _add_account(name: str, group: str, member_of: str, shell: str) -> pwd.struct_passwd:
    """An account in the overlaid /etc: its own home under /home, primary group `group`, and a
    member of `member_of` in the group database."""
    taken = {p.pw_uid for p in pwd.getpwall()}
    uid = next(i for i in range(61000, 65000) if i not in taken)
    gid = grp.getgrnam(group).gr_gid
    with open("/etc/passwd", "a") as f:
        f.write(f"{name}:x:{uid}:{gid}::/home/{name}:{shell}\n")
    lines = Path("/etc/group").read_text().splitlines()
    for i, line in enumerate(lines):
        parts = line.split(":")
        if parts[0] == member_of:
            parts[3] = ",".join([m for m in parts[3].split(",") if m] + [name])
            lines[i] = ":".join(parts)
    Path("/etc/group").write_text("\n".join(lines) + "\n")
    home = Path(f"/home/{name}")
    home.mkdir(mode=0o700)
    os.chown(home, uid, gid)
    return pwd.getpwnam(name)


def _lock_group(locks: Path) -> str:
    """The lock folder's group, as the machine has it; else made as README's set-up makes it."""
    if locks.exists():
        return grp.getgrgid(os.lstat(locks).st_gid).gr_name
    subprocess.run(["groupadd", "--system", "rackproof"], check=True)
    locks.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["install", "-d", "-o", "root", "-g", "rackproof", "-m", "2770", str(locks)], check=True)
    return "rackproof"


def _own(path: Path, account: pwd.struct_passwd, mode: int) -> Path:
    os.chown(path, account.pw_uid, account.pw_gid)
    os.chmod(path, mode)
    return path


def _inventory_for(account: pwd.struct_passwd, inventory: Path, rack_state: Path) -> str:
    """The rack's inventory with every file of the rack's it names (SSH config, keys, the agent's
    key) copied into the account's ~/.rack, its own and private, as an operator keeps them."""
    folder = Path(account.pw_dir, ".rack")
    folder.mkdir(exist_ok=True)
    _own(folder, account, 0o700)
    copies: dict[str, str] = {}

    def copy(path: str) -> str:
        if path not in copies:
            target = folder / Path(path).relative_to(rack_state).as_posix().replace("/", "-")
            text = Path(path).read_text()
            target.write_text(re.sub(re.escape(str(rack_state)) + r"/[^\s\"]+", lambda m: copy(m.group(0)), text))
            _own(target, account, 0o600)
            copies[path] = str(target)
        return copies[path]

    return re.sub(re.escape(str(rack_state)) + r"/[^\s\"]+", lambda m: copy(m.group(0)), inventory.read_text())


def _stat(path: Path) -> dict:
    st = os.lstat(path)
    return {"owner": pwd.getpwuid(st.st_uid).pw_name, "group": grp.getgrgid(st.st_gid).gr_name,
            "mode": oct(stat.S_IMODE(st.st_mode))}


def main(plan_file: str) -> None:
    plan = json.loads(Path(plan_file).read_text())
    stage, rack_state = Path(plan["stage"]), Path(plan["rack_state"])
    _overlay(stage)
    _interpreter_reachable()
    service = Service.load(Path(plan["unit"]))
    group = _lock_group(CONTROLLER_LOCKS)
    if service.user not in {p.pw_name for p in pwd.getpwall()}:
        # docs/ci.md: useradd --system --create-home --gid rackproof --shell /usr/sbin/nologin rackproof
        _add_account(service.user, group, group, "/usr/sbin/nologin")
    unit_account = pwd.getpwnam(service.user)
    operator = _add_account("operator2", "users", group, "/bin/bash")

    # the checkout where the unit runs it, its .venv the selftests' own (installing needs PyPI)
    shutil.copytree(REPO, service.working_directory, ignore=shutil.ignore_patterns(*LEFT_BY_RUNS),
                    symlinks=True, dirs_exist_ok=True)
    Path(service.working_directory, ".venv").symlink_to(sys.prefix)
    inventory = Path(service.environment["RACKPROOF_INVENTORY"])
    inventory.parent.mkdir(parents=True, exist_ok=True)
    inventory.write_text(_inventory_for(unit_account, Path(plan["inventory"]), rack_state))
    # the signing key in the account's ~/.ssh (docs/ci.md), where its $HOME puts it: the unit's
    # RACKPROOF_KEY finds it there or not at all
    key = Path(unit_account.pw_dir, ".ssh", "rackproof-ci")
    key.parent.mkdir(exist_ok=True)
    _own(key.parent, unit_account, 0o700)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rackproof@bench", "-f", str(key)], check=True,
                   timeout=30)
    for part in (key, Path(f"{key}.pub")):
        _own(part, unit_account, 0o600)

    report: dict = {"user": service.user, "home": unit_account.pw_dir, "environment": service.process_environment(),
                    "key": str(key), "locks_before": _stat(CONTROLLER_LOCKS), "lock_group": group}
    report["state_directories"] = {str(p): _stat(p) for p in service.apply_state_directories()}
    report["locks_after_state"] = _stat(CONTROLLER_LOCKS)
    if plan["execute"]:
        run = service.run(timeout=plan["timeout"])
        report["unit"] = {"status": run.returncode, "stdout": run.stdout[-4000:], "stderr": run.stderr[-4000:]}
        reports = Path(service.environment["RACKPROOF_REPORTS"])
        folders = sorted(p for p in reports.iterdir()) if reports.is_dir() else []
        report["unit"]["folders"] = [{"path": str(p), **_stat(p), "files": sorted(f.name for f in p.iterdir())}
                                     for p in folders]
        if folders and (folders[-1] / "results.json").is_file():
            report["unit"]["results"] = json.loads((folders[-1] / "results.json").read_text())["run"]
            report["unit"]["verdict"] = json.loads((folders[-1] / "results.json").read_text())["verdict"]["decision"]
        archive = Path(service.environment["RACKPROOF_ARCHIVE"])
        report["unit"]["archive"] = sorted(str(p.relative_to(archive)) for p in archive.rglob("*") if p.is_file()) \
            if archive.is_dir() else []
        history = Path(service.environment["RACKPROOF_HISTORY"])
        report["unit"]["history"] = _stat(history) if history.exists() else None
        if folders and (folders[-1] / "bundle.tar").is_file():
            signers = stage / "allowed_signers"
            signers.write_text("rackproof@bench " + " ".join(Path(f"{key}.pub").read_text().split()[:2]) + "\n")
            verified = subprocess.run([f"{sys.prefix}/bin/rackproof", "verify", str(folders[-1] / "bundle.tar"),
                                       "--allowed-signers", str(signers)], capture_output=True, text=True, timeout=60)
            report["unit"]["verify"] = verified.stdout + verified.stderr
    report["locks_after"] = _stat(CONTROLLER_LOCKS)

    # a second operator of the controller, in the lock folder's group, runs the SSH checks
    mine = Path(operator.pw_dir, "cluster.toml")
    mine.write_text(_inventory_for(operator, Path(plan["inventory"]), rack_state))
    _own(mine, operator, 0o600)
    out = Path(operator.pw_dir, "out")
    checkout = service.working_directory
    argv = [f"{checkout}/.venv/bin/pytest", "-c", f"{checkout}/pytest.ini", "--rootdir", checkout, "-q",
            f"--inventory={mine}", f"--html={out}/report.html", f"--junitxml={out}/junit.xml",
            f"--history={operator.pw_dir}/history.sqlite", f"{checkout}/tests_ssh"]
    second = subprocess.run(as_account(operator, argv), cwd=operator.pw_dir, capture_output=True, text=True,
                            timeout=plan["timeout"],
                            env={"PATH": os.environ["PATH"], "HOME": operator.pw_dir, "USER": operator.pw_name})
    # what the operator's run left in the temp folder it made its private folder in (none may stay,
    # also when the run stops on its lock folder)
    left = sorted(str(p) for p in Path(tempfile.gettempdir()).glob("rackproof-run-*")
                  if p.lstat().st_uid == operator.pw_uid)
    report["operator"] = {"status": second.returncode, "output": (second.stdout + second.stderr)[-4000:],
                          "run_folders_left": left,
                          "verdict": json.loads((out / "results.json").read_text())["verdict"]["decision"]
                          if (out / "results.json").is_file() else None}
    Path(plan["report"]).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
