"""ReplyAssembler on its own: plain chunks in, the page's events, the transcript's message and the calls out.

No server and no agent: the callables it asks are small functions here, as the agent's are over its rules and tools.
"""

import json
from dataclasses import replace
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.agent.notes import END_NOTES
from meowgent.conversation import InvalidCall
from meowgent.events import (
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCall,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    continues,
)
from meowgent.llm.errors import ErrorLine, StreamBroken
from meowgent.llm.types import ChatChunk, Holding, NativeToolCall
from meowgent.reply.assembler import TEXT_CALLS, ReplyAssembler
from meowgent.reply.guard import Limits
from tests.scripted_ollama import tool_call_text, xml_call_text

TOOLS = {"read_file", "write_file"}
LIMITS = Limits(reply_chars=100_000, call_chars=20_000, calls=8)


def check(call: ToolCall) -> str | None:
    return None if call.name in TOOLS else f"there is no tool named {call.name!r}."


def assembler(*, holding=Holding.NONE, limits=LIMITS, clock=lambda: 0.0):
    return ReplyAssembler(
        limits,
        check=check,
        risky=lambda call: call.name == "write_file",
        notes=END_NOTES,
        holding=holding,
        prompt_seconds=120.0,
        tools=TOOLS,
        clock=clock,
    )


def assemble(chunks, *, holding=Holding.NONE, ended="complete", limits=LIMITS):
    reader = assembler(holding=holding, limits=limits)
    events = [event for chunk in chunks for event in reader.feed(chunk)]
    end, reply = reader.finish(ended, retry_left=True)
    return events + end, reply


def merged(events):
    """Consecutive deltas joined, as the page's event log keeps them."""
    out = []
    for event in events:
        if out and continues(out[-1], event):
            out[-1] = replace(out[-1], text=out[-1].text + event.text)
        else:
            out.append(event)
    return out


def named(events, reply):
    """Events and calls with each new call id replaced by its order of appearance (ids are random)."""
    ids: dict[str, str] = {}

    def name(call_id):
        return ids.setdefault(call_id, f"call{len(ids)}")

    def renamed(item):
        if isinstance(item, ToolCallReady):
            return replace(item, call=replace(item.call, id=name(item.call.id)))
        if isinstance(item, ToolCall | InvalidCall):
            return replace(item, id=name(item.id))
        return replace(item, call_id=name(item.call_id)) if hasattr(item, "call_id") else item

    return [renamed(e) for e in merged(events)], [renamed(c) for c in reply.calls]


def split(text, cuts):
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in pairwise(bounds) if b > a]


# ---- the same reply however it is chunked ----

_WORDS = st.text(alphabet=st.sampled_from('ab <>/\n"{}'), max_size=12)
_READABLE = (
    tool_call_text("read_file", {"path": "notes.md"}),
    tool_call_text("write_file", {"path": "a.md", "content": 'line "one"\n</tool_call> is text here'}),
)
_CALLS = st.sampled_from(
    [*_READABLE, tool_call_text("delete_everything", {}), '<tool_call>{"name": "read_file", "arguments": </tool_call>']
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(_WORDS, _CALLS), max_size=5), st.data())
def test_a_text_protocol_reply_reads_the_same_however_it_is_chunked(parts, data):
    text = "".join(parts)
    cuts = data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=12)) if len(text) > 1 else set()
    whole, whole_reply = assemble([ChatChunk(content=text), ChatChunk(done=True)])
    chunked, chunked_reply = assemble([*(ChatChunk(content=p) for p in split(text, cuts)), ChatChunk(done=True)])

    assert named(chunked, chunked_reply) == named(whole, whole_reply)
    assert chunked_reply.message == whole_reply.message
    written = [json.loads(p.removeprefix("<tool_call>").removesuffix("</tool_call>")) for p in parts if p in _READABLE]
    assert [c.name for c in chunked_reply.calls if isinstance(c, ToolCall)] == [c["name"] for c in written]
    prose = "".join(p for p in parts if not p.startswith("<tool_call>"))  # no word can make a tag
    assert "".join(e.text for e in chunked if isinstance(e, TextDelta)) == prose
    # The text as written; the calls apart too when every call in it is usable (agent/request.py's to send).
    usable = written and all(p in _READABLE for p in parts if p.startswith("<tool_call>"))
    calls = [{"function": {"name": c["name"], "arguments": c["arguments"]}} for c in written]
    apart = {TEXT_CALLS: {"content": prose, "tool_calls": calls}} if usable else {}
    assert whole_reply.message == {"role": "assistant", "content": text} | apart


