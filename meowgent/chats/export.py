"""A conversation as Markdown (to read) and as JSON (the full transcript), for download."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from meowgent.persist.private import write_private
from meowgent.persist.store import StoredConversation
from meowgent.ui.render import fence


def to_markdown(stored: StoredConversation, audit: list[dict[str, Any]]) -> str:
    """Readable: who said what, each tool call with its arguments and result, then the audit log."""
    row = stored.row
    lines = [f"# {row.title}", "", f"*Model {row.model}, workspace `{row.workspace}`, started {_when(row.created)}.*"]
    for message in stored.messages:
        role = message["role"]
        if role == "user":
            lines += ["", "## You", "", message["content"]]
        elif role == "assistant":
            lines += ["", "## Meowgent", "", message.get("content", "")]
            for call in message.get("tool_calls") or ():
                function = call.get("function", {})
                arguments = json.dumps(function.get("arguments"), indent=2, ensure_ascii=False)
                lines += ["", f"**Tool call:** `{function.get('name')}`", "", fence(arguments, "json")]
        elif role == "tool":
            lines += ["", f"**Result of `{message.get('tool_name', '')}`:**", "", fence(message["content"])]
    if audit:
        lines += ["", "## Approvals", "", "| time | tool | decision | decided by | outcome |", "|---|---|---|---|---|"]
        lines += [
            f"| {_when(entry['time'])} | {entry['tool']} | {entry['decision']} | {entry['decided_by']} "
            f"| {entry['outcome']} |"
            for entry in audit
        ]
    return "\n".join(lines) + "\n"


def to_json(stored: StoredConversation, audit: list[dict[str, Any]], calls: list[dict[str, Any]]) -> str:
    """Everything: the conversation's facts, the exact transcript, every tool call and the audit log."""
    row = stored.row
    document = {
        "id": row.id,
        "title": row.title,
        "model": row.model,
        "workspace": row.workspace,
        "created": row.created,
        "updated": row.updated,
        "messages": stored.messages,
        "tool_calls": calls,
        "audit": audit,
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def write_export(folder: Path, markdown: str, document: str) -> tuple[Path, Path]:
    """The two downloads as `chat.md` and `chat.json`, readable by us alone, in a new folder inside `folder`."""
    export = Path(tempfile.mkdtemp(prefix="export-", dir=folder))
    paths = export / "chat.md", export / "chat.json"
    for path, text in zip(paths, (markdown, document), strict=True):
        write_private(path, text)
    return paths


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
