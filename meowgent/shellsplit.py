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
unbalanced quotes or brackets, `case` blocks, function definitions, arrays. So does a line whose
meaning is not pinned down by its text, because bash would run code hidden in a variable's value or
in a string: expansions with side effects (`${x:=...}`, `${x@P}`, `${!x}`, `${a[i]}`, `${x:1}`),
arithmetic (`$((x))`, `((x))`, `let`, `[[ x -eq 1 ]]`), array subscripts, `eval`, `bash -c`, `trap`,
`source`, `$'...'` words. The texts that `eval`, `sh -c`, `trap`, `xargs` and `find -exec` run are
split too, and their commands become segments, so `eval 'rm x'` gives `eval 'rm x'` and `rm x`.
A caller must never auto-allow an incomplete result; the segments it does hold were still seen,
so a deny on one of them still applies. When `hidden` is set, the line may also run commands that
are nowhere in its text (a command named by a variable, `eval "$x"`, a script, a line that could not be read):
a deny rule could match those, so a careful caller denies what its deny rules might cover.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

__all__ = [
    "WRAPPERS",
    "Redirect",
    "SimpleCommand",
    "SplitResult",
    "Word",
    "command_word",
    "invocations",
    "parse_segment",
    "program_name",
    "split_command",
]


@dataclass(frozen=True, slots=True)
class SplitResult:
    """The simple commands of a command line; `complete` is False when part of it could not be read."""

    segments: tuple[str, ...]
    complete: bool = True
    problem: str = ""
    """Why the command is incomplete, as a sentence fragment for a person; empty when complete."""
    hidden: bool = False
    """Whether it may run commands that are not among the segments, which only running it would show."""


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
    findings = _Findings()
    try:
        _Parser(command, segments, findings).parse_list(closer="")
    except _Unparsable as exc:
        findings.note(str(exc), hidden=True)
    except RecursionError:
        findings.note("it is nested too deeply to read", hidden=True)
    if not findings.problems:
        return SplitResult(tuple(segments))
    return SplitResult(tuple(segments), complete=False, problem="; ".join(findings.problems), hidden=findings.hidden)


def parse_segment(segment: str) -> SimpleCommand:
    """Take one segment (as `split_command` gives it) apart; ValueError if it is not one simple command."""
    parser = _Parser(segment, [])
    tokens: list[str | _Redirection] = []
    try:
        while (token := parser.next_token()) is not None:
            if isinstance(token, _Operator):
                raise ValueError(f"{segment!r} is more than one simple command (it has {token.text!r})")
            tokens.append(token)
    except _Unparsable as exc:
        raise ValueError(f"{segment!r} cannot be read: {exc}") from None
    return _simple_command(tokens)


def _simple_command(tokens: Sequence[str | _Redirection]) -> SimpleCommand:
    assignments: list[Word] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    for token in tokens:
        if isinstance(token, _Redirection):
            redirects.append(Redirect(token.operator, _word(token.target)))
        elif not words and _ASSIGNMENT.match(token):
            assignments.append(_word(token))
        else:
            words.append(_word(token))
    return SimpleCommand(tuple(assignments), tuple(words), tuple(redirects))


def command_word(segment: str) -> str | None:
    """The command a segment runs (`FOO=1 "rm" x 2>&1` gives `rm`); None if none, or only known when it runs."""
    try:
        words = parse_segment(segment).words
    except ValueError:
        return None
    return words[0].literal if words else None


# Commands that run the command after their options: `sudo rm x` runs `rm x`.
WRAPPERS = frozenset(
    {"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time"}  # run it as given (`/usr/bin/time`)
    | {"nice", "ionice", "setsid", "stdbuf", "timeout", "xargs"}  # run it with a limit or a setting
)
# The wrappers' options that take the next word as their value: `sudo -u bob rm x` runs `rm x`.
_WRAPPER_VALUES = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter"}),
}
# What a wrapper may take before the command: options, `NAME=value` (env), a duration (timeout).
_WRAPPER_ARGUMENT = re.compile(r"-.*|[A-Za-z_][A-Za-z0-9_]*=.*|\d+(\.\d+)?[smhd]?", re.DOTALL)


def invocations(words: Sequence[Word]) -> Iterator[Sequence[Word]]:
    """The command with its arguments, then again the command each wrapper runs (`sudo env rm x`: three)."""
    while words:
        yield words
        program = program_name(words[0])
        if program not in WRAPPERS:
            return
        takes_value = _WRAPPER_VALUES.get(program, frozenset())
        words = words[1:]
        while words and _WRAPPER_ARGUMENT.fullmatch(words[0].literal or words[0].text):
            words = words[2:] if words[0].literal in takes_value else words[1:]


def program_name(word: Word) -> str | None:
    """The base name of the program a command word runs (`/bin/rm` gives `rm`), None if only running it would tell."""
    if word.literal is None:
        return None
    return word.literal.rpartition("/")[2] or None


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


