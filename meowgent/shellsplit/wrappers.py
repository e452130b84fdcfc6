"""Wrappers: programs that run a command given as their operands (`sudo -u bob rm x` runs `rm x`).

Each table says how the wrapper reads its options, so the command it runs is found where the wrapper
finds it (`env -iu HOME rm x`: `-iu` is `-i -u HOME`), and what its options do: run code (`sudo -s`),
set the environment (`strace -E`), write a file (`time -o`), or stop it running anything (`sudo -l`).
An option a wrapper's table does not know hides the command that follows.
"""

from __future__ import annotations

from meowgent.shellsplit.reading import HELP as _HELP
from meowgent.shellsplit.reading import Program, pipes_or
from meowgent.shellsplit.reading import option_effects as _effects
from meowgent.shellsplit.reading import option_table as _o

__all__ = ["WRAPPERS"]

WRAPPERS: dict[str, Program] = {
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
    "time": Program(  # /usr/bin/time; bash's own `time` is a keyword the reader drops
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
        | {"-o": lambda value: pipes_or("writes", value), "--output": lambda value: pipes_or("writes", value)},
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
}
