"""The approval card: what the waiting calls will do, their text, the edit section, the scope box, the network
control, and approve / approve all / allow for this chat / reject.

A click names the calls the card showed (`calls`, head first), so a stale click applies to nothing; and each
handler checks the owner again, since every event is an API endpoint.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError, ChatErrorKind
from meowgent.conversation import Decision
from meowgent.events import ToolCall
from meowgent.policy.hosts import parse_hosts
from meowgent.policy.scopes import scope_offer, typed_scope
from meowgent.ui.html.scopes import NETWORK_CHOICES, network_options, scope_controls
from meowgent.ui.i18n import ENGLISH, t
from meowgent.ui.panels.shared import Page
from meowgent.ui.state.approval import describe_queue
from meowgent.ui.state.editform import SLOTS, FormError, edited_arguments, field_values, form_for
from meowgent.ui.state.follow import Follower
from meowgent.ui.state.frame import cleared_first, field_update


class CardPanel:
    """The card, hidden until a call waits; laid out between the chat and the message box."""

    def __init__(self, page: Page) -> None:
        self.page = page
        localized = page.localized
        # The ids of the calls the card shows, head first.
        self.calls = gr.State([])
        # The call whose fields the edit section holds ("" until the person opens it for the card's head call).
        self.edit_for = gr.State("")
        with gr.Column(visible=False, elem_id="approval") as self.column:
            with gr.Column(elem_id="card_body"):
                self.text = gr.Markdown(elem_id="card_text")
                # A plain text box, not Markdown: it shows a 1 MB file whole without freezing the page,
                # and scrolls inside, so the buttons below stay in view. The only copy of the content.
                self.details = localized(
                    gr.Textbox,
                    {"label": "card_details_label"},
                    show_label=False,
                    interactive=False,
                    lines=1,
                    max_lines=12,
                    elem_id="card_details",
                    buttons=["copy"],
                )
                # Filled only when opened: until then the page carries a long content once, in card_details.
                with localized(gr.Accordion, {"label": "edit_before"}, open=False, elem_id="edit") as edit_section:
                    self.edit_section = edit_section
                    self.edit_path = gr.Textbox("", lines=1, visible=False, elem_id="edit_path")
                    self.edit_old = gr.Textbox("", lines=3, max_lines=12, visible=False, elem_id="edit_old")
                    self.edit_main = gr.Textbox("", lines=3, max_lines=12, visible=False, elem_id="edit_args")
                self.scope_prefix = gr.Textbox(lines=1, visible=False, elem_id="scope_prefix")  # where typing applies
                # For a command in the sandbox: none, for this command, for the chat (on_card_change sets it).
                self.network = gr.Radio(
                    network_options(ENGLISH),
                    value="off",
                    label=t(ENGLISH, "network_label"),
                    visible=False,
                    elem_id="network",
                )
                # The hosts that network reaches: the chat's, or those the rules and its scopes already allow.
                self.network_hosts = gr.Textbox(
                    "",  # a value, so an API caller may leave it out, as the network control's "off"
                    label=t(ENGLISH, "network_hosts_label"),
                    info=t(ENGLISH, "network_hosts_info"),
                    lines=1,
                    visible=False,
                    elem_id="network_hosts",
                )
                self.reason = localized(gr.Textbox, {"label": "reason"}, lines=1, elem_id="reason")
            with gr.Row(elem_id="card_actions"):
                self.approve = localized(gr.Button, {"value": "approve"}, variant="primary", elem_id="approve")
                self.approve_all = localized(
                    gr.Button, {"value": "approve_all"}, variant="primary", visible=False, elem_id="approve_all"
                )
                # Worded for the waiting call (meowgent.ui.html.scopes), so it says what it allows.
                self.approve_chat = gr.Button(t(ENGLISH, "approve_chat"), elem_id="approve_chat")
                self.reject = localized(gr.Button, {"value": "reject"}, variant="stop", elem_id="reject")

    @property
    def edit_fields(self) -> list[Any]:
        return [self.edit_path, self.edit_old, self.edit_main]

    def shown_head(self, owner: str, chat: str, shown_ids: list[str]) -> ToolCall | None:
        """The call the card shows first, if it still waits (ChatError if the chat is not the owner's)."""
        return next((call for call in self.page.service.waiting(owner, chat) if call.id == _head(shown_ids)), None)

    def head_call(self, owner: str, chat: str, shown_ids: list[str]) -> ToolCall:
        """The call the card shows first; ChatError if it no longer waits."""
        head = self.shown_head(owner, chat, shown_ids)
        if head is None:
            raise ChatError(ChatErrorKind.NOT_WAITING)
        return head

    def has_network_control(self, head: ToolCall | None) -> bool:
        """A command that runs in the sandbox: the card lets the person give it the network."""
        return self.page.sandboxed and head is not None and self.page.tools.traits(head.name).command is not None

    def network_of(
        self, owner: str, chat: str, shown_ids: list[str], choice: str, typed: str
    ) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
        """(the hosts this command may reach, the chat's hosts as the card leaves them) from the card's controls;
        nothing for a call that is not a command in the sandbox, whose card has none. ValueError: the hosts
        typed are not hosts (its message the word), or there are none for a network that is on ("")."""
        if not self.has_network_control(self.shown_head(owner, chat, shown_ids)) or choice not in NETWORK_CHOICES:
            return (), None
        if choice == "off":
            return (), ()
        hosts = parse_hosts(typed)
        if not hosts:
            raise ValueError("")
        return (hosts, ()) if choice == "command" else ((), hosts)

    def wire(self, follower: Follower, *, language_picker: Any) -> None:
        """Bind the card's buttons (their frames follow the chat into `follower`'s components) and its wording."""
        self.follower = follower
        page, context = self.page, self.page.context
        card_inputs = [page.owner_key, page.chat_id, self.calls]
        decided = [self.reason, *follower.shown]
        self.edit_section.expand(
            context.chat_action(self.on_edit),
            [*card_inputs, self.edit_for],
            [*self.edit_fields, self.edit_for],
            concurrency_limit=None,
        )
        network = [self.network, self.network_hosts]
        approve_inputs = [*card_inputs, self.edit_for, *self.edit_fields, *network]
        page.answers += [
            self.approve.click(context.chat_action(self.on_approve), approve_inputs, decided, concurrency_limit=None),
            self.approve_all.click(
                context.chat_action(self.on_approve_all), [*card_inputs, *network], decided, concurrency_limit=None
            ),
            self.approve_chat.click(
                context.chat_action(self.on_approve_chat),
                [*card_inputs, self.scope_prefix, *network],
                decided,
                concurrency_limit=None,
            ),
            self.reject.click(self.on_reject, [*card_inputs, self.reason], decided, concurrency_limit=None),
        ]
        gr.on(
            [self.calls.change, language_picker.input],
            self.on_card_change,
            [*card_inputs, language_picker],  # the picker: on a switch, the new language
            [self.approve_chat, self.scope_prefix, *network],
            concurrency_limit=None,
        )

    def on_edit(self, key: str, chat_id: str, shown_ids: list[str], loaded_for: str, request: gr.Request):
        """Opening "Change it before approving" fills its fields with the head call's arguments."""
        if loaded_for and loaded_for == _head(shown_ids):  # opened again: keep what the person changed
            return gr.skip()
        context, tools = self.page.context, self.page.tools
        head = self.head_call(context.owner_of(key, request), chat_id, shown_ids)
        form, values, language = (
            form_for(head, tools=tools),
            field_values(head, tools=tools),
            context.language_of(request),
        )
        fields = zip(self.edit_fields, SLOTS, strict=True)
        filled = {field: field_update(form.slot(slot), language, value=values[slot]) for field, slot in fields}
        return filled | {self.edit_for: head.id}

    def decide(
        self,
        key: str,
        chat_id: str,
        decisions: dict[str, Decision],
        request: gr.Request,
        *,
        network: tuple[str, str] = ("", ""),
    ):
        """Hand the decisions to the service, then follow the chat; hosts that are not hosts keep the card."""
        context = self.page.context
        owner = context.owner_of(key, request)
        try:
            for_command, for_chat = self.network_of(owner, chat_id, list(decisions), *network)
            decisions = {call_id: replace(d, network=for_command) for call_id, d in decisions.items()}
            self.page.service.decide(owner, chat_id, decisions, account=request.username or "", chat_network=for_chat)
        except ValueError as exc:  # the hosts typed: said on the page, and the card stays to fix them
            language = context.language_of(request)
            word = str(exc)
            gr.Warning(
                t(language, "network_hosts_invalid", word=word) if word else t(language, "network_hosts_missing")
            )
            return
        except ChatError as exc:
            context.warn(exc, request)
        yield from cleared_first(self.follower.follow(owner, chat_id, request), box=self.reason)

    def on_approve(
        self,
        key: str,
        chat_id: str,
        shown_ids: list[str],
        loaded_for: str,
        path: str,
        old: str,
        main: str,
        network_choice: str,
        hosts: str,
        request: gr.Request,
    ):
        arguments = None
        if loaded_for and loaded_for == _head(shown_ids):  # the person opened the fields of this call
            values = {"path": path, "old": old, "main": main}
            try:
                head = self.head_call(self.page.context.owner_of(key, request), chat_id, shown_ids)
                arguments = edited_arguments(head, values, tools=self.page.tools)
            except FormError as exc:
                gr.Warning(t(self.page.context.language_of(request), "invalid_edit_json", detail=exc.detail))
                return
        decision = {_head(shown_ids): Decision(True, arguments=arguments)}
        yield from self.decide(key, chat_id, decision, request, network=(network_choice, hosts))

    def on_approve_all(
        self, key: str, chat_id: str, shown_ids: list[str], network_choice: str, hosts: str, request: gr.Request
    ):
        page, context = self.page, self.page.context
        waiting = page.service.waiting(context.owner_of(key, request), chat_id)
        # The button is hidden then, but every event is an endpoint: a call the card cut short is never
        # approved with the others.
        language = context.language_of(request)
        if set(shown_ids) & set(describe_queue(waiting, page.workspace, language, tools=page.tools).cut_short):
            gr.Warning(t(language, "approve_all_cut"))
            return
        decisions = {call_id: Decision(True) for call_id in shown_ids}
        yield from self.decide(key, chat_id, decisions, request, network=(network_choice, hosts))

    def on_card_change(self, key: str, chat_id: str, shown_ids: list[str], language: str, request: gr.Request):
        """Word "Allow for this chat" for the call that now waits, and show the box only where typing applies."""
        page = self.page
        owner = page.context.owner_of(key, request)
        try:
            head = self.shown_head(owner, chat_id, shown_ids)
            chat_network = page.service.network(owner, chat_id)
            hosts = chat_network or page.service.known_hosts(owner, chat_id)
        except ChatError:
            head, chat_network, hosts = None, (), ()
        allow = scope_controls(head, page.workspace, language, tools=page.tools)
        return {
            self.approve_chat: gr.update(value=allow.button or "", visible=allow.button is not None),
            self.scope_prefix: gr.update(label=allow.box, visible=allow.box is not None, value=""),
            self.network: gr.update(
                choices=network_options(language),
                label=t(language, "network_label"),
                value="chat" if chat_network else "off",
                visible=self.has_network_control(head),
            ),
            self.network_hosts: gr.update(
                label=t(language, "network_hosts_label"),
                info=t(language, "network_hosts_info"),
                value=", ".join(hosts),
                visible=self.has_network_control(head),
            ),
        }

    def on_approve_chat(
        self,
        key: str,
        chat_id: str,
        shown_ids: list[str],
        typed: str,
        network_choice: str,
        hosts: str,
        request: gr.Request,
    ):
        page = self.page
        head = self.head_call(page.context.owner_of(key, request), chat_id, shown_ids)
        offer = scope_offer(head, page.workspace, tools=page.tools)
        if offer is None:
            raise ChatError(ChatErrorKind.NOT_WAITING)
        try:
            scope = typed_scope(head, typed, page.workspace, tools=page.tools) if typed.strip() else offer.scope
        except ValueError as exc:  # typed words that are not the start of a command, or a path outside
            gr.Warning(str(exc))
            return
        decision = {_head(shown_ids): Decision(True, scope=scope)}
        yield from self.decide(key, chat_id, decision, request, network=(network_choice, hosts))

    def on_reject(self, key: str, chat_id: str, shown_ids: list[str], why: str, request: gr.Request):
        yield from self.decide(key, chat_id, {_head(shown_ids): Decision(False, why.strip())}, request)

    def show_after(self, events: list[Any]) -> None:
        """After each of `events`, show the card the frames prepared, with the head call's whole content."""
        page, context = self.page, self.page.context

        def show_card_details(key: str, chat_id: str, shown_ids: list[str], request: gr.Request):
            """Not a frame output: Gradio sends a generator's last frame twice (as a diff, then whole),
            and a 1 MB file should cross the wire once."""
            try:
                waiting = page.service.waiting(context.owner_of(key, request), chat_id)
            except ChatError:
                return gr.skip()
            if not waiting or waiting[0].id != _head(shown_ids):
                return gr.skip()
            language = context.language_of(request)
            details = describe_queue(waiting, page.workspace, language, tools=page.tools).details
            return {self.column: gr.update(visible=True), self.details: details}

        for event in events:
            event.then(
                show_card_details,
                [page.owner_key, page.chat_id, self.calls],
                [self.column, self.details],
                concurrency_limit=None,
            ).then(None, [self.details], None, js=HIDE_EMPTY_DETAILS)


HIDE_EMPTY_DETAILS = """(details) => {
  const box = document.getElementById('card_details');
  if (box) box.style.display = details ? '' : 'none';
}"""
"""An MCP call's fields show on the card, and its box only when one is too long to show whole there. Done in the
page, so that `/show_card_details` still answers the text alone to a script."""


def _head(call_ids: list[str]) -> str:
    return call_ids[0] if call_ids else ""
