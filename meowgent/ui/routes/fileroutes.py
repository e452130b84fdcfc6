"""The Files panel's HTTP side: download links an owner's event makes, and a gate on Gradio's own /upload.

Every Gradio event is an API endpoint, and so is `/upload`, which writes into Gradio's cache before any event
runs. So:

- **Downloads.** A panel event checks the owner, then `Links.add` makes a one-time link (a random token, good
  for a minute) to a stream of bytes read through the workspace guard. `FileRoutes` serves it under `PREFIX`
  as an attachment, chunk by chunk, so a zip of the whole workspace never sits in memory or on disk.
- **Uploads.** Gradio's `/upload` takes a request only with a ticket cookie that the Files panel gave a known
  owner (`Links.ticket`), and only up to `max_bytes` in all (Content-Length, then counted as it arrives).
  A stranger's script, or a body past the cap, gets a plain 403 or 413 before Gradio reads a byte.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import quote

from starlette.concurrency import iterate_in_threadpool

from meowgent.files.errors import FileRefused

PREFIX = "/meowgent-files/"
"""Where download links live (outside Gradio's own paths)."""
TICKET_COOKIE = "meowgent-upload"
LINK_SECONDS = 60.0
"""A download link works once, within this long of being made."""
TICKET_SECONDS = 12 * 3600.0
"""An upload ticket lasts this long (a page open all day takes a new one when it loads again)."""
MAX_TICKETS = 10_000
"""Tickets kept at most: the oldest go first, so a script opening pages cannot grow this without bound."""

Scope = dict[str, Any]
ASGIApp = Callable[..., Any]


@dataclass(frozen=True)
class _Link:
    name: str
    chunks: Callable[[], Iterator[bytes]]
    media_type: str
    until: float


class Links:
    """One app's download links and upload tickets (in memory: a restart ends them, as it ends the page's events)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._links: dict[str, _Link] = {}
        self._tickets: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, name: str, chunks: Callable[[], Iterator[bytes]], *, media_type: str) -> str:
        """A one-time link to `chunks()` downloaded as `name`; the caller has checked the owner."""
        token = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            self._links = {key: link for key, link in self._links.items() if link.until > now}
            self._links[token] = _Link(name, chunks, media_type, now + LINK_SECONDS)
        return f"{PREFIX}{token}/{quote(name)}"

    def take(self, token: str) -> _Link | None:
        """The link's stream, once."""
        with self._lock:
            link = self._links.pop(token, None)
        return link if link is not None and link.until > self._clock() else None

    def ticket(self) -> str:
        """A new upload ticket, for a known owner's page."""
        token = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            self._tickets = {key: until for key, until in self._tickets.items() if until > now}
            while len(self._tickets) >= MAX_TICKETS:
                self._tickets.pop(next(iter(self._tickets)))
            self._tickets[token] = now + TICKET_SECONDS
        return token

    def ticket_valid(self, token: str) -> bool:
        with self._lock:
            until = self._tickets.get(token)
        return until is not None and until > self._clock()


class FileRoutes:
    """ASGI middleware: serves `PREFIX` download links and gates Gradio's `/upload`."""

    def __init__(self, app: ASGIApp, *, links: Links, max_upload_bytes: int) -> None:
        self.app = app
        self.links = links
        self.max_upload_bytes = max_upload_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path.startswith(PREFIX):
            await self._download(path[len(PREFIX) :], send)
        elif scope.get("method") == "POST" and path.rstrip("/").endswith("/upload"):
            await self._upload(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _download(self, rest: str, send: Any) -> None:
        link = self.links.take(rest.split("/", 1)[0])
        if link is None:
            await _plain(send, 404, "This download link is used or expired. Click Download again.")
            return
        chunks = iterate_in_threadpool(link.chunks())
        try:  # the first chunk before the headers: a refusal (a file gone, the cap) is still a plain answer
            first = await chunks.__anext__()
        except StopAsyncIteration:
            first = b""
        except FileRefused as refused:
            await _plain(send, 409, str(refused))
            return
        disposition = f"attachment; filename*=UTF-8''{quote(link.name)}"
        headers = [(b"content-type", link.media_type.encode()), (b"content-disposition", disposition.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": first, "more_body": True})
        try:
            async for chunk in chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except FileRefused:
            return  # headers are gone: a cut-off download is all that can say it (the browser shows it failed)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _upload(self, scope: Scope, receive: Any, send: Any) -> None:
        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope.get("headers", [])}
        if not self.links.ticket_valid(_cookie(headers.get("cookie", ""), TICKET_COOKIE)):
            await _plain(send, 403, "Uploads are taken only from an open Meowgent page.")
            return
        length = headers.get("content-length", "")
        if not length.isdigit() or int(length) > self.max_upload_bytes:
            await _plain(send, 413, "That upload is larger than this Meowgent takes.")
            return
        allowed = int(length)
        seen = 0

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > allowed:  # more than it announced: end it here
                raise ConnectionError("upload body longer than its Content-Length")
            return message

        await self.app(scope, counted, send)


def _cookie(header: str, name: str) -> str:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:  # a malformed Cookie header is no ticket
        return ""
    return jar[name].value if name in jar else ""


async def _plain(send: Any, status: int, text: str) -> None:
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
