"""What the panels of one page share: the app's parts, who asks (`PageContext`), the page's state, its words.

A panel lays itself out in `__init__` (inside whatever layout block is open) and binds its events in `wire()`.
Events that show a chat's answer register in `answers` (showing another chat cancels them), and every event
after which the approval card may show registers in `shows_card` (see `CardPanel.show_after`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr

from meowgent.chats.service import ChatService
from meowgent.config import Settings
from meowgent.llm.backend import ModelBackend
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.sandbox import NoSandbox, Sandbox
from meowgent.ui.i18n import ENGLISH, t
from meowgent.ui.state.request import PageContext
from meowgent.ui.state.snapshot import Snapshots

OWNER_KEY_ENCODING = "meowgent-owner-key"


class Wording:
    """The components whose words follow the page's language, in the order they were made."""

    def __init__(self) -> None:
        self._worded: list[tuple[Any, Callable[[str], dict[str, Any]]]] = []

    def localized(
        self,
        make: Callable[..., Any],
        words: dict[str, str],
        *,
        more: Callable[[str], dict[str, Any]] | None = None,
        **options: Any,
    ) -> Any:
        """A component whose words (property -> catalog key, and `more`) follow the page's language."""

        def worded(language: str) -> dict[str, Any]:
            return {name: t(language, key) for name, key in words.items()} | (more(language) if more else {})

        component = make(**worded(ENGLISH), **options)
        self._worded.append((component, worded))
        return component

    def components(self) -> list[Any]:
        return [component for component, _ in self._worded]

    def updates(self, language: str) -> dict[Any, Any]:
        return {component: gr.update(**words(language)) for component, words in self._worded}


@dataclass
class Page:
    """One page's shared parts; its state components are made with it (inside the page's Blocks)."""

    settings: Settings
    service: ChatService
    client: ModelBackend
    tools: ToolRegistry
    sandbox: Sandbox
    snapshots: Snapshots
    context: PageContext
    wording: Wording = field(default_factory=Wording)
    answers: list[Any] = field(default_factory=list)
    shows_card: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The owner key is an opaque random id, kept by the browser like a session cookie. Gradio sends
        # BrowserState's `secret` to every page in /config, so it protects nothing: a fixed public value
        # keeps the key readable after a restart without putting anything of the data folder in /config.
        self.owner_key = gr.BrowserState("", storage_key="meowgent-owner", secret=OWNER_KEY_ENCODING)
        self.saved_language = gr.BrowserState("", storage_key="meowgent-language")
        self.chat_id = gr.State("")

    @property
    def workspace(self) -> Path:
        return self.settings.workspace

    @property
    def sandboxed(self) -> bool:
        """Whether commands run in a sandbox on this computer."""
        return not isinstance(self.sandbox, NoSandbox)

    def localized(self, make: Callable[..., Any], words: dict[str, str], **options: Any) -> Any:
        return self.wording.localized(make, words, **options)
