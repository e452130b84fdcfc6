"""A page on a computer without a sandbox says so: in the status line, and on the card of every command."""

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.sandboxing import failing_bwrap
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui import test_browser
from tests.ui.test_browser import open_app, send

# The same Chromium fixtures as the main browser tests.
browser, context, page = test_browser.browser, test_browser.context, test_browser.page

pytestmark = pytest.mark.browser
MISSING = "Commands run without a sandbox on this computer"


@pytest.fixture
def app_options(tmp_path: Path) -> dict[str, Any]:
    """This module's apps find a bwrap that refuses, as on a computer without user namespaces."""
    return {"bwrap": failing_bwrap(tmp_path)}


def test_the_page_and_the_card_say_commands_run_without_a_sandbox(running_app, page):
    running_app.ollama.script(
        Turn(Text("Listing.\n"), Text(tool_call_text("run_shell", {"command": "curl https://example.org"}))),
        reply("Listed."),
    )
    open_app(page, running_app.url)
    expect(page.locator("#status")).to_contain_text(MISSING)
    send(page, "fetch it")
    expect(page.locator("#card_text")).to_contain_text(MISSING)
    expect(page.locator("#network")).to_be_hidden()  # nothing to turn on: it has the network anyway
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Listed.")
