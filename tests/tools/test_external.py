"""External tools (MCP's) in the registry: schema-checked arguments, groups, offered or not."""

import threading

import pytest

from meowgent.config import Settings
from meowgent.llm.client import ollama_tool
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool, ToolContext, ToolError, check_schema

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "tag": {"type": "string", "enum": ["x", "y"]}},
    "required": ["a"],
    "additionalProperties": False,
}


def add_one(context: ToolContext, **arguments) -> str:
    return str(arguments["a"] + 1)


def external(name: str = "calc__add_one", *, problem=lambda: None) -> ExternalTool:
    return ExternalTool(name, "Add one.", SCHEMA, add_one, group="calc", problem=problem)


@pytest.fixture
def calc() -> ToolRegistry:
    tools = ToolRegistry.builtins()
    tools.register_external([external()], group="calc")
    return tools


def test_arguments_are_checked_against_the_schema_before_anything_runs():
    tool = external()
    assert tool.validate({"a": 1, "tag": "x"}) == {"a": 1, "tag": "x"}
    with pytest.raises(ToolError) as error:
        tool.validate({"a": "one", "tag": "z", "more": 1})
    message = str(error.value)
    assert "invalid arguments for calc__add_one" in message
    assert "'a': 'one' is not of type 'integer'" in message
    assert "'tag': 'z' is not one of ['x', 'y']" in message
    assert "'more' was unexpected" in message
    assert "Arguments are: a, tag." in message
    with pytest.raises(ToolError, match="must be a JSON object"):
        tool.validate(["a"])


def test_a_registered_tool_runs_like_ours_and_its_schema_goes_to_ollama_whole(calc):
    assert ollama_tool(calc.get("calc__add_one").spec()) == {
        "type": "function",
        "function": {"name": "calc__add_one", "description": "Add one.", "parameters": SCHEMA},
    }
    context = ToolContext(Settings(), threading.Event())
    assert calc.execute("calc__add_one", {"a": 41}, context).text == "42"
    refused = calc.execute("calc__add_one", {"a": "x"}, context)
    assert not refused.ok
    assert refused.text.startswith("Error: invalid arguments")


def test_a_group_replaces_its_tools_and_never_one_of_ours(calc):
    calc.register_external([external("calc__other")], group="calc")
    assert "calc__other" in calc.all()
    assert "calc__add_one" not in calc.all()
    with pytest.raises(ValueError, match="read_file"):
        calc.register_external([external("read_file")], group="calc")
    calc.unregister_group("calc")
    assert "calc__other" not in calc.all()


def test_two_apps_never_share_their_external_tools(calc):
    assert "calc__add_one" in calc.all()
    assert "calc__add_one" not in ToolRegistry.builtins().all()


def test_tools_turned_off_or_whose_server_stopped_are_not_offered(calc):
    assert "calc__add_one" in calc.offered()
    assert "calc__add_one" not in calc.offered(off=["calc"])
    assert "read_file" in calc.offered(off=["calc"])
    with pytest.raises(ToolError, match="turned off in this chat"):
        calc.offered_tool("calc__add_one", off=["calc"])
    calc.register_external([external(problem=lambda: "the MCP server calc is stopped (crashed)")], group="calc")
    assert "calc__add_one" not in calc.offered()
    with pytest.raises(ToolError, match="stopped"):
        calc.offered_tool("calc__add_one")


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {}}, None),
        ({"properties": {"a": {"type": "string"}}}, None),
        ({"type": "string"}, "not described as a JSON object"),
        ({"type": "object", "properties": {"a": {"type": "nonsense"}}}, "schema is invalid"),
        ("{}", "not described as a JSON object"),
    ],
)
def test_a_schema_that_cannot_check_arguments_is_named(schema, problem):
    found = check_schema(schema)
    assert found == problem if problem is None else problem in found
