"""What a node offers the suite's login, in one round trip (`rackproof doctor`, and each run
before its first check on the node): where each tool is on the login's PATH, the login's groups,
whether a daemon answers its client, whether each tool runs at all (asked its version: the exit
status and the first line it printed, which is the version or, for a broken install, the loader's
words), and whether `sudo -n` would run a command (asked with `sudo -n -l COMMAND`, which runs
nothing). Every line starts with a word of ours, so what a node prints after it is only ever a
path, a group list, a status or one line of a tool's:

    tool iperf3 /usr/bin/iperf3
    tool lldpcli /usr/sbin/lldpcli adm        (there, but not executable by the login; its group)
    tool nvpmodel                              (not on the PATH)
    groups rackproof adm docker
    daemon lldpd 1
    runs iperf3 0 iperf 3.16 (cJSON 1.7.15)
    runs nvpmodel 127 nvpmodel: error while loading shared libraries: libnvos.so: cannot open ...
    sudo 0 0
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rackproof.probes.probe import Probe

from . import ParseError

TOOL = "survey"
_NAME = re.compile(r"[A-Za-z0-9_.+-]+")
_INDEX = re.compile(r"[0-9]{1,6}")     # an index or an exit status: never a number int() would refuse


@dataclass(frozen=True)
class Found:
    path: str | None            # None: on no folder of the login's PATH
    group: str | None = None    # set when the file is there but the login may not run it: its group


@dataclass(frozen=True)
class Ran:
    status: int         # the exit status of `TOOL VERSION-FLAG`
    words: str          # the first line it printed (stdout and stderr): its version, or why it did not run

    @property
    def ran(self) -> bool:
        """False when the tool could not be run at all: the shell or the loader refused it (126:
        not executable, 127: not found, a shared library missing or broken) or it died of a signal
        before answering. Any other status is the tool's own answer, whatever it thought of the flag."""
        return self.status not in (126, 127) and not 128 < self.status < 160


@dataclass(frozen=True)
class Survey:
    tools: dict[str, Found]
    groups: tuple[str, ...]
    daemons: dict[str, bool]        # daemon -> its client reached it
    runs: dict[str, Ran]            # tool -> what asking its version did
    sudo: dict[int, bool]           # index of a command asked -> `sudo -n` would run it


def parse_survey(text: str) -> Survey:
    tools: dict[str, Found] = {}
    daemons: dict[str, bool] = {}
    runs: dict[str, Ran] = {}
    sudo: dict[int, bool] = {}
    groups: tuple[str, ...] | None = None
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        fields = rest.split()
        if word == "tool" and 1 <= len(fields) <= 3 and _NAME.fullmatch(fields[0]) and fields[0] not in tools \
                and all(f.startswith("/") for f in fields[1:2]):
            tools[fields[0]] = Found(fields[1] if len(fields) > 1 else None, fields[2] if len(fields) > 2 else None)
        elif word == "groups" and groups is None:
            groups = tuple(fields)
        elif word == "daemon" and len(fields) == 2 and fields[0] not in daemons and _INDEX.fullmatch(fields[1]):
            daemons[fields[0]] = fields[1] == "0"
        elif word == "runs" and len(fields) >= 2 and _NAME.fullmatch(fields[0]) and fields[0] not in runs \
                and _INDEX.fullmatch(fields[1]):
            runs[fields[0]] = Ran(int(fields[1]), " ".join(fields[2:]))
        elif word == "sudo" and len(fields) == 2 and _INDEX.fullmatch(fields[0]) and int(fields[0]) not in sudo \
                and _INDEX.fullmatch(fields[1]):
            sudo[int(fields[0])] = fields[1] == "0"
        else:
            raise ParseError(TOOL, f"a line that is not one of the survey's (or one said twice): {line[:200]!r}", text)
    if groups is None:
        raise ParseError(TOOL, "no 'groups' line: the survey did not finish", text)
    return Survey(tools, groups, daemons, runs, sudo)


