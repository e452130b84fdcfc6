"""ToolCallSplitter: separate `<tool_call>...</tool_call>` blocks from prose as a reply streams.

Incremental and I/O-free, like httpx's LineDecoder: `feed(chunk)` returns the events that
chunk completes, `close()` ends the stream. Each character is scanned O(1) times: the
scanner jumps between interesting characters with C-level searches, and the only text it
holds back is a possible tag prefix (shorter than the tag).
"""

from __future__ import annotations

import re

from meowgent.events import TextDelta, ToolCallDelta, ToolCallDone
from meowgent.reply.scan import JsonString, partial_tag

SplitterEvent = TextDelta | ToolCallDelta | ToolCallDone


class ToolCallSplitter:
    """Splits streamed model text into prose and raw tool-call text.

    Invariants: for any chunking of the same input, the joined `TextDelta` texts and the
    list of `ToolCallDone` events are the same. A close tag inside a JSON string does not
    end a call.
    """

    def __init__(self, open_tag: str = "<tool_call>", close_tag: str = "</tool_call>") -> None:
        self._open_tag = open_tag
        self._close_tag = close_tag
        # Outside JSON strings only a quote or the close tag's first character matters.
        self._outside_string = re.compile("|".join(re.escape(c) for c in {'"', close_tag[0]}))
        self._in_call = False
        self._held = ""  # a tail that may still turn out to be a tag
        self._call_parts: list[str] = []
        self._string = JsonString()
        self._out: list[SplitterEvent] = []

    def feed(self, chunk: str) -> list[SplitterEvent]:
        """Consume the next piece of the stream and return what it completes."""
        if not self._held and chunk:
            # Fast paths for chunks that cannot change state: most prose has no tag's first character,
            # and most of a big call is the inside of one JSON string.
            if not self._in_call and self._open_tag[0] not in chunk:
                return [TextDelta(chunk)]
            if self._string.inside and '"' not in chunk:
                self._string.pass_over(chunk)
                self._call_parts.append(chunk)
                return [ToolCallDelta(chunk)]
        data = self._held + chunk
        self._held = ""
        position = 0
        while position < len(data):
            position = self._scan_call(data, position) if self._in_call else self._scan_text(data, position)
        return self._take()

    def close(self) -> list[SplitterEvent]:
        """End of stream: release held text, and report a call left open as incomplete."""
        held, self._held = self._held, ""
        if self._in_call:
            self._call_text(held)
            self._finish_call(complete=False)
        else:
            self._text(held)
        return self._take()

    def _scan_text(self, data: str, start: int) -> int:
        tag = self._open_tag
        candidate = data.find(tag[0], start)
        while candidate != -1:
            if data.startswith(tag, candidate):
                self._text(data[start:candidate])
                self._in_call = True  # the last call ended outside any string: `_string` is ready for this one
                return candidate + len(tag)
            if partial_tag(data, candidate, (tag,)):
                self._text(data[start:candidate])
                self._held = data[candidate:]
                return len(data)
            candidate = data.find(tag[0], candidate + 1)
        self._text(data[start:])
        return len(data)

    def _scan_call(self, data: str, start: int) -> int:
        tag = self._close_tag
        position = start
        while position < len(data):
            if self._string.inside:
                position = self._string.skip(data, position)
                continue
            found = self._outside_string.search(data, position)
            if found is None:
                break
            if found.group() == '"':
                self._string.enter()
                position = found.end()
                continue
            candidate = found.start()
            if data.startswith(tag, candidate):
                self._call_text(data[start:candidate])
                self._finish_call(complete=True)
                return candidate + len(tag)
            if partial_tag(data, candidate, (tag,)):
                self._call_text(data[start:candidate])
                self._held = data[candidate:]
                return len(data)
            position = candidate + 1
        self._call_text(data[start:])
        return len(data)

    def _text(self, text: str) -> None:
        if not text:
            return
        if self._out and isinstance(self._out[-1], TextDelta):
            text = self._out.pop().text + text
        self._out.append(TextDelta(text))

    def _call_text(self, text: str) -> None:
        if not text:
            return
        self._call_parts.append(text)
        if self._out and isinstance(self._out[-1], ToolCallDelta):
            text = self._out.pop().text + text
        self._out.append(ToolCallDelta(text))

    def _finish_call(self, *, complete: bool) -> None:
        self._out.append(ToolCallDone("".join(self._call_parts).strip(), complete))
        self._call_parts = []
        self._in_call = False

    def _take(self) -> list[SplitterEvent]:
        out, self._out = self._out, []
        return out
