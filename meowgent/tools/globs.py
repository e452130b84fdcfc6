"""The globs of list_files and search_files, matched in time linear in the path, whatever the pattern.

A regex made from a glob backtracks: `*?*?*?*?*?*?*?*?*?*?*?*?*?*Q` took seconds per name, doubling with
each `*?`, inside one C call that holds the GIL. Here a glob becomes a small automaton (Thompson's
construction) that reads a path once, one character at a time, tracking every place in the pattern it
could be at together, so a step costs at most the pattern's size. The sets of places met before are
kept with their next set for each character (a lazy DFA), so a listing pays about one dictionary
lookup per character. The syntax is the one list_files documents:

- `*` is any run of characters but `/`, `?` one character but `/`;
- `**/` is any number of whole folders (none too), `**` elsewhere anything at all;
- `[abc]`, `[a-z]`, `[!a]` or `[^a]`: one character (any, `/` too) in or out of the class; a `]` right
  after `[` or `[!` is part of the class;
- `{a,b}`: either, nested as deep as wanted; `\\x` is `x` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from meowgent.tools.spec import ToolError

MAX_GLOB_CHARS = 300
"""A longer glob is refused: a step costs up to the pattern's size, and real globs are a few dozen characters."""
_CACHED_SETS = 2_000
_CACHED_STEPS = 100_000
"""Past these, sets and steps are worked out afresh instead of kept, so memory stays bounded (the time per
step stays bounded by the pattern's size either way)."""

Test = Callable[[str], bool]


def _not_slash(char: str) -> bool:
    return char != "/"


def _anything(char: str) -> bool:
    return True


def _literal(expected: str) -> Test:
    return expected.__eq__


def _character_class(ranges: list[tuple[str, str]], *, negate: bool) -> Test:
    def test(char: str) -> bool:
        return any(low <= char <= high for low, high in ranges) != negate

    return test


@dataclass
class _State:
    """A place in the pattern: reading one character that passes `test` leads to `then`; with no test, `then`
    lists the places reachable without reading anything. `then` is empty at the end of the pattern."""

    test: Test | None = None
    then: list[int] = field(default_factory=list)


@dataclass
class _Places:
    """A set of places the automaton can be at together, and where each next character leads (once known)."""

    reading: tuple[tuple[Test, frozenset[int]], ...]
    """For each place that reads a character: its test, and the places it leads to."""
    accepts: bool
    steps: dict[str, _Places] = field(default_factory=dict)


