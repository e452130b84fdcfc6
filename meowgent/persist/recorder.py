"""Recorder: writes each chat's events and state to the store while an answer runs.

Status changes (a call finished, approval needed, done) are written at once, with the
transcript and the queued calls, so a restart resumes exactly there. Streamed text is
buffered and written at least every `flush_seconds` by a background thread, so a `kill -9`
loses at most that much of an answer.

A save writes only what changed since the last one: the recorder remembers which message
and call objects it saved, and the agent appends messages and never changes one in place.
So an answer with N status changes writes O(N) rows and bytes, not the transcript N times.
"""

from __future__ import annotations

import logging
import operator
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from meowgent.conversation import Conversation, InvalidCall
from meowgent.events import AgentEvent, Delta, ToolCall, continues
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

    def take(self) -> list[dict[str, Any]]:
        records = [event_to_record(replace(first, text="".join(pieces))) for first, pieces in self.runs]
        self.runs = []
        return records


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
        self._flusher = threading.Thread(target=self._flush_every, args=(flush_seconds,), daemon=True)
        self._flusher.start()

    def record(self, chat_id: str, event: AgentEvent, conversation: Conversation, *, title: str) -> None:
        """Buffer a delta, or write a status event together with the conversation's state."""
        if isinstance(event, Delta):
            with self._lock:
                self._buffers.setdefault(chat_id, _Buffer()).add(event)
            return
        with self._lock:
            buffered = self._buffers.pop(chat_id, _Buffer()).take()
            self._write(lambda: self._store.append_events(chat_id, [*buffered, event_to_record(event)]))
            self.save(chat_id, conversation, title=title)

    def save(self, chat_id: str, conversation: Conversation, *, title: str) -> None:
        """Write the transcript, the queued calls and the chat's permissions as they are now."""
        with self._lock:
            # Copies first: the run thread may append while another thread saves (a revoked scope, say).
            messages, pending = list(conversation.messages), list(conversation.pending)
            saved = self._saved.get(chat_id)
            unchanged = saved.unchanged(messages, pending) if saved else None
            written = self._write(
                lambda: self._store.save_conversation(
                    chat_id,
                    title=title,
                    model=conversation.model,
                    think=conversation.think,
                    messages=messages,
                    pending=[call_to_record(call) for call in pending],
                    scopes=[asdict(scope) for scope in conversation.scopes],
                    unchanged=unchanged,
                )
            )
            if written:
                self._saved[chat_id] = _Saved(messages, pending)
            else:
                self._saved.pop(chat_id, None)

    def forget(self, chat_id: str) -> None:
        with self._lock:
            self._buffers.pop(chat_id, None)
            self._saved.pop(chat_id, None)

    def flush(self) -> None:
        with self._lock:
            for chat_id, buffer in list(self._buffers.items()):
                records = buffer.take()
                if records:
                    self._write(lambda chat_id=chat_id, records=records: self._store.append_events(chat_id, records))

    def _flush_every(self, seconds: float) -> None:
        while True:  # a daemon thread: it ends with the process
            time.sleep(seconds)
            self.flush()

    @staticmethod
    def _write(write: Callable[[], object]) -> bool:
        try:
            write()
        except StoreError:  # the chat was deleted while its answer ran: nothing left to keep
            log.info("not recording an event of a deleted chat")
            return False
        return True
