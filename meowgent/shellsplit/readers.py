"""Programs read by code of their own, where an option table cannot say what they run or write.

- Code given as an option (`gdb -ex`, `emacs --eval`), or run by a server or a schedule (`tmux`, `at`).
- Hand-offs (`eval TEXT`, `bash -c TEXT`, `trap`, `flock -c`, `xargs CMD`, `watch`, `su -c`, `ssh HOST CMD`,
  `find -exec CMD ;`): a command becomes a segment of its own, a text is split as a command line.
- git's subcommands that set or run code (`config`, `bisect run`, `submodule foreach`).
- Writers: a sed or awk program, an operand that is the output file (`uniq in out`).

- bash's builtins that evaluate values or bind code (`let`, `declare -i`, `hash -p`, `alias`).

Each is handed what its table in `tables` read (`Parsed`, whose `words` are all of them); `git.config` reads what
follows `git config`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from meowgent.shellsplit.options import Parsed, may_be_option
from meowgent.shellsplit.reading import Found, Reader, RunsText, Starts, is_assignment
from meowgent.shellsplit.scripts import awk_runs_or_writes, sed_effects
from meowgent.shellsplit.syntax import word_of
from meowgent.shellsplit.tables import TABLES, git_config_runs, names
from meowgent.shellsplit.words import SUBSCRIPTED, sets_running_variable, variable_name

# ---- programs that run code given on the line, or handed to them ----


def _each_word(runs: Callable[[str], bool], *, unknown: str | None = "runs_code") -> Reader:
    """Words looked at one by one: one whose value `runs` runs code; one only known when it runs is an `unknown`."""

    def read(found: Found, parsed: Parsed) -> None:
        for word in parsed.words:
            if word.literal is None and unknown:
                found.problem(unknown, word.text)
            elif runs(word.value):
                found.problem("runs_code", word.text)

    return read


def _always(found: Found, parsed: Parsed) -> None:
    """Programs that run commands handed to them in ways this reading does not follow (a server, a schedule)."""
    found.problem("runs_code", "")


def _read_deno(found: Found, parsed: Parsed) -> None:
    """`deno eval CODE` and `deno repl` run code nobody sees as a file; `deno run x.ts` runs a file."""
    operands = [word for word in parsed.words if not word.value.startswith("-")]
    if not operands or operands[0].literal in (None, "eval", "repl"):
        found.problem("runs_code", operands[0].text if operands else "")


_GDB_RUNS = names(
    "-ex --ex -iex --iex -x --x -ix --ix -eval-command --eval-command -init-eval-command --init-eval-command"
    " -command --command -init-command --init-command"
)
_EMACS_RUNS = names(
    "--eval -eval --execute -execute -f --funcall -funcall -l --load -load -batch --batch --script -script -x"
)
_RUNNING: dict[str, Reader] = {
    # options that run commands (`gdb -ex 'shell rm x'`, `emacs --eval`)
    "gdb": _each_word(lambda text: text.partition("=")[0] in _GDB_RUNS),
    "emacs": _each_word(lambda text: text.partition("=")[0] in _EMACS_RUNS),
    **dict.fromkeys(("tmux", "screen", "at", "batch", "crontab", "parallel", "pwsh", "bwrap"), _always),
    "deno": _read_deno,
}


# ---- programs that hand a command or a shell line on ----


def _read_trap(found: Found, parsed: Parsed) -> None:
    """`trap 'text' SIGNAL` runs the text later; `trap - SIG`, `trap '' SIG` and `trap -p` set no code."""
    action = [word for word in parsed.words if not word.value.startswith("-")][:1]
    if action and action[0].value not in ("", "-"):
        found.problem("runs_later", action[0].text)
        found.handed.append(RunsText((action[0],), found.program))


def _read_shell(found: Found, parsed: Parsed) -> None:
    """`bash -c 'text'` runs the text as a command line, `bash file` a file, `curl x | sh` what it reads."""
    arguments, has_c, skip = parsed.words, False, False
    for index, word in enumerate(arguments):
        text = word.value
        if skip:
            skip = False
        elif text in ("-o", "+o", "-O", "+O"):
            skip = True
        elif text.startswith(("-", "+")) and text not in ("-", "--"):
            has_c |= not text.startswith("--") and "c" in text
        elif has_c:
            found.runs_text("-c", arguments[index : index + 1])
            return
        else:  # a script: shell commands a deny rule cannot see
            found.problem("runs_file", text)
            return
    found.problem("runs_input", "")  # `printf 'rm x' | sh`: the commands come from another program's output


def _read_flock(found: Found, parsed: Parsed) -> None:
    """`flock FILE cmd...` runs cmd; `flock FILE -c 'text'` runs the text with the shell."""
    if found.problems or len(parsed.operands) < 2:
        return
    rest = parsed.operands[1:]
    if rest[0].literal in ("-c", "--command"):
        found.runs_text(rest[0].value, rest[1:2])
        return
    found.command = rest


def _read_xargs(found: Found, parsed: Parsed) -> None:
    """xargs runs its command with words from its input; with -I, in place of a string that may be the command."""
    if found.blocked:
        return
    replace = parsed.values("-I", "-i", "--replace")
    if replace and parsed.operands:
        token = replace[-1].value if replace[-1] else "{}"
        if token and token in parsed.operands[0].value:
            found.problem("unknown_command", parsed.operands[0].text)
            return
    found.adds_input = True
    found.command = parsed.operands


def _read_watch(found: Found, parsed: Parsed) -> None:
    """watch runs its words with `sh -c` (joined by spaces), or as a command with -x."""
    if found.problems or not parsed.operands:
        return
    if parsed.has("-x", "--exec"):
        found.command = parsed.operands
    else:
        found.runs_text("", parsed.operands)


def _read_su(found: Found, parsed: Parsed) -> None:
    """su and runuser: `-c TEXT` is a shell line; words after the user go to the user's shell; runuser -u wraps."""
    if found.program == "runuser" and parsed.has("-u", "--user") and not parsed.has("-c", "--command"):
        found.command = () if found.problems else parsed.operands
        return
    if len(parsed.operands) > 1:  # arguments for the user's shell, such as `-c text`
        found.problem("runs_code", parsed.operands[1].text)


