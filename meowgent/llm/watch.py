"""Reading a reply in a helper thread, so that Stop and the stall rule act even while a read blocks.

The stall rule: silence longer than the read timeout is a stall, except when the server may be holding back a call
it cannot show (`Holding.SILENT`); then a silence may last HELD_CALL_PATIENCE read timeouts, and is reported every
SILENCE_TICK seconds so the page can count them (see docs/architecture.md, "Model families").
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Generator

from meowgent.llm.errors import StreamStalled
from meowgent.llm.types import ChatChunk

HELD_CALL_PATIENCE = 5
"""How many read timeouts of silence a reply may hold when the server may be holding back a call it cannot show."""

SILENCE_TICK = 1.0
"""Seconds between the `silent_for` chunks of such a reply, so the page can count the seconds."""

_CANCEL_POLL = 0.1


class _End:
    """What the reading thread leaves last: the exception that ended the stream, if any."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class _Handoff:
    """Chunks read by the helper thread and not yet taken, handed over in batches (an event set only when needed)."""

    def __init__(self) -> None:
        self.waiting: collections.deque[ChatChunk | _End] = collections.deque()
        self.arrived = threading.Event()
        """Set when chunks are waiting; the consumer clears it before taking them."""
        self.unwanted = threading.Event()
        """Set when the consumer has left: the helper stops at its next chunk and closes the response."""

    def pump(self, chunks: Generator[ChatChunk, None, None]) -> None:
        """The helper thread: read every chunk into `waiting`, then an `_End` with what ended the stream."""
        end = _End()
        # Bound once: this loop runs once per token, in the thread that also parses every line.
        append, waiting, wake, stop = self.waiting.append, self.arrived.is_set, self.arrived.set, self.unwanted.is_set
        try:
            for chunk in chunks:
                if stop():
                    break
                append(chunk)
                if not waiting():
                    wake()
        except BaseException as exc:
            end = _End(exc)
        finally:
            self.waiting.append(end)
            self.arrived.set()
            chunks.close()

    def take(self) -> Generator[ChatChunk, None, bool]:
        """The chunks waiting now, lines of a kind joined; returns whether the stream ended (raising its error)."""
        self.arrived.clear()
        while self.waiting:
            item = self.waiting.popleft()
            if type(item) is _End:
                if item.error is not None:
                    raise item.error
                return True
            if self.waiting:
                item = _joined(item, self.waiting)
            yield item
        return False


def watched(
    chunks: Generator[ChatChunk, None, None],
    cancel: threading.Event,
    *,
    stall_after: float,
    held_stall_after: float | None,
    hang_up: Callable[[], None],
) -> Generator[ChatChunk, None, None]:
    """Read `chunks` in a helper thread, so that `cancel` and the stall rule act even while a read blocks.

    A blocked socket read cannot be interrupted from another thread, but its connection can be shut down: leaving
    early calls `hang_up` (llm/hangup.py), so the server sees the reply unwanted at once even while it is silent,
    and the helper, woken, closes the response.
    Chunks are handed over in batches (a deque and an event set only when needed), so the
    hand-over costs almost nothing per token. `held_stall_after`, when given, replaces
    `stall_after`, and silences are then reported as chunks with `silent_for` set.
    """
    handoff = _Handoff()
    threading.Thread(target=handoff.pump, args=(chunks,), name="model-stream", daemon=True).start()
    limit = stall_after if held_stall_after is None else held_stall_after
    last_line = time.monotonic()
    ticks = 0
    try:
        while True:
            if not handoff.arrived.wait(_CANCEL_POLL):
                if cancel.is_set():
                    return
                silent = time.monotonic() - last_line
                if silent > limit:
                    raise StreamStalled(limit)
                if held_stall_after is not None and silent >= (ticks + 1) * SILENCE_TICK:
                    ticks = int(silent / SILENCE_TICK)
                    yield ChatChunk(silent_for=silent)
                continue
            last_line, ticks = time.monotonic(), 0
            if (yield from handoff.take()) or cancel.is_set():
                return
    finally:
        handoff.unwanted.set()
        hang_up()


def _joined(item: ChatChunk, waiting: collections.deque[ChatChunk | _End]) -> ChatChunk:
    """`item` with the lines of its kind already waiting after it, as one chunk.

    A reader that fell behind takes them at once, so what follows (readers, events, page) is paid per batch; one
    that keeps up gets the lines one by one.
    """
    kind = _joinable(item)
    if kind is None or _joinable(waiting[0]) != kind:
        return item
    parts = [getattr(item, kind)]
    while waiting and _joinable(waiting[0]) == kind:
        parts.append(getattr(waiting.popleft(), kind))
    return ChatChunk(**{kind: "".join(parts)})


def _joinable(item: ChatChunk | _End) -> str | None:
    """What a line carries, if only content or only token text: it can then be joined with lines like it."""
    if type(item) is not ChatChunk or item.thinking or item.tool_calls or item.done:
        return None
    return "token" if item.token else "content"  # a line with token text has no content (see the client)
