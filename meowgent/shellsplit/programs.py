"""What a simple command runs: the command a wrapper runs, code an option runs, files an option writes.

`read_program("env", words)` reads `env -iu HOME rm x` by env's own option table: it runs `rm x`. It fails
closed: an option a wrapper's table does not know, an option that runs code, an inline program (`python -c`,
`sed 's/x/y/e'`), a program read from the input, a word only known when it runs where an option could stand,
each is a `Problem`. `inspect_segment` reads a whole segment as bash would run it (its assignments, then each
wrapper's command in turn) and yields its `Problem`s and, in the order bash meets them, the texts (`RunsText`) and
commands (`Starts`) the reader reads as commands of their own.

The boundary: running a file is not a problem (`python x.py`, `make`, `pytest`, `bash build.sh` is
one for bash's own reasons). The file is not on the card either way; what holds there is the OS
sandbox the command runs in, not this reading. Configuration files are files too: `git status` runs
whatever hooks `.git/config` names. What a line's own text says is what this module reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from meowgent.shellsplit.options import Parsed, Program
from meowgent.shellsplit.readers import READERS
from meowgent.shellsplit.reading import Found, RunsText, Starts, is_assignment
from meowgent.shellsplit.reading import Write as Write  # what callers of read_program read
from meowgent.shellsplit.tables import TABLES
from meowgent.shellsplit.words import SUBSCRIPTED, Problem, SimpleCommand, Word, program_name, sets_running_variable
from meowgent.shellsplit.words import runs_value as runs_value

PROGRAMS: dict[str, Program] = TABLES
"""Option tables by program; a program that `READERS` names is read by that code too, after its table."""


def read_program(program: str, arguments: Sequence[Word]) -> Found:
    """What `program` (a base name such as `sudo`) does with `arguments`: read by its table, then by its reader if it
    has one, then by its subcommand's (`git clone`: `git.clone`; `uv tool run`: `uv.tool.run`), and so on."""
    found, name, words, subcommand = Found(program), _family(program), tuple(arguments), False
    while True:
        table = TABLES.get(name)
        parsed = Parsed((), words, words=words) if table is None else found.read(table, words)
        if table is not None:
            _by_table(found, table, parsed)
        if reader := READERS.get(name):  # what a table cannot say: a sed script, `make SHELL=...`, `find -exec`
            reader(found, parsed)
        if subcommand:  # its table lists only the options that run code or write: an unread word may be one
            for word in parsed.unread:
                found.problem("unknown_word", word.text)
        first = parsed.operands[0].literal if parsed.operands and not found.blocked else None
        sub = f"{name}.{first}"
        if first is None or (table is not None and table.wraps) or (sub not in TABLES and sub not in READERS):
            return found
        name, words, subcommand = sub, parsed.operands[1:], True


def _by_table(found: Found, table: Program, parsed: Parsed) -> None:
    """What an interpreter reads from its input, and the command a wrapper runs (none when not known)."""
    reads_input = not parsed.operands or parsed.operands[0].literal == "-"
    if table.input and reads_input and not found.blocked:
        found.problem("runs_input", "")
    if not table.wraps or found.blocked or len(parsed.operands) < table.operands:
        return
    operands = list(parsed.operands[table.operands :])
    if table.assignments:
        while operands and is_assignment(operands[0]):
            found.assignment(operands.pop(0))
    found.command = tuple(operands)


MAX_NESTED = 8
"""Wrappers inside wrappers, or texts run inside texts, read before the line counts as too deep to read."""


def invocations(words: Sequence[Word]) -> Iterator[Sequence[Word]]:
    """The command with its arguments, then again the command each wrapper runs (`sudo env rm x`: three).

    The wrappers' own option tables (`tables`) say where their command starts: `env -iu HOME rm x`
    runs `rm x`. Past `MAX_NESTED` wrappers it stops; the reader marks such a line hidden.
    """
    return (invocation for invocation, _ in _readings(words))


def _readings(words: Sequence[Word]) -> Iterator[tuple[Sequence[Word], Found | None]]:
    """Each invocation with its reading; None, and the last, where only running it would tell the program."""
    for _ in range(MAX_NESTED):
        if not words:
            return
        program = program_name(words[0])
        reading = None if program is None else read_program(program, words[1:])
        yield words, reading
        if reading is None:
            return
        words = reading.command


Finding = Problem | RunsText | Starts


def inspect_segment(parsed: SimpleCommand) -> Iterator[Finding]:
    """What the segment leaves open, and what it hands on, in order; wrappers are followed to `MAX_NESTED`."""
    for word in parsed.assignments:
        if SUBSCRIPTED.match(word.text):
            yield Problem("subscript", word.text)
        if sets_running_variable(word):
            yield Problem("variable", word.text)
    levels = 0  # read lazily: after xargs, what its command runs is not read here
    for words, reading in _readings(parsed.words):
        levels += 1
        if reading is None:
            yield Problem("unknown_command", words[0].text)
            return
        yield from reading.problems
        yield from reading.handed
        if reading.adds_input and reading.command:  # xargs: the command gets more words from the input
            yield Starts((*reading.command, Word("...", "...")))
            return
    if levels == MAX_NESTED:
        yield Problem("too_many", " ".join(word.text for word in parsed.words))


def _family(program: str) -> str:
    """The name programs of one family share: `python3.12` and `pypy3` are python, `gawk` is awk, `nvim` is vim."""
    family = _FAMILIES.fullmatch(program)
    return family.lastgroup or program if family else program


_FAMILIES = re.compile(
    r"(?P<python>i?python[0-9.]*|pypy[0-9.]*)|(?P<perl>perl[0-9.]*)|(?P<ruby>ruby[0-9.]*)|(?P<node>nodejs|node|ts-node|tsx)"
    r"|(?P<php>php[0-9.]*)|(?P<lua>lua(?:jit|[0-9.]*))|(?P<awk>[gmn]?awk)|(?P<vim>n?vim?|view|vimdiff|ex|rvim|gvim)"
    r"|(?P<tclsh>tclsh[0-9.]*|wish[0-9.]*)|(?P<sqlite3>sqlite3?)|(?P<sed>gsed)|(?P<proxychains>proxychains4?)"
    r"|(?P<conda>micromamba|mamba)|(?P<pwsh>pwsh|powershell)"
)
