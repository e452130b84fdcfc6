"""MCP results as text, MCP tools as registry tools, and the whole gate with a real agent and the fixture server."""

import base64
import dataclasses
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import mcp_types
import pytest

from meowgent.agent.loop import Agent
from meowgent.chats.audit import CallLedger
from meowgent.config import Settings
from meowgent.conversation import Conversation, Decision
from meowgent.events import ApprovalNeeded, ToolCall, ToolCallInvalid, ToolResult
from meowgent.llm.client import OllamaClient
from meowgent.mcp.adapter import McpTools, external_tools, hints, result_text, tool_name
from meowgent.mcp.client import ServerState
from meowgent.mcp.sandboxed import sandboxed
from meowgent.policy.rules import Policy, Rule
from meowgent.tools.registry import ToolRegistry
from meowgent.ui.panels.mcp import server_scope
from tests.mcp.conftest import SETTLE_SECONDS, example_test, fixture_config
from tests.mcp_fixture_server import stdio_entry
from tests.sandboxing import GREETING, needs_sandbox
from tests.scripted_ollama import reply, tool_call_text


def text(value: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=value)


def test_text_json_and_images_become_plain_text():
    image = mcp_types.ImageContent(type="image", data=base64.b64encode(b"x" * 12_345).decode(), mime_type="image/png")
    result = mcp_types.CallToolResult(content=[text("two things:"), image], structured_content={"rows": [1, 2]})
    assert result_text(result) == 'two things:\n\n[image: image/png, 12 KB]\n\n{\n  "rows": [\n    1,\n    2\n  ]\n}'


@pytest.mark.parametrize(
    ("content", "structured", "expected"),
    [
        ([text("3")], {"result": 3}, "3"),  # the SDK sends both for a plain return value
        ([text('{"a": 1}')], {"a": 1}, '{"a": 1}'),
        ([], {"a": 1}, '{\n  "a": 1\n}'),
        ([], None, "(the tool returned nothing)"),
        (
            [mcp_types.ResourceLink(type="resource_link", name="report", uri="file:///r.txt")],
            None,
            "[link to report: file:///r.txt]",
        ),
        (
            [
                mcp_types.EmbeddedResource(
                    type="resource", resource=mcp_types.TextResourceContents(uri="file:///a.txt", text="hello")
                )
            ],
            None,
            "[file:///a.txt]\nhello",
        ),
    ],
)
def test_a_result_says_each_thing_once(content, structured, expected):
    assert result_text(mcp_types.CallToolResult(content=content, structured_content=structured)) == expected


def test_only_what_a_server_states_outright_becomes_a_hint():
    assert hints(None) == ()
    assert hints(mcp_types.ToolAnnotations(read_only_hint=True, destructive_hint=False)) == ("read_only",)
    assert hints(mcp_types.ToolAnnotations(destructive_hint=True, open_world_hint=True)) == (
        "destructive",
        "open_world",
    )


def test_tool_names_are_plain_and_a_tool_that_cannot_be_checked_is_left_out():
    assert tool_name("git", "log.show/all") == "git__log_show_all"
    good = mcp_types.Tool(name="o_k", input_schema={"type": "object", "properties": {}})
    bad = mcp_types.Tool(name="bad", input_schema={"type": "object", "properties": {"a": {"type": 7}}})
    twin = mcp_types.Tool(name="o.k", input_schema={"type": "object"})
    state = ServerState("srv", "running", tools=(good, bad, twin))
    tools, left_out = external_tools(state, lambda *a, **k: None, lambda: None)
    assert [tool.name for tool in tools] == ["srv__o_k"]
    assert all(tool.risky and tool.group == "srv" for tool in tools)
    assert left_out[0].startswith("bad: its argument schema is invalid")
    assert left_out[1] == "o.k: another tool is already called srv__o_k"


