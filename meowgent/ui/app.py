"""build_app(settings) -> gr.Blocks: layout and event wiring only.

Every event that shows an answer does the same thing: act through the ChatService, then
follow the conversation's event log and render it, throttled to about 20 updates a second
plus one on every status change. Every sentence comes from meowgent.ui.i18n, in the
language this page chose.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import gradio as gr
from starlette.middleware import Middleware

from meowgent.agent.loop import Agent
from meowgent.chats.export import write_export
from meowgent.chats.service import NEW_TITLE, ChatError, ChatErrorKind, ChatService
from meowgent.config import Settings
from meowgent.conversation import Decision
from meowgent.events import ToolCall
from meowgent.llm.client import OllamaClient
from meowgent.llm.errors import ModelError
from meowgent.mcp.adapter import McpTools
from meowgent.mcp.config import config_path
from meowgent.persist.private import private_temp_folder
from meowgent.persist.store import Store
from meowgent.policy.rulebook import RULES_EXAMPLE, Rulebook
from meowgent.policy.rules import RulesError
from meowgent.policy.scopes import Scope, scope_offer, typed_scope
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.sandbox import NoSandbox, sandbox_for
from meowgent.ui.approval import describe_queue, link_target
from meowgent.ui.auditlog import audit_html
from meowgent.ui.editform import SLOTS, FormError, edited_arguments, field_values, form_for
from meowgent.ui.export import chat_markdown
from meowgent.ui.guard import Guard, addresses_for
from meowgent.ui.i18n import ENGLISH, LANGUAGES, chat_error_text, error_text, pick_language, t
from meowgent.ui.login import LOGIN_MESSAGE, LoginThrottle, RememberedBrowsers, RememberLogins, login_key
from meowgent.ui.models import context_meter, describe_pull, model_facts, model_label, pick_model, server_status
from meowgent.ui.page import CLOSE_ON_PHONE, CSS, ON_LOAD, TOGGLE_SIDEBAR, examples_for, field_update, point_to_card
from meowgent.ui.panels.mcp import McpPanel
from meowgent.ui.render import CHAT_CSS, ChatView
from meowgent.ui.scopes import (
    NETWORK_ALLOWED,
    NETWORK_CHOICES,
    network_label,
    network_options,
    scope_controls,
    scope_label,
)
from meowgent.ui.throttle import FrameThrottle

log = logging.getLogger(__name__)

DATABASE = "meowgent.db"
OWNER_KEY_ENCODING = "meowgent-owner-key"
EXPORT_SECONDS = 600
"""Downloads are kept this long (and at most until the app stops), then deleted."""
FRAME_SECONDS = 0.05
"""At most one browser update per frame while streaming (the browser, not the wire, is the bottleneck)."""
STATUS_SECONDS = 5.0
MAX_UPLOAD_BYTES = 0
"""The largest file Gradio's /upload takes: none, since the page takes no files (exports are downloads).
Uncapped, anyone who reaches the page could fill the disk through Gradio's cache; uploads bring their own cap."""


