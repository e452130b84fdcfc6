"""What a tool call does, in plain words: a verb and its object ("Write report.md"), never a tool identifier.

The object is whatever the model chose (a path, a command, an address), so it is always escaped and
shown in a `<code>` element with its invisible characters made visible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from meowgent.tools.registry import ToolRegistry
from meowgent.ui.html.mcpcall import external, remote_name, tool_title
from meowgent.ui.html.safehtml import Html, escape, fill, join, tag, visible_lines
from meowgent.ui.html.tooltext import TEXTS, Look, look_of
from meowgent.ui.i18n import t

OBJECT_CHARS = 60
"""The longest object shown in a title; the full value is in the panel and on the card."""

Lookup = Callable[[str], str | None]
"""An argument by name as text so far, or None when the call has not written it (yet)."""


def action(
    name: str | None,
    argument: Lookup,
    language: str,
    *,
    live_lines: int | None = None,
    target: str | None = None,
    tools: ToolRegistry | None = None,
) -> Html:
    """The verb and object of a call, worded for its kind of tool (`meowgent.ui.html.tooltext`; `tools`: the app's);
    `live_lines` makes a write read "Writing report.md… 57 lines so far", and `target`, where a symbolic link
    sends a write or edit, makes it read "Write NOTES.md → .git/config"."""
    if not name:
        return fill(t(language, "preparing"))
    traits = (tools or ToolRegistry.builtins()).traits(name)
    look = look_of(name, traits)
    text, say = TEXTS[look], _sayer(language)
    path = argument(traits.path) if traits.path else None
    match look:
        case Look.WRITE if path:
            written = where(path, target)
            if live_lines is not None:
                if live_lines == 1:
                    return say("act_writing_one", path=written)
                return say(text.live, path=written, lines=f"{live_lines:,}")
            return say(text.title, path=written)
        case Look.EDIT if path:
            return say(text.live if live_lines is not None else text.title, path=where(path, target))
        case Look.RUN if command := argument(traits.command or ""):
            return say(text.title, command=obj(command))
        case Look.FETCH if url := argument(traits.url or ""):
            return say(text.title, page=obj(page_of(url)))
        case Look.READ if path:
            return say(text.title, path=obj(path))
        case Look.LIST:
            return say(text.title, path=obj(path)) if path and path != "." else say("act_list_workspace")
        case Look.SEARCH if pattern := argument("pattern"):
            if path and path != ".":
                return say("act_search_in", pattern=obj(pattern), path=obj(path))
            return say(text.title, pattern=obj(pattern))
    if mcp := external(name, tools):
        # The server's own words, one line and escaped, so the call reads as what it does, as ours do.
        title = tool_title(mcp)
        return escape(title) if title else say("mcp_untitled", tool=obj(remote_name(mcp)), server=obj(mcp.group))
    return say("act_other", tool=obj(name))


def lookup(arguments: Mapping[str, Any]) -> Lookup:
    """The string arguments of a finished call, for action()."""

    def argument(key: str) -> str | None:
        value = arguments.get(key)
        return value if isinstance(value, str) else None

    return argument


def obj(value: str, limit: int = OBJECT_CHARS) -> Html:
    """A short, one-line, escaped view of a value the model chose."""
    line = visible_lines(value).replace("\n", " ⏎ ")
    return tag("code", line if len(line) <= limit else line[:limit] + "…")


def where(path: str, target: str | None) -> Html:
    """A path the model chose, and where it really leads when a link sends it elsewhere: `NOTES.md → .git/config`."""
    return obj(path) if target is None else join([obj(path), " → ", obj(target)])


def page_of(url: str) -> str:
    """`example.org/docs/…`: the real host (not a `user@` decoy) and the start of the path."""
    parts = urlsplit(url)
    if not parts.hostname:
        return url
    rest = parts.path.strip("/")
    return parts.hostname + ("/" + rest[:20] + ("…" if len(rest) > 20 or parts.query else "") if rest else "")


def _sayer(language: str) -> Callable[..., Html]:
    def say(key: str, **values: str | Html) -> Html:
        return fill(t(language, key), **values)

    return say
