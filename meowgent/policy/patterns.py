"""How rule and scope patterns name paths and hosts, shared by the rules and the chat scopes.

A path pattern is a glob (`fnmatch`) over workspace paths written posix style, where `*` also crosses
`/` and `dir/**` also names `dir` itself. A host pattern is a glob over the lowercased host name.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from meowgent.tools.spec import ToolError
from meowgent.tools.workspace import Workspace

_WILDCARD = re.compile(r"[*?\[]")


def has_wildcard(pattern: str) -> bool:
    return _WILDCARD.search(pattern) is not None


def path_matches(path: str, pattern: str) -> bool:
    pattern = pattern.removeprefix("./")
    if fnmatchcase(path, pattern):
        return True
    return pattern.endswith("/**") and fnmatchcase(path, pattern[:-3])  # `dir/**` also names `dir`


def folder_may_hold(folder: str, pattern: str) -> bool:
    """Whether reading everything under `folder` could reach a path that `pattern` matches."""
    pattern = pattern.removeprefix("./")
    wildcard = _WILDCARD.search(pattern)
    if wildcard is None:
        return _within(pattern, folder)
    base = pattern[: wildcard.start()].rpartition("/")[0]  # every match lies under this folder, as `*` crosses `/`
    return not base or _within(base, folder) or _within(folder, base)


def _within(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder + "/")


def resolved_path_matches(path: str, pattern: str, workspace: Workspace) -> bool:
    """Whether `path`, with links followed, is a workspace path the pattern names."""
    try:
        resolved = workspace.relative(workspace.resolve(path))
    except ToolError:
        return False
    return path_matches(resolved, pattern)


def glob_escape(path: str) -> str:
    """A path as a pattern that names only it: `[` `*` `?` in a file name match themselves."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def host_of(url: str) -> str | None:
    """The host name of a URL, without a trailing dot; None if it has none."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None
