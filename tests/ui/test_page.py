"""The page's pure helpers: examples per language, edit field updates, and chat panels that point at the card."""

import gradio as gr

from meowgent.events import ToolCall
from meowgent.ui.i18n import CHINESE, ENGLISH, LANGUAGES
from meowgent.ui.page import EXAMPLES, examples_for, field_update, point_to_card
from meowgent.ui.state.editform import form_for

NOTE = "⬇ see below"


def panel(call_id: str, content: str) -> gr.ChatMessage:
    return gr.ChatMessage(role="assistant", content=content, metadata={"title": "Write a.md", "id": call_id})


def test_every_language_has_examples_in_the_chatbot_format():
    assert set(EXAMPLES) == set(LANGUAGES)
    assert examples_for(CHINESE)[0] == {"text": EXAMPLES[CHINESE][0]}


def test_a_waiting_call_points_at_the_card_and_keeps_its_title():
    waiting = (ToolCall("c2", "write_file", {"path": "a.md", "content": "x" * 5000}),)
    messages = [gr.ChatMessage(role="user", content="write a.md"), panel("c1", "done earlier"), panel("c2", "x" * 4000)]
    shown = point_to_card(messages, waiting, NOTE)
    assert [message.content for message in shown] == ["write a.md", "done earlier", NOTE]
    assert shown[2].metadata["title"] == "Write a.md"
    assert messages[2].content == "x" * 4000  # the view's own messages are left alone


def test_nothing_waiting_changes_nothing():
    messages = [panel("c1", "done")]
    assert point_to_card(messages, (), NOTE) == messages


def test_a_field_shows_its_label_in_the_language_or_hides():
    content = form_for(ToolCall("c1", "write_file", {})).main
    assert field_update(content, CHINESE, value="喵") == {
        "__type__": "update",
        "visible": True,
        "label": "新的內容",
        "lines": content.lines,
        "value": "喵",
    }
    assert field_update(None, ENGLISH) == {"__type__": "update", "visible": False}
