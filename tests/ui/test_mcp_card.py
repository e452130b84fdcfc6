"""The approval card for an MCP call: which server and tool, the arguments, and the server's claims as claims."""

import pytest

from meowgent.events import ToolCall
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool
from meowgent.ui.html.safehtml import shown_text
from meowgent.ui.i18n import CHINESE
from meowgent.ui.state.approval import describe_call, describe_queue


@pytest.fixture
def git_tools() -> ToolRegistry:
    schema = {"type": "object", "properties": {"branch": {"type": "string"}}}
    tools = [
        ExternalTool("git__delete_branch", "", schema, lambda context, **a: "", group="git", hints=("destructive",)),
        ExternalTool("git__log", "", schema, lambda context, **a: "", group="git"),
    ]
    registry = ToolRegistry.builtins()
    registry.register_external(tools, group="git")
    return registry


def test_the_card_names_the_server_and_the_tool_and_shows_the_claims_as_claims(git_tools, tmp_path):
    call = ToolCall("1", "git__delete_branch", {"branch": "old"})
    described = describe_call(call, tmp_path, tools=git_tools)
    assert shown_text(described.summary) == (
        "The tool delete_branch of the MCP server git\n"
        "The server says this tool may delete or overwrite things. That is only its own claim, so it still asks you.\n"
        'branch\nold\nTechnical details\n{\n  "branch": "old"\n}\n'
    )
    assert "<code>delete&#95;branch</code>" in described.summary
    assert described.details == ""  # the fields show whole on the card: nothing for the box under it
    log = describe_call(ToolCall("2", "git__log", {}), tmp_path, tools=git_tools)
    assert shown_text(log.summary).startswith("The tool log of the MCP server git\n(no arguments)\nTechnical details")
    assert "MCP 伺服器 git 的工具" in shown_text(describe_call(call, tmp_path, CHINESE, tools=git_tools).summary)
    assert "delete_branch of the MCP server git" in shown_text(
        describe_queue((call, call), tmp_path, tools=git_tools).summary
    )
