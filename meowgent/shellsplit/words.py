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

import re
from dataclasses import dataclass

__all__ = ["KINDS", "Problem", "Redirect", "SimpleCommand", "Word", "has_glob", "literal", "program_name", "short"]


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a segment: `text` as written, `literal` its value after quote removal.

    `literal` is None when only running the command would tell the value: it holds an expansion
    (`$x`, a substitution placeholder) or an unquoted glob or brace pattern.
    """

    text: str
    literal: str | None

    @classmethod
    def of(cls, text: str) -> Word:
        """The word written as `text`, with its literal value."""
        return cls(text, literal(text))

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
    """A segment taken apart: leading `NAME=value` assignments, the command and its arguments, redirections."""

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


# ---- what leaves a line's meaning open ----

KINDS: dict[str, str] = {
    # The text cannot be read with confidence.
    "unclosed": "{} is never closed",
    "stray": "{} closes nothing that was opened",
    "no_target": "the redirection {} has no target",
    "block": "{} blocks are not split into commands",
    "too_deep": "{} is nested too deeply to read",
    "heredoc": "the here-document {} cannot be read with confidence",
    "quoting": "{} is read differently by each shell",
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


# ---- literal values ----


def literal(text: str) -> str | None:
    """The value of a word after quote removal, or None when it depends on an expansion or a glob."""
    if _SPECIAL.search(text) is None:
        return text
    value: list[str] = []
    unquoted: list[str] = []  # the unquoted characters, with quoted ones as NUL, to spot globs
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            piece, pos = text[pos + 1 : pos + 2], pos + 2
            quoted = True
        elif char == "'":
            end = text.index("'", pos + 1)
            piece, pos, quoted = text[pos + 1 : end], end + 1, True
        elif char == '"':
            inner, pos = _double_quoted_literal(text, pos)
            if inner is None:
                return None
            piece, quoted = inner, True
        elif text.startswith("$'", pos):
            end = _ansi_c_end(text, pos)
            piece, pos, quoted = _ansi_c_value(text[pos + 2 : end - 1]), end, True
        elif char in "$`":
            return None
        else:
            piece, pos, quoted = char, pos + 1, False
        value.append(piece)
        unquoted.append("\0" * len(piece) if quoted else piece)
    return None if has_glob("".join(unquoted)) else "".join(value)


# Characters that quote, expand or glob; a word without them is its own value.
_SPECIAL = re.compile(r"[\\'\"$`*?\[\]{}]")


def has_glob(unquoted: str) -> bool:
    """Whether bash would expand the word: `*`, `?`, `[...]` or a brace list `{a,b}` / range `{1..3}`.

    `unquoted` has its quoted characters replaced by NUL, which no pattern may span. One pass, no
    backtracking: a regex such as `\\{[^\\0]*(,|\\.\\.)[^\\0]*\\}` takes quadratic time on `{{{{...`.
    It over-approximates (`}{,` counts as a brace list), which only makes a word's value unknown.
    """
    bracket = brace = listed = False  # seen, since the last NUL: `[`; `{`; `{` then `,` or `..`
    previous = ""
    for char in unquoted:
        if char in "*?" or (char == "]" and bracket) or (char == "}" and listed):
            return True
        if char == "\0":
            bracket = brace = listed = False
        elif char == "[":
            bracket = True
        elif char == "{":
            brace = True
        elif brace and (char == "," or (char == "." and previous == ".")):
            listed = True
        previous = char
    return False


def _ansi_c_end(text: str, pos: int) -> int:
    """Where the `$'...'` word starting at `pos` ends (just past its closing quote)."""
    pos += 2
    while text[pos] != "'":
        pos += 2 if text[pos] == "\\" else 1
    return pos + 1


_ANSI_C_ESCAPE = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))", re.DOTALL
)
_ANSI_C_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _ansi_c_value(body: str) -> str:
    """The value of a `$'...'` body, as bash decodes it (`\\x72m` is `rm`)."""

    def decode(match: re.Match[str]) -> str:
        hexa, short_unicode, long_unicode, octal, control, other = match.groups()
        number = hexa or short_unicode or long_unicode
        if number:
            return chr(min(int(number, 16), 0x10FFFF))
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if control:
            return chr(ord(control.upper()) & 0x1F)
        return _ANSI_C_SIMPLE.get(other, other)  # \\ \' \" \? stand for themselves

    return _ANSI_C_ESCAPE.sub(decode, body)


def _double_quoted_literal(text: str, pos: int) -> tuple[str | None, int]:
    """The value of the double-quoted part starting at `pos`, None if it expands anything, and where it ends."""
    value: list[str] = []
    pos += 1
    while text[pos] != '"':
        char = text[pos]
        if char in "$`":
            return None, pos
        if char == "\\" and text[pos + 1] in '$`"\\':
            value.append(text[pos + 1])
            pos += 2
        else:
            value.append(char)
            pos += 1
    return "".join(value), pos + 1
