"""Broadcast: one feed and one render per frame, fanned out; a slow viewer skips frames and holds up nobody."""

import asyncio
import threading

from hypothesis import given
from hypothesis import strategies as st

from meowgent.chats.runs import RunRegistry
from meowgent.events import Done, TextDelta, UserMessage
from meowgent.ui.html.safehtml import shown_text
from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.routes.watchpage import WatchView
from meowgent.watch.broadcast import Broadcast, Broadcasts, patch
from meowgent.watch.links import WatchLink

LINK = WatchLink("token", "chat", "browser:alice", float("inf"))


class CountingSource:
    """A view that counts its renders (the broadcast's contract with any view)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.renders: list[str] = []

    def apply(self, event) -> None:
        self.texts.append(event.text)

    def items(self, language):
        self.renders.append(language)
        return (language + ":" + "".join(self.texts),)


def test_each_version_is_rendered_once_per_language_whatever_the_viewers():
    source = CountingSource()
    broadcast = Broadcast(source)
    broadcast.publish([TextDelta("a"), TextDelta("b")])
    frames = [broadcast.frame(language) for language in [ENGLISH] * 10 + [CHINESE] * 10]
    assert source.renders == [ENGLISH, CHINESE]
    assert {frame.items for frame in frames} == {("en:ab",), ("zh-TW:ab",)}
    assert broadcast.rendered(ENGLISH) == frames[0]
    broadcast.publish([TextDelta("c")])
    assert broadcast.rendered(ENGLISH) is None
    assert broadcast.frame(ENGLISH).items == ("en:abc",)
    assert source.renders == [ENGLISH, CHINESE, ENGLISH]


def test_fifty_viewers_each_see_the_final_frame():
    registry = RunRegistry()
    shared = threading.Event()
    shared.set()
    broadcasts = Broadcasts(
        events_of=lambda owner, chat: registry.log(chat),
        new_source=WatchView,
        is_shared=lambda chat: shared.is_set(),
        frame_seconds=0.01,
    )
    broadcast = broadcasts.of(LINK)
    finals: list[str] = []

    def viewer(language: str) -> None:
        seen = -1
        while "THE END" not in "".join(broadcast.frame(language).items):
            seen = broadcast.wait(seen, timeout=5)
            assert not broadcast.ended
        finals.append(shown_text("".join(broadcast.frame(language).items)))

    viewers = [threading.Thread(target=viewer, args=([ENGLISH, CHINESE][i % 2],)) for i in range(50)]
    for thread in viewers:
        thread.start()

    def answer(cancel):
        yield UserMessage("tell me")
        for index in range(2_000):
            yield TextDelta(f"w{index} ")
        yield TextDelta("THE END")
        yield Done("done")

    registry.start(LINK.chat_id, answer)
    for thread in viewers:
        thread.join(30)
    shared.clear()
    assert len(finals) == 50
    assert all(text.rstrip().endswith("THE END") and "w1999" in text and "tell me" in text for text in finals)


def test_a_blocked_viewer_does_not_hold_up_publishing():
    broadcast = Broadcast(CountingSource())
    loop = asyncio.new_event_loop()
    waiting, release = threading.Event(), threading.Event()

    async def viewer() -> int:
        waiting.set()
        return await broadcast.next(broadcast.version, timeout=30)

    viewer_thread = threading.Thread(target=lambda: loop.run_until_complete(viewer()))
    viewer_thread.start()
    waiting.wait(5)
    loop.call_soon_threadsafe(release.wait)  # the viewer's loop is now stuck: it cannot take any wake-up
    for index in range(1_000):
        broadcast.publish([TextDelta(str(index))])
    assert not release.is_set()  # all published while the viewer stayed blocked
    assert broadcast.version == 1_000
    release.set()
    viewer_thread.join(5)
    loop.close()
    assert broadcast.frame(ENGLISH).items == ("en:" + "".join(map(str, range(1_000))),)


def test_the_feed_ends_the_broadcast_once_the_chat_is_no_longer_shared():
    registry = RunRegistry()
    shared = threading.Event()
    shared.set()
    broadcasts = Broadcasts(
        events_of=lambda owner, chat: registry.log(chat),
        new_source=CountingSource,
        is_shared=lambda chat: shared.is_set(),
        frame_seconds=0.01,
    )
    broadcast = broadcasts.of(LINK)
    assert broadcasts.of(LINK) is broadcast  # one feed per chat, whatever the viewers
    shared.clear()
    broadcast.wait(broadcast.version, timeout=5)
    assert broadcast.ended
    shared.set()
    assert broadcasts.of(LINK) is not broadcast  # shared again: a new broadcast


items = st.lists(st.sampled_from(["a", "b", "c", "<p>x</p>"]), max_size=8)


@given(before=items, after=items, keep=st.lists(st.booleans(), max_size=8))
def test_a_patch_turns_what_a_viewer_shows_into_the_new_frame(before, after, keep):
    sent = tuple(before)
    # Items the view did not change are the very objects the viewer has.
    new = tuple(sent[i] if i < len(sent) and i < len(keep) and keep[i] else item + "" for i, item in enumerate(after))
    count, changed = patch(sent, new)
    shown = list(sent[:count]) + [""] * max(0, count - len(sent))
    for index, item in changed:
        shown[index] = item
    assert tuple(shown) == new
    assert all(new[index] is not sent[index] for index, _ in changed if index < len(sent))
