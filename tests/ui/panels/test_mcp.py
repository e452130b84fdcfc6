"""The sidebar's MCP section in words: states, tools, reasons, and a bad configuration."""

import mcp_types

from meowgent.mcp.adapter import McpTools
from meowgent.mcp.client import ServerState
from meowgent.mcp.config import ServerConfig
from meowgent.tools.registry import ToolRegistry
from meowgent.ui.i18n import CHINESE
from meowgent.ui.panels.mcp import describe_server, describe_servers


def test_a_server_shows_its_state_command_tools_and_what_was_left_out():
    tool = mcp_types.Tool(name="read.text", input_schema={"type": "object"})
    running = ServerState("files", "running", tools=(tool,))
    config = ServerConfig("files", command="npx", args=("server-files",))
    assert describe_server(running, config, ["bad: its argument schema is invalid"]) == (
        "**files**: 🟢 running, 1 tool(s)  \nnpx server-files  \n`files__read_text`  \n"
        "Not offered: bad: its argument schema is invalid"
    )
    web = ServerConfig("web", url="http://127.0.0.1:9/mcp")
    stopped = ServerState("web", "stopped", "cannot connect to http://127.0.0.1:9/mcp")
    assert describe_server(stopped, web, []).startswith("**web**: 🔴 stopped: cannot connect to http://127.0.0.1:9/mcp")
    assert describe_server(stopped, web, [], CHINESE).startswith("**web**: 🔴 已停止：")
    assert describe_server(ServerState("web", "starting"), web, []).startswith("**web**: ⏳ starting…")


def test_what_a_server_says_is_shown_as_text_not_markup():
    said = ServerState("x", "stopped", "it said: <img src=x onerror=alert(1)> **[click](http://evil)**")
    text = describe_server(said, ServerConfig("x", command="x"), [])
    assert "<img" not in text
    assert "&lt;img" in text
    assert "\\*\\*\\[click\\](http://evil)\\*\\*" in text


def test_configured_servers_no_servers_and_a_bad_file_say_so():
    configured = McpTools(
        [ServerConfig("files", command="npx")], registry=ToolRegistry(), timeout=1
    )  # not started: still "starting"
    assert describe_servers(configured, "/d/mcp.json") == "**files**: ⏳ starting…  \nnpx"
    assert "No MCP servers. List them in `/d/mcp.json`" in describe_servers(
        McpTools([], registry=ToolRegistry(), timeout=1), "/d/mcp.json"
    )
    broken = McpTools([], registry=ToolRegistry(), timeout=1, error="mcp.json, line 1, column 2: Expecting value.")
    assert describe_servers(broken, "/d/mcp.json").startswith("⚠️ The MCP configuration cannot be used: mcp.json")
