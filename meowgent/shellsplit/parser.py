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
  `programs.runs_value`), as `NAME=x cmd`, `NAME=x`, `export`/`declare`/`local`/`readonly`, `read`,
  `printf -v`, `for NAME`, or `env NAME=x`; or a callback bash runs: `mapfile -C`, `compgen -C`/`-F`,
  `complete -C`/`-F`, `bind -x`, `fc`;
- it changes what a name runs: `hash -p`, `alias`, `enable`, a function definition (any form);
- a command is only known when it runs (`$X x`), or it runs a file or its input (`source f`, `bash f`,
  `curl x | sh`);
- a program's own options run code or hide what runs (see `programs`): a wrapper with an option its
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
from collections.abc import Sequence
from dataclasses import dataclass

from meowgent.shellsplit.inspect import RunsText, inspect_segment
from meowgent.shellsplit.programs import MAX_NESTED
from meowgent.shellsplit.tokens import Findings, Operator, Redirection, Tokenizer, Unparsable
from meowgent.shellsplit.words import Problem, Redirect, SimpleCommand, Word, short

__all__ = ["SplitResult", "command_word", "forget_readings", "parse_segment", "split_command"]


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


@functools.lru_cache(maxsize=8)  # a call is judged, its card drawn and its scopes tried: one reading for all
def split_command(command: str) -> SplitResult:
    """The simple commands in `command`, substitutions included; see the module docstring for the rules."""
    segments: list[str] = []
    findings = Findings(budget=len(command) + _NESTED_BUDGET)
    try:
        _Parser(command, segments, findings).parse_list(closer="")
    except Unparsable as exc:
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
    tokens: list[str | Redirection] = []
    try:
        while (token := parser.next_token()) is not None:
            if isinstance(token, Operator):
                raise ValueError(f"{segment!r} is more than one simple command (it has {token.text!r})")
            tokens.append(token)
    except Unparsable as exc:
        raise ValueError(f"{segment!r} cannot be read: {exc.problem}") from None
    return _simple_command(tokens)


def _simple_command(tokens: Sequence[str | Redirection]) -> SimpleCommand:
    assignments: list[Word] = []
    words: list[Word] = []
    redirects: list[Redirect] = []
    for token in tokens:
        if isinstance(token, Redirection):
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


_NESTED_BUDGET = 4096
"""Characters that texts and commands handed on may add to the line's length in reading (see `Findings.spend`)."""

# Reserved words that only open, continue or close a block: the command after them is what runs.
_SKIPPED_KEYWORDS = frozenset({"!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "time"})
# Reserved words whose grammar this parser does not follow; guessing there could hide a command.
_UNREAD_KEYWORDS = frozenset({"case", "esac", "select", "coproc"})

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


class _Parser(Tokenizer):
    """Recursive descent over the text; every simple command it finishes is appended to `segments`."""

    def parse_list(self, closer: str) -> None:
        """Read commands up to `closer` (`)` ends a substitution) or, when it is empty, to the end of the text."""
        words: list[str | Redirection] = []
        opened: list[str] = []  # the `(` and `{` still open inside this list
        after_time = False  # bash's `time` keyword takes `-p`
        outer, self.outer_heredocs = self.outer_heredocs, len(self.heredocs) if closer else self.outer_heredocs
        try:
            while (token := self.next_token()) is not None:
                if isinstance(token, Redirection):
                    words.append(token)
                elif isinstance(token, Operator):
                    after_time = False
                    if token.text == "(" and words:
                        raise Unparsable("defines", f"{words[-1]}(")
                    if token.text == "(" and self.text.startswith("(", self.pos):
                        self.findings.note("arithmetic", self.text[self.pos - 1 : self.pos + 20])  # `((x))`
                    self._flush(words)
                    if token.text == "(":
                        opened.append("(")
                    elif token.text == ")" and not opened and closer == ")":
                        if len(self.heredocs) > self.outer_heredocs:
                            raise Unparsable("heredoc", "<< inside $(...)")  # its body would come after the `)`
                        return
                    elif token.text == ")":
                        _close(opened, "(")
                elif words:
                    words.append(token)
                elif not (after_time and token in ("-p", "--")):
                    after_time = token == "time"
                    self._command_start(token, words, opened)
            if closer:
                raise Unparsable("unclosed", "$(")
            if opened:
                raise Unparsable("unclosed", opened[-1])
        finally:  # also on error: the words read so far are still worth judging
            self.outer_heredocs = outer
            self._flush(words)

    def _command_start(self, word: str, words: list[str | Redirection], opened: list[str]) -> None:
        if word in _SKIPPED_KEYWORDS:
            return
        if word in _UNREAD_KEYWORDS:
            raise Unparsable("block", word)
        if word == "function":
            raise Unparsable("defines", word)
        if word == "{":
            opened.append("{")
        elif word == "}":
            _close(opened, "{")
        else:
            words.append(word)

    def _flush(self, words: list[str | Redirection]) -> None:
        if words:
            self.segments.append(" ".join(map(str, words)))
            self._inspect(_simple_command(words))
            words.clear()

    def _add(self, words: Sequence[Word], tail: str = "") -> None:
        """A command found inside another (what `xargs` or `find -exec` runs), as a segment of its own."""
        segment = " ".join(word.text for word in words) + tail
        self.segments.append(segment)
        if self.depth >= MAX_NESTED:
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

    def _inspect(self, parsed: SimpleCommand) -> None:
        """Note what in a segment leaves its meaning open, and split the texts and commands it hands on."""
        for finding in inspect_segment(parsed):
            if isinstance(finding, Problem):
                self.findings.add(finding)
            elif isinstance(finding, RunsText):
                self._run_text(finding.words, finding.who)
            else:
                self._add(finding.words, finding.tail)

    def _run_text(self, words: Sequence[Word], who: str) -> None:
        """Split a text a command runs as a command line (eval joins its arguments with spaces)."""
        if not words:
            return
        if any(word.literal is None for word in words):
            self.findings.note("unknown_text", f"{who} {' '.join(word.text for word in words)}")
            return
        if self.depth >= MAX_NESTED:
            self.findings.note("too_many", who)
            return
        text = " ".join(word.value for word in words)
        if not self.findings.spend(text):
            return
        nested = _Parser(text, self.segments, self.findings, depth=self.depth + 1)
        try:
            nested.parse_list(closer="")
        except Unparsable as exc:
            self.findings.add(exc.problem)


def _close(opened: list[str], opener: str) -> None:
    if not opened or opened[-1] != opener:
        closer = ")" if opener == "(" else "}"
        raise Unparsable("stray", closer)
    opened.pop()
