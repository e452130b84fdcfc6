"""How a program's words are read: what it does with them (`Reading`), by its option table (`Program`).

`Found` gathers what one reading finds, failing closed: an option the table does not know, or a word only known
when it runs where an option could stand, is a `Problem`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal, cast

from meowgent.shellsplit.options import Effect, Option, Parsed, Program, ValueCheck, parse_options
from meowgent.shellsplit.words import Problem, Word, sets_running_variable

WriteHow = Literal["replaces", "appends", "edits", "deletes", "sets"]


@dataclass(frozen=True, slots=True)
class Write:
    """A file a command writes through an option or an operand rather than a redirection.

    A rule pattern covers it only when the pattern spells `spelling` at the start of one of its
    words (`--output`, `-o`, `tee`), as a `>` must be spelled to cover a redirection.
    """

    spelling: str
    target: Word | None
    how: WriteHow


@dataclass(frozen=True, slots=True)
class RunsText:
    """A text the segment runs as a command line: the words that joined with spaces make it, and who runs it."""

    words: tuple[Word, ...]
    who: str


@dataclass(frozen=True, slots=True)
class Starts:
    """A command the segment starts with arguments of its own (`find -exec`); `tail` marks words from the input
    (xargs)."""

    words: tuple[Word, ...]
    tail: str = ""


@dataclass(frozen=True, slots=True)
class Reading:
    """What one command does with its arguments, as far as the program's table tells."""

    command: tuple[Word, ...] = ()  # what a wrapper runs in turn (`sudo -u bob rm x`: `rm x`); empty if not known
    adds_input: bool = False  # `command` also gets arguments read from the input (xargs)
    handed: tuple[RunsText | Starts, ...] = ()  # shell lines it runs (`eval`), other commands it starts (`find -exec`)
    problems: tuple[Problem, ...] = ()
    writes: tuple[Write, ...] = ()


# ---- reading a program ----

Reader = Callable[["Found", Sequence[Word]], None]
"""A program read by code of its own: what it does, and the command it runs in turn, go to the `Found`."""


def apply_table(found: Found, table: Program, arguments: Sequence[Word]) -> None:
    """Read `arguments` by `table` into `found`, with the command a wrapper runs (none when not known)."""
    parsed = found.read(table, arguments)
    reads_input = not parsed.operands or parsed.operands[0].literal == "-"
    if table.input and reads_input and not found.problems and not found.stopped:
        found.problem("runs_input", "")
    if not table.wraps or found.problems or found.stopped or len(parsed.operands) < table.operands:
        return
    operands = list(parsed.operands[table.operands :])
    if table.assignments:
        while operands and is_assignment(operands[0]):
            found.assignment(operands.pop(0))
    found.command = operands


class Found:
    """What the reading of one command has found so far."""

    def __init__(self, program: str) -> None:
        self.program = program
        self.problems: list[Problem] = []
        self.handed: list[RunsText | Starts] = []
        self.writes: list[Write] = []
        self.stopped = False
        self.command: Sequence[Word] = ()  # what a wrapper runs in turn
        self.adds_input = False  # the command it runs also gets arguments read from the input (xargs)

    def problem(self, kind: str, snippet: str) -> None:
        self.problems.append(Problem(kind, f"{self.program} {snippet}".strip()))

    def read(self, table: Program, arguments: Sequence[Word], *, strict: bool = False) -> Parsed:
        """`arguments` read by `table`, their options' effects noted.

        Where options end at the first operand (or `strict`), an unknown option hides what follows. Where they
        may follow operands, a word only known when it runs may be any option: one that runs code, or writes.
        """
        parsed = parse_options(table, arguments)
        for option in parsed.options:
            effect = table.effects.get(option.name)
            effect = effect(option.value) if callable(effect) else effect
            if effect is not None:
                self.effect(effect, option)
        if strict or not table.permute:
            for word in parsed.unknown:
                self.problem("option", word.text)
            for word in parsed.unread:
                self.problem("unknown_word", word.text)
            return parsed
        kinds = {effect if isinstance(effect, str) else "runs" for effect in table.effects.values()}
        for word in parsed.unread:
            if kinds & {"runs", "shell"}:
                self.problem("unknown_word", word.text)
            if kinds & {"writes", "appends", "edits", "deletes", "sets"}:
                self.writes.append(Write(word.text, None, "replaces"))
        return parsed

    def effect(self, effect: Effect, option: Option) -> None:
        if effect == "runs":
            self.problem("runs_code", option.spelling)
        elif effect == "shell":
            self.runs_text(option.spelling, [option.value])
        elif effect == "env":
            if option.value is None or not is_assignment(option.value):
                self.problem("variable", option.word.text)
            else:
                self.assignment(option.value)
        elif effect == "stops":
            self.stopped = True
        else:
            self.write(option.spelling, option.value, effect)

    def runs_text(self, snippet: str, words: Sequence[Word | None]) -> None:
        """A shell line the program runs, its words joined by spaces (`watch`, `ssh host cmd`, `flock -c`): split
        when it is literal; either way the line is not pinned down."""
        self.problem("runs_text", snippet)
        if known := [word for word in words if word is not None]:
            self.handed.append(RunsText(tuple(known), f"{self.program} {snippet}".strip()))

    def write(self, spelling: str, target: Word | None, how: Effect) -> None:
        if target is None or target.literal not in _NOT_FILES:
            self.writes.append(Write(spelling, target, "replaces" if how == "writes" else cast(WriteHow, how)))

    def assignment(self, word: Word) -> None:
        if sets_running_variable(word):
            self.problem("variable", word.text)

    def reading(self) -> Reading:
        return Reading(
            tuple(self.command),
            self.adds_input,
            tuple(self.handed),
            tuple(dict.fromkeys(self.problems)),
            tuple(dict.fromkeys(self.writes)),
        )


