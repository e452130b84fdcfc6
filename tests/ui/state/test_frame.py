from dataclasses import fields

import gradio as gr

from meowgent.events import ToolCall
from meowgent.ui.i18n import ENGLISH, t
from meowgent.ui.state.frame import FrameTargets, Snapshot, chat_frame, frame

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
