"""git: its own options before the subcommand (`-c`, `--exec-path`), then each subcommand's options that run
code (`clone --upload-pack`, `rebase --exec`), write files (`log --output`) or set config that later runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fnmatch import fnmatchcase

from meowgent.shellsplit.options import parse_options
from meowgent.shellsplit.reading import HELP as _HELP
from meowgent.shellsplit.reading import Found, Reader, Reading
from meowgent.shellsplit.reading import option_table as _o
from meowgent.shellsplit.syntax import word_of
from meowgent.shellsplit.words import Word

__all__ = ["READERS"]


def _read_git(program: str, arguments: Sequence[Word]) -> Reading:
    """git's own options before the subcommand, then the subcommand's options that run code or write files."""
    found = Found(program)
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
    found: Found, words: Sequence[Word], *, runs: str = "", shell: str = "", writes: str = "", config: str = ""
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


def _git_config(found: Found, words: Sequence[Word]) -> None:
    """`git config key value` (or `set`) sets a key later git commands obey; `-e` opens an editor."""
    if any(word.literal in ("-e", "--edit") for word in words):
        found.problem("runs_code", "config --edit")
        return
    operands = [word for word in words if not (word.literal or "").startswith("-")]
    if operands and operands[0].literal == "set":
        operands = operands[1:]
    elif operands and operands[0].literal in ("get", "list", "unset", "get-regexp", "get-all"):
        return
    if len(operands) >= 2 and _git_config_runs(word_of(f"{operands[0].value}=")):
        found.problem("runs_code", f"config {operands[0].text}")
    elif any(word.literal is None for word in words):
        found.problem("unknown_word", "config")


def _git_runs_rest(after: str) -> Callable[[Found, Sequence[Word]], None]:
    """`git bisect run CMD...` and `git submodule foreach CMD`: the words after `after` are a shell line."""

    def read(found: Found, words: Sequence[Word]) -> None:
        values = [word.literal for word in words]
        if after in values:
            command = tuple(word for word in words[values.index(after) + 1 :] if word.literal != "--recursive")
            found.problem("runs_text", f"{after}")
            if command:
                found.texts.append((f"{found.program} {after}", command))

    return read


_GIT_SUBCOMMANDS: dict[str, Callable[[Found, Sequence[Word]], None]] = {
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


READERS: dict[str, Reader] = {"git": _read_git}
