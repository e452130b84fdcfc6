"""What programs do with their words: the command a wrapper runs, code an option runs, files an option writes.

`read_program("env", words)` reads `env -iu HOME rm x` by env's own option table: it runs `rm x`. It fails
closed: an option a wrapper's table does not know, an option that runs code, an inline program (`python -c`,
`sed 's/x/y/e'`), a program read from the input, a word only known when it runs where an option could stand,
each is a `Problem`.

The boundary: running a file is not a problem (`python x.py`, `make`, `pytest`, `bash build.sh` is
one for bash's own reasons). The file is not on the card either way; what holds there is the OS
sandbox the command runs in, not this reading. Configuration files are files too: `git status` runs
whatever hooks `.git/config` names. What a line's own text says is what this module reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from meowgent.shellsplit.options import Program
from meowgent.shellsplit.readers import READERS
from meowgent.shellsplit.reading import Found, Reading, apply_table
from meowgent.shellsplit.reading import Write as Write  # what callers of read_program read
from meowgent.shellsplit.tables import TABLES
from meowgent.shellsplit.words import Word, program_name
from meowgent.shellsplit.words import runs_value as runs_value

PROGRAMS: dict[str, Program] = TABLES
"""Option tables by program; a program that `READERS` names is read by that code too, after its table."""


def read_program(program: str, arguments: Sequence[Word]) -> Reading:
    """What `program` (a base name such as `sudo`) does with `arguments`; see the module docstring."""
    name, found = _family(program), Found(program)
    table, reader = PROGRAMS.get(name), READERS.get(name)
    if table is not None:
        apply_table(found, table, arguments)
    if reader is not None:  # what the table cannot say: `uv run CMD`, a sed script, `make SHELL=...`, `vim +cmd`
        reader(found, arguments)
    return found.reading()


MAX_NESTED = 8
"""Wrappers inside wrappers, or texts run inside texts, read before the line counts as too deep to read."""


def invocations(words: Sequence[Word]) -> Iterator[Sequence[Word]]:
    """The command with its arguments, then again the command each wrapper runs (`sudo env rm x`: three).

    The wrappers' own option tables (`tables`) say where their command starts: `env -iu HOME rm x`
    runs `rm x`. Past `MAX_NESTED` wrappers it stops; the reader marks such a line hidden.
    """
    for _ in range(MAX_NESTED):
        if not words:
            return
        yield words
        program = program_name(words[0])
        if program is None:
            return
        words = read_program(program, words[1:]).command


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
