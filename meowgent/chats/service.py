"""Who owns which conversation, and every action a page may take on one.

Gradio-free on purpose: the ownership and approval rules are tested without a browser.
Every action names its owner and is checked here, server-side, so a crafted API call
cannot open, approve or stop someone else's chat. Chats live in the store and are loaded
on first use, so they survive reloads and restarts.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from meowgent.chats.chat import NEW_TITLE, Chat
from meowgent.chats.errors import ChatError, ChatErrorKind
from meowgent.chats.export import ChatRecord
from meowgent.chats.runs import EventLog, RunBusy, RunRegistry
from meowgent.chats.workspace_acts import WorkspaceActs
from meowgent.conversation import Conversation, Decision
from meowgent.events import AgentEvent, Done, ErrorEvent, ToolCall
from meowgent.files.checkpoints import Checkpoints
from meowgent.persist.calls import AuditRow
from meowgent.persist.recorder import Recorder
from meowgent.persist.records import call_from_record, event_from_record
from meowgent.persist.store import ConversationRow, Store
from meowgent.policy.rules import Verdict
from meowgent.policy.scopes import Scope
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ToolError

TITLE_CHARS = 48


class Answerer(Protocol):
    """What the service asks of the agent (`meowgent.agent.loop.Agent`): answers as events, the queue, the rules."""

    registry: ToolRegistry

    def run(self, conversation: Conversation, text: str, cancel: threading.Event) -> Iterable[AgentEvent]: ...

    def resume(
        self, conversation: Conversation, decisions: Mapping[str, Decision], cancel: threading.Event
    ) -> Iterable[AgentEvent]: ...

    def retry(self, conversation: Conversation, cancel: threading.Event) -> Iterable[AgentEvent]: ...

    def waiting(self, conversation: Conversation) -> tuple[ToolCall, ...]: ...

    def verdict(self, conversation: Conversation, call: ToolCall) -> Verdict: ...

    def known_hosts(self, conversation: Conversation) -> tuple[str, ...]: ...


class ChatService:
    """All chats of this server, by owner."""

    def __init__(
        self,
        agent: Answerer,
        store: Store,
        *,
        default_model: str,
        workspace: Path,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        """`checkpoints`: the ones the agent keeps before each approved write (none: nothing can be undone)."""
        self._agent = agent
        self._store = store
        self._default_model = default_model
        self._workspace = workspace
        self._checkpoints = checkpoints
        self._recorder = Recorder(store)
        self.files = WorkspaceActs(self.get, self._recorder, workspace=workspace, checkpoints=checkpoints)
        """The person's own acts on the workspace (uploads, undos) in a chat of theirs."""
        self._runs = RunRegistry(on_event=self._on_event)
        self._chats: dict[str, Chat] = {}
        self._lock = threading.Lock()
        self._on_delete: list[Callable[[str], object]] = []
        # Answers cut short by a crash or a kill end with a plain note instead of hanging forever.
        self._recorder.close_unfinished([ErrorEvent("interrupted"), Done("error")])

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
            raise ChatError(ChatErrorKind.OWNER_UNKNOWN)

    def get(self, owner: str, chat_id: str) -> Chat:
        with self._lock:
            chat = self._chats.get(chat_id) or self._load(chat_id)
        # The same answer for "missing" and "not yours", so ids cannot be probed.
        if chat is None or chat.owner != owner:
            raise ChatError(ChatErrorKind.UNAVAILABLE)
        return chat

    def follow(self, owner: str, chat_id: str, *, poll: float = 0.5) -> Iterator[list[AgentEvent]]:
        """The chat's events from the start, then live until its answer ends (empty batches while it is silent)."""
        self.get(owner, chat_id)
        return self._runs.subscribe(chat_id, poll=poll)

    def event_log(self, owner: str, chat_id: str) -> EventLog:
        """The chat's event log across all its answers, read from a cursor (a watch link's feed follows it)."""
        self.get(owner, chat_id)
        return self._runs.log(chat_id)

    def is_running(self, owner: str, chat_id: str) -> bool:
        self.get(owner, chat_id)
        return self._runs.is_running(chat_id)

    def send(self, owner: str, chat_id: str, text: str) -> None:
        """Start answering a new message; calls still waiting for approval are rejected."""
        chat = self.get(owner, chat_id)
        text = text.strip()
        if not text:
            raise ChatError(ChatErrorKind.TYPE_FIRST)
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
        account: str = "",
        chat_network: tuple[str, ...] | None = None,
    ) -> None:
        """Apply decisions to waiting calls. They must name the call at the head of the queue.

        `account` is the login name of the person deciding ("" for the browser that owns the chat), for the audit
        trail. `chat_network` is the chat's hosts as the card left them; they apply when the head is approved.
        """
        waiting = self.waiting(owner, chat_id)
        waiting_ids = {call.id for call in waiting}
        if not decisions or not waiting or waiting[0].id not in decisions or not set(decisions) <= waiting_ids:
            raise ChatError(ChatErrorKind.NOT_WAITING)
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
        # Before the run starts: its first result may reach the audit trail before this method returns.
        rows = chat.ledger.decided(waiting, decisions, account=account, now=time.time())
        self._recorder.record_calls(chat_id, rows)
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

    def network(self, owner: str, chat_id: str) -> tuple[str, ...]:
        """The hosts every command of this chat may reach (`*`: any; (): none)."""
        return self.get(owner, chat_id).conversation.network

    def set_network(self, owner: str, chat_id: str, hosts: tuple[str, ...]) -> None:
        """Let every command of this chat reach these hosts, or (with none) no network (from the next command)."""
        self._set_network(self.get(owner, chat_id), hosts)

    def known_hosts(self, owner: str, chat_id: str) -> tuple[str, ...]:
        """The hosts the rules and this chat's scopes already allow: what the card offers a command's network."""
        return self._agent.known_hosts(self.get(owner, chat_id).conversation)

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
            raise ChatError(ChatErrorKind.NAME_FIRST)
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
        for listener in self._on_delete:
            listener(chat_id)

    def on_delete(self, listener: Callable[[str], object]) -> None:
        """Call `listener(chat_id)` after a chat is deleted (its watch link ends with it)."""
        self._on_delete.append(listener)

    def close(self) -> None:
        """The app closes: what its answers streamed so far is written and the recorder's thread ends."""
        self._recorder.close()

    def export(self, owner: str, chat_id: str) -> ChatRecord:
        """Everything kept of the chat: its transcript, its calls and its audit trail."""
        self.get(owner, chat_id)
        self._recorder.flush()
        stored = self._store.load(chat_id)
        if stored is None:
            raise ChatError(ChatErrorKind.UNAVAILABLE)
        return ChatRecord(stored, self._store.audit(chat_id), self._store.calls(chat_id))

    def audit(self, owner: str, chat_id: str) -> list[AuditRow]:
        """Who decided what about this chat's risky calls, oldest first."""
        self.get(owner, chat_id)
        return self._store.audit(chat_id)

    def _check_edit(self, chat: Chat, call: ToolCall, arguments: dict) -> None:
        """An edited call passes the same checks as the model's own: schema and rules."""
        try:
            self._agent.registry.get(call.name).validate(arguments)
        except ToolError as exc:
            raise ChatError(ChatErrorKind.EDIT_INVALID, detail=str(exc)) from None
        verdict = self._agent.verdict(chat.conversation, ToolCall(call.id, call.name, arguments))
        if verdict.action == "deny":
            raise ChatError(ChatErrorKind.EDIT_DENIED, why=verdict.reason.values())

    def _set_network(self, chat: Chat, hosts: tuple[str, ...]) -> None:
        chat.conversation.network = hosts
        self._store.set_network(chat.id, hosts)

    def _start(self, chat: Chat, job) -> None:
        try:
            self._runs.start(chat.id, job)
        except RunBusy:
            raise ChatError(ChatErrorKind.BUSY) from None

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

    def _on_event(self, chat_id: str, event: AgentEvent) -> None:
        with self._lock:
            chat = self._chats.get(chat_id)
        if chat is None:
            return
        conversation = chat.conversation
        calls, audit = chat.ledger.rows(event, risky=self._risky, chat_network=conversation.network, now=time.time())
        self._recorder.record(chat_id, event, conversation, title=chat.title, calls=calls, audit=audit)

    def _risky(self, tool: str) -> bool:
        try:
            return self._agent.registry.get(tool).risky
        except ToolError:  # an MCP tool whose server stopped while its call waited: risky, as MCP tools are
            return True
