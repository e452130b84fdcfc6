"""One watched chat, rendered once per frame and fanned out to every viewer.

The chat's events are read once per watched chat (one feed thread, whatever the number of viewers) and folded
into one view. A frame is a version number; its items (one piece of HTML per message) are rendered lazily, once
per version per language, when the first viewer of that language asks. Viewers wait for a version newer than
theirs and take the latest: a slow viewer skips versions, nothing queues for it, and the presenter's answer
never waits on anyone (the feed only reads the chat's event log).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from meowgent.chats.runs import Cursor, EventLog
from meowgent.events import AgentEvent
from meowgent.watch.links import WatchLink

log = logging.getLogger(__name__)

FRAME_SECONDS = 0.2
"""At most one frame per this interval: the news of a fifth of a second is coalesced into one render."""


class FrameSource(Protocol):
    """A chat's view, folded from its events (`meowgent.ui.routes.watchpage.WatchView`)."""

    def apply(self, event: AgentEvent) -> object: ...

    def items(self, language: str) -> tuple[str, ...]:
        """The view as HTML, one item per message; an item unchanged since the last call is the same object."""
        ...


@dataclass(frozen=True)
class Frame:
    version: int
    items: tuple[str, ...]


class Broadcast:
    """The latest frame of one chat, and the viewers waiting for the next."""

    def __init__(self, source: FrameSource) -> None:
        self._source = source
        self._changed = threading.Condition()
        self._version = 0
        self._ended = False
        self._frames: dict[str, Frame] = {}  # by language, rendered for the version it names
        self._wakers: set[Callable[[], object]] = set()  # asyncio viewers, woken from the feed's thread

    @property
    def version(self) -> int:
        return self._version

    @property
    def ended(self) -> bool:
        return self._ended

    def publish(self, events: Sequence[AgentEvent]) -> None:
        """Fold `events` into the view as one new version (nothing is rendered here)."""
        if not events:
            return
        with self._changed:
            for event in events:
                self._source.apply(event)
            self._version += 1
        self._wake()

    def end(self) -> None:
        """No more frames: waiting viewers wake and find the broadcast ended."""
        with self._changed:
            self._ended = True
            self._version += 1
        self._wake()

    def frame(self, language: str) -> Frame:
        """The current version in `language`, rendered now if no viewer of that language asked for it yet."""
        with self._changed:
            frame = self._frames.get(language)
            if frame is None or frame.version != self._version:
                frame = self._frames[language] = Frame(self._version, self._source.items(language))
            return frame

    def rendered(self, language: str) -> Frame | None:
        """The current version in `language` if it is rendered already (no waiting for a render)."""
        frame = self._frames.get(language)
        return frame if frame is not None and frame.version == self._version else None

    def wait(self, after: int, timeout: float) -> int:
        """The version once it is newer than `after`, or after `timeout` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._version > after, timeout)
            return self._version

    async def next(self, after: int, timeout: float) -> int:
        """`wait` for a viewer on an asyncio loop: the feed's thread wakes it without blocking on it."""
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()

        def waker() -> None:
            with contextlib.suppress(RuntimeError):  # the viewer's loop has closed
                loop.call_soon_threadsafe(woken.set)

        with self._changed:
            if self._version > after:
                return self._version
            self._wakers.add(waker)
        try:
            await asyncio.wait_for(woken.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            with self._changed:
                self._wakers.discard(waker)
        return self._version

    def _wake(self) -> None:
        with self._changed:
            self._changed.notify_all()
            wakers = list(self._wakers)
        for waker in wakers:
            waker()


def patch(sent: tuple[str, ...], items: tuple[str, ...]) -> tuple[int, list[tuple[int, str]]]:
    """What a viewer showing `sent` needs to show `items`: their count, and the new or changed ones by index.

    Compared by identity (an unchanged item is the very same string), so a viewer's update costs the number of
    items, not their size, and only the message being written travels again."""
    return len(items), [(i, item) for i, item in enumerate(items) if i >= len(sent) or sent[i] is not item]


class Broadcasts:
    """The broadcasts of the watched chats: one feed each, from the first viewer until the chat's link ends."""

    def __init__(
        self,
        *,
        events_of: Callable[[str, str], EventLog],
        new_source: Callable[[], FrameSource],
        is_shared: Callable[[str], bool],
        frame_seconds: float = FRAME_SECONDS,
    ) -> None:
        """`events_of(owner, chat_id)`: the chat's event log (`ChatService.event_log`); `is_shared(chat_id)`:
        whether it still has a live link (`WatchLinks.is_shared`)."""
        self._events_of = events_of
        self._new_source = new_source
        self._is_shared = is_shared
        self._frame_seconds = frame_seconds
        self._lock = threading.Lock()
        self._live: dict[str, Broadcast] = {}
        self._closed = threading.Event()

    def of(self, link: WatchLink) -> Broadcast:
        """The chat's broadcast, its feed started if this is its first viewer."""
        with self._lock:
            broadcast = self._live.get(link.chat_id)
            if broadcast is not None and not broadcast.ended:
                return broadcast
            event_log = self._events_of(link.owner, link.chat_id)
            broadcast = self._live[link.chat_id] = Broadcast(self._new_source())
        feed = threading.Thread(
            target=self._feed, args=(link.chat_id, event_log, broadcast), name=f"watch-{link.chat_id[:8]}", daemon=True
        )
        feed.start()
        return broadcast

    def close(self) -> None:
        """End every feed (the server is stopping)."""
        self._closed.set()

    @property
    def closed(self) -> bool:
        """Whether the server is stopping (a feed that ends then has not seen its link end)."""
        return self._closed.is_set()

    def _feed(self, chat_id: str, event_log: EventLog, broadcast: Broadcast) -> None:
        cursor = Cursor()
        try:
            while self._is_shared(chat_id) and not self._closed.is_set():
                started = time.monotonic()
                # Waits for news only while an answer runs; between answers the log is polled once a frame.
                events, cursor = event_log.read(cursor, wait=self._frame_seconds)
                broadcast.publish(events)
                self._closed.wait(self._frame_seconds - (time.monotonic() - started))
        except Exception:  # a bug ends this chat's broadcast (its viewers are told the link ended), not the server
            log.exception("the watch feed of chat %s failed", chat_id)
        finally:
            broadcast.end()
            with self._lock:
                if self._live.get(chat_id) is broadcast:
                    del self._live[chat_id]
