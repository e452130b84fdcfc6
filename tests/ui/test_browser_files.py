"""The Files panel in headless Chromium: the tree, previews, downloads, uploads and Undo, against the real app."""

import os
from collections.abc import Iterator

import pytest

from tests.ui.conftest import CHROMIUM

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.scripted_ollama import Text, Turn, reply, tool_call_text

WAIT_MS = 10_000
pytestmark = pytest.mark.browser
expect.set_options(timeout=WAIT_MS)


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    context: BrowserContext = chromium.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.set_default_timeout(WAIT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


def open_app(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("#status")).to_contain_text("Connected")


def open_files(page: Page) -> None:
    page.locator("#files").get_by_text("Your files").first.click()
    expect(page.locator("#file_list")).to_be_visible()


def send(page: Page, text: str) -> None:
    box = page.locator("#msg textarea")
    box.fill(text)
    box.press("Enter")


def approved_write(page: Page, running_app, text: str, *calls: tuple[str, dict]) -> None:
    """The person asks; the model makes each call in turn, and the person approves each."""
    turns = [Turn(Text(tool_call_text(name, arguments))) for name, arguments in calls]
    running_app.ollama.script(*turns, reply("Done."))
    send(page, text)
    for _ in calls:
        expect(page.locator("#approve")).to_be_visible()
        page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Done.")


def pick(page: Page, label: str) -> None:
    page.locator("#file_list").get_by_text(label).first.click()


def upload(page: Page, name: str, data: bytes) -> None:
    page.locator("#upload input[type=file]").set_input_files(
        files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}]
    )


def test_a_file_the_agent_wrote_appears_previews_and_downloads_with_the_same_bytes(running_app, page):
    poem = "Soft paws at dawn,\nA purr beside the window,\n<b>not bold</b>\n"
    open_app(page, running_app.url)
    approved_write(page, running_app, "a poem to poem.txt", ("write_file", {"path": "poem.txt", "content": poem}))
    open_files(page)
    expect(page.locator("#file_list")).to_contain_text("poem.txt")
    expect(page.locator("#file_list")).to_contain_text("+3 −0")  # this chat made it: marked new, +3
    pick(page, "poem.txt")
    preview = page.locator("#file_preview")
    expect(preview).to_contain_text("A purr beside the window")
    expect(preview).to_contain_text("<b>not bold</b>")  # shown as text, never as markup
    with page.expect_download() as downloading:
        page.locator("#file_download").click()
    saved = downloading.value.path()
    assert saved is not None and open(saved, "rb").read() == (running_app.workspace / "poem.txt").read_bytes()
