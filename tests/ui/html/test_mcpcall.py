"""An MCP call reads like ours: a title from the server's own words, arguments as fields its schema labels and orders.

What a server describes and what a model writes are hostile: any of it renders escaped, as one line where it is a
title, and in HTML that grows linearly with it.
"""

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from meowgent.events import ToolCall
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool
from meowgent.ui.html.actions import action, lookup
from meowgent.ui.html.callhtml import arguments_html
from meowgent.ui.html.mcpcall import TITLE_CHARS, fields, one_line
from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.state.approval import CARD_BOX_CHARS, describe_queue
from tests.ui.conftest import html_text

NOTE_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "title": "Note title"},
        "body": {"type": "string", "description": "what the note says"},
        "tags": {"type": "array", "items": {"type": "string"}, "title": "Tags"},
    },
}

WORKSPACE = Path("/nonexistent-workspace")
"""An MCP call's card never looks at the workspace."""

# Our own markup: these tags, with at most a class attribute (and `open`); everything else is escaped text.
_OUR_TAG = re.compile(r'</?(?:div|h3|ol|li|p|pre|strong|code|details|summary|span)(?: class="[a-z -]+")?(?: open)?>')


def notes(description: str = "", *, title: str = "", schema: dict[str, Any] | None = None) -> ToolRegistry:
    tool = ExternalTool(
        "notes__add_note", description, schema or NOTE_SCHEMA, lambda context, **a: "", group="notes", title=title
    )
    registry = ToolRegistry.builtins()
    registry.register_external([tool], group="notes")
    return registry


def title_of(tools: ToolRegistry, arguments: dict[str, Any] | None = None, language: str = ENGLISH) -> str:
    return html_text(action("notes__add_note", lookup(arguments or {}), language, tools=tools))


def test_the_title_is_the_first_sentence_of_the_servers_description_as_one_plain_line():
    description = "Add a note to the **notebook**. Notes are kept forever.\nUse `tags` to sort them."
    assert title_of(notes(description)) == "Add a note to the notebook"
    assert title_of(notes("See [the docs](https://evil.example/x) first")) == "See the docs first"
    assert title_of(notes("  \n  Spread\tover   blanks  \n second line")) == "Spread over blanks"
    assert title_of(notes("Read\u202e a file")) == "Read⟨U+202E⟩ a file"  # what hides text is shown


def test_the_servers_own_title_wins_and_a_tool_with_no_words_is_named():
    assert title_of(notes("Add a note. More.", title="Add note")) == "Add note"
    assert title_of(notes("")) == "Use the tool add_note of the MCP server notes"
    assert title_of(notes(""), language=CHINESE) == "使用 MCP 伺服器 notes 的工具 add_note"


def test_a_long_title_is_shortened():
    shown = title_of(notes("word " * 100))
    assert len(shown) == TITLE_CHARS
    assert shown.endswith("…")


def test_fields_follow_the_schema_order_and_titles_then_any_others_by_name():
    arguments = {"extra": 1, "body": "hello", "tags": ["a", "b"], "title": "Shopping"}
    assert fields(arguments, NOTE_SCHEMA) == [
        ("Note title", "Shopping"),
        ("body", "hello"),
        ("Tags", '[\n  "a",\n  "b"\n]'),
        ("extra", "1"),
    ]
    assert fields({"a": None}, {"properties": {"a": True}}) == [("a", "null")]
    assert fields({"a": "x"}, {"properties": "not an object"}) == [("a", "x")]


def test_the_card_reads_title_source_claims_fields_and_technical_details_with_no_box():
    tools = notes("Add a note to the notebook.")
    call = ToolCall("1", "notes__add_note", {"body": "milk", "title": "Shopping"})
    card = describe_queue((call,), WORKSPACE, tools=tools)
    assert html_text(card.summary) == (
        "The assistant wants to do this\nAdd a note to the notebook\nThe tool add_note of the MCP server notes\n"
        "Note title\nShopping\nbody\nmilk\nTechnical details\n"
        '{\n  "body": "milk",\n  "title": "Shopping"\n}\n\n\n'
    )
    assert "<details><summary>" in card.summary  # the raw JSON one click away, not in view
    assert card.details == ""  # every field shows whole on the card: no box under it
    chinese = html_text(describe_queue((call,), WORKSPACE, CHINESE, tools=tools).summary)
    assert "MCP 伺服器 notes 的工具 add_note" in chinese
    assert "技術細節" in chinese


def test_a_value_too_long_for_the_card_is_folded_there_and_whole_in_the_box():
    tools = notes("Add a note.")
    long = "x" * (CARD_BOX_CHARS + 10)
    call = ToolCall("1", "notes__add_note", {"body": long})
    card = describe_queue((call,), WORKSPACE, tools=tools)
    assert long not in card.summary
    assert "more characters" in html_text(card.summary)
    assert json.loads(card.details) == {"body": long}
    # Second in line it is only folded, so "Approve all" may not approve it unseen.
    assert describe_queue((ToolCall("0", "notes__add_note", {}), call), WORKSPACE, tools=tools).cut_short == ("1",)


def test_the_chat_panel_shows_the_same_fields():
    shown = html_text(arguments_html("notes__add_note", {"body": "milk", "title": "Shopping"}, ENGLISH, tools=notes()))
    assert shown.startswith("Note title\nShopping\nbody\nmilk\nTechnical details\n")


def only_our_markup(markup: str) -> str:
    """The text between our own tags, which must be escaped: no markup, link or line break of its own."""
    text = _OUR_TAG.sub("", markup)
    assert not re.search(r"[<>\"'`*_\[\]()!:/\n]", text), text
    return text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    description=st.text(max_size=300),
    server_title=st.text(max_size=40),
    labels=st.dictionaries(st.text(max_size=12), st.text(max_size=30), max_size=4),
    arguments=st.dictionaries(st.text(max_size=12), json_values, max_size=5),
)
def test_any_description_and_arguments_render_escaped_one_line_titled_and_linear(
    description, server_title, labels, arguments
):
    schema = {"type": "object", "properties": {key: {"title": label} for key, label in labels.items()}}
    tools = notes(description, title=server_title, schema=schema)
    call = ToolCall("1", "notes__add_note", arguments)
    title = action("notes__add_note", lookup(arguments), ENGLISH, tools=tools)
    assert "\n" not in html_text(title)
    assert len(html_text(title)) <= TITLE_CHARS
    card = describe_queue((call, call), WORKSPACE, tools=tools).summary
    panel = arguments_html("notes__add_note", arguments, ENGLISH, tools=tools)
    for markup in (title, card, panel):
        only_our_markup(markup)
        assert [token.type for token in MarkdownIt("commonmark").parse(f"<div>{markup}</div>")] == ["html_block"]
    given_size = len(description) + len(server_title) + len(json.dumps([labels, arguments]))
    assert len(card) <= 2_000 + 60 * given_size


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.integers(min_value=2, max_value=100))
def test_one_line_is_one_short_line_with_no_marks(text, limit):
    line = one_line(text, limit)
    assert "\n" not in line
    assert len(line) <= limit
    assert "`" not in line
    assert line == line.strip()
