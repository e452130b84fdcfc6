"""The approval card: what each waiting call will do, in plain words, in full, in the order it will run.

The card is HTML built from escaped text (meowgent.ui.safehtml): a path, command or address the
model chose can't end a code span, draw over the page or load anything.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from meowgent.events import ToolCall
from meowgent.mcp.config import SEPARATOR
from meowgent.rules import NETWORK, risk_notes
from meowgent.tools import ExternalTool, ToolError, get_tool
from meowgent.tools.workspace import Workspace
from meowgent.ui.actions import action, lookup
from meowgent.ui.i18n import ENGLISH, risks, t
from meowgent.ui.render import browser_safe, diff_html, trim_for_view
from meowgent.ui.safehtml import Html, block, fill, join, show_invisible, tag, visible_lines

CARD_BOX_CHARS = 50_000
"""Each later call's text on the card is whole up to this size, then its head and tail. The box under the card
holds the first call's text whole, and the card doesn't repeat it: a 1 MB file travels to the page once."""


@dataclass(frozen=True)
class CallDescription:
    """`summary` says what will happen (safe HTML); `details` is the full command, content or URL as text."""

    summary: Html
    details: str


def describe_call(call: ToolCall, workspace: Path, language: str = ENGLISH) -> CallDescription:
    """What approving this call will do, for a person who is not technical."""
    arguments = call.arguments
    match call.name:
        case "run_shell":
            command = str(arguments.get("command", ""))
            return CallDescription(_say(language, "run_command", folder=_code(str(workspace))), command)
        case "write_file":
            content = str(arguments.get("content", ""))
            path = str(arguments.get("path", ""))
            return CallDescription(_write_summary(workspace, path, content, language), content)
        case "edit_file":
            path = str(arguments.get("path", ""))
            old, new = str(arguments.get("old", "")), str(arguments.get("new", ""))
            before, after = t(language, "diff_before"), t(language, "diff_after")
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), before, after, lineterm="")
            return CallDescription(_say(language, "edit_file", path=_code(path)), "\n".join(diff))
        case "web_fetch":
            url = str(arguments.get("url", ""))
            host = urlsplit(url).hostname or t(language, "unknown_site")
            return CallDescription(_say(language, "fetch", host=_code(host)), url)
    details = json.dumps(arguments, indent=2, ensure_ascii=False)
    return CallDescription(
        _mcp_summary(call.name, language) or _say(language, "other_tool", tool=_code(call.name)), details
    )


def _mcp_summary(name: str, language: str) -> Html | None:
    """Which MCP server and tool, and what the server claims about it (shown, never trusted); None for ours."""
    try:
        found = get_tool(name)
    except ToolError:
        return None
    if not isinstance(found, ExternalTool):
        return None
    summary = _say(language, "mcp_call", server=_code(found.group), tool=_code(name.partition(SEPARATOR)[2]))
    if found.hints:
        claims = t(language, "risk_separator").join(t(language, f"mcp_hint_{hint}") for hint in found.hints)
        summary = join([summary, tag("div", t(language, "mcp_hints", hints=claims))])
    return summary


def risk_line(call: ToolCall, workspace: Path, language: str = ENGLISH) -> str:
    """What deserves a second look, from our rules (never from the model): `⚠️ Heads up: this deletes files.`"""
    notes = risk_notes(call, workspace)
    return t(language, "heads_up", risks=risks(language, notes)) if notes else ""


def describe_queue(
    calls: tuple[ToolCall, ...],
    workspace: Path,
    language: str = ENGLISH,
    *,
    network: bool = False,
    sandboxed: bool = True,
) -> CallDescription:
    """Every waiting call, in order, each in full: what it does, a warning if any, and its command or text.

    `details` is the text of the first call, which "Approve" decides. `network` is the chat's setting for its
    commands, `sandboxed` whether commands run in the sandbox on this computer.
    """
    if not calls:
        return CallDescription(Html(""), "")
    # The head call's text goes in the box under the card (`details`), so the card doesn't show it twice.
    where = _Sandbox(network, sandboxed)
    steps = [_step(call, workspace, language, where, boxed=index > 0) for index, call in enumerate(calls)]
    if len(calls) == 1:
        card = join([tag("h3", t(language, "card_one")), steps[0]])
    else:
        items = join([tag("li", step) for step in steps])
        heading = tag("h3", t(language, "card_many", count=len(calls)))
        card = join([heading, tag("ol", items), tag("p", t(language, "card_many_hint"))])
    head = describe_call(calls[0], workspace, language)
    return CallDescription(block(card, cls="mg mg-card"), _shown_text(calls[0], head.details))


@dataclass(frozen=True)
class _Sandbox:
    """What the card says about where a command runs: the chat's network setting, and whether there is a sandbox."""

    network: bool
    sandboxed: bool

    def line(self, call: ToolCall, workspace: Path, language: str) -> str:
        """No sandbox at all, or a command that needs the network it doesn't have (the control under the card)."""
        if call.name != "run_shell":
            return ""
        if not self.sandboxed:
            return t(language, "card_no_sandbox")
        return t(language, "network_needed") if not self.network and NETWORK in risk_notes(call, workspace) else ""


def _step(call: ToolCall, workspace: Path, language: str, where: _Sandbox, *, boxed: bool) -> Html:
    """One call on the card: "Run `make test`", the sentence that says where and how, a warning, the full text
    (when `boxed`; the head call's text is in the box under the card)."""
    description = describe_call(call, workspace, language)
    title = action(call.name, lookup(call.arguments), language)
    # <div>, not <p>: Gradio's Markdown style runs paragraphs inside list items into one line.
    parts: list[str | Html] = [tag("div", tag("strong", title)), tag("div", description.summary)]
    if warning := risk_line(call, workspace, language):
        parts.append(tag("div", tag("strong", warning)))
    if sandbox_line := where.line(call, workspace, language):
        parts.append(tag("div", sandbox_line))
    if call.name == "edit_file":
        parts.append(diff_html(str(call.arguments.get("old", "")), str(call.arguments.get("new", "")), language))
    elif boxed:
        shown = trim_for_view(_shown_text(call, description.details), CARD_BOX_CHARS, language=language)
        parts.append(tag("pre", shown, cls="mg-box"))
    return join(parts)


def _shown_text(call: ToolCall, details: str) -> str:
    """Details as the page shows them: invisible characters marked, a command's first line in view."""
    text = visible_lines(details) if call.name == "run_shell" else details
    return browser_safe(show_invisible(text))


def _say(language: str, key: str, **values: str | Html) -> Html:
    return fill(t(language, key), **values)


def _code(value: str) -> Html:
    return tag("code", value)


def _write_summary(workspace: Path, path: str, content: str, language: str) -> Html:
    size = len(content.encode("utf-8", "surrogatepass"))
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    amount = t(language, "amount_one" if lines == 1 else "amount_many", lines=f"{lines:,}", size=f"{size:,}")
    try:
        target = Workspace(workspace).resolve(path)
    except ToolError:
        return _say(language, "write_outside", path=_code(path), amount=amount)
    except ValueError:  # UnicodeEncodeError: a name no file system can store
        return _say(language, "write_invalid", path=_code(path), amount=amount)
    if target.is_file():
        return _say(language, "replace_file", path=_code(path), size=f"{target.stat().st_size:,}", amount=amount)
    return _say(language, "create_file", path=_code(path), amount=amount)
