"""The sandbox in the real page: the card's network control and the chat's list of what it allows.

The scripted model writes a command that fetches from an HTTP server this test runs on the host's 127.0.0.1;
what the command printed reaches the model, so its requests show whether the command had the network.
"""

import pytest
from playwright.sync_api import Page, expect

from tests.sandboxing import GREETING, fetch, needs_sandbox
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui import test_browser
from tests.ui.test_browser import open_app, send

# The same Chromium fixtures as the main browser tests.
browser, context, page = test_browser.browser, test_browser.context, test_browser.page

pytestmark = pytest.mark.browser


def fetching(port: int) -> Turn:
    return Turn(Text("Let me fetch it.\n"), Text(tool_call_text("run_shell", {"command": fetch(port)})))


def what_the_model_heard(running_app) -> str:
    return running_app.ollama.chat_requests[-1]["messages"][-1]["content"]


def approve_with(page: Page, choice: str, then: str) -> None:
    """Pick `choice` on the card's network control (or leave it, for ""), approve, and wait for `then`."""
    control = page.locator("#network")
    expect(control).to_be_visible()
    if choice:
        control.get_by_text(choice).click()
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text(then)


@needs_sandbox
def test_the_card_turns_the_network_on_for_one_command_or_for_the_chat(running_app, page, host_server):
    running_app.ollama.script(fetching(host_server), reply("First done."))
    open_app(page, running_app.url)
    send(page, "fetch the greeting")
    expect(page.locator("#network")).to_contain_text("No network for this command")
    expect(page.locator("#network input[value='off']")).to_be_checked()
    approve_with(page, "Network on for this command", "First done.")
    assert GREETING in what_the_model_heard(running_app)

    running_app.ollama.script(fetching(host_server), reply("Second done."))
    send(page, "once more, the same way")
    expect(page.locator("#network input[value='off']")).to_be_checked()  # it was for that command only
    approve_with(page, "", "Second done.")
    assert "Connection refused" in what_the_model_heard(running_app)
    assert GREETING not in what_the_model_heard(running_app)

    running_app.ollama.script(fetching(host_server), reply("Third done."), fetching(host_server), reply("Fourth."))
    send(page, "and again")
    approve_with(page, "Network on for this chat", "Third done.")
    assert GREETING in what_the_model_heard(running_app)
    page.get_by_text("Allowed in this chat").click()  # the sidebar is open on a wide screen
    expect(page.locator("#scopes")).to_contain_text("Network for commands")

    send(page, "and once more")
    expect(page.locator("#network input[value='chat']")).to_be_checked()  # the chat's setting, shown
    page.locator("#scopes").get_by_text("Network for commands").click()
    page.locator("#revoke").click()
    expect(page.locator("#scopes")).not_to_contain_text("Network for commands")
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Fourth.")
    assert "Connection refused" in what_the_model_heard(running_app)
