"""The sidebar's "Your files" (`#files`): the workspace as a tree, previews, downloads, uploads, and at its foot
Undo (`ui/panels/undo.py`).

The tree lists one folder at a time (newest changes first, this chat's files marked "+12 −3"), so a workspace of
50,000 files opens as fast as one of ten; a search box finds a name anywhere. Every event checks its caller the
way every event of the page does (it is also an API endpoint), and reads and writes only through the workspace
guard (`meowgent.files`). Downloads are one-time links served by `ui/routes/fileroutes.py`; uploads come through
Gradio's /upload, which that module gates.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.files import download, tree
from meowgent.files.access import preview_file, read_chunks
from meowgent.files.errors import FileRefused
from meowgent.files.preview import TextPage
from meowgent.files.sizes import human_size
from meowgent.files.upload import check_count
from meowgent.tools.workspace import Workspace
from meowgent.ui.html import fileview
from meowgent.ui.html.filepreview import preview_html
from meowgent.ui.i18n import t
from meowgent.ui.panels.shared import Page
from meowgent.ui.panels.undo import UndoPanel
from meowgent.ui.routes.fileroutes import TICKET_COOKIE, Links
from meowgent.ui.state.follow import Follower

DOWNLOAD = """(url) => {
  if (!url) return;
  const link = document.createElement("a");
  link.href = url;
  link.download = "";
  document.body.appendChild(link);
  link.click();
  link.remove();
}"""
SET_TICKET = f"""(ticket) => {{
  if (ticket) document.cookie = "{TICKET_COOKIE}=" + ticket + "; path=/; SameSite=Strict";
}}"""


def named_uploads(payload: Any) -> list[tuple[str, str]]:
    """The upload event's files as (name as the browser gave it, path of Gradio's copy in its cache).

    The event runs unprocessed (`preprocess=False`): Gradio's own processing drops any folder part of a name,
    and the name is ours to clean, or to refuse with a sentence. Gradio has checked each path is its upload.
    """
    files = payload if isinstance(payload, list) else [payload] if payload else []
    return [
        (str(item.get("orig_name") or Path(item["path"]).name), str(item["path"]))
        for item in files
        if isinstance(item, dict) and isinstance(item.get("path"), str)
    ]


class FilesPanel:
    """The accordion (made in the sidebar), with Undo at its foot (`self.undo`)."""

    def __init__(self, page: Page, *, links: Links) -> None:
        self.page = page
        self.links = links
        self.workspace = Workspace(page.workspace)
        self.folder = gr.State("")
        localized = page.localized
        with localized(gr.Accordion, {"label": "files_title"}, open=False, elem_id="files"):
            self.search = localized(
                gr.Textbox,
                {"placeholder": "files_search", "label": "files_search"},
                show_label=False,
                elem_id="file_search",
                max_lines=1,
            )
            with gr.Row():
                self.up = localized(gr.Button, {"value": "files_up"}, size="sm", elem_id="file_up")
                self.refresh = localized(gr.Button, {"value": "files_refresh"}, size="sm", elem_id="files_refresh")
            self.where = gr.Markdown(elem_id="file_where")
            self.listing = localized(gr.Radio, {"label": "files_list"}, choices=[], elem_id="file_list")
            self.note = gr.Markdown(elem_id="files_note")
            self.preview = gr.HTML(elem_id="file_preview")
            with gr.Row():
                self.previous = localized(
                    gr.Button, {"value": "files_prev"}, size="sm", visible=False, elem_id="file_prev"
                )
                self.next = localized(gr.Button, {"value": "files_next"}, size="sm", visible=False, elem_id="file_next")
            self.download = localized(
                gr.Button, {"value": "files_download"}, size="sm", visible=False, elem_id="file_download"
            )
            self.download_all = localized(gr.Button, {"value": "files_download_all"}, size="sm", elem_id="download_all")
            self.skip_ignored = localized(
                gr.Checkbox, {"label": "files_skip_ignored"}, value=False, elem_id="skip_ignored"
            )
            self.upload = localized(
                gr.File, {"label": "files_upload"}, file_count="multiple", height=120, elem_id="upload"
            )
            with gr.Row(visible=False, elem_id="replace_row") as self.replace_row:
                self.replace_question = gr.Markdown(elem_id="replace_question")
                self.replace = localized(gr.Button, {"value": "files_replace"}, size="sm", elem_id="replace_yes")
                self.keep = localized(gr.Button, {"value": "files_keep"}, size="sm", elem_id="replace_no")
            self.undo = UndoPanel(page, self)
        # Hidden helpers: links and tickets pass through these boxes.
        self.link = gr.Textbox(visible="hidden", elem_id="download_link")
        self.ticket = gr.Textbox(visible="hidden", elem_id="upload_ticket")
        self.opened = gr.State("")
        self.page_number = gr.State(1)
        self.waiting_uploads = gr.State([])

    # ---- what the panel shows ----

    def listed(self, owner: str, chat: str, folder: str, query: str | None, language: str) -> dict[Any, Any]:
        """The tree (or the search's finds) with this chat's marks, and where it is."""
        try:
            marks = self.page.service.files.marks(owner, chat)
        except ChatError:
            marks = {}
        note = ""
        try:
            if query and query.strip():
                found = tree.search(self.workspace, query)
                rows = fileview.found_rows(found.entries, marks, language)
                note = fileview.search_note(
                    query, count=len(found.entries), more=found.more, skipped=found.skipped, language=language
                )
            else:
                entries = tree.list_folder(self.workspace, folder)
                rows = fileview.tree_rows(entries, marks, language)
                note = fileview.listing_note(len(rows), len(entries), language)
        except FileRefused as refused:
            rows, note = [], fileview.refusal_text(refused, language)
        return {
            self.listing: gr.update(choices=rows, value=None),
            self.where: fileview.folder_line(folder, language),
            self.note: note,
            self.up: gr.update(interactive=bool(folder)),
        }

    def previewed(self, path: str, number: int, language: str) -> dict[Any, Any]:
        try:
            shown = preview_file(self.workspace, path, page=number)
        except FileRefused as refused:
            return {self.preview: "", self.note: fileview.refusal_text(refused, language)} | self._paging(None)
        return {self.preview: str(preview_html(shown, language=language)), self.note: ""} | self._paging(shown)

    def _paging(self, shown: Any) -> dict[Any, Any]:
        paged = isinstance(shown, TextPage) and shown.pages > 1
        return {
            self.previous: gr.update(visible=paged, interactive=paged and shown.page > 1),
            self.next: gr.update(visible=paged, interactive=paged and shown.page < shown.pages),
            self.download: gr.update(visible=shown is not None),
        }

    def wire(self, demo: gr.Blocks, *, after: list[Any], follower: Follower) -> None:
        """Bind the panel; `after`: the events after which the tree may have changed (opening a chat, an answer);
        `follower` draws the chat again after an undo."""
        self._wire_browsing(after)
        self._wire_downloads()
        self._wire_uploads()
        self.undo.wire(demo, follower=follower)

    # ---- bindings ----

    @property
    def shown(self) -> list[Any]:
        """What a listing fills."""
        return [self.listing, self.where, self.note, self.up]

    @property
    def _chat_state(self) -> list[Any]:
        return [self.page.owner_key, self.page.chat_id]

    def _wire_browsing(self, after: list[Any]) -> None:
        page, action = self.page, self.page.context.chat_action
        on_list, panel = action(self.on_list), self.shown
        # The undo lists' values as the page shows them: unprocessed, so a value the lists no longer offer (the
        # page had not drawn their last refresh yet) is the handler's to drop, not Gradio's error.
        undo = self.undo
        listed_by = [*self._chat_state, self.folder, self.search, undo.changes, undo.since, undo.defaults]
        relisted = [*panel, *undo.lists]
        for event in after:
            event.then(on_list, listed_by, relisted, concurrency_limit=None, show_progress="hidden", preprocess=False)
        for trigger in (page.chat_id.change, self.refresh.click, self.search.submit):
            trigger(on_list, listed_by, relisted, concurrency_limit=None, preprocess=False)
        shown = [self.preview, self.note, self.previous, self.next, self.download]
        shown_by = [self.folder, self.search, *panel, *shown, self.opened, self.page_number]
        picked = [*self._chat_state, self.folder, self.listing]
        self.listing.input(action(self.on_pick), picked, shown_by, concurrency_limit=None)
        self.up.click(
            action(self.on_up), [*self._chat_state, self.folder], [self.folder, *panel], concurrency_limit=None
        )
        paging, turned_by = [self.page_number, *shown], [page.owner_key, self.opened, self.page_number]
        self.previous.click(self._turner(-1), turned_by, paging, concurrency_limit=None)
        self.next.click(self._turner(+1), turned_by, paging, concurrency_limit=None)

    def _wire_downloads(self) -> None:
        action, key = self.page.context.chat_action, self.page.owner_key
        self.download.click(action(self.on_download), [key, self.opened], [self.link], concurrency_limit=None).then(
            None, [self.link], None, js=DOWNLOAD
        )
        self.download_all.click(
            action(self.on_download_all), [key, self.skip_ignored], [self.link], concurrency_limit=None
        ).then(None, [self.link], None, js=DOWNLOAD)

    def _wire_uploads(self) -> None:
        action, page = self.page.context.chat_action, self.page
        gr.on(
            [page.owner_key.change, page.chat_id.change], self.on_ticket, [page.owner_key], [self.ticket],
            concurrency_limit=None,
        ).then(None, [self.ticket], None, js=SET_TICKET)  # fmt: skip
        uploads = [self.waiting_uploads, self.replace_row, self.replace_question, self.upload, *self.shown]
        self.upload.upload(
            action(self.on_upload),
            [*self._chat_state, self.folder, self.upload],
            uploads,
            preprocess=False,
            concurrency_limit=None,
        )
        replaced = [self.waiting_uploads, self.replace_row, *self.shown]
        self.replace.click(action(self.on_replace), [*self._chat_state, self.folder, self.waiting_uploads], replaced)
        self.keep.click(self.on_keep, [self.waiting_uploads], [self.waiting_uploads, self.replace_row])

    # ---- browsing ----

    def _language_of(self, request: gr.Request) -> str:
        return self.page.context.language_of(request)

    def on_list(
        self, key: str, chat: str, folder: str, query: Any, change: Any, since: Any, defaults: dict, request: gr.Request
    ):
        """The tree and the undo lists, which keep the person's picks (`change`, `since`: as the page shows them)."""
        owner = self.page.context.known_owner(key, request)
        language = self._language_of(request)
        listed = self.listed(owner, chat, folder, query if isinstance(query, str) else "", language)
        return listed | self.undo.offered(owner, chat, language, shown=(change, since), defaults=defaults)

    def on_pick(self, key: str, chat: str, folder: str, picked: str | None, request: gr.Request):
        owner = self.page.context.known_owner(key, request)
        kind, _, path = (picked or "").partition(":")
        language = self._language_of(request)
        if kind == "folder":
            return {self.folder: path, self.search: ""} | self.listed(owner, chat, path, "", language)
        if kind != "file":
            return gr.skip()
        return {self.opened: path, self.page_number: 1} | self.previewed(path, 1, language)

    def on_up(self, key: str, chat: str, folder: str, request: gr.Request):
        owner = self.page.context.known_owner(key, request)
        parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
        return {self.folder: parent} | self.listed(owner, chat, parent, "", self._language_of(request))

    def _turner(self, step: int):
        """The handler of a preview's page turn by `step` pages (both are named `on_turn`, as the API knows them)."""

        @self.page.context.chat_action
        def on_turn(key: str, path: str, number: int, request: gr.Request):
            self.page.context.known_owner(key, request)
            number = max(1, number + step)
            return {self.page_number: number} | self.previewed(path, number, self._language_of(request))

        return on_turn

    # ---- downloads ----

    def on_download(self, key: str, path: str, request: gr.Request):
        self.page.context.known_owner(key, request)
        if not path:
            return gr.skip()
        name = path.rsplit("/", 1)[-1]
        return self.links.add(name, lambda: read_chunks(self.workspace, path), media_type="application/octet-stream")

    def on_download_all(self, key: str, skip_ignored: bool, request: gr.Request):
        self.page.context.known_owner(key, request)
        cap = self.page.settings.zip_max_bytes
        try:
            planned = download.plan(self.workspace, cap=cap, skip_ignored=skip_ignored)
        except FileRefused as refused:
            gr.Warning(fileview.refusal_text(refused, self._language_of(request)))
            return ""
        name = f"{Path(self.page.workspace).name or 'workspace'}.zip"
        return self.links.add(
            name, lambda: download.zip_chunks(self.workspace, planned, cap=cap), media_type="application/zip"
        )

    # ---- uploads ----

    def on_ticket(self, key: str, request: gr.Request) -> str:
        """An upload ticket for a known owner's page (`ui/routes/fileroutes.py` gates /upload with it)."""
        return self.links.ticket() if self.page.context.is_known(key, request) else ""

    def _save(self, owner: str, chat: str, files: list[tuple[str, str]], folder: str, *, replace: bool, request):
        """Save each file; those already there are returned, to ask about."""
        language, account, settings = self._language_of(request), request.username or "", self.page.settings
        said, existing = [], []
        for name, copy in files:
            try:
                with open(copy, "rb") as source:
                    written = self.page.service.files.upload(
                        owner, chat, [(name, source)], folder=folder, replace=replace,
                        max_bytes=settings.upload_max_bytes, max_files=settings.upload_max_files, account=account,
                    )  # fmt: skip
                said += [t(language, "files_uploaded", name=item.path, size=human_size(item.size)) for item in written]
            except FileRefused as refused:
                if refused.kind == "exists" and not replace:
                    existing.append((name, copy))
                    continue
                said.append(fileview.refusal_text(refused, language))
            except OSError:
                said.append(t(language, "files_refused_io", path=name))
        _remove_copies([item for item in files if item not in existing])  # the workspace has its own now
        return said, existing

    def on_upload(self, key: str, chat: str, folder: str, payload: Any, request: gr.Request):
        owner = self.page.context.known_owner(key, request)
        files = named_uploads(payload)
        language = self._language_of(request)
        try:
            self.page.service.get(owner, chat)
            check_count(len(files), limit=self.page.settings.upload_max_files)
        except FileRefused as refused:
            return {self.note: fileview.refusal_text(refused, language), self.upload: None}
        said, existing = self._save(owner, chat, files, folder, replace=False, request=request)
        ask = {
            self.waiting_uploads: existing,
            self.replace_row: gr.update(visible=bool(existing)),
            self.replace_question: " ".join(t(language, "files_replace_question", name=name) for name, _ in existing),
        }
        return ask | {self.upload: None} | self.listed(owner, chat, folder, "", language) | {self.note: " ".join(said)}

    def on_replace(self, key: str, chat: str, folder: str, waiting: list, request: gr.Request):
        owner = self.page.context.known_owner(key, request)
        said, _ = self._save(owner, chat, [tuple(item) for item in waiting], folder, replace=True, request=request)
        hidden = {self.waiting_uploads: [], self.replace_row: gr.update(visible=False)}
        return hidden | self.listed(owner, chat, folder, "", self._language_of(request)) | {self.note: " ".join(said)}

    def on_keep(self, waiting: list):
        _remove_copies(waiting)
        return {self.waiting_uploads: [], self.replace_row: gr.update(visible=False)}


def _remove_copies(files: list) -> None:
    """Gradio's copies of uploaded files (`(name, copy)` pairs), once saved or declined."""
    for _, copy in files:
        with contextlib.suppress(OSError):
            Path(copy).unlink()