def _read_sg(found: Found, parsed: Parsed) -> None:
    """`sg GROUP [-c] command` runs the command with /bin/sh -c."""
    words = [word for word in parsed.words if word.literal != "-"]
    if len(words) >= 2:
        found.runs_text("", words[2:] if words[1].literal == "-c" else words[1:])


def _read_ssh(found: Found, parsed: Parsed) -> None:
    """ssh: options (also after the destination), the destination, then a command the remote shell runs."""
    if found.blocked or not parsed.operands:
        return
    after = found.read(TABLES["ssh"], parsed.operands[1:])
    if after.operands and not found.problems:
        found.runs_text("", after.operands)


def _read_find(found: Found, parsed: Parsed) -> None:
    """find's actions: -exec and its kin run commands, -fprint and its kin write files, -delete deletes."""
    arguments, index = parsed.words, 0
    while index < len(arguments):
        word = arguments[index]
        text = word.literal
        if text in _FIND_RUNS:
            end = next((i for i in range(index + 1, len(arguments)) if arguments[i].literal in (";", "+")), None)
            command = tuple(arguments[index + 1 : len(arguments) if end is None else end])
            if command and "{}" in command[0].value:  # it runs each file it finds
                found.problem("unknown_command", f"{text} {command[0].text}")
            elif command:
                found.handed.append(Starts(command))
            index = len(arguments) if end is None else end + 1
            continue
        if text in _FIND_WRITES:
            found.write(text, arguments[index + 1] if index + 1 < len(arguments) else None, "writes")
        elif text == "-delete":
            found.write(text, None, "deletes")
        elif text is None and may_be_option(word):  # `find . $action` could be `-exec ...`
            found.problem("unknown_word", word.text)
        index += 1 + (text in _FIND_VALUES) + 2 * (text == "-fprintf") + (text in _FIND_WRITES)


_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fls"})
# The tests and options that take one value, which may be anything (`-name "$pattern"`).
_FIND_VALUES = names(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -user -group -uid"
    " -gid -perm -size -links -inum -samefile -newer -anewer -cnewer -mtime -mmin -atime -amin -ctime -cmin -used"
    " -maxdepth -mindepth -fstype -printf -context -regextype -files0-from -D -O"
)

_HANDING_ON: dict[str, Reader] = {
    "eval": lambda found, parsed: found.runs_text("", parsed.words),
    "trap": _read_trap,
    **dict.fromkeys(("bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish"), _read_shell),
    **dict.fromkeys(
        ("source", "."), lambda found, parsed: found.problem("runs_file", " ".join(w.value for w in parsed.words))
    ),
    "flock": _read_flock,
    "xargs": _read_xargs,
    "watch": _read_watch,
    **dict.fromkeys(("su", "runuser"), _read_su),
    "sg": _read_sg,
    "ssh": _read_ssh,
    "find": _read_find,
}


