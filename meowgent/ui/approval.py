"""The approval card: what a waiting call will do, in plain words, with nothing cut off."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from meowgent.events import ToolCall
from meowgent.mcp.config import SEPARATOR
from meowgent.rules import risk_notes
from meowgent.tools import ExternalTool, ToolError, get_tool
from meowgent.tools.workspace import Workspace
from meowgent.ui.i18n import ENGLISH, risks, t
from meowgent.ui.render import browser_safe


@dataclass(frozen=True)
class CallDescription:
    """`summary` says what will happen in one sentence; `details` is the full command, content or URL."""

    summary: str
    details: str


def describe_call(call: ToolCall, workspace: Path, language: str = ENGLISH) -> CallDescription:
    """What approving this call will do, for a person who is not technical."""
    arguments = call.arguments
    match call.name:
        case "run_shell":
            return CallDescription(t(language, "run_command", folder=workspace), str(arguments.get("command", "")))
        case "write_file":
            content = str(arguments.get("content", ""))
            path = str(arguments.get("path", ""))
            return CallDescription(_write_summary(workspace, path, content, language), content)
        case "edit_file":
            path = str(arguments.get("path", ""))
            old, new = str(arguments.get("old", "")), str(arguments.get("new", ""))
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", lineterm="")
            return CallDescription(t(language, "edit_file", path=path), "\n".join(diff))
        case "web_fetch":
            url = str(arguments.get("url", ""))
            host = urlsplit(url).hostname or t(language, "unknown_site")
            return CallDescription(t(language, "fetch", host=host), url)
    details = json.dumps(arguments, indent=2, ensure_ascii=False)
    return CallDescription(_mcp_summary(call.name, language) or t(language, "other_tool", tool=call.name), details)


def _mcp_summary(name: str, language: str) -> str | None:
    """Which MCP server and tool, and what the server claims about it (shown, never trusted); None for ours."""
    try:
        found = get_tool(name)
    except ToolError:
        return None
    if not isinstance(found, ExternalTool):
        return None
    summary = t(language, "mcp_call", server=found.group, tool=name.partition(SEPARATOR)[2])
    if found.hints:
        claims = t(language, "risk_separator").join(t(language, f"mcp_hint_{hint}") for hint in found.hints)
        summary += "\n\n" + t(language, "mcp_hints", hints=claims)
    return summary


def risk_line(call: ToolCall, workspace: Path, language: str = ENGLISH) -> str:
    """What deserves a second look, from our rules (never from the model): `⚠️ Heads up: this deletes files.`"""
    notes = risk_notes(call, workspace)
    return t(language, "heads_up", risks=risks(language, notes)) if notes else ""


def describe_queue(calls: tuple[ToolCall, ...], workspace: Path, language: str = ENGLISH) -> CallDescription:
    """Every waiting call in one line each; the details are those of the first, which is decided first."""
    if not calls:
        return CallDescription("", "")
    head = describe_call(calls[0], workspace, language)
    if len(calls) == 1:
        summary = t(language, "card_one") + "\n\n" + head.summary
        if warning := risk_line(calls[0], workspace, language):
            summary += "\n\n" + warning
    else:
        steps = "\n".join(
            f"{n}. {_as_step(describe_call(call, workspace, language).summary)} "
            f"{risk_line(call, workspace, language)}".rstrip()
            for n, call in enumerate(calls, 1)
        )
        summary = f"{t(language, 'card_many', count=len(calls))}\n\n{steps}\n\n{t(language, 'card_many_hint')}"
    return CallDescription(browser_safe(summary), browser_safe(head.details))


def _as_step(summary: str) -> str:
    return summary.rstrip(":：")


def _write_summary(workspace: Path, path: str, content: str, language: str) -> str:
    size = len(content.encode("utf-8", "surrogatepass"))
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    amount = t(language, "amount_one" if lines == 1 else "amount_many", lines=f"{lines:,}", size=f"{size:,}")
    try:
        target = Workspace(workspace).resolve(path)
    except ToolError:
        return t(language, "write_outside", path=path, amount=amount)
    except ValueError:  # UnicodeEncodeError: a name no file system can store
        return t(language, "write_invalid", path=path, amount=amount)
    if target.is_file():
        return t(language, "replace_file", path=path, size=f"{target.stat().st_size:,}", amount=amount)
    return t(language, "create_file", path=path, amount=amount)
