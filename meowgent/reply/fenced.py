"""FencedCalls: tool calls that a small model writes as a fenced JSON block in its prose, read as they stream.

Qwen2.5-Coder 0.5B and 1.5B, given tools natively by llama-server, write no native call: they answer

    ```json
    {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}
    ```

or that object alone, unfenced, as the whole reply; or the object in `<tools>…</tools>`, the tag of the tool list in
Qwen2.5's template; or with its outer braces doubled, `{{"name": …, "arguments": {…}}}`, copied from the example
in that template (a quirk of its Jinja string). A block (or a reply that starts with `{`) is a call only when its
object starts with the name of a tool this chat offers and goes on with an `arguments` (or `parameters`) object, so
JSON in an answer that names no tool, or names one without arguments, stays prose. The header is at most a few dozen
characters, so that is all the text held back before the block is known to be a call or prose; from then on the call's
JSON streams out as `ToolCallDelta`s (the live panel) and ends as a `ToolCallDone`, exactly as a `<tool_call>` block
from `ToolCallSplitter` does, and the agent gates it the same. A doubled brace is left out of the call's text, which is
always the object itself.

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
TOOLS_OPEN, TOOLS_CLOSE = "<tools>", "</tools>"
_CLOSER = {FENCE: FENCE, TOOLS_OPEN: TOOLS_CLOSE, "": FENCE}
"""What ends a call's block, by what opened it ("": a reply that is the object alone, which a fence may still end)."""
_OPENER = re.compile(f"{re.escape(FENCE)}|{re.escape(TOOLS_OPEN)}")
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
    AFTER_CALL = auto()  # the call's object closed: a doubled brace's twin and the closer are dropped, if they come


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
        self._opener = FENCE  # what opened the header being read: a fence, `<tools>`, or "" (an unfenced object)
        self._closing: list[str] = []  # after a call: what is dropped if it comes next, in order

    def feed(self, text: str) -> list[FenceEvent]:
        """The events that this piece of prose completes."""
        if self._state is _State.PROSE and self._started and not self._held and "`" not in text and "<" not in text:
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
        """Prose up to the next opener (a fence or `<tools>`), which may open a call; in a block, up to the fence that
        closes it. A reply that starts (after spaces) with `{` may be a call too."""
        if not self._started:
            start = _SPACE.match(data, position).end()
            self._text(data[position:start])
            if start == len(data):
                return start
            self._started = True
            if data[start] == "{":
                self._state, self._opener = _State.HEADER, ""
                return start
            position = start
        in_block = self._state is _State.BLOCK
        found = data.find(FENCE, position) if in_block else _found(_OPENER.search(data, position))
        if found == -1:
            cut = held_from(data, position, (FENCE,) if in_block else (FENCE, TOOLS_OPEN))
            self._text(data[position:cut])
            self._held = data[cut:]
            return len(data)
        if in_block:
            self._text(data[position : found + len(FENCE)])
            self._state = _State.PROSE
            return found + len(FENCE)
        self._text(data[position:found])
        self._state, self._opener = _State.HEADER, TOOLS_OPEN if data.startswith(TOOLS_OPEN, found) else FENCE
        return found

    def _header(self, data: str, position: int) -> int:
        """`data[position:]` starts with an opener (or a reply's `{`): hold it until it is a call's header or prose."""
        header = data[position : position + HEADER_CAP]
        verdict, start, doubled = read_header(header, self._tools, opener=self._opener)
        if verdict is _Verdict.MORE and len(header) < HEADER_CAP:
            self._held = data[position:]
            return len(data)
        if verdict is _Verdict.CALL:
            self._state, self._object = _State.CALL, JsonValue()
            self._closing = ["}"] * doubled + [_CLOSER[self._opener]]
            return position + start
        if self._opener != FENCE:  # JSON of something else, or a tag, as prose
            opened = self._opener or "{"
            self._text(opened)
            self._state = _State.PROSE
            return position + len(opened)
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
        """Spaces, then what closes the call (a doubled brace's twin, the fence or `</tools>`), each dropped with the
        spaces before it if it comes; anything else is prose."""
        end = _SPACE.match(data, position).end()
        closer = self._closing[0]
        rest = data[end : end + len(closer)]
        if len(rest) < len(closer) and closer.startswith(rest):  # more spaces, or the closer, may follow
            self._held = data[position:]
            return len(data)
        self._closing.pop(0)
        if not self._closing:
            self._state = _State.PROSE
        if rest == closer:
            return end + len(closer)
        return position

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


def read_header(text: str, tools: Collection[str], *, opener: str = FENCE) -> tuple[_Verdict, int, bool]:
    """Whether `text`, which starts with `opener` (a fence, `<tools>`, or "" for an unfenced `{`), is the header of a
    call to one of `tools` (`{"name": "TOOL", "arguments": {`, after a language of JSON or none for a fence), may still
    become one, or is not; for a call, also where its object starts (inside doubled outer braces, which it says)."""
    start = len(opener)
    if opener == FENCE:
        language = _LANGUAGE.match(text, len(FENCE))
        if language.end() == len(text):
            return _Verdict.MORE, 0, False
        if language.group(1).lower() not in _LANGUAGES:
            return _Verdict.PROSE, 0, False
        start = language.end()
    start = _SPACE.match(text, start).end()
    doubled = text.startswith("{", start) and text.startswith("{", _SPACE.match(text, start + 1).end())
    if doubled:
        start = _SPACE.match(text, start + 1).end()
    return _fields(text, start, tools), start, doubled


def _fields(text: str, start: int, tools: Collection[str]) -> _Verdict:
    """Whether `text[start:]` opens a call's object: `{"name": "TOOL", "arguments": {`, the tool one of `tools`."""
    position = start
    for expected in ("{", ('"name"',), ":", None, ",", _ARGUMENT_KEYS, ":", "{"):
        position = _SPACE.match(text, position).end()
        if position == len(text):
            return _Verdict.MORE
        if expected is None:  # the tool's name, which must be one offered
            name = _NAME.match(text, position)
            if name is None:
                return _Verdict.PROSE
            if not name.group(2):
                return _Verdict.MORE if name.end() == len(text) else _Verdict.PROSE
            if name.group(1) not in tools:
                return _Verdict.PROSE
            position = name.end()
            continue
        choices = (expected,) if isinstance(expected, str) else expected
        rest = text[position:]
        taken = next((word for word in choices if rest.startswith(word)), None)
        if taken is None:
            return _Verdict.MORE if any(word.startswith(rest) for word in choices) else _Verdict.PROSE
        position += len(taken)
    return _Verdict.CALL


def _found(match: re.Match[str] | None) -> int:
    return -1 if match is None else match.start()
