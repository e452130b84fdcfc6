"""A tool call read as it streams: the canonical `{"name": ..., "arguments": {...}}` JSON, parsed piece by piece.

`LiveCall.feed(piece)` costs O(len(piece)): string contents are copied in runs found by one regex
search, never character by character, and nothing already read is parsed again. Each argument keeps
only its size, its line count and bounded head and tail, so a 1 MB `write_file` stays light.
"""

from __future__ import annotations

import re
from collections import deque

HEAD_CHARS = 4_000
"""How much of the start of each argument is kept (paths, commands and URLs are whole)."""
TAIL_CHARS = 2_000
"""How much of the end of each argument is kept, for the last lines of a file being written."""

_STRING_STOP = re.compile(r'["\\]')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WHITESPACE = " \t\n\r"
_LITERAL_END = ",}]" + _WHITESPACE
_ARGUMENTS_KEYS = ("arguments", "parameters")


class StreamedText:
    """One argument as it arrives: its length and lines, with the first and last characters kept."""

    def __init__(self, *, raw: bool = False) -> None:
        self.raw = raw
        """True for a value that is not a string (a number, a list): the text is its JSON."""
        self.length = 0
        self.newlines = 0
        self._last = ""
        self._head: list[str] = []
        self._head_size = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0

    def add(self, piece: str) -> None:
        if not piece:
            return
        self.length += len(piece)
        self.newlines += piece.count("\n")
        self._last = piece[-1]
        if self._head_size < HEAD_CHARS:
            kept = piece[: HEAD_CHARS - self._head_size]
            self._head.append(kept)
            self._head_size += len(kept)
        piece = piece[-TAIL_CHARS:]
        self._tail.append(piece)
        self._tail_size += len(piece)
        while self._tail_size - len(self._tail[0]) >= TAIL_CHARS:
            self._tail_size -= len(self._tail.popleft())

    @property
    def lines(self) -> int:
        return self.newlines + (1 if self.length and self._last != "\n" else 0)

    @property
    def whole(self) -> bool:
        """True while the head holds all of it."""
        return self.length <= HEAD_CHARS

    def head(self) -> str:
        return "".join(self._head)

    def tail(self) -> str:
        return "".join(self._tail)[-TAIL_CHARS:]

    def last_lines(self, count: int) -> list[str]:
        """The last `count` lines (fewer if the kept tail is shorter), the one being written last."""
        lines = (self.head() if self.whole else self.tail()).split("\n")
        if not self.whole:
            lines = lines[1:]  # the first kept line is cut at its start
        if lines and lines[-1] == "" and self._last == "\n":
            lines.pop()
        return lines[-count:]


