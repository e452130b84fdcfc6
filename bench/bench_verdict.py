"""The shell verdict on hostile lines: each shape at N and 10×N characters in the same run, and the ratio.

Run from the repository root: `python -m bench.bench_verdict [--quick]`. `run()` returns the markdown table.

A verdict is what `Policy.decide` does for a `run_shell` call before anyone sees it: split the line, judge
each command, find its risk notes. It runs under the GIL for every call, so it must be linear in the
line's length: a ratio near 10 is linear, near 100 quadratic. `echo {{{{…` with 20,000 braces took 7 s
before issue 17.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.report import machine, table
from meowgent.events import ToolCall
from meowgent.policy.rules import Policy, Rule
from meowgent.shellsplit.reader import forget_readings

# Each shape is a line built from n repeats of a piece that some reader once handled badly.
SHAPES: dict[str, Callable[[int], str]] = {
    "braces `echo {{{…`": lambda n: "echo " + "{" * n,
    "brackets `echo [[[…`": lambda n: "echo " + "[" * n,
    "brace lists `{a,{a,…`": lambda n: "echo " + "{a," * (n // 3),
    "arithmetic `$(($((…`": lambda n: "echo " + "$((" * (n // 3),
    "arithmetic that is a subshell `$(( #((`": lambda n: "echo " + "$(( #((\n)) " * (n // 11),
    "expansions `${x:-${x:-…`": lambda n: "echo " + "${x:-" * (n // 5),
    "substitutions `$($(…`": lambda n: "echo " + "$(" * (n // 2),
    'double quotes `"$(echo …`': lambda n: "echo " + '"$(echo ' * (n // 8),
    "backquotes": lambda n: "echo " + "`" * n,
    "backslashes": lambda n: "echo " + "\\" * n,
    "single quotes `'a''a'…`": lambda n: "echo " + "'a'" * (n // 3),
    "one long word": lambda n: "echo " + "a" * n,
    "many words": lambda n: "echo " + "a " * (n // 2),
    "many commands `ls;ls;…`": lambda n: "ls;" * (n // 3),
    "here-documents `<<a <<a …`": lambda n: "cat " + "<<a " * (n // 4) + "\n",
    "redirections `>a >a …`": lambda n: "ls " + ">a " * (n // 3),
    "wrappers `sudo sudo …`": lambda n: "sudo " * (n // 5) + "rm x",
    "texts run in texts `eval eval …`": lambda n: "eval " * (n // 5) + "ls",
    "commands handed on `xargs xargs …`": lambda n: "xargs " * (n // 6) + "ls",
    "find -exec -exec …": lambda n: "find " + "-exec " * (n // 6),
    "git log --o --o …": lambda n: "git log " + "--o " * (n // 4),
    "nested groups `{ { …; }; }`": lambda n: "{ " * (n // 5) + "ls" + "; }" * (n // 5),
}
# The sizes issue 27 names: a 1 MB line (against 100 KB), and a line of 20,000 braces (against 200,000).
NAMED: dict[str, tuple[int, Callable[[int], str]]] = {
    "1 MB line of words `git status a a …`": (100_000, lambda n: "git status " + "a " * (n // 2)),
    "1 MB line of commands `ls && ls …`": (100_000, lambda n: "ls && " * (n // 6)),
    "20,000 braces `echo {{{…`": (20_000, lambda n: "echo " + "{" * n),
    "20,000 braces in groups `{ { …`": (20_000, lambda n: "{ " * (n // 2) + "ls" + "; }" * (n // 2)),
}
RULES = [
    Rule("run_shell", "allow", command="git status*"),
    Rule("run_shell", "allow", command="ls*"),
    Rule("run_shell", "deny", command="rm *"),
    Rule("run_shell", "deny", command="curl *"),
]


def verdict_seconds(policy: Policy, line: str) -> float:
    """Best of 3 verdicts on `line`, each from a fresh reading (the reader remembers recent lines)."""
    best = float("inf")
    for _ in range(3):
        forget_readings()
        started = time.perf_counter()
        policy.decide(ToolCall("bench", "run_shell", {"command": line}))
        best = min(best, time.perf_counter() - started)
    return best


def run(*, quick: bool = False) -> str:
    size = 2_000 if quick else 20_000
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        policy = Policy(RULES, Path(folder))
        policy.decide(ToolCall("warm", "run_shell", {"command": "ls"}))  # imports and compiled patterns
        for name, shape in SHAPES.items():
            rows.append([name, *_timed(policy, shape, size)])
        named = [[name, f"{small:,}", *_timed(policy, shape, small)] for name, (small, shape) in NAMED.items()]
    headers = ["line", f"{size:,} chars (ms)", f"{size * 10:,} chars (ms)", "ratio (10 is linear)"]
    sized = ["line", "n", "n (ms)", "10 × n (ms)", "ratio (10 is linear)"]
    return (
        f"### Shell verdict on hostile lines ({machine()})\n\n"
        + table(headers, rows)
        + "\n\n### The sizes issue 27 names\n\n"
        + table(sized, named)
    )


def _timed(policy: Policy, shape: Callable[[int], str], size: int) -> list[str]:
    """The verdict's time at `size` and at 10 × `size`, in ms, and their ratio."""
    small, large = verdict_seconds(policy, shape(size)), verdict_seconds(policy, shape(size * 10))
    return [f"{small * 1000:.1f}", f"{large * 1000:.1f}", f"{large / small:.1f}"]


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
