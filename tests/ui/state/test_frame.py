from dataclasses import fields

import gradio as gr

from meowgent.events import ToolCall
from meowgent.ui.i18n import CHINESE, ENGLISH, t
from meowgent.ui.state.editform import form_for
from meowgent.ui.state.frame import FrameTargets, Snapshot, chat_frame, field_update, frame, point_to_card

TARGETS = FrameTargets(**{item.name: item.name for item in fields(FrameTargets)})
"""Each target stands for itself by its name."""


def snapshot(*, waiting: tuple[ToolCall, ...] = ()) -> Snapshot:
    messages = [
        gr.ChatMessage(role="user", content="save it"),
        gr.ChatMessage(role="assistant", content="<p>Saving</p>"),
        gr.ChatMessage(role="assistant", content="<pre>body</pre>", metadata={"title": "Write a.md", "id": "c1"}),
    ]
    return Snapshot(messages, running=True, waiting=waiting)


def test_a_frame_of_the_chat_alone_names_only_the_chat():
    assert list(chat_frame(snapshot(), ENGLISH, TARGETS)) == ["chatbot"]


def test_a_frame_of_the_chat_alone_shows_the_messages_a_whole_frame_shows():
    for waiting in ((), (ToolCall("c1", "write_file", {"path": "a.md"}),)):
        shown = snapshot(waiting=waiting)
        assert chat_frame(shown, ENGLISH, TARGETS)["chatbot"] == frame(shown, ENGLISH, TARGETS)["chatbot"]


def test_a_waiting_calls_panel_points_to_the_card_in_either_frame():
    shown = snapshot(waiting=(ToolCall("c1", "write_file", {"path": "a.md"}),))
    assert chat_frame(shown, ENGLISH, TARGETS)["chatbot"][-1].content == t(ENGLISH, "see_card")


SEE_BELOW = "⬇ see below"


def panel(call_id: str, content: str) -> gr.ChatMessage:
    return gr.ChatMessage(role="assistant", content=content, metadata={"title": "Write a.md", "id": call_id})


def test_a_waiting_call_points_at_the_card_and_keeps_its_title():
    waiting = (ToolCall("c2", "write_file", {"path": "a.md", "content": "x" * 5000}),)
    messages = [gr.ChatMessage(role="user", content="write a.md"), panel("c1", "done earlier"), panel("c2", "x" * 4000)]
    shown = point_to_card(messages, waiting, SEE_BELOW)
    assert [message.content for message in shown] == ["write a.md", "done earlier", SEE_BELOW]
    assert shown[2].metadata["title"] == "Write a.md"
    assert messages[2].content == "x" * 4000  # the view's own messages are left alone


def test_nothing_waiting_changes_nothing():
    messages = [panel("c1", "done")]
    assert point_to_card(messages, (), SEE_BELOW) == messages


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