# a file found on the PATH but not executable by the login is a permission (lldpcli is for group
# adm on Debian and Ubuntu), not a missing package: its group says whom it is for. The PATH is
# split once (the outer loop runs once): split again for each of the ~24 tools, a subshell and a
# tr each, it cost a node about 60 ms of CPU per survey, every node's survey at once as a run starts
TOOLS_ON_PATH = Probe(
    "tools on PATH", "where each tool the checks run is on the login's PATH (and its group when the login may not run it)",
    'for ds in "$(printf %s "$PATH" | tr : " ")"; do for t in {tools}; do p=; for d in $ds; do '
    '[ -f "$d/$t" ] && {{ p="$d/$t"; break; }}; done; '
    'if [ -z "$p" ]; then echo "tool $t"; elif [ -x "$p" ]; then echo "tool $t $p"; '
    'else echo "tool $t $p $(stat -c %G -- "$p")"; fi; done; done',
    unseen="the probe's own lines (a part of the survey): seen in the survey's output on Debian 12")
GROUPS = Probe("groups", "the login's groups", 'echo "groups $(id -nG)"',
               unseen="the probe's own line around `id -nG` (a part of the survey): seen in the survey's output on "
                      "Debian 12")
# the client's exit status says whether its daemon answered (lldpcli: lldpd's socket; chronyc:
# chronyd; munge: munged)
DAEMON = Probe("daemon answers", "whether a daemon answers its client (asked only where the client is)",
               "if command -v {tool} >/dev/null 2>&1; then {client} >/dev/null 2>&1 </dev/null; "
               "echo daemon {daemon} $?; fi",
               unseen="the probe's own line (a part of the survey): seen in the survey's output on Debian 12")
# a tool that is there may still not run (a broken install: the loader's "error while loading
# shared libraries", exit 127): each is run once, bounded, asked only its version; the status
# comes after its output on a line of its own, awk keeps that and the first line
RUNS = Probe("tool runs", "whether a tool runs: its exit status and first line when asked its version (asked only "
             "where the tool is)",
             "if command -v {tool} >/dev/null 2>&1; then {{ timeout 5 {tool} {flag} </dev/null 2>&1; "
             "printf '\\n%s\\n' \"$?\"; }} | awk -v t={tool} 'NR == 1 {{ f = $0 }} {{ l = $0 }} "
             "END {{ print \"runs\", t, l, f }}'; fi",
             unseen="the probe's own line around the tool's first line (a part of the survey): seen in the "
                    "survey's output on Debian 12")
SUDO_ALLOWED = Probe("sudo -n -l", "whether sudo -n would run a command (asked, not run)",
                     "sudo -n -l {command} >/dev/null 2>&1 </dev/null; echo sudo {index} $?",
                     unseen="the probe's own line from sudo's exit status (a part of the survey): seen in the "
                            "survey's output on Debian 12")
# the parts run at the same time, each into a file of its own, printed in their order: one after
# the other, a node's twenty-odd asks (each tool run, each sudo -l) took 0.16-0.19 s of every run's
# start on a 2-node rack, the surveys being what the plan waits for. A part runs in a subshell of
# its own: the PATH walk's loop variable t never meets the folder's
SURVEY_PART = Probe("survey part", "one part of the survey, in the background, its output kept in a temporary folder",
                    '{command} >"$t/{index}" &', unseen="prints nothing: its part's lines are read")
SURVEY_PARTS = Probe("survey parts", "the survey's parts at the same time, then what each printed, in their order; the "
                     "folder is removed", 't=$(mktemp -d) || exit 1; {started} wait; cat {files}; rm -rf "$t"',
                     unseen="the parts' own lines (the survey): seen in the survey's output on Debian 12")
SURVEY = Probe("survey", "tools, groups, daemons, versions and sudo rights, in one round trip", "{commands}",
               parse_survey, timeout=30, seen_on=("Debian 12",),
               unseen="the suite's own lines from the tools' answers: no other machine prints them")
# what the survey is made of (`rackproof probes` lists them as run before every check)
PARTS = (TOOLS_ON_PATH, GROUPS, DAEMON, RUNS, SUDO_ALLOWED, SURVEY_PART, SURVEY_PARTS)
