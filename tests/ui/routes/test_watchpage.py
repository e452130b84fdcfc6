"""The watch page against a real Starlette app on 127.0.0.1 (uvicorn), a real ChatService and the scripted model."""

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette

from meowgent.events import ApprovalNeeded, ToolCall, ToolCallReady, ToolCallStarted, ToolResult
from meowgent.persist.store import Store
from meowgent.ui.html.safehtml import shown_text
from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.routes.watchpage import WatchView, page_html, watch_language
from meowgent.ui.routes.watchroutes import mount_watch, sse
from meowgent.watch.broadcast import Broadcasts
from meowgent.watch.links import WatchLinks
from meowgent.watch.seats import Seats
from tests.chats.test_service import make_service, marker_turn, settle
from tests.scripted_ollama import Text, Turn
from tests.ui.conftest import free_port, owners_client

ALICE = "browser:alice-owner-key-0123456789"
VIEWERS = 3
"""The cap on viewers at once in these tests (`--max-watchers`; 200 unless set)."""
HOSTILE = "Look: <script>alert(1)</script> <img src=http://evil.test/x.png> done"


@dataclass
class WatchServer:
    url: str
    links: WatchLinks
    service: object
    seats: Seats


@pytest.fixture
def watch_server(ollama_server, tmp_path) -> Iterator[WatchServer]:
    workspace = tmp_path / "secret-workspace-folder"
    workspace.mkdir()
    store = Store(tmp_path / "data" / "meowgent.db")
    service = make_service(ollama_server, workspace, store=store)
    links = WatchLinks(service, store=store)
    broadcasts = Broadcasts(events_of=service.event_log, new_source=WatchView, is_shared=links.is_shared)
    app = Starlette()
    seats = Seats(VIEWERS)
    mount_watch(app, links, broadcasts, seats=seats)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield WatchServer(f"http://127.0.0.1:{port}", links, service, seats)
    finally:
        broadcasts.close()
        server.should_exit = True
        thread.join(5)


def stream(url: str, *, until) -> Iterator[tuple[str, str]]:
    """(event, data) of the page's Server-Sent Events, until `until(event, data)` is true."""
    with httpx.stream("GET", url, timeout=20) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                yield event, line[6:]
                if until(event, line[6:]):
                    return


def live_text(url: str, *, until: str) -> tuple[str, list[str]]:
    """The chat's text as a viewer's page shows it once it contains `until`, and every raw patch received."""
    shown: list[str] = []
    raw: list[str] = []
    for event, data in stream(url, until=lambda event, data, shown=shown: until in shown_text("".join(shown))):
        assert event == "patch"
        raw.append(data)
        count, changed = json.loads(data)
        shown[:] = shown[:count] + [""] * (count - len(shown))
        for index, item in changed:
            shown[index] = item
    return shown_text("".join(shown)), raw


def test_a_viewer_sees_the_answer_and_a_waiting_call_in_plain_words(watch_server, ollama_server):
    service = watch_server.service
    chat = service.new_chat(ALICE)
    ollama_server.script(Turn(Text(HOSTILE)), marker_turn("first"))
    link = watch_server.links.share(ALICE, chat.id)
    service.send(ALICE, chat.id, "hello")
    settle(service, ALICE, chat.id)
    text, raw = live_text(f"{watch_server.url}/watch/{link.token}/events", until="done")
    assert "<script>alert(1)</script>" in text  # shown as text...
    assert "<script" not in "".join(raw)
    assert "<img" not in "".join(raw)  # ...never as markup
    service.send(ALICE, chat.id, "now run it")
    text, raw = live_text(f"{watch_server.url}/watch/{link.token}/events", until="Waiting for the presenter")
    assert "Waiting for the presenter to approve: Run echo first >> ran.txt" in text
    chinese, _ = live_text(f"{watch_server.url}/watch/{link.token}/events?lang={CHINESE}", until="等待簡報者核准")
    assert "Waiting" not in chinese
    page = httpx.get(f"{watch_server.url}/watch/{link.token}")
    script = httpx.get(f"{watch_server.url}/watch/script.js")
    for response in (page, script):
        assert "script-src 'self'" in response.headers["content-security-policy"]
    everything = page.text + script.text + "".join(raw)
    assert ALICE.split(":")[1] not in everything
    assert "secret-workspace-folder" not in everything
    assert 'id="msg"' not in page.text
    assert "approve" not in page.text.lower()


