"""MCP tools in the real page: the SDK fixture server over stdio ("fx") and streamable HTTP ("web").

Every call goes through the same card as ours; the scripted model writes the MCP calls, and the
requests it receives show what reached it.
"""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from meowgent.config import Settings
from tests.mcp_fixture_server import http_server, stdio_entry
from tests.scripted_ollama import ScriptedOllama, reply, tool_call_text
from tests.ui import test_browser
from tests.ui.conftest import OWNER, RunningApp, owners_client, serve_for_test
from tests.ui.test_browser import open_app, send

# The same Chromium fixtures as the main browser tests.
browser, context, page = test_browser.browser, test_browser.context, test_browser.page

pytestmark = pytest.mark.browser
START_MS = 60_000  # starting two Python servers on a busy machine


@contextmanager
def app_with_servers(folder: Path) -> Iterator[RunningApp]:
    """The app with the fixture server over stdio and over HTTP, and a rule that denies one tool."""
    workspace, data = folder / "workspace", folder / "data"
    workspace.mkdir()
    data.mkdir()
    with ScriptedOllama() as ollama, http_server() as url:
        servers = {"fx": stdio_entry(), "web": {"url": url}}
        (data / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        rules = [{"tool": "web__touch", "action": "deny"}, {"tool": "fx__crash", "action": "allow"}]
        (data / "rules.json").write_text(json.dumps(rules))
        settings = Settings(
            workspace=workspace,
            ollama_host=ollama.url,
            data_dir=data,
            read_timeout=5,
            mcp_timeout=30,
            token=OWNER,
        )
        demo, app_url, settings = serve_for_test(settings)
        try:
            yield RunningApp(app_url, ollama, workspace, settings, demo)
        finally:
            demo.close()  # and its MCP servers with it


@pytest.fixture(scope="module")
def mcp_app(tmp_path_factory) -> Iterator[RunningApp]:
    """One app and its two servers for the tests that leave the servers as they found them: each has its own page,
    so its own chat (and per-chat switches), and scripts the turns it uses up. Starting the app and two Python
    servers cost more than most of these tests."""
    with app_with_servers(tmp_path_factory.mktemp("mcp_app")) as app:
        yield app


@pytest.fixture
def own_mcp_app(tmp_path: Path) -> Iterator[RunningApp]:
    """An app with servers of the test's own, for a test that crashes one."""
    with app_with_servers(tmp_path) as app:
        yield app


def open_with_servers(page: Page, url: str) -> None:
    """Open the page and wait until the sidebar shows both servers running."""
    open_app(page, url)
    page.locator("#mcp").first.get_by_text("MCP servers").click()
    servers = page.locator("#mcp_servers")
    expect(servers).to_contain_text("fx: 🟢 running", timeout=START_MS)
    expect(servers).to_contain_text("web: 🟢 running", timeout=START_MS)
    expect(servers).to_contain_text("fx__touch")


def test_approve_runs_the_call_on_the_stdio_server_and_the_result_reaches_the_model(mcp_app, page, tmp_path):
    marker = tmp_path / "approved.txt"
    mcp_app.ollama.script(reply(tool_call_text("fx__touch", {"path": str(marker)})), reply("The marker is written."))
    open_with_servers(page, mcp_app.url)
    send(page, "write the marker")
    card = page.locator("#approval").first
    expect(card).to_contain_text("Write a marker file (absolute path)")  # the server's own words as the title
    expect(card).to_contain_text("The tool touch of the MCP server fx")
    expect(card).to_contain_text("The server says this tool may delete or overwrite things")
    expect(card.locator("pre.mg-box").first).to_have_text(str(marker))  # under its schema's label, "Path"
    expect(page.locator("#card_details")).to_be_hidden()  # the card shows every field whole
    assert not marker.exists()
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("The marker is written.")
    assert marker.read_text() == "ran"
    assert mcp_app.ollama.chat_requests[-1]["messages"][-1]["content"] == f"wrote {marker}"


def test_a_call_reads_as_the_servers_words_titled_labelled_in_schema_order_and_escaped(mcp_app, page):
    arguments = {"body": "milk\n<b>and</b> [eggs](https://evil.example/x)", "title": "Shopping"}
    mcp_app.ollama.script(reply(tool_call_text("fx__note", arguments)), reply("Noted."))
    open_with_servers(page, mcp_app.url)
    send(page, "note the shopping")
    expect(page.locator("#approve")).to_be_visible()
    card = page.locator("#card_text")
    # One title, from the description's first sentence: its Markdown link and marks read as words, its HTML as text.
    title = "Add a note to the notebook: see the guide <img src=x onerror=alert(1)>"
    expect(card.locator("strong").first).to_have_text(title)
    expect(card).to_contain_text("The tool note of the MCP server fx")
    # The fields in the schema's order, under its labels (its own title, else the name pydantic made a title of).
    expect(card.locator("p.mg-label")).to_have_text(["Note title", "Body"])
    expect(card.locator("pre.mg-box")).to_have_text(["Shopping", arguments["body"], re.compile("milk")])
    technical = card.locator("details")
    expect(technical.locator("summary")).to_have_text("Technical details")
    expect(technical.locator("pre")).to_be_hidden()  # the raw JSON stays one click away
    technical.locator("summary").click()
    expect(technical.locator("pre")).to_contain_text('"title": "Shopping"')
    expect(page.locator("#card_details")).to_be_hidden()
    assert card.locator("img, a, b").count() == 0  # nothing the server or the model wrote became markup
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Noted.")
    # The finished call's panel has the same title and fields.
    expect(page.locator("#chat")).to_contain_text(title)
    assert page.locator("#chat img[src='x'], #chat a[href*='evil']").count() == 0
    assert mcp_app.ollama.chat_requests[-1]["messages"][-1]["content"] == "noted Shopping"


def test_reject_never_reaches_the_server(mcp_app, page, tmp_path):
    marker = tmp_path / "rejected.txt"
    mcp_app.ollama.script(reply(tool_call_text("fx__touch", {"path": str(marker)})), reply("Left it alone."))
    open_with_servers(page, mcp_app.url)
    send(page, "write the marker")
    expect(page.locator("#approve")).to_be_visible()
    page.locator("#reject").click()
    expect(page.locator("#chat")).to_contain_text("Left it alone.")
    assert not marker.exists()
    assert "rejected this call to fx__touch" in mcp_app.ollama.chat_requests[-1]["messages"][-1]["content"]


def test_the_http_server_works_end_to_end_and_a_deny_rule_for_one_tool_holds(mcp_app, page, tmp_path):
    marker = tmp_path / "denied.txt"
    mcp_app.ollama.script(
        reply(tool_call_text("web__touch", {"path": str(marker)})),
        reply(tool_call_text("web__echo", {"text": "over HTTP"})),
        reply("Echoed."),
    )
    open_with_servers(page, mcp_app.url)
    send(page, "touch, then echo")
    card = page.locator("#approval").first
    expect(card).to_contain_text("The tool echo of the MCP server web")  # the denied call never asked
    assert not marker.exists()
    page.locator("#approve").click()
    expect(page.locator("#chat")).to_contain_text("Echoed.")
    denied, echoed = (m["content"] for m in mcp_app.ollama.chat_requests[-1]["messages"] if m["role"] == "tool")
    assert "rules do not allow this call to web__touch" in denied
    assert echoed == "over HTTP"
    assert not marker.exists()


def test_a_crashed_server_gives_a_plain_message_while_the_app_keeps_serving(own_mcp_app, page):
    own_mcp_app.ollama.script(
        reply(tool_call_text("fx__crash", {})),
        reply("The fx server went away."),
        reply(tool_call_text("web__add", {"a": 2, "b": 2})),
        reply("Still here: 4."),
    )
    open_with_servers(page, own_mcp_app.url)
    send(page, "crash it")
    chat = page.locator("#chat")
    expect(chat).to_contain_text("The fx server went away.")
    assert "fx stopped during the call" in own_mcp_app.ollama.chat_requests[-1]["messages"][-1]["content"]
    expect(page.locator("#mcp_servers")).to_contain_text("fx: 🔴 stopped: the server process ended")
    send(page, "and the other one?")
    page.locator("#approve").click()
    expect(chat).to_contain_text("Still here: 4.")
    assert "fx__" not in own_mcp_app.ollama.chat_requests[-1]["messages"][0]["content"]
    assert "Traceback" not in page.content()
    # A client that never opened the page may not restart the server's processes; the page's own button may.
    stranger = owners_client(own_mcp_app.url).predict("", api_name="/on_restart")
    assert "fx" not in json.dumps(stranger)  # refused, and told nothing about the servers
    another = owners_client(own_mcp_app.url)
    another_key = another.predict("", "", api_name="/on_load")[0]
    assert "**fx**: 🔴 stopped" in another.predict(another_key, api_name="/listing")
    page.locator("#mcp_restart").click()
    expect(page.locator("#mcp_servers")).to_contain_text("fx: 🟢 running", timeout=START_MS)


def test_per_chat_switches_turn_a_server_off_or_let_it_run_without_asking(mcp_app, page):
    mcp_app.ollama.script(reply(tool_call_text("web__echo", {"text": "unasked"})), reply("No fx here."))
    open_with_servers(page, mcp_app.url)
    page.locator("#mcp_off").get_by_label("fx").check()
    page.locator("#mcp_allow").get_by_label("web").check()
    send(page, "what tools?")
    expect(page.locator("#chat")).to_contain_text("No fx here.")
    expect(page.locator("#approve")).to_be_hidden()
    system = mcp_app.ollama.chat_requests[-1]["messages"][0]["content"]
    assert "fx__" not in system
    assert "web__echo" in system
    assert mcp_app.ollama.chat_requests[-1]["messages"][-1]["content"] == "unasked"
