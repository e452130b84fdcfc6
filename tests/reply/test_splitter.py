import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.events import TextDelta, ToolCallDelta, ToolCallDone
from meowgent.reply.splitter import ToolCallSplitter


def split(chunks):
    """Feed chunks, return (joined prose, list of (raw, complete), joined deltas per call)."""
    splitter = ToolCallSplitter()
    events = [event for chunk in chunks for event in splitter.feed(chunk)] + splitter.close()
    prose = "".join(e.text for e in events if isinstance(e, TextDelta))
    calls = [(e.raw, e.complete) for e in events if isinstance(e, ToolCallDone)]
    deltas, current = [], []
    for event in events:
        if isinstance(event, ToolCallDelta):
            current.append(event.text)
        elif isinstance(event, ToolCallDone):
            deltas.append("".join(current))
            current = []
    return prose, calls, deltas


def call(name, **arguments):
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "</tool_call>"


def every_split(text):
    for cut in range(len(text) + 1):
        yield [text[:cut], text[cut:]]


def test_prose_only_passes_through():
    assert split(["Hello, ", "world"]) == ("Hello, world", [], [])


def test_one_call_between_prose():
    text = "Let me look." + call("read_file", path="a.txt") + " Done."
    prose, calls, _ = split([text])
    assert prose == "Let me look. Done."
    assert calls == [('{"name": "read_file", "arguments": {"path": "a.txt"}}', True)]


@pytest.mark.parametrize("chunks", list(every_split("Hi " + call("list_files", path=".") + " after")))
def test_tags_split_at_every_offset(chunks):
    assert split(chunks) == split(["Hi " + call("list_files", path=".") + " after"])
    assert split(chunks)[1][0][1] is True


def test_deltas_carry_only_new_text_and_join_to_the_raw_call():
    splitter = ToolCallSplitter()
    body = '{"name": "write_file", "arguments": {"path": "n.md", "content": "abcdefgh"}}'
    events = splitter.feed("<tool_call>")
    for start in range(0, len(body), 4):
        events += splitter.feed(body[start : start + 4])
    events += splitter.feed("</tool_call>") + splitter.close()
    deltas = [e.text for e in events if isinstance(e, ToolCallDelta)]
    assert all(len(d) <= 4 for d in deltas)
    assert "".join(deltas) == body
    assert events[-1] == ToolCallDone(body, True)


@pytest.mark.parametrize("text", ["<b>bold</b>", "a < b and c > d", "ends with <to", "<tool_cal", "<<tool_call"])
def test_look_alike_text_is_released(text):
    prose, calls, _ = split(list(text))
    assert (prose, calls) == (text, [])


def test_look_alike_is_released_as_soon_as_it_cannot_be_the_tag():
    splitter = ToolCallSplitter()
    assert splitter.feed("a <to") == [TextDelta("a ")]
    assert splitter.feed("p") == [TextDelta("<top")]


def test_close_tag_inside_a_json_string_does_not_end_the_call():
    doc = 'Write <tool_call>{"name": ...}</tool_call> to call a tool. He said "hi\\"</tool_call>".'
    text = call("write_file", path="PROTOCOL.md", content=doc) + "tail"
    prose, calls, _ = split(list(text))
    assert prose == "tail"
    assert len(calls) == 1
    assert json.loads(calls[0][0])["arguments"]["content"] == doc


def test_unclosed_call_is_reported_once_as_incomplete_and_never_leaks_as_prose():
    prose, calls, _ = split(["Sure. <tool_call>", '{"name": "run_shell", "argu'])
    assert prose == "Sure. "
    assert calls == [('{"name": "run_shell", "argu', False)]


def test_stream_ending_inside_a_close_tag_keeps_the_text_in_the_call():
    prose, calls, _ = split(['<tool_call>{"name": "x"}</tool_'])
    assert prose == ""
    assert calls == [('{"name": "x"}</tool_', False)]


def test_several_calls_cjk_emoji_and_escapes():
    text = (
        "我來看看 🐱"
        + call("read_file", path="筆記.md")
        + "然後"
        + call("write_file", path="e.txt", content='tab\t"quote" \\ back \u00e9 😀')
        + "完成 ✅"
    )
    prose, calls, _ = split([text])
    assert prose == "我來看看 🐱然後完成 ✅"
    assert [json.loads(raw)["arguments"] for raw, _ in calls] == [
        {"path": "筆記.md"},
        {"path": "e.txt", "content": 'tab\t"quote" \\ back \u00e9 😀'},
    ]


def test_splitter_can_be_reused_after_close():
    splitter = ToolCallSplitter()
    splitter.feed("<tool_call>{")
    splitter.close()
    assert splitter.feed("plain") == [TextDelta("plain")]


def test_custom_tags():
    splitter = ToolCallSplitter("[[", "]]")
    events = splitter.feed("a[[x]]b") + splitter.close()
    assert events == [TextDelta("a"), ToolCallDelta("x"), ToolCallDone("x", True), TextDelta("b")]


# ---- properties ----

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6,
)
prose_text = st.text(alphabet=st.sampled_from(list('ab <>/_tolc"\\\n我😀{}')), max_size=30)
calls_text = st.builds(
    lambda name, arguments: call(name, **arguments),
    st.sampled_from(["read_file", "write_file"]),
    st.dictionaries(st.sampled_from(["path", "content"]), json_values, max_size=2),
)
streams = st.lists(st.one_of(prose_text, calls_text), max_size=6).map("".join)


@st.composite
def chunked(draw):
    text = draw(streams)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(chunked())
def test_any_chunking_gives_the_same_prose_and_calls(case):
    text, chunks = case
    assert split(chunks) == split([text])


@given(st.lists(st.one_of(prose_text.filter(lambda t: "<tool_call>" not in t), calls_text), max_size=6))
def test_calls_round_trip_and_prose_is_everything_else(parts):
    prose, calls, deltas = split(list("".join(parts)))
    expected_calls = [p[len("<tool_call>") : -len("</tool_call>")] for p in parts if p.startswith("<tool_call>{")]
    joined_prose = "".join(p for p in parts if not p.startswith("<tool_call>{"))
    if "<tool_call>" in joined_prose:  # prose pieces that meet can form a tag; skip that rare case
        return
    assert [raw for raw, _ in calls] == [c.strip() for c in expected_calls]
    assert deltas == expected_calls
    assert prose == joined_prose
