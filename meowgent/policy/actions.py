"""What a rule does with the calls it matches: allow, ask or deny. Deny beats ask, and ask beats allow."""

from __future__ import annotations

from typing import Literal

Action = Literal["allow", "ask", "deny"]
"""What a rule, a chat scope or the defaults make of a call (the person's own choice is `conversation.Decision`)."""
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")
"""Weakest first: when several rules match, the last of these among them wins."""
STRICT_FIRST: tuple[Action, ...] = ("deny", "ask")
"""The actions any reading of a call can trigger, strongest first; allow needs the strict reading."""
