"""FencedCalls: tool calls that a small model writes as a fenced JSON block in its prose, read as they stream.

Qwen2.5-Coder 0.5B and 1.5B, given tools natively by llama-server, write no native call: they answer

    ```json
    {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}
    ```

or that object alone, unfenced, as the whole reply. A block (or a reply that starts with `{`) is a call only when its
object starts with the name of a tool this chat offers and goes on with an `arguments` (or `parameters`) object, so
JSON in an answer that names no tool, or names one without arguments, stays prose. The header is at most a few dozen
characters, so that is all the text held back before the block is known to be a call or prose; from then on the call's
JSON streams out as `ToolCallDelta`s (the live panel) and ends as a `ToolCallDone`, exactly as a `<tool_call>` block
from `ToolCallSplitter` does, and the agent gates it the same.

Incremental and I/O-free like the splitter: it reads the splitter's prose, and whatever the chunking, the joined
text and the calls are the same. Each character is looked at O(1) times (a header is re-read at most until it is
`HEADER_CAP` long).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import Enum, auto

from meowgent.events import TextDelta, ToolCallDelta, ToolCallDone
from meowgent.reply.scan import JsonValue, held_from

FenceEvent = TextDelta | ToolCallDelta | ToolCallDone

FENCE = "```"
HEADER_CAP = 200
"""Longest header read before a block is called prose: a fence, a language, spaces, `{"name": "…", "arguments": {`."""
_LANGUAGES = frozenset({"", "json", "tool_call", "tool_code"})
_LANGUAGE = re.compile(r"[ \t]*([A-Za-z_]*)[ \t]*")
_SPACE = re.compile(r"\s*")
_NAME = re.compile(r'"([\w.-]*)("?)')
_ARGUMENT_KEYS = ('"arguments"', '"parameters"')


class _State(Enum):
    PROSE = auto()
    HEADER = auto()  # after a fence: a call or prose, not known yet
    BLOCK = auto()  # inside a fenced block that is not a call, up to the fence that closes it
    CALL = auto()
    AFTER_CALL = auto()  # the call's object closed: its closing fence is dropped, if it comes


class _Verdict(Enum):
    CALL = auto()
    MORE = auto()
    PROSE = auto()


class FencedCalls:
    """Splits prose into prose and the raw JSON of fenced calls to the tools named in `tools`."""

    def __init__(self, tools: Collection[str]) -> None:
        self._tools = tools
        self._state = _State.PROSE
        self._held = ""
        self._object = JsonValue()
        self._call: list[str] = []
        self._out: list[FenceEvent] = []
        self._started = False  # prose other than spaces has come: an unfenced object is no call any more
        self._bare = False  # the header being read is an unfenced object's

    def feed(self, text: str) -> list[FenceEvent]:
        """The events that this piece of prose completes."""
        if self._state is _State.PROSE and self._started and not self._held and "`" not in text:
            return [TextDelta(text)] if text else []  # nearly all prose
        data, self._held = self._held + text, ""
        position = 0
        while position < len(data) and not self._held:
            position = self._step(data, position)
        return self._take()

    def close(self) -> list[FenceEvent]:
        """The prose ended (or a `<tool_call>` began): held text is prose, and a call still open is incomplete."""
        held, self._held = self._held, ""
        if self._state is _State.CALL:
            self._finish(complete=False)
        else:
            self._text(held if self._state is not _State.AFTER_CALL else "")
        self._state = _State.PROSE
        return self._take()

    def _step(self, data: str, position: int) -> int:
        match self._state:
            case _State.PROSE | _State.BLOCK:
                return self._fence(data, position)
            case _State.HEADER:
                return self._header(data, position)
            case _State.CALL:
                return self._json(data, position)
            case _State.AFTER_CALL:
                return self._after_call(data, position)

    def _fence(self, data: str, position: int) -> int:
        """Prose up to the next fence: in prose it may open a call; in a block it closes the block. A reply that
        starts (after spaces) with `{` may be a call too."""
        if not self._started:
            start = _SPACE.match(data, position).end()
            self._text(data[position:start])
            if start == len(data):
                return start
            self._started = True
            if data[start] == "{":
                self._state, self._bare = _State.HEADER, True
                return start
            position = start
        found = data.find(FENCE, position)
        if found == -1:
            cut = held_from(data, position, (FENCE,))
            self._text(data[position:cut])
            self._held = data[cut:]
            return len(data)
        if self._state is _State.BLOCK:
            self._text(data[position : found + len(FENCE)])
            self._state = _State.PROSE
            return found + len(FENCE)
        self._text(data[position:found])
        self._state, self._bare = _State.HEADER, False
        return found

    def _header(self, data: str, position: int) -> int:
        """`data[position:]` starts with a fence (or a reply's `{`): hold it until it is a call's header or prose."""
        header = data[position : position + HEADER_CAP]
        verdict, start = read_header(header, self._tools, fenced=not self._bare)
        if verdict is _Verdict.MORE and len(header) < HEADER_CAP:
            self._held = data[position:]
            return len(data)
        if verdict is _Verdict.CALL:
            self._state, self._object = _State.CALL, JsonValue()
            return position + start
        if self._bare:  # JSON of something else, as prose
            self._text("{")
            self._state = _State.PROSE
            return position + 1
        self._text(FENCE)  # a block of something else: its text is prose, and its closing fence too
        self._state = _State.BLOCK
        return position + len(FENCE)

    def _json(self, data: str, position: int) -> int:
        """The call's JSON, up to the brace that closes its object (`scan.JsonValue`)."""
        end = self._object.end(data, position)
        self._call_text(data[position : len(data) if end is None else end])
        if end is None:
            return len(data)
        self._finish(complete=True)
        self._state = _State.AFTER_CALL
        return end

    def _after_call(self, data: str, position: int) -> int:
        """Spaces, then the fence that closes the call's block (dropped with them); anything else is prose."""
        end = _SPACE.match(data, position).end()
        rest = data[end : end + len(FENCE)]
        if len(rest) < len(FENCE) and FENCE.startswith(rest):  # more spaces, or the fence, may follow
            self._held = data[position:]
            return len(data)
        self._state = _State.PROSE
        return end + len(FENCE) if rest == FENCE else position

    def _text(self, text: str) -> None:
        if not text:
            return
        if self._out and type(self._out[-1]) is TextDelta:
            text = self._out.pop().text + text
        self._out.append(TextDelta(text))

    def _call_text(self, text: str) -> None:
        if not text:
            return
        self._call.append(text)
        if self._out and type(self._out[-1]) is ToolCallDelta:
            text = self._out.pop().text + text
        self._out.append(ToolCallDelta(text))

    def _finish(self, *, complete: bool) -> None:
        self._out.append(ToolCallDone("".join(self._call).strip(), complete))
        self._call = []

    def _take(self) -> list[FenceEvent]:
        out, self._out = self._out, []
        return out


def read_header(text: str, tools: Collection[str], *, fenced: bool = True) -> tuple[_Verdict, int]:
    """Whether `text`, which starts with a fence (or with `{`, if not `fenced`), is the header of a call to one of
    `tools` (`{"name": "TOOL", "arguments": {`, after a language of JSON or none), may still become one, or is not;
    for a call, also where its object starts."""
    start = 0
    if fenced:
        language = _LANGUAGE.match(text, len(FENCE))
        if language.end() == len(text):
            return _Verdict.MORE, 0
        if language.group(1).lower() not in _LANGUAGES:
            return _Verdict.PROSE, 0
        start = _SPACE.match(text, language.end()).end()
    position = start
    for expected in ("{", ('"name"',), ":", None, ",", _ARGUMENT_KEYS, ":", "{"):
        position = _SPACE.match(text, position).end()
        if position == len(text):
            return _Verdict.MORE, 0
        if expected is None:  # the tool's name, which must be one offered
            name = _NAME.match(text, position)
            if name is None:
                return _Verdict.PROSE, 0
            if not name.group(2):
                return (_Verdict.MORE, 0) if name.end() == len(text) else (_Verdict.PROSE, 0)
            if name.group(1) not in tools:
                return _Verdict.PROSE, 0
            position = name.end()
            continue
        choices = (expected,) if isinstance(expected, str) else expected
        rest = text[position:]
        taken = next((word for word in choices if rest.startswith(word)), None)
        if taken is None:
            return (_Verdict.MORE, 0) if any(word.startswith(rest) for word in choices) else (_Verdict.PROSE, 0)
        position += len(taken)
    return _Verdict.CALL, start
