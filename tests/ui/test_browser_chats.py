"""Chats in the real page beyond one answer: two browsers at once, a reload mid-stream, a pending approval after a
reload or a restart, the chat list (rename, export, delete), Clear, and each browser's own rules.

Split from test_browser.py (its fixtures and helpers) so the two run on two workers.
"""

import threading
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.scripted_ollama import Hold, Text, Turn, reply, tool_call_text
from tests.ui import test_browser
from tests.ui.conftest import LOAD_MS, open_app, reload_app
from tests.ui.test_browser import assert_stops_growing, chat_text, new_context, numbered_words, send

# The same Chromium fixtures as the main browser tests (and their skip when there is no Chromium).
browser, context, page = test_browser.browser, test_browser.context, test_browser.page

pytestmark = pytest.mark.browser


def test_two_browsers_at_once_are_independent(running_app, browser, page):
    running_app.ollama.script(
        Turn(Text("Alice, I need your approval.\n"), Text(tool_call_text("run_shell", {"command": "touch alice.txt"})))
    )
    open_app(page, running_app.url)
    send(page, "alice asks for a file")
    expect(page.locator("#approve")).to_be_visible()

    other = new_context(browser)
    bob = other.new_page()
    open_app(bob, running_app.url)
    expect(bob.locator("#approve")).to_be_hidden()
    running_app.ollama.script(reply("Hello Bob, here is your answer.", chunk_size=4, delay=0.01))
    send(bob, "bob says hi")
    expect(bob.locator("#chat")).to_contain_text("Hello Bob, here is your answer.")
    expect(bob.locator("#approve")).to_be_hidden()
    expect(page.locator("#approve")).to_be_visible()  # Alice still waits, untouched by Bob's answer
    bob_text, alice_text = chat_text(bob), chat_text(page)
    assert "alice" not in bob_text.lower()
    assert "touch alice.txt" not in bob_text
    assert "Bob" not in alice_text
    assert not (running_app.workspace / "alice.txt").exists()


# The answer holds while the page reloads, as long as that takes: longer than the tests' 5 s for a silent model.
@pytest.mark.parametrize("app_options", [{"read_timeout": LOAD_MS // 1000}])
def test_a_reload_mid_stream_reattaches_to_the_answer(running_app, page):
    rest = threading.Event()  # the answer's end waits for the reloaded page, however long it takes to load
    running_app.ollama.script(Turn(Text(numbered_words(300)), Hold(rest), Text(" THE-END"), chunk_size=6, delay=0.01))
    open_app(page, running_app.url)
    send(page, "count slowly")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("w0050")
    page.reload()  # not reload_app: the page's on_load follows the answer, so it ends with it
    expect(chat).to_contain_text("count slowly", timeout=LOAD_MS)  # the same chat came back, from its beginning
    expect(chat).to_contain_text("w0300")
    midway = chat_text(page)
    rest.set()
    expect(chat).to_contain_text("THE-END")  # sent only now: the reloaded page follows the live answer
    assert len(chat_text(page)) > len(midway)
    assert len(running_app.ollama.chat_requests) == 1  # re-attached, not asked again
    assert_stops_growing(page, settle=0.3)


def test_the_chat_clear_button_forgets_the_conversation(running_app, page):
    running_app.ollama.script("I'll remember pineapple.", "A fresh start.")
    open_app(page, running_app.url)
    send(page, "remember the word pineapple")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("I'll remember pineapple.")
    page.locator("#chat button[aria-label='Clear']").click()
    expect(chat).not_to_contain_text("pineapple")
    # The chatbot empties itself at the click; the new chat is the page's once the list holds it (a message sent
    # sooner goes to the chat being left, and the new chat's empty page then covers its answer).
    expect(page.locator("#chats input")).to_have_count(2)
    send(page, "what was the word?")
    expect(chat).to_contain_text("A fresh start.")
    assert not any("pineapple" in m["content"] for m in running_app.ollama.chat_requests[-1]["messages"])
    expect(chat).not_to_contain_text("pineapple", timeout=1_000)


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
    # The section draws its name box when it opens, and the chat's name into it a moment later: a name typed
    # sooner is drawn over (seen once in about ten runs). A person reads the old name first; so does the test.
    title = page.locator("#title textarea")
    expect(title).to_have_value("first question")
    title.fill("Renamed chat")
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


@pytest.mark.parametrize("app_options", [{"read_timeout": LOAD_MS // 1000}])
def test_a_name_typed_while_the_shown_chats_answer_streams_stays(running_app, page):
    rest = threading.Event()  # the rest of the answer waits until the new name is typed
    running_app.ollama.script(Turn(Text("Counting: "), Hold(rest), Text(numbered_words(100)), chunk_size=6, delay=0.01))
    open_app(page, running_app.url)
    send(page, "count slowly")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("Counting:")
    page.reload()  # the page's on_load shows the chat and follows its answer, frame after frame
    expect(chat).to_contain_text("Counting:", timeout=LOAD_MS)
    page.get_by_text("This chat", exact=True).click()
    title = page.locator("#title textarea")
    expect(title).to_have_value("count slowly")
    title.fill("Counting chat")
    rest.set()
    expect(chat).to_contain_text("w0100")  # drawn by a frame that came after the typing
    expect(title).to_have_value("Counting chat")  # the answer's frames didn't put the old name back


def test_rules_saved_in_the_page_are_this_browsers_own(running_app, browser, page):
    open_app(page, running_app.url)
    page.get_by_text("Rules", exact=True).click()
    editor = page.locator("#rules .cm-content")
    expect(editor).to_contain_text("git status*")  # the example is drawn in, as the old name is above
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.type('[{"tool": "read_file", "action": "allow"}]')
    page.locator("#save_rules").click()
    expect(page.locator("#rules_status")).to_contain_text("Saved 1 rule(s) for your chats")
    reload_app(page)
    page.get_by_text("Rules", exact=True).click()
    expect(page.locator("#rules .cm-content")).to_have_text('[{"tool": "read_file", "action": "allow"}]')
    other = new_context(browser)
    stranger = other.new_page()
    open_app(stranger, running_app.url)
    stranger.get_by_text("Rules", exact=True).click()
    expect(stranger.locator("#rules .cm-content")).to_contain_text("git status*")  # the example, not ours
