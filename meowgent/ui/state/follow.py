"""Following a chat: its event log as frames, streaming on while an answer runs.

Every event that shows an answer (send, retry, a decision on the card, showing a chat, a language switch) acts
through the ChatService, then follows the chat here: five frames a second of the chat alone while text streams,
and a whole frame on every status change (`meowgent.ui.state.throttle`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.chats.service import ChatService
from meowgent.tools.registry import ToolRegistry
from meowgent.ui.state.approval import link_target
from meowgent.ui.state.frame import FrameTargets, Snapshot, chat_frame, frame
from meowgent.ui.state.render import ChatView
from meowgent.ui.state.request import PageContext
from meowgent.ui.state.snapshot import Snapshots
from meowgent.ui.state.throttle import FRAME_SECONDS, POLL_SECONDS, Draw, FrameThrottle


@dataclass(frozen=True)
class Follower:
    """Draws one page's chat into `targets`, the components the chat and the card show it in."""

    service: ChatService
    context: PageContext
    snapshots: Snapshots
    tools: ToolRegistry
    workspace: Path
    targets: FrameTargets

    @property
    def shown(self) -> list[Any]:
        """The outputs of every event that shows a frame of the chat."""
        return self.targets.outputs()

    def view(self, language: str) -> ChatView:
        """A fresh view of a chat; its links name their real target in the workspace."""
        return ChatView(language, link_target=functools.partial(link_target, self.workspace), tools=self.tools)

    def follow(self, owner: str, chat: str, request: gr.Request) -> Iterator[dict[Any, Any]]:
        """Render the chat's log, then keep streaming while an answer runs; a chat not the owner's shows empty."""
        language = self.context.language_of(request)
        view = self.view(language)
        try:
            batches = self.service.follow(owner, chat, poll=POLL_SECONDS)
        except ChatError as exc:
            self.context.warn(exc, request)
            batches = iter(())
        throttle = FrameThrottle(FRAME_SECONDS)
        snapshot: Snapshot | None = None
        for batch in batches:
            changed = False
            for event in batch:
                changed |= view.apply(event)
            draw = throttle.due(news=bool(batch), status=changed, now=time.monotonic())
            if draw is not None:
                snapshot = self.snapshots.take(owner, chat, view, previous=snapshot, whole=draw is Draw.WHOLE)
                yield (frame if draw is Draw.WHOLE else chat_frame)(snapshot, language, self.targets)
        yield frame(self.snapshots.take(owner, chat, view, previous=snapshot), language, self.targets)
