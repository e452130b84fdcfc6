"""The sandbox in the real page: the card's network control, the hosts it names, and the chat's list.

The scripted model writes a command that fetches, through the command's proxy, from an HTTP server this test
runs on the host's 127.0.0.1. This app's run_shell finds hosts with a resolver that names that server
`example.test` (and `other.test`), as DNS names a public host; the app lets the proxy reach private addresses, as
the server's is one. What the command printed reaches the model, so its requests show where the command got.
"""

from dataclasses import replace
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from meowgent.tools.registry import ToolRegistry, builtin_tools
from tests.sandboxing import GREETING, fetch, needs_sandbox
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui import test_browser
from tests.ui.test_browser import open_app, send

# The same Chromium fixtures as the main browser tests.
browser, context, page = test_browser.browser, test_browser.context, test_browser.page

pytestmark = pytest.mark.browser


def example_test(host: str, port: int) -> list[str]:
    """DNS for this app: both names are the host's 127.0.0.1, where the test's server listens."""
    if host not in ("example.test", "other.test"):
        raise OSError("Name or service not known")
    return ["127.0.0.1"]


def resolving_tools() -> ToolRegistry:
    """Meowgent's own tools, with run_shell's proxy finding hosts by `example_test`."""
    shell = next(found for found in builtin_tools() if found.name == "run_shell")

    def run_shell(context, **arguments):
        return shell.function(replace(context, resolve=example_test), **arguments)

    return ToolRegistry([replace(shell, function=run_shell) if t is shell else t for t in builtin_tools()])


@pytest.fixture
def app_options() -> dict[str, Any]:
    return {"tools": resolving_tools(), "allow_private_fetch": True}


def fetching(port: int, host: str = "example.test") -> Turn:
    return Turn(Text("Let me fetch it.\n"), Text(tool_call_text("run_shell", {"command": fetch(port, host)})))


def what_the_model_heard(running_app) -> str:
    return running_app.ollama.chat_requests[-1]["messages"][-1]["content"]


def approve_with(page: Page, choice: str, then: str, *, hosts: str | None = None) -> None:
    """Pick `choice` on the card's network control (or leave it, for ""), name `hosts`, approve, wait for `then`."""
    control = page.locator("#network")
    expect(control).to_be_visible()
    if choice:
        control.get_by_text(choice).click()
    if hosts is not None:
        page.locator("#network_hosts textarea").fill(hosts)
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text(then)


@needs_sandbox
def test_a_command_allowed_only_example_test_reaches_it_and_is_refused_another_host(running_app, page, host_server):
    running_app.ollama.script(fetching(host_server), reply("First done."))
    open_app(page, running_app.url)
    send(page, "fetch the greeting")
    expect(page.locator("#network input[value='off']")).to_be_checked()
    approve_with(page, "Network on for this command", "First done.", hosts="example.test")
    heard = what_the_model_heard(running_app)
    assert GREETING in heard
    assert "network: reached example.test" in heard

    running_app.ollama.script(fetching(host_server, "other.test"), reply("Second done."))
    send(page, "now from the other one")
    approve_with(page, "Network on for this chat", "Second done.", hosts="example.test")
    heard = what_the_model_heard(running_app)
    assert GREETING not in heard
    assert "refused other.test: it is not among the hosts this command may reach (example.test)" in heard
    assert "network: reached no host; refused other.test" in heard

    # The chat's hosts are on the card of its next command and in its list of what it allows.
    running_app.ollama.script(fetching(host_server), reply("Third done."))
    send(page, "and once more")
    expect(page.locator("#network input[value='chat']")).to_be_checked()
    expect(page.locator("#network_hosts textarea")).to_have_value("example.test")
    page.get_by_text("Allowed in this chat").click()  # the sidebar is open on a wide screen
    expect(page.locator("#scopes")).to_contain_text("Network for commands: example.test")
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Third done.")
    assert GREETING in what_the_model_heard(running_app)


@needs_sandbox
def test_the_card_turns_the_network_on_for_one_command_or_for_the_chat(running_app, page, host_server):
    running_app.ollama.script(fetching(host_server), reply("First done."))
    open_app(page, running_app.url)
    send(page, "fetch the greeting")
    expect(page.locator("#network")).to_contain_text("No network for this command")
    expect(page.locator("#network_hosts textarea")).to_have_value("")  # nothing is trusted yet: the person names it
    page.locator("#network").get_by_text("Network on for this command").click()
    page.locator("#approve").click()  # with no host named: the card says so and stays
    expect(page.get_by_text("Name the hosts the command may reach")).to_be_visible()
    approve_with(page, "", "First done.", hosts="*")
    assert GREETING in what_the_model_heard(running_app)

    running_app.ollama.script(fetching(host_server), reply("Second done."))
    send(page, "once more, the same way")
    expect(page.locator("#network input[value='off']")).to_be_checked()  # it was for that command only
    approve_with(page, "", "Second done.")
    assert "Connection refused" in what_the_model_heard(running_app)
    assert GREETING not in what_the_model_heard(running_app)

    running_app.ollama.script(fetching(host_server), reply("Third done."), fetching(host_server), reply("Fourth."))
    send(page, "and again")
    approve_with(page, "Network on for this chat", "Third done.", hosts="*")
    assert GREETING in what_the_model_heard(running_app)
    page.get_by_text("Allowed in this chat").click()
    expect(page.locator("#scopes")).to_contain_text("Network for commands: any host")

    send(page, "and once more")
    expect(page.locator("#network input[value='chat']")).to_be_checked()  # the chat's setting, shown
    page.locator("#scopes").get_by_text("Network for commands").click()
    page.locator("#revoke").click()
    expect(page.locator("#scopes")).not_to_contain_text("Network for commands")
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Fourth.")
    assert "Connection refused" in what_the_model_heard(running_app)
