"""Variables whose value runs: setting one can make bash or a program run code the line does not show."""

from __future__ import annotations

import re

from meowgent.shellsplit.words import Word

__all__ = ["runs_value", "variable_name"]

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

    BASH_XTRACEFD is not here: it only picks the descriptor the trace goes to, which runs nothing.
    Search paths such as PYTHONPATH are not either: they pick which file a program that runs files loads,
    which is the boundary of what this reading promises (see the module docstring).
    """
    return name in _RUNNING_VARIABLES or name.startswith(_RUNNING_PREFIXES)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def variable_name(word: Word) -> str | None:
    """The variable a `NAME=value`, `NAME+=value` or `NAME[i]=value` word, or a bare `NAME`, names.

    None when only running the line would tell: `"$n"=x` names whatever $n holds, but `"FOO=$x"` names FOO.
    """
    name = word.value.partition("=")[0].partition("[")[0].rstrip("+")
    if word.literal is None:
        name = name.lstrip("\"'")
        return name if _IDENTIFIER.fullmatch(name) else None
    return name or None
