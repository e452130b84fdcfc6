"""The words of a shell command line, their values after quote removal, and what leaves a line's meaning open.

`Word` is one word as written and its literal value (None when only running the line would tell: an
expansion, a substitution, a glob); `SimpleCommand` is a segment taken apart into its assignments, words
and redirections (`Redirect`), and `program_name` the program its command word runs. `Problem` is one
reason a line's meaning is not pinned down by its text: a stable `kind` code and the `snippet` of the
line it is about, so a sentence can be worded from the code in any language; `str(problem)` is the
English sentence fragment the verdict's reason uses.

Everything here is linear in the length of its input.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KINDS", "Problem", "Redirect", "SimpleCommand", "Word", "program_name", "short"]


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a segment: `text` as written, `literal` its value after quote removal.

    `literal` is None when only running the command would tell the value: it holds an expansion
    (`$x`, a substitution placeholder) or an unquoted glob or brace pattern.
    """

    text: str
    literal: str | None

    @property
    def value(self) -> str:
        """The literal value where there is one, else the text as written (for matching and showing)."""
        return self.text if self.literal is None else self.literal


def program_name(word: Word) -> str | None:
    """The base name of the program a command word runs (`/bin/rm` gives `rm`), None if only running it would tell."""
    if word.literal is None:
        return None
    return word.literal.rpartition("/")[2] or None


_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection such as `2>&1` or `> out.txt`; `operator` keeps its file-descriptor number."""

    operator: str
    target: Word

    @property
    def writes(self) -> bool:
        """Whether it writes to a file (an unknown target counts); duplicating a descriptor does not."""
        operator = self.operator.lstrip("0123456789")
        target = self.target.literal
        if operator == ">&":  # `>&2` duplicates a descriptor, but `>& name` writes a file
            return target is None or not (target.isdigit() or target == "-")
        return operator in _WRITE_OPERATORS and target not in _HARMLESS_TARGETS


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """A segment taken apart: leading `NAME=value` assignments, the command and its arguments, redirections.

    `text` is the segment as shown and matched by rules: its parts as written, in order, with each
    substitution as a placeholder (`echo $(...)`).
    """

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    text: str


# ---- what leaves a line's meaning open ----

KINDS: dict[str, str] = {
    # The text cannot be read with confidence.
    "syntax": "{} is not bash that Meowgent can read",
    "grammar": "{} is a part of bash that Meowgent does not read",
    "block": "{} blocks are not split into commands",
    "too_deep": "{} is nested too deeply to read",
    "heredoc": "the here-document {} expands its text, which can run commands",
    "quoting": "{} is read differently by each shell",
    "process": "the process substitution {} hands a command's output to a program as a file, which may run it",
    # Values that bash evaluates as code.
    "expansion": "the expansion {} can run code hidden in a variable's value",
    "arithmetic": "the arithmetic {} can run code hidden in a variable's value",
    "subscript": "the array subscript in {} can run code hidden in a variable's value",
    "evaluates": "{} evaluates values as arithmetic or names",
    "escapes": "the $'...' word {} spells its text in escapes",
    # Commands that are not in the text, or not yet.
    "unknown_command": "the command {} is only known when it runs",
    "runs_text": "{} runs a text as a new command line",
    "unknown_text": "{} runs a text that is only known when it runs",
    "runs_file": "{} runs the commands in a file",
    "runs_input": "{} runs the commands it reads from its input",
    "runs_later": "{} sets code that bash runs later",
    "variable": "{} sets a variable whose value bash or a program runs, or that picks which program a name runs",
    "rebinds": "{} changes what a command name runs",
    "defines": "{} defines a function (or an array), which changes what a name runs",
    # Programs that run code their words do not show.
    "option": "{} is an option Meowgent does not know for this program, so it can't tell what runs",
    "runs_code": "{} makes the program run code Meowgent can't read",
    "unknown_word": "{} is only known when it runs, and could be an option that runs code",
    "too_many": "{} nests commands too deeply to read",
}
"""Each kind of problem, as an English sentence fragment around its snippet."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a line's meaning is not pinned down by its text: a kind from `KINDS` and the snippet it is about."""

    kind: str
    snippet: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown problem kind {self.kind!r}")

    def __str__(self) -> str:
        return KINDS[self.kind].format(f"`{self.snippet}`")


def short(text: str, limit: int = 40) -> str:
    """`text` cut to `limit` characters for a sentence, with `...` where it was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
