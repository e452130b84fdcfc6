"""The login: who may log in, how often they may try, and what the login page says.

Gradio checks the password through `LoginThrottle`, which gets only the name and the password
(behind a `--share` tunnel every request comes from the same address anyway). After a few wrong
passwords for one name, every attempt for it, even the right one, is refused for a while, and
the pause doubles with each further failure: guessing a password stays hopeless.

A name alone must not let a stranger lock its owner out, though, by guessing wrong on purpose.
So a browser that logged in once is remembered by a signed cookie (`RememberedBrowsers`, its key
kept in the data folder so it outlives a restart), and its attempts count on a record of their
own: a stranger's wrong guesses pause only browsers the server has never seen log in. A name
Meowgent makes up is random too, so a stranger does not even know which name to guess.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import HTTPConnection

from meowgent.persist.private import FILE_MODE
from meowgent.ui.routes.guard import ASGIApp, Message, Receive, Scope, Send

FREE_ATTEMPTS = 5
"""Wrong passwords for one name before it has to wait."""
FIRST_PAUSE = 30.0
"""Seconds of the first wait; each further wrong password doubles it."""
LONGEST_PAUSE = 3600.0
REMEMBER_COOKIE = "meowgent-remembered"
REMEMBER_SECONDS = 90 * 24 * 3600
"""How long a browser that logged in is remembered (its cookie lasts as long)."""
LOGIN_KEY_FILE = "login-key"
LOGIN_PATHS = frozenset({"/login", "/login/"})
"""Where Gradio's login form posts."""

_remembered_browser: ContextVar[str | None] = ContextVar("meowgent_remembered_browser", default=None)
"""The id of the remembered browser a login attempt comes from (set by `RememberLogins`), or None."""

# Gradio shows this above its login form; the page's language is not known yet, so both.
LOGIN_MESSAGE = (
    "<h2>🐱 Meowgent</h2>"
    "<p>Log in with the user and password printed in the terminal where Meowgent started "
    "(or the ones you gave it). After five wrong passwords, a browser that never logged in here "
    "must wait a while, even with the right one.</p>"
    "<p lang='zh-TW'>請用啟動 Meowgent 的終端機上顯示的使用者名稱和密碼登入（或你自己設定的）。"
    "密碼錯了五次之後，沒在這裡登入過的瀏覽器要等一會兒才能再試，即使密碼是對的。</p>"
)


@dataclass
class _Failures:
    count: int = 0
    blocked_until: float = 0.0


class LoginThrottle:
    """Gradio's `auth` callable: the right (user, password), and not while that user is paused.

    Failures are counted per remembered browser, and for browsers never seen before, per name: ours,
    and one record for every other name, so random names cannot grow the table.
    """

    def __init__(self, user: str, password: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._user = user
        self._password = password
        self._clock = clock
        self._failures: dict[tuple[str, str], _Failures] = {}
        self._lock = threading.Lock()

    def __call__(self, user: str, password: str) -> bool:
        browser = _remembered_browser.get()
        record = ("browser", browser) if browser is not None else ("name", user if user == self._user else "")
        with self._lock:
            failures = self._failures.setdefault(record, _Failures())
            now = self._clock()
            if now < failures.blocked_until:
                return False
            right = secrets.compare_digest(user.encode(), self._user.encode()) and secrets.compare_digest(
                password.encode(), self._password.encode()
            )
            if right:
                failures.count = 0
                return True
            failures.count += 1
            if failures.count >= FREE_ATTEMPTS:
                pause = min(FIRST_PAUSE * 2 ** (failures.count - FREE_ATTEMPTS), LONGEST_PAUSE)
                failures.blocked_until = now + pause
            return False


class RememberedBrowsers:
    """Cookies for browsers that logged in as `user`: an id, when it was given, and a signature over both."""

    def __init__(self, key: bytes, user: str, *, clock: Callable[[], float] = time.time) -> None:
        self._key = key
        self._user = user
        self._clock = clock

    def cookie(self) -> str:
        """A new cookie value for a browser that just logged in."""
        payload = f"{secrets.token_urlsafe(12)}.{int(self._clock())}"
        return f"{payload}.{self._signature(payload)}"

    def browser(self, cookie: str | None) -> str | None:
        """The browser's id, if `cookie` is one we gave for this user and it has not expired."""
        browser, _, rest = (cookie or "").partition(".")
        issued, _, signature = rest.partition(".")
        if not (browser and issued.isdigit() and signature):
            return None
        if not hmac.compare_digest(signature, self._signature(f"{browser}.{issued}")):
            return None
        return browser if self._clock() - int(issued) < REMEMBER_SECONDS else None

    def _signature(self, payload: str) -> str:
        message = f"{self._user}\n{payload}".encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()


def login_key(data_dir: Path) -> bytes:
    """The key that signs remembered browsers, made once and kept in the data folder (0600)."""
    path = data_dir / LOGIN_KEY_FILE
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    key = secrets.token_bytes(32)
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(key.hex())
    return key


class RememberLogins:
    """ASGI middleware around Gradio's login: tells `LoginThrottle` which remembered browser is trying,
    and gives a browser that logs in the cookie that remembers it."""

    def __init__(self, app: ASGIApp, browsers: RememberedBrowsers) -> None:
        self.app = app
        self.browsers = browsers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in LOGIN_PATHS:
            await self.app(scope, receive, send)
            return

        async def remember_on_success(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                cookie = (
                    f"{REMEMBER_COOKIE}={self.browsers.cookie()}; Max-Age={REMEMBER_SECONDS}; Path=/; "
                    "HttpOnly; SameSite=Strict"
                )
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        # Gradio calls the throttle inside this request's task, so it sees the value set here.
        known = _remembered_browser.set(self.browsers.browser(HTTPConnection(scope).cookies.get(REMEMBER_COOKIE)))
        try:
            await self.app(scope, receive, remember_on_success)
        finally:
            _remembered_browser.reset(known)


def logged_in(connection: HTTPConnection) -> bool:
    """Whether a request carries the cookie of a live Gradio login, read as Gradio's own `get_current_user` reads
    it (the Gradio app is the request's `app`): for the routes Gradio serves to anyone (`meowgent.ui.routes.owner`)."""
    app = connection.scope.get("app")
    cookie_id, tokens = getattr(app, "cookie_id", None), getattr(app, "tokens", {})
    cookies = connection.cookies
    token = cookies.get(f"access-token-{cookie_id}") or cookies.get(f"access-token-unsecure-{cookie_id}")
    return token is not None and token in tokens
