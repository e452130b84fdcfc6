"""Runaway replies (issue 13): each cap reproduced through the chat service, the real agent and a scripted model."""

import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.agent.loop import Agent
from meowgent.chats.service import ChatService
from meowgent.config import Settings
from meowgent.conversation import Conversation
from meowgent.events import (
    ApprovalNeeded,
    Done,
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    ToolResult,
)
from meowgent.llm.client import OllamaClient
from meowgent.persist.store import Store
from meowgent.reply.guard import Limits, ReplyGuard
from meowgent.ui.i18n import CHINESE, notice_text
from tests.scripted_ollama import (
    DEFAULT_MODELS,
    PARSER_MODELS,
    NativeToolCalls,
    ScriptedOllama,
    Stall,
    Text,
    Thinking,
    Turn,
    generated,
    reply,
    tool_call_text,
    xml_call_text,
)
from tests.words import said

OWNER = "browser:alice"


def start_service(server, tmp_path: Path, **caps) -> ChatService:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "notes.md").write_text("first line\n")
    settings = Settings(workspace=workspace, ollama_host=server.url, read_timeout=10, **caps)
    agent = Agent(OllamaClient(server.url, read_timeout=10), settings)
    store = Store(tmp_path / "data" / "meowgent.db")
    return ChatService(agent, store, default_model="qwen3", workspace=workspace)


def ask(service: ChatService, text: str, chat_id: str | None = None) -> tuple[str, list]:
    """Send `text` (in a new chat unless `chat_id`) and return the chat id with every event of the answer."""
    chat_id = chat_id or service.new_chat(OWNER).id
    seen = len([e for batch in service.follow(OWNER, chat_id, poll=0.02) for e in batch])
    service.send(OWNER, chat_id, text)
    events = [e for batch in service.follow(OWNER, chat_id, poll=0.02) for e in batch]
    return chat_id, events[seen:]


def streamed(events) -> int:
    """Characters of model text the page was sent: prose, thinking and calls."""
    return sum(len(e.text) for e in events if isinstance(e, TextDelta | ThinkingDelta | ToolCallProgress))


def stored_bytes(tmp_path: Path, chat_id: str) -> int:
    """Bytes of the chat's transcript and event log in the database file."""
    with closing(sqlite3.connect(tmp_path / "data" / "meowgent.db")) as conn:
        return sum(
            conn.execute(
                f"SELECT COALESCE(SUM(LENGTH(body)), 0) FROM {table} WHERE conversation_id = ?", (chat_id,)
            ).fetchone()[0]
            for table in ("messages", "events")
        )


def test_a_reply_that_streams_on_and_on_is_cut_at_the_cap(ollama_server, tmp_path):
    cap = 200_000
    endless = "The cat sat on the mat. " * 200_000  # 4.8 MB, 24 times the cap
    # The model is still going when the cut comes (the Stall): 4.8 MB fits in loopback's socket buffers (a receive
    # buffer may grow to 32 MB), so at full speed the server could finish writing before the reader cuts, and then
    # it has no one to see leave (CI, under load).
    ollama_server.script(
        Turn(Thinking("Let me go on. " * 2_000), Text(endless), Stall(60), chunk_size=2_000), reply("Short.")
    )
    service = start_service(ollama_server, tmp_path, max_reply_chars=cap)
    chat_id, events = ask(service, "tell me everything")

    assert ollama_server.wait_for_disconnects(1)  # the stream was closed, so Ollama stops generating
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.kind == "reply_too_long"
    assert "passed 200,000 characters" in said(error)
    assert isinstance(events[-1], Done)
    assert events[-1].reason == "error"
    assert cap - 2_000 < streamed(events) <= cap  # what the page got
    (assistant,) = [m for m in service.get(OWNER, chat_id).conversation.messages if m["role"] == "assistant"]
    assert len(assistant["content"]) + len(assistant["thinking"]) <= cap + 2 * 2_000
    assert assistant["content"].endswith(
        "[This answer was cut off here: it passed the limit of 200,000 characters for one reply.]"
    )
    assert stored_bytes(tmp_path, chat_id) < 3 * cap  # transcript and page log together, JSON overhead included

    _, events = ask(service, "now briefly", chat_id)  # the conversation goes on
    assert "Short." in "".join(e.text for e in events if isinstance(e, TextDelta))


