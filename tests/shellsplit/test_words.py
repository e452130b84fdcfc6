"""words: problems as kinds with snippets."""

from __future__ import annotations

import pytest

from meowgent.shellsplit.words import KINDS, Problem


def test_a_problem_is_a_known_kind_with_its_snippet_and_reads_as_a_sentence() -> None:
    assert str(Problem("runs_text", "flock -c")) == "`flock -c` runs a text as a new command line"
    assert all("{}" in sentence for sentence in KINDS.values())
    with pytest.raises(ValueError, match="unknown problem kind"):
        Problem("nonsense", "x")
