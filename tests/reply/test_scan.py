"""The scanner every reply reader shares: JSON strings skipped piece by piece, and tags held back when cut in two."""

import json

from hypothesis import given
from hypothesis import strategies as st

from meowgent.reply.scan import JsonString, held_from, partial_tag

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