def test_a_call_larger_than_the_cap_is_refused_before_it_shows_or_runs(ollama_server, tmp_path):
    cap = 100_000
    huge = tool_call_text("write_file", {"path": "big.txt", "content": "meow " * 1_000_000})  # 5 MB
    # Still going when the cut comes, as above.
    ollama_server.script(
        Turn(Text("Writing it.\n"), Text(huge), Stall(60), chunk_size=4_096), reply("I'll write it in parts.")
    )
    service = start_service(ollama_server, tmp_path, max_call_chars=cap)
    chat_id, events = ask(service, "save a big file")

    assert ollama_server.wait_for_disconnects(1)
    assert not any(isinstance(e, ToolCallReady | ApprovalNeeded) for e in events)  # never on a card
    (invalid,) = [e for e in events if isinstance(e, ToolCallInvalid)]
    assert "smaller parts" in invalid.error
    assert "edit_file" in invalid.error
    assert len(invalid.raw) <= 200
    assert any(isinstance(e, Notice) and "larger than 100,000 characters" in said(e) for e in events)
    assert streamed(events) <= cap + 4_096
    assert not (tmp_path / "workspace" / "big.txt").exists()
    assert events[-1].reason == "complete"

    # The model read why and answered; its own copy of the reply keeps only the start of the call.
    told = [m for m in ollama_server.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert "smaller parts" in told[0]["content"]
    sent = ollama_server.chat_requests[-1]["messages"][-2]
    assert sent["role"] == "assistant"
    assert len(sent["content"]) < 1_000
    assert "big.txt" in sent["content"]
    assert "cut off here" in sent["content"]
    assert "I'll write it in parts." in "".join(e.text for e in events if isinstance(e, TextDelta))
    assert stored_bytes(tmp_path, chat_id) < 3 * cap


def test_a_native_call_larger_than_the_cap_is_refused_and_not_kept(ollama_server, tmp_path):
    big = {"name": "write_file", "arguments": {"path": "big.txt", "content": "x" * 300_000}}
    ollama_server.script(Turn(NativeToolCalls([big])), reply("Parts then."))
    service = start_service(ollama_server, tmp_path, max_call_chars=100_000)
    chat_id, events = ask(service, "save a big file")

    assert not any(isinstance(e, ToolCallReady | ToolCallProgress) for e in events)
    assert [e.status for e in events if isinstance(e, ToolResult)] == ["error"]
    assistant = service.get(OWNER, chat_id).conversation.messages[1]
    assert assistant["tool_calls"] == [{"function": {"name": "write_file", "arguments": {}}}]
    assert stored_bytes(tmp_path, chat_id) < 20_000


@pytest.mark.parametrize("native", [False, True], ids=["text", "native"])
def test_past_the_calls_limit_the_reply_stops_and_the_model_is_told(ollama_server, tmp_path, native):
    calls = [{"name": "read_file", "arguments": {"path": "notes.md"}} for _ in range(200)]
    flood = Turn(NativeToolCalls(calls)) if native else Turn(Text("".join(tool_call_text(**c) for c in calls)))
    ollama_server.script(flood, reply("Done reading."))
    service = start_service(ollama_server, tmp_path, max_calls_per_reply=20)
    _, events = ask(service, "read it a lot")

    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.status for r in results] == ["done"] * 20 + ["error"]
    assert "at most 20 tool calls" in results[-1].output
    assert "next reply" in results[-1].output
    notice = next(e for e in events if isinstance(e, Notice))
    assert "more than 20 tool calls" in said(notice)
    assert notice_text(CHINESE, notice).startswith("模型想在一次回覆裡呼叫超過 20 次工具。")
    assert len(ollama_server.chat_requests) == 2
    told = [m for m in ollama_server.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert len(told) == 21
    assert events[-1].reason == "complete"


def test_a_flood_of_calls_over_many_replies_is_bounded_and_asks_the_person(ollama_server, tmp_path):
    def flood(turn: int) -> Turn:  # another call in each reply: the same again would end it sooner (agent/repeats.py)
        return Turn(
            Text("".join(tool_call_text("read_file", {"path": "notes.md", "limit": 10 + turn}) for _ in range(200)))
        )

    ollama_server.script(*[flood(n % 2) for n in range(10)])
    service = start_service(ollama_server, tmp_path, max_calls_per_reply=20, max_turns=5)
    _, events = ask(service, "read it forever")
    ran = [e for e in events if isinstance(e, ToolResult) and e.status == "done"]
    assert len(ran) == 5 * 20  # never the 2,000 calls the model wrote
    assert events[-1].reason == "max_turns"
    assert "Send a message to let it continue" in next(said(e) for e in events if isinstance(e, ErrorEvent))


def test_the_caps_are_settings_with_safe_defaults():
    settings = Settings()
    assert settings.max_calls_per_reply == 20
    assert settings.max_call_chars == 2_000_000
    assert settings.max_reply_chars >= 2 * settings.max_call_chars


def test_context_trimming_keeps_the_current_answer_and_stops_it_when_even_that_is_too_long(tmp_path):
    # A model that reads the same file whenever asked, from one of two lines in turn (the same call again would end
    # the answer sooner: agent/repeats.py).
    again = [Turn(Text(tool_call_text("read_file", {"path": "big.md", "offset": n % 2}))) for n in range(2)]
    with ScriptedOllama(fallback=again) as server:
        service = start_service(server, tmp_path, num_ctx=4096, max_turns=25)
        (tmp_path / "workspace" / "big.md").write_text("".join(f"line {i:05d}: cats\n" for i in range(2000)))
        chat_id, events = ask(service, "read it")

        requests = server.chat_requests
        for number, request in enumerate(requests):  # every earlier call of this answer is still in front of it
            assert sum(m["role"] == "tool" for m in request["messages"]) == number
        assert 2 < len(requests) < 25  # stopped long before max_turns, instead of repeating what it forgot
        (error,) = [e for e in events if isinstance(e, ErrorEvent)]
        assert error.kind == "answer_too_long"
        assert "Send a message to go on from here" in said(error)
        assert events[-1].reason == "error"

        server.script(reply("Here is what I found."))
        _, events = ask(service, "what did you find?", chat_id)  # the old answer may now be left out
        assert "Here is what I found." in "".join(e.text for e in events if isinstance(e, TextDelta))


# ---- ReplyGuard on its own: events in, events out ----


def guarded(events, **limits):
    """What `ReplyGuard.admit` lets through of `events`, given one at a time and then in one list, and the guard."""
    limits = {"reply_chars": 1000, "call_chars": 100, "calls": 3} | limits
    one_by_one, guard = ReplyGuard(Limits(**limits)), ReplyGuard(Limits(**limits))
    out = guard.admit(list(events))
    assert [e for event in events for e in one_by_one.admit([event])] == out  # however the events are batched
    return out, guard


def test_a_call_that_arrives_whole_behind_a_panel_without_text_is_measured_too():
    big = ToolCall("k1", "write_file", {"path": "a", "content": "x" * 300})
    out, guard = guarded([ToolCallStarted("k1"), ToolCallReady(big, True), TextDelta("after")])
    assert [type(e) for e in out] == [ToolCallStarted, ToolCallInvalid, Notice]
    assert guard.cut.kind == "call_too_large"
    assert guard.refused[0] == "k1"
    assert not guard.may_run("k1")


def test_after_a_cut_only_the_end_of_a_panel_already_shown_gets_through():
    late = ToolCall("k1", "read_file", {"path": "a"})
    events = [ToolCallStarted("k1"), ToolCallProgress("k1", "{"), ToolCallStarted("k2")]  # k2: one call too many
    events += [ToolCallReady(late, False), ToolCallInvalid("k1", "{", "held back"), ToolCallInvalid("k2", "", "again")]
    out, guard = guarded(events, calls=1)
    assert [(type(e).__name__, getattr(e, "call_id", "")) for e in out] == [
        ("ToolCallStarted", "k1"),
        ("ToolCallProgress", "k1"),
        ("ToolCallStarted", "k2"),
        ("ToolCallInvalid", "k2"),  # the refusal, once
        ("Notice", ""),
        ("ToolCallInvalid", "k1"),  # k1's panel is closed, and k1 never runs
    ]
    assert not guard.may_run("k1")


def test_a_delta_that_crosses_the_reply_cap_is_cut_at_it():
    out, guard = guarded([TextDelta("a" * 600), ThinkingDelta("b" * 600), TextDelta("c")])
    assert [e.text for e in out[:2]] == ["a" * 600, "b" * 400]
    assert isinstance(out[2], ErrorEvent)
    assert len(out) == 3
    assert guard.cut.ended == "error"


@st.composite
def replies(draw):
    """The events of a random reply: prose, thinking and calls, each call streamed in pieces and then ready."""
    events = []
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["text", "thinking", "call"]))
        if kind == "call":
            pieces = draw(st.lists(st.integers(1, 80), max_size=4))
            events += [ToolCallStarted(f"k{n}"), *(ToolCallProgress(f"k{n}", "p" * size) for size in pieces)]
            events.append(ToolCallReady(ToolCall(f"k{n}", "read_file", {"path": "x" * sum(pieces)}), False))
        else:
            events.append((TextDelta if kind == "text" else ThinkingDelta)("t" * draw(st.integers(1, 300))))
    return events