class _Findings:
    """What makes a line's meaning not pinned down by its text, gathered while it is parsed."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.hidden = False

    def note(self, problem: str, *, hidden: bool = False) -> None:
        """Record a problem; `hidden` when the line may run commands that are nowhere among its segments."""
        if problem not in self.problems:
            self.problems.append(problem)
        self.hidden |= hidden


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

    def __init__(self, text: str, segments: list[str], findings: _Findings | None = None) -> None:
        self.text = text
        self.pos = 0
        self.segments = segments
        self.findings = findings or _Findings()
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter as written, strip tabs), bodies not read yet

    def parse_list(self, closer: str) -> None:
        """Read commands up to `closer` (`)` ends a substitution) or, when it is empty, to the end of the text."""
        words: list[str | _Redirection] = []
        opened: list[str] = []  # the `(` and `{` still open inside this list
        try:
            while (token := self.next_token()) is not None:
                if isinstance(token, _Redirection):
                    words.append(token)
                elif isinstance(token, _Operator):
                    if token.text == "(" and words:
                        raise _Unparsable("a '(' inside a command (a function definition or an array) is not split")
                    if token.text == "(" and self.text.startswith("(", self.pos):
                        self.findings.note(_ARITHMETIC)  # `((x))`: x's value is evaluated
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

    def _command_start(self, word: str, words: list[str | _Redirection], opened: list[str]) -> None:
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

    def _flush(self, words: list[str | _Redirection]) -> None:
        if words:
            self.segments.append(" ".join(map(str, words)))
            self._inspect(_simple_command(words))
            words.clear()

    def _add(self, segment: str) -> None:
        """A segment found inside another (what `xargs` or `find -exec` runs), as text."""
        self.segments.append(segment)
        with contextlib.suppress(ValueError):  # its own parse already reported the problem
            self._inspect(parse_segment(segment))

    # ---- what a finished segment runs besides itself ----

    def _inspect(self, parsed: SimpleCommand) -> None:
        """Note what in a segment runs code its words do not show, and split the texts it hands to a shell."""
        if any(_SUBSCRIPTED.match(word.text) for word in parsed.assignments):
            self.findings.note(_SUBSCRIPT)
        for words in invocations(parsed.words):
            if self._inspect_command(words[0], words[1:]):
                return

    def _inspect_command(self, command: Word, arguments: Sequence[Word]) -> bool:
        """Check one command; True when what it runs was handed on as a segment of its own."""
        program = program_name(command)
        if program is None:
            self.findings.note(f"the command {_short(command.text)} is only known when it runs", hidden=True)
            return True
        texts = [argument.literal or argument.text for argument in arguments]
        if program == "let" or (program == "[[" and _ARITHMETIC_TESTS.intersection(texts)):
            self.findings.note(_ARITHMETIC)
        if program in _NAMES_VARIABLES and any(_SUBSCRIPTED.match(text) for text in texts):
            self.findings.note(_SUBSCRIPT)
        if program in _DECLARES and any(re.fullmatch(r"[-+][a-zA-Z]*[in][a-zA-Z]*", text) for text in texts):
            self.findings.note(f"`{program} -i` or `-n` evaluates values as arithmetic or names")
        if program == "eval":
            self._run_text(arguments, "eval runs its arguments as a new command line")
        elif program == "trap":
            action = [word for word in arguments if not (word.literal or "").startswith("-")][:1]
            self._run_text(action, "trap runs its text later as a command line")
        elif program in _SHELLS:
            self._shell(program, arguments)
        elif program in ("source", "."):
            self.findings.note(f"{program} runs the commands in a file", hidden=True)
        elif program == "env" and any(text.startswith(("-S", "--split-string")) for text in texts):
            self.findings.note("env -S splits a text into a command", hidden=True)
        elif program == "xargs":
            handed = _after_options(arguments, "xargs")
            if handed:  # it adds arguments read from its input, shown as `...`
                self._add(" ".join(word.text for word in handed) + " ...")
            return True
        elif program == "find":
            for executed in _find_executes(arguments):
                self._add(" ".join(word.text for word in executed))
        return False

    def _shell(self, program: str, arguments: Sequence[Word]) -> None:
        """`bash -c 'text'` runs the text as a command line, `bash file` a file, `curl x | sh` what it reads."""
        has_c, skip = False, False
        for index, word in enumerate(arguments):
            text = word.literal or word.text
            if skip:
                skip = False
            elif text in ("-o", "+o", "-O", "+O"):
                skip = True
            elif text.startswith(("-", "+")) and text not in ("-", "--"):
                has_c |= not text.startswith("--") and "c" in text
            elif has_c:
                self._run_text(arguments[index : index + 1], f"{program} -c runs its text as a new command line")
                return
            else:  # a script: shell commands a deny rule cannot see
                self.findings.note(f"{program} runs the commands in a file", hidden=True)
                return
        # `printf 'rm x' | sh`: the commands come from another program's output.
        self.findings.note(f"{program} runs the commands it reads from its input", hidden=True)

    def _run_text(self, words: Sequence[Word], why: str) -> None:
        """Split a text a command runs as a command line (eval joins its arguments with spaces)."""
        self.findings.note(why)
        if not words:
            return
        if any(word.literal is None for word in words):
            self.findings.note(f"{why}, and that text is only known when it runs", hidden=True)
            return
        try:
            _Parser(" ".join(word.literal or "" for word in words), self.segments, self.findings).parse_list(closer="")
        except _Unparsable as exc:
            self.findings.note(f"{why}, and that text cannot be read: {exc}", hidden=True)

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
        if operator == "\n" and self.heredocs:
            self._read_heredocs()
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
        self._skip_blanks()
        if self.pos >= len(self.text) or (
            self.text[self.pos] in _METACHARACTERS and not self._at_process_substitution()
        ):
            raise _Unparsable(f"the redirection {operator!r} has no target")
        target = self._word()
        if operator.lstrip("0123456789") in _HEREDOCS:
            self.heredocs.append((target, operator.endswith("-")))
        return _Redirection(operator, target)

    def _read_heredocs(self) -> None:
        """The bodies of the here-documents of the line just ended; unquoted ones expand like "...", so they can run."""
        pending, self.heredocs = self.heredocs, []
        for written, strip_tabs in pending:
            delimiter = _literal(written)
            if delimiter is None:
                raise _Unparsable(f"the here-document delimiter {written} is not a plain word")
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
                _Parser(self.text[start:end], self.segments, self.findings).expand_text()

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
            expansion = self.text[start : self.pos]
            if not _PLAIN_EXPANSION.fullmatch(expansion):
                self.findings.note(f"the expansion {_short(expansion)} can run code hidden in a variable's value")
            return expansion
        if self.text.startswith("$[", self.pos):  # the old spelling of $((...))
            start = self.pos
            self.pos += 2
            self._skip_balanced("[", "]")
            self.findings.note(_ARITHMETIC)
            return self.text[start : self.pos]
        if not quoted and self.text.startswith("$'", self.pos):
            self.findings.note("a $'...' word spells its text in escapes")
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
                if not _NUMBERS_ONLY.fullmatch(self.text[start + 3 : self.pos - 2]):
                    self.findings.note(_ARITHMETIC)
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
                _Parser("".join(body), self.segments, self.findings).parse_list(closer="")
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


# ---- code that hides in values ----

_ARITHMETIC = "arithmetic such as $((x)) or ((x)) can run code hidden in a variable's value"
_SUBSCRIPT = "an array subscript such as a[x] can run code hidden in a variable's value"
_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-@*#?$!])"
# `${x}`, `${#x}`, `${a[@]}` and the operators that only test, cut or replace: none of them evaluates a value.
_PLAIN_EXPANSION = re.compile(
    rf"\$\{{(?:#?{_NAME}(?:\[[@*]\])?|{_NAME}(?:\[[@*]\])?(?::?[-+?]|##?|%%?|/[/#%]?|\^\^?|,,?)[^\0]*)\}}", re.DOTALL
)
_NUMBERS_ONLY = re.compile(r"[\s0-9+\-*/%()<>=!&|^~?:,]*")
_SUBSCRIPTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
# Builtins that take variable names, where `a[$x]` evaluates $x as arithmetic.
_NAMES_VARIABLES = frozenset(
    {"declare", "typeset", "local", "readonly", "export", "unset", "read", "mapfile", "readarray", "printf"}
    | {"test", "[", "[[", "wait", "let"}
)
_DECLARES = frozenset({"declare", "typeset", "local", "readonly", "export"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _after_options(words: Sequence[Word], program: str) -> Sequence[Word]:
    """The words after a wrapper's options, as `invocations` skips them."""
    return next(islice(invocations([Word(program, program), *words]), 1, None), ())


def _find_executes(arguments: Sequence[Word]) -> Iterator[Sequence[Word]]:
    """The commands `find ... -exec cmd {} ;` runs, one per `-exec` (or -execdir, -ok, -okdir)."""
    index = 0
    while index < len(arguments):
        if arguments[index].literal in _FIND_RUNS:
            end = next(
                (i for i in range(index + 1, len(arguments)) if arguments[i].literal in (";", "+")), len(arguments)
            )
            if end > index + 1:
                yield arguments[index + 1 : end]
            index = end
        index += 1


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


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
        elif text.startswith("$'", pos):
            end = _ansi_c_end(text, pos)
            piece, pos, quoted = _ansi_c_value(text[pos + 2 : end - 1]), end, True
        elif char in "$`":
            return None
        else:
            piece, pos, quoted = char, pos + 1, False
        value.append(piece)
        unquoted.append("\0" * len(piece) if quoted else piece)
    return None if _GLOB.search("".join(unquoted)) else "".join(value)


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
        hexa, short, long, octal, control, other = match.groups()
        number = hexa or short or long
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
