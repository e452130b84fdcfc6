"""Work that grows with what the model or a web page sends, at today's size and ten times it, in the same run.

Run from the repository root: `python -m bench.bench_linear`. `run()` returns the markdown.

Issue 17 found regexes and a diff that were quadratic or worse in their input: a glob that froze the server,
a `<pre>` of spaces, a 170 KB edit's card and panel. Each row here times one of them at the size the issue
measured and at ten times that, best of a few runs: linear work takes about ten times as long at ten times
the size (quadratic work, a hundred times). The "before" column is the same case measured once with the code
before the fix, on this machine.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.report import machine, table
from meowgent.config import Settings
from meowgent.events import ApprovalNeeded, ToolCall, ToolCallProgress, ToolCallReady, ToolCallStarted
from meowgent.reply.parse import CallParseError, parse_tool_call
from meowgent.tools.extract import extract_markdown
from meowgent.tools.globs import MAX_GLOB_CHARS, Glob
from meowgent.tools.registry import run_tool
from meowgent.ui.html.safehtml import visible_lines
from meowgent.ui.state.approval import describe_queue
from meowgent.ui.state.livecall import LiveCall
from meowgent.ui.state.render import ChatView

REPEATS = 3
HOSTILE_PAIRS = 14
"""The glob of issue 17 is `*?` this many times, then `Q`."""


@dataclass(frozen=True)
class Case:
    name: str
    unit: str
    size: int
    """Today's size, in `unit`; the bench also runs ten times it."""
    prepare: Callable[[int], Callable[[], object]]
    """Given a size, whatever the timed call needs, made untimed; returns the call."""
    before: str


def _glob_listing(files: int) -> Callable[[], object]:
    root = Path(tempfile.mkdtemp(prefix="meowgent-bench-"))
    for n in range(files):
        folder = root / f"d{n // 1000}"
        folder.mkdir(exist_ok=True)
        (folder / f"{'x' * 36}{n:04d}").write_text("")
    settings = Settings(workspace=root)
    pattern = "*?" * HOSTILE_PAIRS + "Q"
    return lambda: run_tool("list_files", {"pattern": pattern, "limit": 1}, settings=settings)


def _glob_name(length: int) -> Callable[[], object]:
    matches, name = Glob("*?" * HOSTILE_PAIRS + "Q"), "a" * length
    return lambda: [matches(name) for _ in range(1_000)]


