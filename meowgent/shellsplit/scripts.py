"""What a sed or awk program does besides reading and printing: run commands, or write files.

Both readers are single passes over the program text, so they are linear in its length. Each fails
closed: text it cannot follow counts as running code. They answer only whether the program can run
code or write a file, not what the program means.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SedEffects:
    """Whether a sed program runs commands (`e`, `s///e`, text this reader cannot follow), and files it writes."""

    runs: bool
    writes: tuple[str, ...]


class _Unfollowed(Exception):
    """The program goes where this reader does not follow."""


# ---- sed ----

# Commands that take no argument, or at most a number (`q 5`, `l 70`), up to `;`, `}` or the line's end.
_SED_PLAIN = frozenset("=dDgGhHlLnNpPqQxzF")
_SED_TEXT = frozenset("aic")  # text to the end of the line
_SED_FILE = frozenset("rRwW")  # a file name to the end of the line
_SED_LABEL = frozenset(":btTv")  # a label (or a version) to `;` or the line's end


def sed_effects(script: str) -> SedEffects:
    """What a sed script (GNU syntax) may do besides editing its stream."""
    writes: list[str] = []
    try:
        _SedReader(script, writes).read()
    except (_Unfollowed, IndexError):
        return SedEffects(True, tuple(writes))
    return SedEffects(False, tuple(writes))


class _SedReader:
    def __init__(self, text: str, writes: list[str]) -> None:
        self.text = text
        self.pos = 0
        self.writes = writes

    def read(self) -> None:
        while True:
            self._skip(" \t\n;}")
            if self.pos >= len(self.text):
                return
            if self.text[self.pos] == "#":
                self._to_line_end()
                continue
            self._address()
            self._skip(" \t")
            if self._peek() == ",":
                self.pos += 1
                self._skip(" \t")
                self._address()
            self._skip(" \t")
            if self._peek() == "!":
                self.pos += 1
                self._skip(" \t!")
            self._command(self._take())

    def _command(self, command: str) -> None:
        if command == "{":
            return
        if command == "s":
            self._substitute()
        elif command == "y":
            delimiter = self._take()
            self._delimited(delimiter)
            self._delimited(delimiter)
        elif command in _SED_TEXT:
            self._text_argument()
        elif command in _SED_FILE:
            name = self._to_line_end().strip()
            if command in "wW":
                self.writes.append(name)
        elif command in _SED_LABEL:
            self._until(";\n")
        elif command in _SED_PLAIN:
            self._skip(" \t")
            while self._peek().isdigit():
                self.pos += 1
        else:  # `e` runs a command; anything else is not sed as this reader knows it
            raise _Unfollowed(command)

    def _substitute(self) -> None:
        delimiter = self._take()
        if delimiter in "\n\\":
            raise _Unfollowed(delimiter)
        self._delimited(delimiter)
        self._delimited(delimiter)
        while (flag := self._peek()) and flag in "gpiImM0123456789":
            self.pos += 1
        if flag == "e":
            raise _Unfollowed("s///e")
        if flag == "w":
            self.pos += 1
            self.writes.append(self._to_line_end().strip())

    def _address(self) -> None:
        char = self._peek()
        if char.isdigit():
            while self._peek().isdigit() or self._peek() == "~":
                self.pos += 1
        elif char == "$":
            self.pos += 1
        elif char in "/\\":
            self.pos += 1
            delimiter = "/" if char == "/" else self._take()
            self._delimited(delimiter)
            while self._peek() in ("I", "M"):
                self.pos += 1
        elif char in "+~":  # GNU `addr1,+N` and `addr1,~N`
            self.pos += 1
            while self._peek().isdigit():
                self.pos += 1

    def _delimited(self, delimiter: str) -> None:
        """Skip past the next unescaped `delimiter` (a regex or a replacement)."""
        while (char := self._take()) != delimiter:
            if char == "\\":
                self._take()
            elif char == "\n":
                raise _Unfollowed("newline")

    def _text_argument(self) -> None:
        """`a text`, `a\\` and a line, with backslash-newline continuing the text."""
        while self.pos < len(self.text) and self.text[self.pos] != "\n":
            self.pos += 2 if self.text[self.pos] == "\\" else 1

    def _to_line_end(self) -> str:
        start = self.pos
        end = self.text.find("\n", start)
        self.pos = len(self.text) if end < 0 else end
        return self.text[start : self.pos]

    def _until(self, stops: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] not in stops:
            self.pos += 1

    def _skip(self, chars: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _take(self) -> str:
        char = self.text[self.pos]  # IndexError at the end: the program is cut off
        self.pos += 1
        return char


# ---- awk ----

_AWK_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")
_AWK_PRINTS = frozenset({"print", "printf"})


def awk_runs_or_writes(program: str) -> bool:
    """Whether an awk program may run a command or write a file: `system(...)`, a pipe (`|`), a `>` after
    print, `@load`; a program this reader cannot follow counts too."""
    pos, depth = 0, 0
    operand = False  # whether the last token ends an operand, so a `/` divides rather than starts a regex
    printing = False  # inside a print statement, where `>` at the statement's own depth redirects
    print_depth = 0
    text = program
    while pos < len(text):
        char = text[pos]
        if char in _AWK_WORD:
            end = pos
            while end < len(text) and text[end] in _AWK_WORD:
                end += 1
            word = text[pos:end]
            if word == "system" and text[end:].lstrip(" \t").startswith("("):
                return True
            if word in _AWK_PRINTS:
                printing, print_depth = True, depth
            operand, pos = True, end
            continue
        if char == '"':
            pos = _awk_string_end(text, pos)
            operand = True
            continue
        if char == "/" and not operand:
            pos = _awk_regex_end(text, pos)
            if pos < 0:
                return True
            operand = True
            continue
        if char == "#":
            newline = text.find("\n", pos)
            pos = len(text) if newline < 0 else newline
            continue
        if char == "|" and text.startswith("||", pos):
            pos += 2
            operand = False
            continue
        if char == "|" or char == "@":
            return True  # a pipe to or from a command, a coprocess, or gawk's @load / @include
        if char == ">" and printing and depth == print_depth:
            return True
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            printing = printing and depth >= print_depth and char != "}"
        elif char in ";\n":
            printing = False
        operand = char in ")]$"
        pos += 1
    return False


def _awk_string_end(text: str, pos: int) -> int:
    pos += 1
    while pos < len(text) and text[pos] != '"':
        pos += 2 if text[pos] == "\\" else 1
    return pos + 1


def _awk_regex_end(text: str, pos: int) -> int:
    """Just past the regex starting at `pos`; -1 if it never ends on its line."""
    pos += 1
    in_class = False
    while pos < len(text):
        char = text[pos]
        if char == "\n":
            return -1
        if char == "\\":
            pos += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            return pos + 1
        pos += 1
    return -1
