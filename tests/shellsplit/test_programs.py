"""shellprograms: what wrappers run, which options run code or write files; properties over the option tables."""

from __future__ import annotations

import string

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from meowgent.shellsplit.programs import PROGRAMS, Program, Write, read_program, runs_value
from meowgent.shellsplit.reader import parse_segment
from meowgent.shellsplit.syntax import word_of
from meowgent.shellsplit.words import Word, program_name


def read(line: str):
    program, *arguments = parse_segment(line).words
    return read_program(program_name(program) or "", arguments)


def command_of(line: str) -> str:
    return " ".join(word.value for word in read(line).command)


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("env -iu HOME rm -rf docs", "rm -rf docs"),  # -iu is -i -u HOME
        ("env -i -- rm x", "rm x"),
        ("env - FOO=1 rm x", "rm x"),
        ("env --unset=HOME --chdir /tmp rm x", "rm x"),
        ("env --uns HOME rm x", "rm x"),  # an abbreviation of --unset, as getopt_long takes it
        ("sudo -u bob ls", "ls"),
        ("sudo -Eu bob -- rm x", "rm x"),
        ("sudo FOO=1 rm x", "rm x"),
        ("timeout 5 ls", "ls"),
        ("timeout -s KILL -k 1 5s rm x", "rm x"),
        ("nice -n 10 rm x", "rm x"),
        ("nice -5 rm x", "rm x"),
        ("ionice -c 3 rm x", "rm x"),
        ("stdbuf -oL -e0 rm x", "rm x"),
        ("setsid -f rm x", "rm x"),
        ("nohup rm x", "rm x"),
        ("xargs -0 rm", "rm"),
        ("xargs -n 1 -P4 rm -f", "rm -f"),
        ("command rm x", "rm x"),
        ("builtin cd x", "cd x"),
        ("exec -a name rm x", "rm x"),
        ("/usr/bin/time -v rm x", "rm x"),
        ("flock /tmp/l rm x", "rm x"),
        ("flock -n -w 5 /tmp/l rm x", "rm x"),
        ("chroot --userspec=a:b / rm x", "rm x"),
        ("unshare -rm rm x", "rm x"),
        ("nsenter -t 1 -m rm x", "rm x"),
        ("setpriv --reuid=1000 rm x", "rm x"),
        ("runuser -u bob -- rm x", "rm x"),
        ("strace -f -e trace=open rm x", "rm x"),
        ("ltrace -c rm x", "rm x"),
        ("valgrind --leak-check=full rm x", "rm x"),
        ("taskset 0x1 rm x", "rm x"),
        ("taskset -c 0,1 rm x", "rm x"),
        ("chrt -f 10 rm x", "rm x"),
        ("prlimit --nofile=10 rm x", "rm x"),
        ("busybox rm x", "rm x"),
        ("doas -u root rm x", "rm x"),
        ("pkexec --user root rm x", "rm x"),
        ("watch -x rm x", "rm x"),
        ("systemd-run --user --wait rm x", "rm x"),
        ("dbus-run-session -- rm x", "rm x"),
        ("sshpass -p pw rm x", "rm x"),
        ("eatmydata rm x", "rm x"),
        ("sudo -c class -a type rm x", "rm x"),  # sudo's -c and -a take values: the command is after them
        ("gosu bob rm x", "rm x"),
        ("proxychains -q rm x", "rm x"),
        ("faketime 2020-01-01 rm x", "rm x"),
        ("uv run rm -rf docs", "rm -rf docs"),
        ("uv --directory x run --with y pytest -q", "pytest -q"),
        ("uv tool run ruff check", "ruff check"),
        ("uvx ruff check", "ruff check"),
        ("poetry run rm x", "rm x"),
        ("pipenv run rm x", "rm x"),
        ("conda run -n base rm x", "rm x"),
        ("micromamba run -n base rm x", "rm x"),
        ("pipx run black .", "black ."),
        ("npx -y rimraf dist", "rimraf dist"),
        ("npm exec -- rm x", "rm x"),
        ("pnpm dlx rimraf x", "rimraf x"),
    ],
)
def test_a_wrapper_runs_the_command_after_its_own_options(line: str, command: str) -> None:
    reading = read(line)
    assert not reading.problems
    assert command_of(line) == command


