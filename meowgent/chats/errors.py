"""Why an action a page asked of the chat service cannot be done: a kind and values, never a sentence."""

from __future__ import annotations

from enum import Enum


class ChatErrorKind(str, Enum):
    """Why a page's action cannot be done; `meowgent.ui.i18n.chat_error_text` says it in the person's language."""

    UNAVAILABLE = "unavailable"
    """Not a chat of this owner, or no chat at all: the same answer, so ids cannot be probed."""
    OWNER_UNKNOWN = "owner_unknown"
    TYPE_FIRST = "type_first"
    NOT_WAITING = "not_waiting"
    EDIT_INVALID = "edit_invalid"
    """Values: `detail`, why the edited arguments do not fit the tool."""
    EDIT_DENIED = "edit_denied"
    """Values: `why`, the rules' reason (`meowgent.policy.why.Why.values()`)."""
    BUSY = "busy"
    NAME_FIRST = "name_first"


class ChatError(Exception):
    """An action that cannot be done: its kind, and the values the sentence about it names (never the sentence)."""

    def __init__(self, kind: ChatErrorKind, **values: object) -> None:
        super().__init__(kind.value)
        self.kind = kind
        self.values = values
