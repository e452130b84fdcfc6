"""As root with only a bwrap older than 0.8, the page says commands are refused, and an approved one doesn't run."""

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.sandboxing import bwrap_without_disable_userns, needs_sandbox
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui import test_browser
from tests.ui.test_browser import open_app, send

# The same Chromium fixtures as the main browser tests.
browser, context, page = test_browser.browser, test_browser.context, test_browser.page

pytestmark = [
    pytest.mark.browser,
    needs_sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="as root only: a person's bwrap without it is still used"),
]
REFUSED = "Commands are refused on this computer"


@pytest.fixture
def app_options(tmp_path: Path) -> dict[str, Any]:
    return {"bwrap": bwrap_without_disable_userns(tmp_path)}


def test_the_page_says_commands_are_refused_and_an_approved_one_does_not_run(running_app, page):
    running_app.ollama.script(
        Turn(Text("Making it.\n"), Text(tool_call_text("run_shell", {"command": "touch made"}))),
        reply("Done."),
    )
    open_app(page, running_app.url)
    expect(page.locator("#status")).to_contain_text(REFUSED)
    expect(page.locator("#status")).to_contain_text("run Meowgent as an ordinary user")
    send(page, "make it")
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Done.")
    assert "not run: commands are refused" in running_app.ollama.chat_requests[-1]["messages"][-1]["content"]
    assert not (running_app.workspace / "made").exists()