def test_a_servers_title_for_a_tool_is_kept_for_the_person_from_the_tool_or_its_annotations():
    schema = {"type": "object"}
    titled = mcp_types.Tool(name="a", title="Add a note", description="Adds.", input_schema=schema)
    annotated = mcp_types.Tool(name="b", annotations=mcp_types.ToolAnnotations(title="Look up"), input_schema=schema)
    plain = mcp_types.Tool(name="c", description="Counts.", input_schema=schema)
    state = ServerState("srv", "running", tools=(titled, annotated, plain))
    tools, _ = external_tools(state, lambda *a, **k: None, lambda: None)
    assert [(tool.title, tool.description) for tool in tools] == [
        ("Add a note", "Adds."),
        ("Look up", ""),
        ("", "Counts."),
    ]


# ---- the gate, end to end: scripted model, real agent, the SDK fixture server over stdio ----


def settings_in(folder: Path) -> Settings:
    """Settings with the fixture server as "fx" in their mcp.json."""
    data = folder / "data"
    data.mkdir()
    (data / "mcp.json").write_text(json.dumps({"mcpServers": {"fx": stdio_entry()}}))
    workspace = folder / "workspace"
    workspace.mkdir()
    return Settings(workspace=workspace, data_dir=data, mcp_timeout=30, max_tool_output=2000)


@pytest.fixture
def settings(tmp_path):
    return settings_in(tmp_path)


def started_tools(settings: Settings) -> Iterator[McpTools]:
    tools = McpTools.from_settings(settings, ToolRegistry.builtins()).start()
    assert tools.wait_settled(SETTLE_SECONDS)
    yield tools
    tools.close()
    assert not any(name.startswith("fx__") for name in tools.registry.all())


@pytest.fixture(scope="module")
def mcp(tmp_path_factory) -> Iterator[McpTools]:
    """One fixture server for the tests that leave it as they found it: each has its own agent, chat, model server
    and files, and the server keeps nothing between calls (starting Python and the SDK cost more than the test)."""
    yield from started_tools(settings_in(tmp_path_factory.mktemp("mcp")))


@pytest.fixture
def own_mcp(settings) -> Iterator[McpTools]:
    """A fixture server of the test's own, for a test that stops or crashes it."""
    yield from started_tools(settings)


def make_agent(server, settings, mcp, rules=()):
    policy = Policy(list(rules), settings.workspace, tools=mcp.registry)
    return Agent(OllamaClient(server.url, read_timeout=10), settings, policy=policy, tools=mcp.registry)


def run(agent, conversation, text, cancel=None):
    return list(agent.run(conversation, text, cancel or threading.Event()))


def results(events):
    return [event for event in events if isinstance(event, ToolResult)]


def test_mcp_tools_are_offered_with_their_schema_and_ask_even_when_read_only(ollama_server, settings, mcp):
    ollama_server.script(reply(tool_call_text("fx__echo", {"text": "hi"})))
    agent, conversation = make_agent(ollama_server, settings, mcp), Conversation("c", "qwen3")
    events = run(agent, conversation, "echo hi")
    system = ollama_server.chat_requests[0]["messages"][0]["content"]
    line = next(line for line in system.splitlines() if '"fx__add"' in line)
    assert '"description": "Add two whole numbers."' in line
    assert '"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}' in line
    assert line.endswith("(asks the person first)")
    assert isinstance(events[-2], ApprovalNeeded)  # its readOnlyHint is a hint, not a pass
    assert events[-1].reason == "paused"


def test_approve_runs_it_on_the_server_and_the_result_reaches_the_model(ollama_server, settings, mcp, tmp_path):
    marker = tmp_path / "marker.txt"
    ollama_server.script(reply(tool_call_text("fx__touch", {"path": str(marker)})), reply("Done."))
    agent, conversation = make_agent(ollama_server, settings, mcp), Conversation("c", "qwen3")
    (waiting,) = run(agent, conversation, "touch it")[-2].calls
    assert not marker.exists()
    events = list(agent.resume(conversation, {waiting.id: Decision(True)}, threading.Event()))
    assert marker.read_text() == "ran"
    assert results(events)[0].output == f"wrote {marker}"
    assert ollama_server.chat_requests[-1]["messages"][-1]["content"] == f"wrote {marker}"


