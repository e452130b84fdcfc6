"""What a sed or awk program does besides reading and printing: run commands, or write files.

Both readers are single passes over the program text (sed's: one regex match a command), so they are
linear in its length. Each fails closed: text it cannot follow counts as running code. They answer only
whether the program can run code or write a file, not what the program means.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SedEffects:
    """Whether a sed program runs commands (`e`, `s///e`, text this reader cannot follow), and files it writes."""

    runs: bool
    writes: tuple[str, ...]


# ---- sed ----


def _delimited(name: str) -> str:
    """A regex or replacement up to the next unescaped delimiter, which the group `name` caught."""
    return rf"(?:(?!(?P={name}))[^\\\n]|\\.)*(?P={name})"


def _address(name: str) -> str:
    r"""A line number (`1`, `0~2`), `$`, a regex (`/x/I`, `\%x%`) or GNU's `+N` / `~N`."""
    return rf"(?:[0-9][0-9~]*|\$|/(?:[^/\\\n]|\\.)*/[IM]*|\\(?P<{name}>[^\n\\]){_delimited(name)}[IM]*|[+~][0-9]*)"


# One command (GNU syntax) after its separators, or the end. Its alternatives start with different characters
# and their repeats cannot overlap, so a match (or a failure: text it does not follow) takes one pass.
_SED_COMMAND = re.compile(
    rf"""[ \t\n;}}]*(?:
        \#[^\n]* | \Z
      | (?:{_address("a")}(?:[ \t]*,[ \t]*{_address("b")})?)?[ \t]*(?:![ \t!]*)?
        (?:\{{
          | s(?P<s>[^\n\\]){_delimited("s")}{_delimited("s")}[gpiImM0-9]*(?P<flag>[ew][^\n]*)?
          | y(?P<y>[^\n\\]){_delimited("y")}{_delimited("y")}
          | [aic](?:[^\\\n]|\\.)*
          | (?P<file>[rRwW])(?P<name>[^\n]*)
          | [:btTv][^;\n]*
          | [=dDgGhHlLnNpPqQxzF][ \t]*[0-9]*
        )
    )""",
    re.VERBOSE | re.DOTALL,
)


def sed_effects(script: str) -> SedEffects:
    """What a sed script (GNU syntax) may do besides editing its stream: `e` and `s///e` run commands."""
    writes: list[str] = []
    at = 0
    while at < len(script):
        command = _SED_COMMAND.match(script, at)
        if command is None:
            return SedEffects(True, tuple(writes))  # `e`, or text this reader does not follow
        flag, file = command.group("flag") or "", command.group("file") or ""
        if flag.startswith("e"):
            return SedEffects(True, tuple(writes))
        if flag.startswith("w") or file in ("w", "W"):
            writes.append((flag[1:] or command.group("name")).strip())
        at = command.end()
    return SedEffects(False, tuple(writes))


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
