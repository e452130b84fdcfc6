"""What programs do with their words: the command a wrapper runs, code an option runs, files an option writes.

`read_program("sudo", words)` takes a command's arguments apart by the program's own option table
and tells what bash's grammar cannot: that `env -iu HOME rm x` runs `rm x` (`-iu` is `-i -u HOME`),
that `git -c alias.x='!rm x' x` runs code from its own options, that `flock f -c 'rm x'` runs a
shell line, that `git log --output=FILE` writes a file.

It fails closed. A wrapper with an option its table does not know, an option that runs code, an
inline program (`python -c`, `perl -e`, `sed 's/x/y/e'`, `awk '{system(...)}'`), a program read from
standard input, a value that only running the line would tell where an option could stand: each is
a `Problem`, so the line is not pinned down by its text.

The boundary: running a file is not a problem (`python x.py`, `make`, `pytest`, `bash build.sh` is
one for bash's own reasons). The file is not on the card either way; what holds there is the OS
sandbox the command runs in, not this reading. Configuration files are files too: `git status` runs
whatever hooks `.git/config` names. What a line's own text says is what this module reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal, cast

from meowgent.shellsplit.options import Option, Options, Parsed, may_be_option, parse_options
from meowgent.shellsplit.scripts import awk_runs_or_writes, sed_effects
from meowgent.shellsplit.words import Problem, Word, program_name, short

__all__ = [
    "MAX_NESTED",
    "PROGRAMS",
    "Program",
    "Reading",
    "Write",
    "invocations",
    "read_program",
    "runs_value",
    "variable_name",
]

WriteHow = Literal["replaces", "appends", "edits", "deletes", "sets"]


@dataclass(frozen=True, slots=True)
class Write:
    """A file a command writes through an option or an operand rather than a redirection.

    A rule pattern covers it only when the pattern spells `spelling` at the start of one of its
    words (`--output`, `-o`, `tee`), as a `>` must be spelled to cover a redirection.
    """

    spelling: str
    target: Word | None
    how: WriteHow


@dataclass(frozen=True, slots=True)
class Reading:
    """What one command does with its arguments, as far as the program's table tells."""

    command: tuple[Word, ...] = ()
    """The command a wrapper runs in turn (`sudo -u bob rm x` gives `rm x`); empty if none or not known."""
    adds_input: bool = False
    """Whether `command` also gets arguments read from the input (xargs)."""
    started: tuple[tuple[Word, ...], ...] = ()
    """Other commands it starts, each with its own arguments (`find -exec rm {} ;` gives `rm {}`)."""
    texts: tuple[tuple[str, tuple[Word, ...]], ...] = ()
    """Shell lines it runs, each as who runs it and the words that joined with spaces make the line."""
    problems: tuple[Problem, ...] = ()
    writes: tuple[Write, ...] = ()


# ---- reading a program ----

Effect = Literal["runs", "shell", "env", "writes", "appends", "edits", "deletes", "sets", "stops"]
"""What an option does: runs code; its value is a shell line; its value is NAME=value for the environment;
it writes, appends to, edits or deletes files (its value, when it takes one); it sets the system's state;
or no command runs after it (`sudo -l`, `command -v`)."""

ValueCheck = Callable[[Word | None], Effect | None]
"""An effect that depends on the option's value (`git -c user.name=x` is harmless, `-c alias.x=!rm` runs)."""


@dataclass(frozen=True, slots=True)
class Program:
    """A program's option table and what its options do."""

    options: Options
    effects: Mapping[str, Effect | ValueCheck] = field(default_factory=dict)
    wraps: bool = False
    """Its operands (after `operands` of them) are a command it runs: sudo, env, timeout."""
    operands: int = 0
    """Words it takes before the command: timeout's DURATION, flock's FILE."""
    assignments: bool = False
    """`NAME=value` words may come before the command (env, sudo)."""


def read_program(program: str, arguments: Sequence[Word]) -> Reading:
    """What `program` (a base name such as `sudo`) does with `arguments`; see the module docstring."""
    name = _family(program)
    custom = _CUSTOM.get(name)
    if custom is not None:
        return custom(program, arguments)
    table = PROGRAMS.get(name)
    if table is None:
        return Reading()
    return _read_table(program, table, arguments)


MAX_NESTED = 8
"""Wrappers inside wrappers, or texts run inside texts, read before the line counts as too deep to read."""


def invocations(words: Sequence[Word]) -> Iterator[Sequence[Word]]:
    """The command with its arguments, then again the command each wrapper runs (`sudo env rm x`: three).

    The wrappers' own option tables (below) say where their command starts: `env -iu HOME rm x`
    runs `rm x`. Past `MAX_NESTED` wrappers it stops; the splitter marks such a line hidden.
    """
    for _ in range(MAX_NESTED):
        if not words:
            return
        yield words
        program = program_name(words[0])
        if program is None:
            return
        words = read_program(program, words[1:]).command


def _family(program: str) -> str:
    """The name programs of one family share: `python3.12` and `pypy3` are python, `gawk` is awk, `nvim` is vim."""
    for pattern, family in _FAMILIES:
        if pattern.fullmatch(program):
            return family
    return program


def _read_table(program: str, table: Program, arguments: Sequence[Word]) -> Reading:
    found = _Found(program)
    command = _apply_table(found, table, parse_options(table.options, arguments))
    return found.reading(command=command)


def _apply_table(found: _Found, table: Program, parsed: Parsed) -> tuple[Word, ...]:
    """Note what the options do; the command a wrapper runs (empty when none, or when it is not known)."""
    found.options(parsed, table.effects)
    if table.options.permute:
        found.unknown_letters(parsed, table.effects)
        found.unread(parsed, writes=_writes_any(table.effects), runs=_runs_any(table.effects))
    else:
        found.unknown_stops(parsed)
    if not table.wraps or found.problems or found.stopped or len(parsed.operands) < table.operands:
        return ()
    operands = list(parsed.operands[table.operands :])
    if table.assignments:
        while operands and _is_assignment(operands[0]):
            found.assignment(operands.pop(0))
    return tuple(operands)


def _writes_any(effects: Mapping[str, Effect | ValueCheck]) -> bool:
    return any(effect in ("writes", "appends", "edits", "deletes", "sets") for effect in effects.values())


def _runs_any(effects: Mapping[str, Effect | ValueCheck]) -> bool:
    return any(effect in ("runs", "shell") or callable(effect) for effect in effects.values())


