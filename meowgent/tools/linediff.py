"""A unified line diff with a bound on its work, for edit_file's result and for the page.

difflib's matcher is quadratic, and worse, on some inputs: 85,000 equal lines against 200 took it 50 s.
Here the lines both sides share at the start and at the end are set aside first (an edit touches one
place, so this is most of a file), then Myers' algorithm, the one git uses, compares what is left in
at most O((N + M) × D) steps for D changed lines. When the search passes `WORK` steps, the changed part
is given as all its old lines removed and all its new lines added, and the diff says it is not exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

WORK = 1_000_000
"""The most steps spent comparing lines: about a quarter of a second."""
CONTEXT = 3
"""Unchanged lines shown around each change, as `diff -u`."""

Run = tuple[bool, int, int, int, int]
"""(same, i1, i2, j1, j2): old lines i1:i2 become new lines j1:j2; equal lines when `same`, else a change."""


@dataclass(frozen=True)
class LineDiff:
    lines: list[str]
    """`--- before`, `+++ after`, then hunks: `@@ -1,2 +1,2 @@` and lines marked ' ', '-' or '+'; empty when
    the lines are the same."""
    exact: bool
    """False when the changed part was too big to compare line by line: then all of its old lines show as
    removed and all of its new lines as added, even those both sides have."""


def unified_diff(old: str, new: str, *, before: str, after: str, context: int = CONTEXT, work: int = WORK) -> LineDiff:
    """The lines of `old` and `new` compared, as `diff -u` shows them, in at most about `work` steps."""
    a, b = old.splitlines(), new.splitlines()
    runs, exact = _runs(a, b, work)
    lines = []
    for hunk in _hunks(runs, context):
        if not lines:
            lines += [f"--- {before}", f"+++ {after}"]
        first, last = hunk[0], hunk[-1]
        lines.append(f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@")
        for same, i1, i2, j1, j2 in hunk:
            if same:
                lines += [" " + line for line in a[i1:i2]]
            else:
                lines += ["-" + line for line in a[i1:i2]]
                lines += ["+" + line for line in b[j1:j2]]
    return LineDiff(lines, exact)


def _runs(a: list[str], b: list[str], work: int) -> tuple[list[Run], bool]:
    """The runs of equal and changed lines that turn `a` into `b`, and whether they are a minimal diff."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    runs: list[Run] = [(True, 0, start, 0, start)] if start else []
    middle, exact = _middle(a[start:end_a], b[start:end_b], work)
    runs += [(same, start + i1, start + i2, start + j1, start + j2) for same, i1, i2, j1, j2 in middle]
    if end_a < len(a):
        runs.append((True, end_a, len(a), end_b, len(b)))
    return runs, exact


def _middle(a: list[str], b: list[str], work: int) -> tuple[list[Run], bool]:
    """The runs that turn `a` into `b` (which differ at both ends), and whether they are a minimal diff."""
    if not a and not b:
        return [], True
    whole: list[Run] = [(False, 0, len(a), 0, len(b))]
    old, new = _numbered(a, b)
    if set(old).isdisjoint(new):  # nothing in common (one side may be empty): the change is all of both
        return whole, True
    steps = _myers(old, new, work=work)
    return (whole, False) if steps is None else (steps, True)


def _numbered(a: list[str], b: list[str]) -> tuple[list[int], list[int]]:
    """Each distinct line as a number, so a comparison costs the same however long the lines are."""
    numbers: dict[str, int] = {}
    old = [numbers.setdefault(line, len(numbers)) for line in a]
    return old, [numbers.setdefault(line, len(numbers)) for line in b]


def _myers(a: list[int], b: list[int], *, work: int) -> list[Run] | None:
    """A shortest edit script from `a` to `b` as runs (Myers 1986, greedy forward search), or None once the
    search has taken `work` steps (it takes O((N + M) × D) for D changes, far fewer on most texts)."""
    n, m = len(a), len(b)
    furthest = {1: 0}  # by diagonal k = x - y: the furthest x reached with d changes
    trace = []
    spent = 0
    for d in range(n + m + 1):
        trace.append(dict(furthest))
        spent += d + 1
        for k in range(-d, d + 1, 2):
            down = k == -d or (k != d and furthest[k - 1] < furthest[k + 1])
            x = furthest[k + 1] if down else furthest[k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            spent += x - start
            furthest[k] = x
            if x >= n and y >= m:
                return _script(trace, n, m)
        if spent > work:
            return None
    return None  # not reached: n + m changes always suffice


def _script(trace: list[dict[int, int]], n: int, m: int) -> list[Run]:
    """The runs of the path the search found, walked back from its end."""
    steps: list[Run] = []  # one line each, from the end back
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        furthest = trace[d]
        k = x - y
        down = k == -d or (k != d and furthest[k - 1] < furthest[k + 1])
        previous_k = k + 1 if down else k - 1
        previous_x = furthest[previous_k]
        previous_y = previous_x - previous_k
        while x > previous_x and y > previous_y:
            x, y = x - 1, y - 1
            steps.append((True, x, x + 1, y, y + 1))
        if d:  # down: a line of b added (x stays); right: a line of a removed (y stays)
            steps.append((False, previous_x, x, previous_y, y))
        x, y = previous_x, previous_y
    runs: list[Run] = []
    for same, i1, i2, j1, j2 in reversed(steps):
        if runs and runs[-1][0] == same:
            runs[-1] = (same, runs[-1][1], i2, runs[-1][3], j2)
        else:
            runs.append((same, i1, i2, j1, j2))
    return runs


def _hunks(runs: list[Run], context: int) -> Iterator[list[Run]]:
    """The runs in hunks, as `diff -u` groups them: each change with up to `context` equal lines around it,
    and two changes in one hunk when fewer than twice that many lines are between them."""
    if not any(not same for same, *_ in runs):
        return
    runs = list(runs)
    if runs[0][0]:
        same, i1, i2, j1, j2 = runs[0]
        runs[0] = (same, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if runs[-1][0]:
        same, i1, i2, j1, j2 = runs[-1]
        runs[-1] = (same, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    hunk: list[Run] = []
    for same, i1, i2, j1, j2 in runs:
        if same and i2 - i1 > 2 * context and hunk:
            hunk.append((same, i1, i1 + context, j1, j1 + context))
            yield hunk
            hunk = []
            i1, j1 = i2 - context, j2 - context
        hunk.append((same, i1, i2, j1, j2))
    yield hunk


def _span(start: int, stop: int) -> str:
    """A hunk's line range as `diff -u` writes it: `3` for one line, `3,4` for more, `2,0` for none after line 2."""
    if stop - start == 1:
        return str(start + 1)
    return f"{start + (1 if stop > start else 0)},{stop - start}"
