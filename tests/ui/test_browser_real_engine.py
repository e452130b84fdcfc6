"""The real page in headless Chromium against a real llama-server (tests/real_engine.py), started as the README says
and given to the app with `--openai-url` alone: a tool call shown live, approved and answered, over several turns of
one chat, with the context meter showing the server's window."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.real_engine import find_engine, missing_reason, running_server
from tests.ui.conftest import CHROMIUM

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Page, expect

from meowgent.config import Settings
from meowgent.ui.app import serve
from tests.ui.conftest import free_port
from tests.ui.test_browser import browser, context, send  # noqa: F401  (fixtures too)

ENGINE = find_engine()
pytestmark = [pytest.mark.browser, pytest.mark.real_engine, pytest.mark.skipif(ENGINE is None, reason=missing_reason())]
ANSWER_MS = 600_000
"""A whole reply on two busy cores: the first prompt (the tools' schemas, ~2,200 tokens) is read at ~15 tokens/s."""
WINDOW = 4096


@dataclass
class EngineApp:
    url: str
    workspace: Path


@pytest.fixture
def engine_app(tmp_path: Path) -> Iterator[EngineApp]:
    assert ENGINE is not None
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with running_server(ENGINE, ctx=WINDOW, max_tokens=200) as url:
        settings = Settings(
            workspace=workspace, openai_urls=(url,), port=free_port(), data_dir=tmp_path / "data", read_timeout=600
        )
        demo, app_url, _ = serve(settings)
        try:
            yield EngineApp(app_url, workspace)
        finally:
            demo.close()


@pytest.fixture
def tab(context) -> Page:  # noqa: F811  (the fixture imported above)
    return context.new_page()


def write_and_approve(tab: Page, workspace: Path, name: str, word: str) -> None:
    """Ask for a file, approve the call, and let the model answer the result. A small model may make the same call
    again instead of answering: a person rejects that, and the model is asked once more."""
    chat = tab.locator("#chat")
    send(tab, f"Use the write_file tool to create {name} containing the word {word}.")
    expect(chat).to_contain_text(name, timeout=ANSWER_MS)  # the call's panel, while the reply streams
    approve = tab.locator("#approve")
    expect(approve).to_be_visible(timeout=ANSWER_MS)
    assert not (workspace / name).exists()
    approve.click()
    written = workspace / name
    deadline = time.monotonic() + ANSWER_MS / 1000
    while not written.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert word in written.read_text()
    expect(tab.locator("#stop")).to_be_hidden(timeout=ANSWER_MS)  # the model was asked again, and answered
    if approve.is_visible():
        tab.locator("#reject").click()
        expect(tab.locator("#stop")).to_be_hidden(timeout=ANSWER_MS)
    assert "⚠️" not in chat.inner_text()  # no context error after the call (issue 31)


def test_calls_are_shown_approved_and_answered_over_several_turns(engine_app, tab):
    tab.goto(engine_app.url)
    expect(tab.locator("#status")).to_contain_text("Connected", timeout=ANSWER_MS)  # two busy cores: slow to load
    expect(tab.locator("#status")).not_to_contain_text("isn't installed")
    write_and_approve(tab, engine_app.workspace, "hello.txt", "hi")
    write_and_approve(tab, engine_app.workspace, "bye.txt", "bye")
    expect(tab.locator("#context_meter")).to_contain_text(f"of {WINDOW:,} tokens")