def build_app(
    settings: Settings, *, client: OllamaClient | None = None, tools: ToolRegistry | None = None
) -> gr.Blocks:
    client = client or OllamaClient(
        settings.ollama_host, connect_timeout=settings.connect_timeout, read_timeout=settings.read_timeout
    )
    store = Store(settings.data_dir / DATABASE)
    tools = tools or ToolRegistry.builtins()  # this app's: its MCP servers' tools join it as they start
    rulebook = Rulebook(settings.data_dir, settings.workspace, tools=tools)
    # Each chat is judged by its owner's rules (`Conversation.owner`).
    agent = Agent(client, settings, policies=rulebook.policy, tools=tools)
    service = ChatService(agent, store, default_model=settings.model, workspace=settings.workspace)
    mcp_tools = McpTools.from_settings(settings, tools).start()  # servers start in the background, stop at exit
    sandbox = sandbox_for(settings)  # probed now, at start, so a missing sandbox is said before any command
    sandboxed = not isinstance(sandbox, NoSandbox)
    if isinstance(sandbox, NoSandbox):
        log.warning("Commands run without a sandbox on this computer: %s", sandbox.reason)
    languages: dict[str, str] = {}  # by Gradio session; a dict, since gr.State values are per event input
    link_target_of = functools.partial(link_target, settings.workspace)  # chat panels name a link's real target

    with gr.Blocks(title="Meowgent", fill_height=True, delete_cache=(EXPORT_SECONDS, EXPORT_SECONDS)) as demo:
        # The owner key is an opaque random id, kept by the browser like a session cookie. Gradio sends
        # BrowserState's `secret` to every page in /config, so it protects nothing: a fixed public value
        # keeps the key readable after a restart without putting anything of the data folder in /config.
        owner_key = gr.BrowserState("", storage_key="meowgent-owner", secret=OWNER_KEY_ENCODING)
        saved_language = gr.BrowserState("", storage_key="meowgent-language")
        chat_id = gr.State("")
        # The ids of the calls the card shows, head first: a click names them, so a stale click applies to nothing.
        card_calls = gr.State([])
        texts: list[tuple[Any, Callable[[str], dict[str, Any]]]] = []

        def localized(
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
            texts.append((component, worded))
            return component

        # Closed at first, so a phone opens on the chat; the page's script opens it on a wide screen.
        with gr.Sidebar(open=False, width=340, elem_id="sidebar"):
            gr.Markdown("## 🐱 Meowgent")
            language_picker = gr.Radio(
                [(name, code) for code, name in LANGUAGES.items()],
                value=ENGLISH,
                label="Language / 語言",
                elem_id="language",
            )
            model = localized(
                gr.Dropdown,
                {"label": "model"},
                choices=[settings.model],
                value=settings.model,
                allow_custom_value=True,
                elem_id="model",
            )
            facts = gr.Markdown(elem_id="model_facts")
            meter = gr.Markdown(elem_id="context_meter")
            think = localized(gr.Checkbox, {"label": "think"}, value=True, visible=False, elem_id="think")
            with localized(gr.Accordion, {"label": "get_model"}, open=False):
                pull_name = gr.Textbox(placeholder=settings.model, show_label=False, elem_id="pull_name")
                pull = localized(gr.Button, {"value": "download"}, size="sm", elem_id="pull")
                pull_status = gr.Markdown(elem_id="pull_status")
            workspace = gr.Markdown()  # the folder's path, told only to an owner (on_load): not in /config
            new_chat = localized(gr.Button, {"value": "new_chat"}, elem_id="new_chat")
            chats = localized(gr.Radio, {"label": "your_chats"}, choices=[], elem_id="chats")
            with localized(gr.Accordion, {"label": "allowed_here"}, open=False):
                scope_list = localized(gr.CheckboxGroup, {"label": "pick_to_revoke"}, choices=[], elem_id="scopes")
                revoke = localized(gr.Button, {"value": "revoke"}, size="sm", elem_id="revoke")
            with localized(gr.Accordion, {"label": "rules"}, open=False):
                localized(gr.Markdown, {"value": "rules_help"})
                rules_text = gr.Code(value=RULES_EXAMPLE, language="json", elem_id="rules")
                save_rules = localized(gr.Button, {"value": "save_rules"}, size="sm", elem_id="save_rules")
                rules_status = gr.Markdown(elem_id="rules_status")
            mcp_file = str(config_path(settings.data_dir, settings.mcp_config))
            mcp_panel = McpPanel(mcp_tools, config_file=mcp_file, localized=localized)
            with localized(gr.Accordion, {"label": "this_chat"}, open=False, elem_id="chat_tools"):
                title = localized(gr.Textbox, {"label": "name"}, elem_id="title")
                rename = localized(gr.Button, {"value": "rename"}, size="sm", elem_id="rename")
                delete = localized(gr.Button, {"value": "delete"}, size="sm", variant="stop", elem_id="delete")
                with gr.Row(visible=False) as confirm_row:
                    confirm_delete = localized(
                        gr.Button, {"value": "confirm_delete"}, size="sm", variant="stop", elem_id="confirm_delete"
                    )
                    cancel_delete = localized(gr.Button, {"value": "keep"}, size="sm", elem_id="cancel_delete")
                show_audit = localized(gr.Button, {"value": "show_audit"}, size="sm", elem_id="show_audit")
                audit_log = gr.Markdown(elem_id="audit")
                export = localized(gr.Button, {"value": "export"}, size="sm", elem_id="export")
                download_md = gr.DownloadButton("⬇ Markdown", visible=False, size="sm", elem_id="download_md")
                download_json = gr.DownloadButton("⬇ JSON", visible=False, size="sm", elem_id="download_json")

        # The main view is one screen tall: the status line, the chat (which gives up room), then the
        # approval card and the message box, so the card's buttons are in view whenever it shows.
        with gr.Row(elem_id="topbar"):
            menu = localized(gr.Button, {"value": "menu"}, size="sm", scale=0, min_width=0, elem_id="menu")
            status = gr.Markdown(t(ENGLISH, "status_checking"), elem_id="status")
        chatbot = localized(
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
        with gr.Column(visible=False, elem_id="approval") as card:
            with gr.Column(elem_id="card_body"):
                card_text = gr.Markdown(elem_id="card_text")
                # A plain text box, not Markdown: it shows a 1 MB file whole without freezing the page,
                # and scrolls inside, so the buttons below stay in view. The only copy of the content.
                card_details = gr.Textbox(
                    show_label=False, interactive=False, lines=1, max_lines=12, elem_id="card_details", buttons=["copy"]
                )
                # Filled only when opened: until then the page carries a long content once, in card_details.
                with localized(gr.Accordion, {"label": "edit_before"}, open=False, elem_id="edit") as edit_section:
                    edit_fields = {
                        "path": gr.Textbox("", lines=1, visible=False, elem_id="edit_path"),
                        "old": gr.Textbox("", lines=3, max_lines=12, visible=False, elem_id="edit_old"),
                        "main": gr.Textbox("", lines=3, max_lines=12, visible=False, elem_id="edit_args"),
                    }
                scope_prefix = gr.Textbox(lines=1, visible=False, elem_id="scope_prefix")  # shown where typing applies
                # For a command in the sandbox: none, for this command, for the chat (on_card_change sets it).
                network = gr.Radio(
                    network_options(ENGLISH),
                    value="off",
                    label=t(ENGLISH, "network_label"),
                    visible=False,
                    elem_id="network",
                )
                reason = localized(gr.Textbox, {"label": "reason"}, lines=1, elem_id="reason")
            with gr.Row(elem_id="card_actions"):
                approve = localized(gr.Button, {"value": "approve"}, variant="primary", elem_id="approve")
                approve_all = localized(
                    gr.Button, {"value": "approve_all"}, variant="primary", visible=False, elem_id="approve_all"
                )
                # Worded for the waiting call (meowgent.ui.scopes), so it says what it allows.
                approve_chat = gr.Button(t(ENGLISH, "approve_chat"), elem_id="approve_chat")
                reject = localized(gr.Button, {"value": "reject"}, variant="stop", elem_id="reject")
        retry = localized(gr.Button, {"value": "retry"}, visible=False, size="sm", elem_id="retry")
        with gr.Row(equal_height=True, elem_id="composer"):
            msg = localized(
                gr.Textbox,
                {"placeholder": "message"},
                show_label=False,
                scale=8,
                lines=1,
                max_lines=6,
                elem_id="msg",
                autofocus=True,
            )
            send_button = localized(gr.Button, {"value": "send"}, variant="primary", scale=0, elem_id="send")
            stop = localized(gr.Button, {"value": "stop"}, visible=False, scale=0, elem_id="stop", variant="stop")
        timer = gr.Timer(STATUS_SECONDS)

        # The call whose fields the edit section holds ("" until the person opens it for the card's head call).
        edit_for = gr.State("")
        edits = [edit_section, *edit_fields.values(), edit_for]
        shown = [chatbot, card, card_text, card_details, *edits, approve_all, card_calls, scope_list, meter]
        shown += [send_button, stop, retry]
        worded = [component for component, _ in texts]

        def owner_of(key: str, request: gr.Request) -> str:
            # With a login, the account owns the chats; otherwise a random key kept in this browser.
            return f"user:{request.username}" if request.username else f"browser:{key}"

        def language_of(request: gr.Request) -> str:
            return languages.get(request.session_hash or "", ENGLISH)

        def forget_language(request: gr.Request) -> None:
            languages.pop(request.session_hash or "", None)

        def warn(exc: ChatError, request: gr.Request) -> None:
            gr.Warning(chat_error_text(language_of(request), exc))

        def wording(language: str) -> list[Any]:
            """Every registered component's words and the workspace line, in `language`."""
            return [
                *(gr.update(**words(language)) for _, words in texts),
                t(language, "workspace", folder=settings.workspace),
            ]

        def frame(view: ChatView, owner: str, chat: str, request: gr.Request) -> tuple[Any, ...]:
            language = view.language = language_of(request)
            try:
                running = service.is_running(owner, chat)
                waiting = () if running else service.waiting(owner, chat)
                chat_network = service.network(owner, chat)
            except ChatError:  # not this owner's chat: show nothing of it
                running, waiting, chat_network = False, (), False
            card_description = describe_queue(
                waiting, settings.workspace, language, network=chat_network, sandboxed=sandboxed, tools=tools
            )
            messages = point_to_card(view.messages(), waiting, t(language, "see_card"))
            return (
                messages,
                gr.skip() if waiting else gr.update(visible=False),  # show_card_details shows it, whole
                card_description.summary,
                gr.skip() if waiting else "",
                *edit_section_frame(waiting[0] if waiting else None, language),
                # "Approve all" only where every call shows whole; on_approve_all checks it again.
                gr.update(visible=len(waiting) > 1 and not card_description.cut_short),
                [call.id for call in waiting],
                gr.update(choices=scope_choices(owner, chat, language), value=[]),
                gr.skip() if running else context_meter(view.tokens_used, context_in_use(owner, chat), language),
                gr.update(visible=not running),
                gr.update(visible=running),
                gr.update(visible=bool(messages) and not running and not waiting),
            )

        def edit_section_frame(head: ToolCall | None, language: str) -> list[Any]:
            """The edit section as a frame leaves it: closed and empty with no card, else relabeled for its call."""
            if head is None:
                fields = [gr.update(value="", visible=False) for _ in SLOTS]
                return [gr.update(open=False), *fields, ""]
            form = form_for(head)
            fields = [field_update(form.slot(slot), language) for slot in SLOTS]
            return [gr.skip(), *fields, gr.skip()]

        def on_edit(key: str, chat: str, shown_ids: list[str], loaded_for: str, request: gr.Request):
            """Opening "Change it before approving" fills its fields with the head call's arguments."""
            if loaded_for and loaded_for == _head(shown_ids):  # opened again: keep what the person changed
                return *(gr.skip() for _ in SLOTS), gr.skip()
            try:
                head = head_call(owner_of(key, request), chat, shown_ids)
            except ChatError as exc:
                warn(exc, request)
                return *(gr.skip() for _ in SLOTS), gr.skip()
            form, values = form_for(head), field_values(head)
            language = language_of(request)
            return *(field_update(form.slot(slot), language, value=values[slot]) for slot in SLOTS), head.id

        def show_card_details(key: str, chat: str, shown_ids: list[str], request: gr.Request):
            """Show the card the frames prepared, with the head call's whole content, sent once.

            Not a frame output: Gradio sends a generator's last frame twice (as a diff, then whole),
            and a 1 MB file should cross the wire once.
            """
            try:
                waiting = service.waiting(owner_of(key, request), chat)
            except ChatError:
                return gr.skip(), gr.skip()
            if not waiting or waiting[0].id != _head(shown_ids):
                return gr.skip(), gr.skip()
            details = describe_queue(waiting, settings.workspace, language_of(request), tools=tools).details
            return gr.update(visible=True), details

        def shown_head(owner: str, chat: str, shown_ids: list[str]) -> ToolCall | None:
            """The call the card shows first, if it still waits (ChatError if the chat is not the owner's)."""
            return next((call for call in service.waiting(owner, chat) if call.id == _head(shown_ids)), None)

        def head_call(owner: str, chat: str, shown_ids: list[str]) -> ToolCall:
            """The call the card shows first; ChatError if it no longer waits."""
            head = shown_head(owner, chat, shown_ids)
            if head is None:
                raise ChatError(ChatErrorKind.NOT_WAITING)
            return head

        def follow(owner: str, chat: str, request: gr.Request) -> Iterator[tuple[Any, ...]]:
            """Render the conversation's log, then keep streaming while an answer runs."""
            view = ChatView(language_of(request), link_target=link_target_of)
            try:
                batches = service.follow(owner, chat, poll=FRAME_SECONDS)
            except ChatError as exc:
                warn(exc, request)
                batches = iter(())
            throttle = FrameThrottle(FRAME_SECONDS)
            for batch in batches:
                changed = False
                for event in batch:
                    changed |= view.apply(event)
                if throttle.due(news=bool(batch), status=changed, now=time.monotonic()):
                    yield frame(view, owner, chat, request)
            yield frame(view, owner, chat, request)

        def chat_list(owner: str, current: str, request: gr.Request):
            untitled = t(language_of(request), "untitled_chat")
            rows = [(untitled if row.title == NEW_TITLE else row.title, row.id) for row in service.chats(owner)]
            return gr.update(choices=rows, value=current)

        def show_chat(owner: str, chat: str, request: gr.Request):
            """Everything that changes when another chat is shown: list, name, model, then the chat itself."""
            opened = service.get(owner, chat)
            name = t(language_of(request), "untitled_chat") if opened.title == NEW_TITLE else opened.title
            model_value = gr.update(value=opened.conversation.model)
            for update in follow(owner, chat, request):
                yield chat, chat_list(owner, chat, request), name, model_value, *update

        def on_load(key: str, saved: str, request: gr.Request):
            key = key or secrets.token_urlsafe(24)
            language = saved if saved in LANGUAGES else pick_language(request.headers.get("accept-language"))
            languages[request.session_hash or ""] = language
            owner = owner_of(key, request)
            rows = service.chats(owner)
            chat = rows[0].id if rows else service.new_chat(owner).id
            words = wording(language)
            for update in show_chat(owner, chat, request):
                yield key, language, *words, *update
                words = [gr.skip() for _ in words]

        def on_language(key: str, chat: str, picked: str, model_name: str, request: gr.Request):
            languages[request.session_hash or ""] = picked
            if not is_known(key, request):  # the words would name the workspace folder and the models
                yield _unchanged(2 + len(relabeled) + len(shown))
                return
            banner, _ = on_tick(key, model_name, request)
            view = ChatView(picked, link_target=link_target_of)
            yield picked, banner, *wording(picked), *frame(view, owner_of(key, request), chat, request)
            for update in follow(owner_of(key, request), chat, request):
                yield gr.skip(), gr.skip(), *(gr.skip() for _ in range(len(relabeled))), *update

        def on_open(key: str, picked: str, request: gr.Request):
            owner = owner_of(key, request)
            try:
                yield from show_chat(owner, picked, request)
            except ChatError as exc:
                warn(exc, request)

        def on_example(key: str, chat: str, picked: gr.SelectData, request: gr.Request):
            yield from on_send(key, chat, picked.value["text"], request)

        def on_send(key: str, chat: str, text: str, request: gr.Request):
            owner = owner_of(key, request)
            try:
                service.send(owner, chat, text)
            except ChatError as exc:
                warn(exc, request)
                yield text, *_unchanged(len(shown))
                return
            yield from _cleared_first(follow(owner, chat, request))

        def on_decide(
            key: str, chat: str, decisions: dict[str, Decision], request: gr.Request, *, network_choice: str = ""
        ):
            owner = owner_of(key, request)
            try:
                for_command, for_chat = network_of(owner, chat, list(decisions), network_choice)
                decisions = {call_id: replace(d, network=for_command) for call_id, d in decisions.items()}
                service.decide(owner, chat, decisions, account=request.username or "", chat_network=for_chat)
            except ChatError as exc:
                warn(exc, request)
            yield from _cleared_first(follow(owner, chat, request))

        def network_of(owner: str, chat: str, shown_ids: list[str], choice: str) -> tuple[bool, bool | None]:
            """(this command may reach the network, the chat's setting as the card leaves it) from the card's
            control; nothing for a call that is not a command in the sandbox, whose card has no control."""
            head = shown_head(owner, chat, shown_ids)
            if not sandboxed or head is None or head.name != "run_shell" or choice not in NETWORK_CHOICES:
                return False, None
            return choice == "command", choice == "chat"

        def on_approve(
            key: str,
            chat: str,
            shown_ids: list[str],
            loaded_for: str,
            path: str,
            old: str,
            main: str,
            network_choice: str,
            request: gr.Request,
        ):
            arguments = None
            if loaded_for and loaded_for == _head(shown_ids):  # the person opened the fields of this call
                values = {"path": path, "old": old, "main": main}
                try:
                    arguments = edited_arguments(head_call(owner_of(key, request), chat, shown_ids), values)
                except ChatError as exc:
                    warn(exc, request)
                    return
                except FormError as exc:
                    gr.Warning(t(language_of(request), "invalid_edit_json", detail=exc.detail))
                    return
            decision = {_head(shown_ids): Decision(True, arguments=arguments)}
            yield from on_decide(key, chat, decision, request, network_choice=network_choice)

        def on_approve_all(key: str, chat: str, shown_ids: list[str], network_choice: str, request: gr.Request):
            try:
                waiting = service.waiting(owner_of(key, request), chat)
            except ChatError as exc:
                warn(exc, request)
                return
            # The button is hidden then, but every event is an endpoint: a call the card cut short is never
            # approved with the others.
            language = language_of(request)
            if set(shown_ids) & set(describe_queue(waiting, settings.workspace, language).cut_short):
                gr.Warning(t(language, "approve_all_cut"))
                return
            decisions = {call_id: Decision(True) for call_id in shown_ids}
            yield from on_decide(key, chat, decisions, request, network_choice=network_choice)

        def on_card_change(key: str, chat: str, shown_ids: list[str], language: str, request: gr.Request):
            """Word "Allow for this chat" for the call that now waits, and show the box only where typing applies."""
            owner = owner_of(key, request)
            try:
                head = shown_head(owner, chat, shown_ids)
                chat_network = service.network(owner, chat)
            except ChatError:
                head, chat_network = None, False
            allow = scope_controls(head, settings.workspace, language)
            return (
                gr.update(value=allow.button or "", visible=allow.button is not None),
                gr.update(label=allow.box, visible=allow.box is not None, value=""),
                gr.update(
                    choices=network_options(language),
                    label=t(language, "network_label"),
                    value="chat" if chat_network else "off",
                    visible=sandboxed and head is not None and head.name == "run_shell",
                ),
            )

        def on_approve_chat(
            key: str, chat: str, shown_ids: list[str], typed: str, network_choice: str, request: gr.Request
        ):
            owner = owner_of(key, request)
            try:
                head = shown_head(owner, chat, shown_ids)
                offer = scope_offer(head, settings.workspace) if head is not None else None
                if offer is None:
                    raise ChatError(ChatErrorKind.NOT_WAITING)
                scope = typed_scope(head, typed, settings.workspace) if typed.strip() else offer.scope
            except ChatError as exc:
                warn(exc, request)
                return
            except ValueError as exc:  # typed words that are not the start of a command, or a path outside
                gr.Warning(str(exc))
                return
            decision = {_head(shown_ids): Decision(True, scope=scope)}
            yield from on_decide(key, chat, decision, request, network_choice=network_choice)

        def on_reject(key: str, chat: str, shown_ids: list[str], why: str, request: gr.Request):
            yield from on_decide(key, chat, {_head(shown_ids): Decision(False, why.strip())}, request)

        def context_in_use(owner: str, chat: str) -> int:
            try:
                window = client.show(service.get(owner, chat).conversation.model).context_length
            except (ChatError, ModelError):
                window = None
            return min(window or settings.num_ctx, settings.num_ctx)

        def scope_choices(owner: str, chat: str, language: str) -> list[tuple[str, str]]:
            try:
                scopes, chat_network = service.scopes(owner, chat), service.network(owner, chat)
            except ChatError:
                return []
            choices = [(scope_label(scope, language), json.dumps(asdict(scope))) for scope in scopes]
            return choices + ([(network_label(language), NETWORK_ALLOWED)] if chat_network else [])

        def on_revoke(key: str, chat: str, picked: list[str], request: gr.Request):
            owner = owner_of(key, request)
            try:
                for value in picked:
                    if value == NETWORK_ALLOWED:
                        service.set_network(owner, chat, False)
                        continue
                    scope = Scope.from_stored(json.loads(value))
                    if scope is not None:
                        service.revoke(owner, chat, scope)
                chat_network = service.network(owner, chat)
            except ChatError as exc:
                warn(exc, request)
                chat_network = False
            # The card's control shows the chat's setting too: revoked here, it must not turn it back on.
            choices = gr.update(choices=scope_choices(owner, chat, language_of(request)), value=[])
            return choices, gr.update(value="chat" if chat_network else "off")

        def known_owner(key: str, request: gr.Request) -> str:
            """The owner of a request that changes something lasting or reads what only owners see; ChatError for a
            caller with none."""
            owner = owner_of(key, request)
            service.require_owner(owner)
            return owner

        def on_rules(key: str, request: gr.Request):
            return rulebook.text(owner_of(key, request)) if is_known(key, request) else gr.skip()

        def on_save_rules(key: str, text: str, request: gr.Request):
            language = language_of(request)
            try:
                count = rulebook.save(known_owner(key, request), text)
            except ChatError as exc:
                return chat_error_text(language, exc)
            except RulesError as exc:
                return t(language, "rules_not_saved", detail=exc)
            return t(language, "rules_saved", count=count)

        def on_audit(key: str, chat: str, request: gr.Request):
            try:
                return audit_html(service.audit(owner_of(key, request), chat), language_of(request))
            except ChatError as exc:
                return chat_error_text(language_of(request), exc)

        def on_stop(key: str, chat: str, request: gr.Request) -> None:
            try:
                service.stop(owner_of(key, request), chat)
            except ChatError as exc:
                warn(exc, request)

        def on_retry(key: str, chat: str, request: gr.Request):
            owner = owner_of(key, request)
            try:
                service.retry(owner, chat)
            except ChatError as exc:
                warn(exc, request)
                return
            yield from follow(owner, chat, request)

        def on_new_chat(key: str, chat: str, picked: str, request: gr.Request):
            owner = owner_of(key, request)
            try:
                current = service.get(owner, chat)
            except ChatError:
                current = None
            # An untouched chat is already a fresh start; don't pile up empty ones.
            fresh = current if current and not current.conversation.messages else service.new_chat(owner, picked)
            yield from show_chat(owner, fresh.id, request)

        def chat_list_of(key: str, chat: str, request: gr.Request):
            return chat_list(owner_of(key, request), chat, request)

        def on_rename(key: str, chat: str, name: str, request: gr.Request):
            owner = owner_of(key, request)
            try:
                service.rename(owner, chat, name)
            except ChatError as exc:
                warn(exc, request)
            return chat_list(owner, chat, request)

        def on_delete(key: str, chat: str, request: gr.Request):
            owner = owner_of(key, request)
            try:
                service.delete(owner, chat)
            except ChatError as exc:
                warn(exc, request)
            rows = service.chats(owner)
            yield from show_chat(owner, rows[0].id if rows else service.new_chat(owner).id, request)

        def on_export(key: str, chat: str, request: gr.Request):
            try:
                record = service.export(owner_of(key, request), chat)
            except ChatError as exc:
                warn(exc, request)
                return gr.skip(), gr.skip()
            # Written inside Gradio's (private) cache: served without a copy, deleted with the cache.
            markdown_file, json_file = write_export(
                Path(download_md.GRADIO_CACHE), chat_markdown(record), record.to_json()
            )
            return (
                gr.update(value=str(markdown_file), visible=True),
                gr.update(value=str(json_file), visible=True),
            )

        def on_model(key: str, chat: str, picked: str, request: gr.Request):
            if not picked:
                return gr.skip(), gr.skip()
            language = language_of(request)
            try:
                service.set_model(owner_of(key, request), chat, picked)
                info = client.show(picked)
            except ChatError as exc:
                return chat_error_text(language, exc), gr.update(visible=False)
            except ModelError as exc:
                return error_text(language, exc), gr.update(visible=False)
            facts_text = model_facts(info, num_ctx_cap=settings.num_ctx, language=language)
            return facts_text, gr.update(visible="thinking" in info.capabilities)

        def on_language_facts(key: str, chat: str, picked: str, model_name: str, request: gr.Request):
            """The model facts and chat names, which on_language's stream doesn't carry, in the new language."""
            languages[request.session_hash or ""] = picked
            return *on_model(key, chat, model_name, request), chat_list(owner_of(key, request), chat, request)

        def on_think(key: str, chat: str, enabled: bool, request: gr.Request) -> None:
            try:
                service.set_thinking(owner_of(key, request), chat, enabled)
            except ChatError as exc:
                warn(exc, request)

        def is_known(key: str, request: gr.Request) -> bool:
            """Whether the caller owns chats here: what the page tells only them (models, folder, rules, servers)."""
            try:
                known_owner(key, request)
            except ChatError:
                return False
            return True

        def on_tick(key: str, picked: str, request: gr.Request):
            if not is_known(key, request):
                return gr.skip(), gr.skip()
            language = language_of(request)
            server = server_status(client, suggested=settings.model, language=language)
            wanted = picked or settings.model
            installed = [info.name for info in server.models]
            choices = [(model_label(info), info.name) for info in server.models] or [(wanted, wanted)]
            value = pick_model(wanted, installed)
            banner = server.banner
            if isinstance(sandbox, NoSandbox):  # said on every page, in the status line, in the page's language
                banner += "  \n" + t(language, "sandbox_off" if sandbox.chosen else "sandbox_missing")
            if installed and value != wanted and f"{wanted}:latest" not in installed:
                banner += "  \n" + t(language, "banner_missing", model=wanted)
            elif installed:  # the status line is in the main view, the model picker behind the menu
                banner += f" · `{value}`"
            return banner, gr.update(choices=choices, value=value)

        def on_pull(key: str, name: str, request: gr.Request, progress=gr.Progress()):
            language = language_of(request)
            name = name.strip() or settings.model
            try:
                known_owner(key, request)
            except ChatError as exc:
                yield f"⚠️ {chat_error_text(language, exc)}"
                return
            try:
                for step in client.pull(name):
                    fraction, sentence = describe_pull(step, language)
                    progress(fraction, desc=sentence)
                    yield sentence
            except ModelError as exc:
                yield f"⚠️ {error_text(language, exc)}"
                return
            yield t(language, "pull_ready", model=name)

        opened = [chat_id, chats, title, model, *shown]
        relabeled = [*worded, workspace]
        load = demo.load(
            on_load,
            [owner_key, saved_language],
            [owner_key, language_picker, *relabeled, *opened],
            concurrency_limit=None,
        )
        load.then(on_tick, [owner_key, model], [status, model])
        load.then(on_rules, [owner_key], [rules_text])
        demo.unload(forget_language)
        timer.tick(on_tick, [owner_key, model], [status, model], show_progress="hidden", concurrency_limit=None)
        send = gr.on(
            [msg.submit, send_button.click], on_send, [owner_key, chat_id, msg], [msg, *shown], concurrency_limit=None
        )
        send.then(chat_list_of, [owner_key, chat_id], [chats])
        example = chatbot.example_select(on_example, [owner_key, chat_id], [msg, *shown], concurrency_limit=None)
        example.then(chat_list_of, [owner_key, chat_id], [chats])
        decided = [reason, *shown]
        card_inputs = [owner_key, chat_id, card_calls]
        edit_section.expand(
            on_edit, [*card_inputs, edit_for], [*edit_fields.values(), edit_for], concurrency_limit=None
        )
        answers = [
            send,
            example,
            approve.click(
                on_approve, [*card_inputs, edit_for, *edit_fields.values(), network], decided, concurrency_limit=None
            ),
            approve_all.click(on_approve_all, [*card_inputs, network], decided, concurrency_limit=None),
            approve_chat.click(on_approve_chat, [*card_inputs, scope_prefix, network], decided, concurrency_limit=None),
            reject.click(on_reject, [*card_inputs, reason], decided, concurrency_limit=None),
            retry.click(on_retry, [owner_key, chat_id], shown, concurrency_limit=None),
        ]
        stop.click(on_stop, [owner_key, chat_id], None, queue=False)
        menu.click(None, js=TOGGLE_SIDEBAR)
        for picks_a_chat in (new_chat.click, chats.input):
            picks_a_chat(None, js=CLOSE_ON_PHONE)
        gr.on(
            [card_calls.change, language_picker.input],
            on_card_change,
            [owner_key, chat_id, card_calls, language_picker],  # the picker: on a switch, the new language
            [approve_chat, scope_prefix, network],
            concurrency_limit=None,
        )
        # Showing another chat ends this page's view of the current one (its answer keeps running on the server).
        switch = {"concurrency_limit": None, "cancels": answers}
        switches = [
            language_picker.input(
                on_language,
                [owner_key, chat_id, language_picker, model],
                [saved_language, status, *relabeled, *shown],
                **switch,
            ),
            new_chat.click(on_new_chat, [owner_key, chat_id, model], opened, **switch),
            # The chatbot's own trash button would empty only the page; make it a real fresh start.
            chatbot.clear(on_new_chat, [owner_key, chat_id, model], opened, **switch),
            chats.input(on_open, [owner_key, chats], opened, **switch),
        ]
        language_picker.input(
            on_language_facts,
            [owner_key, chat_id, language_picker, model],
            [facts, think, chats],
            concurrency_limit=None,
        )
        rename.click(on_rename, [owner_key, chat_id, title], [chats], concurrency_limit=None)
        delete.click(lambda: gr.update(visible=True), None, [confirm_row], queue=False)
        cancel_delete.click(lambda: gr.update(visible=False), None, [confirm_row], queue=False)
        hide_confirm = confirm_delete.click(lambda: gr.update(visible=False), None, [confirm_row], queue=False)
        switches.append(hide_confirm.then(on_delete, [owner_key, chat_id], opened, **switch))
        for shows_a_card in (load, *answers, *switches):
            shows_a_card.then(show_card_details, card_inputs, [card, card_details], concurrency_limit=None)
        revoke.click(on_revoke, [owner_key, chat_id, scope_list], [scope_list, network], concurrency_limit=None)
        save_rules.click(on_save_rules, [owner_key, rules_text], [rules_status], concurrency_limit=None)
        show_audit.click(on_audit, [owner_key, chat_id], [audit_log], concurrency_limit=None)
        export.click(on_export, [owner_key, chat_id], [download_md, download_json], concurrency_limit=None)
        model.change(on_model, [owner_key, chat_id, model], [facts, think], concurrency_limit=None)
        think.change(on_think, [owner_key, chat_id, think], None, concurrency_limit=None)
        pull_event = gr.on(
            [pull.click, pull_name.submit], on_pull, [owner_key, pull_name], [pull_status], concurrency_limit=None
        )
        pull_event.then(on_tick, [owner_key, model], [status, model])
        mcp_panel.wire(service, owner_of=owner_of, language_of=language_of, owner_key=owner_key, chat_id=chat_id)
    return demo


def serve(
    settings: Settings,
    *,
    auth: tuple[str, str] | None = None,
    client: OllamaClient | None = None,
    tools: ToolRegistry | None = None,
) -> tuple[gr.Blocks, str, str | None]:
    """Build and start the app without blocking; returns it with its local and public URLs."""
    # Gradio's cache (exports, uploads) in a folder only we can read, gone when we exit.
    os.environ["GRADIO_TEMP_DIR"] = str(private_temp_folder())
    demo = build_app(settings, client=client, tools=tools)
    # Answers stream for minutes and mostly wait on the model: no session may queue behind another.
    demo.queue(default_concurrency_limit=None)
    addresses = addresses_for(settings.host, settings.port, share=settings.share, public_names=settings.public_names)
    middleware = [Middleware(Guard, addresses=addresses)]
    if auth:  # a browser that logged in is remembered, so a stranger's wrong guesses cannot lock it out
        browsers = RememberedBrowsers(login_key(settings.data_dir), auth[0])
        middleware.append(Middleware(RememberLogins, browsers=browsers))
    # Gradio prints its own share-link advice (a download URL, antivirus, a cache path); app.py says it in a sentence.
    with contextlib.redirect_stdout(io.StringIO()):
        _, local_url, share_url = demo.launch(
            server_name=settings.host,
            server_port=settings.port,
            share=settings.share,
            auth=LoginThrottle(*auth) if auth else None,
            auth_message=LOGIN_MESSAGE,
            prevent_thread_lock=True,
            show_error=False,
            quiet=True,
            css=CHAT_CSS + CSS,
            js=ON_LOAD,
            max_threads=200,
            max_file_size=MAX_UPLOAD_BYTES,
            footer_links=[],  # no API page, no Gradio settings or run history: this is a product, not a demo
            run_history=False,  # it kept every input, the owner key included, in the browser's storage
            app_kwargs={"middleware": middleware},
        )
    return demo, local_url, share_url


def _head(call_ids: list[str]) -> str:
    return call_ids[0] if call_ids else ""


def _cleared_first(updates: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Frames that empty the text box in front of them once: Gradio re-sends an event's last frame when the
    event ends, and an empty box there would wipe what the person typed while the answer ran."""
    cleared: Any = ""
    for update in updates:
        yield cleared, *update
        cleared = gr.skip()


def _unchanged(count: int) -> tuple[Any, ...]:
    return tuple(gr.skip() for _ in range(count))
