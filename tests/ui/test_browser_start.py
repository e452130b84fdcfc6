"""What the real page says before the first answer: how to start Ollama (and that it recovered), a model download
and a name that isn't one, a Chinese browser's page, and the login page.

Split from test_browser.py (its fixtures and helpers) so the two run on two workers.
"""

import pytest
from playwright.sync_api import expect

from meowgent.ui.app import serve
from tests.scripted_ollama import Text, tool_call_text
from tests.ui import test_browser
from tests.ui.conftest import open_app, wait_for_load
from tests.ui.test_browser import VIEWPORT, send

# The same Chromium fixtures as the main browser tests (and their skip when there is no Chromium).
browser, context, page = test_browser.browser, test_browser.context, test_browser.page

pytestmark = pytest.mark.browser


def test_the_banner_says_how_to_start_ollama_and_recovers(running_app, page):
    running_app.ollama.stop()
    open_app(page, running_app.url, banner="ollama serve")
    running_app.ollama.start()
    expect(page.locator("#status")).to_contain_text("Connected")  # rechecked every 5 s
    expect(page.locator("#status")).not_to_contain_text("ollama serve")


RECORD_PULL_STATUS = """() => {
    const status = document.querySelector("#pull_status");
    window.pullStatusShown = [];
    new MutationObserver(() => window.pullStatusShown.push(status.innerText))
        .observe(status, {subtree: true, childList: true, characterData: true, attributes: true});
}"""
"""Keeps every text the download's status line shows: the progress comes and goes faster than a look at the page."""


def test_a_model_downloads_with_a_progress_bar_and_appears_in_the_picker(running_app, page):
    running_app.ollama.pull_delay = 0.15  # slow enough to watch the bar move
    open_app(page, running_app.url)
    page.get_by_text("Get a model").click()
    page.locator("#pull_name textarea").fill("qwen3:0.6b")
    page.evaluate(RECORD_PULL_STATUS)
    page.locator("#pull").click()
    expect(page.locator("#pull_status")).to_contain_text("qwen3:0.6b is ready")
    shown = page.evaluate("() => window.pullStatusShown")
    assert any("Downloading part" in text and "%" in text for text in shown), shown
    page.locator("#model input").click()
    expect(page.get_by_role("option", name="qwen3:0.6b")).to_be_visible()


def test_an_unknown_model_download_says_so_in_a_sentence(running_app, page):
    open_app(page, running_app.url)
    page.get_by_text("Get a model").click()
    page.locator("#pull_name textarea").fill("no-such-model")
    page.locator("#pull").click()
    expect(page.locator("#pull_status")).to_contain_text("There's no model called 'no-such-model'")


def test_a_chinese_browser_gets_chinese_and_can_switch_to_english(running_app, browser):
    running_app.ollama.script(
        Text("我來修改設定。\n" + tool_call_text("edit_file", {"path": "設定.txt", "old": "貓=1", "new": "貓=2"}))
    )
    (running_app.workspace / "設定.txt").write_text("貓=1\n")
    context = browser.new_context(viewport=VIEWPORT, locale="zh-TW")
    page = context.new_page()
    open_app(page, running_app.url, banner="已連上 Ollama")
    expect(page.locator("#new_chat")).to_contain_text("新對話")
    expect(page.get_by_role("textbox", name="你的訊息")).to_be_visible()  # what a screen reader says of the box
    send(page, "把貓改成 2")
    card = page.locator("#approval").first
    expect(card).to_contain_text("修改檔案")
    expect(page.locator("#approve")).to_contain_text("核准")
    expect(card).to_contain_text("+貓=2")
    expect(page.locator("#card_details")).to_be_hidden()  # the card shows the diff whole, and once
    page.get_by_text("English", exact=True).click()
    expect(page.locator("#approve")).to_contain_text("Approve")
    expect(card).to_contain_text("Change part of the file")
    expect(page.locator("#status")).to_contain_text("Connected")
    expect(page.get_by_role("textbox", name="Your message")).to_be_visible()


def test_the_login_page_names_us_in_the_browsers_language_and_lets_the_person_in(running_app, browser):
    running_app.demo.close()
    running_app.demo, url, _ = serve(running_app.settings, auth=("ann", "pw"))
    context = browser.new_context(viewport=VIEWPORT, locale="zh-TW")
    page = context.new_page()
    page.goto(url)
    expect(page.get_by_text("🐱 Meowgent")).to_be_visible()
    expect(page.get_by_text("請用啟動 Meowgent 的終端機")).to_be_visible()
    expect(page.get_by_role("button", name="登入")).to_be_visible()
    page.get_by_label("使用者名稱").fill("ann")
    page.get_by_label("密碼").fill("pw")
    page.get_by_role("button", name="登入").click()
    wait_for_load(page, banner="已連上 Ollama")


COUNT_TRACKER_FRAMES = """
window.trackerFrames = 0;
const requestFrame = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) => {
    if ((new Error().stack || "").includes("statustracker")) window.trackerFrames++;
    return requestFrame(callback);
};"""
"""Counts the frames Gradio's status trackers ask for (their timer loop), from before Gradio's code loads."""


def test_an_idle_page_asks_for_no_frames_once_it_has_loaded(running_app, page):
    # Gradio removes its page-wide loader while it is still pending, and the loader's timer then asked for a frame
    # 60 times a second for as long as the tab stayed open (meowgent.ui.routes.gradiofix).
    page.add_init_script(COUNT_TRACKER_FRAMES)
    open_app(page, running_app.url)
    page.wait_for_timeout(1000)  # the loader's last frame, if the loop ends
    before = page.evaluate("window.trackerFrames")
    page.wait_for_timeout(2000)
    assert before > 0, "the counter saw no tracker frame at all: it no longer measures the loop"
    # The loop asked for about 120 in these two seconds; an event still settling under load may ask for one or two.
    assert page.evaluate("window.trackerFrames") - before < 10