def test_a_revoked_link_ends_a_live_page_within_two_seconds(watch_server):
    chat = watch_server.service.new_chat(ALICE)
    link = watch_server.links.share(ALICE, chat.id)
    events = stream(f"{watch_server.url}/watch/{link.token}/events", until=lambda event, data: event == "ended")
    assert next(events)[0] == "patch"
    revoked_at = time.monotonic()
    watch_server.links.revoke(ALICE, chat.id)
    assert list(events) == [("ended", "This link has ended.")]
    assert time.monotonic() - revoked_at < 2


@pytest.mark.parametrize("token", ["wrong", "revoked", "x" * 43])
def test_a_link_that_is_not_live_gets_one_plain_sentence(watch_server, token):
    chat = watch_server.service.new_chat(ALICE)
    if token == "revoked":
        token = watch_server.links.share(ALICE, chat.id).token
        watch_server.links.revoke(ALICE, chat.id)
    page = httpx.get(f"{watch_server.url}/watch/{token}")
    assert page.status_code == 404
    assert "This link has ended." in shown_text(page.text)
    assert "<script" not in page.text
    events = list(stream(f"{watch_server.url}/watch/{token}/events", until=lambda event, data: False))
    assert events == [("ended", "This link has ended.")]


def test_past_the_cap_the_next_viewer_gets_one_sentence_and_no_stream(watch_server):
    """Issue 26: a watch link had no cap on viewers (1,500 idle viewers held 1,500 descriptors)."""
    chat = watch_server.service.new_chat(ALICE)
    link = watch_server.links.share(ALICE, chat.id)
    page, events = f"{watch_server.url}/watch/{link.token}", f"{watch_server.url}/watch/{link.token}/events"
    with contextlib.ExitStack() as held:
        viewers = [held.enter_context(httpx.stream("GET", events, timeout=20)).iter_lines() for _ in range(VIEWERS)]
        assert [next(viewer) for viewer in viewers] == ["event: patch"] * VIEWERS
        assert watch_server.seats.taken == VIEWERS
        turned_away = httpx.get(page, headers={"Accept-Language": "zh-TW"})
        assert turned_away.status_code == 503
        assert "這個對話現在觀看的人太多了，請稍後再試。" in shown_text(turned_away.text)
        assert "<script" not in turned_away.text
        full = httpx.get(page)
        assert "This chat has too many viewers right now; try again later." in shown_text(full.text)
        assert full.headers["retry-after"]
        # A stream asked for anyway (its page came just before the last seat went) ends at once, holding nothing.
        asked = list(stream(events, until=lambda event, data: False))
        assert asked == [("ended", "This chat has too many viewers right now; try again later.")]
        assert watch_server.seats.taken == VIEWERS
    deadline = time.monotonic() + 10  # the server finds each viewer gone at its next keepalive
    while watch_server.seats.taken and time.monotonic() < deadline:
        time.sleep(0.05)
    assert watch_server.seats.taken == 0  # every seat given back
    assert httpx.get(page).status_code == 200


def test_the_page_offers_nothing_that_changes_a_chat(watch_server):
    chat = watch_server.service.new_chat(ALICE)
    link = watch_server.links.share(ALICE, chat.id)
    for method in ("POST", "PUT", "DELETE"):
        assert httpx.request(method, f"{watch_server.url}/watch/{link.token}").status_code == 405
        assert httpx.request(method, f"{watch_server.url}/watch/{link.token}/events").status_code == 405


def test_the_shell_works_on_a_phone_in_either_language():
    english, chinese = page_html(ENGLISH), page_html(CHINESE)
    assert 'name="viewport"' in english
    assert '<script src="script.js">' in english
    assert 'href="?lang=zh-TW"' in english
    assert "連線中" in chinese
    assert 'lang="zh-Hant-TW"' in chinese
    assert "<script" not in page_html(ENGLISH, ended="This link has ended.")


def test_the_viewer_picks_the_language_not_the_owner():
    assert watch_language(CHINESE, "en-US") == CHINESE
    assert watch_language(None, "zh-TW,zh;q=0.9") == CHINESE
    assert watch_language("fr", None) == ENGLISH