@settings(max_examples=300, deadline=None)
@given(replies(), st.integers(1, 800), st.integers(1, 150), st.integers(0, 4))
def test_whatever_the_reply_the_guard_keeps_every_limit(events, reply_chars, call_chars, calls):
    out, guard = guarded(events, reply_chars=reply_chars, call_chars=call_chars, calls=calls)
    deltas = [e for e in out if isinstance(e, TextDelta | ThinkingDelta | ToolCallProgress)]
    assert sum(len(e.text) for e in deltas) <= reply_chars
    ready = [e.call.id for e in out if isinstance(e, ToolCallReady)]
    assert len(ready) <= calls
    for call_id in ready:
        assert sum(len(e.text) for e in deltas if getattr(e, "call_id", None) == call_id) <= call_chars
    # What may run is what the page was shown, except the refused call: the agent gives that one its error.
    shown = {*ready, *(e.call_id for e in out if isinstance(e, ToolCallInvalid))} - {(guard.refused or ("",))[0]}
    assert all(guard.may_run(e.call_id) == (e.call_id in shown) for e in events if isinstance(e, ToolCallStarted))
    if guard.cut is None:
        assert out == events  # within every limit, the reply passes untouched
    else:  # the cut's own note ends what the page gets
        assert isinstance(out[-1], ErrorEvent | Notice)
        assert (guard.refused is None) == (guard.cut.kind == "reply_too_long")
        assert guard.refused is None or not guard.may_run(guard.refused[0])


