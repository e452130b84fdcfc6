"""Recorder: the one writer of what a chat's events change in the store, while an answer runs.

Status changes (a call finished, approval needed, done) are written at once, in one transaction
with the transcript, the queued calls and the call and audit rows the event makes, so a restart
resumes exactly there and never finds half of it. Streamed text is buffered and written at least
every `flush_seconds` by a background thread, so a `kill -9` loses at most that much of an answer.

A save writes only what changed since the last one: the recorder remembers which message
and call objects it saved, and the agent appends messages and never changes one in place.
So an answer with N status changes writes O(N) rows and bytes, not the transcript N times.
"""

from __future__ import annotations

import functools
import logging
import operator
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from meowgent.conversation import Conversation, InvalidCall
from meowgent.events import AgentEvent, Delta, ToolCall, continues
from meowgent.persist.calls import AuditRow, CallRow
from meowgent.persist.records import call_to_record, event_to_record
from meowgent.persist.store import Store, StoreError, Unchanged

log = logging.getLogger(__name__)

FLUSH_SECONDS = 0.5


@dataclass
class _Buffer:
    """Deltas not yet written: consecutive ones of one kind are kept as pieces and joined once."""

    runs: list[tuple[Delta, list[str]]] = field(default_factory=list)

    def add(self, event: Delta) -> None:
        if self.runs and continues(self.runs[-1][0], event):
            self.runs[-1][1].append(event.text)
        else:
            self.runs.append((event, [event.text]))

    def records(self) -> list[dict[str, Any]]:
        return [event_to_record(replace(first, text="".join(pieces))) for first, pieces in self.runs]


@dataclass
class _Saved:
    """What the store holds of one chat, as the very objects that were saved."""

    messages: list[dict[str, Any]]
    pending: list[ToolCall | InvalidCall]

    def unchanged(self, messages: list[dict[str, Any]], pending: list[ToolCall | InvalidCall]) -> Unchanged:
        done, kept = _queue_change(self.pending, pending)
        return Unchanged(_same_start(self.messages, messages), done, kept)


def _same_start(saved: list[Any], current: list[Any]) -> int:
    """How many items at the start of `current` are the very objects at the start of `saved`."""
    if all(map(operator.is_, saved, current)):  # the usual case, in C: only appended to
        return min(len(saved), len(current))
    return next(i for i, (old, new) in enumerate(zip(saved, current, strict=False)) if old is not new)


def _queue_change(saved: list[Any], current: list[Any]) -> tuple[int, int]:
    """(calls that left the head of `saved`, calls of `saved` left at the start of `current`)."""
    for done in range(len(saved)):  # calls run from the head, so the first match is the usual one
        rest = len(saved) - done
        if rest <= len(current) and _same_start(saved[done:], current) == rest:
            return done, rest
    return len(saved), 0


class Recorder:
    """Persists events for many chats; `record` is called on each chat's run thread."""

    def __init__(self, store: Store, *, flush_seconds: float = FLUSH_SECONDS) -> None:
        self._store = store
        self._buffers: dict[str, _Buffer] = {}
        self._saved: dict[str, _Saved] = {}
        self._lock = threading.RLock()  # keeps each chat's records in the order they happened
        self._closed = threading.Event()
        self._flusher = threading.Thread(
            target=self._flush_every, args=(flush_seconds,), name="recorder-flush", daemon=True
        )
        self._flusher.start()

    def record(
        self,
        chat_id: str,
        event: AgentEvent,
        conversation: Conversation,
        *,
        title: str,
        calls: Sequence[CallRow] = (),
        audit: Sequence[AuditRow] = (),
    ) -> None:
        """Buffer a delta, or write a status event with the conversation's state and the event's call and audit rows."""
        if isinstance(event, Delta):
            with self._lock:
                self._buffers.setdefault(chat_id, _Buffer()).add(event)
            return
        with self._lock:
            buffered = self._buffers.get(chat_id, _Buffer()).records()

            def write() -> None:
                self._store.append_events(chat_id, [*buffered, event_to_record(event)])
                self._save(chat_id, conversation, title=title)
                self._write_rows(chat_id, calls, audit)

            self._in_one(chat_id, write)  # if it fails, the deltas stay buffered for the next write
            self._buffers.pop(chat_id, None)

    def record_calls(self, chat_id: str, calls: Sequence[CallRow], *, audit: Sequence[AuditRow] = ()) -> None:
        """Write call and audit rows that no event brings (the person's decisions, uploads and undos)."""
        with self._lock:
            self._in_one(chat_id, functools.partial(self._write_rows, chat_id, calls, audit))

    def save(self, chat_id: str, conversation: Conversation, *, title: str) -> None:
        """Write the transcript, the queued calls and the chat's permissions as they are now."""
        with self._lock:
            self._in_one(chat_id, lambda: self._save(chat_id, conversation, title=title))

    def close_unfinished(self, ending: Sequence[AgentEvent]) -> None:
        """End the event log of every chat whose answer was cut short (a crash, a kill) with `ending`, and say so."""
        records = [event_to_record(event) for event in ending]
        with self._lock:
            for chat_id in self._store.unfinished():
                self._in_one(chat_id, functools.partial(self._end, chat_id, records))

    def forget(self, chat_id: str) -> None:
        with self._lock:
            self._buffers.pop(chat_id, None)
            self._saved.pop(chat_id, None)

    def flush(self) -> None:
        with self._lock:
            for chat_id, buffer in list(self._buffers.items()):
                self._in_one(chat_id, functools.partial(self._store.append_events, chat_id, buffer.records()))
                self._buffers.pop(chat_id, None)

    def close(self) -> None:
        """Stop the background flushes and write what is buffered (an answer still running records its status
        changes as before, and its text with them)."""
        self._closed.set()
        self._flusher.join()
        self.flush()

    def _flush_every(self, seconds: float) -> None:
        while not self._closed.wait(seconds):
            self.flush()

    def _save(self, chat_id: str, conversation: Conversation, *, title: str) -> None:
        """Store what changed of the conversation since the last save, and remember what is stored now."""
        # Copies first: the run thread may append while another thread saves (a revoked scope, say).
        messages, pending = list(conversation.messages), list(conversation.pending)
        saved = self._saved.get(chat_id)
        self._store.save_conversation(
            chat_id,
            title=title,
            model=conversation.model,
            think=conversation.think,
            messages=messages,
            pending=[call_to_record(call) for call in pending],
            scopes=[asdict(scope) for scope in conversation.scopes],
            unchanged=saved.unchanged(messages, pending) if saved else None,
        )
        self._saved[chat_id] = _Saved(messages, pending)

    def _end(self, chat_id: str, records: list[dict[str, Any]]) -> None:
        self._store.append_events(chat_id, records)
        self._store.mark_interrupted(chat_id, True)

    def _write_rows(self, chat_id: str, calls: Sequence[CallRow], audit: Sequence[AuditRow]) -> None:
        for row in calls:
            self._store.record_call(chat_id, row)
        for row in audit:
            self._store.add_audit(chat_id, row)

    def _in_one(self, chat_id: str, write: Callable[[], None]) -> None:
        """Run `write` as one transaction; a chat deleted while its answer ran has nothing left to keep."""
        try:
            with self._store.transaction():
                write()
        except StoreError:  # nothing to keep of it, nor to write later
            self._saved.pop(chat_id, None)
            self._buffers.pop(chat_id, None)
            log.info("not recording an event of a deleted chat")
        except BaseException:
            self._saved.pop(chat_id, None)  # rolled back, so what it remembers is not stored: the next save writes all
            raise
