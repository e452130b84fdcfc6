"""LiveCall reads a streaming call's canonical JSON piece by piece: same result at every split, linear cost."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.ui.state.livecall import HEAD_CHARS, TAIL_CHARS, LiveCall, StreamedText

ARGUMENTS = {
    "path": 'a "quoted" \\ path.md',
    "content": "line one\nline two é 😀 \u202e\n\ttabbed\n",
    "count": 42,
    "flag": True,
    "nested": [1, {"x": "y}]", "z": None}],
    "empty": "",
}


def read(raw: str, pieces: list[int]) -> LiveCall:
    call, at = LiveCall(), 0
    for size in pieces:
        call.feed(raw[at : at + size])
        at += size
    call.feed(raw[at:])
    return call


def expected(value, *, ascii_only: bool) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=ascii_only)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 9), max_size=200), st.booleans())
def test_any_split_reads_the_same_name_and_arguments(pieces, ascii_only):
    raw = json.dumps({"name": "write_file", "arguments": ARGUMENTS}, ensure_ascii=ascii_only)
    call = read(raw, pieces)
    assert not call.broken
    assert call.name == "write_file"
    assert list(call.arguments) == list(ARGUMENTS)
    for key, value in ARGUMENTS.items():
        assert call.arguments[key].head() == expected(value, ascii_only=ascii_only), key
        assert call.arguments[key].raw is not isinstance(value, str)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.lists(st.integers(1, 5), max_size=60))
def test_any_string_decodes_exactly(text, pieces):
    raw = json.dumps({"name": "t", "arguments": {"s": text}})
    assert read(raw, pieces).arguments["s"].head() == text


def test_a_half_written_call_shows_what_is_there():
    call = LiveCall()
    call.feed('{"name": "run_shell", "arguments": {"command": "ls -la\\')
    assert call.name == "run_shell"
    assert call.arguments["command"].head() == "ls -la"
    call.feed("nwc -l")
    assert call.arguments["command"].head() == "ls -la\nwc -l"


def test_text_that_is_not_a_json_object_is_broken_not_an_error():
    for text in ("call read_file please", "[1, 2]", '{"name": "x",, }'):
        call = LiveCall()
        call.feed(text)
        assert call.broken


def test_a_long_argument_keeps_its_head_tail_line_count_and_last_lines():
    text = StreamedText()
    for i in range(10_000):
        text.add(f"row {i:05d}\n")
    assert text.length == 100_000
    assert text.lines == 10_000
    assert not text.whole
    assert len(text.head()) == HEAD_CHARS
    assert text.head().startswith("row 00000\n")
    assert len(text.tail()) == TAIL_CHARS
    assert text.last_lines(3) == ["row 09997", "row 09998", "row 09999"]


def test_one_huge_piece_is_kept_bounded():
    text = StreamedText()
    text.add("x" * 1_000_000 + "\nend")
    assert len(text.tail()) == TAIL_CHARS
    assert text.last_lines(1) == ["end"]
    assert text.lines == 2
