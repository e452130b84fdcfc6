"""The page as a person sees it, on a laptop (1280x800) and on a phone (390x844, touch), in both languages.

Everything is judged by what is on screen: bounding boxes against the window, scroll boxes, visible text
and the browser's storage. Nothing is scrolled by the test before it looks.
The approval card's layout and edit form are in test_layout_card.py, which uses these fixtures and helpers.
"""

import sqlite3

import pytest
from playwright.sync_api import Browser, Page, expect

from meowgent.ui.i18n import CHINESE, ENGLISH, LANGUAGES, t
from meowgent.ui.page import EXAMPLES
from tests.scripted_ollama import reply
from tests.ui.conftest import SCREENS, RunningApp, in_view, open_app, page_scroll
from tests.ui.conftest import send as send_message

pytestmark = pytest.mark.browser


@pytest.fixture(params=list(SCREENS))
def screen(request) -> str:
    return request.param


@pytest.fixture(params=[ENGLISH, CHINESE])
def language(request) -> str:
    return request.param


@pytest.fixture
def page(chromium: Browser, screen: str) -> Page:
    return chromium.new_context(locale="en-US", **SCREENS[screen]).new_page()


SIDEBAR_OPEN_WIDTH = 768
"""From this width the page's script opens the sidebar (meowgent.ui.page.NARROW is the width below it)."""


def open_page(page: Page, app: RunningApp, language: str = ENGLISH) -> None:
    """Load the page, wait for its on_load, and pick `language` with the language switch."""
    open_app(page, app.url)  # the switch must not race on_load, which sets the language it finds stored
    if language == ENGLISH:
        return
    # The page's script opens the sidebar on a wide screen after load; on a narrow one it stays behind the menu.
    menu_needed = page.viewport_size["width"] < SIDEBAR_OPEN_WIDTH
    if menu_needed:
        page.locator("#menu").click()
    expect(page.locator("#language")).to_be_in_viewport()
    page.locator("#language").get_by_text(LANGUAGES[language]).click()
    expect(page.locator("#send")).to_contain_text(t(language, "send"))
    # The switch also redraws the model facts in the same language: once they are, every part of it has run.
    expect(page.locator("#model_facts")).to_contain_text(t(language, "parameters", size="8.2B"))
    if menu_needed:  # on a phone the open sidebar covers the chat: close it again
        page.get_by_role("button", name="Toggle Sidebar").click()
        expect(page.locator("#language")).not_to_be_in_viewport()


def send(page: Page, text: str) -> None:
    send_message(page, text, by_button=True)


def test_a_phone_opens_on_the_chat_with_the_sidebar_behind_the_menu(running_app, chromium, language):
    context = chromium.new_context(locale="zh-TW" if language == CHINESE else "en-US", **SCREENS["phone"])
    page = context.new_page()
    open_app(page, running_app.url, banner=t(language, "banner_ok", version="").strip())
    expect(page.locator("#status")).to_contain_text("qwen3")  # the model in use, too
    for element in ("#chat", "#msg textarea", "#send", "#status", "#menu"):
        assert in_view(page.locator(element)), f"{element} is not in view on a phone"
    assert not in_view(page.locator("#language")), "the sidebar covers the chat"
    assert page_scroll(page) == 0

    page.locator("#menu").click()
    expect(page.locator("#new_chat")).to_be_in_viewport()
    expect(page.locator("#new_chat")).to_contain_text(t(language, "new_chat"))
    page.get_by_role("button", name="Toggle Sidebar").click()
    expect(page.locator("#new_chat")).not_to_be_in_viewport()
    assert in_view(page.locator("#msg textarea"))


def test_a_laptop_opens_with_the_sidebar_beside_the_chat(running_app, chromium):
    context = chromium.new_context(**SCREENS["laptop"])
    page = context.new_page()
    open_page(page, running_app)
    expect(page.locator("#language")).to_be_in_viewport()
    for element in ("#language", "#model", "#chat", "#msg textarea", "#send"):
        assert in_view(page.locator(element)), f"{element} is not in view on a laptop"


# The banner's advice ("ollama serve") is the same words in both languages and the screen only decides where the
# line sits: each screen and each language once (the phone with the Chinese banner).
@pytest.mark.parametrize(("screen", "language"), [("laptop", ENGLISH), ("phone", CHINESE)])
def test_the_status_line_says_when_ollama_is_down(running_app, page, language):
    open_page(page, running_app, language)
    running_app.ollama.stop()
    expect(page.locator("#status")).to_contain_text("ollama serve")  # rechecked every 5 s
    assert in_view(page.locator("#status"))


