"""Who owns which conversation, and every action a page may take on one.

Gradio-free on purpose: the ownership and approval rules are tested without a browser.
Every action names its owner and is checked here, server-side, so a crafted API call
cannot open, approve or stop someone else's chat.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from meowgent.agent import Agent, Conversation, Decision
from meowgent.events import AgentEvent, ToolCall
from meowgent.runs import RunBusy, RunRegistry
from meowgent.tools import ToolError, get_tool

TITLE_CHARS = 48


class ChatError(Exception):
    """An action that cannot be done; the message is a plain sentence for the page."""


@dataclass
class Chat:
    conversation: Conversation
    owner: str
    title: str = "New chat"
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)

    @property
    def id(self) -> str:
        return self.conversation.id


class ChatService:
    """All chats of this server, by owner."""

    def __init__(self, agent: Agent, runs: RunRegistry, *, default_model: str) -> None:
        self._agent = agent
        self._runs = runs
        self._default_model = default_model
        self._chats: dict[str, Chat] = {}
        self._lock = threading.Lock()

    def new_chat(self, owner: str, model: str | None = None) -> Chat:
        conversation = Conversation(id=uuid.uuid4().hex, model=model or self._default_model)
        chat = Chat(conversation, owner)
        with self._lock:
            self._chats[chat.id] = chat
        return chat

    def chats(self, owner: str) -> list[Chat]:
        """The owner's chats, newest first."""
        with self._lock:
            mine = [chat for chat in self._chats.values() if chat.owner == owner]
        return sorted(mine, key=lambda chat: chat.updated, reverse=True)

    def get(self, owner: str, chat_id: str) -> Chat:
        with self._lock:
            chat = self._chats.get(chat_id)
        # The same answer for "missing" and "not yours", so ids cannot be probed.
        if chat is None or chat.owner != owner:
            raise ChatError("This conversation is not available. Start a new chat.")
        return chat

    def send(self, owner: str, chat_id: str, text: str) -> None:
        """Start answering a new message; calls still waiting for approval are rejected."""
        chat = self.get(owner, chat_id)
        text = text.strip()
        if not text:
            raise ChatError("Type a message first.")
        self._start(chat, lambda cancel: self._agent.run(chat.conversation, text, cancel))
        if chat.title == "New chat":
            chat.title = text.splitlines()[0][:TITLE_CHARS]

    def follow(self, owner: str, chat_id: str, *, poll: float = 0.5) -> Iterator[list[AgentEvent]]:
        """The chat's events from the start, then live until its answer ends."""
        self.get(owner, chat_id)
        return self._runs.subscribe(chat_id, poll=poll)

    def is_running(self, owner: str, chat_id: str) -> bool:
        self.get(owner, chat_id)
        return self._runs.is_running(chat_id)

    def waiting(self, owner: str, chat_id: str) -> tuple[ToolCall, ...]:
        """Calls waiting for this owner's decision, in order; none while an answer runs."""
        chat = self.get(owner, chat_id)
        if self._runs.is_running(chat_id):
            return ()
        return self._agent.waiting(chat.conversation)

    def decide(self, owner: str, chat_id: str, decisions: Mapping[str, Decision]) -> None:
        """Apply decisions to waiting calls. They must name the call at the head of the queue."""
        waiting = self.waiting(owner, chat_id)
        waiting_ids = {call.id for call in waiting}
        if not decisions or not waiting or waiting[0].id not in decisions or not set(decisions) <= waiting_ids:
            raise ChatError("That request is no longer waiting for you, so nothing was run.")
        for call in waiting:
            edited = decisions.get(call.id)
            if edited is not None and edited.approved and edited.arguments is not None:
                try:  # the same checks the model's own call passed
                    get_tool(call.name).validate(edited.arguments)
                except ToolError as exc:
                    raise ChatError(f"The changed request can't run: {exc}") from None
        chat = self.get(owner, chat_id)
        self._start(chat, lambda cancel: self._agent.resume(chat.conversation, dict(decisions), cancel))

    def retry(self, owner: str, chat_id: str) -> None:
        chat = self.get(owner, chat_id)
        self._start(chat, lambda cancel: self._agent.retry(chat.conversation, cancel))

    def stop(self, owner: str, chat_id: str) -> bool:
        self.get(owner, chat_id)
        return self._runs.stop(chat_id)

    def set_model(self, owner: str, chat_id: str, model: str) -> None:
        self.get(owner, chat_id).conversation.model = model

    def set_thinking(self, owner: str, chat_id: str, think: bool) -> None:
        self.get(owner, chat_id).conversation.think = think

    def forget_owner(self, owner: str) -> None:
        """Drop every chat of an owner who is gone (their page closed for good)."""
        with self._lock:
            gone = [chat_id for chat_id, chat in self._chats.items() if chat.owner == owner]
            for chat_id in gone:
                del self._chats[chat_id]
        for chat_id in gone:
            self._runs.forget(chat_id)

    def _start(self, chat: Chat, job) -> None:
        chat.updated = time.time()
        try:
            self._runs.start(chat.id, job)
        except RunBusy:
            raise ChatError("An answer is still running. Wait for it, or press Stop.") from None