# ---- git ----


def _read_git(found: Found, parsed: Parsed) -> None:
    """git's own options are its table's; a subcommand only known when it runs could be any (`git.NAME` are known)."""
    if not found.problems and parsed.operands and parsed.operands[0].literal is None:
        found.problem("unknown_command", parsed.operands[0].text)


def _git_config(found: Found, parsed: Parsed) -> None:
    """`git config key value` (or `set`) sets a key later git commands obey; `-e` opens an editor."""
    words = parsed.words
    if any(word.literal in ("-e", "--edit") for word in words):
        found.problem("runs_code", "config --edit")
        return
    operands = [word for word in words if not (word.literal or "").startswith("-")]
    if operands and operands[0].literal == "set":
        operands = operands[1:]
    elif operands and operands[0].literal in ("get", "list", "unset", "get-regexp", "get-all"):
        return
    if len(operands) >= 2 and git_config_runs(word_of(f"{operands[0].value}=")):
        found.problem("runs_code", f"config {operands[0].text}")
    elif any(word.literal is None for word in words):
        found.problem("unknown_word", "config")


def _git_runs_rest(after: str) -> Reader:
    """`git bisect run CMD...` and `git submodule foreach CMD`: the words after `after` are a shell line."""

    def read(found: Found, parsed: Parsed) -> None:
        words = parsed.words
        values = [word.literal for word in words]
        if after in values:
            command = [word for word in words[values.index(after) + 1 :] if word.literal != "--recursive"]
            found.runs_text(after, command)

    return read


_GIT: dict[str, Reader] = {
    "git": _read_git,
    "git.config": _git_config,
    "git.bisect": _git_runs_rest("run"),
    "git.submodule": _git_runs_rest("foreach"),
    **dict.fromkeys(("git.filter-branch", "git.instaweb", "git.web--browse"), _always),
}


# ---- programs whose scripts or operands run code or write files ----


def _read_sed(found: Found, parsed: Parsed) -> None:
    """sed: `-i` edits files; a script with `e` or `s///e` runs commands, `w` writes a file."""
    for option in parsed.options:
        if option.name in ("-i", "--in-place"):
            found.write(option.spelling, None, "edits")
    scripts = parsed.values("-e", "--expression")
    if not scripts and not parsed.has("-f", "--file") and parsed.operands:
        scripts = [parsed.operands[0]]
    for script in scripts:
        if script is None or script.literal is None:
            found.problem("runs_code", script.text if script else "-e")
            continue
        effects = sed_effects(script.literal)
        if effects.runs and not parsed.has("--sandbox"):
            found.problem("runs_code", script.text)
        for written in effects.writes:
            found.write(script.text, word_of(written), "writes")


def _read_awk(found: Found, parsed: Parsed) -> None:
    """awk: a program text that calls `system`, pipes or redirects runs code; `-l` loads a library."""
    texts = parsed.values("-e", "--source")
    if not texts and not parsed.has("-f", "--file", "-E", "--exec") and parsed.operands:
        texts = [parsed.operands[0]]
    sandboxed = parsed.has("-S", "--sandbox")
    for text in texts:
        if text is None or text.literal is None or (not sandboxed and awk_runs_or_writes(text.literal)):
            found.problem("runs_code", text.text if text else "")


def _zip_runs(text: str) -> bool:
    """zip -T runs `unzip` to test, or the command -TT (--unzip-command) names."""
    return (text.startswith("-") and not text.startswith("--") and "TT" in text) or (
        len(text) >= 5 and "--unzip-command".startswith(text.partition("=")[0])
    )


# sqlite3's dot-commands and SQL functions that run a command, load code or write a file.
_SQLITE_RUNS = (".shell", ".system", ".load", ".output", ".once", ".excel", "load_extension", "writefile", "edit(")


def _read_tee(found: Found, parsed: Parsed) -> None:
    for target in (*parsed.operands, *parsed.unread):
        found.write(found.program, target, "appends" if parsed.has("-a", "--append") else "writes")


def _output_operand(found: Found, parsed: Parsed) -> None:
    """uniq and xxd write their second operand: `uniq in out`."""
    if len(parsed.operands) > 1:
        found.write(parsed.operands[1].text, parsed.operands[1], "writes")
    for word in parsed.unread:
        found.write(word.text, None, "writes")