def test_reject_never_reaches_the_server(ollama_server, settings, mcp, tmp_path):
    marker = tmp_path / "marker.txt"
    ollama_server.script(reply(tool_call_text("fx__touch", {"path": str(marker)})), reply("OK, I won't."))
    agent, conversation = make_agent(ollama_server, settings, mcp), Conversation("c", "qwen3")
    (waiting,) = run(agent, conversation, "touch it")[-2].calls
    events = list(agent.resume(conversation, {waiting.id: Decision(False, "no")}, threading.Event()))
    assert results(events)[0].status == "rejected"
    assert not marker.exists()


@pytest.mark.parametrize("pattern", ["fx__touch", "fx__*"])
def test_a_deny_rule_for_a_tool_or_a_server_holds(ollama_server, settings, mcp, tmp_path, pattern):
    marker = tmp_path / "marker.txt"
    ollama_server.script(reply(tool_call_text("fx__touch", {"path": str(marker)})), reply("Understood."))
    agent = make_agent(ollama_server, settings, mcp, [Rule(pattern, "deny")])
    events = run(agent, Conversation("c", "qwen3"), "touch it")
    assert not any(isinstance(event, ApprovalNeeded) for event in events)
    (result,) = results(events)
    assert result.status == "rejected"
    assert "rules do not allow" in result.output
    assert not marker.exists()


def test_an_allow_rule_lets_one_tool_run_without_asking(ollama_server, settings, mcp):
    ollama_server.script(reply(tool_call_text("fx__add", {"a": 40, "b": 2})), reply("42."))
    agent = make_agent(ollama_server, settings, mcp, [Rule("fx__add", "allow")])
    (result,) = results(run(agent, Conversation("c", "qwen3"), "add"))
    assert result.output == "42"


def test_arguments_that_do_not_fit_the_schema_never_reach_the_server(ollama_server, settings, mcp):
    ollama_server.script(reply(tool_call_text("fx__add", {"a": "forty", "b": 2})), reply("Oops."))
    events = run(make_agent(ollama_server, settings, mcp), Conversation("c", "qwen3"), "add")
    (invalid,) = [event for event in events if isinstance(event, ToolCallInvalid)]
    assert "'a': 'forty' is not of type 'integer'" in invalid.error


def test_a_server_turned_off_in_a_chat_is_not_offered_there(ollama_server, settings, mcp):
    ollama_server.script(reply(tool_call_text("fx__add", {"a": 1, "b": 2})), reply("Fine."))
    conversation = Conversation("c", "qwen3", servers_off=["fx"])
    events = run(make_agent(ollama_server, settings, mcp), conversation, "add")
    assert "fx__" not in ollama_server.chat_requests[0]["messages"][0]["content"]
    (invalid,) = [event for event in events if isinstance(event, ToolCallInvalid)]
    assert "turned off in this chat" in invalid.error


def test_an_error_result_and_a_long_one_reach_the_model_as_such(ollama_server, settings, mcp):
    calls = tool_call_text("fx__fail", {"why": "row 7 is locked"}) + tool_call_text("fx__echo", {"text": "z" * 5000})
    ollama_server.script(reply(calls), reply("I see."))
    agent = make_agent(ollama_server, settings, mcp, [Rule("fx__*", "allow")])
    failed, echoed = results(run(agent, Conversation("c", "qwen3"), "go"))
    assert failed.status == "error"
    assert failed.output.startswith("Error: fx__fail reported an error:")
    assert failed.output.endswith("row 7 is locked")
    assert echoed.status == "done"
    assert len(echoed.output) < 2100
    assert "characters cut" in echoed.output


def test_stop_ends_a_running_call(ollama_server, settings, own_mcp):
    ollama_server.script(reply(tool_call_text("fx__slow", {"seconds": 120})))
    agent = make_agent(ollama_server, settings, own_mcp, [Rule("fx__slow", "allow")])
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    events = run(agent, Conversation("c", "qwen3"), "sleep", cancel)
    (result,) = results(events)
    assert "pressed Stop" in result.output
    assert events[-1].reason == "stopped"
    assert own_mcp.states()[0].status == "running"


