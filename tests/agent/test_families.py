"""Every Ollama model family end to end at the agent level: a 12,000-character write_file shows its text while it
is written, waits for approval with its path and content, and writes the file exactly once approved.

The scripted server runs each model's tokens through a port of its Ollama parser (tests/ollama_parsers.py), so
what reaches the agent is what real Ollama sends: nothing while a call is held, unless logprobs were asked for.
"""

import json
import threading

import pytest

from meowgent.agent.loop import Agent
from meowgent.config import Settings
from meowgent.conversation import Conversation, Decision
from meowgent.events import (
    ApprovalNeeded,
    Done,
    ErrorEvent,
    Notice,
    TextDelta,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    ToolCallWriting,
)
from meowgent.llm.client import OllamaClient
from meowgent.reply.parse import peek_call
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool
from meowgent.ui.i18n import CHINESE, notice_text
from tests.scripted_ollama import (
    DEFAULT_MODELS,
    PARSER_MODELS,
    ErrorLine,
    ScriptedOllama,
    Text,
    Turn,
    generated,
    harmony_call_text,
    reply,
    tool_call_text,
    xml_call_text,
)
from tests.words import said

CONTENT = "".join(f'Line {n:05d} of the notes, with "quotes" and a tab\there.\n' for n in range(230))[:12_000]
ARGUMENTS = {"path": "notes.md", "content": CONTENT}
SENTENCE = "I'll write the notes to notes.md now."

FAMILIES = {
    # model: what the model generates (markup and all) for the call
    "qwen3": SENTENCE + tool_call_text("write_file", ARGUMENTS),  # no builtin parser: the text protocol
    "qwen3:4b": "The person wants notes.</think>\n\n" + SENTENCE + "\n" + tool_call_text("write_file", ARGUMENTS),
    "qwen3:4b-instruct": SENTENCE + "\n" + tool_call_text("write_file", ARGUMENTS),
    "qwen3.5": "Write the notes.\n</think>\n\n" + SENTENCE + "\n" + xml_call_text("write_file", ARGUMENTS),
    "qwen3-coder": SENTENCE + "\n" + xml_call_text("write_file", ARGUMENTS),
    "gpt-oss": "<|channel|>analysis<|message|>Write the notes.<|end|>"
    + f"<|start|>assistant<|channel|>commentary<|message|>{SENTENCE}<|end|>"
    + harmony_call_text("write_file", ARGUMENTS),
}


@pytest.fixture
def workspace(tmp_path):
    return tmp_path


def server_with(version="0.17.0"):
    return ScriptedOllama({**DEFAULT_MODELS, **PARSER_MODELS}, version=version)


def agent_for(server, workspace, *, read_timeout=10.0, tools=None):
    settings = Settings(workspace=workspace, read_timeout=read_timeout)
    return Agent(OllamaClient(server.url, read_timeout=read_timeout), settings, tools=tools)


def live_text_before_ready(events):
    """The canonical JSON text a live panel had shown before its call was ready, and the ready call."""
    text = []
    for event in events:
        if isinstance(event, ToolCallProgress):
            text.append(event.text)
        if isinstance(event, ToolCallReady):
            return "".join(text), event.call
    raise AssertionError("no call became ready")


def approve_and_finish(agent, conversation, events, server):
    approval = next(e for e in events if isinstance(e, ApprovalNeeded))
    (call,) = approval.calls
    server.script(reply("Done: the notes are written."))
    decisions = {call.id: Decision(approved=True)}
    return call, list(agent.resume(conversation, decisions, threading.Event()))


