"""Chat scopes: what the person allowed for the rest of one chat ("Allow for this chat"), and what it covers.

A scope turns "ask" into "allow", never "deny". What it is about comes from its tool's traits
(`ToolTraits.scope`), so the words on the button are all it allows: this command line (or commands that
start with words the person types), this file (or a folder or glob), this host, or every call of a tool
whose arguments mean nothing a scope could name (an MCP tool; `SERVER__*` covers every tool of a server).
A scope of another kind than its tool takes covers nothing, and a stored one is dropped when it is loaded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from meowgent.events import ToolCall
from meowgent.mcp.config import SEPARATOR
from meowgent.policy.commands import all_start_with, prefix_words
from meowgent.policy.patterns import glob_escape, has_wildcard, host_of, resolved_path_matches
from meowgent.shellsplit.reader import split_command
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ScopedBy, ToolError, ToolTraits
from meowgent.tools.workspace import Workspace

__all__ = ["Scope", "ScopeOffer", "scope_offer", "typed_scope"]

_KEYS = ("command", "prefix", "path", "host")


@dataclass(frozen=True, slots=True)
class Scope:
    """Something the person allowed for the rest of one chat: a tool and at most one of these keys.

    - `command` (this exact command line) or `prefix` (commands starting with these words: every command of
      the line must start with them, so prefix `git status` does not cover `git status && rm -rf x`), for a
      tool scoped by its command; neither covers a hidden line (see `shellsplit`), such as
      `git status ${x@P}` or `git -c alias.x='!rm x' x`, even written exactly as it was allowed;
    - `path`, a pattern over workspace paths as in rules (`*` also crosses `/`, `dir/**` covers the folder
      and all under it), matched against the path with links followed, for a tool scoped by its path;
    - `host`, a host name (or a pattern such as `*.python.org`), lowercased, for a tool scoped by its URL;
    - none of them: every call of the tool (`SERVER__*`: every tool of that MCP server).
    """

    tool: str
    command: str | None = None
    prefix: str | None = None
    path: str | None = None
    host: str | None = None

    def __post_init__(self) -> None:
        given = [key for key in _KEYS if getattr(self, key) is not None]
        if len(given) > 1:
            raise ValueError(f"a {self.tool} scope takes one of command, prefix, path or host, not {', '.join(given)}")
        if self.prefix is not None and not prefix_words(self.prefix):
            raise ValueError(f"the prefix {self.prefix!r} is not the start of one simple command")
        if self.path is not None and (not self.path or self.path.startswith("/") or ".." in self.path.split("/")):
            raise ValueError(f"{self.path!r} is not a path inside the workspace, such as 'docs/**'")

    @property
    def kind(self) -> ScopedBy:
        """What the scope is about: the kind of scope a tool must take for this one to cover its calls."""
        if self.command is not None or self.prefix is not None:
            return ScopedBy.COMMAND
        return ScopedBy.PATH if self.path is not None else ScopedBy.HOST if self.host is not None else ScopedBy.TOOL

    def fits(self, traits: ToolTraits) -> bool:
        """Whether a tool with these traits takes this kind of scope (a run_shell scope names a command)."""
        return self.kind is traits.scope

    @classmethod
    def from_stored(cls, data: Mapping[str, Any], *, tools: ToolRegistry | None = None) -> Scope | None:
        """A scope saved with a chat; None for one that no longer means anything (such as "every write").

        `tools` (the app's) says what kind of scope each tool takes.
        """
        try:
            scope = cls(**data)
        except (TypeError, ValueError):
            return None
        return scope if scope.fits((tools or ToolRegistry.builtins()).traits(scope.tool)) else None

    def matches(self, call: ToolCall, traits: ToolTraits, workspace: Workspace | None = None) -> bool:
        """Whether this scope covers the call, whose tool has `traits`; a path scope needs the workspace to
        follow links, else covers nothing."""
        if call.name != self.tool and not (self.tool.endswith(SEPARATOR + "*") and fnmatchcase(call.name, self.tool)):
            return False
        if not self.fits(traits):
            return False
        if self.kind is ScopedBy.TOOL:
            return True
        name = {ScopedBy.COMMAND: traits.command, ScopedBy.PATH: traits.path, ScopedBy.HOST: traits.url}[self.kind]
        argument = call.arguments.get(name) if name else None
        if not isinstance(argument, str):
            return False
        if self.command is not None:
            return argument.strip() == self.command.strip() and not split_command(argument).hidden
        if self.prefix is not None:
            return all_start_with(argument, prefix_words(self.prefix))
        if self.path is not None:
            return workspace is not None and resolved_path_matches(argument, self.path, workspace)
        host = host_of(argument)
        return host is not None and fnmatchcase(host.lower(), (self.host or "").lower())

    def words(self) -> tuple[str, dict[str, str]]:
        """What it allows, as a message key and its values (`allows_*` in the UI's texts), for the person."""
        for key in _KEYS:
            value = getattr(self, key)
            if value is not None:
                return f"allows_{self.tool}_{key}" if key == "path" else f"allows_{key}", {key: value}
        if self.tool.endswith(SEPARATOR + "*"):
            return "allows_server", {"server": self.tool.removesuffix(SEPARATOR + "*")}
        return "allows_tool", {"tool": self.tool}

    def __str__(self) -> str:
        if self.command is not None:
            return f"the command {json.dumps(self.command)}"
        if self.prefix is not None:
            return f"commands starting with {json.dumps(self.prefix)}"
        if self.path is not None:
            return f"{'editing' if self.tool == 'edit_file' else 'writing'} {json.dumps(self.path)}"
        if self.host is not None:
            return f"reading pages from {json.dumps(self.host)}"
        if self.tool.endswith(SEPARATOR + "*"):
            return f"every tool of the MCP server {self.tool.removesuffix(SEPARATOR + '*')}"
        return f"every {self.tool} call"


@dataclass(frozen=True, slots=True)
class ScopeOffer:
    """What "Allow for this chat" offers for one call: `scope` as it stands, and what the person may type instead.

    `typed` is "prefix" (the start of a command), "path" (a folder or a glob) or None when nothing typed
    applies to this tool, so the UI shows the box only where it does something.
    """

    scope: Scope
    typed: Literal["prefix", "path"] | None


def scope_offer(call: ToolCall, workspace: Path, *, tools: ToolRegistry | None = None) -> ScopeOffer | None:
    """The chat scope that fits the call (this command, this file, this host); None if its arguments cannot tell,
    or if no scope could ever cover it (a hidden shell line). `tools` (the app's) says what each tool is."""
    traits = (tools or ToolRegistry.builtins()).traits(call.name)
    try:
        if traits.scope is ScopedBy.COMMAND:
            command = str(call.arguments[traits.command])  # a hidden line can't be allowed for the chat: no offer
            return None if split_command(command).hidden else ScopeOffer(Scope(call.name, command=command), "prefix")
        if traits.scope is ScopedBy.PATH:
            folder = Workspace(workspace)
            path = folder.relative(folder.resolve(str(call.arguments[traits.path])))
            return ScopeOffer(Scope(call.name, path=glob_escape(path)), "path")
        if traits.scope is ScopedBy.HOST:
            host = host_of(str(call.arguments[traits.url]))
            return ScopeOffer(Scope(call.name, host=host.lower()), None) if host else None
        return ScopeOffer(Scope(call.name), None)
    except (KeyError, ToolError, ValueError):
        return None


def typed_scope(call: ToolCall, text: str, workspace: Path, *, tools: ToolRegistry | None = None) -> Scope:
    """The scope for what the person typed in the box the offer shows; ValueError says why it cannot be one.

    For a file tool, a folder (`docs` or `docs/`) stands for everything under it.
    """
    text = text.strip()
    offer = scope_offer(call, workspace, tools=tools)
    if offer is None or offer.typed is None or not text:
        raise ValueError("there is nothing to type for this call; use the button as it is")
    if offer.typed == "prefix":
        return Scope(call.name, prefix=text)
    pattern = text.removeprefix("./").rstrip("/") or "."
    if pattern == "." or (not has_wildcard(pattern) and (Path(workspace) / pattern).is_dir()):
        pattern = "**" if pattern == "." else f"{pattern}/**"
    return Scope(call.name, path=pattern)
