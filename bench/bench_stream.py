"""ToolCallSplitter against the seed's re-scan algorithm, on write_file calls streamed in 4-character chunks."""

from __future__ import annotations

import json
import time

from bench.report import machine, table
from meowgent.events import TextDelta, ToolCallDelta, ToolCallDone
from meowgent.reply.splitter import ToolCallSplitter

SIZES = (16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024)
CHUNK = 4


class RescanSplitter:
    """The seed's approach: keep the whole text and re-scan all of it with `str.find` on every chunk."""

    def __init__(self, open_tag: str = "<tool_call>", close_tag: str = "</tool_call>") -> None:
        self._open, self._close = open_tag, close_tag
        self._text = ""
        self._prose_sent = 0
        self._call_sent: dict[int, int] = {}
        self._calls_done = 0

    def feed(self, chunk: str) -> list:
        self._text += chunk
        events: list = []
        prose, calls, position = [], [], 0
        while (start := self._text.find(self._open, position)) != -1:
            prose.append(self._text[position:start])
            end = self._text.find(self._close, start)
            body_end = len(self._text) if end == -1 else end
            calls.append((self._text[start + len(self._open) : body_end], end != -1))
            position = len(self._text) if end == -1 else end + len(self._close)
        prose.append(self._text[position:])
        text = "".join(prose)
        if len(text) > self._prose_sent:
            events.append(TextDelta(text[self._prose_sent :]))
            self._prose_sent = len(text)
        for index, (body, closed) in enumerate(calls):
            sent = self._call_sent.get(index, 0)
            if len(body) > sent:
                events.append(ToolCallDelta(body[sent:]))
                self._call_sent[index] = len(body)
            if closed and index >= self._calls_done:
                events.append(ToolCallDone(body.strip()))
                self._calls_done = index + 1
        return events


def stream_text(size: int) -> str:
    content = ("All work and no play makes Jack a dull boy. 貓咪 🐱\n" * (size // 40 + 1))[:size]
    # As local models write it: non-ASCII as is, newlines escaped.
    call = json.dumps({"name": "write_file", "arguments": {"path": "notes.md", "content": content}}, ensure_ascii=False)
    return f"I'll write it now.\n<tool_call>{call}</tool_call>\nDone."


def time_feed(splitter, text: str) -> tuple[float, list[str]]:
    """Seconds to feed `text` in chunks, and the finished calls' raw text (to check both agree)."""
    started = time.perf_counter()
    calls = []
    for start in range(0, len(text), CHUNK):
        calls += [e.raw for e in splitter.feed(text[start : start + CHUNK]) if isinstance(e, ToolCallDone)]
    return time.perf_counter() - started, calls


def run(*, rescan_limit: int = 1024 * 1024) -> str:
    rows = []
    for size in SIZES:
        text = stream_text(size)
        ours, our_calls = time_feed(ToolCallSplitter(), text)
        if size <= rescan_limit:
            theirs, their_calls = time_feed(RescanSplitter(), text)
            assert our_calls == their_calls, "both must find the same call"
            rescan, ratio = f"{theirs:.3f}", f"{theirs / ours:.0f}×"
        else:
            rescan, ratio = "skipped", ""
        rows.append(
            [f"{size // 1024} KB", f"{len(text) // CHUNK:,}", f"{ours:.3f}", f"{ours / size * 1e9:.0f}", rescan, ratio]
        )
    return f"### Stream splitter: one write_file call in {CHUNK}-character chunks ({machine()})\n\n" + table(
        ["call size", "chunks", "ours (s)", "ours (ns/char)", "re-scan (s)", "speed-up"], rows
    )


if __name__ == "__main__":
    print(run())