class Glob:
    """`Glob(pattern)(path)`: does the whole `path` match? ToolError (naming `argument`) for a pattern that
    cannot be read: an unclosed `[` or `{`, a backwards range, or one longer than MAX_GLOB_CHARS."""

    def __init__(self, pattern: str, *, argument: str = "pattern") -> None:
        self._pattern, self._argument = pattern, argument
        if len(pattern) > MAX_GLOB_CHARS:
            raise self._error(f"is {len(pattern):,} characters long; write one of at most {MAX_GLOB_CHARS}")
        self._states: list[_State] = [_State()]  # state 0: the end of the pattern
        start = self._compile(pattern)
        self._leads_to: dict[int, frozenset[int]] = {}
        self._known: dict[frozenset[int], _Places] = {}
        self._cached_steps = 0
        self._dead = self._places(frozenset())
        self._initial = self._places(self._closure([start]))

    def __call__(self, path: str) -> bool:
        places = self._initial
        for char in path:
            following = places.steps.get(char)
            if following is None:
                following = self._step(places, char)
            if following is self._dead:
                return False
            places = following
        return places.accepts

    def _step(self, places: _Places, char: str) -> _Places:
        targets: set[int] = set()
        for test, then in places.reading:
            if test(char):
                targets |= then
        following = self._places(frozenset(targets))
        if self._cached_steps < _CACHED_STEPS:
            places.steps[char] = following
            self._cached_steps += 1
        return following

    def _places(self, key: frozenset[int]) -> _Places:
        """The set of places `key` (reading places, and 0 when the pattern may end here), made once."""
        known = self._known.get(key)
        if known is None:
            reading = tuple((self._states[place].test, self._after(place)) for place in key if place)
            known = _Places(reading, 0 in key)  # type: ignore[arg-type]  # a reading place has a test
            if len(self._known) < _CACHED_SETS:
                self._known[key] = known
        return known

    def _after(self, place: int) -> frozenset[int]:
        """Where reading a character at `place` leads."""
        after = self._leads_to.get(place)
        if after is None:
            after = self._leads_to[place] = self._closure(self._states[place].then)
        return after

    def _closure(self, starts: list[int]) -> frozenset[int]:
        """The reading places (and 0, the end) reachable from `starts` without reading a character."""
        seen: set[int] = set()
        found: set[int] = set()
        stack = list(starts)
        while stack:
            place = stack.pop()
            if place in seen:
                continue
            seen.add(place)
            state = self._states[place]
            if state.test is not None or not state.then:
                found.add(place)
            else:
                stack.extend(state.then)
        return frozenset(found)

    def _add(self, test: Test | None, then: list[int]) -> int:
        self._states.append(_State(test, then))
        return len(self._states) - 1

    def _loop(self, test: Test, then: int) -> int:
        """Any number of characters that pass `test`, then `then`."""
        loop = self._add(None, [])
        self._states[loop].then = [self._add(test, [loop]), then]
        return loop

    def _compile(self, pattern: str) -> int:
        """The start state of `pattern`, built from its end: each piece is compiled knowing what follows it."""
        # One list of alternatives per open `{`; each alternative is a list of pieces, a piece a builder
        # that takes the state after it and returns its own start.
        groups: list[list[list[Callable[[int], int]]]] = [[[]]]
        i = 0
        while i < len(pattern):
            char = pattern[i]
            pieces = groups[-1][-1]
            if pattern.startswith("**/", i):
                pieces.append(self._folders)
                i += 3
                continue
            if pattern.startswith("**", i):
                pieces.append(lambda then: self._loop(_anything, then))
                i += 2
                continue
            if char == "[":
                test, i = self._class(i)
                pieces.append(self._reader(test))
                continue
            if char == "*":
                pieces.append(lambda then: self._loop(_not_slash, then))
            elif char == "?":
                pieces.append(self._reader(_not_slash))
            elif char == "{":
                groups.append([[]])
            elif char == "}" and len(groups) > 1:
                alternatives = groups.pop()
                groups[-1][-1].append(self._either(alternatives))
            elif char == "," and len(groups) > 1:
                groups[-1].append([])
            elif char == "\\" and i + 1 < len(pattern):
                i += 1
                pieces.append(self._reader(_literal(pattern[i])))
            else:
                pieces.append(self._reader(_literal(char)))
            i += 1
        if len(groups) > 1:
            raise self._error("has a '{' without its '}'")
        return self._sequence(groups[0][0], 0)

    def _folders(self, then: int) -> int:
        """`**/`: any whole folders (anything, then a "/"), or none."""
        return self._add(None, [self._loop(_anything, self._add(_literal("/"), [then])), then])

    def _reader(self, test: Test) -> Callable[[int], int]:
        return lambda then: self._add(test, [then])

    def _either(self, alternatives: list[list[Callable[[int], int]]]) -> Callable[[int], int]:
        return lambda then: self._add(None, [self._sequence(pieces, then) for pieces in alternatives])

    def _sequence(self, pieces: list[Callable[[int], int]], then: int) -> int:
        if not pieces:
            return self._add(None, [then])
        for piece in reversed(pieces):
            then = piece(then)
        return then

    def _class(self, start: int) -> tuple[Test, int]:
        """The class that opens at `start`, and where the pattern goes on after it."""
        pattern = self._pattern
        first = start + 2 if pattern[start + 1 : start + 2] in ("!", "^") else start + 1
        close = pattern.find("]", first + 1)  # a ']' first in the class is part of it
        if close == -1:
            raise self._error("has a '[' without its ']'")
        negate = first == start + 2
        body = pattern[first:close]
        ranges = []
        j = 0
        while j < len(body):
            if j + 2 < len(body) and body[j + 1] == "-":
                low, high = body[j], body[j + 2]
                if high < low:
                    raise self._error(f"has the range '{low}-{high}', which runs backwards; write '{high}-{low}'")
                ranges.append((low, high))
                j += 3
            else:
                ranges.append((body[j], body[j]))
                j += 1
        return _character_class(ranges, negate=negate), close + 1

    def _error(self, problem: str) -> ToolError:
        return ToolError(f"{self._argument} {self._pattern!r} {problem}.")
