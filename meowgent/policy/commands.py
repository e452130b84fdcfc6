"""Judging a shell line by the rules' `command` patterns: every command it runs, each read several ways.

The line is read into its simple commands (`shellsplit.reader`, over bash's grammar), substitutions and
the commands that `eval`, `sh -c`, `xargs` or `find -exec` run included. Deny and ask patterns are
tried against every reading of each command, so they cannot be dodged: as written, and in plain form
(quotes removed, `FOO=1` and redirections dropped, `/bin/rm` as `rm`, and again after each wrapper
such as `sudo` or `env`, read by its own option table), and against the whole line. Allow patterns see
only the command as written, and their `*` never stands for writing a file: a redirection that writes
needs a `>` in the pattern, a write option (`sort -o`, `git log --output`, `tee`) the option spelled.
A hidden line (see `shellsplit.reader`) is denied while any deny rule exists and otherwise asks; no
allow rule covers it.

Linear in the line's length: the reader is, and each command is read once per reading.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase

from meowgent.policy.actions import STRICT_FIRST, Action, Rule
from meowgent.policy.why import Why
from meowgent.shellsplit.programs import Write, invocations, read_program
from meowgent.shellsplit.reader import parse_segment, split_command
from meowgent.shellsplit.words import SimpleCommand, Word, program_name

__all__ = ["all_start_with", "judge_command", "plain_words", "prefix_words", "writes_of"]


def judge_command(command: str, rules: Sequence[Rule]) -> tuple[Action, Why]:
    """Allow, ask or deny a shell line by the command rules that apply to its tool, and why (for the person)."""
    split = split_command(command)
    judged = [_judge_segment(segment, rules) for segment in split.commands]
    # Deny and ask patterns also see the whole line: `curl * | sh` is a fair thing to write in a rule.
    whole = _loose_matches((command.strip(),), rules)
    judged += [(action, Why("rule_matches_line", str(rule))) for action, rule in whole]
    denied = next((verdict for verdict in judged if verdict[0] == "deny"), None)
    if denied:
        return denied
    if split.hidden:  # it may run anything, so any deny rule could match it, and no allow rule covers it
        unseen = next((rule for rule in rules if rule.action == "deny"), None)
        if unseen is not None:
            return "deny", Why("hidden_deny", str(unseen), problems=split.problems)
        return "ask", Why("hidden", problems=split.problems)
    asked = next((verdict for verdict in judged if verdict[0] == "ask"), None)
    if asked:
        return asked
    if not split.commands:
        return "ask", Why("runs_nothing")
    return "allow", Why("all_allowed")


def _judge_segment(segment: SimpleCommand, rules: Sequence[Rule]) -> tuple[Action, Why]:
    loose = next(_loose_matches(_views(segment), rules), None)
    if loose is not None:
        return loose[0], Why("rule_matches", str(loose[1]), segment.text)
    rule = next((rule for rule in rules if rule.action == "allow" and _allows(rule.command, segment)), None)
    if rule is not None:
        return "allow", Why("rule_allows", str(rule), segment.text)
    return "ask", Why("no_rule", text=segment.text)


def _loose_matches(views: tuple[str, ...], rules: Sequence[Rule]) -> Iterator[tuple[Action, Rule]]:
    """The deny rules, then the ask rules, whose command pattern matches any of `views`."""
    for action in STRICT_FIRST:
        for rule in rules:
            if rule.action == action and (rule.command is None or any(fnmatchcase(v, rule.command) for v in views)):
                yield action, rule


def _allows(pattern: str | None, segment: SimpleCommand) -> bool:
    """The strict reading: the segment as written, where `*` never covers writing a file.

    A redirection that writes is covered only by a pattern that writes a `>`; a write option (`git log
    --output=FILE`, `sort -o`, `tee`, `sed -i`) only by a pattern that spells that option at the start of
    one of its words, as `sort -o sorted.txt *` does.
    """
    if pattern is None:
        return True
    if not fnmatchcase(segment.text, pattern):
        return False
    return all(_spells(pattern, spelling) for spelling in _write_spellings(segment))


def _write_spellings(segment: SimpleCommand) -> list[str]:
    """What a pattern must spell to cover the files `segment` writes."""
    spellings = [">" for redirect in segment.redirects if redirect.writes]
    return spellings + [write.spelling for write in writes_of(segment)]


def writes_of(parsed: SimpleCommand) -> Iterator[Write]:
    """The files each command of the segment writes through its options or operands (wrappers included)."""
    for invocation in invocations(parsed.words):
        program = program_name(invocation[0])
        if program is not None:
            yield from read_program(program, invocation[1:]).writes


def _spells(pattern: str, spelling: str) -> bool:
    """Whether the pattern writes `spelling` at the start of one of its words (`>` anywhere, as before)."""
    if spelling == ">":
        return ">" in pattern
    starts = [0, *(index + 1 for index, char in enumerate(pattern) if char.isspace())]
    return any(pattern.startswith(spelling, start) for start in starts)


def _views(segment: SimpleCommand) -> tuple[str, ...]:
    """The segment as written, then each command it runs in plain form."""
    return (segment.text, *(" ".join(plain_words(invocation)) for invocation in invocations(segment.words)))


def plain_words(words: Sequence[Word]) -> list[str]:
    """A command and its arguments in plain form: the program's base name, quotes removed where the value is known."""
    return [program_name(words[0]) or words[0].text, *(w.text if w.literal is None else w.literal for w in words[1:])]


def prefix_words(prefix: str) -> list[str]:
    """The words a scope prefix stands for, as written; empty if it is not the start of one simple command."""
    try:
        parsed = parse_segment(prefix)
    except ValueError:
        return []
    return [] if parsed.redirects else _texts(parsed)


def all_start_with(command: str, wanted: list[str]) -> bool:
    """Whether every command of a line that is not hidden starts with the words `wanted`."""
    split = split_command(command)
    return not split.hidden and bool(split.commands) and all(_starts_with(s, wanted) for s in split.commands)


def _starts_with(segment: SimpleCommand, wanted: list[str]) -> bool:
    writes = any(redirect.writes for redirect in segment.redirects) or any(writes_of(segment))
    return not writes and _texts(segment)[: len(wanted)] == wanted


def _texts(parsed: SimpleCommand) -> list[str]:
    return [word.text for word in (*parsed.assignments, *parsed.words)]