_NOT_FILES = frozenset({"-", "/dev/null", "/dev/stdout", "/dev/stderr"})


def is_assignment(word: Word) -> bool:
    """Whether env or sudo takes the word for `NAME=value` rather than the command."""
    name, equals, _value = word.value.partition("=")
    return bool(equals and name) and not name.startswith("-") and not any(char.isspace() for char in name)


def program(spec: str) -> Program:
    """A program's table from its spec, getopt's notation in words (see `tables`).

    `-abc` are short flags, `-de=` short options that take a value, `-f=?` an optional value, `-l=#` an
    optional number; `--name`, `--name=` and `--name=?` the same for long ones. The words `wraps`,
    `assignments`, `input`, `operands=N` and the `Program` switches (`permute`, `numbers`, `lone_dash`,
    `lenient_long`) set the rest. `runs:`, `writes:` (any `Effect`), a check of `_CHECKS` or `ends:` start a
    list of options that have that effect.
    """
    short = {"": "", "=": "", "=?": "", "=#": ""}
    longs: dict[str, set[str]] = {"": set(), "=": set(), "=?": set()}
    effects: dict[str, Effect | ValueCheck] = {}
    switches: dict[str, object] = {}
    ends: set[str] = set()
    section = ""
    for token in spec.split():
        if token.endswith(":"):
            section = token[:-1]
        elif section == "ends":
            ends.add(token)
        elif section:
            effects[token] = _CHECKS.get(section, cast(Effect, section))
        elif token.startswith("--"):
            name, equals, kind = token[2:].partition("=")
            longs[equals + kind].add(name)
        elif token.startswith("-"):
            letters, equals, kind = token[1:].partition("=")
            short[equals + kind] += letters
        else:
            name, _, number = token.partition("=")
            switches[name] = int(number) if number else True
    longs_by_kind = [frozenset(names) for names in longs.values()]  # in `Program`'s order, as `short` is
    table = {"ends": frozenset(ends), "effects": effects, **switches}
    return Program(*short.values(), *longs_by_kind, **table)  # type: ignore[arg-type]


def programs(block: str) -> dict[str, Program]:
    """Tables from a block of specs, one a line (continued on indented lines), each after its comma-separated names."""
    tables: dict[str, Program] = {}
    for entry in re.split(r"\n(?=\S)", block.strip()):
        names, _, spec = entry.partition(" ")
        tables |= dict.fromkeys(names.split(","), program(spec))
    return tables


def names(text: str) -> frozenset[str]:
    """The space-separated words of `text`, to keep long lists of names short."""
    return frozenset(text.split())


def _mentions(effect: Effect, needle: str) -> ValueCheck:
    """The effect when the value names `needle` (or cannot be read): tar's `--checkpoint-action=exec=...`."""
    return lambda value: effect if value is None or value.literal is None or needle in value.literal else None


# ssh_config keys that run a command or load code; `-o` and `-F` files can set them.
_SSH_RUNNING_KEYS = frozenset(
    {"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "remotecommand", "match"}
    | {"include", "securitykeyprovider", "pkcs11provider", "xauthlocation"}
)


def _ssh(value: Word | None) -> Effect | None:
    """An ssh `-o Key=value` (or `Key value`) that runs a command."""
    if value is None or value.literal is None:
        return "runs"
    key = re.split(r"[=\s]", value.literal.strip(), maxsplit=1)[0].lower()
    return "runs" if key in _SSH_RUNNING_KEYS else None


# git config keys (lowercased) that only set a name, a colour, a default or a check: nothing in them runs.
_SAFE_GIT_CONFIG = names(
    "user.name user.email color.* advice.* core.quotepath core.autocrlf core.safecrlf core.filemode init.defaultbranch"
    " commit.gpgsign tag.gpgsign safe.directory pull.rebase pull.ff push.default push.autosetupremote fetch.prune"
    " merge.ff log.date"
)


def git_config_runs(value: Word | None, *, env: bool = False) -> bool:
    """Whether git's `-c key=value` may run code: any key but the plain ones above (aliases, pagers, hooks)."""
    if env or value is None or value.literal is None:
        return True
    key = value.literal.partition("=")[0].lower()
    return not any(fnmatchcase(key, safe) for safe in _SAFE_GIT_CONFIG)


_CHECKS: dict[str, ValueCheck] = {
    "config": lambda value: "runs" if git_config_runs(value) else None,
    # strace's `-o |cmd` and `-o !cmd` pipe into a command; any other file is written
    "pipes": lambda value: (
        "runs" if value is None or value.literal is None or value.literal.startswith(("|", "!")) else "writes"
    ),
    "ssh": _ssh,
    # `make -f -` reads its makefile from the input: a program nobody sees
    "stdin": lambda value: "runs" if value is None or value.literal in (None, "-", "/dev/stdin") else None,
    "exec": _mentions("runs", "exec"),
    "output": _mentions("writes", "%output{"),
}
