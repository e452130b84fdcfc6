"""Undo, at the foot of "Your files": a change of the agent's, or everything since one of the person's messages.

Undo works on a change picked here, on the button of a write's panel in the chat (`UNDO_CLICKS` sends its call
id), or on everything since a message. Each list offers the newest until the person picks another, and a refresh of
the lists (with the files panel's, after an answer or on Refresh) keeps a pick the person made while it can still
be undone: what a box shows is what its button undoes. A file changed since asks first, with its diff, in a box
under the chat (`question_box`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.context import APP_NOTE
from meowgent.files.checkpoints import UndoReport
from meowgent.files.errors import FileRefused
from meowgent.ui.html import fileview
from meowgent.ui.panels.shared import Page
from meowgent.ui.state.follow import Follower

UNDO_CLICKS = """
() => {
  // A write's panel in the chat carries "↩ Undo this change" with its call's id; a click sends that id.
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("#chat button.undo[value]");
    if (!button) return;
    event.preventDefault();
    event.stopPropagation();
    window.meowgentUndoCall = button.value;
    document.querySelector("#undo_call_go")?.click();
  }, true);
}
"""
SEND_UNDO_CALL = "(key, chat, call, folder) => [key, chat, window.meowgentUndoCall || '', folder]"


class Listing(Protocol):
    """What an undo refreshes of the files panel: its tree (the files an undo restored or removed) and its note."""

    folder: Any
    note: Any

    @property
    def shown(self) -> list[Any]: ...

    def listed(self, owner: str, chat: str, folder: str, query: str | None, language: str) -> dict[Any, Any]: ...


class UndoPanel:
    """The two lists and their buttons (made where this is made), and the undo question (made by `question_box`)."""

    def __init__(self, page: Page, listing: Listing) -> None:
        self.page = page
        self.listing = listing
        localized = page.localized
        self.changes = localized(gr.Dropdown, {"label": "files_changes"}, choices=[], elem_id="file_changes")
        self.undo_change = localized(
            gr.Button, {"value": "files_undo"}, size="sm", elem_classes=["undo"], elem_id="undo_change"
        )
        self.since = localized(gr.Dropdown, {"label": "files_since"}, choices=[], elem_id="undo_since_pick")
        self.undo_since = localized(
            gr.Button, {"value": "files_undo_since"}, size="sm", elem_classes=["undo"], elem_id="undo_since"
        )
        self.waiting = gr.State({})
        # What the lists last picked by themselves ({"chat", "change", "since"}): a value shown that is not one of
        # these is the person's pick. Written only by the events that fill the lists, so no pick can race it.
        self.defaults = gr.State({})

    @property
    def lists(self) -> list[Any]:
        """What a refresh of the lists fills."""
        return [self.changes, self.since, self.defaults]

    def question_box(self) -> None:
        """The question before an undo that would lose later changes, made where the person will see it, and the
        hidden button the chat's Undo buttons click (outside the files panel, which may be closed)."""
        localized = self.page.localized
        self.undo_call_go = gr.Button(visible="hidden", elem_id="undo_call_go")
        self.undo_call = gr.Textbox(visible="hidden", elem_id="undo_call")
        with gr.Column(visible=False, elem_id="undo_question") as self.question:
            self.question_text = gr.HTML(elem_id="undo_diff")
            with gr.Row():
                self.undo_anyway = localized(
                    gr.Button, {"value": "files_undo_anyway"}, size="sm", variant="stop", elem_id="undo_anyway"
                )
                self.undo_keep = localized(gr.Button, {"value": "files_undo_keep"}, size="sm", elem_id="undo_keep")

    def offered(
        self,
        owner: str,
        chat: str,
        language: str,
        *,
        shown: tuple[Any, Any] = (None, None),
        defaults: dict | None = None,
    ) -> dict[Any, Any]:
        """Both lists for this chat, each keeping the person's pick while it can still be undone, else the newest.

        `shown`: the values the page shows now (as sent, so anything); `defaults`: what the lists picked last time.
        """
        try:
            changes = self.page.service.files.changes(owner, chat)
            messages = list(self.page.service.get(owner, chat).conversation.messages)
        except ChatError:
            changes, messages = [], []
        since = fileview.message_rows(messages, changes, app_note=APP_NOTE)
        newest = {"change": fileview.newest_change(changes), "since": fileview.newest_round(since, changes)}
        ours = defaults if defaults and defaults.get("chat") == chat else None
        mine = {kind: value for kind, value in zip(newest, shown, strict=True) if ours and value != ours.get(kind)}
        return {
            self.changes: gr.update(
                choices=fileview.change_rows(changes, language),
                value=fileview.kept(mine.get("change"), fileview.open_calls(changes), newest["change"]),
            ),
            self.since: gr.update(
                choices=since, value=fileview.kept(mine.get("since"), [index for _, index in since], newest["since"])
            ),
            self.defaults: {"chat": chat, **newest},
        }

    # ---- bindings ----

    def wire(self, demo: gr.Blocks, *, follower: Follower) -> None:
        """Bind the buttons (the files panel's refreshes fill the lists, with `offered`); after each, the chat is
        drawn again by `follower`, so the rows of the calls undone say so."""
        demo.load(None, js=UNDO_CLICKS)
        self.follower = follower
        action, chat_state = self.page.context.chat_action, [self.page.owner_key, self.page.chat_id]
        undo_in = [*chat_state, self.listing.folder]
        undo_out = [*self.listing.shown, *self.lists, self.waiting, self.question, self.question_text]
        undos = [
            self.undo_change.click(
                action(self.on_undo_change), [*undo_in, self.changes], undo_out, concurrency_limit=None
            ),
            self.undo_since.click(action(self.on_undo_since), [*undo_in, self.since], undo_out, concurrency_limit=None),
            self.undo_call_go.click(
                action(self.on_undo_call),
                [*chat_state, self.undo_call, self.listing.folder],
                undo_out,
                js=SEND_UNDO_CALL,
                concurrency_limit=None,
            ),
            self.undo_anyway.click(
                action(self.on_undo_anyway), [*undo_in, self.waiting], undo_out, concurrency_limit=None
            ),
        ]
        for undo in undos:
            undo.then(
                action(self.redraw_chat), chat_state, follower.shown, concurrency_limit=None, show_progress="hidden"
            )
        self.undo_keep.click(
            lambda: {self.waiting: {}, self.question: gr.update(visible=False)}, None, [self.waiting, self.question]
        )

    def _language_of(self, request: gr.Request) -> str:
        return self.page.context.language_of(request)

    # ---- undo ----

    def redraw_chat(self, key: str, chat: str, request: gr.Request) -> Iterator[dict[Any, Any]]:
        """The chat drawn again after an undo; while an answer runs, its own frames do it (a second stream of frames
        into the same page would only double the browser's work)."""
        owner = self.page.context.owner_of(key, request)
        try:
            running = self.page.service.is_running(owner, chat)
        except ChatError:  # not this caller's chat: the undo itself said so, once is enough
            return
        if not running:
            yield from self.follower.follow(owner, chat, request)

    def _undone(self, owner: str, chat: str, folder: str, report: UndoReport, asked: dict, request: gr.Request):
        language = self._language_of(request)
        if report.changed:
            return {
                self.waiting: asked,
                self.question: gr.update(visible=True),
                self.question_text: str(fileview.changed_since_html(report, language)),
            }
        said = " ".join(fileview.undo_said(report, language))
        gr.Info(said)
        # Done: the lists go back to the newest not undone (a pick made before means nothing now).
        closed = {self.waiting: {}, self.question: gr.update(visible=False), self.question_text: ""}
        listed = self.listing.listed(owner, chat, folder, "", language) | self.offered(owner, chat, language)
        return closed | listed | {self.listing.note: said}

    def _undo(self, key: str, chat: str, folder: str, asked: dict, request: gr.Request, *, force: bool):
        owner = self.page.context.known_owner(key, request)
        account, files = request.username or "", self.page.service.files
        try:
            if "since" in asked:
                report = files.undo_since(owner, chat, int(asked["since"]), force=force, account=account)
            elif asked.get("call"):
                report = files.undo(owner, chat, str(asked["call"]), force=force, account=account)
            else:
                return gr.skip()
        except FileRefused as refused:
            gr.Warning(fileview.refusal_text(refused, self._language_of(request)))
            return gr.skip()
        return self._undone(owner, chat, folder, report, asked, request)

    def _nothing_picked(self, key: str, chat: str, picker: str, request: gr.Request):
        """An Undo pressed with nothing picked in its list answers in words, never by doing nothing."""
        owner = self.page.context.known_owner(key, request)
        try:
            changes = self.page.service.files.changes(owner, chat)
        except ChatError:
            changes = []
        said = fileview.nothing_picked(picker, changes, self._language_of(request))
        gr.Info(said)
        return {self.listing.note: said}

    def on_undo_change(self, key: str, chat: str, folder: str, call: str | None, request: gr.Request):
        if not call:
            return self._nothing_picked(key, chat, "change", request)
        return self._undo(key, chat, folder, {"call": call}, request, force=False)

    def on_undo_since(self, key: str, chat: str, folder: str, message: int | None, request: gr.Request):
        if message is None:
            return self._nothing_picked(key, chat, "message", request)
        return self._undo(key, chat, folder, {"since": message}, request, force=False)

    def on_undo_call(self, key: str, chat: str, call: str, folder: str, request: gr.Request):
        """A call's Undo button in the chat (its id comes from the page's script)."""
        return self._undo(key, chat, folder, {"call": call}, request, force=False)

    def on_undo_anyway(self, key: str, chat: str, folder: str, asked: dict, request: gr.Request):
        return self._undo(key, chat, folder, asked, request, force=True)
