"""The real page in headless Chromium against scripted OpenAI-compatible servers (vLLM's and llama.cpp's wire):
a big write_file streaming live, approval, a refused key, Stop, a host dying mid-answer, thinking."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ui.conftest import CHROMIUM

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Page, expect

from meowgent.config import Secret, Settings
from tests.scripted_openai import Calls, Content, Reasoning, ScriptedOpenAI, Turn
from tests.ui.conftest import OWNER, first_moment_showing, serve_for_test
from tests.ui.test_browser import browser, context, numbered_words, open_app, send  # noqa: F401  (fixtures too)

MODEL = "Qwen/Qwen3-8B"
KEY = "sk-wrong-key-5150-never-shown"

pytestmark = pytest.mark.browser


@dataclass
class OpenAIApp:
    url: str
    servers: list[ScriptedOpenAI]
    workspace: Path


@pytest.fixture
def app_options() -> dict:
    """`servers`: how many scripted servers (each a `--openai-url`), `api_key`: the key they want; Settings fields."""
    return {}


@pytest.fixture
def openai_app(tmp_path: Path, app_options: dict) -> Iterator[OpenAIApp]:
    options = dict(app_options)
    count, wanted = options.pop("servers", 1), options.pop("api_key", None)
    servers = [ScriptedOpenAI(dialect=("vllm", "llamacpp")[i % 2], api_key=wanted).start() for i in range(count)]
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    settings = Settings(
        workspace=workspace,
        openai_urls=tuple(server.url for server in servers),
        model=MODEL,
        data_dir=tmp_path / "data",
        read_timeout=5,
        token=OWNER,
        **options,
    )
    demo, url, _ = serve_for_test(settings)
    try:
        yield OpenAIApp(url, servers, workspace)
    finally:
        demo.close()
        for server in servers:
            server.stop()


@pytest.fixture
def tab(context) -> Page:  # noqa: F811  (the fixture imported above)
    return context.new_page()


WRITING = r"Writing big\.txt… (\d+) lines? so far"
"""The live write_file panel's title, with its line count."""


def panel_lines(chat: str) -> int:
    return int(re.search(WRITING, chat)[1])


def test_a_12000_character_write_file_streams_live_then_waits_for_approval_and_is_written_exactly(openai_app, tab):
    server = openai_app.servers[0]
    content = "".join(f"line {i:04d}: the cat naps in the warm afternoon sun.\n" for i in range(240))[:12_000]
    assert len(content) == 12_000
    # vLLM's fragments: the call's name first, then its arguments a few characters at a time (about 8 s in all).
    call = Calls(("write_file", {"path": "big.txt", "content": content}), piece=16)
    server.script(Turn(Content("I'll write the file now."), call, delay=0.01), "Done: big.txt is written.")
    open_app(tab, openai_app.url, banner=f"Connected to {server.url}")
    send(tab, "write big.txt")
    chat = tab.locator("#chat")
    early = first_moment_showing(tab, WRITING)
    later = first_moment_showing(tab, WRITING, counting=panel_lines(early.chat) + 20)  # it grows as it streams
    assert "line 0" in later.chat  # the file's own lines, as they come
    assert later.shown == {"stop"}  # and the answer could be stopped, not yet approved
    card = tab.locator("#approval").first
    expect(card).to_be_visible()
    expect(card).to_contain_text("Create the new file big.txt")
    assert not (openai_app.workspace / "big.txt").exists()
    tab.locator("#approve").click()
    expect(chat).to_contain_text("Done: big.txt is written.")
    assert (openai_app.workspace / "big.txt").read_text() == content
    result = server.chat_requests[-1]["messages"][-1]
    assert result["role"] == "tool"
    assert result["tool_call_id"] == server.chat_requests[-1]["messages"][-2]["tool_calls"][0]["id"]


@pytest.mark.parametrize("app_options", [{"api_key": "sk-the-right-one", "openai_key": Secret(KEY)}])
def test_a_refused_key_is_a_sentence_and_the_key_is_nowhere_in_the_page(openai_app, tab):
    server = openai_app.servers[0]
    open_app(tab, openai_app.url, banner="refused the API key (401)")
    send(tab, "hello?")
    chat = tab.locator("#chat")
    expect(chat).to_contain_text(f"The server at {server.url} refused the API key (401).")
    assert server.headers[-1]["authorization"] == f"Bearer {KEY}"  # sent to the server, and only there
    html = tab.content()
    assert KEY not in html
    assert "Traceback" not in html
    config = tab.request.get(openai_app.url.rstrip("/") + "/config").text()
    assert KEY not in config


def test_stop_closes_the_stream_and_the_server_sees_it(openai_app, tab):
    server = openai_app.servers[0]
    server.script(Turn(Content(numbered_words(3_000), token_size=6), delay=0.01), "Fresh answer after the stop.")
    open_app(tab, openai_app.url, banner="Connected")
    send(tab, "count for me")
    chat = tab.locator("#chat")
    expect(chat).to_contain_text("w0040")
    tab.locator("#stop").click()
    expect(chat).to_contain_text("Stopped")
    assert server.wait_for_disconnects(1)
    assert "w2999" not in chat.inner_text()
    send(tab, "anything else?")
    expect(chat).to_contain_text("Fresh answer after the stop.")


@pytest.mark.parametrize("app_options", [{"servers": 2}])
def test_a_host_killed_mid_answer_ends_it_plainly_and_the_next_answer_is_served_by_the_other(openai_app, tab):
    first, second = openai_app.servers
    first.script(Turn(Content(numbered_words(3_000), token_size=6), delay=0.01))
    second.script("Served by the second host.")
    open_app(tab, openai_app.url, banner="Connected to 2 of 2 model servers")
    status = tab.locator("#status")
    expect(status).to_contain_text(f"🟢 127.0.0.1:{first.port} · 🟢 127.0.0.1:{second.port}")
    send(tab, "count for me")
    chat = tab.locator("#chat")
    expect(chat).to_contain_text("w0040")
    first.stop()  # killed: its connections cut, nothing listens any more
    expect(chat).to_contain_text(f"The connection to {first.url} closed before the answer was finished")
    expect(tab.locator("#stop")).to_be_hidden()
    send(tab, "try again")
    expect(chat).to_contain_text("Served by the second host.")
    assert [len(first.chat_requests), len(second.chat_requests)] == [1, 1]
    expect(status).to_contain_text(f"🔴 127.0.0.1:{first.port}: can't be reached")
    expect(status).to_contain_text("Connected to 1 of 2 model servers")


def test_thinking_from_reasoning_content_shows_in_the_thinking_panel(openai_app, tab):
    server = openai_app.servers[0]
    server.script(Turn(Reasoning("The person wants to know about naps."), Content("Cats nap a lot.")))
    open_app(tab, openai_app.url, banner="Connected")
    send(tab, "tell me about naps")
    chat = tab.locator("#chat")
    expect(chat).to_contain_text("Cats nap a lot.")
    panel = chat.get_by_role("button", name="Thinking")
    expect(panel).to_be_visible()
    panel.click()  # a finished thinking panel is closed; opened, it shows the server's reasoning_content
    expect(chat).to_contain_text("The person wants to know about naps.")
    assert server.chat_requests[0]["chat_template_kwargs"] == {"enable_thinking": True}
