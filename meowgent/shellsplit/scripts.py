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
            writes.append((flag[1:] or command.group("name") or "").strip())  # `w` without a file: sed refuses it
        at = command.end()
    return SedEffects(False, tuple(writes))


# ---- awk ----

# One awk token: a name or number, a string (its end may be missing), a comment, `||`, or any other character.
_AWK_TOKEN = re.compile(
    r'(?P<word>\w+)|(?P<string>"(?:[^"\\]|\\.)*"?)|(?P<comment>#[^\n]*)|(?P<or>\|\|)|.', re.DOTALL | re.ASCII
)
# A regex literal: escapes, bracket classes (where `/` does not end it), anything else but a line break.
_AWK_REGEX = re.compile(r"/(?:\\.|\[(?:\\.|[^]\\\n])*\]|[^/\\\n[])*/", re.DOTALL)


def awk_runs_or_writes(program: str) -> bool:
    """Whether an awk program may run a command or write a file: `system(...)`, a pipe (`|`), a `>` after
    print, `@load`; a program this reader cannot follow counts too."""
    pos, depth = 0, 0
    operand = False  # whether the last token ends an operand, so a `/` divides rather than starts a regex
    printing, print_depth = False, 0  # inside a print statement, where `>` at the statement's own depth redirects
    while pos < len(program):
        if program[pos] == "/" and not operand:
            regex = _AWK_REGEX.match(program, pos)
            if regex is None:
                return True
            pos, operand = regex.end(), True
            continue
        token = _AWK_TOKEN.match(program, pos)
        assert token is not None  # its last alternative matches any character
        pos, text = token.end(), token.group()
        if token.lastgroup == "word":
            if text == "system" and program[pos:].lstrip(" \t").startswith("("):
                return True
            if text in ("print", "printf"):
                printing, print_depth = True, depth
            operand = True
        elif token.lastgroup in ("string", "or"):
            operand = token.lastgroup == "string"
        elif text in "|@" and token.lastgroup is None:
            return True  # a pipe to or from a command, a coprocess, or gawk's @load / @include
        elif text == ">" and printing and depth == print_depth:
            return True
        elif token.lastgroup is None:
            depth += (text in "([{") - (text in ")]}")
            printing = printing and text not in ";\n" and (text not in ")]}" or (depth >= print_depth and text != "}"))
            operand = text in ")]$"
    return False