def _read_dd(found: Found, parsed: Parsed) -> None:
    for word in parsed.words:
        if word.value.startswith("of="):
            found.write("of=", word_of(word.value[3:]) if word.literal is not None else None, "writes")
        elif word.literal is None:
            found.write(word.text, None, "writes")


def _read_openssl(found: Found, parsed: Parsed) -> None:
    arguments = parsed.words
    for index, word in enumerate(arguments):
        if word.literal == "-out":
            found.write("-out", arguments[index + 1] if index + 1 < len(arguments) else None, "writes")


def _read_make(found: Found, parsed: Parsed) -> None:
    """`make SHELL=...` changes the shell every recipe runs with."""
    for word in parsed.operands:
        if is_assignment(word) and variable_name(word) in (None, "SHELL", ".SHELLFLAGS", "MAKESHELL"):
            found.problem("runs_code", word.text)


_WRITING: dict[str, Reader] = {
    "sed": _read_sed,
    "awk": _read_awk,
    "zip": _each_word(_zip_runs, unknown="unknown_word"),
    "sqlite3": _each_word(lambda text: any(needle in text.lower() for needle in _SQLITE_RUNS)),
    "tee": _read_tee,
    **dict.fromkeys(("uniq", "xxd"), _output_operand),
    "dd": _read_dd,
    "openssl": _read_openssl,
    "make": _read_make,
    # vim and less run their `+cmd` words as commands (`+!rm x` runs a shell command)
    **dict.fromkeys(("vim", "less"), _each_word(lambda text: len(text) > 1 and text.startswith("+"), unknown=None)),
}

# ---- bash's builtins that evaluate values or bind code ----


def _read_builtin(found: Found, parsed: Parsed) -> None:
    """What a bash builtin leaves open: values it evaluates, variables it sets, code it binds to a name. Its table
    (`read`, `mapfile`, `printf -v`, `complete -C`, ...) has noted the options that name a variable or set code."""
    program, arguments = found.program, parsed.words
    texts = [argument.value for argument in arguments]
    snippet = " ".join(texts)
    if program == "let" or (program == "[[" and _ARITHMETIC_TESTS.intersection(texts)):
        found.problem("arithmetic", snippet)
    if program in _NAMES_VARIABLES and any(SUBSCRIPTED.match(text) for text in texts):
        found.problem("subscript", snippet)
    # `declare -i` evaluates values as arithmetic, `-n` makes a name stand for another (`-ix`, `+n` too)
    declares = program in _DECLARES
    if declares and any(text[:1] in "-+" and text[1:].isalpha() and set(text) & {"i", "n"} for text in texts):
        found.problem("evaluates", snippet)
    # the variables it sets: `export PS4=x`, `mapfile NAME`, `read NAME`, `getopts spec NAME`, `for NAME in ...`
    named = parsed.operands[: _NAMING_OPERANDS.get(program, 0)]
    if declares:
        named = tuple(word for word in arguments if not word.value.startswith(("-", "+")))
    elif program in ("getopts", "for"):
        named = arguments[program == "getopts" :][:1]
    if any(sets_running_variable(word) for word in named):
        found.problem("variable", snippet)
    if (
        (program == "hash" and any("p" in text for text in texts if text.startswith("-")))  # `hash -p /bin/rm ls`
        or (program == "alias" and any("=" in word.value or word.literal is None for word in arguments))
        or (program == "enable" and any(not re.fullmatch(r"-[aps]+", text) for text in texts))  # `-n`, `-f` loads
    ):
        found.problem("rebinds", snippet)
    if program == "fc":
        found.problem("runs_code", snippet)  # fc runs commands from the history, or an editor


_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
# Builtins that take variable names, where `a[$x]` evaluates $x as arithmetic.
_NAMES_VARIABLES = frozenset(
    {"declare", "typeset", "local", "readonly", "export", "unset", "read", "mapfile", "readarray", "printf"}
    | {"test", "[", "[[", "wait", "let"}
)
_DECLARES = frozenset({"declare", "typeset", "local", "readonly", "export"})
_NAMING_OPERANDS = {"read": None, "mapfile": 1, "readarray": 1}  # how many operands name variables (None: all)
_BUILTINS = _NAMES_VARIABLES | {"getopts", "for", "hash", "alias", "enable", "fc"}

READERS: dict[str, Reader] = {
    **_RUNNING,
    **_HANDING_ON,
    **_GIT,
    **_WRITING,
    **dict.fromkeys(_BUILTINS, _read_builtin),
}
