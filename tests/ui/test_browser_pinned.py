"""The real page against a scripted Ollama and a scripted OpenAI-compatible server that serve the same model: the
picker lists it once per host, picking "qwen3:latest · HOST" pins the chat there, the answer comes from that host,
and the status line says which host answers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ui.conftest import CHROMIUM

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import Page, expect

from meowgent.config import Settings
from tests.scripted_ollama import ScriptedOllama
from tests.scripted_openai import ScriptedOpenAI
from tests.ui.conftest import OWNER, open_app, serve_for_test
from tests.ui.test_browser import browser, context, send  # noqa: F401  (fixtures too)

QWEN = "qwen3:latest"

pytestmark = pytest.mark.browser


@dataclass
class TwoHosts:
    url: str
    ollama: ScriptedOllama
    openai: ScriptedOpenAI


@pytest.fixture
def two_hosts(tmp_path: Path) -> Iterator[TwoHosts]:
    with ScriptedOllama() as ollama, ScriptedOpenAI(models={QWEN: 40960}) as openai:
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        settings = Settings(
            workspace=workspace,
            ollama_hosts=(ollama.url,),
            openai_urls=(openai.url,),
            model="qwen3",
            data_dir=tmp_path / "data",
            read_timeout=5,
            token=OWNER,
        )
        demo, url, _ = serve_for_test(settings)
        try:
            yield TwoHosts(url, ollama, openai)
        finally:
            demo.close()


@pytest.fixture
def tab(context) -> Page:  # noqa: F811  (the fixture imported above)
    return context.new_page()


def test_picking_a_model_on_one_host_pins_the_chat_there_and_the_status_line_says_so(two_hosts, tab):
    ollama_host, openai_host = f"127.0.0.1:{two_hosts.ollama.port}", f"127.0.0.1:{two_hosts.openai.port}"
    two_hosts.ollama.script("Answered by Ollama.")
    two_hosts.openai.script("Answered by the OpenAI server.")
    open_app(tab, two_hosts.url, banner="Connected to 2 of 2 model servers")
    status = tab.locator("#status")
    expect(status).to_contain_text(f"{QWEN}, answered by {ollama_host}")  # unpinned: the first of equals
    tab.locator("#model input").click()
    expect(tab.get_by_role("option", name=f"{QWEN} · {ollama_host}", exact=True)).to_be_visible()
    tab.get_by_role("option", name=f"{QWEN} · {openai_host}", exact=True).click()
    expect(status).to_contain_text(f"{QWEN}, answered by {openai_host}")
    send(tab, "who answers?")
    expect(tab.locator("#chat")).to_contain_text("Answered by the OpenAI server.")
    assert [request["model"] for request in two_hosts.openai.chat_requests] == [QWEN]
    assert two_hosts.ollama.chat_requests == []