@pytest.mark.parametrize(
    "line",
    [
        *("sudo -l rm x", "sudo --version", "command -v rm", "command -V rm", "ionice -p 12", "taskset -p 1 12", "env"),
        *("uv sync", "uv run -m pytest", "uv run --script x.py", "npm test", "npm install", "poetry install"),
    ],
)
def test_a_wrapper_that_runs_nothing_hands_on_no_command(line: str) -> None:
    assert read(line).command == ()
    assert not read(line).problems


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("env -Z rm x", "option"),
        ("sudo --bogus rm x", "option"),
        ("timeout --bogus 5 rm x", "option"),
        ("sudo -s rm x", "runs_code"),  # a shell reads its start-up files
        ("env -S rm", "runs_text"),
        ("flock f -c rm", "runs_text"),
        ("git -c alias.x=!rm x", "runs_code"),
        ("git clone --upload=x u", "runs_code"),
        ("tar --to-c=x -xf a.tar", "runs_code"),
        ("python -c x", "runs_code"),
        ("python", "runs_input"),
        ("xargs -I {} {}", "unknown_command"),
        ("uv run --bogus rm x", "option"),
        ("npx -c 'rm x'", "runs_text"),
        ("gdb -ex r ./a.out", "runs_code"),
        ("emacs --eval=x", "runs_code"),
        ("ipython -c x", "runs_code"),
        ("find . -exec {} \\;", "unknown_command"),
    ],
)
def test_what_a_program_does_that_its_words_do_not_show_is_a_problem(line: str, kind: str) -> None:
    reading = read(line)
    assert kind in {problem.kind for problem in reading.problems}, reading
    assert reading.command == ()


def test_a_variable_a_wrapper_sets_for_its_command_is_checked() -> None:
    for line in ["sudo LD_PRELOAD=x ls", "env PATH=. ls", "env 'BASH_FUNC_ls%%=() { :; }' ls"]:
        assert [problem.kind for problem in read(line).problems] == ["variable"], line
        assert command_of(line) == "ls"
    assert not read("env FOO=1 ls").problems


def test_git_config_keys_that_only_set_names_run_nothing() -> None:
    assert not read("git -c user.name=me -c color.ui=always commit -m x").problems
    assert read("git -c core.pager=less log").problems
    assert not read("git config user.email me@example.org").problems
    assert not read("git config --get core.pager").problems


def test_interpreters_running_a_file_or_a_module_are_not_problems() -> None:
    for line in [
        "python x.py -c y",
        "python -m pytest -c conf.ini",
        "python3 --version",
        "perl x.pl -e y",
        "node x.js",
    ]:
        assert not read(line).problems, line


@pytest.mark.parametrize(
    ("line", "write"),
    [
        ("git log --output=out.txt", Write("--output", Word("out.txt", "out.txt"), "replaces")),
        ("sort -no out in", Write("-no", Word("out", "out"), "replaces")),
        ("curl -sSLo page u", Write("-sSLo", Word("page", "page"), "replaces")),
        ("wget -a log u", Write("-a", Word("log", "log"), "appends")),
        ("find . -fprint out", Write("-fprint", Word("out", "out"), "replaces")),
        ("find . -delete", Write("-delete", None, "deletes")),
        ("sed -i.bak s/a/b/ f", Write("-i", None, "edits")),
        ("tee -a log", Write("tee", Word("log", "log"), "appends")),
        ("date -s now", Write("-s", Word("now", "now"), "sets")),
        ("uniq in out", Write("out", Word("out", "out"), "replaces")),
        ("dd of=disk.img", Write("of=", Word("disk.img", "disk.img"), "replaces")),
    ],
)
def test_write_options_name_their_spelling_and_target(line: str, write: Write) -> None:
    assert list(read(line).writes) == [write]


