"""Who owns which conversation, and every action a page may take on one.

Gradio-free on purpose: the ownership and approval rules are tested without a browser.
Every action names its owner and is checked here, server-side, so a crafted API call
cannot open, approve or stop someone else's chat. Chats live in the store and are loaded
on first use, so they survive reloads and restarts.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from meowgent.agent.loop import Agent
from meowgent.chats.export import to_json, to_markdown
from meowgent.chats.runs import RunBusy, RunRegistry
from meowgent.conversation import Conversation, Decision
from meowgent.events import AgentEvent, Done, ErrorEvent, ToolCall, ToolCallReady, ToolResult
from meowgent.persist.recorder import Recorder
from meowgent.persist.records import call_from_record, event_from_record, event_to_record
from meowgent.persist.store import ConversationRow, Store, StoreError
from meowgent.policy.scopes import Scope
from meowgent.tools.spec import ToolError
from meowgent.ui.i18n import ENGLISH, t

log = logging.getLogger(__name__)

NEW_TITLE = "New chat"
TITLE_CHARS = 48
INTERRUPTED = "This answer was cut off because Meowgent stopped while writing it. Send a message to go on."


class ChatError(Exception):
    """An action that cannot be done: `key` names the sentence in meowgent.ui.i18n; str() is the English."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(t(ENGLISH, key, **values))
        self.key = key
        self.values = values

    def say(self, language: str) -> str:
        return t(language, self.key, **self.values)


@dataclass
class Chat:
    conversation: Conversation
    title: str = NEW_TITLE
    calls: dict[str, ToolCall] = field(default_factory=dict)
    """Calls proposed in this chat, by id, until they have a result (for the audit log)."""
    decisions: dict[str, tuple[Decision, str, float]] = field(default_factory=dict)
    """Decisions not yet carried out: the decision, who made it and when."""

    @property
    def id(self) -> str:
        return self.conversation.id

    @property
    def owner(self) -> str:
        return self.conversation.owner


