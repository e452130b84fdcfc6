"""Reading a shell command line token by token: words with their quoting and substitutions, operators, redirections.

`Tokenizer` is the lower half of the splitter's recursive descent. It reads one word as written, parsing
every substitution inside it (`$( ... )`, backquotes, `<( ... )`) by handing the inner command list to
`parse_list`, which the parser (`parser._Parser`) defines, and notes what leaves the line's meaning open
in a value (`${x@P}`, `$((x))`, `$'...'`) as it goes. Each character is read once, but for arithmetic
that turns out to be a substitution, read again once per start and remembered.
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass

from meowgent.shellsplit.words import Problem, literal, short

__all__ = ["Findings", "Operator", "Redirection", "Tokenizer", "Unparsable"]

_BLANKS = " \t"
_METACHARACTERS = frozenset(" \t\n|&;()<>")
# Longest first, so `&&` is not read as `&` twice.
_SEPARATORS = (";;&", "&&", "||", ";;", ";&", "|&", ";", "|", "&", "\n")
_REDIRECTIONS = ("&>>", "<<<", "<<-", "&>", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_OPERATORS = tuple(sorted(_SEPARATORS + _REDIRECTIONS, key=len, reverse=True))
_OPERATOR_STARTS = frozenset(operator[0] for operator in _OPERATORS)
# Characters that need no attention inside a word: one character class, so matching a run never backtracks.
_PLAIN_RUN = re.compile(r"[^ \t\n|&;()<>\\'\"$`]+")
_HEREDOCS = frozenset({"<<", "<<-"})

_COMMAND_PLACEHOLDER = "$(...)"


class Unparsable(Exception):
    """The command cannot be read with confidence; `problem` says why."""

    def __init__(self, kind: str, snippet: str) -> None:
        super().__init__(kind, snippet)
        self.problem = Problem(kind, short(snippet))


class Findings:
    """What makes a line's meaning not pinned down by its text, gathered while it is parsed (each once)."""

    def __init__(self, *, budget: int = 0) -> None:
        self._problems: dict[Problem, None] = {}
        self.budget = budget  # characters left to read again in texts and commands handed on (see `spend`)

    @property
    def problems(self) -> list[Problem]:
        return list(self._problems)

    def note(self, kind: str, snippet: str) -> None:
        self.add(Problem(kind, short(snippet)))

    def add(self, problem: Problem) -> None:
        self._problems[problem] = None

    def spend(self, text: str) -> bool:
        """Take `text` from the budget for reading text again; False (and a problem) when it is spent.

        A text run inside a text run inside ... (`eval eval eval ...`) is read once per level; the budget
        (the line's length and a little more) keeps the whole reading linear in the line's length.
        """
        self.budget -= len(text)
        if self.budget < 0:
            self.note("too_many", text)
        return self.budget >= 0


@dataclass(frozen=True, slots=True)
class Operator:
    text: str


@dataclass(frozen=True, slots=True)
class Redirection:
    operator: str
    target: str

    def __str__(self) -> str:
        # One spelling per redirection, so rule patterns need not guess the spacing: `2>&1`, `> out`.
        joiner = "" if self.operator.endswith("&") else " "
        return f"{self.operator}{joiner}{self.target}"


