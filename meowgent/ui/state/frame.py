"""One frame of a chat on the page: `frame(snapshot, language, targets)`, pure, as updates keyed by component;
`chat_frame`, the same frame's messages alone.

A `Snapshot` is what a frame shows (taken by `meowgent.ui.state.snapshot`, where the I/O is); `FrameTargets` are the
components a frame updates. Gradio takes an event's return value as a dict of component -> update when its
outputs are a list, so a new output is one field here and one entry in `frame`, in any order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any

import gradio as gr

from meowgent.events import ToolCall
from meowgent.policy.scopes import Scope
from meowgent.ui.html.safehtml import Html
from meowgent.ui.html.scopes import scope_choices
from meowgent.ui.i18n import t
from meowgent.ui.state.approval import Card
from meowgent.ui.state.editform import SLOTS, Field, Form
from meowgent.ui.state.models import context_meter


@dataclass(frozen=True)
class Snapshot:
    """What a frame of one chat shows, read once (the chat, if not the owner's, is empty: nothing of it shows)."""

    messages: list[gr.ChatMessage]
    tokens_used: int | None = None
    running: bool = False
    waiting: tuple[ToolCall, ...] = ()
    card: Card = field(default_factory=lambda: Card(Html(""), ""))
    """The waiting calls described (the same description as long as the same calls wait)."""
    card_language: str = ""
    head_form: Form | None = None
    """The edit form of the first waiting call."""
    scopes: tuple[Scope, ...] = ()
    network: tuple[str, ...] = ()
    window: int = 0
    """The context window in use (read only while no answer runs: the meter shows the last answer's)."""


@dataclass(frozen=True)
class FrameTargets:
    """The components a frame updates; their order is the event's outputs (the API's order of values)."""

    chatbot: Any
    card: Any
    card_text: Any
    card_details: Any
    edit_section: Any
    edit_path: Any
    edit_old: Any
    edit_main: Any
    edit_for: Any
    """The call whose fields the edit section holds ("" until the person opens it for the card's head call)."""
    approve_all: Any
    card_calls: Any
    """The ids of the calls the card shows, head first: a click names them, so a stale click applies to nothing."""
    scope_list: Any
    meter: Any
    send: Any
    stop: Any
    retry: Any

    def outputs(self) -> list[Any]:
        return [getattr(self, item.name) for item in fields(self)]

    def edit_fields(self) -> dict[str, Any]:
        """The edit section's fields by slot (`meowgent.ui.state.editform.SLOTS`)."""
        return {"path": self.edit_path, "old": self.edit_old, "main": self.edit_main}


def frame(snapshot: Snapshot, language: str, targets: FrameTargets) -> dict[Any, Any]:
    """The chat as `snapshot` says, in `language`: messages, card, edit section, controls."""
    waiting, running = snapshot.waiting, snapshot.running
    messages = _messages(snapshot, language)
    updates = {
        targets.chatbot: messages,
        # Shown by the event's next step (the card's content crosses the wire once, not in every frame).
        targets.card: gr.skip() if waiting else gr.update(visible=False),
        targets.card_text: snapshot.card.summary,
        targets.card_details: gr.skip() if waiting else "",
        # "Approve all" only where every call shows whole; its handler checks it again.
        targets.approve_all: gr.update(visible=len(waiting) > 1 and not snapshot.card.cut_short),
        targets.card_calls: [call.id for call in waiting],
        targets.scope_list: gr.update(choices=scope_choices(snapshot.scopes, snapshot.network, language), value=[]),
        targets.meter: gr.skip() if running else context_meter(snapshot.tokens_used, snapshot.window, language),
        targets.send: gr.update(visible=not running),
        targets.stop: gr.update(visible=running),
        targets.retry: gr.update(visible=bool(messages) and not running and not waiting),
    }
    return updates | edit_section(snapshot.head_form if waiting else None, language, targets)


def chat_frame(snapshot: Snapshot, language: str, targets: FrameTargets) -> dict[Any, Any]:
    """Only the chat's messages: while text streams nothing else changes, and each component a frame names costs
    the browser work (Gradio leaves the components a frame does not name as they are)."""
    return {targets.chatbot: _messages(snapshot, language)}


def _messages(snapshot: Snapshot, language: str) -> list[gr.ChatMessage]:
    return point_to_card(snapshot.messages, snapshot.waiting, t(language, "see_card"))


def edit_section(form: Form | None, language: str, targets: FrameTargets) -> dict[Any, Any]:
    """The edit section as a frame leaves it: closed and empty with no card, else relabeled for the head call."""
    slots = targets.edit_fields()
    if form is None:
        cleared = {slots[slot]: gr.update(value="", visible=False) for slot in SLOTS}
        return {targets.edit_section: gr.update(open=False), targets.edit_for: ""} | cleared
    return {slots[slot]: field_update(form.slot(slot), language) for slot in SLOTS}


def field_update(field: Field | None, language: str, **value: str) -> dict[str, Any]:
    """An edit field shown with its label (and `value=`, when given), or hidden when its tool has no such field."""
    if field is None:
        return gr.update(visible=False, **value)
    return gr.update(visible=True, label=t(language, field.label), lines=field.lines, **value)


def point_to_card(messages: list[gr.ChatMessage], waiting: tuple[ToolCall, ...], note: str) -> list[gr.ChatMessage]:
    """Waiting calls' panels say "see below" instead of repeating what the card shows in full."""
    ids = {call.id for call in waiting}
    if not ids:
        return messages
    return [
        replace(message, content=note)
        if isinstance(message.metadata, dict) and message.metadata.get("id") in ids
        else message
        for message in messages
    ]


def cleared_first(frames: Iterator[dict[Any, Any]], *, box: Any) -> Iterator[dict[Any, Any]]:
    """Frames that empty a text box once: Gradio re-sends an event's last frame when the event ends, and an
    empty box there would wipe what the person typed while the answer ran."""
    first = True
    for update in frames:
        yield {box: ""} | update if first else update
        first = False
