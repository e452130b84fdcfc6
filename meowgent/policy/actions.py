"""A rule and what it does with the calls it matches: allow, ask or deny. Deny beats ask, and ask beats allow.

`Rule` lives here, below `rules` (which reads rules files and applies them) and `commands` (which judges a shell
line by them), so `commands` needs nothing from `rules`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

Action = Literal["allow", "ask", "deny"]
"""What a rule, a chat scope or the defaults make of a call (the person's own choice is `conversation.Decision`)."""
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")
"""Weakest first: when several rules match, the last of these among them wins."""
STRICT_FIRST: tuple[Action, ...] = ("deny", "ask")
"""The actions any reading of a call can trigger, strongest first; allow needs the strict reading."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One entry of the rules file; a pattern left as None matches everything."""

    tool: str
    action: Action
    command: str | None = None
    path: str | None = None
    host: str | None = None

    def __str__(self) -> str:
        patterns = [f"{key} {json.dumps(value)}" for key, value in self.patterns().items() if value is not None]
        return " ".join([self.action, self.tool, *patterns])

    def patterns(self) -> dict[str, str | None]:
        """The rule's patterns by key; None where the rule sets none."""
        return {"command": self.command, "path": self.path, "host": self.host}
