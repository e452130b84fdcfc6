"""Split a shell command line into the simple commands bash would run, so each can be judged on its own.

`split_command("ls && rm -rf x")` gives the segments `ls` and `rm -rf x`. Separators (`&&`, `||`, `;`,
`|`, `|&`, `&`, newlines), subshells `( ... )` and groups `{ ...; }` only separate. Command substitution
(`$( ... )`, backquotes) and process substitution (`<( ... )`, `>( ... )`) run commands too: their inner
commands become segments of their own, and the outer segment shows a placeholder such as `$(...)`.
Segments come in the order bash starts them: a substitution before the command that uses its output.

Quoting follows bash: single quotes are literal; double quotes still run `$( ... )` and backquotes; a
backslash escapes one character; `#` starts a comment only at the start of a word. Keywords that open
or close a block (`if`, `then`, `do`, `done`, `{`, `}`, `!`, ...) are dropped from the start of a
segment, so `if true; then rm x; fi` gives `true` and `rm x`.

What this parser cannot read with confidence makes the result incomplete instead of guessing:
unbalanced quotes or brackets, here-documents (`<<`), `case` blocks, function definitions, arrays.
A caller must never auto-allow an incomplete result; the segments it does hold were still seen,
so a deny on one of them still applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Redirect",
    "SimpleCommand",
    "SplitResult",
    "Word",
    "command_word",
    "parse_segment",
    "split_command",
]


@dataclass(frozen=True, slots=True)
class SplitResult:
    """The simple commands of a command line; `complete` is False when part of it could not be read."""

    segments: tuple[str, ...]
    complete: bool = True
    problem: str = ""
    """Why the command is incomplete, as a sentence fragment for a person; empty when complete."""


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a segment: `text` as written, `literal` its value after quote removal.

    `literal` is None when only running the command would tell the value: it holds an expansion
    (`$x`, a substitution placeholder) or an unquoted glob or brace pattern.
    """

    text: str
    literal: str | None


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


def split_command(command: str) -> SplitResult:
    """The simple commands in `command`, substitutions included; see the module docstring for the rules."""
    segments: list[str] = []
    try:
        _Parser(command, segments).parse_list(closer="")
    except _Unparsable as exc:
        return SplitResult(tuple(segments), complete=False, problem=str(exc))
    except RecursionError:
        return SplitResult(tuple(segments), complete=False, problem="it is nested too deeply to read")
    return SplitResult(tuple(segments))


def parse_segment(segment: str) -> SimpleCommand:
    """Take one segment (as `split_command` gives it) apart; ValueError if it is not one simple command."""
    parser = _Parser(segment, [])
    assignments: list[Word] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    try:
        while (token := parser.next_token()) is not None:
            if isinstance(token, _Redirection):
                redirects.append(Redirect(token.operator, _word(token.target)))
            elif isinstance(token, _Operator):
                raise ValueError(f"{segment!r} is more than one simple command (it has {token.text!r})")
            elif not words and _ASSIGNMENT.match(token):
                assignments.append(_word(token))
            else:
                words.append(_word(token))
    except _Unparsable as exc:
        raise ValueError(f"{segment!r} cannot be read: {exc}") from None
    return SimpleCommand(tuple(assignments), tuple(words), tuple(redirects))


def command_word(segment: str) -> str | None:
    """The command a segment runs (`FOO=1 "rm" x 2>&1` gives `rm`); None if none, or only known when it runs."""
    try:
        words = parse_segment(segment).words
    except ValueError:
        return None
    return words[0].literal if words else None


# ---- the parser ----

