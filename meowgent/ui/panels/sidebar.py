"""The sidebar: the language, the model (`ModelPanel`), the workspace, the person's chats and what the open chat
allows; and "this chat" (`ThisChatPanel`): rename, delete, the audit log, export.

Opening the page, switching the language and showing another chat are the page's navigation: they change
every panel's words or the chat every panel shows, so they are wired here, with the outputs of all panels.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.chats.export import write_export
from meowgent.chats.service import NEW_TITLE
from meowgent.policy.scopes import Scope
from meowgent.ui.html.auditlog import audit_html
from meowgent.ui.html.export import chat_markdown
from meowgent.ui.html.scopes import NETWORK_ALLOWED, scope_choices
from meowgent.ui.i18n import ENGLISH, LANGUAGES, chat_error_text, pick_language, t
from meowgent.ui.page import CLOSE_ON_PHONE
from meowgent.ui.panels.chat import ChatPanel
from meowgent.ui.panels.models import ModelPanel
from meowgent.ui.panels.shared import Page


class SidebarPanel:
    """The top of the sidebar, down to what the open chat allows."""

    def __init__(self, page: Page) -> None:
        self.page = page
        localized = page.localized
        gr.Markdown("## 🐱 Meowgent")
        self.language = gr.Radio(
            [(name, code) for code, name in LANGUAGES.items()],
            value=ENGLISH,
            label="Language / 語言",
            elem_id="language",
        )
        self.models = ModelPanel(page)
        self.workspace = gr.Markdown()  # the folder's path, told only to an owner (on_load): not in /config
        self.new_chat = localized(gr.Button, {"value": "new_chat"}, elem_id="new_chat")
        self.chats = localized(gr.Radio, {"label": "your_chats"}, choices=[], elem_id="chats")
        with localized(gr.Accordion, {"label": "allowed_here"}, open=False):
            self.scopes = localized(gr.CheckboxGroup, {"label": "pick_to_revoke"}, choices=[], elem_id="scopes")
            self.revoke = localized(gr.Button, {"value": "revoke"}, size="sm", elem_id="revoke")

    def chat_list(self, owner: str, current: str, request: gr.Request) -> Any:
        untitled = t(self.page.context.language_of(request), "untitled_chat")
        rows = [(untitled if row.title == NEW_TITLE else row.title, row.id) for row in self.page.service.chats(owner)]
        return gr.update(choices=rows, value=current)

    def wording(self, language: str) -> dict[Any, Any]:
        """Every worded component and the workspace line, in `language`."""
        return self.page.wording.updates(language) | {
            self.workspace: t(language, "workspace", folder=self.page.workspace)
        }

    def show_chat(self, owner: str, chat: str, request: gr.Request) -> Iterator[dict[Any, Any]]:
        """Everything that changes when another chat is shown: list, name, model, then the chat itself.

        List, name and model come with the first frame alone: the follower's later frames (at least one more, its
        last) would put them back over what the person has typed or picked meanwhile, such as a new name."""
        opened = self.page.service.get(owner, chat)
        name = t(self.page.context.language_of(request), "untitled_chat") if opened.title == NEW_TITLE else opened.title
        switched = {
            self.page.chat_id: chat,
            self.chats: self.chat_list(owner, chat, request),
            self.title: name,
            self.models.model: gr.update(value=opened.conversation.model),
        }
        frames = self.chat.follower.follow(owner, chat, request)
        yield switched | next(frames, {})
        yield from frames

    def wire(self, demo: gr.Blocks, *, chat: ChatPanel, this_chat: ThisChatPanel, status_line: Any) -> list[Any]:
        """Bind the page's navigation; returns the events that show another chat (they end the current answer)."""
        page, context = self.page, self.page.context
        self.chat, self.title, self.status_line = chat, this_chat.title, status_line
        self.opened = [page.chat_id, self.chats, self.title, self.models.model, *chat.shown]
        self.worded = [*page.wording.components(), self.workspace]
        load = demo.load(
            self.on_load,
            [page.owner_key, page.saved_language],
            [page.owner_key, self.language, *self.relabeled(self.opened), *self.opened],
            concurrency_limit=None,
        )
        self.models.wire(status_line=status_line, after=[load])
        demo.unload(self.forget_language)
        for sent in chat.sent:
            sent.then(self.chat_list_of, [page.owner_key, page.chat_id], [self.chats])
        for picks_a_chat in (self.new_chat.click, self.chats.input):
            picks_a_chat(None, js=CLOSE_ON_PHONE)
        # Showing another chat ends this page's view of the current one (its answer keeps running on the server).
        switch = {"concurrency_limit": None, "cancels": page.answers}
        chat_model = [page.owner_key, page.chat_id, self.models.model]
        switches = [
            self.language.input(
                self.on_language,
                [page.owner_key, page.chat_id, self.language, self.models.model],
                [page.saved_language, status_line, *self.relabeled(chat.shown), *chat.shown],
                **switch,
            ),
            self.new_chat.click(self.on_new_chat, chat_model, self.opened, **switch),
            # The chatbot's own trash button would empty only the page; make it a real fresh start.
            chat.chatbot.clear(self.on_new_chat, chat_model, self.opened, **switch),
            self.chats.input(context.chat_action(self.on_open), [page.owner_key, self.chats], self.opened, **switch),
        ]
        self.language.input(
            self.on_language_facts,
            [page.owner_key, page.chat_id, self.language, self.models.model],
            [self.models.facts, self.models.think, self.chats],
            concurrency_limit=None,
        )
        self.revoke.click(
            self.on_revoke,
            [page.owner_key, page.chat_id, self.scopes],
            [self.scopes, chat.card.network],
            concurrency_limit=None,
        )
        return [load, *switches]

    def relabeled(self, besides: list[Any]) -> list[Any]:
        """The worded components that `besides` does not list (an event lists a component once)."""
        return [item for item in self.worded if item not in besides]

    def on_load(self, key: str, saved: str, request: gr.Request):
        key = key or secrets.token_urlsafe(24)
        if self.page.context.picked(request) is None:  # a language the tab switched to meanwhile stays
            first = saved if saved in LANGUAGES else pick_language(request.headers.get("accept-language"))
            self.page.context.set_language(request, first)
        owner = self.page.context.owner_of(key, request)
        rows = self.page.service.chats(owner)
        chat_id = rows[0].id if rows else self.page.service.new_chat(owner).id

        def known() -> dict[Any, Any]:
            """Read at each frame: the tab may switch its language while the load runs."""
            return {self.page.owner_key: key, self.language: self.page.context.language_of(request)}

        yield known() | self.wording(self.page.context.language_of(request))  # a frame of its own: one update a frame
        for update in self.show_chat(owner, chat_id, request):
            yield known() | update

    def on_language(self, key: str, chat_id: str, picked: str, model_name: str, request: gr.Request):
        self.page.context.set_language(request, picked)
        if not self.page.context.is_known(key, request):  # the words would name the workspace folder and the models
            yield gr.skip()
            return
        owner = self.page.context.owner_of(key, request)
        status = self.models.status(key, chat_id, model_name, request)
        yield {self.page.saved_language: picked, self.status_line: status[self.status_line]} | self.wording(picked)
        yield from self.chat.follower.follow(owner, chat_id, request)

    def on_language_facts(self, key: str, chat_id: str, picked: str, model_name: str, request: gr.Request):
        """The model facts and self.chat names, which on_language's stream doesn't carry, in the new language."""
        self.page.context.set_language(request, picked)
        facts = self.models.facts_of(key, chat_id, model_name, request)
        chat_list = {self.chats: self.chat_list(self.page.context.owner_of(key, request), chat_id, request)}
        return facts | chat_list

    def on_new_chat(self, key: str, chat_id: str, picked: str, request: gr.Request):
        owner = self.page.context.owner_of(key, request)
        try:
            current = self.page.service.get(owner, chat_id)
        except ChatError:
            current = None
        # An untouched self.chat is already a fresh start; don't pile up empty ones.
        fresh = current if current and not current.conversation.messages else self.page.service.new_chat(owner, picked)
        yield from self.show_chat(owner, fresh.id, request)

    def on_open(self, key: str, picked: str, request: gr.Request):
        yield from self.show_chat(self.page.context.owner_of(key, request), picked, request)

    def chat_list_of(self, key: str, chat_id: str, request: gr.Request):
        return self.chat_list(self.page.context.owner_of(key, request), chat_id, request)

    def forget_language(self, request: gr.Request) -> None:
        self.page.context.forget(request)

    def on_revoke(self, key: str, chat_id: str, picked: list[str], request: gr.Request):
        owner = self.page.context.owner_of(key, request)
        try:
            for value in picked:
                if value == NETWORK_ALLOWED:
                    self.page.service.set_network(owner, chat_id, ())
                    continue
                scope = Scope.from_stored(json.loads(value), tools=self.page.tools)
                if scope is not None:
                    self.page.service.revoke(owner, chat_id, scope)
            scopes, chat_network = (
                tuple(self.page.service.scopes(owner, chat_id)),
                self.page.service.network(owner, chat_id),
            )
        except ChatError as exc:
            self.page.context.warn(exc, request)
            scopes, chat_network = (), ()
        # The card's control shows the self.chat's setting too: revoked here, it must not turn it back on.
        choices = scope_choices(scopes, chat_network, self.page.context.language_of(request))
        return {
            self.scopes: gr.update(choices=choices, value=[]),
            self.chat.card.network: gr.update(value="self.chat" if chat_network else "off"),
        }