class Tokenizer(abc.ABC):
    """The text and where reading is; `segments` gets every simple command the parser finishes (see `parse_list`)."""

    def __init__(self, text: str, segments: list[str], findings: Findings | None = None, *, depth: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.segments = segments
        self.findings = findings or Findings()
        self.depth = depth  # texts run inside texts, and commands handed on inside commands, around this one
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter as written, strip tabs), bodies not read yet
        self.outer_heredocs = 0  # how many of `heredocs` belong to the lines around the substitution being read
        # `$((` read once per start: a `$((` that turns out to be `$( (`, read again, would read again
        # every `$((` inside it, which doubles the work with each level.
        self.arithmetic: dict[tuple[int, bool], tuple[int, str, tuple[str, ...]] | Unparsable] = {}

    @abc.abstractmethod
    def parse_list(self, closer: str) -> None:
        """Read commands up to `closer` (`)` ends a substitution) or, when it is empty, to the end of the text."""

    def next_token(self) -> str | Operator | Redirection | None:
        """The next word, operator (`(` and `)` included) or redirection; None at the end of the text."""
        self._skip_blanks()
        if self.pos < len(self.text) and self.text[self.pos] == "#":  # a `#` starting a word starts a comment
            end = self.text.find("\n", self.pos)
            self.pos = len(self.text) if end < 0 else end
        if self.pos >= len(self.text):
            return None
        if self.text.startswith(("(", ")"), self.pos):
            self.pos += 1
            return Operator(self.text[self.pos - 1])
        operator = self._operator()
        if operator == "\n" and self.heredocs:
            if self.outer_heredocs:  # whether the body belongs inside the substitution or after it is unclear
                raise Unparsable("heredoc", "<< before $(...) with a new line inside")
            self._read_heredocs()
        if operator in _REDIRECTIONS:
            return self._redirection(operator)
        if operator:
            return Operator(operator)
        word = self._word()
        if word.isdigit() and self.text.startswith(("<", ">"), self.pos):
            return self._redirection(word + self._operator())  # `2>`: the number names a file descriptor
        return word

    def _operator(self) -> str:
        if self.pos >= len(self.text) or self.text[self.pos] not in _OPERATOR_STARTS:
            return ""
        if self._at_process_substitution():
            return ""
        for operator in _OPERATORS:
            if self.text.startswith(operator, self.pos):
                self.pos += len(operator)
                return operator
        return ""

    def _redirection(self, operator: str) -> Redirection:
        self._skip_blanks()
        if self.pos >= len(self.text) or (
            self.text[self.pos] in _METACHARACTERS and not self._at_process_substitution()
        ):
            raise Unparsable("no_target", operator)
        target = self._word()
        if operator.lstrip("0123456789") in _HEREDOCS:
            self.heredocs.append((target, operator.endswith("-")))
        return Redirection(operator, target)

    def _read_heredocs(self) -> None:
        """The bodies of the here-documents of the line just ended; unquoted ones expand like "...", so they can run."""
        pending, self.heredocs = self.heredocs, []
        for written, strip_tabs in pending:
            delimiter = literal(written)
            if delimiter is None:
                raise Unparsable("heredoc", f"<< {written}")
            start, end = self.pos, self.pos
            while end < len(self.text):
                line_end = self.text.find("\n", end)
                line_end = len(self.text) if line_end < 0 else line_end
                line = self.text[end:line_end]
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                end = line_end + 1
            self.pos = min(self.text.find("\n", end) + 1 or len(self.text), len(self.text))
            if not any(quote in written for quote in "'\"\\"):  # a quoted delimiter keeps the body literal
                type(self)(self.text[start:end], self.segments, self.findings, depth=self.depth).expand_text()

    def expand_text(self) -> None:
        """Parse the substitutions in text that expands like a double-quoted string, but with no quotes to end."""
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\":
                self._escape()
            elif char == "$":
                self._dollar(quoted=True)
            elif char == "`":
                self._backquoted(quoted=True)
            else:
                self.pos += 1

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
            else:  # a run of plain characters, taken at once
                run = _PLAIN_RUN.match(self.text, self.pos)
                end = run.end() if run else self.pos + 1
                pieces.append(self.text[self.pos : end])
                self.pos = end
        return "".join(pieces)

    def _escape(self) -> str:
        pair = self.text[self.pos : self.pos + 2]
        self.pos += len(pair)
        return "" if pair == "\\\n" else pair  # a line continuation joins the lines

    def _single_quoted(self) -> str:
        end = self.text.find("'", self.pos + 1)
        if end < 0:
            raise Unparsable("unclosed", "'")
        start, self.pos = self.pos, end + 1
        return self.text[start : self.pos]

    def _ansi_c_quoted(self) -> str:
        start = self.pos
        self.pos += 2  # past `$'`
        while self.pos < len(self.text) and self.text[self.pos] != "'":
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        if self.pos >= len(self.text):
            raise Unparsable("unclosed", "$'")
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
        raise Unparsable("unclosed", '"')

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
            expansion = self.text[start : self.pos]
            if not _PLAIN_EXPANSION.fullmatch(expansion):
                self.findings.note("expansion", expansion)
            return expansion
        if self.text.startswith("$[", self.pos):  # the old spelling of $((...))
            start = self.pos
            self.pos += 2
            self._skip_balanced("[", "]")
            self.findings.note("arithmetic", self.text[start : self.pos])
            return self.text[start : self.pos]
        if not quoted and self.text.startswith("$'", self.pos):
            word = self._ansi_c_quoted()
            self.findings.note("escapes", word)
            return word
        self.pos += 1
        return "$"

    def _arithmetic(self) -> str:
        """`$(( ... ))`, read once per start and remembered (see `self.arithmetic`)."""
        key = (self.pos, bool(self.heredocs))
        remembered = self.arithmetic.get(key)
        if isinstance(remembered, Unparsable):
            raise Unparsable(remembered.problem.kind, remembered.problem.snippet)
        if remembered is not None:
            self.pos, placeholder, segments = remembered
            self.segments.extend(segments)
            return placeholder
        seen = len(self.segments)
        try:
            placeholder = self._read_arithmetic()
        except Unparsable as exc:
            self.arithmetic[key] = exc
            raise
        self.arithmetic[key] = (self.pos, placeholder, tuple(self.segments[seen:]))
        return placeholder

    def _read_arithmetic(self) -> str:
        """`$(( ... ))` is arithmetic only if its closing parens are adjacent; else bash reads `$( ( ... ) ... )`."""
        start, seen = self.pos, len(self.segments)
        self.pos += 3
        try:
            self._skip_balanced("(", ")")
            if self.text.startswith(")", self.pos):
                self.pos += 1
                if not _NUMBERS_ONLY.fullmatch(self.text, start + 3, self.pos - 2):
                    self.findings.note("arithmetic", self.text[start : self.pos])
                return "$((...))"
        except Unparsable:
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
                raise Unparsable("quoting", f"' inside ${opener}...{closer}")
            elif char == "$":
                self._dollar(quoted=True)
            elif char == "`":
                self._backquoted(quoted=True)
            else:
                depth += (char == opener) - (char == closer)
                self.pos += 1
                if depth == 0:
                    return
        raise Unparsable("unclosed", f"${opener}")

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
                type(self)("".join(body), self.segments, self.findings, depth=self.depth).parse_list(closer="")
                return _COMMAND_PLACEHOLDER
            following = self.text[self.pos + 1 : self.pos + 2]
            if char == "\\" and following in ("$", "`", "\\"):
                body.append(following)
                self.pos += 2
            elif char == "\\" and following == '"' and quoted:
                raise Unparsable("quoting", '\\" inside `...` inside "..."')
            elif char == "\\":
                body.append(char + following)
                self.pos += 1 + len(following)
            else:
                body.append(char)
                self.pos += 1
        raise Unparsable("unclosed", "`")


# ---- code that hides in values ----

_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-@*#?$!])"
# `${x}`, `${#x}`, `${a[@]}` and the operators that only test, cut or replace: none of them evaluates a value.
# Matched whole (fullmatch): the name alternatives cannot overlap an operator, so this never backtracks far.
_PLAIN_EXPANSION = re.compile(
    rf"\$\{{(?:#?{_NAME}(?:\[[@*]\])?|{_NAME}(?:\[[@*]\])?(?::?[-+?]|##?|%%?|/[/#%]?|\^\^?|,,?)[^\0]*)\}}", re.DOTALL
)
_NUMBERS_ONLY = re.compile(r"[\s0-9+\-*/%()<>=!&|^~?:,]*")
