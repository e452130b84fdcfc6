"""Split a shell command line into the simple commands bash would run, so each can be judged on its own.

`split_command("ls && rm -rf x")` gives the segments `ls` and `rm -rf x`. Separators (`&&`, `||`, `;`,
`|`, `|&`, `&`, newlines), subshells `( ... )` and groups `{ ...; }` only separate. Command substitution
(`$( ... )`, backquotes) and process substitution (`<( ... )`, `>( ... )`) run commands too: their inner
commands become segments of their own, and the outer segment shows a placeholder such as `$(...)`.
Segments come in the order bash starts them: a substitution before the command that uses its output.

Quoting follows bash: single quotes are literal; double quotes still run `$( ... )` and backquotes; a
backslash escapes one character; `#` starts a comment only at the start of a word. Keywords that open
or close a block (`if`, `then`, `do`, `done`, `{`, `}`, `!`, `time -p`, ...) are dropped from the start
of a segment, so `if true; then rm x; fi` gives `true` and `rm x`.

**Hidden.** A line whose meaning its text does not pin down is *hidden*: `SplitResult.problems` says
why, as `Problem`s (a kind code and the snippet). A caller must treat a hidden line as possibly running
anything: never allowed by a rule or a chat scope, and denied while any deny rule exists, since that
rule could match what it runs. The segments it does hold were still seen, so a deny on one of them
applies as usual. A line is hidden when, at least:
- it cannot be read with confidence: unbalanced quotes or brackets, `case` blocks, arrays, nesting too
  deep, here-documents whose body is ambiguous;
- bash evaluates a value as code: `${x:=...}`, `${x@P}`, `${!x}`, `${a[i]}`, `${x:1}`, arithmetic
  (`$((x))`, `((x))`, `let`, `[[ x -eq 1 ]]`), array subscripts, `declare -i`/`-n`, `$'...'` words;
- it runs a text as a command line, now or later: `eval`, `bash -c`, `trap`, and the programs that
  do it (`flock -c`, `su -c`, `ssh host cmd`, `watch`, ...); a literal text is also split, so its
  commands are segments (`eval 'rm x'` gives `eval 'rm x'` and `rm x`);
- it sets a variable bash or a program runs, or that picks the program a name runs: `PS4`,
  `PROMPT_COMMAND`, `BASH_ENV`, `PATH`, `LD_PRELOAD`, `GIT_SSH_COMMAND`, `PAGER`, ... (see
  `shellprograms.runs_value`), as `NAME=x cmd`, `NAME=x`, `export`/`declare`/`local`/`readonly`, `read`,
  `printf -v`, `for NAME`, or `env NAME=x`; or a callback bash runs: `mapfile -C`, `compgen -C`/`-F`,
  `complete -C`/`-F`, `bind -x`, `fc`;
- it changes what a name runs: `hash -p`, `alias`, `enable`, a function definition (any form);
- a command is only known when it runs (`$X x`), or it runs a file or its input (`source f`, `bash f`,
  `curl x | sh`);
- a program's own options run code or hide what runs (see `shellprograms`): a wrapper with an option its
  table does not know, `git -c`, `tar --to-command`, `python -c`, `sed 's/x/y/e'`, and so on.
Running a script file (`python x.py`, `make`, `pytest`) is not hidden: the file is not on the card
either way, and what holds there is the OS sandbox, not this reading.

The texts that `eval`, `sh -c`, `trap`, `xargs` and `find -exec` run are split too, and their commands
become segments. Parsing is linear in the length of the line: no regex backtracks over it, arithmetic
that turns out to be a subshell is read again only once, and nesting (wrappers inside wrappers, `eval`
inside `eval`) is capped.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from meowgent.shellsplit.options import Options, parse_options
from meowgent.shellsplit.programs import read_program, runs_value, variable_name
from meowgent.shellsplit.words import Problem, Word, literal, short

__all__ = [
    "Problem",
    "Redirect",
    "SimpleCommand",
    "SplitResult",
    "Word",
    "command_word",
    "forget_readings",
    "invocations",
    "parse_segment",
    "program_name",
    "split_command",
]


@dataclass(frozen=True, slots=True)
class SplitResult:
    """The simple commands of a command line, and why its meaning is not pinned down (none: it is)."""

    segments: tuple[str, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def hidden(self) -> bool:
        """Whether the line may run code that its segments do not show; see the module docstring."""
        return bool(self.problems)

    @property
    def problem(self) -> str:
        """The first few problems as an English sentence fragment, for the verdict's reason; empty if none."""
        shown = "; ".join(map(str, self.problems[:_SHOWN_PROBLEMS]))
        more = len(self.problems) - _SHOWN_PROBLEMS
        return f"{shown}; and {more} more" if more > 0 else shown


