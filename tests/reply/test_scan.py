"""The scanner every reply reader shares: JSON strings skipped piece by piece, where a JSON value ends, and tags held
back when cut in two."""

import json
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from meowgent.reply import scan
from meowgent.reply.scan import JsonString, JsonValue, held_from, partial_tag

_VALUES = st.text(alphabet=st.sampled_from('ab"\\/{}<>n \n'), max_size=30)


def string_ends(text: str, cuts: list[int]) -> list[int]:
    """Where each string of `text` (a JSON document) ends, read in the pieces between `cuts`."""
    string, ends, offset = JsonString(), [], 0
    for start, stop in zip([0, *cuts], [*cuts, len(text)], strict=True):
        piece, position = text[start:stop], 0
        while position < len(piece):
            if string.inside:
                position = string.skip(piece, position)
                if not string.inside:
                    ends.append(offset + position)
            elif piece[position] == '"':
                string.enter()
                position += 1
            else:
                position += 1
        offset += len(piece)
    return ends


@given(st.lists(_VALUES, max_size=4), st.data())
def test_strings_end_at_their_closing_quote_however_the_text_is_cut(values, data):
    text = json.dumps({"arguments": values, "end": "</tool_call>"})
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8)))
    whole = string_ends(text, [])
    assert string_ends(text, cuts) == whole
    assert all(text[end - 1] == '"' for end in whole)
    assert len(whole) == len(values) + 3  # the two keys, the values and "</tool_call>", which is data


def test_a_backslash_at_the_end_of_a_piece_escapes_the_first_character_of_the_next():
    string = JsonString()
    string.enter()
    assert string.skip("ab\\", 0) == 3
    assert string.inside
    assert string.escaped
    assert string.skip('"still inside"', 0) == len('"still inside"')
    assert not string.inside


@given(st.text(alphabet=st.sampled_from('ab\\"'), min_size=1, max_size=30), st.data())
def test_a_piece_without_a_quote_is_passed_over_as_skip_would_read_it(inside, data):
    """The splitter's fast path: a piece with no quote cannot end the string, whatever escapes it holds."""
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(inside) - 1)), max_size=8)))
    fast, slow = JsonString(), JsonString()
    fast.enter()
    slow.enter()
    for piece in (inside[a:b] for a, b in zip([0, *cuts], [*cuts, len(inside)], strict=True) if b > a):
        if '"' in piece:
            break  # the string may end in it: only skip reads it
        fast.pass_over(piece)
        assert slow.skip(piece, 0) == len(piece)
        assert (fast.inside, fast.escaped) == (slow.inside, slow.escaped)


def test_a_partial_tag_is_only_a_proper_prefix_at_the_end():
    assert partial_tag("text <tool_", 5, ("<tool_call>",))
    assert not partial_tag("text <tool_call>", 5, ("<tool_call>",))  # the whole tag is not held, it is read
    assert not partial_tag("text <b>", 5, ("<tool_call>",))
    assert partial_tag("x </param", 2, ("<parameter=", "</parameter>"))


@given(st.text(alphabet=st.sampled_from("<|cal>end/x"), max_size=20))
def test_the_held_tail_is_the_earliest_start_that_may_still_become_a_tag(text):
    tags = ("<|call|>", "<|end|>")
    held = held_from(text, 0, tags)
    assert all(not partial_tag(text, start, tags) for start in range(held))
    assert held == len(text) or partial_tag(text, held, tags)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.sampled_from('ab"\\{}[]/n \n'), max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)
_NOISE = st.text(alphabet=st.sampled_from('ab"\\{}[]: \n'), max_size=40)


def pieces(text: str, cuts: list[int]) -> list[str]:
    return [text[start:stop] for start, stop in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def value_end(text: str, cuts: list[int]) -> int | None:
    """Where `JsonValue` says the value at the start of `text` ends, read in the pieces between `cuts`."""
    value, offset = JsonValue(), 0
    for piece in pieces(text, cuts):
        end = value.end(piece, 0)
        if end is not None:
            return offset + end
        offset += len(piece)
    return None


def cuts_of(text: str, data: st.DataObject) -> list[int]:
    return sorted(data.draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=8)))


@given(st.lists(_JSON, max_size=3) | st.dictionaries(st.text(max_size=3), _JSON, max_size=3), _NOISE, st.data())
def test_an_object_or_array_ends_at_its_closer_however_the_text_is_cut(value, after, data):
    """What follows the value (a fence, prose, a stray brace) is never part of it."""
    written = json.dumps(value, ensure_ascii=False)
    text = written + after
    assert value_end(text, cuts_of(text, data)) == len(written)


@given(_NOISE | st.text(max_size=40), st.data())
def test_any_text_gives_one_end_however_it_is_cut_and_never_raises(text, data):
    assert value_end(text, cuts_of(text, data)) == value_end(text, [])


def test_a_stray_closer_ends_the_value_there_rather_than_leaving_the_reader_inside_it():
    assert value_end('] {"name": "x"}', []) == 1
    assert value_end('{"a": 1]} more', []) == len('{"a": 1]')
    assert value_end('{"a": "}]"}}', []) == len('{"a": "}]"}')


def lines_run(call) -> int:
    """How many lines of scan.py run while `call` does: the scanner's work, counted rather than timed."""
    count = 0
    source = Path(scan.__file__).resolve()

    def trace(frame, event, arg):
        nonlocal count
        if Path(frame.f_code.co_filename).resolve() != source:
            return None
        if event == "line":
            count += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(previous)
    return count


@given(_NOISE, st.integers(1, 40), st.data())
def test_the_scanner_does_constant_work_per_character_and_per_piece(unit, copies, data):
    """Linear: a few lines per mark it stops at and per piece, however the text repeats or is cut (no re-reading)."""
    text = unit * copies
    cuts = cuts_of(text, data)
    lines = lines_run(lambda: value_end(text, cuts))
    assert lines <= 16 * (len(text) + len(cuts) + 1)
