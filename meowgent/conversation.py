"""One chat as the agent runs it: the transcript, the calls still to run, and the person's answers to them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from meowgent.events import ToolCall
from meowgent.policy.scopes import Scope


@dataclass(frozen=True, slots=True)
class InvalidCall:
    """A call that could not be parsed or validated; it gets `error` as its result."""

    id: str
    name: str
    error: str


@dataclass(frozen=True, slots=True)
class Decision:
    """The person's answer to one waiting call."""

    approved: bool
    reason: str = ""
    arguments: dict[str, Any] | None = None
    """The arguments the person edited the call to, if they changed it before approving."""
    scope: Scope | None = None
    """Also allow calls like this one for the rest of the chat."""
    network: tuple[str, ...] = ()
    """The hosts this command may reach, names or patterns (`*`: any); the sandbox's rule, besides the chat's own
    `Conversation.network`."""


@dataclass
class Conversation:
    """One chat: the transcript sent to Ollama (system prompt excluded) and the calls not yet run."""

    id: str
    model: str
    owner: str = ""
    """Who the chat belongs to: their rules judge its calls ("" is judged by the server's rules alone)."""
    think: bool = True
    messages: list[dict[str, Any]] = field(default_factory=list)
    """Appended to (a retry drops the tail), never changed in place: the recorder saves only new messages."""
    pending: list[ToolCall | InvalidCall] = field(default_factory=list)
    """Calls of the last reply still to run, in the model's order; the head may wait for approval."""
    scopes: list[Scope] = field(default_factory=list)
    """What the person allowed for the rest of this chat."""
    servers_off: list[str] = field(default_factory=list)
    """MCP servers whose tools this chat does not offer the model."""
    network: tuple[str, ...] = ()
    """The hosts every command of this chat may reach (`*`: any; (): none): the person's choice, never the model's."""
    notes: list[str] = field(default_factory=list)
    """What the person did since the model's last reply that it should know (`files.told.uploaded`, `undone`):
    the next message carries them. Kept in memory only: a restart loses notes not yet sent."""
