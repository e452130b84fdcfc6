"""spec: a tool's traits are declared with it, checked when it is defined, and the same for every external tool."""

from __future__ import annotations

import re
from typing import Annotated

import pytest

from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import EXTERNAL_TRAITS, ExternalTool, ScopedBy, ToolContext, ToolTraits, Writes, tool


def test_each_builtin_tool_says_what_it_is() -> None:
    traits = {name: found.traits for name, found in ToolRegistry.builtins().all().items()}
    assert traits == {
        "read_file": ToolTraits(risky=False, path="path"),
        "write_file": ToolTraits(scope=ScopedBy.PATH, path="path", main="content", writes=Writes.REPLACES),
        "edit_file": ToolTraits(scope=ScopedBy.PATH, path="path", old="old", main="new", writes=Writes.EDITS),
        "list_files": ToolTraits(risky=False, path="path", reads_folder=True),
        "search_files": ToolTraits(risky=False, path="path", reads_folder=True),
        "run_shell": ToolTraits(scope=ScopedBy.COMMAND, command="command", main="command"),
        "web_fetch": ToolTraits(scope=ScopedBy.HOST, url="url", main="url", network=True),
    }


def test_a_trait_that_names_an_argument_the_tool_does_not_take_fails_when_it_is_defined() -> None:
    with pytest.raises(ValueError, match=re.escape("name arguments it does not take: {'path': 'file'}")):

        @tool(risky=True, path="file")
        def touch(ctx: ToolContext, name: Annotated[str, "the file"]) -> str:
            return ""


@pytest.mark.parametrize(
    "traits",
    [
        {"scope": ScopedBy.COMMAND},
        {"scope": ScopedBy.PATH, "command": "x"},
        {"scope": ScopedBy.HOST, "path": "x"},
        {"writes": Writes.REPLACES},
        {"reads_folder": True},
    ],
)
def test_traits_that_contradict_themselves_are_refused(traits: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="needs the argument"):
        ToolTraits(**traits)  # type: ignore[arg-type]


def test_an_external_tool_and_a_name_no_registry_knows_ask_first_and_are_scoped_as_a_whole() -> None:
    found = ExternalTool("srv__do", "", {"type": "object"}, lambda context, **a: "", group="srv")
    assert found.traits is EXTERNAL_TRAITS
    assert found.risky
    assert EXTERNAL_TRAITS.scope is ScopedBy.TOOL
    assert EXTERNAL_TRAITS.arguments() == {}
    tools = ToolRegistry.builtins()
    tools.register_external([found], group="srv")
    assert tools.traits("srv__do") is EXTERNAL_TRAITS
    assert tools.traits("other__tool") is EXTERNAL_TRAITS
    assert tools.own() == ToolRegistry.builtins().own()
