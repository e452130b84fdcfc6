"""The approval card: what a waiting call will do, in plain words, with nothing cut off."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from meowgent.events import ToolCall
from meowgent.rules import risk_notes
from meowgent.tools import ToolError
from meowgent.tools.workspace import Workspace
from meowgent.ui.render import browser_safe


@dataclass(frozen=True)
class CallDescription:
    """`summary` says what will happen in one sentence; `details` is the full command, content or URL."""

    summary: str
    details: str


def describe_call(call: ToolCall, workspace: Path) -> CallDescription:
    """What approving this call will do, for a person who is not technical."""
    arguments = call.arguments
    match call.name:
        case "run_shell":
            return CallDescription(
                f"**Run this command** in the folder `{workspace}`:", str(arguments.get("command", ""))
            )
        case "write_file":
            content = str(arguments.get("content", ""))
            path = str(arguments.get("path", ""))
            return CallDescription(_write_summary(workspace, path, content), content)
        case "edit_file":
            path = str(arguments.get("path", ""))
            old, new = str(arguments.get("old", "")), str(arguments.get("new", ""))
            diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", lineterm="")
            return CallDescription(f"**Change part of the file** `{path}` like this:", "\n".join(diff))
        case "web_fetch":
            url = str(arguments.get("url", ""))
            host = urlsplit(url).hostname or "an unknown site"
            return CallDescription(f"**Read a web page** from `{host}`:", url)
    return CallDescription(f"**Use the tool** `{call.name}` with:", json.dumps(arguments, indent=2, ensure_ascii=False))


def risk_line(call: ToolCall, workspace: Path) -> str:
    """What deserves a second look, from our rules (never from the model): `⚠️ Heads up: deletes files.`"""
    notes = risk_notes(call, workspace)
    return f"⚠️ **Heads up:** this {', '.join(notes)}." if notes else ""


def describe_queue(calls: tuple[ToolCall, ...], workspace: Path) -> CallDescription:
    """Every waiting call in one line each; the details are those of the first, which is decided first."""
    if not calls:
        return CallDescription("", "")
    head = describe_call(calls[0], workspace)
    if len(calls) == 1:
        summary = "### The assistant wants to do this\n\n" + head.summary
        if risks := risk_line(calls[0], workspace):
            summary += "\n\n" + risks
    else:
        steps = "\n".join(
            f"{n}. {describe_call(call, workspace).summary.rstrip(':')} {risk_line(call, workspace)}".rstrip()
            for n, call in enumerate(calls, 1)
        )
        summary = (
            f"### The assistant wants to do {len(calls)} things, in this order\n\n{steps}\n\n"
            "The details of the first one are below. Decide it alone, or approve all at once."
        )
    return CallDescription(browser_safe(summary), browser_safe(head.details))


def _write_summary(workspace: Path, path: str, content: str) -> str:
    size = len(content.encode("utf-8", "surrogatepass"))
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    amount = f"{lines:,} {'line' if lines == 1 else 'lines'}, {size:,} bytes"
    try:
        target = Workspace(workspace).resolve(path)
    except ToolError:
        return f"**Write the file** `{path}` ({amount}). It is outside the workspace, so it will be refused."
    except ValueError:  # UnicodeEncodeError: a name no file system can store
        return f"**Write the file** `{path}` ({amount}). It is not a valid file name, so it will be refused."
    if target.is_file():
        return f"**Replace the file** `{path}` (now {target.stat().st_size:,} bytes) with this text ({amount}):"
    return f"**Create the new file** `{path}` with this text ({amount}):"
