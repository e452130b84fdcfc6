"""The page is served only at our own address, and loads nothing from anywhere else.

Two defences in one ASGI middleware on Gradio's app:

- **Host and Origin.** A page on `attacker.test` that re-resolves its name to 127.0.0.1 (DNS
  rebinding) reaches our port with `Host: attacker.test`; a page on any other site can still
  POST to 127.0.0.1 with its own `Origin`. Both get a plain 403 before Gradio sees them, on
  every path (the page, /config, the queue, files) and on websockets. An `Origin` must be the
  very address the request was sent to: behind `--share`, another `*.gradio.live` page is
  someone else's link, and Gradio's login cookie (`SameSite=None`) goes along with its requests.
- **Content-Security-Policy.** Model text is rendered as data, but should anything slip
  through, the browser itself refuses images, styles, fonts, forms and connections to any
  other origin, and the page cannot be framed.
"""

from __future__ import annotations

import base64
import hashlib
import re
import socket
from collections.abc import Awaitable, Callable, Container, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from meowgent.ui.i18n import pick_language, t
from meowgent.ui.routes.localaddresses import LocalAddresses

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
SHARE_DOMAIN = ".gradio.live"
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

# Gradio's index page carries its config and boot code as inline <script>s: they are allowed by
# their hash, computed on the page as served, so no other inline script can run.
_INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL | re.IGNORECASE)

