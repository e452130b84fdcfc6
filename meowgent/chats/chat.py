"""One chat as the service keeps it: its conversation, its title and its calls' ledger.

Its own module, below `service` and `workspace_acts`, which both hold chats.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from meowgent.chats.audit import CallLedger
from meowgent.conversation import Conversation

NEW_TITLE = "New chat"
"""A chat's title until its first message names it (the page words it)."""


@dataclass
class Chat:
    conversation: Conversation
    title: str = NEW_TITLE
    ledger: CallLedger = field(default_factory=CallLedger)
    """Its calls from proposal to result, for the calls table and the audit trail."""

    @property
    def id(self) -> str:
        return self.conversation.id

    @property
    def owner(self) -> str:
        return self.conversation.owner
