"""shellwords: literal values, glob detection in one pass, problems as kinds with snippets."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.shellsplit.words import KINDS, Problem, Word, has_glob, literal

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
    assert literal(text) == value
    assert Word.of(text).value == (text if value is None else value)


def test_a_problem_is_a_known_kind_with_its_snippet_and_reads_as_a_sentence() -> None:
    assert str(Problem("runs_text", "flock -c")) == "`flock -c` runs a text as a new command line"
    assert all("{}" in sentence for sentence in KINDS.values())
    with pytest.raises(ValueError, match="unknown problem kind"):
        Problem("nonsense", "x")
