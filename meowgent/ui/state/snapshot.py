"""Taking a chat's `Snapshot` for a frame: the reads a frame needs, once per frame, the slow ones cached.

The card's description (it looks at files and links) is worked out again only when other calls wait, or in
another language; a model's context window (a request to the model server) once per model name.
"""

from __future__ import annotations

import threading
from pathlib import Path

from meowgent.chats.errors import ChatError
from meowgent.chats.service import ChatService
from meowgent.llm.backend import ModelBackend
from meowgent.llm.errors import ModelError
from meowgent.tools.registry import ToolRegistry
from meowgent.ui.html.fileview import undone_calls
from meowgent.ui.state.approval import Commands, describe_queue
from meowgent.ui.state.editform import form_for
from meowgent.ui.state.frame import Snapshot
from meowgent.ui.state.render import ChatView


class ContextWindows:
    """The context window in use for each model (`client.show`), asked once per model; a model's own at most `cap`,
    a server's as it is (`ModelInfo.window`)."""

    def __init__(self, client: ModelBackend, *, cap: int) -> None:
        self.client = client
        self.cap = cap
        self._known: dict[str, int] = {}
        self._lock = threading.Lock()

    def of(self, model: str) -> int:
        with self._lock:
            known = self._known.get(model)
        if known is not None:
            return known
        try:
            window = self.client.show(model).window(self.cap)
        except ModelError:  # not installed, or the server is away: the cap, and asked again next time
            return self.cap
        with self._lock:
            self._known[model] = window
        return window


class Snapshots:
    """Takes the snapshots of the chats of one app."""

    def __init__(
        self,
        service: ChatService,
        windows: ContextWindows,
        *,
        workspace: Path,
        tools: ToolRegistry,
        commands: Commands,
    ) -> None:
        self.service = service
        self.windows = windows
        self.workspace = workspace
        self.tools = tools
        self.commands = commands

    def take(
        self, owner: str, chat: str, view: ChatView, *, previous: Snapshot | None = None, whole: bool = True
    ) -> Snapshot:
        """`chat` as `view` renders it now; `previous` (this event's last) lends its card if the same calls wait.

        A `whole` frame's snapshot also reads which calls' changes are undone: that read is a write transaction of
        the store, which the recorder of a streaming answer waits on, so the frames of streamed text keep the marks
        of the last whole one."""
        if whole:
            view.mark_undone(self._undone_calls(owner, chat))
        language, messages = view.language, view.messages()
        try:
            running = self.service.is_running(owner, chat)
            waiting = () if running else self.service.waiting(owner, chat)
            network = self.service.network(owner, chat)
            scopes = tuple(self.service.scopes(owner, chat))
            window = 0 if running else self.windows.of(self.service.get(owner, chat).conversation.model)
        except ChatError:  # not this owner's chat: show nothing of it
            return Snapshot(messages, tokens_used=view.tokens_used, window=self.windows.cap)
        same_card = (
            previous is not None
            and [call.id for call in previous.waiting] == [call.id for call in waiting]
            and previous.network == network
            and previous.card_language == language
        )
        card = (
            previous.card
            if same_card and previous is not None
            else describe_queue(
                waiting, self.workspace, language, network=network, commands=self.commands, tools=self.tools
            )
        )
        return Snapshot(
            messages,
            tokens_used=view.tokens_used,
            running=running,
            waiting=waiting,
            card=card,
            card_language=language,
            head_form=form_for(waiting[0], tools=self.tools) if waiting else None,
            scopes=scopes,
            network=network,
            window=window,
        )

    def _undone_calls(self, owner: str, chat: str) -> frozenset[str]:
        """The calls of the chat whose changes were all undone (none for a chat not the owner's)."""
        try:
            return undone_calls(self.service.files.changes(owner, chat))
        except ChatError:
            return frozenset()
