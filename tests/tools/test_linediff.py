"""The bounded line diff: a diff that rebuilds both sides, minimal while within its work, and linear past it."""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.tools.linediff import unified_diff

texts = st.lists(st.sampled_from(["a", "b", "c", "", "  d"]), max_size=14).map("\n".join)
HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def sides(lines: list[str]) -> tuple[list[str], list[str]]:
    """The old and new lines a diff's hunks show."""
    body = [line for line in lines[2:] if not line.startswith("@@")]
    return [line[1:] for line in body if line[0] in " -"], [line[1:] for line in body if line[0] in " +"]


def shortest(a: list[str], b: list[str]) -> int:
    """Lines removed plus lines added by a shortest diff: both lengths less twice the longest common subsequence."""
    common = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            common[i][j] = common[i + 1][j + 1] + 1 if a[i] == b[j] else max(common[i + 1][j], common[i][j + 1])
    return len(a) + len(b) - 2 * common[0][0]


@settings(max_examples=1000, deadline=None)
@given(old=texts, new=texts, work=st.sampled_from([1, 20, 1_000_000]))
def test_the_diff_rebuilds_both_sides_and_is_shortest_when_exact(old: str, new: str, work: int) -> None:
    a, b = old.splitlines(), new.splitlines()
    whole = unified_diff(old, new, before="x", after="y", context=len(a) + len(b), work=work)
    if a == b:
        assert whole.lines == []
        return
    assert whole.lines[:2] == ["--- x", "+++ y"]
    assert sides(whole.lines) == (a, b)
    changed = sum(line[0] in "+-" for line in whole.lines[3:])
    if whole.exact:
        assert changed == shortest(a, b)
    else:  # all of the changed middle, removed and added
        assert changed >= shortest(a, b)


@settings(max_examples=500, deadline=None)
@given(old=texts, new=texts)
def test_each_hunk_header_counts_its_lines_and_context_is_at_most_three(old: str, new: str) -> None:
    lines = unified_diff(old, new, before="x", after="y").lines
    hunks = [i for i, line in enumerate(lines) if line.startswith("@@")]
    for start, end in zip(hunks, [*hunks[1:], len(lines)][: len(hunks)], strict=True):
        old_count, new_count = (int(n) if n is not None else 1 for n in HUNK.fullmatch(lines[start]).group(2, 4))
        body = lines[start + 1 : end]
        assert sum(line[0] in " -" for line in body) == old_count
        assert sum(line[0] in " +" for line in body) == new_count
        lead = next(i for i, line in enumerate(body) if line[0] != " ")
        assert lead <= 3


def test_a_small_change_reads_as_diff_u_does() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 21))
    new = old.replace("line 10\n", "line ten\n")
    ours = unified_diff(old, new, before="a/f", after="b/f")
    assert ours.exact
    assert ours.lines == list(difflib.unified_diff(old.splitlines(), new.splitlines(), "a/f", "b/f", lineterm=""))
    assert ours.lines[2] == "@@ -7,7 +7,7 @@"


def test_difflibs_worst_case_at_ten_times_its_size_is_answered_whole() -> None:
    """85,000 equal lines against 99 pairs took difflib 50 s; here 850,000 against 990, in bounded work."""
    old, new = "x\n" * 850_000, "x\ny\n" * 990
    diff = unified_diff(old, new, before="x", after="y")
    assert not diff.exact
    assert diff.lines[2] == "@@ -1,850000 +1,1980 @@"  # the first line is the same, so it is the context
    assert sides(diff.lines) == (["x"] * 850_000, ["x", "y"] * 990)


def test_a_long_change_with_lines_in_common_is_still_exact_when_the_changes_are_few() -> None:
    old = "\n".join(f"row {n}" for n in range(20_000))
    new = "\n".join(f"row {n}" if n % 100 else f"row {n} changed" for n in range(20_000))
    diff = unified_diff(old, new, before="x", after="y")
    assert diff.exact
    assert sum(line.startswith("+") for line in diff.lines[2:]) == 200


def test_sides_with_no_line_in_common_are_exact_without_a_search() -> None:
    diff = unified_diff(
        "\n".join(f"a{n}" for n in range(50_000)),
        "\n".join(f"b{n}" for n in range(50_000)),
        before="x",
        after="y",
        work=1,
    )
    assert diff.exact
    assert diff.lines[2] == "@@ -1,50000 +1,50000 @@"
