"""What every incremental reader of a reply needs: skipping over JSON strings, finding where a JSON object or array
ends, and holding back a tag cut in two.

Both work on one piece of text at a time and keep what they must between pieces, so a reader built on them gives the
same result however the text is chunked, and looks at each character O(1) times.
"""

from __future__ import annotations

import re

_STRING_STOP = re.compile(r'["\\]')  # inside a JSON string only a quote or a backslash changes anything
_JSON_MARK = re.compile(r'["{}\[\]]')  # outside one, only a quote, a brace or a bracket does


class JsonString:
    """Whether a reader of JSON text, fed piece by piece, is inside a string, and where that string ends.

    A close tag or a brace inside a string is data, so a reader calls `skip` whenever `inside` is set, and `enter`
    when it passes an opening quote.
    """

    __slots__ = ("escaped", "inside")

    def __init__(self) -> None:
        self.inside = False
        self.escaped = False
        """The previous piece ended with the backslash of an escape: the next character is the string's."""

    def enter(self) -> None:
        """The reader just passed the quote that opens a string."""
        self.inside, self.escaped = True, False

    def pass_over(self, piece: str) -> None:
        """All of `piece` (not empty, and with no quote in it) is more of the string: keep only whether it ends in the
        middle of an escape. One test for nearly every piece of a big argument, however many escapes it holds."""
        if "\\" not in piece:
            self.escaped = False
            return
        run = len(piece) - len(piece.rstrip("\\"))  # the backslashes it ends with; all but an escaped first pair up
        self.escaped = (run + (self.escaped and run == len(piece))) % 2 == 1

    def skip(self, data: str, position: int) -> int:
        """Where the string that `position` is inside ends: the index after its closing quote (`inside` is then
        False), or len(data) when it goes on in the next piece."""
        if self.escaped:
            if position == len(data):
                return position
            self.escaped = False
            position += 1
        while (found := _STRING_STOP.search(data, position)) is not None:
            if data[found.start()] == '"':
                self.inside = False
                return found.end()
            if found.end() == len(data):
                self.escaped = True
                return found.end()
            position = found.end() + 1
        return len(data)


class JsonValue:
    """Where a JSON object or array, read piece by piece, ends: after the brace or bracket that closes it.

    Braces and brackets nest alike, and strings are skipped (`JsonString`), so a `}` in a string is data. Malformed
    text ends at the first closer that leaves nothing open, or that closes what never opened (a stray `}` or `]`),
    never later: no stray closer can keep a reader inside the value for the rest of a reply. Each character is
    looked at O(1) times, and nothing here raises, whatever the text.
    """

    __slots__ = ("depth", "string")

    def __init__(self) -> None:
        self.depth = 0
        self.string = JsonString()

    def end(self, data: str, position: int) -> int | None:
        """The index after the closer that ends the value in `data[position:]`, or None when it goes on in the next
        piece."""
        while position < len(data):
            if self.string.inside:
                position = self.string.skip(data, position)
                continue
            found = _JSON_MARK.search(data, position)
            if found is None:
                return None
            position = found.end()
            mark = found.group()
            if mark == '"':
                self.string.enter()
            elif mark in "{[":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth <= 0:
                    return position
        return None


def partial_tag(data: str, start: int, tags: tuple[str, ...]) -> bool:
    """Whether `data[start:]`, the end of the text so far, may still grow into one of `tags` (checked without copying
    a long tail)."""
    rest = len(data) - start
    return any(rest < len(tag) and data.startswith(tag[:rest], start) for tag in tags)


def held_from(data: str, position: int, tags: tuple[str, ...]) -> int:
    """Where the end of `data` (from `position` on) may be the start of one of `tags`, or len(data): a reader holds
    the text from there back until the next piece says whether it is the tag."""
    window = max(position, len(data) - max(len(tag) for tag in tags) + 1)
    earliest = len(data)
    for first in {tag[0] for tag in tags}:  # most text has none of these characters near its end
        start = data.find(first, window, earliest)
        while start != -1:
            if partial_tag(data, start, tags):
                earliest = start
                break
            start = data.find(first, start + 1, earliest)
    return earliest
