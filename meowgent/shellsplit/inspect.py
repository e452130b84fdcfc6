"""What a finished segment runs besides itself, and what in it leaves the line's meaning open.

`inspect_segment` reads one simple command as bash would run it (assignments, builtins that evaluate values
or bind code, texts run as command lines, wrappers through their tables) and yields `Problem`s and, in the
order bash meets them, the texts (`RunsText`) and commands (`Starts`) the reader reads as commands of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from meowgent.shellsplit.options import Program, parse_options
from meowgent.shellsplit.programs import MAX_NESTED, read_program
from meowgent.shellsplit.words import Problem, SimpleCommand, Word, program_name, runs_value, variable_name


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


Finding = Problem | RunsText | Starts


def inspect_segment(parsed: SimpleCommand) -> Iterator[Finding]:
    """What the segment leaves open, and what it hands on, in order; wrappers are followed to `MAX_NESTED`."""
    for word in parsed.assignments:
        yield from _assignment(word)
    words: Sequence[Word] = parsed.words
    for _ in range(MAX_NESTED):
        if not words:
            return
        program = program_name(words[0])
        if program is None:
            yield Problem("unknown_command", words[0].text)
            return
        arguments = words[1:]
        yield from _builtin(program, arguments)
        reading = read_program(program, arguments)
        yield from reading.problems
        for who, text in reading.texts:
            yield RunsText(text, who)
        for started in reading.started:
            yield Starts(started)
        if reading.adds_input and reading.command:  # xargs: the command gets more words from the input
            yield Starts(reading.command, " ...")
            return
        words = reading.command
    yield Problem("too_many", " ".join(word.text for word in parsed.words))


def _assignment(word: Word) -> Iterator[Problem]:
    if _SUBSCRIPTED.match(word.text):
        yield Problem("subscript", word.text)
    name = variable_name(word)
    if name is None or runs_value(name):
        yield Problem("variable", word.text)


def _builtin(program: str, arguments: Sequence[Word]) -> Iterator[Problem]:
    """What a bash builtin leaves open: values it evaluates, variables it sets, code it binds to a name."""
    if program not in _BUILTINS:
        return  # most commands: no need to look at their words (a 1 MB line of them, say)
    texts = [argument.value for argument in arguments]
    snippet = " ".join([program, *texts])
    if program == "let" or (program == "[[" and _ARITHMETIC_TESTS.intersection(texts)):
        yield Problem("arithmetic", snippet)
    if program in _NAMES_VARIABLES and any(_SUBSCRIPTED.match(text) for text in texts):
        yield Problem("subscript", snippet)
    if program in _DECLARES and any(_evaluates(text) for text in texts):
        yield Problem("evaluates", snippet)
    for name in _assigned_names(program, arguments):
        if name is None or runs_value(name):
            yield Problem("variable", snippet)
    kind = _builtin_kind(program, arguments)
    if kind is not None:
        yield Problem(kind, snippet)


# ---- builtins that evaluate values or bind code ----

_SUBSCRIPTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
# Builtins that take variable names, where `a[$x]` evaluates $x as arithmetic.
_NAMES_VARIABLES = frozenset(
    {"declare", "typeset", "local", "readonly", "export", "unset", "read", "mapfile", "readarray", "printf"}
    | {"test", "[", "[[", "wait", "let"}
)
_DECLARES = frozenset({"declare", "typeset", "local", "readonly", "export"})

# Builtins read by their options: the option whose value names a variable it sets, how many of its operands
# name variables (None: all), and the options whose value is code bash runs later (`mapfile -C`).
_MAPFILE = (Program(flags="t", values="dnOsuCc"), "", 1, "-C")
_COMPLETE = (Program(flags="abcdefgjksuvDEIpr", values="oAGWFCXPS"), "", 0, "-C -F")
_OPTIONS: dict[str, tuple[Program, str, int | None, str]] = {
    "read": (Program(flags="ers", values="adinNptu"), "-a", None, ""),
    **dict.fromkeys(("mapfile", "readarray"), _MAPFILE),
    "printf": (Program(values="v"), "-v", 0, ""),
    "wait": (Program(flags="nf", values="p"), "-p", 0, ""),
    **dict.fromkeys(("compgen", "complete"), _COMPLETE),
    "bind": (Program(flags="lpsvPSVX", values="mqufrx"), "", 0, "-x"),
}
_BUILTINS = _NAMES_VARIABLES | _OPTIONS.keys() | {"getopts", "for", "hash", "alias", "enable", "fc"}


def _evaluates(option: str) -> bool:
    """`declare -i` evaluates values as arithmetic, `-n` makes a name stand for another (`-ix`, `+n` too)."""
    return option[:1] in ("-", "+") and option[1:].isalpha() and ("i" in option or "n" in option)


def _assigned_names(program: str, arguments: Sequence[Word]) -> Iterator[str | None]:
    """The variables a builtin sets (None for a name only known when it runs): `export PS4=x` sets PS4."""
    named: Sequence[Word | None] = []
    if program in _DECLARES:
        named = [word for word in arguments if not word.value.startswith(("-", "+"))]
    elif program in _OPTIONS:  # `read NAME`, `read -a NAME`, `mapfile NAME`, `printf -v NAME`, `wait -p NAME`
        grammar, option, operands, _ = _OPTIONS[program]
        parsed = parse_options(grammar, arguments)
        if option or operands != 0:
            named = [*parsed.values(option), *parsed.operands[:operands], *parsed.unread]
    elif program in ("getopts", "for"):  # `getopts spec NAME`; `for NAME in ...` is a segment too
        named = arguments[program == "getopts" :][:1]
    for word in named:
        if word is not None:
            yield variable_name(word)


def _builtin_kind(program: str, arguments: Sequence[Word]) -> str | None:
    """The problem kind of a builtin that binds code to a name or an event: `hash -p`, `alias`, `mapfile -C`, ..."""
    texts = [word.value for word in arguments]
    if program == "hash" and any("p" in text for text in texts if text.startswith("-")):
        return "rebinds"  # `hash -p /bin/rm ls`: `ls` runs rm
    if program == "alias" and any("=" in word.value or word.literal is None for word in arguments):
        return "rebinds"
    if program == "enable" and any(not re.fullmatch(r"-[aps]+", text) for text in texts):
        return "rebinds"  # `enable -n` lets a program shadow a builtin; `enable -f` loads code
    grammar, _, _, callbacks = _OPTIONS.get(program, (Program(), "", 0, ""))
    if callbacks:
        parsed = parse_options(grammar, arguments)
        if parsed.has(*callbacks.split()) or parsed.unknown or parsed.unread:
            return "runs_later"
    return "runs_code" if program == "fc" else None  # fc runs commands from the history, or an editor
