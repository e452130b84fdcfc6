"""The glob matcher of list_files and search_files: the same answers as the regex it replaced, in linear time."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.config import Settings
from meowgent.tools.globs import MAX_GLOB_CHARS, Glob
from meowgent.tools.registry import run_tool
from meowgent.tools.spec import ToolError

HOSTILE = "*?" * 14 + "Q"
"""The glob of issue 17: as a regex it backtracks for seconds on a 40-character name, doubling with each `*?`."""


def regex_oracle(glob: str) -> re.Pattern[str]:
    """The translation list_files used before, kept as the reference: right, but it backtracks."""
    out: list[str] = []
    braces = 0
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "[":
            close = i + 2 if glob[i + 1 : i + 2] in ("!", "^") else i + 1
            close = glob.find("]", close + 1)
            if close == -1:
                raise ToolError("unclosed [")
            body = glob[i + 1 : close]
            negate = body[:1] in ("!", "^")
            body = "".join("\\" + c if c in "\\[]&~|^" else c for c in body[negate:])
            out.append(f"[{'^' if negate else ''}{body}]")
            i = close + 1
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            braces += 1
            out.append("(?:")
        elif char == "}" and braces:
            braces -= 1
            out.append(")")
        elif char == "," and braces:
            out.append("|")
        elif char == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(char))
        i += 1
    if braces:
        raise ToolError("unclosed {")
    try:
        with warnings.catch_warnings():  # `[--]` warns of a possible set difference in some future Python
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile("".join(out), re.DOTALL)
    except re.error as exc:  # a backwards range: the old code let this escape; the new one says so
        raise ToolError(str(exc)) from None


PIECES = [*"ab.-/*?[]!^{},\\", "**", "**/", "[ab]", "[!a]", "[a-c]"]
globs = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
paths = st.text(alphabet="ab.-/]![\\{},", max_size=10)


@settings(max_examples=2000, deadline=None)
@given(glob=globs, path=paths)
def test_the_matcher_agrees_with_the_regex_it_replaced(glob: str, path: str) -> None:
    try:
        expected = regex_oracle(glob).fullmatch(path) is not None
    except ToolError:
        with pytest.raises(ToolError):
            Glob(glob)
        return
    assert Glob(glob)(path) == expected


@settings(max_examples=300, deadline=None)
@given(glob=globs, many=st.lists(paths, max_size=20))
def test_one_matcher_gives_the_same_answer_however_often_it_is_used(glob: str, many: list[str]) -> None:
    """What it remembers between paths (the sets of places and their steps) never changes an answer."""
    try:
        shared = Glob(glob)
    except ToolError:
        return
    assert [shared(path) for path in many + many] == [Glob(glob)(path) for path in many + many]


def test_the_hostile_glob_and_ten_times_it_are_answered_right() -> None:
    assert Glob(HOSTILE)("a" * 40 + "Q")
    assert not Glob(HOSTILE)("a" * 40)
    assert not Glob(HOSTILE)("a" * 12 + "Q")  # 14 `?` need 14 characters before the Q
    ten_times = "*?" * 140 + "Q"
    assert Glob(ten_times)("a" * 400 + "Q")
    assert not Glob(ten_times)("a" * 400)
    assert not Glob(ten_times)("a" * 20 + "/" + "a" * 200 + "Q")  # `*` and `?` stay inside one folder


def test_a_bad_glob_says_what_is_wrong() -> None:
    with pytest.raises(ToolError, match=r"glob '\[z-a\]' has the range 'z-a', which runs backwards; write 'a-z'"):
        Glob("[z-a]", argument="glob")
    with pytest.raises(ToolError, match=r"has a '\{' without its '\}'"):
        Glob("{a,b")
    with pytest.raises(ToolError, match=f"write one of at most {MAX_GLOB_CHARS}"):
        Glob("*" * (MAX_GLOB_CHARS + 1))


def test_list_files_answers_the_hostile_glob(tmp_path: Path) -> None:
    folders = [tmp_path / f"d{n}" for n in range(10)]
    for folder in folders:
        folder.mkdir()
        for n in range(50):
            (folder / ("x" * 30 + f"{n:02d}" + ("Q" if n % 10 == 0 else ""))).write_text("")
    listed = run_tool("list_files", {"pattern": HOSTILE, "limit": 1000}, settings=Settings(workspace=tmp_path))
    assert listed.startswith("50 entries in the workspace match")
    assert all(line.endswith("Q") for line in listed.splitlines()[1:])
