"""A verdict's reason: the model's English from `str()`, and the plain values the page words."""

import json

from meowgent.policy.why import Why
from meowgent.shellsplit.reader import split_command
from meowgent.shellsplit.words import Problem


def test_a_reason_is_the_english_the_model_reads_and_json_values_for_the_page():
    why = Why("rule_matches", 'deny run_shell command "rm *"', "rm -rf x")
    assert str(why) == 'the rule deny run_shell command "rm *" matches `rm -rf x`'
    assert json.loads(json.dumps(why.values())) == why.values()


def test_a_line_with_many_problems_carries_the_first_three_and_counts_the_rest():
    problems = tuple(Problem("expansion", f"${{x{i}@P}}") for i in range(1000))
    why = Why("hidden", problems=problems)
    assert why.values()["problems"] == [["expansion", f"${{x{i}@P}}"] for i in range(3)]
    assert why.values()["more"] == 997
    assert str(why).endswith("; and 997 more")


def test_a_hidden_lines_reason_names_its_first_problems_and_counts_the_rest():
    why = Why("hidden", problems=split_command("echo ${!a} ${!b} ${!c} ${!d} ${!e}").problems)
    assert str(why).count("variable's value") == 3
    assert str(why).endswith("; and 2 more")
