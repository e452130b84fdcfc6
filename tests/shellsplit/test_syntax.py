"""syntax: words read by bash's grammar, their literal values, glob detection in one pass."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.shellsplit.syntax import has_glob, word_of

# The pattern glob detection used before: right on every text, but quadratic on `{{{{...`.
QUADRATIC_GLOB = re.compile(r"[*?]|\[[^\0]*\]|\{[^\0]*(,|\.\.)[^\0]*\}")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="{}[],.*?a\0", max_size=30))
def test_glob_detection_agrees_with_the_pattern_it_replaces(text: str) -> None:
    assert has_glob(text) == bool(QUADRATIC_GLOB.search(text)), text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("rm", "rm"),
        ("'r''m'", "rm"),
        ('"rm"', "rm"),
        ("\\rm", "rm"),
        ("$'\\x72m'", "rm"),
        ("$x", None),
        ('"$x"', None),
        ("*.py", None),
        ("'*.py'", "*.py"),
        ("{a,b}", None),
        ("{1..3}", None),
        ("'{a,b}'", "{a,b}"),
        ("a[b]", None),
        ("{}", "{}"),
    ],
)
def test_literal_values(text: str, value: str | None) -> None:
    assert word_of(text).literal == value
    assert word_of(text).value == (text if value is None else value)
