"""A chat as a Markdown document to read (in English): who said what, each call with its arguments and result, and
the approvals."""

from __future__ import annotations

import json
import time

from meowgent.chats.export import ChatRecord
from meowgent.ui.html.auditlog import audit_words
from meowgent.ui.html.callhtml import fence
from meowgent.ui.i18n import ENGLISH


def chat_markdown(record: ChatRecord) -> str:
    """Readable: who said what, each tool call with its arguments and result, then the audit trail."""
    row = record.stored.row
    lines = [f"# {row.title}", "", f"*Model {row.model}, workspace `{row.workspace}`, started {_when(row.created)}.*"]
    for message in record.stored.messages:
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
    if record.audit:
        lines += ["", "## Approvals", "", "| time | tool | decision | decided by | outcome |", "|---|---|---|---|---|"]
        for entry in record.audit:
            words = audit_words(entry, ENGLISH)
            lines.append(f"| {_when(entry.time)} | {entry.tool} | {words.decision} | {words.who} | {words.outcome} |")
    return "\n".join(lines) + "\n"


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
