"""The person's own acts on the workspace in a chat: uploads and undos.

They need no approval (the person is the one acting), so each is a row in the chat's approval log, as the person's
own act, and a note the model reads with its next message.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, Literal

from meowgent.chats.audit import own_act_row
from meowgent.chats.chat import Chat
from meowgent.files import told, upload
from meowgent.files.checkpoints import Checkpoints, Mark, UndoReport
from meowgent.files.upload import Written
from meowgent.persist.checkpoints import CheckpointRow
from meowgent.persist.recorder import Recorder
from meowgent.tools.workspace import Workspace


class WorkspaceActs:
    """Uploads and undos in the chats of one service; `chat_of(owner, chat_id)` checks the owner."""

    def __init__(
        self,
        chat_of: Callable[[str, str], Chat],
        recorder: Recorder,
        *,
        workspace: Path,
        checkpoints: Checkpoints | None,
    ) -> None:
        self._chat = chat_of
        self._recorder = recorder
        self._workspace = workspace
        self._checkpoints = checkpoints

    def upload(
        self,
        owner: str,
        chat_id: str,
        files: Sequence[tuple[str, BinaryIO]],
        *,
        folder: str = "",
        replace: bool = False,
        max_bytes: int,
        max_files: int,
        account: str = "",
    ) -> list[Written]:
        """Save the person's files into the workspace (or `folder` in it); `FileRefused` says why one was not.

        The files saved before a refusal stay, and are logged and told like the others.
        """
        chat = self._chat(owner, chat_id)
        written: list[Written] = []
        try:
            upload.check_count(len(files), limit=max_files)
            workspace = Workspace(self._workspace)
            for name, source in files:
                written.append(
                    upload.save(workspace, name, source, folder=folder, replace=replace, max_bytes=max_bytes)
                )
        finally:
            if written:
                details = [{"path": item.path, "size": item.size, "replaced": item.replaced} for item in written]
                self._own_acts(chat, "upload", details, account=account)
                chat.conversation.notes.append(told.uploaded(upload.names(written)))
        return written

    def changes(self, owner: str, chat_id: str) -> list[CheckpointRow]:
        """The file changes the agent made in this chat, oldest first (none without checkpoints)."""
        self._chat(owner, chat_id)
        return self._checkpoints.changes(chat_id) if self._checkpoints else []

    def marks(self, owner: str, chat_id: str) -> dict[str, Mark]:
        """Each file this chat created or changed, "+12 −3" against its first checkpoint."""
        self._chat(owner, chat_id)
        return self._checkpoints.marks(chat_id) if self._checkpoints else {}

    def undo(self, owner: str, chat_id: str, call_id: str, *, force: bool = False, account: str = "") -> UndoReport:
        """Put back what one call of this chat changed (see `Checkpoints.undo`)."""
        chat = self._chat(owner, chat_id)
        if self._checkpoints is None:
            return UndoReport()
        return self._undone(chat, self._checkpoints.undo(chat_id, call_id, force=force), account=account)

    def undo_since(
        self, owner: str, chat_id: str, message: int, *, force: bool = False, account: str = ""
    ) -> UndoReport:
        """Put back every file change of this chat made answering the person's message `message` or later."""
        chat = self._chat(owner, chat_id)
        if self._checkpoints is None:
            return UndoReport()
        return self._undone(chat, self._checkpoints.undo_since(chat_id, message, force=force), account=account)

    def _undone(self, chat: Chat, report: UndoReport, *, account: str) -> UndoReport:
        if report.done:
            details = [{"path": item.path, "removed": item.removed} for item in report.done]
            self._own_acts(chat, "undo", details, account=account)
            chat.conversation.notes.append(told.undone((item.path, item.removed) for item in report.done))
        return report

    def _own_acts(self, chat: Chat, act: Literal["upload", "undo"], details: list[dict], *, account: str) -> None:
        now = time.time()
        rows = [own_act_row(act, item, account=account, now=now) for item in details]
        self._recorder.record_calls(chat.id, (), audit=rows)