class _Found:
    """What the reading of one command has found so far."""

    def __init__(self, program: str) -> None:
        self.program = program
        self.problems: list[Problem] = []
        self.texts: list[tuple[str, tuple[Word, ...]]] = []
        self.writes: list[Write] = []
        self.started: list[tuple[Word, ...]] = []
        self.stopped = False

    def problem(self, kind: str, snippet: str) -> None:
        self.problems.append(Problem(kind, short(f"{self.program} {snippet}".strip())))

    def options(self, parsed: Parsed, effects: Mapping[str, Effect | ValueCheck]) -> None:
        for option in parsed.options:
            effect = effects.get(option.name)
            if callable(effect):
                effect = effect(option.value)
            if effect is not None:
                self.effect(effect, option)

    def effect(self, effect: Effect, option: Option) -> None:
        if effect == "runs":
            self.problem("runs_code", option.spelling)
        elif effect == "shell":
            self.text(option.value, option.spelling)
        elif effect == "env":
            if option.value is None or not _is_assignment(option.value):
                self.problem("variable", option.word.text)
            else:
                self.assignment(option.value)
        elif effect == "stops":
            self.stopped = True
        else:
            self.write(option.spelling, option.value, effect)

    def text(self, value: Word | None, spelling: str) -> None:
        """A shell line the program runs: split it when it is literal; either way the line is not pinned down."""
        self.problem("runs_text", spelling)
        if value is not None:
            self.texts.append((f"{self.program} {spelling}", (value,)))

    def write(self, spelling: str, target: Word | None, how: Effect) -> None:
        if target is None or target.literal not in _NOT_FILES:
            self.writes.append(Write(spelling, target, _WRITE_HOW[how]))

    def assignment(self, word: Word) -> None:
        name = variable_name(word)
        if name is None or runs_value(name):
            self.problem("variable", word.text)

    def unknown_stops(self, parsed: Parsed) -> None:
        """A program whose options end at its first operand: an unknown option hides what follows."""
        for word in parsed.unknown:
            self.problem("option", word.text)
        for word in parsed.unread:
            self.problem("unknown_word", word.text)

    def unread(self, parsed: Parsed, *, writes: bool, runs: bool) -> None:
        """A word only known when it runs may be any option: one that runs code, or one that writes."""
        for word in parsed.unread:
            if runs:
                self.problem("unknown_word", word.text)
            if writes:
                self.writes.append(Write(word.text, None, "replaces"))

    def unknown_letters(self, parsed: Parsed, effects: Mapping[str, Effect | ValueCheck]) -> None:
        """An option word the table cannot read may still hold a letter that runs code or writes: count it."""
        for word in parsed.unknown:
            text = word.value
            letters = text[1:] if not text.startswith("--") else ""
            for letter in dict.fromkeys(letters):
                effect = effects.get("-" + letter)
                if effect is not None:
                    self.effect(effect if not callable(effect) else "runs", Option("-" + letter, None, word))

    def reading(self, command: Sequence[Word] = (), *, adds_input: bool = False) -> Reading:
        return Reading(
            tuple(command),
            adds_input,
            tuple(self.started),
            tuple(self.texts),
            tuple(dict.fromkeys(self.problems)),
            tuple(self.writes),
        )


_NOT_FILES = frozenset({"-", "/dev/null", "/dev/stdout", "/dev/stderr"})
_WRITE_HOW: dict[str, WriteHow] = {
    "writes": "replaces",
    "appends": "appends",
    "edits": "edits",
    "deletes": "deletes",
    "sets": "sets",
}


# ---- variables whose value runs ----

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


def _is_assignment(word: Word) -> bool:
    """Whether env or sudo takes the word for `NAME=value` rather than the command."""
    name, equals, _value = word.value.partition("=")
    return bool(equals and name) and not name.startswith("-") and not any(char.isspace() for char in name)


# ---- the tables ----


def _o(
    flags: str = "",
    values: str = "",
    *,
    optional: str = "",
    digits: str = "",
    long_flags: str = "",
    long_values: str = "",
    long_optional: str = "",
    numbers: bool = False,
    lone_dash: bool = False,
    permute: bool = False,
    ends: frozenset[str] = frozenset(),
    lenient_long: bool = False,
) -> Options:
    """An option table from space-separated long names, to keep the tables below short."""
    return Options(
        flags,
        values,
        optional,
        digits,
        frozenset(long_flags.split()),
        frozenset(long_values.split()),
        frozenset(long_optional.split()),
        numbers=numbers,
        lone_dash=lone_dash,
        permute=permute,
        ends=ends,
        lenient_long=lenient_long,
    )


def _effects(**groups: str) -> dict[str, Effect | ValueCheck]:
    """`runs="-c --command"` → {"-c": "runs", "--command": "runs"}."""
    return {name: cast(Effect, effect) for effect, names in groups.items() for name in names.split()}


_HELP = "help version"

