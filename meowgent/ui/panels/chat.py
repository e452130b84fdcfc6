"""The chat: the conversation, the approval card under it (`CardPanel`), retry, and the message box.

Every event that shows an answer does the same thing: act through the ChatService, then follow the chat's
event log and render it (`follow`): five frames a second of the chat alone while text streams, and a whole frame
on every status change (`meowgent.ui.state.throttle`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.ui.page import examples_for
from meowgent.ui.panels.card import CardPanel
from meowgent.ui.panels.shared import Page
from meowgent.ui.state.approval import link_target
from meowgent.ui.state.frame import FrameTargets, Snapshot, chat_frame, cleared_first, frame
from meowgent.ui.state.render import ChatView
from meowgent.ui.state.throttle import FRAME_SECONDS, POLL_SECONDS, Draw, FrameThrottle


class ChatPanel:
    """The main column under the top bar: the chat, the card, retry, and the composer (send, stop)."""

    def __init__(self, page: Page, *, scope_list: Any, meter: Any) -> None:
        """`scope_list` and `meter`, the sidebar's, show what a frame says of the chat's scopes and context."""
        self.page = page
        localized = page.localized
        self.chatbot = localized(
            gr.Chatbot,
            {"label": "chat", "placeholder": "welcome"},
            elem_id="chat",
            height=None,
            scale=1,
            show_label=False,
            # No per-message copy button: it copies the message's source, which is escaped HTML, not its text.
            buttons=[],
            more=lambda language: {"examples": examples_for(language)},  # shown by Gradio on an empty chat only
        )
        self.card = CardPanel(page)
        self.retry = localized(gr.Button, {"value": "retry"}, visible=False, size="sm", elem_id="retry")
        with gr.Row(equal_height=True, elem_id="composer"):
            self.msg = localized(
                gr.Textbox,
                {"placeholder": "message"},
                show_label=False,
                scale=8,
                lines=1,
                max_lines=6,
                elem_id="msg",
                autofocus=True,
            )
            self.send = localized(gr.Button, {"value": "send"}, variant="primary", scale=0, elem_id="send")
            self.stop = localized(gr.Button, {"value": "stop"}, visible=False, scale=0, elem_id="stop", variant="stop")
        card = self.card
        self.targets = FrameTargets(
            chatbot=self.chatbot,
            card=card.column,
            card_text=card.text,
            card_details=card.details,
            edit_section=card.edit_section,
            edit_path=card.edit_path,
            edit_old=card.edit_old,
            edit_main=card.edit_main,
            edit_for=card.edit_for,
            approve_all=card.approve_all,
            card_calls=card.calls,
            scope_list=scope_list,
            meter=meter,
            send=self.send,
            stop=self.stop,
            retry=self.retry,
        )
        self.link_target = functools.partial(link_target, page.workspace)  # panels name a link's real target

    @property
    def shown(self) -> list[Any]:
        """The outputs of every event that shows a frame of the chat."""
        return self.targets.outputs()

    def view(self, language: str) -> ChatView:
        return ChatView(language, link_target=self.link_target, tools=self.page.tools)

    def frame_of(self, view: ChatView, owner: str, chat: str, previous: Snapshot | None = None) -> Snapshot:
        return self.page.snapshots.take(owner, chat, view, previous=previous)

    def follow(self, owner: str, chat: str, request: gr.Request) -> Iterator[dict[Any, Any]]:
        """Render the chat's log, then keep streaming while an answer runs; a chat not the owner's shows empty."""
        language = self.page.context.language_of(request)
        view = self.view(language)
        try:
            batches = self.page.service.follow(owner, chat, poll=POLL_SECONDS)
        except ChatError as exc:
            self.page.context.warn(exc, request)
            batches = iter(())
        throttle = FrameThrottle(FRAME_SECONDS)
        snapshot: Snapshot | None = None
        for batch in batches:
            changed = False
            for event in batch:
                changed |= view.apply(event)
            draw = throttle.due(news=bool(batch), status=changed, now=time.monotonic())
            if draw is not None:
                snapshot = self.frame_of(view, owner, chat, snapshot)
                yield (frame if draw is Draw.WHOLE else chat_frame)(snapshot, language, self.targets)
        yield frame(self.frame_of(view, owner, chat, snapshot), language, self.targets)

    def wire(self, *, language_picker: Any) -> None:
        page, context, service = self.page, self.page.context, self.page.service

        def on_send(key: str, chat: str, text: str, request: gr.Request):
            owner = context.owner_of(key, request)
            try:
                service.send(owner, chat, text)
            except ChatError as exc:
                context.warn(exc, request)
                yield {self.msg: text}  # what was typed stays, to send again
                return
            yield from cleared_first(self.follow(owner, chat, request), box=self.msg)

        def on_example(key: str, chat: str, picked: gr.SelectData, request: gr.Request):
            yield from on_send(key, chat, picked.value["text"], request)

        @context.chat_action
        def on_retry(key: str, chat: str, request: gr.Request):
            owner = context.owner_of(key, request)
            service.retry(owner, chat)
            yield from self.follow(owner, chat, request)

        @context.chat_action
        def on_stop(key: str, chat: str, request: gr.Request) -> None:
            service.stop(context.owner_of(key, request), chat)

        chat_inputs = [page.owner_key, page.chat_id]
        send = gr.on(
            [self.msg.submit, self.send.click],
            on_send,
            [*chat_inputs, self.msg],
            [self.msg, *self.shown],
            concurrency_limit=None,
        )
        example = self.chatbot.example_select(on_example, chat_inputs, [self.msg, *self.shown], concurrency_limit=None)
        self.sent = [send, example]
        page.answers += self.sent
        self.card.wire(self, language_picker=language_picker)
        page.answers.append(self.retry.click(on_retry, chat_inputs, self.shown, concurrency_limit=None))
        self.stop.click(on_stop, chat_inputs, None, queue=False)
