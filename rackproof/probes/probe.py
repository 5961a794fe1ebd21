"""A probe: one command the suite runs on a node, together with how its answer is read.

The command is a template whose {fields} are filled with shell-quoted values (a list gives
one quoted word per item), so no value from cluster.toml or from a node reaches a shell
unquoted; only a Command that another probe built goes in as it is (a server started in the
background, a batch of commands). The probe also says which exit statuses still carry an answer, its timeout, and
the parser that turns the answer into typed facts (none for a command judged by its exit
status, like `ssh peer hostname`). Host.read / Host.run run it; `rackproof probes` prints
catalog(), the list of every command the suite can run on a node.

Every line a node's shell runs is in the C locale (IN_C_LOCALE, here and nowhere else): the
parsers read the tools' untranslated words, and a node set up in German (sudo's "Der Benutzer
... darf ...") would otherwise answer in words no parser knows. The locale is set once for the
whole line, so it covers each command of a pipeline, list or loop, and every command nested in
another; sudo keeps LC_ALL (it is in sudo's env_check list, and "C" passes that check).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from string import Formatter
from typing import Callable, Generic, TypeVar

T = TypeVar("T")

# exported before the command rather than `LC_ALL=C tool`, which covers only a simple command's
# first tool: not the other side of a pipe, `||`, a loop's body
IN_C_LOCALE = "export LC_ALL=C; "


class Command(str):
    """A shell command built by a probe: put into another probe's template as it is. It keeps
    each probe it was made from with the command that probe made (its own, and those of the
    commands put into it), so that what a node lacks for any of them is known before it runs."""
    made: tuple = ()      # ((Probe, its command), ...)

    @property
    def line(self) -> str:
        """What the node's shell runs: the command in the C locale."""
        return IN_C_LOCALE + self


@dataclass(frozen=True)
class Probe(Generic[T]):
    name: str
    does: str                                  # what it reads (or does), for `rackproof probes`
    template: str
    parser: Callable[..., T] | None = None     # parser(stdout, *[values[k] for k in parser_takes])
    parser_takes: tuple[str, ...] = ()
    ok_exit: tuple[int, ...] = (0,)
    timeout: float | None = None               # None: the inventory's ssh.command_timeout
    check: Callable[[dict], None] | None = None  # raises ValueError for values the command must not get
    once: bool = False                         # a fact no check changes (a version, a file's mode): read
                                               # once per node per run, then recalled (Host.read)
    repeatable: bool = True                    # only reads: run again if the connection drops under it;
                                               # False for what starts, stops or changes something
    seen_on: tuple[str, ...] = ()              # the platforms its format was seen on in real outputs, each
                                               # backed by a sample in selftests/samples (SOURCES.md)
    unseen: str = ""                           # which target platforms' real outputs were not found, and why

    @property
    def root(self) -> str:
        """"yes" for a command run with sudo -n; "where the login cannot read" for one that runs
        with or without it (`a || sudo -n a`); "no" otherwise."""
        if self.template.startswith("sudo -n ") and "||" not in self.template:
            return "yes"
        return "where the login cannot read" if "sudo -n " in self.template else "no"

    @property
    def answers(self) -> str | tuple[int, ...]:
        """The exit statuses that still carry an answer: "any", or the list."""
        return "any" if set(range(256)) <= set(self.ok_exit) else self.ok_exit

    @property
    def shown(self) -> str:
        """The line its commands run as, with {fields} left to fill (`rackproof probes`)."""
        return IN_C_LOCALE + self.template.replace("{{", "{").replace("}}", "}")

    def fields(self) -> set[str]:
        return {field for _, field, _, _ in Formatter().parse(self.template) if field}

    def command(self, **values) -> Command:
        """The command for these values (values that only the parser takes are left out)."""
        fields = self.fields()
        if not fields <= set(values) <= fields | set(self.parser_takes):
            raise TypeError(f"probe {self.name} takes {sorted(fields | set(self.parser_takes))}, not {sorted(values)}")
        if self.check is not None:
            self.check(values)
        command = Command(self.template.format(**{k: _quoted(values[k]) for k in fields}))
        command.made = ((self, str(command)),) + tuple(
            made for k in fields if isinstance(values[k], Command) for made in values[k].made)
        return command

    def parse(self, stdout: str, values: dict) -> T:
        return self.parser(stdout, *(values[k] for k in self.parser_takes))


def _quoted(value) -> str:
    if isinstance(value, Command):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(shlex.quote(str(v)) for v in value)
    return shlex.quote(str(value))