_SHOWN_PROBLEMS = 3

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


@functools.lru_cache(maxsize=8)  # a call is judged, its card drawn and its scopes tried: one reading for all
def split_command(command: str) -> SplitResult:
    """The simple commands in `command`, substitutions included; see the module docstring for the rules."""
    segments: list[str] = []
    findings = _Findings(budget=len(command) + _NESTED_BUDGET)
    try:
        _Parser(command, segments, findings).parse_list(closer="")
    except _Unparsable as exc:
        findings.add(exc.problem)
    except RecursionError:
        findings.note("too_deep", short(command))
    return SplitResult(tuple(segments), tuple(findings.problems))


def parse_segment(segment: str) -> SimpleCommand:
    """Take one segment (as `split_command` gives it) apart; ValueError if it is not one simple command."""
    # Each segment of a call is taken apart for its verdict, its risk notes and its scopes: remember the
    # short ones (a long one holds many words, and is rare).
    return _parse_short_segment(segment) if len(segment) <= _REMEMBERED else _parse_segment(segment)


_REMEMBERED = 4096


@functools.lru_cache(maxsize=64)
def _parse_short_segment(segment: str) -> SimpleCommand:
    return _parse_segment(segment)


def _parse_segment(segment: str) -> SimpleCommand:
    parser = _Parser(segment, [])
    tokens: list[str | _Redirection] = []
    try:
        while (token := parser.next_token()) is not None:
            if isinstance(token, _Operator):
                raise ValueError(f"{segment!r} is more than one simple command (it has {token.text!r})")
            tokens.append(token)
    except _Unparsable as exc:
        raise ValueError(f"{segment!r} cannot be read: {exc.problem}") from None
    return _simple_command(tokens)


def _simple_command(tokens: Sequence[str | _Redirection]) -> SimpleCommand:
    assignments: list[Word] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    for token in tokens:
        if isinstance(token, _Redirection):
            redirects.append(Redirect(token.operator, Word.of(token.target)))
        elif not words and _ASSIGNMENT.match(token):
            assignments.append(Word.of(token))
        else:
            words.append(Word.of(token))
    return SimpleCommand(tuple(assignments), tuple(words), tuple(redirects))


def command_word(segment: str) -> str | None:
    """The command a segment runs (`FOO=1 "rm" x 2>&1` gives `rm`); None if none, or only known when it runs."""
    try:
        words = parse_segment(segment).words
    except ValueError:
        return None
    return words[0].literal if words else None


def forget_readings() -> None:
    """Drop the remembered readings of recent lines and segments, so the next reading is a first one (benchmarks)."""
    split_command.cache_clear()
    _parse_short_segment.cache_clear()


_MAX_NESTED = 8
"""Wrappers inside wrappers, or texts run inside texts, read before the line counts as too deep to read."""
_NESTED_BUDGET = 4096
"""Characters that texts and commands handed on may add to the line's length in reading (see `_Findings.spend`)."""