def test_a_fenced_call_stays_in_the_text_as_the_model_wrote_it_and_apart_without_the_prose_around_it():
    text = 'Let me look.\n```json\n{"name": "read_file", "arguments": {"path": "a.md"}}\n```\nThen I answer.'
    _, reply = assemble([ChatChunk(content=text), ChatChunk(done=True)])
    call = {"function": {"name": "read_file", "arguments": {"path": "a.md"}}}
    apart = {"content": "Let me look.\n\nThen I answer.", "tool_calls": [call]}
    assert reply.message == {"role": "assistant", "content": text, TEXT_CALLS: apart}
    assert [(c.name, c.arguments) for c in reply.calls] == [("read_file", {"path": "a.md"})]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([tool_call_text, xml_call_text]), st.data())
def test_a_call_the_server_holds_back_reads_the_same_however_its_tokens_come(write, data):
    arguments = {"path": "notes.md", "content": 'a "quoted"\nline'}
    held = write("write_file", arguments) + "\n" + write("read_file", {"path": "b.md"})
    cuts = data.draw(st.sets(st.integers(1, len(held) - 1), max_size=15))
    native = (NativeToolCall("write_file", arguments), NativeToolCall("read_file", {"path": "b.md"}))
    final = ChatChunk(done=True, tool_calls=native)

    def read(tokens):
        return assemble([ChatChunk(content="Sure.\n"), *(ChatChunk(token=t) for t in tokens), final])

    (whole, whole_reply), (chunked, chunked_reply) = read([held]), read(split(held, cuts))

    assert named(chunked, chunked_reply) == named(whole, whole_reply)
    assert chunked_reply.message == whole_reply.message
    events, calls = named(chunked, chunked_reply)
    assert [type(e) for e in events] == [
        TextDelta,
        ToolCallStarted,
        ToolCallProgress,
        ToolCallStarted,
        ToolCallProgress,
        ToolCallReady,  # each native call takes the panel that showed it: no third panel
        ToolCallReady,
    ]
    assert json.loads(events[2].text) == {"name": "write_file", "arguments": arguments}
    assert [(c.id, c.name) for c in calls] == [("call0", "write_file"), ("call1", "read_file")]
    assert [e.risky for e in events if isinstance(e, ToolCallReady)] == [True, False]
    assert chunked_reply.message["tool_calls"] == [
        {"function": {"name": "write_file", "arguments": arguments}},
        {"function": {"name": "read_file", "arguments": {"path": "b.md"}}},
    ]


# ---- what a reply says, and how it ends ----


def test_thinking_streams_then_ends_with_how_long_it_took():
    times = iter([10.0, 13.5])
    reader = assembler(clock=lambda: next(times))
    events = (
        reader.feed(ChatChunk(thinking="Hmm"))
        + reader.feed(ChatChunk(thinking=", yes."))
        + reader.feed(ChatChunk(content="Hello."))
    )
    _, reply = reader.finish("complete", retry_left=False)
    assert events == [ThinkingDelta("Hmm"), ThinkingDelta(", yes."), ThinkingDone(3.5), TextDelta("Hello.")]
    assert reply.message == {"role": "assistant", "content": "Hello.", "thinking": "Hmm, yes."}


