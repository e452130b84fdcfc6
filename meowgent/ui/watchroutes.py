"""The watch page's routes: `/watch/<token>`, its live events, its script. They read a link and a broadcast,
never an owner key, and offer nothing that changes a chat.

A wrong, revoked or expired token gets the one sentence "This link has ended" after the same work as a live
one (one hash, one lookup, one page filled from the same template). A live page's stream carries "ended"
within a second of its link ending: it checks the link at every frame and at every one-second keepalive.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route

from meowgent.chats.service import ChatService
from meowgent.ui.guard import content_security_policy
from meowgent.ui.i18n import t
from meowgent.ui.watchpage import SCRIPT_PATH, WATCH_SCRIPT, WatchView, page_html, watch_language
from meowgent.watch.broadcast import Broadcasts, patch
from meowgent.watch.links import WatchLink, WatchLinks

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


def watch_routes(links: WatchLinks, broadcasts: Broadcasts, *, keepalive: float = KEEPALIVE_SECONDS) -> list[BaseRoute]:
    """The routes under `/watch`: the script, a link's page and its event stream (GET only)."""

    def language_of(request: Request) -> str:
        return watch_language(request.query_params.get("lang"), request.headers.get("accept-language"))

    async def page(request: Request) -> Response:
        live = links.lookup(request.path_params["token"]) is not None
        html = page_html(language_of(request), live=live)
        return HTMLResponse(html, status_code=200 if live else 404, headers=_HEADERS)

    async def events(request: Request) -> Response:
        token = request.path_params["token"]
        stream = viewer_stream(links, broadcasts, token, language_of(request), keepalive=keepalive)
        return StreamingResponse(stream, media_type="text/event-stream", headers=_HEADERS)

    async def script(request: Request) -> Response:
        return Response(WATCH_SCRIPT, media_type="text/javascript", headers=_HEADERS)

    return [
        Route(f"/{SCRIPT_PATH}", script, methods=["GET"]),
        Route("/{token}", page, methods=["GET"]),
        Route("/{token}/events", events, methods=["GET"]),
    ]


def mount_watch(app: Starlette, links: WatchLinks, broadcasts: Broadcasts) -> None:
    """Serve the watch routes at `/watch` on `app`, ahead of its own routes."""
    app.router.routes.insert(0, watch_mount(links, broadcasts))


def watch_mount(links: WatchLinks, broadcasts: Broadcasts) -> Mount:
    """The watch routes at `/watch`, to put ahead of an app's own routes."""
    return Mount(MOUNT, routes=watch_routes(links, broadcasts))


@dataclass(frozen=True)
class Watching:
    """One app's watch links and the broadcasts of its watched chats: made with the app, closed with it."""

    links: WatchLinks
    broadcasts: Broadcasts

    @classmethod
    def of(cls, service: ChatService) -> Watching:
        """Links to `service`'s chats; a chat's link ends when the chat is deleted."""
        links = WatchLinks(service)
        service.on_delete(links.chat_deleted)
        broadcasts = Broadcasts(events_of=service.event_log, new_source=WatchView, is_shared=links.is_shared)
        return cls(links, broadcasts)

    def mount(self) -> Mount:
        return watch_mount(self.links, self.broadcasts)

    def close(self) -> None:
        self.broadcasts.close()


async def viewer_stream(
    links: WatchLinks, broadcasts: Broadcasts, token: str, language: str, *, keepalive: float
) -> AsyncIterator[bytes]:
    """The stream of one viewer: the chat's newest frame as a patch whenever there is a newer one, a keepalive
    every `keepalive` seconds without one, and "ended" (then the end) once the link is gone."""
    link = links.lookup(token)
    broadcast = broadcasts.of(link) if link is not None else None
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
    yield sse("ended", t(language, "watch_ended"))


def _still(links: WatchLinks, token: str, link: WatchLink | None) -> bool:
    """Whether the viewer's link is the very link it opened, still live (a new link of the chat is another one)."""
    return link is not None and links.lookup(token) is link


def sse(event: str, data: str) -> bytes:
    """One Server-Sent Event; every line of `data` as a `data:` line, so no text can end the event early."""
    lines = "".join(f"data: {line}\n" for line in data.replace("\r", "\n").split("\n"))
    return f"event: {event}\n{lines}\n".encode()
