"""What each kind of tool looks like on the page, in one table: its title's words, its live view while the model
writes it, its edit form, and its "Allow for this chat" button, read from the tool's traits (`ToolTraits`).

A new tool declared with traits (a path it writes, a command, a URL) looks like the built-in tool of its kind
with no edit here; a tool with none of them (an MCP server's) gets the generic look: its arguments as JSON in the
edit form, and a button that allows every call of it (its title and fields come from its server's own words, in
meowgent.ui.html.mcpcall).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ToolTraits, Writes


class Look(enum.Enum):
    """The kinds of tool the page words differently."""

    WRITE = "write"
    EDIT = "edit"
    RUN = "run"
    FETCH = "fetch"
    READ = "read"
    LIST = "list"
    SEARCH = "search"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of an edit form: the slot it fills, the trait naming its argument, its label key and height."""

    slot: str
    trait: str
    label: str
    lines: int = 1


@dataclass(frozen=True, slots=True)
class ToolText:
    """How the page shows one kind of tool (i18n keys; None where the kind has no such thing)."""

    title: str
    """The verb and object once the call is whole ("Write {path}")."""
    live: str | None = None
    """The title while the model writes the call ("Writing {path}…"), where it differs."""
    fields: tuple[FormField, ...] = ()
    """The edit form; empty: the arguments as JSON in the main field."""
    allow: str = "approve_chat_tool"
    """The "Allow for this chat" button of a scope of the call's own kind."""
    path_in_title: bool = False
    """The title names the path, so the live view does not show it again."""


TEXTS: dict[Look, ToolText] = {
    Look.WRITE: ToolText(
        "act_write",
        "act_writing",
        (FormField("path", "path", "field_path"), FormField("main", "main", "field_content", 8)),
        "approve_chat_write_file",
        path_in_title=True,
    ),
    Look.EDIT: ToolText(
        "act_edit",
        "act_editing",
        (
            FormField("path", "path", "field_path"),
            FormField("old", "old", "field_old", 4),
            FormField("main", "main", "field_new", 4),
        ),
        "approve_chat_edit_file",
        path_in_title=True,
    ),
    Look.RUN: ToolText(
        "act_run", fields=(FormField("main", "command", "field_command", 2),), allow="approve_chat_command"
    ),
    Look.FETCH: ToolText("act_fetch", fields=(FormField("main", "url", "field_url"),), allow="approve_chat_web_fetch"),
    Look.READ: ToolText("act_read", path_in_title=True),
    Look.LIST: ToolText("act_list"),
    Look.SEARCH: ToolText("act_search"),
    Look.OTHER: ToolText("act_other"),
}

_SEARCHES = frozenset({"search_files"})
"""The folder readers worded as a search: the traits of a search and of a listing are the same (both read every
file under their path), so this is the one place a tool's name decides its words."""


def look_of(name: str | None, traits: ToolTraits) -> Look:
    """What kind of tool `traits` describe, for the page."""
    if traits.writes is Writes.REPLACES:
        return Look.WRITE
    if traits.writes is Writes.EDITS:
        return Look.EDIT
    if traits.command is not None:
        return Look.RUN
    if traits.url is not None:
        return Look.FETCH
    if traits.reads_folder:
        return Look.SEARCH if name in _SEARCHES else Look.LIST
    return Look.READ if traits.path is not None else Look.OTHER


def tool_look(name: str | None, tools: ToolRegistry | None = None) -> Look:
    """The look of the tool called `name` in `tools` (the app's; Meowgent's own when not given)."""
    if not name:
        return Look.OTHER
    return look_of(name, (tools or ToolRegistry.builtins()).traits(name))


def text_of(name: str | None, tools: ToolRegistry | None = None) -> ToolText:
    return TEXTS[tool_look(name, tools)]
