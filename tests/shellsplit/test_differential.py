"""The reader against bash itself: every program a real bash runs is named by the reader, or the line is hidden.

Each line runs in the sandbox Meowgent's commands run in (network off), in a folder of its own, with a
short time limit, many lines per launch. Bash traces every simple command it runs (`xtrace`, to a spare
descriptor, with a `PS4` that names the line, so a command left running in the background is still
counted for its own line). Child bashes trace too: the trace options are exported.
"""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from meowgent.config import Settings
from meowgent.shellsplit.programs import invocations
from meowgent.shellsplit.reader import split_command
from meowgent.shellsplit.words import program_name
from meowgent.tools.sandbox import NoSandbox, policy_for
from tests.policy import test_commands as policy_lines
from tests.sandboxing import FOUND, needs_sandbox
from tests.shellsplit import test_reader as reader_lines

# Runs each line (read NUL-separated from $1 before any line runs, since a line may delete the file) in a
# child bash that traces to descriptor 9, which is the driver's own output. $BASH_ENV, which every bash
# reads as it starts, exports the trace option to the bashes a line starts, then names the line in PS4
# (so its own commands are traced without the name, and do not count).
DRIVER = r"""
mapfile -d '' lines < "$1"
base=$PWD
mkdir -p "$base/runs" && cd "$base/runs" && mkdir -p -- "${!lines[@]}" || exit 3
for i in "${!lines[@]}"; do
  cd "$base/runs/$i" 2>/dev/null || cd /
  printf '%s\n' "export SHELLOPTS; PS4=\$'\\x01'\${MEOW_LINE}\$'\\x01 '" > "$base/ps4"
  MEOW_LINE=$i BASH_ENV="$base/ps4" BASH_XTRACEFD=9 \
    timeout -k 1 1 bash --norc -xc "${lines[$i]}" 9>&1 >/dev/null 2>&1 </dev/null
done
# This script is the PID namespace's init, so every process left ends with it, and a line's background job may not
# have traced its command yet (`sleep 9 & touch b`: the job's bash forks, traces, then runs sleep). Wait until no
# other bash is left, so each has run its program, for at most 2 s (a background loop stays bash).
for _ in {1..20}; do
  others=0
  for comm in /proc/[0-9]*/comm; do
    [[ $comm != /proc/$$/comm ]] && read -r name < "$comm" && [[ $name == bash ]] && others=1
  done 2>/dev/null
  (( others )) || break
  sleep 0.1
done
"""
_TRACED = re.compile(r"^\x01+(\d+)\x01 (.*)$")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
# What bash traces that is no program: compound commands and arithmetic.
_NOT_PROGRAMS = frozenset({"[[", "((", "for", "select", "case"})
_LONGEST = 2000  # longer lines in the rule tests are there for the reader's limits, not for bash


def bash_runs(lines: list[str], folder: Path) -> list[set[str]]:
    """The programs a real bash runs for each line, in the sandbox, each line in a folder of its own.

    The lines are shared among `_LAUNCHES` sandboxes at once: most of the time goes to lines that wait
    for their time limit (a pager, an editor, a watch).
    """
    shares = [list(range(first, len(lines), _LAUNCHES)) for first in range(_LAUNCHES)]
    running = [_launch([lines[i] for i in share], folder / str(n)) for n, share in enumerate(shares) if share]
    ran: list[set[str]] = [set() for _ in lines]
    for share, process in zip(shares, running, strict=False):
        output, _ = process.communicate(timeout=600)
        for trace in output.decode(errors="replace").splitlines():
            match = _TRACED.match(trace)
            if match and int(match.group(1)) < len(share):
                ran[share[int(match.group(1))]] |= _program(match.group(2))
    return ran


_LAUNCHES = 3


