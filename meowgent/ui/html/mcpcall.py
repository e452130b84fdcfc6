"""An MCP call as a person reads it: a title from the server's own words, and its arguments as labelled fields in
the order of the tool's input schema.

Everything here comes from the server or the model, so it is data: the title is one line, shortened, its Markdown
links and marks taken out, and escaped where it meets the page (meowgent.ui.html.safehtml), never a link or markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from meowgent.mcp.config import SEPARATOR
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool, ToolError
from meowgent.ui.html.safehtml import Html, join, show_invisible, tag
from meowgent.ui.i18n import t

TITLE_CHARS = 80
"""The longest title taken from a server's description; the whole description is the model's, not the page's."""
LABEL_CHARS = 60
"""The longest label taken from a schema's property title or name."""

# `[words](target)` reads as its words; bounded runs keep the search linear on any text.
_MARKDOWN_LINK = re.compile(r"\[([^\[\]\n]{0,200})\]\([^()\s]{0,2000}\)")
_MARKS = re.compile(r"\*\*|__|`")
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)")


def external(name: str | None, tools: ToolRegistry | None) -> ExternalTool | None:
    """The MCP tool called `name` in `tools` (the app's), or None for ours and for names no tool has."""
    if not name:
        return None
    try:
        found = (tools or ToolRegistry.builtins()).get(name)
    except ToolError:
        return None
    return found if isinstance(found, ExternalTool) else None


def remote_name(tool: ExternalTool) -> str:
    """The tool's own name on its server (`add_note` of `notes__add_note`)."""
    return tool.name.partition(SEPARATOR)[2]


def tool_title(tool: ExternalTool) -> str:
    """The server's title for the tool, else the first sentence of its description, as one short line ("" when
    the server says nothing)."""
    return one_line(tool.title, TITLE_CHARS) or one_line(_first_sentence(tool.description), TITLE_CHARS)


def one_line(text: str, limit: int) -> str:
    """`text` as one line of plain words: Markdown links as their words, emphasis and code marks dropped, invisible
    characters shown (`⟨U+202E⟩`), every run of blank space (line breaks included) one space, and cut to `limit`
    characters with "…"."""
    words = " ".join(show_invisible(_MARKS.sub("", _MARKDOWN_LINK.sub(r"\1", text))).split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    end = _SENTENCE_END.search(first)
    return first[: end.start()] if end else first


def fields(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, value as text) for each argument: those the schema lists first, in its order, labelled with their
    property's title or name, then any others under their own names."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    listed = [key for key in properties if key in arguments]
    others = [key for key in arguments if key not in properties]
    return [(_label(key, properties.get(key)), _text(arguments[key])) for key in listed + others]


def _label(key: str, prop: Any) -> str:
    title = prop.get("title") if isinstance(prop, Mapping) else None
    return one_line(title if isinstance(title, str) and title.strip() else key, LABEL_CHARS) or key


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2 if isinstance(value, dict | list) else None)


def fields_html(labelled: list[tuple[str, str]], language: str, *, fold: Callable[[str], str]) -> Html:
    """The fields as the built-in tools' arguments look: a label over a box, each value folded by `fold`."""
    if not labelled:
        return tag("p", t(language, "no_arguments"))
    return join(
        [join([tag("p", name, cls="mg-label"), tag("pre", fold(text), cls="mg-box")]) for name, text in labelled]
    )
