"""The chat: the conversation, the approval card under it (`CardPanel`), retry, and the message box.

Every event that shows an answer acts through the ChatService, then follows the chat into the same components
(`follower`, a `meowgent.ui.state.follow.Follower`), as the card's decisions and the sidebar's navigation do.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.ui.page import examples_for
from meowgent.ui.panels.card import CardPanel
from meowgent.ui.panels.shared import Page
from meowgent.ui.state.follow import Follower
from meowgent.ui.state.frame import FrameTargets, cleared_first


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
                {"placeholder": "message", "label": "message_label"},  # the label: what a screen reader says
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
        self.follower = Follower(page.service, page.context, page.snapshots, page.tools, page.workspace, self.targets)
        self.shown = self.follower.shown

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
            yield from cleared_first(self.follower.follow(owner, chat, request), box=self.msg)

        def on_example(key: str, chat: str, picked: gr.SelectData, request: gr.Request):
            yield from on_send(key, chat, picked.value["text"], request)

        @context.chat_action
        def on_retry(key: str, chat: str, request: gr.Request):
            owner = context.owner_of(key, request)
            service.retry(owner, chat)
            yield from self.follower.follow(owner, chat, request)

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
        self.card.wire(self.follower, language_picker=language_picker)
        page.answers.append(self.retry.click(on_retry, chat_inputs, self.shown, concurrency_limit=None))
        self.stop.click(on_stop, chat_inputs, None, queue=False)
