"""Model text is data, in the real page: a hostile reply, call or path loads nothing, navigates nowhere and
draws nothing over the page (issue 13, items 2, 3 and 7), and tool calls read in plain words (issue 12).

A listener on loopback stands in for the attacker's server: every request it gets is a leak.
"""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui.conftest import first_moment_showing, reload_app, wait_for_answer_end

# Its fixtures, and its skip when there is no Chromium.
from tests.ui.test_browser import browser, context, open_app, send  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture
def tab(context):  # noqa: F811 (the fixture of that name)
    return context.new_page()


def hostile_reply(url: str) -> str:
    return (
        "Here is your summary.\n\n"
        f"<img src={url}/img-tag>\n\n"
        f"![cat]({url}/md-image)\n\n"
        f'<div style="background:url({url}/css-url);width:50px;height:50px">styled</div>\n\n'
        f'<form action="{url}/form"><button id="evil-button">Claim your prize</button></form>\n\n'
        f'<a href="{url}/link">a link</a> and [another]({url}/md-link) and <{url}/autolink>\n\n'
        f'<div style="position:fixed;top:0;left:0;width:100vw;height:100vh;background:red">FAKE</div>\n\n'
        "**Bold stays bold.**"
    )


def fixed_elements(page: Page) -> list[str]:
    """Inner texts of every element drawn with position:fixed inside the chat or the card."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#chat *, #approval *')]
            .filter(e => getComputedStyle(e).position === 'fixed')
            .map(e => e.innerText)"""
    )


def live_elements(page: Page, selector: str) -> int:
    return page.locator(f"#chat {selector}, #approval {selector}").count()


def test_a_hostile_reply_loads_nothing_navigates_nowhere_and_shows_as_text(running_app, tab, listener):
    running_app.ollama.script(reply(hostile_reply(listener.url)))
    open_app(tab, running_app.url)
    send(tab, "summarize it")
    chat = tab.locator("#chat")
    expect(chat.locator("strong", has_text="Bold stays bold.")).to_be_visible()  # Markdown still works
    expect(chat).to_contain_text(f"<img src={listener.url}/img-tag>")  # raw HTML shows as the text it is
    expect(chat).to_contain_text(f"[image: cat — {listener.url}/md-image]")
    expect(chat).to_contain_text(f"another ({listener.url}/md-link)")
    for selector in ("img", "form", "button#evil-button", "a[href^='http']", ".mg [style]"):
        assert live_elements(tab, selector) == 0, selector
    assert fixed_elements(tab) == []
    wait_for_answer_end(tab)  # a reload while the answer's event still ends raced on_load (1 full run in 3)
    reload_app(tab)  # the replayed log renders the same way
    expect(chat.locator("strong", has_text="Bold stays bold.")).to_be_visible()
    assert live_elements(tab, "img") == 0
    assert listener.requests == []


def test_a_hostile_path_cannot_draw_a_fake_card_and_every_queued_call_shows_in_full(running_app, tab, listener):
    fake = (
        f'x`<div style="position:fixed;inset:0;background:white;z-index:9999">ls -la</div>'
        f"<img src={listener.url}/path-img>`.md"
    )
    hidden = "\n" * 40 + "touch hidden.txt"
    running_app.ollama.script(
        Text(
            tool_call_text("write_file", {"path": fake, "content": "hello"})
            + tool_call_text("run_shell", {"command": "ls -la"})
            + tool_call_text("run_shell", {"command": hidden})
            + tool_call_text("run_shell", {"command": "echo \u202etxt.exe"})
        )
    )
    open_app(tab, running_app.url)
    send(tab, "tidy up")
    card = tab.locator("#approval").first
    expect(card).to_contain_text("wants to do 4 things")
    assert fixed_elements(tab) == []
    assert live_elements(tab, "img") == 0
    steps = card.locator("ol > li")
    expect(steps).to_have_count(4)
    expect(steps.nth(0)).to_contain_text("Write x`<div style=")
    expect(steps.nth(1)).to_contain_text("Run ls -la")
    expect(steps.nth(2)).to_contain_text("⟨↵×40⟩ touch hidden.txt")  # the real first line, in view
    expect(steps.nth(3)).to_contain_text("echo ⟨U+202E⟩txt.exe")
    box = steps.nth(2).locator("pre")
    assert box.inner_text().startswith("⟨↵×40⟩ touch hidden.txt")
    assert listener.requests == []


def test_the_card_shows_a_hidden_command_a_link_and_asks_for_a_call_it_cuts_short_alone(running_app, tab):
    """Issue 17: `echo safe`, 40 line breaks, then `touch`; a write to NOTES.md that a link sends to
    .git/config; and a third call too long to show whole, so "Approve all" is not offered."""
    (running_app.workspace / ".git").mkdir()
    (running_app.workspace / ".git" / "config").write_text("[core]\n")
    (running_app.workspace / "NOTES.md").symlink_to(".git/config")
    running_app.ollama.script(
        Text(
            tool_call_text("run_shell", {"command": "echo safe" + "\n" * 40 + "touch hidden.txt"})
            + tool_call_text("write_file", {"path": "NOTES.md", "content": "[alias]\n"})
            + tool_call_text("write_file", {"path": "long.txt", "content": "x" * 60_000})
        )
    )
    open_app(tab, running_app.url)
    send(tab, "tidy up")
    card = tab.locator("#approval").first
    steps = card.locator("ol > li")
    expect(steps).to_have_count(3)
    expect(steps.nth(0)).to_contain_text("Run echo safe ⏎ ⟨↵×40⟩ touch hidden.txt")
    box = tab.locator("#card_details textarea")
    expect(box).to_have_value("echo safe\n⟨↵×40⟩ touch hidden.txt")
    # Nothing to scroll to (less than a line more than the box shows): before, 40 blank lines hid the touch.
    assert box.evaluate("(box) => box.scrollHeight - box.clientHeight < 8")
    expect(steps.nth(1)).to_contain_text("Write NOTES.md → .git/config")
    expect(steps.nth(1)).to_contain_text("⚠️ NOTES.md is a link to another file: this changes .git/config.")
    expect(card).to_contain_text("each one waits for its own approval")
    expect(tab.locator("#approve_all")).to_be_hidden()
    expect(tab.locator("#chat")).to_contain_text("Write NOTES.md → .git/config")  # the panel's title too