class ThisChatPanel:
    """ "This chat": its name, deleting it (with a confirmation), its audit log, and its export."""

    def __init__(self, page: Page) -> None:
        self.page = page
        localized = page.localized
        with localized(gr.Accordion, {"label": "this_chat"}, open=False, elem_id="chat_tools"):
            self.title = localized(gr.Textbox, {"label": "name"}, elem_id="title")
            self.rename = localized(gr.Button, {"value": "rename"}, size="sm", elem_id="rename")
            self.delete = localized(gr.Button, {"value": "delete"}, size="sm", variant="stop", elem_id="delete")
            with gr.Row(visible=False) as self.confirm_row:
                self.confirm_delete = localized(
                    gr.Button, {"value": "confirm_delete"}, size="sm", variant="stop", elem_id="confirm_delete"
                )
                self.cancel_delete = localized(gr.Button, {"value": "keep"}, size="sm", elem_id="cancel_delete")
            self.show_audit = localized(gr.Button, {"value": "show_audit"}, size="sm", elem_id="show_audit")
            self.audit_log = gr.Markdown(elem_id="audit")
            self.export = localized(gr.Button, {"value": "export"}, size="sm", elem_id="export")
            self.download_md = gr.DownloadButton("⬇ Markdown", visible=False, size="sm", elem_id="download_md")
            self.download_json = gr.DownloadButton("⬇ JSON", visible=False, size="sm", elem_id="download_json")

    def wire(self, sidebar: SidebarPanel) -> list[Any]:
        """Bind its events; returns the one that shows another chat (deleting this one)."""
        page, context, service = self.page, self.page.context, self.page.service

        def on_rename(key: str, chat_id: str, name: str, request: gr.Request):
            owner = context.owner_of(key, request)
            try:
                service.rename(owner, chat_id, name)
            except ChatError as exc:
                context.warn(exc, request)
            return sidebar.chat_list(owner, chat_id, request)

        def on_delete(key: str, chat_id: str, request: gr.Request):
            owner = context.owner_of(key, request)
            try:
                service.delete(owner, chat_id)
            except ChatError as exc:
                context.warn(exc, request)
            rows = service.chats(owner)
            yield from sidebar.show_chat(owner, rows[0].id if rows else service.new_chat(owner).id, request)

        def on_audit(key: str, chat_id: str, request: gr.Request):
            language = context.language_of(request)
            try:
                return audit_html(service.audit(context.owner_of(key, request), chat_id), language)
            except ChatError as exc:
                return chat_error_text(language, exc)

        @context.chat_action
        def on_export(key: str, chat_id: str, request: gr.Request):
            record = service.export(context.owner_of(key, request), chat_id)
            # Written inside Gradio's (private) cache: served without a copy, deleted with the cache.
            markdown_file, json_file = write_export(
                Path(self.download_md.GRADIO_CACHE), chat_markdown(record), record.to_json()
            )
            return {
                self.download_md: gr.update(value=str(markdown_file), visible=True),
                self.download_json: gr.update(value=str(json_file), visible=True),
            }

        chat_inputs = [page.owner_key, page.chat_id]
        self.rename.click(on_rename, [*chat_inputs, self.title], [sidebar.chats], concurrency_limit=None)
        self.delete.click(lambda: gr.update(visible=True), None, [self.confirm_row], queue=False)
        self.cancel_delete.click(lambda: gr.update(visible=False), None, [self.confirm_row], queue=False)
        hide_confirm = self.confirm_delete.click(
            lambda: gr.update(visible=False), None, [self.confirm_row], queue=False
        )
        deleted = hide_confirm.then(
            on_delete, chat_inputs, sidebar.opened, concurrency_limit=None, cancels=page.answers
        )
        self.show_audit.click(on_audit, chat_inputs, [self.audit_log], concurrency_limit=None)
        self.export.click(on_export, chat_inputs, [self.download_md, self.download_json], concurrency_limit=None)
        return [deleted]
