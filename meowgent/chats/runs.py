"""RunRegistry: each answer runs in its own thread and writes to its conversation's event log.

Browser events never run the agent themselves: they start a run and then read the log from
a cursor. So Stop is instant from any event, a reloaded page can re-attach to an answer in
progress, and no Gradio worker ever waits on a person.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from meowgent.events import AgentEvent, Delta, Done, ErrorEvent, continues

log = logging.getLogger(__name__)


@dataclass
class _Segment:
    """Consecutive deltas of one kind, kept as pieces so appending stays O(1)."""

    first: Delta
    pieces: list[str]

    def merged(self, start: int) -> Delta:
        return replace(self.first, text="".join(self.pieces[start:]))


@dataclass(frozen=True)
class Cursor:
    """Where a reader is: entry index, and pieces already read of that entry if it is a segment."""

    entry: int = 0
    piece: int = 0


class EventLog:
    """Append-only events of one conversation; readers wait for more from a cursor."""

    def __init__(self) -> None:
        self._entries: list[AgentEvent | _Segment] = []
        self._changed = threading.Condition()
        self.running = False

    def append(self, event: AgentEvent) -> None:
        with self._changed:
            last = self._entries[-1] if self._entries else None
            if isinstance(last, _Segment) and continues(last.first, event):
                last.pieces.append(event.text)
            elif isinstance(event, Delta):
                self._entries.append(_Segment(event, [event.text]))
            else:
                self._entries.append(event)
            self._changed.notify_all()

    def read(self, cursor: Cursor = Cursor(), *, wait: float = 0.0) -> tuple[list[AgentEvent], Cursor]:
        """Events after `cursor` (merged deltas), waiting up to `wait` seconds if there are none."""
        with self._changed:
            if wait and not self._has_news(cursor) and self.running:
                self._changed.wait(wait)
            events: list[AgentEvent] = []
            entry, piece = cursor.entry, cursor.piece
            for index in range(entry, len(self._entries)):
                item = self._entries[index]
                start = piece if index == entry else 0
                if isinstance(item, _Segment):
                    if start < len(item.pieces):
                        events.append(item.merged(start))
                else:
                    events.append(item)
            last = self._entries[-1] if self._entries else None
            if isinstance(last, _Segment):
                return events, Cursor(len(self._entries) - 1, len(last.pieces))
            return events, Cursor(len(self._entries), 0)

    def _has_news(self, cursor: Cursor) -> bool:
        if cursor.entry < len(self._entries) - 1:
            return True
        if cursor.entry == len(self._entries) - 1:
            last = self._entries[-1]
            return not isinstance(last, _Segment) or cursor.piece < len(last.pieces)
        return False

    def wake(self) -> None:
        with self._changed:
            self._changed.notify_all()


@dataclass
class _Run:
    thread: threading.Thread
    cancel: threading.Event


class RunBusy(RuntimeError):
    """A conversation already has an answer running."""


class RunRegistry:
    """One event log per conversation, at most one running answer per conversation."""

    def __init__(self, *, on_event: Callable[[str, AgentEvent], None] | None = None) -> None:
        self._logs: dict[str, EventLog] = {}
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()
        self._on_event = on_event

    def log(self, conversation_id: str) -> EventLog:
        with self._lock:
            return self._logs.setdefault(conversation_id, EventLog())

    def is_running(self, conversation_id: str) -> bool:
        with self._lock:
            return conversation_id in self._runs

    def start(self, conversation_id: str, job: Callable[[threading.Event], Iterable[AgentEvent]]) -> None:
        """Run `job(cancel)` in a new thread, logging what it yields. Raises RunBusy if one runs."""
        event_log = self.log(conversation_id)
        with self._lock:
            if conversation_id in self._runs:
                raise RunBusy(conversation_id)
            cancel = threading.Event()
            thread = threading.Thread(
                target=self._drive,
                args=(conversation_id, job, cancel, event_log),
                name=f"run-{conversation_id[:8]}",
                daemon=True,
            )
            run = self._runs[conversation_id] = _Run(thread, cancel)
            event_log.running = True
        run.thread.start()

    def stop(self, conversation_id: str) -> bool:
        """Ask the running answer to stop; True if there was one."""
        with self._lock:
            run = self._runs.get(conversation_id)
        if run is None:
            return False
        run.cancel.set()
        return True

    def join(self, conversation_id: str, timeout: float | None = None) -> None:
        with self._lock:
            run = self._runs.get(conversation_id)
        if run is not None:
            run.thread.join(timeout)

    def subscribe(
        self, conversation_id: str, cursor: Cursor = Cursor(), *, poll: float = 0.5
    ) -> Iterator[list[AgentEvent]]:
        """Batches of events from `cursor` until the running answer (if any) has ended.

        While the answer runs, `poll` seconds without news give an empty batch, so that a follower can draw what
        it held back and count the seconds of a silence.
        """
        event_log = self.log(conversation_id)
        while True:
            running = event_log.running
            events, cursor = event_log.read(cursor, wait=poll)
            if events or running:
                yield events
            else:
                return

    def forget(self, conversation_id: str) -> None:
        """Drop a conversation's log once nobody can open it any more."""
        self.stop(conversation_id)
        with self._lock:
            self._logs.pop(conversation_id, None)

    def _drive(
        self,
        conversation_id: str,
        job: Callable[[threading.Event], Iterable[AgentEvent]],
        cancel: threading.Event,
        event_log: EventLog,
    ) -> None:
        try:
            for event in job(cancel):
                self._emit(conversation_id, event_log, event)
        except Exception:  # a bug must end this answer, not the server
            log.exception("run for conversation %s failed", conversation_id)
            self._emit(conversation_id, event_log, ErrorEvent("internal"))
            self._emit(conversation_id, event_log, Done("error"))
        finally:
            with self._lock:
                self._runs.pop(conversation_id, None)
                event_log.running = False
            event_log.wake()

    def _emit(self, conversation_id: str, event_log: EventLog, event: AgentEvent) -> None:
        event_log.append(event)
        if self._on_event is not None:
            self._on_event(conversation_id, event)
