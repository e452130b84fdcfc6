"""The page answers only its owner: the start token, the cookie it leaves, and the gate in front of every route.

On a computer with several accounts, 127.0.0.1 is everyone's: without a login, any local account could send,
approve and read every chat. So Meowgent makes a random token at start (`Settings.token`, as Jupyter's), prints
the page's address with it, and `TokenGate` refuses every request that does not show it: the page, `/config`, the
queue, uploads, files, heartbeats and `/openapi.json` alike, before Gradio opens any stream. Opening
`/?token=T` leaves a cookie and sends the browser on to `/`; a script sends `Authorization: token T` (or `Bearer T`).

Behind a login, `LoginGate` does the same with Gradio's login cookie, for the routes Gradio itself serves to
anyone (its heartbeat, FastAPI's `/openapi.json`), leaving open only what the login form needs. Watch links
(`/watch/<token>`) are their own permission and pass both gates.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from starlette.requests import HTTPConnection

from meowgent.ui.routes.guard import ASGIApp, Receive, Scope, Send, refuse
from meowgent.ui.routes.watchroutes import MOUNT as WATCH_MOUNT

TOKEN_PARAMETER = "token"
COOKIE_PREFIX = "meowgent-owner-"
COOKIE_SECONDS = 30 * 24 * 3600
OPEN_TO_ALL = (f"{WATCH_MOUNT}/",)
"""Path prefixes no gate closes: a watch link's page, script and stream (its token is the permission)."""
GRADIO_START = "/gradio_api/startup-events"
"""Gradio's launch calls this once, with no credential, to start its queue; later calls only answer false."""
PAGE_PATHS = frozenset({"/"})
"""Where `?token=` signs a browser in."""
_SCHEMES = ("token", "bearer")
_COOKIE_LABEL = b"meowgent page cookie"


@dataclass(frozen=True)
class OwnerToken:
    """The start token of the app serving at `port`, and the cookie a browser that showed it keeps."""

    token: str
    port: int

    @property
    def cookie_name(self) -> str:
        """Cookies ignore ports: each app on 127.0.0.1 names its own, so two apps never sign each other out."""
        return f"{COOKIE_PREFIX}{self.port}"

    @property
    def cookie_value(self) -> str:
        """A digest of the token, not the token: the cookie store never holds what the terminal printed."""
        return hmac.new(self.token.encode(), _COOKIE_LABEL, hashlib.sha256).hexdigest()

    def matches(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(presented.encode(), self.token.encode())

    def signed_in(self, cookie: str | None) -> bool:
        return cookie is not None and hmac.compare_digest(cookie.encode(), self.cookie_value.encode())

    def url(self, local_url: str) -> str:
        """The page's address with the token, as printed at start."""
        return f"{local_url}?{TOKEN_PARAMETER}={quote(self.token, safe='')}"


def presented_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: token T` or `Bearer T` header, else None."""
    scheme, _, value = (authorization or "").strip().partition(" ")
    if scheme.lower() not in _SCHEMES or not value.strip():
        return None
    return value.strip()


def open_to_all(path: str) -> bool:
    return path == GRADIO_START or path.startswith(OPEN_TO_ALL)


class _Gate:
    """ASGI middleware: a request the gate lets in reaches the app; any other gets a short plain 401 (a websocket
    is closed), before the app opens anything for it. (401, not 403: Gradio's launch takes a 401 at its own
    address for "served, with a login", and refuses to start on anything else.)"""

    refusal = ""
    """The catalog key of the sentence a refused request gets."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or open_to_all(scope["path"]):
            await self.app(scope, receive, send)
        elif self.lets_in(HTTPConnection(scope)):
            await self.enter(scope, receive, send)
        else:
            await refuse(scope, send, self.refusal, status=401)

    def lets_in(self, connection: HTTPConnection) -> bool:
        raise NotImplementedError

    async def enter(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


class TokenGate(_Gate):
    """Without a login: only requests that show the start token, or the cookie opening `/?token=T` left."""

    refusal = "owner_only"

    def __init__(self, app: ASGIApp, owner: OwnerToken) -> None:
        super().__init__(app)
        self.owner = owner

    def lets_in(self, connection: HTTPConnection) -> bool:
        if _signing_in(connection):  # a wrong token is refused even from a browser signed in before
            return self.owner.matches(connection.query_params.get(TOKEN_PARAMETER))
        header = presented_token(connection.headers.get("authorization"))
        return self.owner.matches(header) or self.owner.signed_in(connection.cookies.get(self.owner.cookie_name))

    async def enter(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection = HTTPConnection(scope)
        if not _signing_in(connection):
            await self.app(scope, receive, send)
            return
        # The token leaves the address bar (and the history) at once; the cookie carries the permission from here.
        kept = [(key, value) for key, value in connection.query_params.multi_items() if key != TOKEN_PARAMETER]
        rest = urlencode(kept)
        location = scope["path"] + (f"?{rest}" if rest else "")
        cookie = (
            f"{self.owner.cookie_name}={self.owner.cookie_value}; Max-Age={COOKIE_SECONDS}; Path=/; "
            "HttpOnly; SameSite=Strict"
        )
        headers = [(b"location", location.encode()), (b"set-cookie", cookie.encode()), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


class LoginGate(_Gate):
    """Behind a login: Gradio's own login for every route, but the ones its login form needs (Gradio asks for the
    login on the rest of its routes itself, and answers this form's requests as it always did)."""

    refusal = "login_first"
    LOGIN_FORM = frozenset(
        {"/", "/config", "/config/", "/login", "/login/", "/logout", "/theme.css", "/favicon.ico", "/manifest.json"}
    )
    LOGIN_FORM_FILES = ("/assets/", "/static/", "/svelte/", "/gradio_api/login_check", "/gradio_api/pwa_icon")

    def __init__(self, app: ASGIApp, logged_in: Callable[[HTTPConnection], bool]) -> None:
        super().__init__(app)
        self.logged_in = logged_in

    def lets_in(self, connection: HTTPConnection) -> bool:
        path = connection.url.path
        return path in self.LOGIN_FORM or path.startswith(self.LOGIN_FORM_FILES) or self.logged_in(connection)


def _signing_in(connection: HTTPConnection) -> bool:
    return (
        connection.scope["type"] == "http"
        and connection.scope["method"] in ("GET", "HEAD")
        and connection.scope["path"] in PAGE_PATHS
        and TOKEN_PARAMETER in connection.query_params
    )