# The language picks the examples; the screen picks the way to New chat (the phone's menu). The two don't meet, so
# each screen and each language once.
@pytest.mark.parametrize(("screen", "language"), [("laptop", ENGLISH), ("phone", CHINESE)])
def test_examples_send_and_retry_appear_only_when_they_apply(running_app, page, language):
    running_app.ollama.script(reply("Here are your files."), reply("A second try."), reply("And a typed answer."))
    open_page(page, running_app, language)
    chat, retry = page.locator("#chat"), page.locator("#retry")
    first_example = EXAMPLES[language][0]
    expect(chat.get_by_text(first_example)).to_be_visible()
    expect(retry).to_be_hidden()

    chat.get_by_text(first_example).click()
    expect(chat).to_contain_text("Here are your files.")
    expect(chat.get_by_text(EXAMPLES[language][1])).to_be_hidden()  # examples belong to an empty chat
    expect(retry).to_be_visible()
    assert in_view(retry)

    retry.click()
    expect(chat).to_contain_text("A second try.")

    send(page, "and now by hand")
    expect(chat).to_contain_text("And a typed answer.")
    expect(page.locator("#msg textarea")).to_have_value("")

    if not in_view(page.locator("#new_chat")):  # on a phone it is behind the menu, and makes way after
        page.locator("#menu").click()
        page.locator("#new_chat").click()
        expect(page.locator("#new_chat")).not_to_be_in_viewport()
    else:
        page.locator("#new_chat").click()
    expect(chat).not_to_contain_text("And a typed answer.")
    expect(retry).to_be_hidden()  # nothing to retry in a fresh chat, and no warning written into it
    expect(chat.get_by_text(first_example)).to_be_visible()


def test_what_is_typed_while_an_answer_runs_stays_in_the_box(running_app, page):
    words = " ".join(f"w{i:03d}" for i in range(300))
    running_app.ollama.script(reply(words + " THE-END", chunk_size=8, delay=0.01))  # ~3 s
    open_page(page, running_app)
    send(page, "count slowly")
    expect(page.locator("#chat")).to_contain_text("w010")
    page.locator("#msg textarea").fill("my next question")
    expect(page.locator("#chat")).to_contain_text("THE-END")
    expect(page.locator("#send")).to_be_visible()  # the answer's event has ended
    expect(page.locator("#msg textarea")).to_have_value("my next question")


def test_no_gradio_leftovers_and_nothing_of_the_chat_in_browser_storage(running_app, page):
    running_app.ollama.script(reply("The secret word is pineapple."))
    open_page(page, running_app)
    send(page, "tell me the secret marmalade")
    expect(page.locator("#chat")).to_contain_text("pineapple")
    text = page.locator("body").inner_text()
    for leftover in ("Use via API", "Built with Gradio", "Settings", "Runs"):
        assert leftover not in text
    assert page.locator("footer").count() == 0
    # A message's copy button would copy its source, escaped HTML, not the words on screen.
    expect(page.get_by_role("button", name="Copy message")).to_have_count(0)

    with sqlite3.connect(running_app.settings.data_dir / "meowgent.db") as db:
        (owner,) = db.execute("SELECT owner FROM conversations").fetchone()
    owner_key = owner.removeprefix("browser:")
    storage = page.evaluate(
        "() => [localStorage, sessionStorage].flatMap(s => Object.keys(s).map(k => [k, s.getItem(k)]))"
    )
    assert not [key for key, _ in storage if key.startswith("gradio:run")], storage
    everything = repr(storage)
    for secret in ("marmalade", "pineapple", owner_key):
        assert secret not in everything


FRAME_PADDING = {"phone": "6px", "laptop": "12px"}
"""The room around the main view: less on a phone, where every pixel of the card counts."""


def test_the_phone_rules_apply_on_a_phone_and_only_there(running_app, page, screen):
    # Gradio rewrites the rules of its `css` option's @media blocks to apply only inside the container, so a phone
    # rule for the container itself never matched there (a phone had the laptop's 12 px).
    open_page(page, running_app)
    padding = page.locator(".gradio-container .contain").first.evaluate("box => getComputedStyle(box).paddingLeft")
    assert padding == FRAME_PADDING[screen]
    # The rules that stay in the css option's @media block (for what is inside the container) apply too.
    send_width = page.locator("#send").evaluate("button => getComputedStyle(button).minWidth")
    assert send_width == {"phone": "56px", "laptop": "72px"}[screen]  # 3.5rem and 4.5rem