def _longest_glob(length: int) -> Callable[[], object]:
    """The longest glob allowed, made afresh each time so nothing it learned on an earlier name helps."""
    pattern, name = "*?" * ((MAX_GLOB_CHARS - 1) // 2) + "Q", "a" * length
    return lambda: Glob(pattern)(name)


def _page(make: Callable[[int], str]) -> Callable[[int], Callable[[], object]]:
    def prepare(size: int) -> Callable[[], object]:
        html = make(size)
        return lambda: extract_markdown(html, "https://example.test/")

    return prepare


_PROSE = "<p>" + "A sentence of the article, with some words in it. " * 30 + "</p>"


def _article(body: str) -> str:
    return f"<html><body><article>{_PROSE}{body}</article></body></html>"


def _pre_of_spaces(kb: int) -> str:
    return _article(f"<pre>{' ' * kb * 1000}x</pre>")


def _open_declaration(kb: int) -> str:
    return "<?xml" + " " * kb * 1000


def _broken_spaces(kb: int) -> str:
    return _article("<p>" + "\n\u00a0" * (kb * 500) + "</p>")


def _edit_hint(breaks: int) -> Callable[[], object]:
    root = Path(tempfile.mkdtemp(prefix="meowgent-bench-"))
    (root / "f.py").write_text("if x:\n    return 1\n")
    settings = Settings(workspace=root)
    return lambda: run_tool("edit_file", {"path": "f.py", "old": "\n" * breaks, "new": "y"}, settings=settings)


def _fenced_call(kb: int) -> Callable[[], object]:
    """A tool call's text that opens a Markdown fence and never closes it."""
    raw = "```" + " " * kb * 1000 + "x"

    def parse() -> object:
        try:
            return parse_tool_call(raw, call_id="c")
        except CallParseError as exc:  # the answer the model gets: not valid JSON
            return exc

    return parse


def _big_edit(lines: int) -> tuple[str, str]:
    """difflib's bad case: many equal lines against a few hundred others (85,000 lines is 170 KB)."""
    return "x\n" * lines, "x\ny\n" * (lines // 850)


def _edit_tool(lines: int) -> Callable[[], object]:
    root = Path(tempfile.mkdtemp(prefix="meowgent-bench-"))
    old, new = _big_edit(lines)
    settings = Settings(workspace=root)

    def edit() -> object:
        (root / "big.txt").write_text(old)
        return run_tool("edit_file", {"path": "big.txt", "old": old, "new": new}, settings=settings)

    return edit


def _edit_call(lines: int) -> ToolCall:
    old, new = _big_edit(lines)
    return ToolCall("c1", "edit_file", {"path": "big.txt", "old": old, "new": new})


def _card(lines: int) -> Callable[[], object]:
    calls = (_edit_call(lines),)
    return lambda: describe_queue(calls, Path(tempfile.gettempdir()))


def _panel(lines: int) -> Callable[[], object]:
    """The chat panel as a page draws it: the call streamed in 2,000-character pieces, then ready."""
    call = _edit_call(lines)
    raw = json.dumps({"name": call.name, "arguments": call.arguments})
    events = [
        ToolCallStarted(call.id),
        *(ToolCallProgress(call.id, raw[i : i + 2_000]) for i in range(0, len(raw), 2_000)),
        ToolCallReady(call, True),
        ApprovalNeeded((call,)),
    ]

    def draw() -> object:
        view = ChatView()
        for event in events:
            view.apply(event)
        return view.messages()

    return draw


def _live_call(kb: int) -> Callable[[], object]:
    """A write_file call read as it streams, in 16-character pieces (the live panel's reader)."""
    raw = json.dumps({"name": "write_file", "arguments": {"path": "a", "content": "0123456\n" * (kb * 128)}})

    def feed() -> object:
        call = LiveCall()
        for at in range(0, len(raw), 16):
            call.feed(raw[at : at + 16])
        return call

    return feed


def _progress_events(count: int) -> Callable[[], object]:
    """A streaming write_file's progress events applied to the chat's view one by one."""
    opening = ToolCallProgress("c1", '{"name": "write_file", "arguments": {"content": "')
    events = [ToolCallStarted("c1"), opening, *[ToolCallProgress("c1", "ab\\n")] * count]

    def apply() -> object:
        view = ChatView()
        for event in events:
            view.apply(event)
        return view

    return apply


def _command(copies: int) -> Callable[[], object]:
    command = ("echo safe" + "\n" * 40 + "touch x" + " " * 200) * copies
    return lambda: visible_lines(command)


CASES = [
    Case("list_files, glob `*?`×14 `Q`, names of 40 characters", "files", 1_000, _glob_listing, "days"),
    Case("the same glob against one name", "characters", 40, _glob_name, "183 s a name at 13 pairs"),
    Case("the longest glob allowed, `*?`×149 `Q`, new, against one name", "characters", 400, _longest_glob, "—"),
    Case("web page with a `<pre>` of spaces", "KB", 40, _page(_pre_of_spaces), "3.0 s (400 KB: 585 s)"),
    Case("web page starting with an unclosed `<?xml` and spaces", "KB", 40, _page(_open_declaration), "5.7 s"),
    Case("web page with line breaks between no-break spaces", "KB", 20, _page(_broken_spaces), "9.4 s"),
    Case("a tool call's text: an unclosed fence, then spaces", "KB", 20, _fenced_call, "3.0 s (200 KB: 51 s)"),
    Case("edit_file's hint on an `old` of line breaks", "line breaks", 20_000, _edit_hint, "2.5 s (200,000: 248 s)"),
    Case("edit_file of 170 KB (its result's diff)", "lines", 85_000, _edit_tool, "50 s"),
    Case("the approval card for that edit", "lines", 85_000, _card, "18 s (issue 17)"),
    Case("the chat panel for that edit, streamed then ready", "lines", 85_000, _panel, "5.7 s (issue 17)"),
    Case("a command's blank lines and blank space folded", "copies", 1_000, _command, "—"),
    Case("a write_file call read live in 16-character pieces", "KB", 100, _live_call, "—"),
    Case("a write_file's progress events applied to the chat", "events", 20_000, _progress_events, "—"),
]


def best_seconds(call: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def _seconds(value: float) -> str:
    if value < 0.001:
        return f"{value * 1_000_000:.0f} µs"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def run() -> str:
    rows = []
    for case in CASES:
        small, large = best_seconds(case.prepare(case.size)), best_seconds(case.prepare(case.size * 10))
        rows.append(
            [
                case.name,
                f"{case.size:,} {case.unit}",
                _seconds(small),
                f"{case.size * 10:,}",
                _seconds(large),
                f"{large / small:.1f}",
                case.before,
            ]
        )
    headers = ["case", "today's size", "time", "10× size", "time", "ratio", "before, today's size"]
    return (
        f"### Input-sized work at today's size and ten times it ({machine()})\n\n"
        f"Best of {REPEATS} runs each. A ratio near 10 is linear; the edit's diff stops comparing at a fixed "
        "work and says so, so its ratio is lower.\n\n" + table(headers, rows)
    )


if __name__ == "__main__":
    print(run())
