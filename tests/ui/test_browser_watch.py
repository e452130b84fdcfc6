"""Watch links in the real app (issue 20): the owner shares a chat, a second browser context watches it live.

The viewer sees the streamed answer, a `write_file` as it is written and the waiting card in words, and none of
the owner's controls; Stop sharing or deleting the chat ends the open watch page; nothing a viewer clicks or sends
to Gradio's API acts on the chat; the watch page needs no login behind `--auth`, while `/` still does.
"""

import json
import re

import httpx
import pytest
from gradio_client.exceptions import AppError

from tests.ui.conftest import (
    CHROMIUM,
    OWNER_HEADERS,
    SCREENS,
    first_moment_showing,
    owners_client,
    reload_app,
    wait_for_load,
)

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect

from meowgent.ui.app import serve
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui.test_browser import VIEWPORT, open_app, send

pytestmark = pytest.mark.browser

NOTES = "\n".join(f"note {i:03d}: cats sleep sixteen hours a day" for i in range(60))
WAITING = "Waiting for the presenter to approve: Write notes.md"
ENDED = "This link has ended"
ACTIONS = ("/on_send", "/on_approve", "/on_reject", "/on_stop", "/on_rules", "/on_watch_revoke", "/on_watch_share")
"""What a viewer might try through Gradio's API: act on the chat, read the rules, end or take the link."""
PRESENTER = re.compile(r"\bmg-presenter\b")
CONTROLS = ("#msg", "#send", "#approve", "#reject", "#stop", "#sidebar", "#watch_share", "#language", "#chats")


def slow_write() -> Turn:
    """A write_file whose arguments take a few seconds to arrive, so a viewer sees them being written."""
    return Turn(
        Text("I'll write your notes now.\n"),
        Text(tool_call_text("write_file", {"path": "notes.md", "content": NOTES})),
        chunk_size=16,
        delay=0.03,
    )


def share(page: Page) -> str:
    """Share the open chat from the sidebar; the watch link as the page shows it."""
    if not page.locator("#watch_share").is_visible():
        page.locator("#menu").click()
    page.locator("#watch_share").click()
    link = page.locator("#watch_link textarea, #watch_link input").first
    expect(link).not_to_have_value("")
    return link.input_value()


def watcher(browser: Browser, **screen) -> Page:
    return browser.new_context(**(screen or {"viewport": VIEWPORT})).new_page()


@pytest.fixture
def owner(chromium: Browser, running_app) -> Page:
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    open_app(page, running_app.url)
    return page


def test_a_viewer_watches_the_answer_a_live_write_and_the_waiting_card_with_no_controls(running_app, chromium, owner):
    running_app.ollama.script(reply("Purr. Hello, room!", chunk_size=2, delay=0.02), slow_write())
    link = share(owner)
    assert link.startswith(running_app.url.rstrip("/") + "/watch/")
    expect(owner.locator("#watch_qr svg")).to_be_visible()
    expect(owner.locator("#watch_ends")).to_contain_text("ends in 24 hours")
    viewer = watcher(chromium)
    viewer.goto(link)
    chat = viewer.locator("#chat")

    send(owner, "say hello to the room")
    expect(chat).to_contain_text("say hello to the room")
    expect(chat).to_contain_text("Purr. Hello, room!")

    send(owner, "write my notes")
    # The arguments, while the call is still being written (its 60 lines not all there yet).
    writing = first_moment_showing(viewer, r"note \d{3}: cats sleep sixteen hours", ids=()).chat
    assert int(re.search(r"Writing notes\.md… (\d+) lines? so far", writing)[1]) < 60
    expect(chat).to_contain_text(WAITING)
    expect(owner.locator("#approve")).to_be_visible()
    expect(chat.locator(".mg-panel .mg-log")).to_have_text("the presenter is deciding")
    assert "your approval" not in chat.inner_text()
    expect(owner.locator("#chat")).to_contain_text("waiting for your approval")  # the presenter's own page

    for control in CONTROLS:
        expect(viewer.locator(control)).to_have_count(0)
    expect(viewer.locator("button, input, textarea, form")).to_have_count(0)
    assert str(running_app.workspace) not in viewer.content()
    viewer.locator(".mg-waiting").click()  # clicking the card does nothing: nothing to click
    assert not (running_app.workspace / "notes.md").exists()