PROGRAMS: dict[str, Program] = {  # option tables; a program in `_CUSTOM` is read by code, from its table if it has one
    "sudo": Program(
        _o(
            "AbBEeHiKklNnPSsVv",
            "acCDgpRrTtUu",
            optional="h",
            long_flags="askpass background set-home login non-interactive preserve-groups stdin shell"
            " reset-timestamp remove-timestamp list validate edit bell " + _HELP,
            long_values="user group close-from chdir host prompt role type command-timeout other-user chroot",
            long_optional="preserve-env",
        ),
        # a login or interactive shell reads its start-up files; -e runs an editor
        _effects(runs="-s --shell -i --login -e --edit", stops="-l --list -V --version -v --validate -K --help"),
        wraps=True,
        assignments=True,
    ),
    "doas": Program(_o("nsL", "uC"), _effects(runs="-s", stops="-C -L"), wraps=True),
    "pkexec": Program(
        _o(long_flags="disable-internal-agent keep-cwd " + _HELP, long_values="user"),
        _effects(stops="--help --version"),
        wraps=True,
    ),
    "env": Program(
        _o(
            "i0v",
            "uCSP",
            long_flags="ignore-environment null debug list-signal-handling " + _HELP,
            long_values="unset chdir split-string",
            long_optional="block-signal default-signal ignore-signal",
            lone_dash=True,
        ),
        # -S splits a text into a command line; BSD's -P searches another PATH
        _effects(shell="-S --split-string", runs="-P", stops="--help --version"),
        wraps=True,
        assignments=True,
    ),
    "nice": Program(
        _o(values="n", long_values="adjustment", long_flags=_HELP, numbers=True),
        _effects(stops="--help --version"),
        wraps=True,
    ),
    "ionice": Program(
        _o("thV", "cnpPu", long_values="class classdata", long_flags="pid pgid uid ignore " + _HELP),
        _effects(stops="-p -P -u --pid --pgid --uid -h -V --help --version"),  # these act on running processes
        wraps=True,
    ),
    "timeout": Program(
        _o(
            "v",
            "sk",
            long_flags="preserve-status foreground verbose " + _HELP,
            long_values="signal kill-after",
        ),
        _effects(stops="--help --version"),
        wraps=True,
        operands=1,
    ),
    "stdbuf": Program(
        _o(values="ioe", long_values="input output error", long_flags=_HELP),
        _effects(stops="--help --version"),
        wraps=True,
    ),
    "setsid": Program(
        _o("cfwhV", long_flags="ctty fork wait " + _HELP), _effects(stops="-h -V --help --version"), wraps=True
    ),
    "nohup": Program(_o(long_flags=_HELP), _effects(stops="--help --version"), wraps=True),
    "command": Program(_o("pvV"), _effects(stops="-v -V"), wraps=True),  # -v and -V only say what runs
    "builtin": Program(_o(), wraps=True),
    "exec": Program(_o("cl", "a"), wraps=True),
    "time": Program(  # /usr/bin/time; bash's own `time` is a keyword the splitter drops
        _o(
            "pvqaV",
            "fo",
            long_flags="portability verbose quiet append " + _HELP,
            long_values="format output",
        ),
        _effects(writes="-o --output", stops="-V --help --version"),
        wraps=True,
    ),
    "chroot": Program(
        _o(long_flags="skip-chdir " + _HELP, long_values="userspec groups"),
        _effects(stops="--help --version"),
        wraps=True,
        operands=1,
    ),
    "unshare": Program(
        _o(
            "frchV",
            "RwSG",
            optional="muinpUCT",
            long_flags="fork map-root-user map-current-user map-auto keep-caps " + _HELP,
            long_values="map-user map-group map-users map-groups propagation setgroups root wd setuid setgid"
            " monotonic boottime",
            long_optional="mount uts ipc net pid user cgroup time kill-child mount-proc",
        ),
        _effects(stops="-h -V --help --version"),
        wraps=True,
    ),
    "nsenter": Program(
        _o(
            "aFZhV",
            "tSGW",
            optional="muinpUCTrw",
            long_flags="all no-fork follow-context preserve-credentials " + _HELP,
            long_values="target setuid setgid wdns",
            long_optional="mount uts ipc net pid user cgroup time root wd",
        ),
        _effects(stops="-h -V --help --version"),
        wraps=True,
    ),
    "setpriv": Program(
        _o(
            "dhV",
            long_flags="nnp no-new-privs clear-groups keep-groups init-groups reset-env dump " + _HELP,
            long_values="ambient-caps inh-caps bounding-set ruid euid rgid egid reuid regid groups securebits"
            " pdeathsig selinux-label apparmor-profile",
        ),
        _effects(stops="-d --dump -h -V --help --version"),
        wraps=True,
    ),
    "taskset": Program(
        _o("acphV", long_flags="all-tasks pid cpu-list " + _HELP),
        _effects(stops="-p --pid -h -V --help --version"),
        wraps=True,
        operands=1,
    ),
    "chrt": Program(
        _o(
            "bdfioRrampvhV",
            "TPD",
            long_flags="batch deadline fifo idle other rr reset-on-fork all-tasks max pid verbose " + _HELP,
            long_values="sched-runtime sched-period sched-deadline",
        ),
        _effects(stops="-m --max -p --pid -h -V --help --version"),
        wraps=True,
        operands=1,
    ),
    "prlimit": Program(
        _o(
            "hV",
            "po",
            optional="cdefilmnqrstuvxy",
            long_flags="noheadings raw verbose " + _HELP,
            long_values="pid output",
            long_optional="core data nice fsize sigpending memlock rss nofile msgqueue rtprio stack cpu nproc"
            " as locks rttime",
        ),
        _effects(stops="-p --pid -h -V --help --version"),
        wraps=True,
    ),
    "strace": Program(
        _o(
            "cCdDfFhiknqrtTvVwxyzZ",
            "abeEIoOpPsSuXU",
            long_flags="follow-forks output-separately summary-only summary seccomp-bpf stack-trace no-abbrev"
            " verbose summary-wall-clock " + _HELP,
            long_values="output trace signal status env user string-limit attach raw abbrev read write fault"
            " inject trace-path summary-sort-by columns",
            long_optional="quiet decode-fds absolute-timestamps relative-timestamps syscall-times timestamps"
            " decode-pids",
        ),
        # `-o '|cmd'` pipes the trace into a command
        _effects(env="-E --env", stops="-p --attach -h -V --help --version")
        | {"-o": lambda value: _pipes_or("writes", value), "--output": lambda value: _pipes_or("writes", value)},
        wraps=True,
    ),
    "ltrace": Program(
        _o(
            "bcCfhiLrStTV",
            "aAeFlnopsuwxD",
            long_flags="demangle " + _HELP,
            long_values="output align indent library config",
        ),
        _effects(writes="-o --output", stops="-p -h -V --help --version"),
        wraps=True,
    ),
    "valgrind": Program(
        _o(
            "qvh",
            long_flags="quiet verbose " + _HELP,
            long_optional="tool log-file xml-file log-fd log-socket xml xml-fd trace-children trace-children-skip"
            " child-silent-after-fork vgdb vgdb-error track-fds time-stamp error-limit error-exitcode"
            " show-below-main num-callers suppressions gen-suppressions leak-check show-leak-kinds"
            " errors-for-leak-kinds leak-resolution track-origins undef-value-errors read-var-info"
            " max-stackframe main-stacksize keep-debuginfo smc-check demangle fair-sched show-error-list"
            " db-attach db-command",
        ),
        _effects(writes="--log-file --xml-file", runs="--db-attach --db-command", stops="-h --help --version"),
        wraps=True,
    ),
    "busybox": Program(
        _o(long_flags="list list-full help"), _effects(stops="--list --list-full --help"), wraps=True
    ),  # `busybox rm x` runs the applet rm
    "sshpass": Program(_o("ve", "fdpP"), wraps=True),
    "proxychains": Program(_o("q", "f"), wraps=True),
    "torsocks": Program(
        _o("idqh", "uapP", long_flags="isolate quiet debug version " + _HELP, long_values="user pass address port"),
        _effects(stops="-h --help --version"),
        wraps=True,
    ),
    "unbuffer": Program(_o("p"), wraps=True),
    **dict.fromkeys(("gosu", "su-exec", "setuidgid"), Program(_o(), wraps=True, operands=1)),  # `gosu USER cmd`
    "catchsegv": Program(_o(), wraps=True),
    "cgexec": Program(_o(values="g", long_flags="sticky"), wraps=True),
    "faketime": Program(
        _o("mf", long_flags="exclude-monotonic " + _HELP, long_values="date-prog"),
        _effects(runs="--date-prog", stops="--help --version"),
        wraps=True,
        operands=1,
    ),
    "eatmydata": Program(_o(), wraps=True),
    "fakeroot": Program(
        _o("uhv", "lsib", long_flags="unknown-is-real " + _HELP, long_values="lib faked"),
        _effects(runs="-l --lib --faked", writes="-s", stops="-h -v --help --version"),
        wraps=True,
    ),
    "dbus-run-session": Program(
        _o(long_flags=_HELP, long_values="config-file dbus-daemon"),
        _effects(runs="--dbus-daemon", stops="--help --version"),
        wraps=True,
    ),
    "systemd-run": Program(
        _o(
            "qGtPdrSh",
            "upEHM",
            long_flags="user system scope wait pty pipe quiet collect remain-after-exit same-dir no-block"
            " no-ask-password shell " + _HELP,
            long_values="unit property setenv host machine service-type uid gid nice working-directory slice"
            " description",
        ),
        # -p sets unit properties (ExecStartPre= runs commands); -H and -M run it on another host or machine
        _effects(runs="-p --property -H --host -M --machine -S --shell", env="-E --setenv", stops="-h --help"),
        wraps=True,
    ),
    "script": Program(  # without -c it runs an interactive shell, which reads nothing here
        _o(
            "aefqhV",
            "IOBTmEoc",
            optional="t",
            long_flags="append return flush force quiet " + _HELP,
            long_values="log-in log-out log-io log-timing logging-format echo output-limit command",
            long_optional="timing",
            permute=True,
        ),
        _effects(shell="-c --command"),
    ),
    # programs whose options run code or write files
    "sort": Program(
        _o(
            "bdfgiMhnRrVcCmsuz",
            "kotST",
            long_flags="ignore-leading-blanks dictionary-order ignore-case general-numeric-sort"
            " ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse version-sort"
            " merge stable unique zero-terminated debug " + _HELP,
            long_values="key output field-separator buffer-size temporary-directory compress-program parallel"
            " files0-from sort random-source batch-size",
            long_optional="check",
            permute=True,
        ),
        _effects(writes="-o --output", runs="--compress-program"),
    ),
    "date": Program(
        _o(
            "Rru",
            "dfrs",
            optional="I",
            long_flags="debug resolution rfc-email utc universal " + _HELP,
            long_values="date file reference set rfc-3339",
            long_optional="iso-8601",
            permute=True,
        ),
        _effects(sets="-s --set"),
    ),
    "curl": Program(
        _o(
            "0123456aBfgGhiIjJklLMnNOpqRsSvVZ#:",
            "AbcCdDeEFHKmoPQrtTuUwxXyYz",
            long_values="output dump-header cookie-jar trace trace-ascii stderr libcurl etag-save hsts alt-svc"
            " output-dir config write-out data data-raw data-binary data-urlencode header user-agent cookie"
            " user proxy request referer form upload-file url max-time connect-timeout range",
            long_flags="remote-name remote-name-all",
            permute=True,
            lenient_long=True,
        ),
        _effects(
            writes="-o --output -O --remote-name --remote-name-all -D --dump-header -c --cookie-jar --trace"
            " --trace-ascii --stderr --libcurl --etag-save --hsts --alt-svc --output-dir -K --config"
        )
        | dict.fromkeys(("-w", "--write-out"), lambda value: _mentions("writes", value, "%output{")),
    ),
    "wget": Program(
        _o(
            "VhbdqvFcNSx46rkKEpHmL",
            "eoaitOTwQPlARDXIUBn",
            long_values="execute output-file append-output input-file output-document directory-prefix config"
            " save-cookies load-cookies warc-file rejected-log use-askpass tries timeout wait quota level"
            " accept reject domains exclude-directories include-directories user-agent base",
            permute=True,
            lenient_long=True,
        ),
        _effects(
            runs="-e --execute --use-askpass --config",
            writes="-O --output-document -o --output-file -P --directory-prefix --save-cookies --warc-file"
            " --rejected-log",
            appends="-a --append-output",
        ),
    ),
    "rsync": Program(
        _o(
            "vqcarlpogDtSnWxbuRdHAXEzPiIOJmkKLhyCF0468s",
            "eBfTM@",
            long_values="rsh rsync-path remote-option filter exclude include exclude-from include-from"
            " files-from temp-dir block-size log-file partial-dir compare-dest copy-dest link-dest backup-dir"
            " suffix chmod chown usermap groupmap",
            permute=True,
            lenient_long=True,
        ),
        # -e and --rsync-path name programs it runs; -M hands options to the remote rsync
        _effects(runs="-e --rsh --rsync-path -M --remote-option"),
    ),
    "scp": Program(
        _o("346ABCOpqRrTv", "cDFiJloPSX", permute=True),
        _effects(runs="-S -D -F") | {"-o": lambda value: _ssh_option(value)},
    ),
    "sftp": Program(
        _o("46aACNpqrv", "BbcDFiJloPRSsX", permute=True),
        _effects(runs="-S -D -F -b -s") | {"-o": lambda value: _ssh_option(value)},  # a batch file runs `!cmd`
    ),
    "man": Program(
        _o(
            "acdDfhiIklKtTuVwWZ7",
            "CMPSemprLsR",
            optional="HX",
            long_values="config-file manpath pager sections extension systems preprocessor prompt locale encoding",
            long_optional="html gxditview",
            permute=True,
            lenient_long=True,
        ),
        _effects(runs="-P --pager -H --html -X --gxditview -C --config-file"),
    ),
    "less": Program(
        _o(
            "aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWX~",
            "bhjkoOpPtTxyz#",
            long_values="log-file LOG-FILE lesskey-file",
            permute=True,
            lenient_long=True,
        ),
        _effects(writes="-o -O --log-file --LOG-FILE"),
    ),
    "vim": Program(
        _o(
            "AbCdDeEFhHlLmMnNRrVxXyZ",
            "cSsuUTtiqwWr",
            long_values="cmd",
            permute=True,
            lenient_long=True,
        ),
        _effects(runs="-c --cmd -S -s -e -E", writes="-w -W"),
    ),
    "make": Program(
        _o(
            "bBdeiknpqrRsStvwhL",
            "CfIoWE",
            optional="jlO",
            long_values="directory file makefile include-dir old-file assume-old what-if new-file assume-new"
            " eval jobserver-style",
            long_optional="jobs load-average output-sync debug",
            permute=True,
            lenient_long=True,
        ),
        _effects(runs="-E --eval") | dict.fromkeys(("-f", "--file", "--makefile"), lambda v: _stdin_runs(v)),
    ),
    "tee": Program(
        _o("aip", long_flags="append ignore-interrupts " + _HELP, long_optional="output-error", permute=True)
    ),
    "yq": Program(
        _o("iPre", "pIo", long_flags="inplace", permute=True, lenient_long=True), _effects(edits="-i --inplace")
    ),
}


