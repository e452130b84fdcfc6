"""A chat as everything kept of it (its transcript, calls and audit trail) for download, and the files written."""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from meowgent.persist.calls import AuditRow, CallRow
from meowgent.persist.private import write_private
from meowgent.persist.store import StoredConversation


@dataclass(frozen=True)
class ChatRecord:
    """One chat as the store keeps it."""

    stored: StoredConversation
    audit: list[AuditRow]
    calls: list[CallRow]

    def to_json(self) -> str:
        """Everything: the conversation's facts, the exact transcript, every tool call and the audit trail."""
        row = self.stored.row
        document = {
            "id": row.id,
            "title": row.title,
            "model": row.model,
            "workspace": row.workspace,
            "created": row.created,
            "updated": row.updated,
            "messages": self.stored.messages,
            "tool_calls": [asdict(call) for call in self.calls],
            "audit": [asdict(entry) for entry in self.audit],
        }
        return json.dumps(document, indent=2, ensure_ascii=False)


def write_export(folder: Path, markdown: str, document: str) -> tuple[Path, Path]:
    """The two downloads as `chat.md` and `chat.json`, readable by us alone, in a new folder inside `folder`."""
    export = Path(tempfile.mkdtemp(prefix="export-", dir=folder))
    paths = export / "chat.md", export / "chat.json"
    for path, text in zip(paths, (markdown, document), strict=True):
        write_private(path, text)
    return paths
