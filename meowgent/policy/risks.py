"""Risk notes: what a call may do that deserves a second look on the approval card, from our own tables.

Never from the model's words: a call's risks come from its tool's traits (`ToolTraits`: it writes the file
at `path`, it reaches the network, its `command` is a shell line) and, for a shell line, from what each of
its commands runs (`rm` deletes, `git push` uses the network, `> file` overwrites one that exists). They are
`Risk` values; the page words them in the person's language.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterator
from pathlib import Path

from meowgent.events import ToolCall
from meowgent.policy.commands import plain_words, writes_of
from meowgent.shellsplit.programs import Write, invocations
from meowgent.shellsplit.reader import split_command
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import Writes

__all__ = ["Risk", "risk_notes"]


class Risk(enum.Enum):
    """One thing a call may do that deserves a look."""

    DELETES = "deletes"
    NETWORK = "network"
    ADMIN = "admin"
    """It runs with admin rights (sudo, su, doas)."""
    PERMISSIONS = "permissions"
    OVERWRITES = "overwrites"
    """It replaces a file that exists."""
    EDITS = "edits"
    HIDDEN = "hidden"
    """Meowgent can't tell everything the shell line runs (see `shellsplit`)."""


def risk_notes(call: ToolCall, workspace: Path, *, tools: ToolRegistry | None = None) -> tuple[Risk, ...]:
    """What the call may do that deserves a look, from its tool's traits (`tools`: the app's) and our tables."""
    traits = (tools or ToolRegistry.builtins()).traits(call.name)
    workspace = Path(workspace)
    notes: list[Risk] = []
    command = call.arguments.get(traits.command) if traits.command else None
    if isinstance(command, str):
        notes.extend(_shell_risks(command, workspace))
    path = call.arguments.get(traits.path) if traits.path else None
    if traits.writes is Writes.REPLACES and _is_existing_file(path, workspace):
        notes.append(Risk.OVERWRITES)
    elif traits.writes is Writes.EDITS:
        notes.append(Risk.EDITS)
    if traits.network:
        notes.append(Risk.NETWORK)
    return tuple(dict.fromkeys(notes))


_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})
_PROGRAM_RISKS = {
    **dict.fromkeys(_DELETERS, Risk.DELETES),
    **dict.fromkeys(("curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ftp", "telnet"), Risk.NETWORK),
    **dict.fromkeys(("sudo", "su", "doas"), Risk.ADMIN),
    **dict.fromkeys(("chmod", "chown", "chgrp"), Risk.PERMISSIONS),
}
_INSTALLS = dict.fromkeys(("install", "i", "ci", "add"), Risk.NETWORK)
_SUBCOMMAND_RISKS: dict[str, dict[str, Risk]] = {
    "git": {"clean": Risk.DELETES, **dict.fromkeys(("push", "pull", "clone", "fetch"), Risk.NETWORK)},
    **dict.fromkeys(("pip", "pip3", "npm", "pnpm", "yarn"), _INSTALLS),
}
_OPTIONS_WITH_VALUE = frozenset({"-C", "-c"})  # git's: `git -C repo push` still pushes
_TRUNCATING = frozenset({">", ">|", "&>", ">&"})


def _shell_risks(command: str, workspace: Path) -> Iterator[Risk]:
    split = split_command(command)
    for parsed in split.commands:
        for invocation in invocations(parsed.words):
            program, *arguments = plain_words(invocation)
            yield from _program_risks(program, arguments)
        for redirect in parsed.redirects:
            truncates = redirect.operator.lstrip("0123456789") in _TRUNCATING and redirect.writes
            if truncates and _is_existing_file(redirect.target.literal, workspace, expand_user=True):
                yield Risk.OVERWRITES
        for write in writes_of(parsed):
            yield from _write_risks(write, workspace)
    if split.hidden:
        yield Risk.HIDDEN


def _write_risks(write: Write, workspace: Path) -> Iterator[Risk]:
    if write.how == "deletes":
        yield Risk.DELETES
    elif write.how == "edits":
        yield Risk.EDITS
    elif write.how == "replaces" and _is_existing_file(write.target and write.target.literal, workspace):
        yield Risk.OVERWRITES


def _program_risks(program: str, arguments: list[str]) -> Iterator[Risk]:
    if program.startswith("python") and arguments[:1] == ["-m"] and len(arguments) > 1:
        program, arguments = arguments[1], arguments[2:]  # `python -m pip install` is pip
    if program in _PROGRAM_RISKS:
        yield _PROGRAM_RISKS[program]
    risk = _SUBCOMMAND_RISKS.get(program, {}).get(_subcommand(arguments) or "")
    if risk:
        yield risk


def _subcommand(arguments: list[str]) -> str | None:
    """The first argument that is not an option (nor an option's value)."""
    skip = False
    for argument in arguments:
        if skip:
            skip = False
        elif argument in _OPTIONS_WITH_VALUE:
            skip = True
        elif not argument.startswith("-"):
            return argument
    return None


def _is_existing_file(path: object, workspace: Path, *, expand_user: bool = False) -> bool:
    if not isinstance(path, str) or not path or "\0" in path:
        return False
    return (workspace / (os.path.expanduser(path) if expand_user else path)).is_file()