def test_variables_that_run_or_pick_programs() -> None:
    for name in ["PS4", "PROMPT_COMMAND", "BASH_ENV", "PATH", "LD_PRELOAD", "LD_AUDIT", "GIT_SSH_COMMAND", "PAGER"]:
        assert runs_value(name), name
    for name in ["HOME", "FOO", "BASH_XTRACEFD", "PYTHONPATH", "CC", "LANG"]:
        assert not runs_value(name), name


# ---- properties over the wrappers' tables ----

WRAPPERS = sorted(name for name, program in PROGRAMS.items() if program.wraps)
VALUE = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=4)


def harmless(program: Program, name: str) -> bool:
    return name not in program.effects


@st.composite
def known_options(draw: st.DrawFn, program: Program) -> list[str]:
    """Option words a wrapper's table knows and that do not change what runs (no effects)."""
    options = program
    flags = [letter for letter in options.flags if harmless(program, "-" + letter)]
    values = [letter for letter in options.values if harmless(program, "-" + letter)]
    longs = [name for name in options.long_flags if harmless(program, "--" + name)]
    long_values = [name for name in options.long_values if harmless(program, "--" + name)]
    choices = []
    if flags:
        choices.append(
            st.lists(st.sampled_from(flags), min_size=1, max_size=3).map(lambda cluster: ["-" + "".join(cluster)])
        )
    if values:
        choices.append(st.tuples(st.sampled_from(values), VALUE).map(lambda pair: [f"-{pair[0]}", pair[1]]))
        choices.append(st.tuples(st.sampled_from(values), VALUE).map(lambda pair: [f"-{pair[0]}{pair[1]}"]))
    if longs:
        choices.append(st.sampled_from(longs).map(lambda name: ["--" + name]))
    if long_values:
        choices.append(st.tuples(st.sampled_from(long_values), VALUE).map(lambda pair: [f"--{pair[0]}={pair[1]}"]))
        choices.append(st.tuples(st.sampled_from(long_values), VALUE).map(lambda pair: [f"--{pair[0]}", pair[1]]))
    if not choices:
        return []
    groups = draw(st.lists(st.one_of(choices), max_size=4))
    return [word for group in groups for word in group]


@st.composite
def wrapped(draw: st.DrawFn) -> tuple[str, list[str], list[str]]:
    """A wrapper, its known harmless options and operands, and the command after them."""
    name = draw(st.sampled_from(WRAPPERS))
    program = PROGRAMS[name]
    options = draw(known_options(program))
    operands = ["5"] * program.operands
    return name, options + operands, ["rm", "-rf", "docs"]


@settings(max_examples=400, deadline=None)
@given(wrapped())
def test_known_options_never_change_the_program_a_wrapper_runs(case: tuple[str, list[str], list[str]]) -> None:
    name, before, command = case
    reading = read_program(name, [word_of(text) for text in before + command])
    assert not reading.problems, case
    assert [word.value for word in reading.command] == command, case


@settings(max_examples=400, deadline=None)
@given(wrapped(), st.sampled_from(string.ascii_letters), st.data())
def test_any_unknown_option_of_a_wrapper_is_a_problem_and_hides_the_command(
    case: tuple[str, list[str], list[str]], letter: str, data: st.DataObject
) -> None:
    name, before, command = case
    options = PROGRAMS[name]
    assume(letter not in options.flags + options.values + options.optional + options.digits)
    unknown = data.draw(st.sampled_from([f"-{letter}", f"--{letter}zzq", f"--{letter}zzq=1"]))
    position = data.draw(st.integers(0, len(before) - PROGRAMS[name].operands))
    # Never between an option and its value: insert only at the start or after a whole option word group.
    assume(position == 0 or not _takes_next(name, before[position - 1]))
    line = [*before[:position], unknown, *before[position:], *command]
    reading = read_program(name, [word_of(text) for text in line])
    assert "option" in {problem.kind for problem in reading.problems}, (name, line)
    assert reading.command == ()


def _takes_next(name: str, word: str) -> bool:
    """Whether `word` is an option that takes the next word as its value in the wrapper's table."""
    options = PROGRAMS[name]
    if word.startswith("--"):
        return "=" not in word and word[2:] in options.long_values
    return word.startswith("-") and len(word) == 2 and word[1] in options.values
