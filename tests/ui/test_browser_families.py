"""Model families with a builtin Ollama parser, in the real page: live call text, approval, silences.

The scripted server runs the model's raw tokens through a port of its Ollama parser, so the page gets what it would
get from real Ollama: the call's text only as logprobs tokens, or (before Ollama 0.12.11) nothing at all until the
call is whole.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.scripted_ollama import (
    DEFAULT_MODELS,
    PARSER_MODELS,
    Generated,
    Turn,
    generated,
    reply,
    tokens_of,
    tool_call_text,
    xml_call_text,
)
from tests.ui.conftest import first_moment_showing
from tests.ui.test_browser import browser, context, open_app, page, send  # noqa: F401  (fixtures too)

pytestmark = pytest.mark.browser

INSTALLED = {**DEFAULT_MODELS, **PARSER_MODELS}
CONTENT = "".join(f'Line {n:05d} of the notes, with <b>markup</b> & "quotes".\n' for n in range(240))[:12_000]
SENTENCE = "I'll write the notes to notes.md now."
CALL_WRITTEN_MS = 90_000
"""The whole call takes several seconds to write, many more on a busy machine."""


@pytest.fixture
def app_options(request):
    return request.param


@pytest.mark.parametrize("app_options", [{"models": INSTALLED, "model": "qwen3.5"}], indirect=True)
def test_a_long_xml_call_shows_its_text_while_written_then_approval_writes_it_exactly(running_app, page):  # noqa: F811
    text = "Plan the notes.\n</think>\n\n" + SENTENCE + "\n"
    text += xml_call_text("write_file", {"path": "notes.md", "content": CONTENT})
    running_app.ollama.script(generated(text, token_size=8, delay=0.005), reply("Written, all 240 lines."))
    open_app(page, running_app.url)
    send(page, "write my notes")
    chat = page.locator("#chat")
    # The file's text is on screen while the call is still being written: nothing waits for approval yet.
    writing = first_moment_showing(page, "of the notes")
    assert re.search(r"Writing notes\.md… \d+ lines? so far", writing.chat)
    assert re.search(r"Line 0\d{4} of the notes", writing.chat)
    assert "approve" not in writing.shown
    assert "Line 00239" not in writing.chat
    expect(chat).to_contain_text(SENTENCE)

    card = page.locator("#approval").first
    expect(card).to_be_visible(timeout=CALL_WRITTEN_MS)
    expect(card).to_contain_text("notes.md")
    expect(page.locator("#card_details textarea")).to_have_value(CONTENT)
    page.locator("#approve").click()
    expect(chat).to_contain_text("Written, all 240 lines.")
    assert (running_app.workspace / "notes.md").read_text() == CONTENT
    assert "⚠️" not in chat.inner_text()
    assert "<b>markup</b>" not in page.locator("#chat").inner_html()  # the file's text is shown, never rendered


OLD_OLLAMA = {"models": INSTALLED, "model": "qwen3:4b-instruct", "version": "0.12.10", "read_timeout": 2.0}


@pytest.mark.parametrize("app_options", [OLD_OLLAMA], indirect=True)
def test_before_a_silent_call_the_sentence_is_whole_and_the_page_counts_the_seconds(running_app, page):  # noqa: F811
    (running_app.workspace / "notes.md").write_text("hello from the notes\n")
    # About 3 s of silence while Ollama holds the call: longer than the read timeout (the patience is five), and
    # longer than the page waits before it says a call is being written.
    # The sentence comes faster than the page's frames, so its end arrives between two frames.
    sentence = Generated(tokens_of(SENTENCE + "\n"), delay=0.01)
    call = Generated(tokens_of(tool_call_text("read_file", {"path": "notes.md"})), delay=0.2)
    running_app.ollama.script(Turn(sentence, call), reply("The notes say hello."))
    open_app(page, running_app.url)
    send(page, "read my notes")
    chat = page.locator("#chat")
    # Whole before anything else arrives: the status of the silent call comes only after two seconds of silence.
    assert "writing a tool call" not in first_moment_showing(page, re.escape(SENTENCE)).chat
    expect(chat).to_contain_text(re.compile(r"The model is writing a tool call… \d+ s"))
    expect(chat).to_contain_text("The notes say hello.")
    assert "⚠️" not in chat.inner_text()