_BLANKS = " \t"
_METACHARACTERS = frozenset(" \t\n|&;()<>")
# Longest first, so `&&` is not read as `&` twice.
_SEPARATORS = (";;&", "&&", "||", ";;", ";&", "|&", ";", "|", "&", "\n")
_REDIRECTIONS = ("&>>", "<<<", "<<-", "&>", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_OPERATORS = tuple(sorted(_SEPARATORS + _REDIRECTIONS, key=len, reverse=True))
_HEREDOCS = frozenset({"<<", "<<-"})

# Reserved words that only open, continue or close a block: the command after them is what runs.
_SKIPPED_KEYWORDS = frozenset({"!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "time"})
# Reserved words whose grammar this parser does not follow; guessing there could hide a command.
_UNREAD_KEYWORDS = frozenset({"case", "esac", "select", "function", "coproc"})

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_COMMAND_PLACEHOLDER = "$(...)"


class _Unparsable(Exception):
    """The command cannot be read with confidence; the message says why."""


@dataclass(frozen=True, slots=True)
class _Operator:
    text: str


@dataclass(frozen=True, slots=True)
class _Redirection:
    operator: str
    target: str

    def __str__(self) -> str:
        # One spelling per redirection, so rule patterns need not guess the spacing: `2>&1`, `> out`.
        joiner = "" if self.operator.endswith("&") else " "
        return f"{self.operator}{joiner}{self.target}"


class _Parser:
    """Recursive descent over the text; every simple command it finishes is appended to `segments`."""

    def __init__(self, text: str, segments: list[str]) -> None:
        self.text = text
        self.pos = 0
        self.segments = segments

    def parse_list(self, closer: str) -> None:
        """Read commands up to `closer` (`)` ends a substitution) or, when it is empty, to the end of the text."""
        words: list[str] = []
        opened: list[str] = []  # the `(` and `{` still open inside this list
        try:
            while (token := self.next_token()) is not None:
                if isinstance(token, _Redirection):
                    words.append(str(token))
                elif isinstance(token, _Operator):
                    if token.text == "(" and words:
                        raise _Unparsable("a '(' inside a command (a function definition or an array) is not split")
                    self._flush(words)
                    if token.text == "(":
                        opened.append("(")
                    elif token.text == ")" and not opened and closer == ")":
                        return
                    elif token.text == ")":
                        _close(opened, "(")
                elif words:
                    words.append(token)
                else:
                    self._command_start(token, words, opened)
            if closer:
                raise _Unparsable(f"a '$(' or '<(' is never closed with {closer!r}")
            if opened:
                raise _Unparsable(f"a {opened[-1]!r} is never closed")
        finally:  # also on error: the words read so far are still worth judging
            self._flush(words)

    def _command_start(self, word: str, words: list[str], opened: list[str]) -> None:
        if word in _SKIPPED_KEYWORDS:
            return
        if word in _UNREAD_KEYWORDS:
            raise _Unparsable(f"'{word}' blocks are not split into commands")
        if word == "{":
            opened.append("{")
        elif word == "}":
            _close(opened, "{")
        else:
            words.append(word)

    def _flush(self, words: list[str]) -> None:
        if words:
            self.segments.append(" ".join(words))
            words.clear()

    # ---- tokens ----

    def next_token(self) -> str | _Operator | _Redirection | None:
        """The next word, operator (`(` and `)` included) or redirection; None at the end of the text."""
        self._skip_blanks()
        if self.pos < len(self.text) and self.text[self.pos] == "#":  # a `#` starting a word starts a comment
            end = self.text.find("\n", self.pos)
            self.pos = len(self.text) if end < 0 else end
        if self.pos >= len(self.text):
            return None
        if self.text.startswith(("(", ")"), self.pos):
            self.pos += 1
            return _Operator(self.text[self.pos - 1])
        operator = self._operator()
        if operator in _REDIRECTIONS:
            return self._redirection(operator)
        if operator:
            return _Operator(operator)
        word = self._word()
        if word.isdigit() and self.text.startswith(("<", ">"), self.pos):
            return self._redirection(word + self._operator())  # `2>`: the number names a file descriptor
        return word

    def _operator(self) -> str:
        if self._at_process_substitution():
            return ""
        for operator in _OPERATORS:
            if self.text.startswith(operator, self.pos):
                self.pos += len(operator)
                return operator
        return ""

    def _redirection(self, operator: str) -> _Redirection:
        if operator.lstrip("0123456789") in _HEREDOCS:
            raise _Unparsable("here-documents (<<) are not split into commands")
        self._skip_blanks()
        if self.pos >= len(self.text) or (
            self.text[self.pos] in _METACHARACTERS and not self._at_process_substitution()
        ):
            raise _Unparsable(f"the redirection {operator!r} has no target")
        return _Redirection(operator, self._word())

    def _at_process_substitution(self) -> bool:
        return self.text.startswith(("<(", ">("), self.pos)

    def _skip_blanks(self) -> None:
        while self.pos < len(self.text):
            if self.text[self.pos] in _BLANKS:
                self.pos += 1
            elif self.text.startswith("\\\n", self.pos):  # a line continuation is no separator
                self.pos += 2
            else:
                return

    # ---- words ----

    def _word(self) -> str:
        """One word as written, with every substitution in it parsed into segments and shown as a placeholder."""
        pieces: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if self._at_process_substitution():
                pieces.append(self._process_substitution())
            elif char in _METACHARACTERS:
                break
            elif char == "\\":
                pieces.append(self._escape())
            elif char == "'":
                pieces.append(self._single_quoted())
            elif char == '"':
                pieces.append(self._double_quoted())
            elif char == "$":
                pieces.append(self._dollar(quoted=False))
            elif char == "`":
                pieces.append(self._backquoted(quoted=False))
            else:
                pieces.append(char)
                self.pos += 1
        return "".join(pieces)

    def _escape(self) -> str:
        pair = self.text[self.pos : self.pos + 2]
        self.pos += len(pair)
        return "" if pair == "\\\n" else pair  # a line continuation joins the lines

    def _single_quoted(self) -> str:
        end = self.text.find("'", self.pos + 1)
        if end < 0:
            raise _Unparsable("a single quote (') is never closed")
        start, self.pos = self.pos, end + 1
        return self.text[start : self.pos]

    def _ansi_c_quoted(self) -> str:
        start = self.pos
        self.pos += 2  # past `$'`
        while self.pos < len(self.text) and self.text[self.pos] != "'":
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        if self.pos >= len(self.text):
            raise _Unparsable("a $' quote is never closed")
        self.pos += 1
        return self.text[start : self.pos]

    def _double_quoted(self) -> str:
        pieces = ['"']
        self.pos += 1
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == '"':
                self.pos += 1
                pieces.append('"')
                return "".join(pieces)
            if char == "\\":
                pieces.append(self._escape())
            elif char == "$":
                pieces.append(self._dollar(quoted=True))
            elif char == "`":
                pieces.append(self._backquoted(quoted=True))
            else:
                pieces.append(char)
                self.pos += 1
        raise _Unparsable('a double quote (") is never closed')

    def _dollar(self, *, quoted: bool) -> str:
        if self.text.startswith("$((", self.pos):
            return self._arithmetic()
        if self.text.startswith("$(", self.pos):
            self.pos += 2
            self.parse_list(closer=")")
            return _COMMAND_PLACEHOLDER
        if self.text.startswith("${", self.pos):
            start = self.pos
            self.pos += 2
            self._skip_balanced("{", "}")
            return self.text[start : self.pos]
        if not quoted and self.text.startswith("$'", self.pos):
            return self._ansi_c_quoted()
        self.pos += 1
        return "$"

    def _arithmetic(self) -> str:
        """`$(( ... ))` is arithmetic only if its closing parens are adjacent; else bash reads `$( ( ... ) ... )`."""
        start, seen = self.pos, len(self.segments)
        self.pos += 3
        try:
            self._skip_balanced("(", ")")
            if self.text.startswith(")", self.pos):
                self.pos += 1
                return "$((...))"
        except _Unparsable:
            pass  # read it as a command substitution instead, which is the stricter reading
        del self.segments[seen:]
        self.pos = start + 2
        self.parse_list(closer=")")
        return _COMMAND_PLACEHOLDER

    def _skip_balanced(self, opener: str, closer: str) -> None:
        """Skip past the `closer` that balances an opener already read, parsing the substitutions on the way."""
        depth = 1
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if self._at_process_substitution():  # bash runs these inside ${...} too
                self._process_substitution()
            elif char == "\\":
                self._escape()
            elif char == '"':
                self._double_quoted()
            elif char == "'":
                raise _Unparsable(f"single quotes inside ${opener}...{closer} are read differently by each shell")
            elif char == "$":
                self._dollar(quoted=True)
            elif char == "`":
                self._backquoted(quoted=True)
            else:
                depth += (char == opener) - (char == closer)
                self.pos += 1
                if depth == 0:
                    return
        raise _Unparsable(f"a ${opener} is never closed with {closer!r}")

    def _process_substitution(self) -> str:
        direction = self.text[self.pos]
        self.pos += 2
        self.parse_list(closer=")")
        return f"{direction}(...)"

    def _backquoted(self, *, quoted: bool) -> str:
        """Backquotes: bash removes the backslash before `$`, a backquote or a backslash, then parses the body."""
        body: list[str] = []
        self.pos += 1
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "`":
                self.pos += 1
                _Parser("".join(body), self.segments).parse_list(closer="")
                return _COMMAND_PLACEHOLDER
            following = self.text[self.pos + 1 : self.pos + 2]
            if char == "\\" and following in ("$", "`", "\\"):
                body.append(following)
                self.pos += 2
            elif char == "\\" and following == '"' and quoted:
                raise _Unparsable('\\" inside backquotes inside double quotes is read differently by each shell')
            elif char == "\\":
                body.append(char + following)
                self.pos += 1 + len(following)
            else:
                body.append(char)
                self.pos += 1
        raise _Unparsable("a backquote (`) is never closed")


def _close(opened: list[str], opener: str) -> None:
    if not opened or opened[-1] != opener:
        closer = ")" if opener == "(" else "}"
        raise _Unparsable(f"a {closer!r} closes nothing that was opened")
    opened.pop()


# ---- literal values ----


def _word(text: str) -> Word:
    return Word(text, _literal(text))


_GLOB = re.compile(r"[*?]|\[[^\0]*\]|\{[^\0]*(,|\.\.)[^\0]*\}")


def _literal(text: str) -> str | None:
    """The value of a word after quote removal, or None when it depends on an expansion or a glob."""
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
        elif char in "$`":
            return None
        else:
            piece, pos, quoted = char, pos + 1, False
        value.append(piece)
        unquoted.append("\0" * len(piece) if quoted else piece)
    return None if _GLOB.search("".join(unquoted)) else "".join(value)


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