# Gradio runs an event's `js=` through the AsyncFunction constructor, hence 'unsafe-eval'; it lets
# no injected markup run, and no script load from elsewhere.
SCRIPT_SOURCES = "script-src 'self' 'unsafe-eval'"
OTHER_SOURCES = (
    "default-src 'self'",
    # Svelte and Gradio's themes set inline styles; a style still cannot load anything (img/font-src).
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "media-src 'self' data: blob:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)


@dataclass(frozen=True)
class Addresses:
    """Where this server may be reached: names with our port, this machine's IPs when bound to all, the share domain."""

    port: int
    names: frozenset[str]
    machine: Container[str] = frozenset()
    """This machine's own IP literals, when bound to every interface (an IP literal cannot be rebound)."""
    shared: bool = False
    public_names: frozenset[str] = frozenset()
    """Names a proxy in front of us answers at, on its own port."""

    @property
    def home(self) -> str:
        """The address to tell a refused visitor about."""
        name = "127.0.0.1" if "127.0.0.1" in self.names else sorted(self.names)[0]
        return f"http://{_bracketed(name)}:{self.port}"

    def allows(self, hostname: str | None, port: int | None) -> bool:
        if not hostname:
            return False
        hostname = hostname.lower()
        if self._proxied(hostname):
            return True  # the tunnel or proxy forwards the public name, on its own port
        if port != self.port:
            return False
        return hostname in self.names or hostname in self.machine

    def allows_host(self, header: str) -> bool:
        """A `Host` header (`name:port`, `[v6]:port`) names us."""
        parts = _host_parts(header)
        return parts is not None and self.allows(*parts)

    def allows_origin(self, header: str, *, host: str) -> bool:
        """An `Origin` header (`scheme://name:port`) is our own page at the address this request was sent to.

        A page at another of our names is refused too: above all another `*.gradio.live` page, which
        is someone else's share link, not ours. The names a proxy of ours answers at are ours whatever
        `Host` it forwards; a TLS-terminating proxy or tunnel changes the scheme and port, so behind one
        only the names are compared.
        """
        try:
            parts = urlsplit(header)
            name, port = parts.hostname or "", parts.port or _DEFAULT_PORTS[parts.scheme]
        except (ValueError, KeyError):  # a malformed port, or no http(s) scheme ("null", "file://")
            return False
        if name in self.public_names:
            return True
        target = _host_parts(host)
        same_site = target is not None and name == target[0] and (self._proxied(name) or port == target[1])
        return same_site and self.allows(name, port)

    def _proxied(self, hostname: str) -> bool:
        shared = self.shared and hostname.endswith(SHARE_DOMAIN) and hostname != SHARE_DOMAIN[1:]
        return shared or hostname in self.public_names


def addresses_for(
    host: str,
    port: int,
    *,
    share: bool = False,
    public_names: Iterable[str] = (),
    machine: Container[str] | None = None,
) -> Addresses:
    """The addresses a server bound to `host:port` answers at, and the names a proxy in front of it uses.

    `machine` is this machine's IP literals for a server bound to all (`LocalAddresses()` unless given).
    """
    host = host.strip("[]").lower()
    names = set(LOOPBACK_NAMES)
    any_ip = host in WILDCARD_HOSTS
    if any_ip:  # reached by this machine's name too (no getfqdn: it can hang without DNS)
        hostname = socket.gethostname().lower()
        names |= {hostname, f"{hostname}.local"}
    else:
        names.add(host)
    own = (machine if machine is not None else LocalAddresses()) if any_ip else frozenset()
    public = frozenset(name.lower() for name in public_names)
    return Addresses(port, frozenset(names), machine=own, shared=share, public_names=public)


def content_security_policy(inline_scripts: Iterable[str] = ()) -> str:
    """The policy, allowing exactly these inline scripts."""
    hashes = "".join(f" 'sha256-{_digest(script)}'" for script in sorted(set(inline_scripts)))
    return "; ".join((SCRIPT_SOURCES + hashes, *OTHER_SOURCES))


def inline_scripts(html: str) -> list[str]:
    return _INLINE_SCRIPT.findall(html)


class Guard:
    """ASGI middleware: refuse requests for other addresses, and send our CSP with every response."""

    def __init__(self, app: ASGIApp, addresses: Addresses, page_paths: Iterable[str] = ("/",)) -> None:
        self.app = app
        self.addresses = addresses
        self.page_paths = frozenset(page_paths)
        """Where Gradio serves its index page: only its inline scripts are allowed, not those of a served file."""
        self.policy = content_security_policy()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = _header(scope, b"host")
        origins = _header(scope, b"origin")
        # Exactly one Host naming us, and at most one Origin, ours: a request carrying two never reaches Gradio.
        if (
            len(hosts) != 1
            or not self.addresses.allows_host(hosts[0])
            or (origins and (len(origins) > 1 or not self.addresses.allows_origin(origins[0], host=hosts[0])))
        ):
            await refuse(scope, send, "only_served_at", address=self.addresses.home)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        page = scope["path"] in self.page_paths
        await self.app(scope, receive, _PolicySender(send, self.policy, hash_inline_scripts=page))


class _PolicySender:
    """Adds the CSP to a response; an HTML page is held until complete, to allow its own inline scripts."""

    def __init__(self, send: Send, policy: str, *, hash_inline_scripts: bool) -> None:
        self._send = send
        self._policy = policy
        self._hash_inline_scripts = hash_inline_scripts
        self._start: Message | None = None
        self._body: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (key, value) for key, value in message.get("headers", []) if key.lower() != b"content-security-policy"
            ]
            content_type = next((value for key, value in headers if key.lower() == b"content-type"), b"")
            message = {**message, "headers": headers}
            if self._hash_inline_scripts and content_type.startswith(b"text/html"):
                self._start = message
                return
            message["headers"] = [*headers, (b"content-security-policy", self._policy.encode())]
            await self._send(message)
            return
        if self._start is None or message["type"] != "http.response.body":
            await self._send(message)
            return
        self._body.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = b"".join(self._body)
        policy = content_security_policy(inline_scripts(body.decode("utf-8", "replace")))
        self._start["headers"].append((b"content-security-policy", policy.encode()))
        await self._send(self._start)
        await self._send({"type": "http.response.body", "body": body})


async def refuse(scope: Scope, send: Send, key: str, *, status: int = 403, **values: object) -> None:
    """A plain page (403 unless said) with the catalog's sentence `key` in the browser's language; a websocket is
    closed."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    language = pick_language(next(iter(_header(scope, b"accept-language")), None))
    body = (t(language, key, **values) + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> list[str]:
    return [value.decode("latin-1") for key, value in scope["headers"] if key.lower() == name]


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


def _host_parts(header: str) -> tuple[str, int] | None:
    """(name, port) of a `Host` header; port 80 when it names none; None when malformed."""
    try:
        parts = urlsplit(f"//{header}")
        return (parts.hostname, parts.port or 80) if parts.hostname else None
    except ValueError:  # a malformed port
        return None


def _bracketed(name: str) -> str:
    return f"[{name}]" if ":" in name else name