class LiveCall:
    """What can be read so far of one call: its name and its arguments, in the order they arrive."""

    def __init__(self) -> None:
        self.name = ""
        self.arguments: dict[str, StreamedText] = {}
        self.broken = False
        """True once the text stops being JSON of the expected shape; what was read stays."""
        self._containers: list[str] = []
        self._keys: list[str] = []  # the key of each open object, "" before its first key
        self._state = "value"  # value | key | colon | after | string | literal | end
        self._string_role = "skip"  # key | name | argument | capture | skip
        self._key_parts: list[str] = []
        self._name_parts: list[str] = []
        self._escape = ""
        self._high_surrogate = ""
        self._target: StreamedText | None = None  # the string argument being read
        self._capture: StreamedText | None = None  # the non-string argument being copied as JSON
        self._capture_depth = 0

    def feed(self, piece: str) -> None:
        i, size = 0, len(piece)
        while i < size and not self.broken:
            if self._state == "string":
                i = self._string(piece, i)
                continue
            char = piece[i]
            if self._state == "literal" and char in _LITERAL_END:
                self._value_done()
                continue  # the delimiter is read in the "after" state
            if self._capture is not None:
                self._capture.add(char)
            i += 1
            if self._state != "literal" and char in _WHITESPACE:
                continue
            self._structure(char)

    def _structure(self, char: str) -> None:
        state = self._state
        if state == "value":
            self._value_start(char)
        elif state == "key" and char == '"':
            self._key_parts = []
            self._string_role, self._state = "key", "string"
        elif state == "key" and char == "}" and self._keys and self._keys[-1] == "":
            self._close("}")
        elif state == "colon" and char == ":":
            self._state = "value"
        elif state == "after" and char == ",":
            self._state = "key" if self._containers[-1] == "{" else "value"
        elif state == "after" and char in "}]":
            self._close(char)
        elif state != "literal":
            self.broken = True

    def _value_start(self, char: str) -> None:
        if not self._containers and char != "{":
            self.broken = True  # a call is a JSON object
            return
        in_arguments = self._in_arguments()
        if in_arguments and char != '"' and self._capture is None:
            self._capture = self.arguments[self._keys[-1]] = StreamedText(raw=True)
            self._capture_depth = len(self._containers)
            self._capture.add(char)
        if char == '"':
            self._string_role = self._role_of_string(in_arguments)
            self._state = "string"
        elif char in "{[":
            self._containers.append(char)
            if char == "{":
                self._keys.append("")
            self._state = "key" if char == "{" else "value"
        elif char == "]" and self._containers and self._containers[-1] == "[":
            self._close("]")
        else:
            self._state = "literal"

    def _role_of_string(self, in_arguments: bool) -> str:
        if self._capture is not None:
            return "capture"
        if in_arguments:
            self._target = self.arguments[self._keys[-1]] = StreamedText()
            return "argument"
        if len(self._containers) == 1 and self._keys[-1] == "name":
            return "name"
        return "skip"

    def _in_arguments(self) -> bool:
        """True when the value about to start is an argument: a value in the arguments object."""
        return (
            len(self._containers) == 2
            and self._containers[1] == "{"
            and self._keys[0] in _ARGUMENTS_KEYS
            and self._capture is None
        )

    def _string(self, piece: str, start: int) -> int:
        i = start
        end = len(piece)
        while i < end:
            if self._escape:
                self._escape += piece[i]
                i += 1
                self._finish_escape()
                continue
            stop = _STRING_STOP.search(piece, i)
            at = stop.start() if stop else end
            if at > i:
                self._text(piece[i:at])
            if stop is None:
                i = end
                break
            i = at + 1
            if piece[at] == "\\":
                self._escape = "\\"
                continue
            self._flush_surrogate()
            self._string_done()
            break
        if self._capture is not None:
            self._capture.add(piece[start:i])
        return i

    def _finish_escape(self) -> None:
        escape = self._escape
        if escape[1] != "u":
            self._escape = ""
            if escape[1] not in _ESCAPES:
                self.broken = True
                return
            self._flush_surrogate()
            self._text(_ESCAPES[escape[1]])
            return
        if len(escape) < 6:
            return
        self._escape = ""
        try:
            char = chr(int(escape[2:], 16))
        except ValueError:
            self.broken = True
            return
        if "\ud800" <= char <= "\udbff":
            self._flush_surrogate()
            self._high_surrogate = char
        elif "\udc00" <= char <= "\udfff" and self._high_surrogate:
            high, self._high_surrogate = self._high_surrogate, ""
            self._text(chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(char) - 0xDC00)))
        else:
            self._flush_surrogate()
            self._text(char)

    def _flush_surrogate(self) -> None:
        if self._high_surrogate:
            lone, self._high_surrogate = self._high_surrogate, ""
            self._text(lone)

    def _text(self, text: str) -> None:
        role = self._string_role
        if role == "argument" and self._target is not None:
            self._target.add(text)
        elif role == "key":
            self._key_parts.append(text)
        elif role == "name":
            self._name_parts.append(text)
            self.name = "".join(self._name_parts)

    def _string_done(self) -> None:
        if self._string_role == "key":
            self._keys[-1] = "".join(self._key_parts)
            self._state = "colon"
            return
        self._target = None
        self._value_done()

    def _value_done(self) -> None:
        if self._capture is not None and len(self._containers) == self._capture_depth:
            self._capture = None
        self._state = "after" if self._containers else "end"

    def _close(self, bracket: str) -> None:
        opener = self._containers.pop() if self._containers else ""
        if opener != {"}": "{", "]": "["}[bracket]:
            self.broken = True
            return
        if opener == "{":
            self._keys.pop()
        self._value_done()
