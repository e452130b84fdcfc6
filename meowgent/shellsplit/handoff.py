"""Programs that hand a command or a shell line on in a way of their own: `flock FILE -c TEXT`, `xargs CMD`,
`watch TEXT`, `su -c TEXT`, `ssh HOST CMD`, `find -exec CMD ;`. What they run becomes a segment of its own,
or, for a text, is split as a command line."""

from __future__ import annotations

from collections.abc import Sequence

from meowgent.shellsplit.options import may_be_option, parse_options
from meowgent.shellsplit.reading import HELP as _HELP
from meowgent.shellsplit.reading import Found, Reader, Reading, ssh_option
from meowgent.shellsplit.reading import option_effects as _effects
from meowgent.shellsplit.reading import option_table as _o
from meowgent.shellsplit.words import Word

__all__ = ["READERS"]


def _read_flock(program: str, arguments: Sequence[Word]) -> Reading:
    """`flock FILE cmd...` runs cmd; `flock FILE -c 'text'` runs the text with the shell."""
    grammar = _o(
        "sxenoFuhV",
        "wE",
        long_flags="shared exclusive unlock nonblock nb close no-fork verbose " + _HELP,
        long_values="wait timeout conflict-exit-code",
    )
    parsed = parse_options(grammar, arguments)
    found = Found(program)
    found.unknown_stops(parsed)
    if found.problems or len(parsed.operands) < 2:
        return found.reading()
    rest = parsed.operands[1:]
    if rest[0].literal in ("-c", "--command"):
        found.text(rest[1] if len(rest) > 1 else None, rest[0].value)
        return found.reading()
    return found.reading(command=tuple(rest))


def _read_xargs(program: str, arguments: Sequence[Word]) -> Reading:
    """xargs runs its command with words from its input; with -I, in place of a string that may be the command."""
    grammar = _o(
        "0prtxo",
        "adEILnPs",
        optional="eil",
        long_flags="null interactive no-run-if-empty verbose exit show-limits open-tty " + _HELP,
        long_values="arg-file delimiter max-args max-procs max-chars process-slot-var",
        long_optional="eof replace max-lines",
    )
    parsed = parse_options(grammar, arguments)
    found = Found(program)
    found.unknown_stops(parsed)
    if found.problems or parsed.has("--help", "--version", "--show-limits"):
        return found.reading()
    replace = [option for option in parsed.options if option.name in ("-I", "-i", "--replace")]
    if replace and parsed.operands:
        token = replace[-1].value.value if replace[-1].value else "{}"
        if token and token in parsed.operands[0].value:
            found.problem("unknown_command", parsed.operands[0].text)
            return found.reading()
    return found.reading(command=tuple(parsed.operands), adds_input=True)


def _read_watch(program: str, arguments: Sequence[Word]) -> Reading:
    """watch runs its words with `sh -c` (joined by spaces), or as a command with -x."""
    grammar = _o(
        "bceghprtwxvC",
        "nq",
        optional="d",
        long_values="interval equexit",
        long_flags="beep color no-color errexit chgexit precise no-title no-wrap exec no-rerun " + _HELP,
        long_optional="differences",
    )
    parsed = parse_options(grammar, arguments)
    found = Found(program)
    found.unknown_stops(parsed)
    if found.problems or not parsed.operands:
        return found.reading()
    if parsed.has("-x", "--exec"):
        return found.reading(command=parsed.operands)
    found.problem("runs_text", "")
    found.texts.append((program, parsed.operands))
    return found.reading()