@pytest.mark.parametrize("model", list(FAMILIES))
def test_a_long_write_file_streams_waits_for_approval_and_writes_exactly(model, workspace):
    with server_with() as server:
        server.script(generated(FAMILIES[model], token_size=4))
        agent, conversation = agent_for(server, workspace), Conversation("c", model)
        events = list(agent.run(conversation, "write my notes", threading.Event()))

        shown, ready = live_text_before_ready(events)
        name, arguments = peek_call(shown)
        assert name == "write_file"
        assert arguments["path"] == "notes.md"
        # Nearly all the content was on screen before the call ended (the rest is the last token or two).
        assert CONTENT.startswith(arguments["content"])
        assert len(arguments["content"]) > len(CONTENT) - 20
        # One panel per call: the call that runs is the live panel's.
        started = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
        assert started == [ready.id]
        # The sentence before the call was whole before the call began.
        first_call_event = next(i for i, e in enumerate(events) if isinstance(e, ToolCallStarted))
        assert SENTENCE in "".join(e.text for e in events[:first_call_event] if isinstance(e, TextDelta))
        assert not [e for e in events if isinstance(e, ErrorEvent)]

        call, after = approve_and_finish(agent, conversation, events, server)
        assert call.arguments == ARGUMENTS
        assert (workspace / "notes.md").read_text() == CONTENT
        assert not [e for e in after if isinstance(e, ErrorEvent)]
        assert isinstance(after[-1], Done)
        assert after[-1].reason == "complete"


@pytest.mark.parametrize("model", [m for m in FAMILIES if m != "qwen3"])
def test_parser_models_get_tools_natively_and_logprobs_and_no_text_protocol(model, workspace):
    with server_with() as server:
        server.script(reply("Hi."))
        list(agent_for(server, workspace).run(Conversation("c", model), "hi", threading.Event()))
        request = server.chat_requests[0]
        assert {tool["function"]["name"] for tool in request["tools"]} >= {"write_file", "read_file"}
        assert request["logprobs"] is True
        assert "<tool_call>" not in request["messages"][0]["content"]


def test_a_model_without_a_parser_keeps_the_text_protocol(workspace):
    with server_with() as server:
        server.script(reply("Hi."))
        list(agent_for(server, workspace).run(Conversation("c", "qwen3"), "hi", threading.Event()))
        request = server.chat_requests[0]
        assert not request.get("tools")
        assert "logprobs" not in request
        assert "<tool_call>" in request["messages"][0]["content"]


def test_on_an_ollama_too_old_for_logprobs_a_slow_silent_call_completes_with_a_counting_panel(workspace):
    # 150 tokens 0.02 s apart: the call is silent for 3 s, longer than the read timeout (the patience is five).
    text = SENTENCE + "\n" + xml_call_text("write_file", {"path": "slow.md", "content": "x" * 600})
    with server_with(version="0.12.10") as server:
        turn = generated(text, token_size=4, delay=0.02)
        server.script(turn)
        agent = agent_for(server, workspace, read_timeout=2.0)
        conversation = Conversation("c", "qwen3-coder")
        events = list(agent.run(conversation, "write it slowly", threading.Event()))
        assert "logprobs" not in server.chat_requests[0]
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        writing = [e for e in events if isinstance(e, ToolCallWriting)]
        assert writing, "the page was told the model is writing a call"
        assert [e.seconds for e in writing] == sorted(e.seconds for e in writing)
        ready = next(e for e in events if isinstance(e, ToolCallReady))
        assert ready.call.id == writing[0].call_id  # the counting panel becomes the call
        assert ready.call.arguments == {"path": "slow.md", "content": "x" * 600}


def test_a_call_ollama_cannot_read_gets_one_retry_with_the_format_and_then_works(workspace):
    json_in_tags = "Thinking.\n</think>\n\n" + SENTENCE + "\n" + tool_call_text("write_file", ARGUMENTS)
    xml = "Thinking again.\n</think>\n\n" + xml_call_text("write_file", ARGUMENTS)
    with server_with() as server:
        server.script(generated(json_in_tags), generated(xml))
        agent, conversation = agent_for(server, workspace), Conversation("c", "qwen3.5")
        events = list(agent.run(conversation, "write my notes", threading.Event()))
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        notices = [e for e in events if isinstance(e, Notice)]
        assert any("couldn't read the tool call" in said(n) for n in notices)
        assert "請模型重寫一次" in notice_text(CHINESE, notices[0])
        invalid = [e for e in events if isinstance(e, ToolCallInvalid)]
        # Even the call Ollama could not read showed its text while it was written.
        rejected = invalid[0].call_id
        first_try = "".join(e.text for e in events if isinstance(e, ToolCallProgress) and e.call_id == rejected)
        assert peek_call(first_try)[1]["content"] == CONTENT
        assert len(invalid) == 1
        assert "could not read" in invalid[0].error
        assert invalid[0].retried  # a step the page shows as such, not a failure
        retry = server.chat_requests[1]["messages"][-1]
        assert retry["role"] == "user"
        assert "<function=TOOL_NAME>" in retry["content"]
        call, _ = approve_and_finish(agent, conversation, events, server)
        assert call.arguments == ARGUMENTS
        assert (workspace / "notes.md").read_text() == CONTENT


