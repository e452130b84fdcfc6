"""Why the rules decided as they did: a kind and plain values (a rule, a command, a line's problems), never a
sentence for the person.

`str(why)` is the English the model is told, and what logs and tests read; the page words the same values from its
catalogs (`meowgent.ui.i18n.why_text`), so a refusal reads in the person's language.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from meowgent.shellsplit.words import Problem

WhyKind = Literal[
    "rule_matches_line", "rule_matches", "rule_allows", "no_rule", "hidden", "hidden_deny", "runs_nothing",
    "all_allowed", "unchecked", "refused", "outside", "mcp_no_rule", "rule_matches_call", "reads_inside",
    "rule_allows_call", "no_rule_call", "only_reads", "chat_scope",
]  # fmt: skip

_ENGLISH: dict[WhyKind, str] = {
    "rule_matches_line": "the rule {rule} matches the command",
    "rule_matches": "the rule {rule} matches `{text}`",
    "rule_allows": "the rule {rule} allows `{text}`",
    "no_rule": "no rule allows `{text}`",
    "hidden": "Meowgent can't tell everything it runs: {problems}",
    "hidden_deny": "Meowgent can't tell everything it runs ({problems}), and the rule {rule} could match",
    "runs_nothing": "the command runs nothing that can be checked",
    "all_allowed": "your rules allow every command in it",
    "unchecked": "the call cannot be checked: {text}",
    "refused": "{text}",
    "outside": "{text}",
    "mcp_no_rule": "{text} is a tool of an MCP server, and no rule allows it",
    "rule_matches_call": "the rule {rule} matches this call",
    "reads_inside": "{text} would read inside {path}, where the rule {rule} applies",
    "rule_allows_call": "the rule {rule} allows this call",
    "no_rule_call": "no rule allows this {text} call",
    "only_reads": "{text} only reads",
    "chat_scope": "you allowed {text} for this chat",
}


@dataclass(frozen=True, slots=True)
class Why:
    """One reason: `rule` is the rule as shown (`deny run_shell command "rm *"`); `text` what it is about (a
    command or a part of one, a tool's name, a scope, or a tool's own refusal); `problems` what leaves a line open."""

    kind: WhyKind
    rule: str = ""
    text: str = ""
    path: str = ""
    problems: tuple[Problem, ...] = ()

    def __str__(self) -> str:
        problems = describe(self.problems)
        return _ENGLISH[self.kind].format(rule=self.rule, text=self.text, path=self.path, problems=problems)

    def values(self) -> dict[str, Any]:
        """The reason as plain JSON values, for an event and the page: a line's first few problems and how many
        more (a line may have thousands)."""
        shown = [[problem.kind, problem.snippet] for problem in self.problems[:SHOWN_PROBLEMS]]
        more = len(self.problems) - len(shown)
        return {
            "kind": self.kind,
            "rule": self.rule,
            "text": self.text,
            "path": self.path,
            "problems": shown,
            "more": more,
        }


SHOWN_PROBLEMS = 3
"""How many of a line's problems a reason names; the rest are counted."""


def describe(problems: Sequence[Problem]) -> str:
    """The first few problems as one English fragment, and how many more."""
    shown = "; ".join(map(str, problems[:SHOWN_PROBLEMS]))
    more = len(problems) - SHOWN_PROBLEMS
    return f"{shown}; and {more} more" if more > 0 else shown