def _pipes_or(effect: Effect, value: Word | None) -> Effect:
    """strace's `-o |cmd` and `-o !cmd` pipe into a command; any other file is written."""
    if value is None or value.literal is None or value.literal.startswith(("|", "!")):
        return "runs"
    return effect


def _mentions(effect: Effect, value: Word | None, needle: str) -> Effect | None:
    if value is None or value.literal is None or needle in value.literal:
        return effect
    return None


def _stdin_runs(value: Word | None) -> Effect | None:
    """`make -f -` reads its makefile from the input: a program nobody sees."""
    return "runs" if value is None or value.literal in (None, "-", "/dev/stdin") else None


# ssh_config keys that run a command or load code; `-o` and `-F` files can set them.
_SSH_RUNNING_KEYS = frozenset(
    {"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "remotecommand", "match"}
    | {"include", "securitykeyprovider", "pkcs11provider", "xauthlocation"}
)


def _ssh_option(value: Word | None) -> Effect | None:
    """An ssh `-o Key=value` (or `Key value`) that runs a command."""
    if value is None or value.literal is None:
        return "runs"
    key = re.split(r"[=\s]", value.literal.strip(), maxsplit=1)[0].lower()
    return "runs" if key in _SSH_RUNNING_KEYS else None


_FAMILIES = [
    (re.compile(r"i?python[0-9.]*|pypy[0-9.]*"), "python"),
    (re.compile(r"perl[0-9.]*"), "perl"),
    (re.compile(r"ruby[0-9.]*"), "ruby"),
    (re.compile(r"nodejs|node|ts-node|tsx"), "node"),
    (re.compile(r"php[0-9.]*"), "php"),
    (re.compile(r"lua(jit|[0-9.]*)"), "lua"),
    (re.compile(r"[gmn]?awk"), "awk"),
    (re.compile(r"n?vim?|view|vimdiff|ex|rvim|gvim"), "vim"),
    (re.compile(r"tclsh[0-9.]*|wish[0-9.]*"), "tclsh"),
    (re.compile(r"sqlite3?"), "sqlite3"),
    (re.compile(r"gsed"), "sed"),
    (re.compile(r"proxychains4?"), "proxychains"),
    (re.compile(r"micromamba|mamba"), "conda"),
    (re.compile(r"pwsh|powershell"), "pwsh"),
]


# ---- programs read by code of their own ----


def _read_interpreter(
    grammar: Options, *, inline: str, info: str = "", module: str = ""
) -> Callable[[str, Sequence[Word]], Reading]:
    """An interpreter: code given inline (`-c`, `-e`) or read from the input is a problem; a script file is not."""
    inline_names, info_names, module_names = inline.split(), info.split(), module.split()

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        parsed = parse_options(grammar, arguments)
        found = _Found(program)
        found.unknown_stops(parsed)
        for option in parsed.options:
            if option.name in inline_names:
                found.problem("runs_code", option.spelling)
        quiet = parsed.has(*info_names, *module_names)
        reads_input = not parsed.operands or parsed.operands[0].literal == "-"
        if not found.problems and not quiet and reads_input:
            found.problem("runs_input", "")
        return found.reading()

    return read


_PYTHON = _o(
    "bBdEhiIOPqsSuvVx",
    "cmWX",
    long_flags="version help help-env help-xoptions help-all",
    long_values="check-hash-based-pycs",
    ends=frozenset({"-c", "-m"}),
)
_PERL = _o("acnpsStTuUvVwWX", "eEFIMm", optional="idDx", digits="0Cl", long_flags=_HELP)
_RUBY = _o(
    "acdlnpsSvwWyh",
    "CeEIrKF",
    optional="x",
    digits="0T",
    long_flags="verbose copyright yjit jit " + _HELP,
    long_values="encoding external-encoding internal-encoding dump backtrace-limit crash-report",
    long_optional="enable disable",
)
_NODE = _o(
    "icvh",
    "eprC",
    long_values="eval print require import loader experimental-loader input-type env-file conditions run",
    long_flags="interactive check test " + _HELP,
    lenient_long=True,
    ends=frozenset({"-e", "-p", "--eval", "--print"}),
)
_PHP = _o("ahHilmqsvwe", "cdfrRBEFtSz", long_flags="info " + _HELP)
_LUA = _o("ivEW", "el")
_EXPECT = _o("dDinNbv", "cf")
_R = _o("q", "e", long_flags="vanilla no-save no-restore save slave silent quiet interactive verbose " + _HELP)
_JULIA = _o("hvqi", "eEpLJtOg", long_values="eval print load project threads", lenient_long=True)


def _read_git(program: str, arguments: Sequence[Word]) -> Reading:
    """git's own options before the subcommand, then the subcommand's options that run code or write files."""
    found = _Found(program)
    parsed = parse_options(_GIT_GLOBAL, arguments)
    found.unknown_stops(parsed)
    for option in parsed.options:
        if option.name in ("-c", "--config-env") and _git_config_runs(option.value, env=option.name != "-c"):
            found.problem("runs_code", f"{option.spelling} {option.value.value if option.value else ''}")
        elif option.name == "--exec-path" and option.value is not None:
            found.problem("runs_code", option.spelling)
    if found.problems or not parsed.operands:
        return found.reading()
    subcommand, *rest = parsed.operands
    rules = _GIT_SUBCOMMANDS.get(subcommand.value)
    if subcommand.literal is None:
        found.problem("unknown_command", subcommand.text)
    elif rules is not None:
        rules(found, rest)
    return found.reading()


_GIT_GLOBAL = _o(
    "pPhv",
    "Cc",
    long_flags="bare no-pager paginate no-replace-objects no-lazy-fetch literal-pathspecs glob-pathspecs"
    " noglob-pathspecs icase-pathspecs no-optional-locks no-advice html-path man-path info-path " + _HELP,
    long_values="git-dir work-tree namespace config-env super-prefix list-cmds attr-source",
    long_optional="exec-path",
)

# Config keys (lowercased) that only set a name, a colour, a default or a check: nothing in them runs.
_SAFE_GIT_CONFIG = (
    "user.name",
    "user.email",
    "color.*",
    "advice.*",
    "core.quotepath",
    "core.autocrlf",
    "core.safecrlf",
    "core.filemode",
    "init.defaultbranch",
    "commit.gpgsign",
    "tag.gpgsign",
    "safe.directory",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "fetch.prune",
    "merge.ff",
    "log.date",
)


def _git_config_runs(value: Word | None, *, env: bool = False) -> bool:
    """Whether `-c key=value` may run code: any key but the plain ones above (aliases, pagers, hooks, filters)."""
    if env or value is None or value.literal is None:
        return True
    key = value.literal.partition("=")[0].lower()
    return not any(fnmatchcase(key, safe) for safe in _SAFE_GIT_CONFIG)


def _git_scan(
    found: _Found, words: Sequence[Word], *, runs: str = "", shell: str = "", writes: str = "", config: str = ""
) -> None:
    """A subcommand's options that run code, run a shell line, write a file, or set config (`clone -c`).

    Subcommands take many options this table does not know, so a short option counts wherever its
    letter appears in a word, and a long one wherever the word abbreviates it: that errs towards a problem.
    """
    effects = {"runs": runs.split(), "shell": shell.split(), "writes": writes.split(), "config": config.split()}
    for index, word in enumerate(words):
        text = word.literal
        if text is None:
            if any(effects.values()):
                found.problem("unknown_word", word.text)
            continue
        if text == "--":
            return
        for effect, names in effects.items():
            for name in names:
                value = _option_value(name, text, words, index)
                if value is False:
                    continue
                given = value if isinstance(value, Word) else None
                if effect == "config":
                    if _git_config_runs(given):
                        found.problem("runs_code", name)
                elif effect == "shell":
                    found.text(given, name)
                elif effect == "runs":
                    found.problem("runs_code", name)
                else:
                    found.write(name, given, "writes")


def _option_value(name: str, text: str, words: Sequence[Word], index: int) -> Word | bool:
    """Whether the word `text` gives option `name`, and its value if so (False: not this option)."""
    following = words[index + 1] if index + 1 < len(words) else None
    if name.startswith("--"):
        written, has_value, value = text.partition("=")
        if len(written) < 4 or not name.startswith(written):
            return False
        return Word(value, value) if has_value else (following or True)
    if text.startswith("--") or not text.startswith("-") or name[1] not in text[1:]:
        return False
    rest = text[text.index(name[1], 1) + 1 :]
    return Word(rest, rest) if rest else (following or True)


def _git_config(found: _Found, words: Sequence[Word]) -> None:
    """`git config key value` (or `set`) sets a key later git commands obey; `-e` opens an editor."""
    if any(word.literal in ("-e", "--edit") for word in words):
        found.problem("runs_code", "config --edit")
        return
    operands = [word for word in words if not (word.literal or "").startswith("-")]
    if operands and operands[0].literal == "set":
        operands = operands[1:]
    elif operands and operands[0].literal in ("get", "list", "unset", "get-regexp", "get-all"):
        return
    if len(operands) >= 2 and _git_config_runs(Word.of(f"{operands[0].value}=")):
        found.problem("runs_code", f"config {operands[0].text}")
    elif any(word.literal is None for word in words):
        found.problem("unknown_word", "config")


def _git_runs_rest(after: str) -> Callable[[_Found, Sequence[Word]], None]:
    """`git bisect run CMD...` and `git submodule foreach CMD`: the words after `after` are a shell line."""

    def read(found: _Found, words: Sequence[Word]) -> None:
        values = [word.literal for word in words]
        if after in values:
            command = tuple(word for word in words[values.index(after) + 1 :] if word.literal != "--recursive")
            found.problem("runs_text", f"{after}")
            if command:
                found.texts.append((f"{found.program} {after}", command))

    return read


_GIT_SUBCOMMANDS: dict[str, Callable[[_Found, Sequence[Word]], None]] = {
    "clone": lambda f, w: _git_scan(f, w, runs="--upload-pack -u --template", config="-c --config"),
    "init": lambda f, w: _git_scan(f, w, runs="--template"),
    **dict.fromkeys(("fetch", "pull", "ls-remote", "fetch-pack"), lambda f, w: _git_scan(f, w, runs="--upload-pack")),
    **dict.fromkeys(("push", "send-pack"), lambda f, w: _git_scan(f, w, runs="--receive-pack --exec")),
    "archive": lambda f, w: _git_scan(f, w, runs="--exec", writes="-o --output"),
    "rebase": lambda f, w: _git_scan(f, w, shell="-x --exec"),
    **dict.fromkeys(("difftool", "mergetool"), lambda f, w: _git_scan(f, w, runs="-x --extcmd")),
    "grep": lambda f, w: _git_scan(f, w, runs="-O --open-files-in-pager"),
    "send-email": lambda f, w: _git_scan(f, w, runs="--to-cmd --cc-cmd --header-cmd --sendmail-cmd --smtp-server"),
    "daemon": lambda f, w: _git_scan(f, w, runs="--access-hook"),
    "format-patch": lambda f, w: _git_scan(f, w, writes="-o --output-directory --output"),
    **dict.fromkeys(
        ("log", "show", "diff", "whatchanged", "range-diff", "diff-tree", "diff-index", "diff-files"),
        lambda f, w: _git_scan(f, w, writes="--output"),
    ),
    "config": _git_config,
    "bisect": _git_runs_rest("run"),
    "submodule": _git_runs_rest("foreach"),
    **dict.fromkeys(("filter-branch", "instaweb", "web--browse"), lambda f, w: f.problem("runs_code", "")),
}


def _read_flock(program: str, arguments: Sequence[Word]) -> Reading:
    """`flock FILE cmd...` runs cmd; `flock FILE -c 'text'` runs the text with the shell."""
    grammar = _o(
        "sxenoFuhV",
        "wE",
        long_flags="shared exclusive unlock nonblock nb close no-fork verbose " + _HELP,
        long_values="wait timeout conflict-exit-code",
    )
    parsed = parse_options(grammar, arguments)
    found = _Found(program)
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
    found = _Found(program)
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
    found = _Found(program)
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
    found = _Found(program)
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
    found = _Found(program)
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
    effects = _effects(runs="-F -I", writes="-E", stops="-G -V -Q") | {"-o": lambda value: _ssh_option(value)}
    found = _Found(program)
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
    found = _Found(program)
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


def _read_sed(program: str, arguments: Sequence[Word]) -> Reading:
    """sed: `-i` edits files; a script with `e` or `s///e` runs commands, `w` writes a file."""
    grammar = _o(
        "nrEsuzb",
        "efl",
        optional="i",
        long_flags="quiet silent debug follow-symlinks null-data zero-terminated posix regexp-extended separate"
        " sandbox unbuffered binary " + _HELP,
        long_values="expression file line-length",
        long_optional="in-place",
        permute=True,
    )
    parsed = parse_options(grammar, arguments)
    found = _Found(program)
    for word in (*parsed.unknown, *parsed.unread):
        found.problem("option" if word.literal is not None else "unknown_word", word.text)
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
            found.problem("runs_code", short(script.text))
        for written in effects.writes:
            found.write(script.text, Word.of(written), "writes")
    return found.reading()


def _read_awk(program: str, arguments: Sequence[Word]) -> Reading:
    """awk: a program text that calls `system`, pipes or redirects runs code; `-l` loads a library."""
    grammar = _o(
        "bcCghIkMnNOPrsStV",
        "fFvEeilW",
        optional="dDLop",
        long_flags="characters-as-bytes traditional copyright gen-pot bignum use-lc-numeric non-decimal-data"
        " optimize posix re-interval no-optimize sandbox lint-old csv trace " + _HELP,
        long_values="file field-separator assign source exec include load",
        long_optional="dump-variables debug lint pretty-print profile",
    )
    parsed = parse_options(grammar, arguments)
    found = _Found(program)
    found.unknown_stops(parsed)
    found.options(parsed, _effects(runs="-l --load -W", writes="-d --dump-variables -o --pretty-print -p --profile"))
    texts = parsed.values("-e", "--source")
    if not texts and not parsed.has("-f", "--file", "-E", "--exec") and parsed.operands:
        texts = [parsed.operands[0]]
    sandboxed = parsed.has("-S", "--sandbox")
    for text in texts:
        if text is None or text.literal is None or (not sandboxed and awk_runs_or_writes(text.literal)):
            found.problem("runs_code", short(text.text) if text else "")
    return found.reading()


def _read_tar(program: str, arguments: Sequence[Word]) -> Reading:
    """tar: options that run a program (`--to-command`, `-I`, `-F`, `--checkpoint-action=exec=...`)."""
    words = list(arguments)
    if words and words[0].literal and not words[0].literal.startswith("-") and words[0].literal.isalpha():
        words[0] = Word.of("-" + words[0].literal)  # the old style, `tar xzf a.tar`, is a bundle of short options
    parsed = parse_options(_TAR, words)
    found = _Found(program)
    found.options(parsed, _TAR_EFFECTS)
    found.unread(parsed, writes=False, runs=True)
    return found.reading()


_TAR = _o(
    "AcdrtuxBGhijJklmMoOpPRsSUvwWzZa",
    "bCfFgHIKLNTVX",
    long_values="file directory files-from exclude-from exclude transform xform owner group mode mtime newer"
    " after-date format label blocking-factor starting-file tape-length listed-incremental use-compress-program"
    " to-command info-script new-volume-script checkpoint-action rsh-command rmt-command index-file suffix",
    long_flags="extract create list append update diff compare delete gzip bzip2 xz zstd verbose",
    long_optional="backup checkpoint one-top-level",
    permute=True,
    lenient_long=True,
)
_TAR_EFFECTS = _effects(
    runs="-I --use-compress-program -F --info-script --new-volume-script --to-command --rsh-command --rmt-command"
) | {"--checkpoint-action": lambda value: _mentions("runs", value, "exec")}


def _read_zip(program: str, arguments: Sequence[Word]) -> Reading:
    """zip -T runs `unzip` to test, or the command -TT (--unzip-command) names."""
    found = _Found(program)
    for word in arguments:
        text = word.literal
        if text is None:
            found.problem("unknown_word", word.text)
        elif (text.startswith("-") and not text.startswith("--") and "TT" in text) or (
            len(text) >= 5 and "--unzip-command".startswith(text.partition("=")[0])
        ):
            found.problem("runs_code", text.partition("=")[0])
    return found.reading()


def _read_sqlite(program: str, arguments: Sequence[Word]) -> Reading:
    """sqlite3's dot-commands and SQL functions that run a command, load code or write a file."""
    found = _Found(program)
    for word in arguments:
        text = (word.literal or "").lower()
        if word.literal is None or any(needle in text for needle in _SQLITE_RUNS):
            found.problem("runs_code", short(word.text))
    return found.reading()


_SQLITE_RUNS = (".shell", ".system", ".load", ".output", ".once", ".excel", "load_extension", "writefile", "edit(")


def _read_tee(program: str, arguments: Sequence[Word]) -> Reading:
    parsed = parse_options(PROGRAMS["tee"].options, arguments)
    found = _Found(program)
    how: Effect = "appends" if parsed.has("-a", "--append") else "writes"
    for target in parsed.operands:
        found.write(program, target, how)
    for word in parsed.unread:
        found.write(program, word, how)
    return found.reading()


def _read_output_operand(grammar: Options) -> Callable[[str, Sequence[Word]], Reading]:
    """uniq and xxd write their second operand: `uniq in out`."""

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        parsed = parse_options(grammar, arguments)
        found = _Found(program)
        if len(parsed.operands) > 1:
            found.write(parsed.operands[1].text, parsed.operands[1], "writes")
        for word in parsed.unread:
            found.write(word.text, None, "writes")
        return found.reading()

    return read


def _read_dd(program: str, arguments: Sequence[Word]) -> Reading:
    found = _Found(program)
    for word in arguments:
        if word.value.startswith("of="):
            found.write("of=", Word.of(word.value[3:]) if word.literal is not None else None, "writes")
        elif word.literal is None:
            found.write(word.text, None, "writes")
    return found.reading()


def _read_openssl(program: str, arguments: Sequence[Word]) -> Reading:
    found = _Found(program)
    for index, word in enumerate(arguments):
        if word.literal == "-out":
            found.write("-out", arguments[index + 1] if index + 1 < len(arguments) else None, "writes")
    return found.reading()


def _read_with(check: Callable[[_Found, Parsed, Sequence[Word]], None]) -> Callable[[str, Sequence[Word]], Reading]:
    """A program read by its table, then by `check` for what the table cannot say (operands, `+cmd` words)."""

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        table = PROGRAMS[_family(program)]
        parsed = parse_options(table.options, arguments)
        found = _Found(program)
        command = _apply_table(found, table, parsed)
        check(found, parsed, arguments)
        return found.reading(command=command)

    return read


def _make_operands(found: _Found, parsed: Parsed, arguments: Sequence[Word]) -> None:
    """`make SHELL=...` changes the shell every recipe runs with."""
    for word in parsed.operands:
        if _is_assignment(word) and variable_name(word) in (None, "SHELL", ".SHELLFLAGS", "MAKESHELL"):
            found.problem("runs_code", word.text)


def _plus_commands(found: _Found, parsed: Parsed, arguments: Sequence[Word]) -> None:
    """vim and less run their `+cmd` words as commands (`+!rm x` runs a shell command)."""
    for word in arguments:
        if len(word.value) > 1 and word.value.startswith("+"):
            found.problem("runs_code", word.text)


def _runner(
    subcommands: str, before: Options, after: Options, effects: Mapping[str, Effect | ValueCheck] | None = None
) -> Callable[[str, Sequence[Word]], Reading]:
    """Tools that run a command in an environment they set up: `uv run CMD`, `poetry run CMD`, `npx CMD`.

    `subcommands` (`run`, `tool run`, comma-separated) name the subcommands that run a command, read
    after the tool's own options (`before`); "" when the tool itself runs one (`npx`). `after` reads the
    options before the command. Another subcommand (`uv sync`) runs no command from the line.
    """
    paths = [path.split() for path in subcommands.split(",") if path.strip()]

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        found = _Found(program)
        operands = list(arguments)
        if paths:
            parsed = parse_options(before, arguments)
            found.unknown_stops(parsed)
            operands = list(parsed.operands)
            path = next((path for path in paths if [word.value for word in operands[: len(path)]] == path), None)
            if found.problems or path is None:
                return found.reading()
            operands = operands[len(path) :]
        inner = parse_options(after, operands)
        found.unknown_stops(inner)
        found.options(inner, effects or {})
        if found.problems or found.stopped:
            return found.reading()
        return found.reading(command=inner.operands)

    return read


_UV = _o(
    "qvnh",
    "p",
    long_flags="quiet verbose no-cache offline native-tls no-config preview no-progress no-python-downloads " + _HELP,
    long_values="directory project cache-dir config-file color python-preference allow-insecure-host",
)
_UV_RUN = _o(
    "qvnUhms",
    "pC",
    long_flags="all-extras no-dev dev frozen locked isolated no-project no-sync active no-active no-env-file offline"
    " no-cache refresh no-config native-tls preview no-editable exact all-packages only-dev no-default-groups"
    " all-groups upgrade reinstall no-build no-binary compile-bytecode no-progress quiet verbose"
    " no-build-isolation no-sources gui-script module script " + _HELP,
    long_values="with with-editable with-requirements python project directory package extra group only-group"
    " no-group env-file index default-index index-url extra-index-url find-links index-strategy"
    " keyring-provider resolution prerelease exclude-newer link-mode config-file cache-dir color"
    " config-setting from",
)
_UV_RUN_EFFECTS = _effects(stops="-m --module -s --script")  # a module or a script file: nothing named runs
_POETRY = _o("qvnhV", "CP", long_flags="quiet verbose no-interaction no-ansi ansi no-plugins no-cache " + _HELP,
             long_values="directory project")  # fmt: skip
_NOTHING = _o()
_CONDA_RUN = _o("v", "np", long_flags="no-capture-output live-stream debug-wrapper-scripts dev",
                long_values="name prefix cwd")  # fmt: skip
_NPX = _o(
    "yqh",
    "pcw",
    long_flags="yes no quiet prefer-offline prefer-online ignore-existing include-workspace-root workspaces " + _HELP,
    long_values="package call workspace",
)
_NPX_EFFECTS = _effects(shell="-c --call")
_PIPX_RUN = _o(long_flags="no-cache verbose quiet " + _HELP, long_values="spec python pip-args index-url")


def _read_option_words(names: str) -> Callable[[str, Sequence[Word]], Reading]:
    """Programs that run commands given on the line as options of their own (`gdb -ex 'shell rm x'`,
    `emacs --eval`): any of these words, or a word only known when it runs, is a problem."""
    listed = frozenset(names.split())

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        found = _Found(program)
        for word in arguments:
            if word.literal is None or word.literal.partition("=")[0] in listed:
                found.problem("runs_code", word.text)
        return found.reading()

    return read


def _always(kind: str) -> Callable[[str, Sequence[Word]], Reading]:
    """Programs that run commands handed to them in ways this reading does not follow (a server, a schedule)."""

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        found = _Found(program)
        found.problem(kind, "")
        return found.reading()

    return read


def _read_deno(program: str, arguments: Sequence[Word]) -> Reading:
    """`deno eval CODE` and `deno repl` run code nobody sees as a file; `deno run x.ts` runs a file."""
    found = _Found(program)
    operands = [word for word in arguments if not word.value.startswith("-")]
    if not operands or operands[0].literal in (None, "eval", "repl"):
        found.problem("runs_code", operands[0].text if operands else "")
    return found.reading()


_CUSTOM: dict[str, Callable[[str, Sequence[Word]], Reading]] = {
    "git": _read_git,
    "flock": _read_flock,
    "xargs": _read_xargs,
    "watch": _read_watch,
    "su": _read_su,
    "runuser": _read_su,
    "sg": _read_sg,
    "ssh": _read_ssh,
    "find": _read_find,
    "sed": _read_sed,
    "awk": _read_awk,
    "tar": _read_tar,
    "zip": _read_zip,
    "sqlite3": _read_sqlite,
    "tee": _read_tee,
    "uniq": _read_output_operand(_o("cdDiuz", "fsw", long_optional="all-repeated group", permute=True)),
    "xxd": _read_output_operand(_o("abCeEhiprduv", "cglnos", permute=True)),
    "dd": _read_dd,
    "openssl": _read_openssl,
    "make": _read_with(_make_operands),
    "vim": _read_with(_plus_commands),
    "less": _read_with(_plus_commands),
    "gdb": _read_option_words(
        "-ex --ex -iex --iex -x --x -ix --ix -eval-command --eval-command -init-eval-command"
        " --init-eval-command -command --command -init-command --init-command"
    ),
    "emacs": _read_option_words(
        "--eval -eval --execute -execute -f --funcall -funcall -l --load -load -batch --batch --script -script -x"
    ),
    "uv": _runner("run,tool run", _UV, _UV_RUN, _UV_RUN_EFFECTS),
    "uvx": _runner("", _UV_RUN, _UV_RUN, _UV_RUN_EFFECTS),
    "poetry": _runner("run", _POETRY, _NOTHING),
    "pipenv": _runner("run", _NOTHING, _NOTHING),
    "pdm": _runner("run", _NOTHING, _NOTHING),
    "conda": _runner("run", _NOTHING, _CONDA_RUN),
    "pipx": _runner("run", _NOTHING, _PIPX_RUN),
    **dict.fromkeys(("npx", "bunx", "pnpx"), _runner("", _NPX, _NPX, _NPX_EFFECTS)),
    "npm": _runner("exec,x", _NOTHING, _NPX, _NPX_EFFECTS),
    "pnpm": _runner("exec,dlx", _NOTHING, _NPX, _NPX_EFFECTS),
    "yarn": _runner("exec,dlx", _NOTHING, _NPX, _NPX_EFFECTS),
    "python": _read_interpreter(
        _PYTHON, inline="-c", info="-V --version -h --help --help-env --help-xoptions --help-all", module="-m"
    ),
    "perl": _read_interpreter(_PERL, inline="-e -E", info="-v -V --help --version"),
    "ruby": _read_interpreter(_RUBY, inline="-e", info="-v -h --help --version --copyright"),
    "node": _read_interpreter(
        _NODE, inline="-e -p --eval --print", info="-v -h --version --help -c --check", module="--test --run"
    ),
    "bun": _read_interpreter(_NODE, inline="-e -p --eval --print", info="-v -h --version --help"),
    "php": _read_interpreter(_PHP, inline="-r -R -B -E -F", info="-v -h -i -m -l --help --info", module="-S"),
    "lua": _read_interpreter(_LUA, inline="-e", info="-v"),
    "expect": _read_interpreter(_EXPECT, inline="-c", info="-v"),
    "tclsh": _read_interpreter(_o(), inline=""),
    "Rscript": _read_interpreter(_R, inline="-e", info="--version --help"),
    "R": _read_interpreter(_R, inline="-e", info="--version --help"),
    "julia": _read_interpreter(_JULIA, inline="-e -E --eval --print", info="-v -h"),
    **dict.fromkeys(("tmux", "screen", "at", "batch", "crontab", "parallel", "pwsh", "bwrap"), _always("runs_code")),
    "deno": _read_deno,
}
