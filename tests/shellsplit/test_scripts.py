"""shellscripts: sed and awk programs that may run commands or write files."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.shellsplit.scripts import SedEffects, awk_runs_or_writes, sed_effects


@pytest.mark.parametrize(
    ("script", "effects"),
    [
        ("s/a/b/g", SedEffects(False, ())),
        ("1,5p", SedEffects(False, ())),
        ("/x/,/y/{s|a|b|;d}", SedEffects(False, ())),
        ("$!N; /^\\(.*\\)\\n\\1$/!P; D", SedEffects(False, ())),
        ("y/abc/xyz/", SedEffects(False, ())),
        ("1i\\\nheader", SedEffects(False, ())),
        ("s/a/b/w out.txt", SedEffects(False, ("out.txt",))),
        ("/x/w list.txt", SedEffects(False, ("list.txt",))),
        ("s/a/b/w", SedEffects(False, ("",))),  # a `w` flag without a file name: no crash, a write all the same
        ("s/a/b/e", SedEffects(True, ())),
        ("1e rm x", SedEffects(True, ())),
        ("e", SedEffects(True, ())),
        ("s/a/b", SedEffects(True, ())),  # cut off: not sed as this reader knows it
        ("k", SedEffects(True, ())),
    ],
)
def test_sed_scripts(script: str, effects: SedEffects) -> None:
    assert sed_effects(script) == effects


SED_COMMANDS = ["p", "d", "1d", "$d", "/x/d", "s/a/b/g", "s|/|-|2", "y/ab/ba/", "n", "N", "=", "q", "G", "h", "x"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SED_COMMANDS), min_size=1, max_size=6), st.integers(0, 6))
def test_an_e_command_anywhere_in_a_sed_script_runs(commands: list[str], where: int) -> None:
    assert not sed_effects(";".join(commands)).runs
    with_e = [*commands[:where], "e rm x", *commands[where:]]
    assert sed_effects("\n".join(with_e)).runs


@pytest.mark.parametrize(
    ("program", "runs"),
    [
        ("{print $1}", False),
        ("$3 > 100 {print $2}", False),
        ("{ if ($1 > 5) print $2 }", False),
        ("NR>1 {s+=$2} END {print s}", False),
        ("{ print ($1 > $2) }", False),
        ("/a|b/ {print}", False),  # a `|` inside a regex
        ('{ print "a|b" }', False),  # and inside a string
        ("{ x = $1 / 2 / 3; print x }", False),  # division, not a regex
        ('BEGIN { system("rm x") }', True),
        ('{ print | "sort" }', True),
        ('{ "date" | getline d }', True),
        ('{ print > "out.txt" }', True),
        ('{ printf("%s", $1) >> "log" }', True),
        ('@load "x"', True),
        ("/unclosed", True),
    ],
)
def test_awk_programs(program: str, runs: bool) -> None:
    assert awk_runs_or_writes(program) == runs


AWK_STATEMENTS = ["print $1", "x = $2 + 1", "if ($1 > 2) print", "n++", 'printf "%d\\n", n', "s = s $0"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(AWK_STATEMENTS), min_size=1, max_size=5), st.integers(0, 5))
def test_a_system_call_anywhere_in_an_awk_program_runs(statements: list[str], where: int) -> None:
    assert not awk_runs_or_writes("{ " + "; ".join(statements) + " }")
    with_system = [*statements[:where], 'system("rm x")', *statements[where:]]
    assert awk_runs_or_writes("{ " + "; ".join(with_system) + " }")
