"""A tool call's parts as escaped HTML: its arguments, an edit's diff, a command's output, and long text trimmed.

Pure functions of their text: the chat's panels, the approval card, the audit log and the Files panel share them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from meowgent.tools.linediff import LineDiff, unified_diff
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import Writes
from meowgent.ui.html.mcpcall import external, fields, fields_html
from meowgent.ui.html.safehtml import Html, escape, join, tag, visible_lines
from meowgent.ui.i18n import ENGLISH, t

RESULT_VIEW_CHARS = 4_000
"""Results longer than this are trimmed in the page (the model still gets all of them)."""
OUTPUT_LINES = 8
"""How many first lines of a command's output show outside its panel, without opening anything."""
_LABELS = ("path", "content", "command", "url", "pattern", "glob", "old", "new", "offset", "limit")


def label(key: str, language: str) -> Html:
    """An argument's name in words ("File", "檔案"); a tool we don't know keeps its own names."""
    return tag("p", t(language, f"label_{key}") if key in _LABELS else key, cls="mg-label")


def arguments_html(name: str, arguments: dict[str, Any], language: str, *, tools: ToolRegistry | None = None) -> Html:
    """What a call will do or did, readable: a file's text, a diff, a command, then the raw JSON one click away."""
    traits = (tools or ToolRegistry.builtins()).traits(name)
    old, new = (arguments.get(traits.old), arguments.get(traits.main)) if traits.writes is Writes.EDITS else (0, 0)
    if isinstance(old, str) and isinstance(new, str):
        shown = diff_html(edit_diff(old, new, language), language)
    elif mcp := external(name, tools):  # labelled as its schema says, in its order
        shown = fields_html(
            fields(arguments, mcp.parameters), language, fold=lambda text: trim_for_view(text, language=language)
        )
    else:
        shown = join(
            [
                join([label(key, language), tag("pre", _view_value(key, value, language), cls="mg-box")])
                for key, value in arguments.items()
            ]
        ) or escape(t(language, "no_arguments"))
    return join([shown, technical_html(arguments, language)])


def _view_value(key: str, value: Any, language: str) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return trim_for_view(visible_lines(text) if key == "command" else text, language=language)


def technical_html(arguments: dict[str, Any], language: str, *, limit: int = RESULT_VIEW_CHARS) -> Html:
    """The arguments as the model wrote them, for those who want them, behind one click."""
    raw = json.dumps(arguments, indent=2, ensure_ascii=False)
    shown = tag("pre", trim_for_view(raw, limit, language=language), cls="mg-box")
    return tag("details", tag("summary", t(language, "technical")), shown)


def edit_diff(old: str, new: str, language: str) -> LineDiff:
    """What an edit changes, line by line, headed "before" and "after" in `language`."""
    return unified_diff(old, new, before=t(language, "diff_before"), after=t(language, "diff_after"))


def diff_html(diff: LineDiff, language: str, *, limit: int = RESULT_VIEW_CHARS) -> Html:
    """A coloured diff built only from escaped lines: its head and tail when longer than `limit` characters,
    under a plain sentence when it was too big to compare line by line. Lines of one kind in a row share one
    element, so the markup stays a small part of the page."""
    runs: list[tuple[str, list[str]]] = []
    for line, shown in head_and_tail(diff.lines, limit, language=language):
        cls = _diff_class(line)
        if runs and runs[-1][0] == cls:
            runs[-1][1].append(shown)
        else:
            runs.append((cls, [shown]))
    spans = [tag("span", "\n".join(lines) or " ", cls=cls) for cls, lines in runs]
    rough = [] if diff.exact else [tag("p", t(language, "diff_rough"))]
    return join([*rough, tag("pre", join(spans), cls="mg-diff")])


def _diff_class(line: str | None) -> str:
    """How a diff line looks: None is where lines were left out, drawn like the headings."""
    if line is None or line.startswith(("---", "+++")):
        return "mg-hunk"
    return {"-": "mg-del", "+": "mg-add", "@": "mg-hunk"}.get(line[:1], "mg-same")


def lines_chars(lines: list[str]) -> int:
    """The characters `lines` take shown one under another."""
    return sum(len(line) + 1 for line in lines) - 1 if lines else 0


def head_and_tail(lines: list[str], limit: int, *, language: str) -> list[tuple[str | None, str]]:
    """(line, what is shown of it) for the lines that fit in `limit` characters: all of them, or those of the
    first three quarters and the last quarter, with (None, "… N more characters …") between."""
    total = lines_chars(lines)
    if total <= limit:
        return [(line, line) for line in lines]
    head, tail = _first_chars(lines, limit * 3 // 4), _first_chars(lines[::-1], limit - limit * 3 // 4, end=True)
    hidden = total - sum(len(shown) for _, shown in head + tail)
    return [*head, (None, t(language, "more_chars", count=f"{hidden:,}")), *tail[::-1]]


def _first_chars(lines: list[str], budget: int, *, end: bool = False) -> list[tuple[str | None, str]]:
    """The first lines (or, with `end`, the last ones, given reversed) that fit in `budget` characters, the
    last of them cut to fit."""
    taken: list[tuple[str | None, str]] = []
    for line in lines:
        if budget <= 0:
            break
        taken.append((line, line[len(line) - budget :] if end and len(line) > budget else line[:budget]))
        budget -= len(line) + 1
    return taken


def output_html(output: str, language: str) -> Html:
    """A command's output in view: its first lines, and all of it (as the page keeps it) one click away."""
    text = trim_for_view(output, language=language)
    lines = text.split("\n")
    first = "\n".join(lines[:OUTPUT_LINES]) or t(language, "no_output")
    parts = [tag("p", t(language, "output"), cls="mg-label"), tag("pre", first)]
    if len(lines) > OUTPUT_LINES:
        summary = tag("summary", t(language, "show_all", lines=f"{len(lines):,}"))
        parts.append(tag("details", summary, tag("pre", text, cls="mg-box")))
    return join(parts)


def browser_safe(text: str) -> str:
    """Lone surrogates (JSON lets a model write `\\ud800`) cannot be sent as UTF-8; show them escaped instead."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def trim_for_view(text: str, limit: int = RESULT_VIEW_CHARS, *, language: str = ENGLISH) -> str:
    """Head and tail of a long result for the page; the transcript keeps all of it."""
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    cut = t(language, "more_chars", count=f"{len(text) - limit:,}")
    return f"{text[:head]}\n{cut}\n{text[-(limit - head) :]}"


def fence(text: str, language: str = "") -> str:
    """A fenced code block that no backtick run inside `text` can close early (for Markdown exports)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"
