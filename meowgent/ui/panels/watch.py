"""Share this chat to watch: the open chat's watch link, its QR code, its lifetime, and stopping it (issue 20).

The link is shown as a full URL on the address the person is using (`page_origin`), so it works as it is for
whoever they give it to: the loopback address on this computer, a public name, or the `--share` link. The same
QR code also goes to a corner that presenter mode shows (`meowgent.ui.state.presenter`), sent with the link, so
turning presenter mode on costs no request. Every handler checks that the caller owns the chat.
"""

from __future__ import annotations

import math
import time
from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.ui.html.qr import qr_svg
from meowgent.ui.i18n import t
from meowgent.ui.panels.shared import Page
from meowgent.ui.routes.guard import SHARE_DOMAIN
from meowgent.ui.routes.watchroutes import MOUNT
from meowgent.watch.links import WatchLink, WatchLinks

HOURS_SHOWN_FROM = 2 * 3600
"""A link with less time left than this says its minutes."""


def page_origin(host: str, *, forwarded_proto: str | None = None) -> str:
    """The origin a person reached the page at, from its request's `Host` (which the Guard checked is ours).

    The `--share` tunnel serves https at its `*.gradio.live` name; a proxy of ours says its scheme in
    `X-Forwarded-Proto`."""
    secure = host.lower().endswith(SHARE_DOMAIN) or (forwarded_proto or "").strip().lower() == "https"
    return f"{'https' if secure else 'http'}://{host}"


def watch_url(origin: str, link: WatchLink) -> str:
    """The link's full URL (for a link this process made: only those have their token)."""
    return f"{origin}{MOUNT}/{link.token}"


def ends_in(seconds: float, language: str) -> str:
    """How long a link has left, in whole hours (rounded) or, near its end, minutes (rounded up)."""
    if seconds >= HOURS_SHOWN_FROM:
        return t(language, "watch_ends_hours", hours=round(seconds / 3600))
    if seconds > 60:
        return t(language, "watch_ends_minutes", minutes=math.ceil(seconds / 60))
    return t(language, "watch_ends_soon")


class WatchPanel:
    """In the sidebar under "this chat": the share button, then, while the chat is shared, its link and QR code."""

    def __init__(self, page: Page, *, links: WatchLinks) -> None:
        self.page = page
        self.links = links
        localized = page.localized
        self.share = localized(gr.Button, {"value": "watch_share"}, size="sm", elem_id="watch_share")
        with gr.Group(visible=False, elem_id="watch_shared") as self.shared:
            self.link = localized(
                gr.Textbox, {"label": "watch_link"}, interactive=False, buttons=["copy"], elem_id="watch_link"
            )
            self.qr = gr.HTML(elem_id="watch_qr")
            self.ends = gr.Markdown(elem_id="watch_ends")
            self.revoke = localized(
                gr.Button, {"value": "watch_revoke"}, size="sm", variant="stop", elem_id="watch_revoke"
            )

    def place_corner(self) -> None:
        """The QR code in a corner of the main view, shown only in presenter mode on a wide screen."""
        self.corner = gr.HTML(elem_id="presenter_qr", padding=False)

    def shown(self, link: WatchLink | None, request: gr.Request) -> dict[Any, Any]:
        """The panel for the chat's live link, or for a chat that has none."""
        if link is None:
            return {self.shared: gr.update(visible=False), self.link: "", self.qr: "", self.ends: "", self.corner: ""}
        language = self.page.context.language_of(request)
        ends = ends_in(link.expires_at - time.time(), language)
        if link.token is None:  # made before a restart: the store kept only its digest, so there is no URL to show
            return {
                self.shared: gr.update(visible=True),
                self.link: "",
                self.qr: "",
                self.ends: f"{t(language, 'watch_unshown')} {ends}",
                self.corner: "",
            }
        origin = page_origin(request.headers.get("host", ""), forwarded_proto=request.headers.get("x-forwarded-proto"))
        url = watch_url(origin, link)
        qr = qr_svg(url)
        return {
            self.shared: gr.update(visible=True),
            self.link: url,
            self.qr: qr,
            self.ends: ends,
            self.corner: qr,
        }

    def wire(self, *, after: list[Any]) -> None:
        """Bind its buttons, and show the open chat's link after each of `after` (a chat shown, a language)."""
        page, context, links = self.page, self.page.context, self.links
        outputs = [self.shared, self.link, self.qr, self.ends, self.corner]

        @context.chat_action
        def on_watch_share(key: str, chat_id: str, request: gr.Request):
            return self.shown(links.share(context.known_owner(key, request), chat_id), request)

        @context.chat_action
        def on_watch_revoke(key: str, chat_id: str, request: gr.Request):
            links.revoke(context.known_owner(key, request), chat_id)
            gr.Info(t(context.language_of(request), "watch_stopped"))
            return self.shown(None, request)

        def show_watch_link(key: str, chat_id: str, request: gr.Request):
            try:
                link = links.link_for(context.known_owner(key, request), chat_id)
            except ChatError:  # not (yet) this caller's chat: nothing to show
                link = None
            return self.shown(link, request)

        chat_inputs = [page.owner_key, page.chat_id]
        self.share.click(on_watch_share, chat_inputs, outputs, concurrency_limit=None)
        self.revoke.click(on_watch_revoke, chat_inputs, outputs, concurrency_limit=None)
        for event in after:
            event(show_watch_link, chat_inputs, outputs, concurrency_limit=None)
