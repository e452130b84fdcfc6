"""Recorder: writes each chat's events and state to the store while an answer runs.

Status changes (a call finished, approval needed, done) are written at once, with the
transcript and the queued calls, so a restart resumes exactly there. Streamed text is
buffered and written at least every `flush_seconds` by a background thread, so a `kill -9`
loses at most that much of an answer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from meowgent.agent import Conversation
from meowgent.events import AgentEvent, Delta, continues
from meowgent.records import call_to_record, event_to_record
from meowgent.store import Store, StoreError

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


class Recorder:
    """Persists events for many chats; `record` is called on each chat's run thread."""

    def __init__(self, store: Store, *, flush_seconds: float = FLUSH_SECONDS) -> None:
        self._store = store
        self._buffers: dict[str, _Buffer] = {}
        self._lock = threading.Lock()  # keeps each chat's records in the order they happened
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
        self._write(
            lambda: self._store.save_conversation(
                chat_id,
                title=title,
                model=conversation.model,
                think=conversation.think,
                messages=conversation.messages,
                pending=[call_to_record(call) for call in conversation.pending],
                scopes=[asdict(scope) for scope in conversation.scopes],
            )
        )

    def forget(self, chat_id: str) -> None:
        with self._lock:
            self._buffers.pop(chat_id, None)

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
    def _write(write: Callable[[], object]) -> None:
        try:
            write()
        except StoreError:  # the chat was deleted while its answer ran: nothing left to keep
            log.info("not recording an event of a deleted chat")
