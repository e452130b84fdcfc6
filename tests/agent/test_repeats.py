"""A call made again right after its result came back is not run or asked again (agent/repeats.py): the real Agent
against a scripted llama-server, writing its calls as Qwen2.5-Coder 1.5B does, in its text."""

from __future__ import annotations

import json
import threading

from hypothesis import given
from hypothesis import strategies as st

from meowgent.agent import notes
from meowgent.agent.loop import Agent
from meowgent.agent.repeats import made, repeats
from meowgent.config import Settings
from meowgent.conversation import Conversation, Decision, InvalidCall
from meowgent.events import ApprovalNeeded, Done, ErrorEvent, ToolCall, ToolResult
from meowgent.llm.openai_client import OpenAIClient
from meowgent.ui.state.render import ChatView
from tests.scripted_openai import Content, ScriptedOpenAI, Turn

MODEL = "qwen2.5-coder-1.5b"
WRITE = {"path": "hello.txt", "content": "meow"}


def written(name: str, arguments: dict) -> Turn:
    """A call as the model writes it in its text: the object alone, as its whole reply."""
    return Turn(Content(json.dumps({"name": name, "arguments": arguments}), token_size=5))


def chat(tmp_path, *turns):
    """The scripted server, the agent, a conversation, and the events of a first message whose write_file is
    approved."""
    server = ScriptedOpenAI(dialect="llamacpp", models={MODEL: 4096}).start()
    server.script(*turns)
    agent = Agent(OpenAIClient(server.url, read_timeout=10), Settings(workspace=tmp_path))
    conversation = Conversation("chat-1", MODEL)
    events = list(agent.run(conversation, "write hello.txt", threading.Event()))
    (waiting,) = [e for e in events if isinstance(e, ApprovalNeeded)]
    resumed = list(agent.resume(conversation, {waiting.calls[0].id: Decision(True)}, threading.Event()))
    return server, agent, conversation, events, resumed


def test_the_same_call_again_is_answered_by_a_note_and_the_model_then_answers(tmp_path):
    server, _, conversation, first, events = chat(
        tmp_path, written("write_file", WRITE), written("write_file", dict(reversed(WRITE.items()))), "Done."
    )
    try:
        assert not [e for e in events if isinstance(e, ApprovalNeeded)]  # nobody is asked again
        results = [e for e in events if isinstance(e, ToolResult)]
        assert [r.repeated for r in results] == [False, True]
        assert results[1].output == notes.REPEATED
        *_, call, told = server.chat_requests[2]["messages"]  # what the model reads before it answers
        assert told == {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": notes.REPEATED}
        assert events[-1].reason == "complete"
        assert conversation.messages[-1]["content"] == "Done."
        for language, words in (("en", "not run again"), ("zh-TW", "未再執行")):
            view = ChatView(language)
            for event in first + events:
                view.apply(event)
            logs = [m.metadata.get("log", "") for m in view.messages() if m.metadata and "log" in m.metadata]
            assert words in logs[-1]  # the page says it plainly, in its own words, not the note to the model
            assert notes.REPEATED not in str([m.content for m in view.messages()])
    finally:
        server.stop()


def test_made_again_after_the_note_the_answer_ends_with_a_plain_error(tmp_path):
    server, _, conversation, _, events = chat(tmp_path, *[written("write_file", WRITE)] * 3, "never asked for")
    try:
        assert [e.repeated for e in events if isinstance(e, ToolResult)] == [False, True, True]
        assert [e for e in events if isinstance(e, ErrorEvent)] == [ErrorEvent("call_repeated")]
        assert events[-1] == Done("error", events[-1].prompt_tokens, events[-1].output_tokens)
        assert len(server.chat_requests) == 3
        assert not conversation.pending  # every call has its result in the transcript
    finally:
        server.stop()


def test_other_arguments_or_a_new_message_make_a_new_call_that_asks_first(tmp_path):
    other = {"path": "hello.txt", "content": "purr"}
    server, agent, conversation, _, events = chat(
        tmp_path, written("write_file", WRITE), written("write_file", other), "ok", written("write_file", WRITE)
    )
    try:
        (waiting,) = [e for e in events if isinstance(e, ApprovalNeeded)]  # other content: a new call, asked
        assert waiting.calls[0].arguments == other
        list(agent.resume(conversation, {waiting.calls[0].id: Decision(False)}, threading.Event()))
        again = list(agent.run(conversation, "write it once more", threading.Event()))
        assert [e for e in again if isinstance(e, ApprovalNeeded)]  # after a new message, the same call asks again
    finally:
        server.stop()


arguments = st.dictionaries(st.sampled_from("abc"), st.integers(0, 2) | st.text("xy", max_size=2), max_size=3)
calls = st.builds(ToolCall, st.uuids().map(str), st.sampled_from(["write_file", "run_shell"]), arguments)


@given(st.lists(calls | st.builds(InvalidCall, st.uuids().map(str), st.just(""), st.just("bad")), max_size=4),
       st.lists(calls, max_size=4))  # fmt: skip
def test_a_repeat_is_exactly_a_usable_call_with_a_name_and_arguments_just_answered(now, before):
    expected = {
        c.id
        for c in now
        if isinstance(c, ToolCall) and any((c.name, c.arguments) == (b.name, b.arguments) for b in before)
    }
    assert repeats(now, before) == expected
    assert repeats(now, made(now)) == {c.id for c in now if isinstance(c, ToolCall)}
