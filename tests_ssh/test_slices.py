"""Step 9, "Time slices" and "A calendar and a time limit": a slice is a whole Thor for a
window of time. Reservations do not overlap and name logins that exist; during a window only
its holder runs there; every job carries RuntimeMaxSec; nobody who holds a slice has sudo;
each home is the holder's alone (mode 700)."""

import pytest

from rackproof.judging import sharing
from rackproof.judging.capabilities import PRIVATE_SLICES
from rackproof.judging.failure import Failure
from rackproof.measurements.holders import NODE_HOLDER_ACCOUNTS, NODE_HOLDER_HOMES, NODE_HOLDER_PROCESSES, \
    NODE_HOLDER_SUDO, NODE_USER_JOBS

pytestmark = [pytest.mark.step(9), pytest.mark.needs("slices"), pytest.mark.capability(PRIVATE_SLICES)]


def test_reservations_do_not_overlap(every_node, inventory):
    found = sharing.overlaps(inventory.slices.reservations)
    if found:
        raise Failure("calendar", f"{len(found)} overlapping reservation{'s' * (len(found) != 1)}: "
                      + "; ".join(map(str, found)),
                      cause="a node is one person's at a time: move one of the windows")


def test_holders_have_logins(node, inventory, planned):
    accounts = planned(NODE_HOLDER_ACCOUNTS)
    missing = [login for login, account in accounts.items() if account is None]
    if missing:
        reserved = sorted({r.person for r in inventory.slices.reservations if r.node == node.name} & set(missing))
        raise Failure(node.name, f"no login for {', '.join(missing)}"
                      + (f" (reserved here: {', '.join(reserved)})" if reserved else ""),
                      cause="each slice holder needs a login of their own on every node (sudo adduser NAME)")


def test_only_the_holder_runs_during_a_window(node, inventory, planned):
    clock, processes = planned(NODE_HOLDER_PROCESSES)
    holding = sharing.holding_now(inventory.slices.reservations, node.name, clock)
    others = [p for p in processes
              if p.user in inventory.slices.holders and p.user not in {r.person for r in holding}]
    if holding and others:
        held = " and ".join(f"{r.person} until {r.end.isoformat(timespec='minutes')}" for r in holding)
        raise Failure(node.name, f"held by {held}, and other slice holders' processes run there: "
                      + ", ".join(f"{p.user} (pid {p.pid}, {p.command})" for p in others),
                      cause="a job that outlived its window (start jobs with RuntimeMaxSec)")


def test_every_job_has_a_time_limit(node, planned):
    problems = []
    jobs = planned(NODE_USER_JOBS)
    for login, units in jobs.items():
        problems += [f"{unit} of {login}" for unit in sharing.without_time_limit(units)]
    if problems:
        raise Failure(node.name, "running without RuntimeMaxSec: " + ", ".join(problems),
                      cause="started without a time limit; it outlives its window: "
                      "systemd-run --user --unit NAME -p RuntimeMaxSec=6h ./job.sh")


def test_slice_holders_have_no_sudo(node, planned):
    with_sudo = {login: rules for login, rules in planned(NODE_HOLDER_SUDO).items() if rules}
    if with_sudo:
        raise Failure(node.name, "slice holders with sudo: " + "; ".join(
            f"{login} may run {', '.join(rules)}" for login, rules in with_sudo.items()),
            cause="a person with sudo can read every file on the node, the previous holder's too: "
                  "sudo deluser LOGIN sudo (and any rule in /etc/sudoers.d)")


def test_homes_are_private(node, planned):
    accounts, modes = planned(NODE_HOLDER_HOMES)
    problems = []
    for login, account in accounts.items():
        found = modes[account.home]
        if found is None:
            problems.append(f"{login}'s home {account.home} does not exist")
        elif found.mode != "700" or found.owner != login:
            problems.append(f"{account.home} is mode {found.mode}, owner {found.owner}")
    if problems:
        raise Failure(node.name, "; ".join(problems), cause="a home readable by others shares one holder's files "
                      "with the next: sudo chmod 700 HOME; sudo chown LOGIN HOME")