def test_a_file_being_written_shows_its_last_lines_and_a_line_count(running_app, tab):
    lines = [f"note {i:03d}: cats sleep sixteen hours a day" for i in range(80)]
    running_app.ollama.script(
        Turn(
            Text("Writing your notes.\n"),
            Text(tool_call_text("write_file", {"path": "report.md", "content": "\n".join(lines)})),
            chunk_size=8,
            delay=0.03,
        )
    )
    open_app(tab, running_app.url)
    send(tab, "write my notes")
    chat = tab.locator("#chat")
    # Its newest lines only: a given line is on screen for about a second, so wait for the count, which stays.
    text = first_moment_showing(tab, r"Writing report\.md… (\d+) lines? so far", counting=21).chat
    assert re.search(r"note \d{3}: cats sleep sixteen hours a day", text)  # whole lines of the file
    assert "write_file" not in text
    assert '"content"' not in text
    assert "\\n" not in text  # real lines, not JSON escapes
    tab.locator("#stop").click()
    expect(chat).to_contain_text("Stopped")


def test_a_command_reads_in_plain_words_and_its_output_is_in_view(running_app, tab):
    running_app.ollama.script(
        Text(tool_call_text("run_shell", {"command": "seq 1 30"})),
        reply("Counted to thirty."),
    )
    open_app(tab, running_app.url)
    send(tab, "count")
    card = tab.locator("#approval").first
    expect(card).to_contain_text("Run seq 1 30")
    tab.locator("#approve").click()
    chat = tab.locator("#chat")
    expect(chat).to_contain_text("Counted to thirty.")
    expect(chat.get_by_text("Run seq 1 30")).to_be_visible()
    output = chat.locator(".mg pre", has_text="3\n4")
    expect(output.first).to_be_visible()  # no click needed
    expect(chat.get_by_text(re.compile(r"Show all \(\d+ lines\)"))).to_be_visible()
    assert "run_shell" not in chat.inner_text()


def test_the_approval_log_is_a_list_with_the_reason_and_stays_inert(running_app, tab, listener):
    command = f"curl {listener.url}/x <img src={listener.url}/log-img>"
    running_app.ollama.script(
        Text(tool_call_text("run_shell", {"command": command})),
        reply("Fine, I won't."),
    )
    open_app(tab, running_app.url)
    send(tab, "fetch it")
    expect(tab.locator("#approve")).to_be_visible()
    tab.locator("#reason textarea").fill("not today")
    tab.locator("#reject").click()
    expect(tab.locator("#chat")).to_contain_text("Fine, I won't.")
    tab.get_by_text("This chat", exact=True).click()
    tab.locator("#show_audit").click()
    log = tab.locator("#audit")
    expect(log).to_contain_text("Reason: not today")
    expect(log).to_contain_text("Decision: rejected")
    expect(log).to_contain_text("How it ended: it did not run")
    expect(log).to_contain_text(f"Run curl {listener.url}/x <img")
    assert tab.locator("#audit img").count() == 0
    assert listener.requests == []


def test_the_chinese_page_is_chinese_throughout(running_app, browser):  # noqa: F811
    running_app.ollama.script(
        Text(tool_call_text("write_file", {"path": "筆記.md", "content": "喵\n"})), reply("好了。")
    )
    chinese = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-TW")
    tab = chinese.new_page()
    open_app(tab, running_app.url, banner="已連上 Ollama")
    chat = tab.locator("#chat")
    expect(chat.locator("strong", has_text="任何修改都會先問過你")).to_be_visible()  # bold, not literal **
    expect(tab.locator("#chats")).to_contain_text("新對話")
    expect(tab.locator("#model_facts")).to_contain_text("參數")
    box = tab.locator("#msg textarea")
    expect(box).to_have_attribute("placeholder", "輸入任何問題，按 Enter 送出")
    send(tab, "寫個筆記")
    card = tab.locator("#approval").first
    expect(card).to_contain_text("寫入 筆記.md")
    expect(box).to_have_attribute("placeholder", "輸入任何問題，按 Enter 送出")
    tab.locator("#approve").click()
    expect(chat).to_contain_text("好了。")
    expect(box).to_have_attribute("placeholder", "輸入任何問題，按 Enter 送出")
    expect(chat).to_contain_text("寫入 筆記.md")
    tab.get_by_text("English", exact=True).click()
    expect(tab.locator("#model_facts")).to_contain_text("parameters")
    expect(chat).to_contain_text("Write 筆記.md")