def test_the_same_rejection_twice_ends_the_answer_with_the_conversation_intact(workspace):
    json_in_tags = "Thinking.\n</think>\n\n" + tool_call_text("read_file", {"path": "a"})
    with server_with() as server:
        server.script(generated(json_in_tags), generated(json_in_tags), reply("Hello again."))
        agent, conversation = agent_for(server, workspace), Conversation("c", "qwen3.5")
        events = list(agent.run(conversation, "read a", threading.Event()))
        errors = [e for e in events if isinstance(e, ErrorEvent)]
        assert [e.kind for e in errors] == ["call_rejected"]
        assert [e.retried for e in events if isinstance(e, ToolCallInvalid)] == [True, False]
        assert "Traceback" not in said(errors[0])
        assert events[-1].reason == "error"
        assert conversation.messages[-1]["role"] == "assistant"
        assert conversation.pending == []
        later = list(agent.run(conversation, "hello?", threading.Event()))
        assert "".join(e.text for e in later if isinstance(e, TextDelta)) == "Hello again."
        assert json.dumps(conversation.messages)  # the transcript is still plain data


def test_an_error_line_while_no_call_is_written_is_an_ordinary_error_without_a_retry(workspace):
    with server_with() as server:
        server.script(Turn(Text("Half an ans"), ErrorLine("llama runner process has terminated")))
        agent, conversation = agent_for(server, workspace), Conversation("c", "qwen3-coder")
        events = list(agent.run(conversation, "hi", threading.Event()))
        assert [e.kind for e in events if isinstance(e, ErrorEvent)] == ["broken"]
        assert not [e for e in events if isinstance(e, Notice)]
        assert len(server.chat_requests) == 1


def test_on_an_old_ollama_a_reply_that_starts_with_a_slow_call_is_not_cut_off(workspace):
    # No prose and no thinking: Ollama sends nothing at all until the call is whole, about 2 s later (twice the
    # read timeout; the patience for a held call is five).
    text = xml_call_text("write_file", {"path": "first.md", "content": "y" * 300})
    with server_with(version="0.12.10") as server:
        server.script(generated(text, token_size=4, delay=0.02))
        agent = agent_for(server, workspace, read_timeout=1.0)
        events = list(agent.run(Conversation("c", "qwen3-coder"), "write it", threading.Event()))
        assert not [e for e in events if isinstance(e, ErrorEvent)]
        (writing, *_) = [e for e in events if isinstance(e, ToolCallWriting)]  # shown once past the read timeout
        ready = next(e for e in events if isinstance(e, ToolCallReady))
        assert ready.call.id == writing.call_id
        assert ready.call.arguments == {"path": "first.md", "content": "y" * 300}


def test_mcp_tools_the_chat_offers_go_to_a_parser_model_natively_too(workspace):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    tools = ToolRegistry.builtins()
    tools.register_external(
        [ExternalTool("calc__add_one", "Add one.", schema, lambda context, **a: "", group="calc")], group="calc"
    )
    with server_with() as server:
        server.script(reply("Hi."))
        list(agent_for(server, workspace, tools=tools).run(Conversation("c", "qwen3-coder"), "hi", threading.Event()))
        sent = {tool["function"]["name"] for tool in server.chat_requests[0]["tools"]}
        assert {"calc__add_one", "write_file"} <= sent
        assert "calc__add_one" in server.chat_requests[0]["messages"][0]["content"]  # it asks the person first
