"""A tool is worded, edited and scoped from its traits: a new tool needs no table of the page edited."""

from typing import Annotated

from meowgent.events import ToolCall
from meowgent.tools.registry import ToolRegistry, builtin_tools
from meowgent.tools.spec import ScopedBy, ToolContext, Writes, tool, tool_of
from meowgent.ui.html.actions import action, lookup
from meowgent.ui.html.scopes import scope_controls
from meowgent.ui.html.tooltext import TEXTS, Look, look_of
from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.state.approval import Commands, describe_queue
from meowgent.ui.state.editform import edited_arguments, field_values, form_for
from tests.ui.conftest import html_text


@tool(risky=True, scope=ScopedBy.PATH, path="note", main="words", writes=Writes.REPLACES)
def save_note(
    ctx: ToolContext, note: Annotated[str, "the note's file"], words: Annotated[str, "what the note says"]
) -> str:
    """Save a note (a tool only this test knows)."""
    return "saved"


@tool(risky=True, scope=ScopedBy.COMMAND, command="script", main="script")
def run_script(ctx: ToolContext, script: Annotated[str, "a shell script"]) -> str:
    """Run a script (a tool only this test knows)."""
    return "ran"


def registry() -> ToolRegistry:
    return ToolRegistry([*builtin_tools(), tool_of(save_note), tool_of(run_script)])


def test_a_new_tool_that_writes_a_file_is_worded_edited_and_scoped_like_a_write(tmp_path):
    tools = registry()
    call = ToolCall("c1", "save_note", {"note": "cats.md", "words": "purr\nmeow\n"})
    card = describe_queue((call,), tmp_path, ENGLISH, tools=tools)
    assert html_text(card.summary).startswith(
        "The assistant wants to do this\nWrite cats.md\nCreate the new file cats.md"
    )
    assert card.details == "purr\nmeow\n"
    assert "寫入 cats.md" in html_text(describe_queue((call,), tmp_path, CHINESE, tools=tools).summary)

    form = form_for(call, tools=tools)
    assert (form.path.argument, form.old, form.main.argument, form.main.label) == (
        "note",
        None,
        "words",
        "field_content",
    )
    assert field_values(call, tools=tools) == {"path": "cats.md", "old": "", "main": "purr\nmeow\n"}
    edited = edited_arguments(call, {"path": "dogs.md", "old": "", "main": "woof"}, tools=tools)
    assert edited == {"note": "dogs.md", "words": "woof"}

    assert scope_controls(call, tmp_path, ENGLISH, tools=tools).button == "✅ Allow writing cats.md for this chat"
    writing = action("save_note", lookup({"note": "cats.md"}), ENGLISH, live_lines=3, tools=tools)
    assert html_text(writing) == "Writing cats.md… 3 lines so far"


def test_a_new_tool_that_runs_a_command_is_a_command_on_the_card_and_in_the_chat(tmp_path):
    tools = registry()
    call = ToolCall("c1", "run_script", {"script": "ls\n\n\n\npwd"})
    card = describe_queue((call,), tmp_path, ENGLISH, commands=Commands.UNSANDBOXED, tools=tools)
    # A command's runs of blank lines fold as a command's do, and the card says where it runs, without a sandbox.
    assert html_text(card.summary).startswith(
        f"The assistant wants to do this\nRun ls ⏎ ⟨↵×4⟩ pwd\nRun this command in the folder {tmp_path}:\n"
        "⚠️ Commands run without a sandbox on this computer."
    )
    assert card.details == "ls\n⟨↵×4⟩ pwd"
    assert form_for(call, tools=tools).main.argument == "script"
    assert scope_controls(call, tmp_path, ENGLISH, tools=tools).button == "✅ Allow this exact command for this chat"
    assert look_of("run_script", tools.traits("run_script")) is Look.RUN


def test_a_tool_the_page_knows_nothing_of_gets_the_generic_look(tmp_path):
    tools = registry()
    call = ToolCall("c1", "notes__add", {"title": "cats"})
    assert html_text(action("notes__add", lookup(call.arguments), ENGLISH, tools=tools)) == "Use the tool notes__add"
    assert form_for(call, tools=tools).main.label == "field_json"
    assert look_of("notes__add", tools.traits("notes__add")) is Look.OTHER
    assert TEXTS[Look.OTHER].fields == ()
