"""The edit fields of a waiting call: which fields a tool gets, what they show, and the arguments they make."""

import json

import pytest

from meowgent.events import ToolCall
from meowgent.tools.registry import ToolRegistry
from meowgent.ui.state.editform import SLOTS, FormError, edited_arguments, field_values, form_for


def call(name: str, **arguments) -> ToolCall:
    return ToolCall("call-1", name, arguments)


def own_forms() -> list[str]:
    """Meowgent's tools edited in fields of their own (from their traits), not as JSON."""
    return [name for name in ToolRegistry.builtins().all() if form_for(call(name)).main.label != "field_json"]


def arguments_by_slot(name: str) -> dict[str, str]:
    form = form_for(call(name))
    return {slot: form.slot(slot).argument for slot in SLOTS if form.slot(slot)}


def test_each_known_tool_edits_its_own_arguments_in_plain_fields():
    assert {name: arguments_by_slot(name) for name in own_forms()} == {
        "write_file": {"path": "path", "main": "content"},
        "edit_file": {"path": "path", "old": "old", "main": "new"},
        "run_shell": {"main": "command"},
        "web_fetch": {"main": "url"},
    }


@pytest.mark.parametrize("name", own_forms())
def test_the_fields_name_real_arguments_of_the_tool(name):
    parameters = ToolRegistry.builtins().get(name).spec().parameters["properties"]
    assert set(arguments_by_slot(name).values()) <= set(parameters)


def test_the_fields_show_the_proposed_arguments():
    proposed = call("edit_file", path="a.md", old="cat=1", new="cat=2")
    assert field_values(proposed) == {"path": "a.md", "old": "cat=1", "main": "cat=2"}
    assert field_values(call("run_shell", command="ls")) == {"path": "", "old": "", "main": "ls"}


def test_unchanged_fields_are_no_edit():
    proposed = call("write_file", path="a.md", content="one\r\ntwo\r\n")
    # A browser sends line ends back as \n; that alone must not rewrite the file's \r\n.
    assert edited_arguments(proposed, {"path": "a.md", "old": "", "main": "one\ntwo\n"}) is None


def test_changed_fields_make_new_arguments_and_keep_the_others():
    proposed = call("run_shell", command="sleep 100", timeout=5)
    edited = edited_arguments(proposed, {"path": "", "old": "", "main": "sleep 1"})
    assert edited == {"command": "sleep 1", "timeout": 5}
    proposed = call("write_file", path="a.md", content="old")
    assert edited_arguments(proposed, {"path": "b.md", "old": "", "main": "old"}) == {"path": "b.md", "content": "old"}


def test_a_tool_without_a_form_is_edited_as_json():
    proposed = call("notes__add", title="cats", tags=["a", "b"])
    assert form_for(proposed).main.label == "field_json"
    values = field_values(proposed)
    assert json.loads(values["main"]) == proposed.arguments
    assert edited_arguments(proposed, values) is None
    changed = {**values, "main": '{"title": "dogs"}'}
    assert edited_arguments(proposed, changed) == {"title": "dogs"}


@pytest.mark.parametrize("text", ['{"title": ', "[1, 2]"])
def test_json_that_is_not_an_object_says_why(text):
    proposed = call("notes__add", title="cats")
    with pytest.raises(FormError) as error:
        edited_arguments(proposed, {"path": "", "old": "", "main": text})
    assert error.value.detail
