"""What a finished segment runs besides itself, and what in it leaves the line's meaning open.

`inspect_segment` reads one simple command as bash would run it (assignments, builtins that evaluate values
or bind code, texts run as command lines, wrappers through their tables) and yields `Problem`s and, in the
order bash meets them, the texts (`RunsText`) and commands (`Starts`) the reader reads as commands of their own
(`reading.Found` gathers them in that order).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from meowgent.shellsplit.options import Program, parse_options
from meowgent.shellsplit.programs import MAX_NESTED, read_program
from meowgent.shellsplit.reading import RunsText, Starts
from meowgent.shellsplit.words import Problem, SimpleCommand, Word, program_name, sets_running_variable

Finding = Problem | RunsText | Starts


def inspect_segment(parsed: SimpleCommand) -> Iterator[Finding]:
    """What the segment leaves open, and what it hands on, in order; wrappers are followed to `MAX_NESTED`."""
    for word in parsed.assignments:
        if _SUBSCRIPTED.match(word.text):
            yield Problem("subscript", word.text)
        if sets_running_variable(word):
            yield Problem("variable", word.text)
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
        yield from reading.handed
        if reading.adds_input and reading.command:  # xargs: the command gets more words from the input
            yield Starts(reading.command, " ...")
            return
        words = reading.command
    yield Problem("too_many", " ".join(word.text for word in parsed.words))


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
    # `declare -i` evaluates values as arithmetic, `-n` makes a name stand for another (`-ix`, `+n` too)
    if program in _DECLARES and any(
        text[:1] in "-+" and text[1:].isalpha() and set(text) & {"i", "n"} for text in texts
    ):
        yield Problem("evaluates", snippet)
    grammar, option, operands, callbacks = _OPTIONS.get(program, (Program(), "", 0, ""))
    parsed = parse_options(grammar, arguments)
    # the variables it sets: `export PS4=x`, `read -a NAME`, `mapfile NAME`, `printf -v NAME`, `getopts spec NAME`
    named: Sequence[Word | None] = []
    if program in _DECLARES:
        named = [word for word in arguments if not word.value.startswith(("-", "+"))]
    elif option or operands != 0:
        named = [*parsed.values(option), *parsed.operands[:operands], *parsed.unread]
    elif program in ("getopts", "for"):  # `for NAME in ...` is a segment too
        named = arguments[program == "getopts" :][:1]
    if any(word is not None and sets_running_variable(word) for word in named):
        yield Problem("variable", snippet)
    if (
        (program == "hash" and any("p" in text for text in texts if text.startswith("-")))  # `hash -p /bin/rm ls`
        or (program == "alias" and any("=" in word.value or word.literal is None for word in arguments))
        or (program == "enable" and any(not re.fullmatch(r"-[aps]+", text) for text in texts))  # `-n`, `-f` loads
    ):
        yield Problem("rebinds", snippet)
    if callbacks and (parsed.has(*callbacks.split()) or parsed.unknown or parsed.unread):
        yield Problem("runs_later", snippet)  # `mapfile -C`, `complete -C`, `bind -x`
    if program == "fc":
        yield Problem("runs_code", snippet)  # fc runs commands from the history, or an editor


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
