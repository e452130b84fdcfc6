"""What a finished segment runs besides itself, and what in it leaves the line's meaning open.

`inspect_segment` reads one simple command as bash would run it: its assignments (`PS4=...`), the
builtins that evaluate values or bind code to names (`let`, `declare -i`, `hash -p`, `alias`, `trap`),
the texts it runs as command lines (`eval`, `bash -c`), the files or input it runs (`source f`, `sh`),
and, through each program's table (`programs`), the wrappers and the commands they run in turn. It
yields `Problem`s and, in the order bash would meet them, the texts (`RunsText`) and commands (`Starts`)
it hands on, which the reader reads as commands of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from meowgent.shellsplit.options import Options, parse_options
from meowgent.shellsplit.programs import MAX_NESTED, read_program
from meowgent.shellsplit.words import Problem, SimpleCommand, Word, program_name, runs_value, short, variable_name


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
            yield _note("unknown_command", words[0].text)
            return
        arguments = words[1:]
        yield from _builtin(program, arguments)
        if program in _RUNS_TEXT_OR_FILE:
            yield from _runs(program, arguments)
            return
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
    yield _note("too_many", " ".join(word.text for word in parsed.words))


def _note(kind: str, snippet: str) -> Problem:
    return Problem(kind, short(snippet))


def _assignment(word: Word) -> Iterator[Problem]:
    if _SUBSCRIPTED.match(word.text):
        yield _note("subscript", word.text)
    name = variable_name(word)
    if name is None or runs_value(name):
        yield _note("variable", word.text)


def _builtin(program: str, arguments: Sequence[Word]) -> Iterator[Problem]:
    """What a bash builtin leaves open: values it evaluates, variables it sets, code it binds to a name."""
    if program not in _BUILTINS:
        return  # most commands: no need to look at their words (a 1 MB line of them, say)
    texts = [argument.value for argument in arguments]
    snippet = " ".join([program, *texts])
    if program == "let" or (program == "[[" and _ARITHMETIC_TESTS.intersection(texts)):
        yield _note("arithmetic", snippet)
    if program in _NAMES_VARIABLES and any(_SUBSCRIPTED.match(text) for text in texts):
        yield _note("subscript", snippet)
    if program in _DECLARES and any(_evaluates(text) for text in texts):
        yield _note("evaluates", snippet)
    for name in _assigned_names(program, arguments):
        if name is None or runs_value(name):
            yield _note("variable", snippet)
    kind = _builtin_kind(program, arguments)
    if kind is not None:
        yield _note(kind, snippet)


def _runs(program: str, arguments: Sequence[Word]) -> Iterator[Finding]:
    """`eval`, `trap`, a shell, `source`: the texts they run as command lines, or the file or input."""
    if program == "eval":
        yield _note("runs_text", "eval")
        yield RunsText(tuple(arguments), "eval")
    elif program == "trap":
        yield from _trap(arguments)
    elif program in _SHELLS:
        yield from _shell(program, arguments)
    else:
        yield _note("runs_file", " ".join([program, *(argument.value for argument in arguments)]))


def _trap(arguments: Sequence[Word]) -> Iterator[Finding]:
    """`trap 'text' SIGNAL` runs the text later; `trap - SIG`, `trap '' SIG` and `trap -p` set no code."""
    action = [word for word in arguments if not word.value.startswith("-")][:1]
    if action and action[0].value not in ("", "-"):
        yield _note("runs_later", "trap " + action[0].text)
        yield RunsText(tuple(action), "trap")


def _shell(program: str, arguments: Sequence[Word]) -> Iterator[Finding]:
    """`bash -c 'text'` runs the text as a command line, `bash file` a file, `curl x | sh` what it reads."""
    has_c, skip = False, False
    for index, word in enumerate(arguments):
        text = word.value
        if skip:
            skip = False
        elif text in ("-o", "+o", "-O", "+O"):
            skip = True
        elif text.startswith(("-", "+")) and text not in ("-", "--"):
            has_c |= not text.startswith("--") and "c" in text
        elif has_c:
            yield _note("runs_text", f"{program} -c")
            yield RunsText(tuple(arguments[index : index + 1]), f"{program} -c")
            return
        else:  # a script: shell commands a deny rule cannot see
            yield _note("runs_file", f"{program} {text}")
            return
    # `printf 'rm x' | sh`: the commands come from another program's output.
    yield _note("runs_input", program)


# ---- builtins that evaluate values or bind code ----

_SUBSCRIPTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
# Builtins that take variable names, where `a[$x]` evaluates $x as arithmetic.
_NAMES_VARIABLES = frozenset(
    {"declare", "typeset", "local", "readonly", "export", "unset", "read", "mapfile", "readarray", "printf"}
    | {"test", "[", "[[", "wait", "let"}
)
_DECLARES = frozenset({"declare", "typeset", "local", "readonly", "export"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
# Commands that run a text as a command line, or a file: nothing after them is read as a wrapper.
_RUNS_TEXT_OR_FILE = _SHELLS | {"eval", "trap", "source", "."}

# How the builtins that set variables read their options: their operands are the names they set.
_READ = Options(flags="ers", values="adinNptu")
_MAPFILE = Options(flags="t", values="dnOsuCc")
_COMPLETE = Options(flags="abcdefgjksuvDEIpr", values="oAGWFCXPS")
_BIND = Options(flags="lpsvPSVX", values="mqufrx")
# Builtins that set variables: how they read their options, the option naming a variable, and how many
# of their operands are variable names.
_SETS_NAMED = {
    "read": (_READ, "-a", None),
    "mapfile": (_MAPFILE, "", 1),
    "readarray": (_MAPFILE, "", 1),
    "printf": (Options(values="v"), "-v", 0),
    "wait": (Options(flags="nf", values="p"), "-p", 0),
}


_BUILTINS = (
    _NAMES_VARIABLES
    | _SETS_NAMED.keys()
    | {"getopts", "for", "hash", "alias", "enable", "mapfile", "readarray", "bind", "compgen", "complete", "fc"}
)


def _evaluates(option: str) -> bool:
    """`declare -i` evaluates values as arithmetic, `-n` makes a name stand for another (`-ix`, `+n` too)."""
    return option[:1] in ("-", "+") and option[1:].isalpha() and ("i" in option or "n" in option)


def _assigned_names(program: str, arguments: Sequence[Word]) -> Iterator[str | None]:
    """The variables a builtin sets (None for a name only known when it runs): `export PS4=x` sets PS4."""
    if program in _DECLARES:
        named = [word for word in arguments if not word.value.startswith(("-", "+"))]
    elif program in _SETS_NAMED:  # `read NAME`, `read -a NAME`, `mapfile NAME`, `printf -v NAME`, `wait -p NAME`
        grammar, option, operands = _SETS_NAMED[program]
        parsed = parse_options(grammar, arguments)
        named = [value for value in parsed.values(option) if value is not None]
        named += [*parsed.operands[:operands], *parsed.unread]
    elif program in ("getopts", "for"):  # `getopts spec NAME`; `for NAME in ...` is a segment too
        named = list(arguments[program == "getopts" :][:1])
    else:
        return
    for word in named:
        yield variable_name(word)


def _builtin_kind(program: str, arguments: Sequence[Word]) -> str | None:
    """The problem kind of a builtin that binds code to a name or an event: `hash -p`, `alias`, `mapfile -C`, ..."""
    texts = [word.value for word in arguments]
    options = [text for text in texts if text.startswith("-")]
    if program == "hash" and any("p" in option for option in options):
        return "rebinds"  # `hash -p /bin/rm ls`: `ls` runs rm
    if program == "alias" and any(
        "=" in text or word.literal is None for text, word in zip(texts, arguments, strict=True)
    ):
        return "rebinds"
    if program == "enable" and any(not re.fullmatch(r"-[aps]+", text) for text in texts):
        return "rebinds"  # `enable -n` lets a program shadow a builtin; `enable -f` loads code
    callbacks = {"mapfile": (_MAPFILE, "-C"), "readarray": (_MAPFILE, "-C"), "bind": (_BIND, "-x")}
    callbacks |= dict.fromkeys(("compgen", "complete"), (_COMPLETE, "-C -F"))
    if program in callbacks:
        grammar, names = callbacks[program]
        parsed = parse_options(grammar, arguments)
        if parsed.has(*names.split()) or parsed.unknown or parsed.unread:
            return "runs_later"
    if program == "fc":
        return "runs_code"  # it runs commands from the history, or an editor
    return None
