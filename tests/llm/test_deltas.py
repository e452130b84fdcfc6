"""ToolCallDeltas: OpenAI `delta.tool_calls` fragments → live call text and the calls, however they are split."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.llm.deltas import ToolCallDeltas
from meowgent.llm.types import NativeToolCall
from meowgent.reply.formats import CallOpened, CallPiece, CallTextReader

Fragment = tuple[int | None, str | None, str | None, str | None]


def run(fragments: list[Fragment]) -> tuple[str, tuple[NativeToolCall, ...]]:
    deltas = ToolCallDeltas()
    live = "".join(deltas.feed(*fragment) for fragment in fragments)
    rest, calls = deltas.finish()
    return live + rest, calls


def streamed(calls, *, cuts, same_index=False, name_with_empty=False) -> list[Fragment]:
    """The fragments a server sends for `calls` [(id, name, arguments)], arguments cut at `cuts`."""
    out: list[Fragment] = []
    for number, (call_id, name, arguments) in enumerate(calls):
        index = 0 if same_index else number
        text = json.dumps(arguments)
        out.append((index, call_id, name, "" if name_with_empty else None))
        points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
        out += [(index, None, None, text[a:b]) for a, b in itertools.pairwise(points) if b > a]
    return out


CALLS = [("c1", "write_file", {"path": "a.txt", "content": 'hi }{ "there" <tool_call>'}), ("c2", "read_file", {})]


def canonical(calls):
    return "".join(
        '<tool_call>{"name": ' + json.dumps(name) + ', "arguments": ' + json.dumps(arguments) + "}</tool_call>"
        for _, name, arguments in calls
    )


@given(cuts=st.lists(st.integers(0, 200), max_size=12), same_index=st.booleans(), empty=st.booleans())
def test_any_split_gives_the_same_calls_and_live_text(cuts, same_index, empty):
    live, calls = run(streamed(CALLS, cuts=cuts, same_index=same_index, name_with_empty=empty))
    assert calls == tuple(NativeToolCall(name, arguments) for _, name, arguments in CALLS)
    assert live == canonical(CALLS)


def test_the_live_text_reads_as_one_panel_per_call_through_the_family_reader():
    live, _ = run(streamed(CALLS, cuts=[3, 9, 17]))
    panels: list[str] = []
    for event in CallTextReader().feed(live):
        if isinstance(event, CallOpened):
            panels.append("")
        elif isinstance(event, CallPiece):
            panels[-1] += event.text
    assert [json.loads(panel) for panel in panels] == [
        {"name": name, "arguments": arguments} for _, name, arguments in CALLS
    ]


def test_whole_arguments_in_one_delta_and_a_name_first_with_empty_arguments():
    live, calls = run([(0, "x", "edit_file", ""), (0, None, None, '{"path": "b"}')])
    assert calls == (NativeToolCall("edit_file", {"path": "b"}),)
    assert live == '<tool_call>{"name": "edit_file", "arguments": {"path": "b"}}</tool_call>'


def test_a_new_id_at_the_same_index_starts_a_new_call():
    _, calls = run([(0, "a", "read_file", '{"path": "1"}'), (0, "b", "read_file", '{"path": "2"}')])
    assert [call.arguments["path"] for call in calls] == ["1", "2"]


@pytest.mark.parametrize("arguments", ['"a string"', "[1, 2]", '{"path": ', "not json"])
def test_arguments_that_are_not_a_json_object_are_refused(arguments):
    deltas = ToolCallDeltas()
    deltas.feed(0, "a", "read_file", arguments)
    with pytest.raises(ValueError, match="arguments are not"):
        deltas.finish()


def test_a_call_without_a_name_is_refused():
    deltas = ToolCallDeltas()
    deltas.feed(0, "a", None, "{}")
    with pytest.raises(ValueError, match="no name"):
        deltas.finish()
