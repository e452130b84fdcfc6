"""The watch page's routes: `/watch/<token>`, its live events, its script. They read a link and a broadcast,
never an owner key, and offer nothing that changes a chat.

They need no login and no start token (`meowgent.ui.routes.owner`), so the app's viewers at once are capped (`Seats`):
past the cap, the page is one sentence asking to try again later, and a stream asked for anyway ends at once.

A wrong, revoked or expired token gets the one sentence "This link has ended" after the same work as a live
one (one hash, one lookup, one page filled from the same template). A live page's stream carries "ended"
within a second of its link ending: it checks the link at every frame and at every one-second keepalive.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route

from meowgent.chats.service import ChatService
from meowgent.persist.store import Store
from meowgent.ui.i18n import t
from meowgent.ui.routes.guard import Receive, Scope, Send, content_security_policy
from meowgent.ui.routes.watchpage import SCRIPT_PATH, WATCH_SCRIPT, WatchView, page_html, watch_language
from meowgent.watch.broadcast import Broadcasts, patch
from meowgent.watch.links import WatchLink, WatchLinks
from meowgent.watch.seats import Seats

MOUNT = "/watch"
KEEPALIVE_SECONDS = 1.0
"""A stream with no news says it is alive this often, and finds out then whether its link has ended."""
_HEADERS = {
    # Also sent by the app's Guard for every path; here so the routes carry it wherever they are mounted.
    "Content-Security-Policy": content_security_policy(),
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Robots-Tag": "noindex",
}


RETRY_SECONDS = 30
"""What a viewer turned away is told to wait (`Retry-After`)."""


def watch_routes(
    links: WatchLinks, broadcasts: Broadcasts, *, seats: Seats, keepalive: float = KEEPALIVE_SECONDS
) -> list[BaseRoute]:
    """The routes under `/watch`: the script, a link's page and its event stream (GET only)."""

    def language_of(request: Request) -> str:
        return watch_language(request.query_params.get("lang"), request.headers.get("accept-language"))

    async def page(request: Request) -> Response:
        language = language_of(request)
        if links.lookup(request.path_params["token"]) is None:
            return HTMLResponse(page_html(language, ended=t(language, "watch_ended")), 404, headers=_HEADERS)
        if seats.full:
            html = page_html(language, ended=t(language, "watch_full"))
            return HTMLResponse(html, 503, headers={**_HEADERS, "Retry-After": str(RETRY_SECONDS)})
        return HTMLResponse(page_html(language), headers=_HEADERS)

    async def events(request: Request) -> Response:
        language = language_of(request)
        if not seats.take():  # the page came just before the last seat went: one "ended" event, no stream kept
            full = sse("ended", t(language, "watch_full"))
            return Response(full, media_type="text/event-stream", headers={**_HEADERS, "Connection": "close"})
        stream = viewer_stream(links, broadcasts, request.path_params["token"], language, keepalive=keepalive)
        return SeatedStream(stream, seats, media_type="text/event-stream", headers=_HEADERS)

    async def script(request: Request) -> Response:
        return Response(WATCH_SCRIPT, media_type="text/javascript", headers=_HEADERS)

    return [
        Route(f"/{SCRIPT_PATH}", script, methods=["GET"]),
        Route("/{token}", page, methods=["GET"]),
        Route("/{token}/events", events, methods=["GET"]),
    ]


def mount_watch(app: Starlette, links: WatchLinks, broadcasts: Broadcasts, *, seats: Seats) -> None:
    """Serve the watch routes at `/watch` on `app`, ahead of its own routes."""
    app.router.routes.insert(0, watch_mount(links, broadcasts, seats=seats))


def watch_mount(links: WatchLinks, broadcasts: Broadcasts, *, seats: Seats) -> Mount:
    """The watch routes at `/watch`, to put ahead of an app's own routes."""
    return Mount(MOUNT, routes=watch_routes(links, broadcasts, seats=seats))


class SeatedStream(StreamingResponse):
    """A viewer's stream, holding one of the seats it was given until it ends however it ends (done, the viewer
    gone, the server stopping)."""

    def __init__(self, content: AsyncIterable[bytes], seats: Seats, **options: object) -> None:
        super().__init__(content, **options)  # type: ignore[arg-type]
        self._seats = seats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._seats.give_back()


@dataclass(frozen=True)
class Watching:
    """One app's watch links, the broadcasts of its watched chats and their viewers' seats: made with the app,
    closed with it."""

    links: WatchLinks
    broadcasts: Broadcasts
    seats: Seats

    @classmethod
    def of(cls, service: ChatService, *, store: Store, max_viewers: int) -> Watching:
        """Links to `service`'s chats, kept in its `store`, at most `max_viewers` watching at once; a chat's link
        ends when the chat is deleted."""
        links = WatchLinks(service, store=store)
        service.on_delete(links.chat_deleted)
        broadcasts = Broadcasts(events_of=service.event_log, new_source=WatchView, is_shared=links.is_shared)
        return cls(links, broadcasts, Seats(max_viewers))

    def mount(self) -> Mount:
        return watch_mount(self.links, self.broadcasts, seats=self.seats)

    def close(self) -> None:
        self.broadcasts.close()


async def viewer_stream(
    links: WatchLinks, broadcasts: Broadcasts, token: str, language: str, *, keepalive: float
) -> AsyncIterator[bytes]:
    """The stream of one viewer: the chat's newest frame as a patch whenever there is a newer one, a keepalive
    every `keepalive` seconds without one, and "ended" (then the end) once the link is gone.

    When the server stops, the stream just ends: the link outlives a restart, and the page's EventSource
    reconnects to the next server on its own."""
    link = links.lookup(token)
    broadcast = broadcasts.of(link) if link is not None and not broadcasts.closed else None
    sent: tuple[str, ...] = ()
    seen = -1
    while broadcast is not None and not broadcast.ended and _still(links, token, link):
        if broadcast.version > seen:
            # A render (once per version and language) runs off the event loop, so other streams go on meanwhile.
            frame = broadcast.rendered(language) or await anyio.to_thread.run_sync(broadcast.frame, language)
            yield sse("patch", json.dumps(patch(sent, frame.items), ensure_ascii=False, separators=(",", ":")))
            sent, seen = frame.items, frame.version
        elif await broadcast.next(seen, keepalive) <= seen:
            yield b": alive\n\n"
    if not broadcasts.closed:
        yield sse("ended", t(language, "watch_ended"))


def _still(links: WatchLinks, token: str, link: WatchLink | None) -> bool:
    """Whether the viewer's link is the very link it opened, still live (a new link of the chat is another one)."""
    return link is not None and links.lookup(token) is link


def sse(event: str, data: str) -> bytes:
    """One Server-Sent Event; every line of `data` as a `data:` line, so no text can end the event early."""
    lines = "".join(f"data: {line}\n" for line in data.replace("\r", "\n").split("\n"))
    return f"event: {event}\n{lines}\n".encode()
