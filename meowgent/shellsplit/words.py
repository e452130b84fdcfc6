"""The words of a shell command line, their values after quote removal, and what leaves a line's meaning open.

A `Problem` is a stable `kind` code and the `snippet` of the line it is about, so a sentence can be worded
from the code in any language; `str(problem)` is the English fragment the verdict's reason uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Word:
    """One word: `text` as written, `literal` its value after quote removal, or None when only running the command
    would tell it (an expansion, a substitution's placeholder, an unquoted glob or brace pattern)."""

    text: str
    literal: str | None

    @property
    def value(self) -> str:  # for matching and showing
        return self.text if self.literal is None else self.literal


def program_name(word: Word) -> str | None:
    """The base name of the program a command word runs (`/bin/rm` gives `rm`), None if only running it would tell."""
    if word.literal is None:
        return None
    return word.literal.rpartition("/")[2] or None


_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


@dataclass(frozen=True, slots=True)
class Redirect:
    """`2>&1`, `> out.txt`: `operator` keeps its file-descriptor number."""

    operator: str
    target: Word

    @property
    def writes(self) -> bool:
        """Whether it writes to a file (an unknown target counts); duplicating a descriptor does not."""
        operator = self.operator.lstrip("0123456789")
        target = self.target.literal
        if operator == ">&":  # `>&2` duplicates a descriptor, but `>& name` writes a file
            return target is None or not (target.isdigit() or target == "-")
        return operator in _WRITE_OPERATORS and target not in _HARMLESS_TARGETS

    @property
    def text(self) -> str:  # as shown in a command's text: `2>&1`, `> out`
        return f"{self.operator}{'' if self.operator.endswith('&') else ' '}{self.target.text}".rstrip()


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """A segment taken apart. `text` is how rules see it: its parts as written, in order, with each substitution as
    a placeholder (`echo $(...)`)."""

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    text: str


KINDS: dict[str, str] = {
    # The text cannot be read with confidence.
    "syntax": "{} is not bash that Meowgent can read",
    "grammar": "{} is a part of bash that Meowgent does not read",
    "block": "{} blocks are not split into commands",
    "too_deep": "{} is nested too deeply to read",
    "heredoc": "the here-document {} expands its text, which can run commands",
    "quoting": "{} is read differently by each shell",
    "process": "the process substitution {} hands a command's output to a program as a file, which may run it",
    # Values that bash evaluates as code.
    "expansion": "the expansion {} can run code hidden in a variable's value",
    "arithmetic": "the arithmetic {} can run code hidden in a variable's value",
    "subscript": "the array subscript in {} can run code hidden in a variable's value",
    "evaluates": "{} evaluates values as arithmetic or names",
    "escapes": "the $'...' word {} spells its text in escapes",
    # Commands that are not in the text, or not yet.
    "unknown_command": "the command {} is only known when it runs",
    "runs_text": "{} runs a text as a new command line",
    "unknown_text": "{} runs a text that is only known when it runs",
    "runs_file": "{} runs the commands in a file",
    "runs_input": "{} runs the commands it reads from its input",
    "runs_later": "{} sets code that bash runs later",
    "variable": "{} sets a variable whose value bash or a program runs, or that picks which program a name runs",
    "rebinds": "{} changes what a command name runs",
    "defines": "{} defines a function (or an array), which changes what a name runs",
    # Programs that run code their words do not show.
    "option": "{} is an option Meowgent does not know for this program, so it can't tell what runs",
    "runs_code": "{} makes the program run code Meowgent can't read",
    "unknown_word": "{} is only known when it runs, and could be an option that runs code",
    "too_many": "{} nests commands too deeply to read",
}
"""What leaves a line's meaning open: each kind of `Problem`, as an English sentence fragment around its snippet."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a line's meaning is not pinned down by its text: a kind from `KINDS` and the snippet it is about."""

    kind: str
    snippet: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown problem kind {self.kind!r}")
        object.__setattr__(self, "snippet", short(self.snippet))  # it goes in a sentence: a long one is cut

    def __str__(self) -> str:
        return KINDS[self.kind].format(f"`{self.snippet}`")


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True, slots=True)
class SplitResult:
    """The simple commands of a command line, and why its meaning is not pinned down (none: it is)."""

    commands: tuple[SimpleCommand, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(command.text for command in self.commands)

    @property
    def hidden(self) -> bool:  # the line may run code its commands do not show (see `reader`)
        return bool(self.problems)


_RUNNING_VARIABLES = frozenset(
    # bash runs or sources their values, or reads its options from them
    {"PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS"}
    | {"BASH_LOADABLES_PATH", "SHELL", "FCEDIT"}
    # they pick which program a name runs
    | {"PATH", "EXECIGNORE", "BASH_CMDS", "BASH_ALIASES"}
    # the C library and interpreters load code they name into every program, whatever it is
    | {"GCONV_PATH", "LUA_INIT", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"}
    | {"JDK_JAVA_OPTIONS", "PYTHONSTARTUP"}
    # programs run them as commands, or read options that do
    | {"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"}
    | {"GIT_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_CONFIG_PARAMETERS"}
    | {"GIT_CONFIG_COUNT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"}
    | {"PAGER", "MANPAGER", "MANOPT", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "SUDO_EDITOR", "BROWSER"}
    | {"LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH"}
    | {"TAR_OPTIONS", "ZIPOPT", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKESHELL"}
)
# Whole families: the loader's LD_PRELOAD and LD_AUDIT, git's GIT_CONFIG_KEY_n, bash's exported functions.
_RUNNING_PREFIXES = ("LD_", "DYLD_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "BASH_FUNC_")


def runs_value(name: str) -> bool:
    """Whether setting the variable `name` can make bash or a program run code the line does not show.

    Not BASH_XTRACEFD: it only picks the trace's descriptor. Not search paths such as PYTHONPATH: they pick which
    file a program that runs files loads, the boundary of what this reading promises (see `programs`).
    """
    return name in _RUNNING_VARIABLES or name.startswith(_RUNNING_PREFIXES)


def sets_running_variable(word: Word) -> bool:
    """Whether the variable a word sets (`runs_value`), or one whose name only running the line would tell."""
    name = variable_name(word)
    return name is None or runs_value(name)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SUBSCRIPTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")  # a name and a subscript, which bash evaluates as arithmetic


def variable_name(word: Word) -> str | None:
    """The variable `NAME=value`, `NAME+=value`, `NAME[i]=value` or `NAME` names; None when only running the line
    would tell: `"$n"=x` names whatever $n holds, but `"FOO=$x"` names FOO."""
    name = word.value.partition("=")[0].partition("[")[0].rstrip("+")
    if word.literal is None:
        name = name.lstrip("\"'")
        return name if _IDENTIFIER.fullmatch(name) else None
    return name or None
