"""What a program asks the proxy for, read from the head of its request: pure, bounded, linear in the bytes.

Two forms reach a proxy: `CONNECT host:port` (a tunnel, for https and anything else) and an absolute-form
request (`GET http://host/path HTTP/1.1`), which the proxy sends on in origin form with `Connection: close`,
so that one connection is one request to one host and a second request can't ride on the first one's check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

ANY_HOST = "*"
"""The pattern that allows every host: the person's deliberate choice, never a default."""
MAX_LINE = 8192
"""Bytes of the request line (the longest URL a proxy takes; most servers stop at 8 KiB too)."""
MAX_HEAD = 65536
"""Bytes of the request line and headers together."""
HEAD_END = b"\r\n\r\n"
_HOST_PATTERN = re.compile(r"[a-z0-9*?\[\]_.:-]+")
"""What a host pattern may hold: a name or an address, with the rules' wildcards (no scheme, path or space)."""
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate"})


class BadRequest(Exception):
    """A head the proxy won't read: `status` is the HTTP answer, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ProxyRequest:
    host: str
    """Lowercased, without a trailing dot or brackets."""
    port: int
    tunnel: bool
    """CONNECT: the proxy answers 200 and then copies bytes both ways."""
    head: bytes = b""
    """For a plain request, what the server gets: origin form, without the proxy's headers."""


def head_length(buffer: bytes | bytearray, searched: int) -> int | None:
    """Where the head ends in `buffer` (its length with the blank line), or None; `searched` bytes were looked
    at before, so each byte is looked at a bounded number of times however the head arrives."""
    found = buffer.find(HEAD_END, max(searched - len(HEAD_END) + 1, 0))
    return None if found < 0 else found + len(HEAD_END)


def check_size(buffer: bytes | bytearray) -> None:
    """BadRequest if what has come of a head without its end is already too long."""
    line_end = buffer.find(b"\n", 0, MAX_LINE + 1)
    if line_end < 0 and len(buffer) > MAX_LINE:
        raise BadRequest(414, f"the request line is longer than {MAX_LINE} bytes")
    if len(buffer) > MAX_HEAD:
        raise BadRequest(431, f"the request's head is longer than {MAX_HEAD} bytes")


def parse_head(head: bytes) -> ProxyRequest:
    """The request a head (up to and with its blank line) asks for; BadRequest if it is not one a proxy takes."""
    check_size(head)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "the request line is not `METHOD TARGET HTTP/1.x`")
    method, target, version = parts
    if method == "CONNECT":
        host, port = _authority(target)
        return ProxyRequest(host, port, tunnel=True)
    if not target.lower().startswith("http://"):
        raise BadRequest(400, "a request through the proxy names a whole http:// URL; https goes by CONNECT")
    try:
        url = urlsplit(target)
        host, port = url.hostname, url.port or 80
    except ValueError as exc:
        raise BadRequest(400, f"the URL is not valid ({exc})") from None
    if not host:
        raise BadRequest(400, "the URL has no host")
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    headers = [line for line in lines[1:] if line and line.split(":", 1)[0].strip().lower() not in _HOP_BY_HOP]
    if not any(line.split(":", 1)[0].strip().lower() == "host" for line in headers):
        headers.insert(0, f"Host: {url.netloc.rpartition('@')[2]}")
    rewritten = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
    return ProxyRequest(_host(host), port, tunnel=False, head=rewritten.encode("latin-1"))


def _authority(target: str) -> tuple[str, int]:
    host, colon, port = target.rpartition(":")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536:
        raise BadRequest(400, "CONNECT names `host:port`")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host:
        raise BadRequest(400, "CONNECT names `host:port`")
    return _host(host), int(port)


def _host(host: str) -> str:
    if not host.isascii() or any(c in host for c in "/@ \t"):
        raise BadRequest(400, f"{host!r} is not a host name")
    return host.lower().rstrip(".")


def host_allowed(host: str, patterns: tuple[str, ...]) -> bool:
    """Whether a host is one of `patterns`: names, or globs as the rules' `host` (`*.python.org`, `*` for any)."""
    return any(fnmatchcase(host, pattern.lower()) for pattern in patterns)


def host_pattern(word: str) -> str:
    """A host name or pattern as the proxy compares it: lowercased, without a trailing dot (`PyPI.org.` is
    `pypi.org`); ValueError if it is not one (a URL, a path, a space, a port: `host:443` would match no host)."""
    host = word.strip().lower().rstrip(".")
    if not _HOST_PATTERN.fullmatch(host) or host.count(":") == 1:  # IPv6 addresses have two colons or more
        raise ValueError(word)
    return host
