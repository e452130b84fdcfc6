"""Programs whose options or scripts run code or write files: `sort -o`, `curl -o`, `sed -i`, `awk '{system(...)}'`.

A write option is a write: a rule's `*` never covers it (see `policy.commands`). The tables say which
options run code, write, append, edit, delete or set the system's state; the readers below follow what
a table cannot: a sed or awk program, tar's old option style, an operand that is the output file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from meowgent.shellsplit.options import Options, Parsed, parse_options
from meowgent.shellsplit.reading import HELP as _HELP
from meowgent.shellsplit.reading import (
    Effect,
    Found,
    Program,
    Reader,
    Reading,
    apply_table,
    is_assignment,
    mentions,
    ssh_option,
    stdin_runs,
)
from meowgent.shellsplit.reading import option_effects as _effects
from meowgent.shellsplit.reading import option_table as _o
from meowgent.shellsplit.scripts import awk_runs_or_writes, sed_effects
from meowgent.shellsplit.syntax import word_of
from meowgent.shellsplit.variables import variable_name
from meowgent.shellsplit.words import Word, short

__all__ = ["OPTION_TABLES", "READERS"]

OPTION_TABLES: dict[str, Program] = {
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
        | dict.fromkeys(("-w", "--write-out"), lambda value: mentions("writes", value, "%output{")),
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
        _effects(runs="-S -D -F") | {"-o": lambda value: ssh_option(value)},
    ),
    "sftp": Program(
        _o("46aACNpqrv", "BbcDFiJloPRSsX", permute=True),
        _effects(runs="-S -D -F -b -s") | {"-o": lambda value: ssh_option(value)},  # a batch file runs `!cmd`
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
        _effects(runs="-E --eval") | dict.fromkeys(("-f", "--file", "--makefile"), lambda v: stdin_runs(v)),
    ),
    "tee": Program(
        _o("aip", long_flags="append ignore-interrupts " + _HELP, long_optional="output-error", permute=True)
    ),
    "yq": Program(
        _o("iPre", "pIo", long_flags="inplace", permute=True, lenient_long=True), _effects(edits="-i --inplace")
    ),
}


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
    found = Found(program)
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
            found.write(script.text, word_of(written), "writes")
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
    found = Found(program)
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
        words[0] = word_of("-" + words[0].literal)  # the old style, `tar xzf a.tar`, is a bundle of short options
    parsed = parse_options(_TAR, words)
    found = Found(program)
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
) | {"--checkpoint-action": lambda value: mentions("runs", value, "exec")}


def _read_zip(program: str, arguments: Sequence[Word]) -> Reading:
    """zip -T runs `unzip` to test, or the command -TT (--unzip-command) names."""
    found = Found(program)
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
    found = Found(program)
    for word in arguments:
        text = (word.literal or "").lower()
        if word.literal is None or any(needle in text for needle in _SQLITE_RUNS):
            found.problem("runs_code", short(word.text))
    return found.reading()


_SQLITE_RUNS = (".shell", ".system", ".load", ".output", ".once", ".excel", "load_extension", "writefile", "edit(")


def _read_tee(program: str, arguments: Sequence[Word]) -> Reading:
    parsed = parse_options(OPTION_TABLES["tee"].options, arguments)
    found = Found(program)
    how: Effect = "appends" if parsed.has("-a", "--append") else "writes"
    for target in parsed.operands:
        found.write(program, target, how)
    for word in parsed.unread:
        found.write(program, word, how)
    return found.reading()


def _read_output_operand(grammar: Options) -> Reader:
    """uniq and xxd write their second operand: `uniq in out`."""

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        parsed = parse_options(grammar, arguments)
        found = Found(program)
        if len(parsed.operands) > 1:
            found.write(parsed.operands[1].text, parsed.operands[1], "writes")
        for word in parsed.unread:
            found.write(word.text, None, "writes")
        return found.reading()

    return read


def _read_dd(program: str, arguments: Sequence[Word]) -> Reading:
    found = Found(program)
    for word in arguments:
        if word.value.startswith("of="):
            found.write("of=", word_of(word.value[3:]) if word.literal is not None else None, "writes")
        elif word.literal is None:
            found.write(word.text, None, "writes")
    return found.reading()


def _read_openssl(program: str, arguments: Sequence[Word]) -> Reading:
    found = Found(program)
    for index, word in enumerate(arguments):
        if word.literal == "-out":
            found.write("-out", arguments[index + 1] if index + 1 < len(arguments) else None, "writes")
    return found.reading()


def _read_with(table: Program, check: Callable[[Found, Parsed, Sequence[Word]], None]) -> Reader:
    """A program read by its table, then by `check` for what the table cannot say (operands, `+cmd` words)."""

    def read(program: str, arguments: Sequence[Word]) -> Reading:
        parsed = parse_options(table.options, arguments)
        found = Found(program)
        command = apply_table(found, table, parsed)
        check(found, parsed, arguments)
        return found.reading(command=command)

    return read


def _make_operands(found: Found, parsed: Parsed, arguments: Sequence[Word]) -> None:
    """`make SHELL=...` changes the shell every recipe runs with."""
    for word in parsed.operands:
        if is_assignment(word) and variable_name(word) in (None, "SHELL", ".SHELLFLAGS", "MAKESHELL"):
            found.problem("runs_code", word.text)


def _plus_commands(found: Found, parsed: Parsed, arguments: Sequence[Word]) -> None:
    """vim and less run their `+cmd` words as commands (`+!rm x` runs a shell command)."""
    for word in arguments:
        if len(word.value) > 1 and word.value.startswith("+"):
            found.problem("runs_code", word.text)


READERS: dict[str, Reader] = {
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
    "make": _read_with(OPTION_TABLES["make"], _make_operands),
    "vim": _read_with(OPTION_TABLES["vim"], _plus_commands),
    "less": _read_with(OPTION_TABLES["less"], _plus_commands),
}