class ChatService:
    """All chats of this server, by owner."""

    def __init__(self, agent: Agent, store: Store, *, default_model: str, workspace: Path) -> None:
        self._agent = agent
        self._store = store
        self._default_model = default_model
        self._workspace = workspace
        self._recorder = Recorder(store)
        self._runs = RunRegistry(on_event=self._on_event)
        self._chats: dict[str, Chat] = {}
        self._lock = threading.Lock()
        self._close_interrupted()

    def new_chat(self, owner: str, model: str | None = None) -> Chat:
        conversation = Conversation(id=uuid.uuid4().hex, model=model or self._default_model, owner=owner)
        self._store.create_conversation(
            conversation.id, owner=owner, title=NEW_TITLE, model=conversation.model, workspace=self._workspace
        )
        chat = Chat(conversation)
        with self._lock:
            self._chats[chat.id] = chat
        return chat

    def chats(self, owner: str) -> list[ConversationRow]:
        """The owner's chats, newest first."""
        return self._store.conversations(owner)

    def require_owner(self, owner: str) -> None:
        """Refuse a caller that never opened the page: every page load gives its owner a chat."""
        if not self._store.conversations(owner):
            raise ChatError("owner_unknown")

    def get(self, owner: str, chat_id: str) -> Chat:
        with self._lock:
            chat = self._chats.get(chat_id) or self._load(chat_id)
        # The same answer for "missing" and "not yours", so ids cannot be probed.
        if chat is None or chat.owner != owner:
            raise ChatError("chat_unavailable")
        return chat

    def follow(self, owner: str, chat_id: str, *, poll: float = 0.5) -> Iterator[list[AgentEvent]]:
        """The chat's events from the start, then live until its answer ends (empty batches while it is silent)."""
        self.get(owner, chat_id)
        return self._runs.subscribe(chat_id, poll=poll)

    def is_running(self, owner: str, chat_id: str) -> bool:
        self.get(owner, chat_id)
        return self._runs.is_running(chat_id)

    def send(self, owner: str, chat_id: str, text: str) -> None:
        """Start answering a new message; calls still waiting for approval are rejected."""
        chat = self.get(owner, chat_id)
        text = text.strip()
        if not text:
            raise ChatError("chat_type_first")
        title = chat.title
        if chat.title == NEW_TITLE:
            chat.title = text.splitlines()[0][:TITLE_CHARS]
        try:
            self._start(chat, lambda cancel: self._agent.run(chat.conversation, text, cancel))
        except ChatError:
            chat.title = title
            raise

    def waiting(self, owner: str, chat_id: str) -> tuple[ToolCall, ...]:
        """Calls waiting for this owner's decision, in order; none while an answer runs."""
        chat = self.get(owner, chat_id)
        if self._runs.is_running(chat_id):
            return ()
        return self._agent.waiting(chat.conversation)

    def decide(
        self,
        owner: str,
        chat_id: str,
        decisions: Mapping[str, Decision],
        *,
        decided_by: str = "",
        chat_network: bool | None = None,
    ) -> None:
        """Apply decisions to waiting calls. They must name the call at the head of the queue.

        `chat_network` is the chat's network setting as the card left it; it applies when the head is approved.
        """
        waiting = self.waiting(owner, chat_id)
        waiting_ids = {call.id for call in waiting}
        if not decisions or not waiting or waiting[0].id not in decisions or not set(decisions) <= waiting_ids:
            raise ChatError("chat_not_waiting")
        chat = self.get(owner, chat_id)
        for call in waiting:
            edited = decisions.get(call.id)
            if edited is not None and edited.approved and edited.arguments is not None:
                self._check_edit(chat, call, edited.arguments)
        for decision in decisions.values():
            if decision.approved and decision.scope is not None and decision.scope not in chat.conversation.scopes:
                chat.conversation.scopes.append(decision.scope)
        if chat_network is not None and decisions[waiting[0].id].approved:
            self._set_network(chat, chat_network)
        for call in waiting:
            if call.id in decisions:
                status = "approved" if decisions[call.id].approved else "rejected"
                self._store.record_call(chat_id, call.id, name=call.name, arguments=call.arguments, status=status)
        # Before the run starts: its first result may reach the audit log before this method returns.
        now = time.time()
        chat.decisions.update({call_id: (decision, decided_by, now) for call_id, decision in decisions.items()})
        self._start(chat, lambda cancel: self._agent.resume(chat.conversation, dict(decisions), cancel))

    def scopes(self, owner: str, chat_id: str) -> list[Scope]:
        """What the owner allowed for the rest of this chat."""
        return list(self.get(owner, chat_id).conversation.scopes)

    def allow(self, owner: str, chat_id: str, scope: Scope) -> None:
        """Allow `scope` for the rest of this chat without a waiting call (the sidebar's per-server switch)."""
        chat = self.get(owner, chat_id)
        if scope not in chat.conversation.scopes:
            chat.conversation.scopes.append(scope)
            self._recorder.save(chat_id, chat.conversation, title=chat.title)

    def revoke(self, owner: str, chat_id: str, scope: Scope) -> None:
        """Stop allowing `scope` in this chat: matching calls ask again."""
        chat = self.get(owner, chat_id)
        if scope in chat.conversation.scopes:
            chat.conversation.scopes.remove(scope)
            self._recorder.save(chat_id, chat.conversation, title=chat.title)

    def servers_off(self, owner: str, chat_id: str) -> list[str]:
        """The MCP servers whose tools this chat does not offer."""
        return list(self.get(owner, chat_id).conversation.servers_off)

    def set_servers_off(self, owner: str, chat_id: str, servers: list[str]) -> None:
        """Turn these MCP servers off for this chat (and the others back on), from its next model reply."""
        chat = self.get(owner, chat_id)
        chat.conversation.servers_off = sorted(set(servers))
        self._store.set_servers_off(chat_id, chat.conversation.servers_off)

    def network(self, owner: str, chat_id: str) -> bool:
        """Whether every command of this chat may reach the network."""
        return self.get(owner, chat_id).conversation.network

    def set_network(self, owner: str, chat_id: str, on: bool) -> None:
        """Let every command of this chat reach the network, or stop letting them (from the next command)."""
        self._set_network(self.get(owner, chat_id), on)

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

    def rename(self, owner: str, chat_id: str, title: str) -> None:
        chat = self.get(owner, chat_id)
        title = " ".join(title.split())[:TITLE_CHARS]
        if not title:
            raise ChatError("chat_name_first")
        chat.title = title
        self._store.rename(chat_id, title)

    def delete(self, owner: str, chat_id: str) -> None:
        """Stop its answer and delete the chat for good, with its history and audit log."""
        self.get(owner, chat_id)
        self._runs.stop(chat_id)
        self._runs.join(chat_id, timeout=5)
        with self._lock:
            self._chats.pop(chat_id, None)
        self._runs.forget(chat_id)
        self._recorder.forget(chat_id)
        self._store.delete(chat_id)

    def export(self, owner: str, chat_id: str) -> tuple[str, str]:
        """The chat as (Markdown, JSON)."""
        self.get(owner, chat_id)
        self._recorder.flush()
        stored = self._store.load(chat_id)
        if stored is None:
            raise ChatError("chat_unavailable")
        audit = self._store.audit(chat_id)
        return to_markdown(stored, audit), to_json(stored, audit, self._store.calls(chat_id))

    def audit(self, owner: str, chat_id: str) -> list[dict]:
        """Who decided what about this chat's risky calls, oldest first."""
        self.get(owner, chat_id)
        return self._store.audit(chat_id)

    def _check_edit(self, chat: Chat, call: ToolCall, arguments: dict) -> None:
        """An edited call passes the same checks as the model's own: schema and rules."""
        try:
            self._agent.registry.get(call.name).validate(arguments)
        except ToolError as exc:
            raise ChatError("chat_edit_invalid", detail=exc) from None
        verdict = self._agent.verdict(chat.conversation, ToolCall(call.id, call.name, arguments))
        if verdict.action == "deny":
            raise ChatError("chat_edit_denied", detail=verdict.reason)

    def _set_network(self, chat: Chat, on: bool) -> None:
        chat.conversation.network = on
        self._store.set_network(chat.id, on)

    def _start(self, chat: Chat, job) -> None:
        try:
            self._runs.start(chat.id, job)
        except RunBusy:
            raise ChatError("chat_busy") from None

    def _load(self, chat_id: str) -> Chat | None:
        """A chat from the store, its page log rebuilt from the recorded events (caller holds the lock)."""
        stored = self._store.load(chat_id) if chat_id else None
        if stored is None:
            return None
        row = stored.row
        conversation = Conversation(
            id=row.id,
            model=row.model,
            owner=row.owner,
            think=row.think,
            messages=stored.messages,
            pending=[call_from_record(record) for record in stored.pending],
            scopes=[scope for saved in stored.scopes if (scope := Scope.from_stored(saved)) is not None],
            servers_off=self._store.servers_off(chat_id),
            network=self._store.network(chat_id),
        )
        chat = self._chats[chat_id] = Chat(conversation, row.title)
        event_log = self._runs.log(chat_id)
        for record in stored.events:
            event_log.append(event_from_record(record))
        return chat

    def _close_interrupted(self) -> None:
        """Answers cut short by a crash or a kill end with a plain note instead of hanging forever."""
        for chat_id in self._store.unfinished():
            ending = [event_to_record(ErrorEvent(INTERRUPTED, "interrupted")), event_to_record(Done("error"))]
            self._store.append_events(chat_id, ending)
            self._store.mark_interrupted(chat_id, True)

    def _on_event(self, chat_id: str, event: AgentEvent) -> None:
        with self._lock:
            chat = self._chats.get(chat_id)
        if chat is None:
            return
        self._recorder.record(chat_id, event, chat.conversation, title=chat.title)
        try:
            if isinstance(event, ToolCallReady):
                chat.calls[event.call.id] = event.call
                call = event.call
                self._store.record_call(chat_id, call.id, name=call.name, arguments=call.arguments, status="pending")
            elif isinstance(event, ToolResult):
                self._record_result(chat, event)
                self._audit(chat, event)
        except StoreError:  # deleted while its answer ran
            log.info("not recording a call of a deleted chat")

    def _record_result(self, chat: Chat, result: ToolResult) -> None:
        call = chat.calls.get(result.call_id)
        if call is None:  # a call that never parsed has no row
            return
        now = time.time()
        self._store.record_call(
            chat.id,
            call.id,
            name=call.name,
            arguments=result.edited_arguments or call.arguments,
            status=result.status,
            result=result.output,
            started=now - result.duration,
            finished=now,
        )

    def _audit(self, chat: Chat, result: ToolResult) -> None:
        """One line per risky call: what was proposed, what ran, who decided and how it ended."""
        call = chat.calls.pop(result.call_id, None)
        decision, decided_by, when = chat.decisions.pop(result.call_id, (None, "", time.time()))
        if call is None or not self._agent.registry.get(call.name).risky:
            return
        scope = "once"
        if decision is None:
            verdict = {"rejected": "rejected: not approved", "error": "allowed", "done": "allowed"}[result.status]
            scope = "by your rules or a permission for this chat"
        else:
            verdict = "approved" if decision.approved else "rejected"
            if decision.approved and decision.scope is not None:
                scope = f"for this chat: {decision.scope}"
        ran = None if result.status == "rejected" else (result.edited_arguments or call.arguments)
        network = None
        if call.name == "run_shell" and ran is not None:  # as Agent._run_approved chose it
            network = chat.conversation.network or (decision is not None and decision.network)
        self._store.add_audit(
            chat.id,
            time=when,
            tool=call.name,
            proposed=call.arguments,
            run=ran,
            decision=verdict,
            scope=scope,
            decided_by=decided_by or "the chat's owner",
            outcome=result.status,
            reason=decision.reason if decision is not None else "",
            network=network,
        )