def invocations(words: Sequence[Word]) -> Iterator[Sequence[Word]]:
    """The command with its arguments, then again the command each wrapper runs (`sudo env rm x`: three).

    The wrappers' own option tables (`shellprograms`) say where their command starts: `env -iu HOME rm x`
    runs `rm x`. Past `_MAX_NESTED` wrappers it stops; the splitter marks such a line hidden.
    """
    for _ in range(_MAX_NESTED):
        if not words:
            return
        yield words
        program = program_name(words[0])
        if program is None:
            return
        words = read_program(program, words[1:]).command


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
_OPERATOR_STARTS = frozenset(operator[0] for operator in _OPERATORS)
# Characters that need no attention inside a word: one character class, so matching a run never backtracks.
_PLAIN_RUN = re.compile(r"[^ \t\n|&;()<>\\'\"$`]+")
_HEREDOCS = frozenset({"<<", "<<-"})

# Reserved words that only open, continue or close a block: the command after them is what runs.
_SKIPPED_KEYWORDS = frozenset({"!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "time"})
# Reserved words whose grammar this parser does not follow; guessing there could hide a command.
_UNREAD_KEYWORDS = frozenset({"case", "esac", "select", "coproc"})

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_COMMAND_PLACEHOLDER = "$(...)"


class _Unparsable(Exception):
    """The command cannot be read with confidence; `problem` says why."""

    def __init__(self, kind: str, snippet: str) -> None:
        super().__init__(kind, snippet)
        self.problem = Problem(kind, short(snippet))


class _Findings:
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

    def __init__(self, text: str, segments: list[str], findings: _Findings | None = None, *, depth: int = 0) -> None:
        self.text = text
        self.pos = 0
        self.segments = segments
        self.findings = findings or _Findings()
        self.depth = depth  # texts run inside texts, and commands handed on inside commands, around this one
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter as written, strip tabs), bodies not read yet
        self.outer_heredocs = 0  # how many of `heredocs` belong to the lines around the substitution being read
        # `$((` read once per start: a `$((` that turns out to be `$( (`, read again, would read again
        # every `$((` inside it, which doubles the work with each level.
        self.arithmetic: dict[tuple[int, bool], tuple[int, str, tuple[str, ...]] | _Unparsable] = {}

    def parse_list(self, closer: str) -> None:
        """Read commands up to `closer` (`)` ends a substitution) or, when it is empty, to the end of the text."""
        words: list[str | _Redirection] = []
        opened: list[str] = []  # the `(` and `{` still open inside this list
        after_time = False  # bash's `time` keyword takes `-p`
        outer, self.outer_heredocs = self.outer_heredocs, len(self.heredocs) if closer else self.outer_heredocs
        try:
            while (token := self.next_token()) is not None:
                if isinstance(token, _Redirection):
                    words.append(token)
                elif isinstance(token, _Operator):
                    after_time = False
                    if token.text == "(" and words:
                        raise _Unparsable("defines", f"{words[-1]}(")
                    if token.text == "(" and self.text.startswith("(", self.pos):
                        self.findings.note("arithmetic", self.text[self.pos - 1 : self.pos + 20])  # `((x))`
                    self._flush(words)
                    if token.text == "(":
                        opened.append("(")
                    elif token.text == ")" and not opened and closer == ")":
                        if len(self.heredocs) > self.outer_heredocs:
                            raise _Unparsable("heredoc", "<< inside $(...)")  # its body would come after the `)`
                        return
                    elif token.text == ")":
                        _close(opened, "(")
                elif words:
                    words.append(token)
                elif not (after_time and token in ("-p", "--")):
                    after_time = token == "time"
                    self._command_start(token, words, opened)
            if closer:
                raise _Unparsable("unclosed", "$(")
            if opened:
                raise _Unparsable("unclosed", opened[-1])
        finally:  # also on error: the words read so far are still worth judging
            self.outer_heredocs = outer
            self._flush(words)

    def _command_start(self, word: str, words: list[str | _Redirection], opened: list[str]) -> None:
        if word in _SKIPPED_KEYWORDS:
            return
        if word in _UNREAD_KEYWORDS:
            raise _Unparsable("block", word)
        if word == "function":
            raise _Unparsable("defines", word)
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

    def _add(self, words: Sequence[Word], tail: str = "") -> None:
        """A command found inside another (what `xargs` or `find -exec` runs), as a segment of its own."""
        segment = " ".join(word.text for word in words) + tail
        self.segments.append(segment)
        if self.depth >= _MAX_NESTED:
            self.findings.note("too_many", segment)
            return
        if not self.findings.spend(segment):
            return
        self.depth += 1
        try:
            with contextlib.suppress(ValueError):  # its own parse already reported the problem
                self._inspect(parse_segment(segment))
        finally:
            self.depth -= 1

    # ---- what a finished segment runs besides itself ----

    def _inspect(self, parsed: SimpleCommand) -> None:
        """Note what in a segment leaves its meaning open, and split the texts and commands it hands on."""
        for word in parsed.assignments:
            self._assignment(word)
        words: Sequence[Word] = parsed.words
        for _ in range(_MAX_NESTED):
            if not words:
                return
            program = program_name(words[0])
            if program is None:
                self.findings.note("unknown_command", words[0].text)
                return
            if self._bash(program, words[1:]):
                return
            reading = read_program(program, words[1:])
            for problem in reading.problems:
                self.findings.add(problem)
            for who, text in reading.texts:
                self._run_text(text, who)
            for started in reading.started:
                self._add(started)
            if reading.adds_input and reading.command:  # xargs: the command gets more words from the input
                self._add(reading.command, " ...")
                return
            words = reading.command
        self.findings.note("too_many", " ".join(word.text for word in parsed.words))

    def _assignment(self, word: Word) -> None:
        if _SUBSCRIPTED.match(word.text):
            self.findings.note("subscript", word.text)
        name = variable_name(word)
        if name is None or runs_value(name):
            self.findings.note("variable", word.text)

    def _bash(self, program: str, arguments: Sequence[Word]) -> bool:
        """Check a bash builtin (or a shell); True when nothing more is to be read from the segment."""
        texts = [argument.value for argument in arguments]
        snippet = " ".join([program, *texts])
        if program == "let" or (program == "[[" and _ARITHMETIC_TESTS.intersection(texts)):
            self.findings.note("arithmetic", snippet)
        if program in _NAMES_VARIABLES and any(_SUBSCRIPTED.match(text) for text in texts):
            self.findings.note("subscript", snippet)
        if program in _DECLARES and any(_evaluates(text) for text in texts):
            self.findings.note("evaluates", snippet)
        for name in _assigned_names(program, arguments):
            if name is None or runs_value(name):
                self.findings.note("variable", snippet)
        kind = _builtin_kind(program, arguments)
        if kind is not None:
            self.findings.note(kind, snippet)
        if program == "eval":
            self.findings.note("runs_text", "eval")
            self._run_text(arguments, "eval")
        elif program == "trap":
            self._trap(arguments)
        elif program in _SHELLS:
            self._shell(program, arguments)
        elif program in ("source", "."):
            self.findings.note("runs_file", snippet)
        else:
            return False
        return True

    def _trap(self, arguments: Sequence[Word]) -> None:
        """`trap 'text' SIGNAL` runs the text later; `trap - SIG`, `trap '' SIG` and `trap -p` set no code."""
        action = [word for word in arguments if not word.value.startswith("-")][:1]
        if action and action[0].value not in ("", "-"):
            self.findings.note("runs_later", "trap " + action[0].text)
            self._run_text(action, "trap")

    def _shell(self, program: str, arguments: Sequence[Word]) -> None:
        """`bash -c 'text'` runs the text as a command line, `bash file` a file, `curl x | sh` what it reads."""
        has_c, skip = False, False
        for index, word in enumerate(arguments):
            text = word.value
            if skip:
                skip = False
            elif text in ("-o", "+o", "-O", "+O"):
                skip = True
            elif text.startswith(("-", "+")) and text not in ("-", "--"):
                has_c |= not text.startswith("--") and "c" in text
            elif has_c:
                self.findings.note("runs_text", f"{program} -c")
                self._run_text(arguments[index : index + 1], f"{program} -c")
                return
            else:  # a script: shell commands a deny rule cannot see
                self.findings.note("runs_file", f"{program} {text}")
                return
        # `printf 'rm x' | sh`: the commands come from another program's output.
        self.findings.note("runs_input", program)

    def _run_text(self, words: Sequence[Word], who: str) -> None:
        """Split a text a command runs as a command line (eval joins its arguments with spaces)."""
        if not words:
            return
        if any(word.literal is None for word in words):
            self.findings.note("unknown_text", f"{who} {' '.join(word.text for word in words)}")
            return
        if self.depth >= _MAX_NESTED:
            self.findings.note("too_many", who)
            return
        text = " ".join(word.value for word in words)
        if not self.findings.spend(text):
            return
        nested = _Parser(text, self.segments, self.findings, depth=self.depth + 1)
        try:
            nested.parse_list(closer="")
        except _Unparsable as exc:
            self.findings.add(exc.problem)

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
            if self.outer_heredocs:  # whether the body belongs inside the substitution or after it is unclear
                raise _Unparsable("heredoc", "<< before $(...) with a new line inside")
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
        if self.pos >= len(self.text) or self.text[self.pos] not in _OPERATOR_STARTS:
            return ""
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
            raise _Unparsable("no_target", operator)
        target = self._word()
        if operator.lstrip("0123456789") in _HEREDOCS:
            self.heredocs.append((target, operator.endswith("-")))
        return _Redirection(operator, target)

    def _read_heredocs(self) -> None:
        """The bodies of the here-documents of the line just ended; unquoted ones expand like "...", so they can run."""
        pending, self.heredocs = self.heredocs, []
        for written, strip_tabs in pending:
            delimiter = literal(written)
            if delimiter is None:
                raise _Unparsable("heredoc", f"<< {written}")
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
                _Parser(self.text[start:end], self.segments, self.findings, depth=self.depth).expand_text()

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
            raise _Unparsable("unclosed", "'")
        start, self.pos = self.pos, end + 1
        return self.text[start : self.pos]

    def _ansi_c_quoted(self) -> str:
        start = self.pos
        self.pos += 2  # past `$'`
        while self.pos < len(self.text) and self.text[self.pos] != "'":
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        if self.pos >= len(self.text):
            raise _Unparsable("unclosed", "$'")
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
        raise _Unparsable("unclosed", '"')

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
        if isinstance(remembered, _Unparsable):
            raise _Unparsable(remembered.problem.kind, remembered.problem.snippet)
        if remembered is not None:
            self.pos, placeholder, segments = remembered
            self.segments.extend(segments)
            return placeholder
        seen = len(self.segments)
        try:
            placeholder = self._read_arithmetic()
        except _Unparsable as exc:
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
                raise _Unparsable("quoting", f"' inside ${opener}...{closer}")
            elif char == "$":
                self._dollar(quoted=True)
            elif char == "`":
                self._backquoted(quoted=True)
            else:
                depth += (char == opener) - (char == closer)
                self.pos += 1
                if depth == 0:
                    return
        raise _Unparsable("unclosed", f"${opener}")

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
                _Parser("".join(body), self.segments, self.findings, depth=self.depth).parse_list(closer="")
                return _COMMAND_PLACEHOLDER
            following = self.text[self.pos + 1 : self.pos + 2]
            if char == "\\" and following in ("$", "`", "\\"):
                body.append(following)
                self.pos += 2
            elif char == "\\" and following == '"' and quoted:
                raise _Unparsable("quoting", '\\" inside `...` inside "..."')
            elif char == "\\":
                body.append(char + following)
                self.pos += 1 + len(following)
            else:
                body.append(char)
                self.pos += 1
        raise _Unparsable("unclosed", "`")


# ---- code that hides in values ----

_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-@*#?$!])"
# `${x}`, `${#x}`, `${a[@]}` and the operators that only test, cut or replace: none of them evaluates a value.
# Matched whole (fullmatch): the name alternatives cannot overlap an operator, so this never backtracks far.
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

# How the builtins that set variables read their options: their operands are the names they set.
_READ = Options(flags="ers", values="adinNptu")
_MAPFILE = Options(flags="t", values="dnOsuCc")
_COMPLETE = Options(flags="abcdefgjksuvDEIpr", values="oAGWFCXPS")
_BIND = Options(flags="lpsvPSVX", values="mqufrx")
# Builtins that set variables: how they read their options, the option naming a variable, and how many
# of their operands are variable names.
_SETS_NAMED = {
    "read": (_READ, "-a", None),
    "mapfile": (_MAPFILE, "", 1),
    "readarray": (_MAPFILE, "", 1),
    "printf": (Options(values="v"), "-v", 0),
    "wait": (Options(flags="nf", values="p"), "-p", 0),
}


def _evaluates(option: str) -> bool:
    """`declare -i` evaluates values as arithmetic, `-n` makes a name stand for another (`-ix`, `+n` too)."""
    return option[:1] in ("-", "+") and option[1:].isalpha() and ("i" in option or "n" in option)


def _assigned_names(program: str, arguments: Sequence[Word]) -> Iterator[str | None]:
    """The variables a builtin sets (None for a name only known when it runs): `export PS4=x` sets PS4."""
    if program in _DECLARES:
        named = [word for word in arguments if not word.value.startswith(("-", "+"))]
    elif program in _SETS_NAMED:  # `read NAME`, `read -a NAME`, `mapfile NAME`, `printf -v NAME`, `wait -p NAME`
        grammar, option, operands = _SETS_NAMED[program]
        parsed = parse_options(grammar, arguments)
        named = [value for value in parsed.values(option) if value is not None]
        named += [*parsed.operands[:operands], *parsed.unread]
    elif program in ("getopts", "for"):  # `getopts spec NAME`; `for NAME in ...` is a segment too
        named = list(arguments[program == "getopts" :][:1])
    else:
        return
    for word in named:
        yield variable_name(word)


def _builtin_kind(program: str, arguments: Sequence[Word]) -> str | None:
    """The problem kind of a builtin that binds code to a name or an event: `hash -p`, `alias`, `mapfile -C`, ..."""
    texts = [word.value for word in arguments]
    options = [text for text in texts if text.startswith("-")]
    if program == "hash" and any("p" in option for option in options):
        return "rebinds"  # `hash -p /bin/rm ls`: `ls` runs rm
    if program == "alias" and any(
        "=" in text or word.literal is None for text, word in zip(texts, arguments, strict=True)
    ):
        return "rebinds"
    if program == "enable" and any(not re.fullmatch(r"-[aps]+", text) for text in texts):
        return "rebinds"  # `enable -n` lets a program shadow a builtin; `enable -f` loads code
    callbacks = {"mapfile": (_MAPFILE, "-C"), "readarray": (_MAPFILE, "-C"), "bind": (_BIND, "-x")}
    callbacks |= dict.fromkeys(("compgen", "complete"), (_COMPLETE, "-C -F"))
    if program in callbacks:
        grammar, names = callbacks[program]
        parsed = parse_options(grammar, arguments)
        if parsed.has(*names.split()) or parsed.unknown or parsed.unread:
            return "runs_later"
    if program == "fc":
        return "runs_code"  # it runs commands from the history, or an editor
    return None


def _close(opened: list[str], opener: str) -> None:
    if not opened or opened[-1] != opener:
        closer = ")" if opener == "(" else "}"
        raise _Unparsable("stray", closer)
    opened.pop()
