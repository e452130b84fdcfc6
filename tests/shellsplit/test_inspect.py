"""programs.inspect_segment: what a finished segment runs besides itself, in the order bash would meet it."""

from __future__ import annotations

import pytest

from meowgent.shellsplit.programs import MAX_NESTED, RunsText, Starts, inspect_segment
from meowgent.shellsplit.reader import parse_segment
from meowgent.shellsplit.syntax import word_of
from meowgent.shellsplit.words import Problem, Word, short


def findings(segment: str) -> list[object]:
    return list(inspect_segment(parse_segment(segment)))


def test_a_plain_command_hands_nothing_on() -> None:
    assert findings("ls -la") == []
    assert findings("sudo -u bob git status") == []


def test_eval_says_so_then_hands_on_its_text() -> None:
    assert findings("eval 'rm x' y") == [
        Problem("runs_text", "eval"),
        RunsText((word_of("'rm x'"), word_of("y")), "eval"),
    ]


def test_a_shell_with_c_hands_on_its_text_and_a_script_is_a_file() -> None:
    assert findings("bash -c 'rm x'") == [Problem("runs_text", "bash -c"), RunsText((word_of("'rm x'"),), "bash -c")]
    assert findings("sh build.sh") == [Problem("runs_file", "sh build.sh")]
    assert findings("sh") == [Problem("runs_input", "sh")]


def test_a_trap_runs_its_text_later() -> None:
    assert findings("trap 'rm x' EXIT") == [
        Problem("runs_later", "trap 'rm x'"),
        RunsText((word_of("'rm x'"),), "trap"),
    ]
    assert findings("trap '' EXIT") == []


def test_commands_handed_on_come_after_the_problems_of_their_wrapper() -> None:
    assert findings("xargs -0 rm") == [Starts((word_of("rm"), Word("...", "...")))]
    assert findings("find . -exec rm {} \\;") == [Starts((word_of("rm"), word_of("{}")))]
    assert findings("flock f -c 'rm x'") == [
        Problem("runs_text", "flock -c"),
        RunsText((word_of("'rm x'"),), "flock -c"),
    ]


def test_assignments_and_builtins_that_bind_code() -> None:
    assert findings("PS4='$(rm x)' true") == [Problem("variable", "PS4='$(rm x)'")]
    assert findings("hash -p /bin/rm ls") == [Problem("rebinds", "hash -p /bin/rm ls")]
    assert findings("$X x") == [Problem("unknown_command", "$X")]


@pytest.mark.parametrize("extra", [0, 1])
def test_wrappers_are_followed_to_the_nesting_limit(extra: int) -> None:
    wrappers = " ".join(["nice"] * (MAX_NESTED - 2 + extra))
    found = findings(f"{wrappers} rm x")
    assert found == ([Problem("too_many", short(f"{wrappers} rm x"))] if extra else [])