def test_a_call_the_tools_refuse_is_invalid_with_their_words_and_gets_them_as_its_result():
    events, reply = assemble([ChatChunk(tool_calls=(NativeToolCall("rm", {}),), done=True)])
    (invalid,) = [e for e in events if isinstance(e, ToolCallInvalid)]
    assert invalid.error == "Error: there is no tool named 'rm'."
    assert reply.calls == [InvalidCall(invalid.call_id, "rm", invalid.error)]
    assert reply.final == ChatChunk(tool_calls=(NativeToolCall("rm", {}),), done=True)


def test_a_call_the_servers_parser_refused_is_asked_again_not_shown_as_an_error():
    reader = assembler(holding=Holding.SHOWN)
    started = reader.feed(ChatChunk(token='<tool_call>{"name": "read_file"'))
    assert reader.fail(ErrorLine("unexpected end of JSON input")) == []
    events, reply = reader.finish("error", retry_left=True)
    assert events == [
        ToolCallInvalid(
            started[0].call_id,
            '{"name": "read_file"',
            "Ollama could not read this tool call (unexpected end of JSON input), so it did not run. "
            "The model was asked to write it again.",
            retried=True,
        )
    ]
    assert (reply.ended, reply.rejected, reply.calls) == ("error", "unexpected end of JSON input", [])
    assert reply.message["content"] == "\n\n[This answer was cut off: Ollama could not read the tool call.]"


@pytest.mark.parametrize(
    ("holding", "error", "rejected"),
    [
        (Holding.SILENT, ErrorLine("bad call"), "bad call"),  # a call may have been written, unseen
        (Holding.SHOWN, ErrorLine("bad call"), None),  # nothing showed a call: an ordinary error
        (Holding.SILENT, StreamBroken("dropped"), None),
    ],
)
def test_an_error_line_is_a_refused_call_only_where_a_call_may_be_behind_it(holding, error, rejected):
    reader = assembler(holding=holding)
    reader.feed(ChatChunk(content="Let me"))
    events = reader.fail(error)
    _, reply = reader.finish("error", retry_left=True)
    assert reply.rejected == rejected
    assert events == ([] if rejected else [ErrorEvent(error.kind, error.values)])


def test_after_stop_the_open_call_is_neither_run_nor_closed_and_the_transcript_says_why():
    events, reply = assemble([ChatChunk(content='Ok. <tool_call>{"name": "read_file", "arg')], ended="stopped")
    assert [type(e) for e in events] == [TextDelta, ToolCallStarted, ToolCallProgress]
    assert reply.calls == []
    assert reply.message["content"].endswith("\n\n[This answer was cut off: the person pressed Stop.]")


def test_past_the_calls_limit_the_reply_is_cut_and_only_what_was_shown_runs():
    calls = tuple(NativeToolCall("read_file", {"path": f"{n}.md"}) for n in range(3))
    reader = assembler(limits=replace(LIMITS, calls=2))
    events = reader.feed(ChatChunk(tool_calls=calls, done=True))
    assert reader.cut is not None
    assert reader.cut.kind == "too_many_calls"
    end, reply = reader.finish("complete", retry_left=True)
    assert end == []
    assert [type(e) for e in events][-2:] == [ToolCallInvalid, Notice]
    refused = events[-2].call_id
    assert [c.id for c in reply.calls][-1] == refused
    assert isinstance(reply.calls[-1], InvalidCall)
    assert [c.name for c in reply.calls[:2]] == ["read_file", "read_file"]
    assert reply.message["tool_calls"][2] == {"function": {"name": "read_file", "arguments": {}}}  # not kept


def test_text_held_back_to_the_end_still_counts_against_the_reply_cap():
    reader = assembler(limits=replace(LIMITS, reply_chars=10))
    assert reader.feed(ChatChunk(content="0123456789<tool_")) == [TextDelta("0123456789")]  # "<tool_" may be a tag
    events, reply = reader.finish("complete", retry_left=True)
    assert [type(e) for e in events] == [ErrorEvent]
    assert reader.cut.kind == "reply_too_long"
    assert reply.message["content"] == "0123456789\n\n" + reader.cut.note