def test_stop_sharing_and_deleting_the_chat_end_an_open_watch_page(running_app, chromium, owner):
    running_app.ollama.script(reply("First."), reply("Second."))
    link = share(owner)
    viewer = watcher(chromium)
    viewer.goto(link)
    send(owner, "one")
    expect(viewer.locator("#chat")).to_contain_text("First.")

    owner.locator("#watch_revoke").click()
    expect(viewer.locator("#chat")).to_contain_text(ENDED)
    expect(owner.locator("#watch_revoke")).to_be_hidden()
    viewer.reload()
    expect(viewer.locator("body")).to_contain_text(ENDED)

    second = share(owner)
    assert second != link  # a new link, not the ended one
    viewer.goto(second)
    expect(viewer.locator("#chat")).to_contain_text("First.")
    owner.get_by_text("This chat", exact=True).click()
    owner.locator("#delete").click()
    owner.locator("#confirm_delete").click()
    expect(viewer.locator("#chat")).to_contain_text(ENDED)
    expect(owner.locator("#watch_revoke")).to_be_hidden()  # the chat shown now has no link


def test_the_link_is_shown_again_after_a_reload(running_app, owner):
    link = share(owner)
    reload_app(owner)
    owner.locator("#menu").click()
    expect(owner.locator("#watch_link textarea, #watch_link input").first).to_have_value(link)


def test_a_viewers_page_goes_on_after_the_app_restarts_with_the_same_link(running_app, chromium, owner):
    running_app.ollama.script(reply("Before the restart."), reply("After the restart."))
    link = share(owner)
    viewer = watcher(chromium)
    viewer.goto(link)
    send(owner, "one")
    expect(viewer.locator("#chat")).to_contain_text("Before the restart.")

    running_app.restart()
    presenter = owner.context.new_page()  # a new tab: the old one reloads itself once it reconnects
    open_app(presenter, running_app.url)
    send(presenter, "two")
    expect(viewer.locator("#chat")).to_contain_text("After the restart.")  # the same page, never reloaded
    expect(viewer.locator("#chat")).to_contain_text("Before the restart.")
    assert ENDED not in viewer.locator("body").inner_text()
    fresh = watcher(chromium)
    fresh.goto(link)  # the same link, opened anew
    expect(fresh.locator("#chat")).to_contain_text("After the restart.")

    # The owner's page says the chat is shared, but has only the link's digest: no link, no QR code to show.
    if not presenter.locator("#watch_revoke").is_visible():  # a laptop's page opens with the sidebar open
        presenter.locator("#menu").click()
    expect(presenter.locator("#watch_ends")).to_contain_text("made before the app restarted")
    expect(presenter.locator("#watch_link textarea, #watch_link input").first).to_have_value("")
    expect(presenter.locator("#watch_qr svg")).to_have_count(0)
    presenter.locator("#watch_revoke").click()
    expect(viewer.locator("#chat")).to_contain_text(ENDED)


def test_presenter_mode_survives_a_reload_of_the_presenters_page(running_app, owner):
    body, toggle = owner.locator("body"), owner.locator("#presenter")
    toggle.click()
    expect(body).to_have_class(PRESENTER)
    reload_app(owner)
    expect(body).to_have_class(PRESENTER)
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(owner.locator("#watch_share")).to_be_hidden()  # the sidebar stays out of the room's view
    toggle.click()
    expect(body).not_to_have_class(PRESENTER)
    reload_app(owner)
    expect(body).not_to_have_class(PRESENTER)
    expect(toggle).not_to_have_attribute("aria-pressed", "true")