# ---- calls that Ollama's parser holds back (qwen3-coder writes XML; Ollama sends the calls at the end) ----


@pytest.mark.parametrize(
    ("name", "arguments", "calls"),
    [("read_file", {"path": "notes.md"}, 200), ("write_file", {"path": "big.md", "content": "m" * 300_000}, 1)],
    ids=["flood", "huge"],
)
def test_held_back_calls_past_a_limit_close_every_panel_and_run_only_what_was_shown(tmp_path, name, arguments, calls):
    (tmp_path / "notes.md").write_text("first line\n")
    written = xml_call_text(name, arguments) * calls
    with ScriptedOllama({**DEFAULT_MODELS, **PARSER_MODELS}, version="0.17.0") as server:
        server.script(generated("Here goes.\n" + written, token_size=64), reply("Stopped, then."))
        settings = Settings(workspace=tmp_path, max_call_chars=100_000, max_calls_per_reply=20)
        agent, conversation = Agent(OllamaClient(server.url), settings), Conversation("c", "qwen3-coder")
        events = list(agent.run(conversation, "go", threading.Event()))

    started = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
    ready = [e.call.id for e in events if isinstance(e, ToolCallReady)]
    ended = [*ready, *(e.call_id for e in events if isinstance(e, ToolCallInvalid))]
    assert sorted(started) == sorted(ended)  # no panel is left "writing"
    assert len(ready) <= 20
    ran = [e.call_id for e in events if isinstance(e, ToolResult) and e.status == "done"]
    assert set(ran) <= set(ready)
    assert any(isinstance(e, Notice) and said(e).startswith("The model ") for e in events)
    assert sum(isinstance(e, ToolResult) and e.status == "error" for e in events) == 1  # the call past the limit
    assert not (tmp_path / "big.md").exists()
    assert events[-1].reason == "complete"