def _launch(lines: list[str], folder: Path) -> subprocess.Popen[bytes]:
    sandbox = FOUND
    assert not isinstance(sandbox, NoSandbox)
    folder.mkdir(parents=True)
    (folder / "lines").write_bytes(b"\0".join(line.encode() for line in lines) + b"\0")
    (folder / "driver.sh").write_text(DRIVER)
    policy = policy_for(Settings(workspace=folder, data_dir=folder.parent / "data"))
    launch = sandbox.launch(policy, ["bash", "--norc", str(folder / "driver.sh"), str(folder / "lines")], as_pid_1=True)
    # The system's programs only: a PATH whose `python` is a shell script (pyenv's shim) would trace that script's
    # own commands as the line's, and what a program does inside is not the line's reading.
    env = {**launch.env, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    return subprocess.Popen(launch.argv, env=env, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def _program(traced: str) -> set[str]:
    """The program a traced command runs (its base name), past `NAME=value` words; none for an assignment."""
    words = _traced_words(traced)
    words = [word for word in words if not _ASSIGNMENT.match(word)][:1]
    return {name for name in (word.rpartition("/")[2] for word in words) if name and name not in _NOT_PROGRAMS}


def _traced_words(traced: str) -> list[str]:
    """A trace line's words. A value holding a line break is traced over several lines (`+ v='x1 x2` then `x'`):
    its first line ends inside the quote, which is closed there; the lines after it carry no line's name."""
    for closing in ("", "'", '"'):
        try:
            return shlex.split(traced + closing)
        except ValueError:
            continue
    return traced.split()


def named(line: str) -> set[str] | None:
    """The programs the reader says the line runs (wrappers followed); None if it says the line is hidden."""
    split = split_command(line)
    if split.hidden:
        return None
    names = set()
    for command in split.commands:
        for invocation in invocations(command.words):
            names.add(program_name(invocation[0]) or "")
    return names


def misses(lines: list[str], folder: Path) -> list[tuple[str, set[str]]]:
    """The lines where bash ran a program the reader neither named nor marked hidden, with those programs."""
    found = []
    for line, ran in zip(lines, bash_runs(lines, folder), strict=True):
        names = named(line)
        if names is not None and ran - names:
            found.append((line, ran - names))
    return found


def _strings(values: Iterable[object]) -> list[str]:
    """The command lines among the values of the rule tests' tables (a line, or a tuple starting with one)."""
    lines = []
    for value in values:
        line = value[0] if isinstance(value, tuple) else value
        if isinstance(line, str) and len(line) <= _LONGEST:
            lines.append(line)
    return lines


def rule_test_lines() -> list[str]:
    """Every line in the project's rule tests."""
    tables = [
        reader_lines.SPLITS,
        reader_lines.UNREAD,
        reader_lines.NOT_PINNED,
        reader_lines.HIDDEN_LINES,
        reader_lines.EVERYDAY,
        reader_lines.COMMAND_WORDS,
        reader_lines.HOSTILE,
        policy_lines.SHELL_DECISIONS,
        policy_lines.HIDING,
        policy_lines.DENIED_EDITS,
        policy_lines.ATTACKS,
        *_app_tables(),
    ]
    return list(dict.fromkeys(line for table in tables for line in _strings(table)))


def _app_tables() -> list[list[str]]:
    """The lines of the rule bypasses replayed against the running app, read without importing the UI tests."""
    source = (Path(__file__).parents[1] / "ui" / "test_rule_bypasses.py").read_text()
    assigned = [node for node in ast.parse(source).body if isinstance(node, ast.Assign | ast.AugAssign)]
    return [ast.literal_eval(node.value) for node in assigned if ast.unparse(node).startswith(("HIDING", "EDITS"))]


pytestmark = needs_sandbox


def test_bash_runs_nothing_the_reader_does_not_name_in_the_rule_tests_lines(tmp_path: Path) -> None:
    lines = rule_test_lines()
    assert len(lines) > 400
    assert misses(lines, tmp_path / "corpus") == []


def test_the_oracle_sees_what_the_issue_27_lines_run(tmp_path: Path) -> None:
    """The trace is worth trusting: it sees the substitution that arithmetic runs, which the reader hides."""
    line = "y='a[$(touch made)]'; echo $((y))"
    # A value with a line break is traced over two lines: the program is ls, not the value's second word.
    multiline = "v=$( echo x{1,2}\nprintf x\n) ls"
    lines = [line, "ls | wc -l", "bash -c 'touch a'", "sleep 9 & touch b", multiline]
    traced = bash_runs(lines, tmp_path / "oracle")
    assert traced == [{"touch", "echo"}, {"ls", "wc"}, {"bash", "touch"}, {"sleep", "touch"}, {"echo", "printf", "ls"}]
    assert named(line) is None


# ---- generated lines ----

# Programs with an effect a test can see, written the ways bash lets one hide a name or an argument.
ATOMS = [
    "touch a",
    "rm -f a",
    "ls",
    "echo hi",
    "mkdir -p d",
    "cat f",
    "printf x",
    "true",
    "env touch e",
    "timeout 1 touch t",
    "nice -n 1 touch n",
    "find . -maxdepth 0 -exec touch z \\;",
    "echo y | xargs touch",
    "\\touch b",
    "tou\\\nch bc",
    "'touch' c",
    '"to"uch g',
    "$'\\x74ouch' h",
    "X=touch; $X i",
    "t=touch; ${t} j",
    "FOO=1 touch k",
    "eval 'touch l'",
    "eval touch m \\; ls",
    "bash -c 'touch o'",
    'bash -c "echo p; touch q"',
    "sh -c 'touch r'",
    "echo ${v:-$(touch s)}",
    "echo ${v:=x} ${#v} ${v%x}",
    "echo \"${v:-'$(touch ba)'}\" ${v:-'$(touch bb)'}",
    "echo $(( 1 + 2 ))",
    "echo $(( a[$(touch u)] ))",
    "y='a[$(touch w)]'; echo $((y))",
    "(( 1 ))",
    "arr[$(touch aa)]=1",
    "declare -i n=1",
    "f() { touch ab; }; f",
    "function g { touch ac; }; g",
    "shopt -s expand_aliases; alias q='touch ad'",
    "cat <<E\n$(touch ae)\nE\n",
    "cat <<'E'\n$(touch af)\nE\n",
    "cat <<< $(touch ag)",
    "cat <(touch ah)",
    "echo `touch ai`",
    'echo "$(touch aj)"',
    "[[ -f a ]] && touch ak",
    "[ -f a ] || touch al",
    "case x in x) touch am;; esac",
    "for i in 1 2; do touch an$i; done",
    "while false; do touch ao; done",
    "if true; then touch ap; else touch aq; fi",
    "time touch ar",
    "! touch as",
    "trap 'touch at' EXIT",
    "export PS4='$(touch au)'",
    "printf 'touch av' | bash",
    "{ touch aw; }",
    "touch ax > out",
    "ls 2>&1 | cat",
    "echo a > f; cat f >> g",
    "echo x{1,2}",
    "echo *",
]
SEPARATORS = [" && ", " || ", "; ", " | ", " & ", "\n"]


def _nest(text: str) -> st.SearchStrategy[str]:
    """Ways bash lets one command line hold another (ended by new lines: a here-document ends its line)."""
    forms = [
        f"( {text}\n)",
        f"{{ {text}\n}}",
        f"echo $( {text}\n)",
        f'echo "$( {text}\n)"',
        f"v=$( {text}\n) ls",
        f"if {text}\nthen {text}\nfi",
        f"while {text}\ndo break\ndone",
        f"for x in 1\ndo {text}\ndone",
        f"! {text}",
        f"{text} > out",
        f"{text} 2>/dev/null",
        f"eval {shlex.quote(text)}",
        f"bash -c {shlex.quote(text)}",
        f"h() {{ {text}\n}}\nh",
        f"echo $(( $( {text}\n) ))",
    ]
    if "`" not in text:
        forms.append(f"echo `{text}`")
    return st.sampled_from(forms)


def _join(parts: tuple[str, str, str]) -> str:
    """Two lines joined by a separator; after a here-document, whose body ends the line, by that new line."""
    left, separator, right = parts
    if left.endswith("\n"):
        return left + right
    return left + ("; " if separator == " | " and right.startswith("!") else separator) + right


def _lines() -> st.SearchStrategy[str]:
    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        joined = st.tuples(children, st.sampled_from(SEPARATORS), children).map(_join)
        return joined | children.flatmap(_nest)

    return st.recursive(st.sampled_from(ATOMS), extend, max_leaves=5)


GENERATED_PER_RUN = 2000
BATCH = 50


def test_bash_runs_nothing_the_reader_misses_in_generated_lines(tmp_path_factory: pytest.TempPathFactory) -> None:
    """At least `GENERATED_PER_RUN` lines from bash's fragments, `BATCH` per sandbox launch."""
    tried: list[int] = []

    @settings(
        max_examples=GENERATED_PER_RUN // BATCH,
        deadline=None,
        derandomize=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
        phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a miss names its line: no need to shrink 50
    )
    @given(st.lists(_lines(), min_size=BATCH, max_size=BATCH))
    def batch(lines: list[str]) -> None:
        tried.append(len(lines))
        assert misses(lines, tmp_path_factory.mktemp("generated")) == []

    batch()
    assert sum(tried) >= GENERATED_PER_RUN


def test_the_generated_lines_are_bash(tmp_path: Path) -> None:
    """Keeps the generator honest: a line bash refuses to read proves nothing about the reader."""

    @settings(max_examples=200, deadline=None)
    @given(_lines())
    def valid(line: str) -> None:
        checked = subprocess.run(["bash", "-n", "-c", line], capture_output=True, text=True, check=False)
        assert checked.returncode == 0, (line, checked.stderr)

    valid()
