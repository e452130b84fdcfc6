"""Programs that run code they are given: interpreters (`python -c`), environment runners (`uv run CMD`, `npx`),
debuggers and editors with command options (`gdb -ex`), and programs that run commands later or elsewhere.

Running a file is not a problem (`python x.py`): the OS sandbox holds there. Code given inline or read
from the input is, and so is a command a runner runs with an option its table does not know.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from meowgent.shellsplit.options import Options, parse_options
from meowgent.shellsplit.reading import HELP as _HELP
from meowgent.shellsplit.reading import Effect, Found, Reader, Reading, ValueCheck
from meowgent.shellsplit.reading import option_effects as _effects
from meowgent.shellsplit.reading import option_table as _o
from meowgent.shellsplit.words import Word

__all__ = ["READERS"]


def _read_interpreter(grammar: Options, *, inline: str, info: str = "", module: str = "") -> Reader:
    """An interpreter: code given inline (`-c`, `-e`) or read from the input is a problem; a script file is not."""
    inline_names, info_names, module_names = inline.split(), info.split(), module.split()

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        parsed = parse_options(grammar, arguments)
        found = Found(program)
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


def _runner(
    subcommands: str, before: Options, after: Options, effects: Mapping[str, Effect | ValueCheck] | None = None
) -> Reader:
    """Tools that run a command in an environment they set up: `uv run CMD`, `poetry run CMD`, `npx CMD`.

    `subcommands` (`run`, `tool run`, comma-separated) name the subcommands that run a command, read
    after the tool's own options (`before`); "" when the tool itself runs one (`npx`). `after` reads the
    options before the command. Another subcommand (`uv sync`) runs no command from the line.
    """
    paths = [path.split() for path in subcommands.split(",") if path.strip()]

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        found = Found(program)
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


def _read_option_words(names: str) -> Reader:
    """Programs that run commands given on the line as options of their own (`gdb -ex 'shell rm x'`,
    `emacs --eval`): any of these words, or a word only known when it runs, is a problem."""
    listed = frozenset(names.split())

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        found = Found(program)
        for word in arguments:
            if word.literal is None or word.literal.partition("=")[0] in listed:
                found.problem("runs_code", word.text)
        return found.reading()

    return read


def _always(kind: str) -> Reader:
    """Programs that run commands handed to them in ways this reading does not follow (a server, a schedule)."""

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        found = Found(program)
        found.problem(kind, "")
        return found.reading()

    return read


def _read_deno(program: str, arguments: Sequence[Word]) -> Reading:
    """`deno eval CODE` and `deno repl` run code nobody sees as a file; `deno run x.ts` runs a file."""
    found = Found(program)
    operands = [word for word in arguments if not word.value.startswith("-")]
    if not operands or operands[0].literal in (None, "eval", "repl"):
        found.problem("runs_code", operands[0].text if operands else "")
    return found.reading()


READERS: dict[str, Reader] = {
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