def test_an_unchanged_message_is_the_same_item_so_only_the_new_one_travels():
    view = WatchView()
    view.apply(ToolCallStarted("c1"))
    call = ToolCall("c1", "write_file", {"path": "notes.md", "content": "hi"})
    view.apply(ToolCallReady(call, True))
    first = view.items(ENGLISH)
    view.apply(ApprovalNeeded((call,)))
    second = view.items(ENGLISH)
    assert len(second) == 2
    assert shown_text(second[1]).strip() == "Waiting for the presenter to approve: Write notes.md"
    assert view.items(ENGLISH)[1] is second[1]
    assert first[0] is not second[0]  # the panel changed state (waiting)


@pytest.mark.parametrize(
    ("language", "deciding", "owners_words"),
    [(ENGLISH, "the presenter is deciding", "waiting for your approval"), (CHINESE, "簡報者正在決定", "等待你核准")],
)
def test_a_viewers_tool_panel_says_the_presenter_decides_never_your_approval(language, deciding, owners_words):
    view = WatchView()
    call = ToolCall("c1", "run_shell", {"command": "ls"})
    for event in (ToolCallStarted("c1"), ToolCallReady(call, True), ApprovalNeeded((call,))):
        view.apply(event)
    shown = " ".join(shown_text(item) for item in view.items(language))
    assert deciding in shown
    assert owners_words not in shown


def test_a_viewer_is_offered_no_undo_and_reads_an_edited_call_as_the_presenters():
    view = WatchView()
    call = ToolCall("c1", "write_file", {"path": "notes.md", "content": "hi"})
    edited = {"path": "notes.md", "content": "hello"}
    done = ToolResult("c1", "write_file", "Created notes.md", "done", 0.1, edited_arguments=edited)
    for event in (ToolCallStarted("c1"), ToolCallReady(call, True), ApprovalNeeded((call,)), done):
        view.apply(event)
    html = "".join(view.items(ENGLISH))
    assert "<button" not in html
    assert "ran as the presenter changed it" in shown_text(html)
    assert "you changed" not in shown_text(html)


def test_a_viewer_gets_no_undo_button_for_a_finished_write():
    view = WatchView()
    call = ToolCall("c1", "write_file", {"path": "notes.md", "content": "hi"})
    for event in (ToolCallStarted("c1"), ToolCallReady(call, True), ToolResult("c1", call.name, "Wrote.", "done", 0.1)):
        view.apply(event)
    (item,) = view.items(ENGLISH)
    assert "Write notes.md" in shown_text(item)
    assert "<button" not in item


def test_no_text_can_end_an_event_early():
    assert sse("ended", "a\nb\r\nevent: x") == b"event: ended\ndata: a\ndata: b\ndata: \ndata: event: x\n\n"


def test_with_the_default_cap_the_running_app_holds_200_viewers_and_turns_the_201st_away(running_app):
    """Issue 26, at the size it was asked for: `--max-watchers` left at 200, against the launched app; 200 streams
    held open at once by one event loop."""
    assert running_app.settings.max_watchers == 200
    owner = owners_client(running_app.url)
    key = owner.predict("", "", api_name="/on_load")[0]  # the page opens on a new chat
    page = owner.predict(key, api_name="/on_watch_share")[0]
    seats = running_app.demo.watching.seats
    full = "This chat has too many viewers right now; try again later."

    async def crowd() -> tuple[list[str], int, httpx.Response, list[str], int]:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client, contextlib.AsyncExitStack() as held:
            opening = (held.enter_async_context(client.stream("GET", f"{page}/events")) for _ in range(200))
            # Each viewer's reader is kept: one dropped half-read closes its stream, and its seat comes back.
            viewers = [response.aiter_lines() for response in await asyncio.gather(*opening)]
            first = await asyncio.gather(*(anext(viewer) for viewer in viewers))
            taken = seats.taken
            turned_away = await client.get(page)
            late_lines: list[str] = []
            async with client.stream("GET", f"{page}/events") as late:
                async for line in late.aiter_lines():  # a third line would be a stream kept: stop there
                    late_lines += [line] if line else []
                    if len(late_lines) > 2:
                        break
            return first, taken, turned_away, late_lines, seats.taken

    first, taken, turned_away, late, still_taken = asyncio.run(crowd())
    assert first == ["event: patch"] * 200
    assert taken == still_taken == 200
    assert turned_away.status_code == 503
    assert full in shown_text(turned_away.text)
    assert late == ["event: ended", f"data: {full}"]
