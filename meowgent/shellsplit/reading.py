"""What reading one command finds (`Found`): the command a wrapper runs, texts and commands it hands on, files it
writes, and what leaves it open (`programs` says what fails closed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from meowgent.shellsplit.options import Effect, Option, Parsed, Program, parse_options
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
    """A command the segment starts with arguments of its own (`find -exec`); xargs's ends in `...`, its input."""

    words: tuple[Word, ...]


class Found:
    """What one command does with its arguments, as far as the program's table and reader tell."""

    def __init__(self, program: str) -> None:
        self.program = program
        self.command: tuple[Word, ...] = ()  # what a wrapper runs in turn (`sudo -u bob rm x`: `rm x`)
        self.adds_input = False  # `command` also gets arguments read from the input (xargs)
        self.handed: list[RunsText | Starts] = []  # shell lines it runs (`eval`), commands it starts (`find -exec`)
        self.problems: dict[Problem, None] = {}  # each once, in the order found
        self.writes: dict[Write, None] = {}
        self.stopped = False  # an option made it run no command (`sudo -l`)

    def problem(self, kind: str, snippet: str) -> None:
        self.problems[Problem(kind, f"{self.program} {snippet}".strip())] = None

    def read(self, table: Program, arguments: Sequence[Word]) -> Parsed:
        """`arguments` read by `table`, their options' effects noted.

        Where options end at the first operand (or the table is `strict`), an unknown option hides what follows.
        Where they may follow operands, a word only known when it runs may be any option: one that runs code, or
        writes.
        """
        parsed = parse_options(table, arguments)
        for option in parsed.options:
            effect = table.effects.get(option.name)
            effect = effect(option.value) if callable(effect) else effect
            if effect is not None:
                self.effect(effect, option)
        if table.strict or not table.permute:
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
                self.writes[Write(word.text, None, "replaces")] = None
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
        elif effect == "names":  # `read -a NAME`; without a value the builtin fails
            if option.value is not None:
                self.assignment(option.value)
        elif effect == "later":
            self.problem("runs_later", option.spelling)
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
            self.writes[Write(spelling, target, "replaces" if how == "writes" else cast(WriteHow, how))] = None

    def assignment(self, word: Word) -> None:
        if sets_running_variable(word):
            self.problem("variable", word.text)

    @property
    def blocked(self) -> bool:  # a problem or an option (`--help`) keeps it from running a command
        return bool(self.problems) or self.stopped


Reader = Callable[[Found, Parsed], None]
"""A program read by code of its own, after its table: what it does, and the command it runs in turn, go to the
`Found`. `Parsed` is what the program's table read (for one without a table, every word is an operand)."""

_NOT_FILES = frozenset({"-", "/dev/null", "/dev/stdout", "/dev/stderr"})


def is_assignment(word: Word) -> bool:
    """Whether env or sudo takes the word for `NAME=value` rather than the command."""
    name, equals, _value = word.value.partition("=")
    return bool(equals and name) and not name.startswith("-") and not any(char.isspace() for char in name)