def test_a_crashed_server_gives_a_clear_error_and_its_tools_are_no_longer_offered(ollama_server, settings, own_mcp):
    ollama_server.script(reply(tool_call_text("fx__crash", {})), reply("It crashed."), reply("Sure."))
    agent = make_agent(ollama_server, settings, own_mcp, [Rule("fx__crash", "allow")])
    (result,) = results(run(agent, Conversation("c", "qwen3"), "crash"))
    assert result.status == "error"
    assert "fx stopped during the call" in result.output
    own_mcp.wait_settled(SETTLE_SECONDS)
    assert own_mcp.states()[0].status == "stopped"
    run(agent, Conversation("d", "qwen3"), "still there?")
    assert "fx__" not in ollama_server.chat_requests[-1]["messages"][0]["content"]


def test_a_bad_configuration_gives_no_servers_and_a_sentence(tmp_path):
    (tmp_path / "mcp.json").write_text('{"mcpServers": {"x": {}}}')
    tools = McpTools.from_settings(Settings(data_dir=tmp_path), ToolRegistry.builtins())
    assert tools.states() == []
    assert 'give either "command"' in tools.error
    missing = McpTools.from_settings(
        Settings(data_dir=tmp_path, mcp_config=tmp_path / "nope.json"), ToolRegistry.builtins()
    )
    assert "does not exist" in missing.error


def test_a_chat_scope_for_a_server_allows_its_tools_there_and_a_deny_rule_still_wins(ollama_server, settings, mcp):
    scope, traits = server_scope("fx"), mcp.registry.traits
    assert scope.matches(ToolCall("1", "fx__add", {}), traits("fx__add"))
    assert not scope.matches(ToolCall("2", "fxy__add", {}), traits("fxy__add"))
    assert not scope.matches(ToolCall("3", "run_shell", {"command": "ls"}), traits("run_shell"))
    assert str(scope) == "every tool of the MCP server fx"
    ollama_server.script(
        reply(tool_call_text("fx__add", {"a": 1, "b": 1}) + tool_call_text("fx__echo", {"text": "no"})), reply("2.")
    )
    agent = make_agent(ollama_server, settings, mcp, [Rule("fx__echo", "deny")])
    events = run(agent, Conversation("c", "qwen3", scopes=[scope]), "add")
    assert not any(isinstance(event, ApprovalNeeded) for event in events)
    added, echoed = results(events)
    assert added.output == "2"
    assert echoed.status == "rejected"


@needs_sandbox
def test_where_a_sandboxed_server_went_during_a_call_is_in_its_result_and_its_audit_row(
    ollama_server, settings, host_server
):
    settings = dataclasses.replace(settings, allow_private_fetch=True)
    server = dataclasses.replace(fixture_config(), sandbox=True, hosts=("example.test",))
    prepare = sandboxed(settings, resolve=example_test)
    mcp = McpTools([server], registry=ToolRegistry.builtins(), timeout=30, prepare=prepare).start()
    try:
        assert mcp.wait_settled(SETTLE_SECONDS)
        hosts = ("example.test", "other.test")
        calls = "".join(tool_call_text("fx__fetch", {"url": f"http://{host}:{host_server}/"}) for host in hosts)
        ollama_server.script(reply(calls), reply("Fetched."))
        agent = make_agent(ollama_server, settings, mcp, [Rule("fx__fetch", "allow")])
        events = run(agent, Conversation("c", "qwen3"), "fetch both")
    finally:
        mcp.close()
    reached, refused = results(events)
    assert reached.output == f"{GREETING}\n\nnetwork: reached example.test"
    assert refused.status == "error"
    assert refused.output.endswith("network: reached no host; refused other.test")
    ledger, every_tool = CallLedger(), lambda name: True
    audit = [row for event in events for row in ledger.rows(event, risky=every_tool, chat_network=(), now=1.0)[1]]
    assert [(row.tool, row.reached, row.refused) for row in audit] == [
        ("fx__fetch", ["example.test"], []),
        ("fx__fetch", [], ["other.test"]),
    ]