def test_nothing_a_viewer_sends_to_the_api_acts_on_the_chat(running_app, chromium, owner):
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "touch approved-by-viewer"})), reply("x"))
    link = share(owner)
    send(owner, "make a file")
    expect(owner.locator("#approve")).to_be_visible()
    token = link.rsplit("/", 1)[1]
    watched_chat = running_app.demo.watching.links.lookup(token).chat_id  # as if a viewer had learned it

    # The watch routes change nothing and take no other method.
    for method in ("POST", "PUT", "DELETE"):
        assert httpx.request(method, link, timeout=10).status_code == 405
        assert httpx.request(method, f"{link}/events", timeout=10).status_code == 405

    for key in ("", token, "a-strangers-key"):  # no owner key, the token as a key, another browser's key
        stranger = owners_client(running_app.url)
        if key == "a-strangers-key":
            key = stranger.predict("", "", api_name="/on_load")[0]  # a real owner, of their own chat
        endpoints = stranger.view_api(print_info=False, return_format="dict")["named_endpoints"]
        for api_name in ACTIONS:
            rest = [parameter["example_input"] for parameter in endpoints[api_name]["parameters"][1:]]
            try:
                answered = json.dumps(stranger.predict(key, *rest, api_name=api_name), ensure_ascii=False)
            except AppError as refused:
                answered = str(refused)
            assert "touch approved-by-viewer" not in answered, api_name
            assert token not in answered or key == token, api_name
        try:  # another chat, by its id
            opened = json.dumps(stranger.predict(key, watched_chat, api_name="/on_open"), ensure_ascii=False)
        except AppError as refused:
            opened = str(refused)
        assert "make a file" not in opened
    # Raw HTTP to the queue, as the page itself would send it, with no session's state.
    config = httpx.get(running_app.url + "config", headers=OWNER_HEADERS, timeout=10).json()
    approve = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "on_approve")
    inputs = next(len(d["inputs"]) for d in config["dependencies"] if d["id"] == approve)
    joined = httpx.post(
        running_app.url + "gradio_api/queue/join",
        json={"data": [""] * inputs, "fn_index": approve, "session_hash": "viewer", "trigger_id": None},
        headers=OWNER_HEADERS,
        timeout=10,
    )
    assert joined.status_code == 200, joined.text
    with httpx.stream(
        "GET", running_app.url + "gradio_api/queue/data?session_hash=viewer", headers=OWNER_HEADERS, timeout=20
    ) as events:
        for line in events.iter_lines():
            if "process_completed" in line:
                break

    expect(owner.locator("#approve")).to_be_visible()  # still waiting for its owner
    assert not (running_app.workspace / "approved-by-viewer").exists()
    viewer = watcher(chromium)
    viewer.goto(link)
    expect(viewer.locator("#chat")).to_contain_text("Waiting for the presenter to approve: Run touch")


def test_the_watch_page_needs_no_login_behind_auth_while_the_page_does(running_app, chromium):
    running_app.demo.close()
    running_app.demo, url, _ = serve(running_app.settings, auth=("ann", "pw"))
    running_app.ollama.script(reply("Logged-in answer."))
    context = chromium.new_context(viewport=VIEWPORT)
    owner = context.new_page()
    owner.goto(url)
    owner.get_by_label("Username").fill("ann")
    owner.get_by_label("Password").fill("pw")
    owner.get_by_role("button", name="Login").click()
    wait_for_load(owner)
    link = share(owner)
    send(owner, "hello")
    expect(owner.locator("#chat")).to_contain_text("Logged-in answer.")

    stranger = watcher(chromium)
    stranger.goto(link)
    expect(stranger.locator("#chat")).to_contain_text("Logged-in answer.")
    stranger.goto(url)
    expect(stranger.get_by_role("button", name="Login")).to_be_visible()
    expect(stranger.locator("#msg")).to_have_count(0)
    assert httpx.get(url + "config", timeout=10).status_code == 401


def test_the_watch_page_fits_a_phone(running_app, chromium, owner):
    running_app.ollama.script(reply("A long answer " * 40), slow_write())
    link = share(owner)
    send(owner, "talk")
    expect(owner.locator("#chat")).to_contain_text("A long answer")
    send(owner, "write my notes")
    expect(owner.locator("#approve")).to_be_visible()
    phone = watcher(chromium, **SCREENS["phone"])
    phone.goto(link)
    expect(phone.locator("#chat")).to_contain_text(WAITING)
    width = phone.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page is wider than the phone: {width}"
    box = phone.locator(".mg-waiting").bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= SCREENS["phone"]["viewport"]["width"]