def _read_su(program: str, arguments: Sequence[Word]) -> Reading:
    """su and runuser: `-c TEXT` is a shell line; words after the user go to the user's shell; runuser -u wraps."""
    grammar = _o(
        "flmpPhV",
        "cgGsuw",
        long_flags="fast login preserve-environment pty " + _HELP,
        long_values="command session-command group supp-group shell user whitelist-environment",
        lone_dash=True,
        permute=program != "runuser",
    )
    parsed = parse_options(grammar, arguments)
    found = Found(program)
    found.unknown_stops(parsed)
    found.options(parsed, _effects(shell="-c --command --session-command", runs="-s --shell"))
    if program == "runuser" and parsed.has("-u", "--user") and not parsed.has("-c", "--command"):
        if found.problems:
            return found.reading()
        return found.reading(command=parsed.operands)
    if len(parsed.operands) > 1:  # arguments for the user's shell, such as `-c text`
        found.problem("runs_code", parsed.operands[1].text)
    return found.reading()


def _read_sg(program: str, arguments: Sequence[Word]) -> Reading:
    """`sg GROUP [-c] command` runs the command with /bin/sh -c."""
    found = Found(program)
    words = [word for word in arguments if word.literal != "-"]
    if len(words) < 2:
        return found.reading()
    command = words[2:] if words[1].literal == "-c" else words[1:]
    found.problem("runs_text", "")
    found.texts.append((program, tuple(command)))
    return found.reading()


def _read_ssh(program: str, arguments: Sequence[Word]) -> Reading:
    """ssh: options (also after the destination), the destination, then a command the remote shell runs."""
    grammar = _o("46AaCfGgKkMNnqsTtVvXxYy", "BbcDEeFIiJLlmOoPpQRSWw")
    effects = _effects(runs="-F -I", writes="-E", stops="-G -V -Q") | {"-o": lambda value: ssh_option(value)}
    found = Found(program)
    parsed = parse_options(grammar, arguments)
    found.unknown_stops(parsed)
    found.options(parsed, effects)
    if found.problems or found.stopped or not parsed.operands:
        return found.reading()
    after = parse_options(grammar, parsed.operands[1:])
    found.unknown_stops(after)
    found.options(after, effects)
    if after.operands and not found.problems:
        found.problem("runs_text", "")
        found.texts.append((program, after.operands))
    return found.reading()


def _read_find(program: str, arguments: Sequence[Word]) -> Reading:
    """find's actions: -exec and its kin run commands, -fprint and its kin write files, -delete deletes."""
    found = Found(program)
    index = 0
    while index < len(arguments):
        word = arguments[index]
        text = word.literal
        following = arguments[index + 1] if index + 1 < len(arguments) else None
        if text in _FIND_RUNS:
            end = next((i for i in range(index + 1, len(arguments)) if arguments[i].literal in (";", "+")), None)
            command = tuple(arguments[index + 1 : len(arguments) if end is None else end])
            if command and "{}" in command[0].value:  # it runs each file it finds
                found.problem("unknown_command", f"{text} {command[0].text}")
            elif command:
                found.started.append(command)
            index = len(arguments) if end is None else end + 1
            continue
        if text in _FIND_WRITES:
            found.write(text, following, "writes")
        elif text == "-delete":
            found.write(text, None, "deletes")
        elif text is None and may_be_option(word):  # `find . $action` could be `-exec ...`
            found.problem("unknown_word", word.text)
        index += 1 + (text in _FIND_VALUES) + 2 * (text == "-fprintf") + (text in _FIND_WRITES)
    return found.reading()


_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fls"})
# The tests and options that take one value, which may be anything (`-name "$pattern"`).
_FIND_VALUES = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname"}
    | {"-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm", "-size", "-links", "-inum", "-samefile"}
    | {"-newer", "-anewer", "-cnewer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-used"}
    | {"-maxdepth", "-mindepth", "-fstype", "-printf", "-context", "-regextype", "-files0-from", "-D", "-O"}
)


READERS: dict[str, Reader] = {
    "flock": _read_flock,
    "xargs": _read_xargs,
    "watch": _read_watch,
    "su": _read_su,
    "runuser": _read_su,
    "sg": _read_sg,
    "ssh": _read_ssh,
    "find": _read_find,
}
