"""web_fetch: read a web page as Markdown, a window at a time, from public addresses only."""

from __future__ import annotations

import codecs
import functools
import re
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Annotated

import certifi
import httpx
from pydantic import Field

from meowgent.config import Settings
from meowgent.tools.extract import extract_markdown
from meowgent.tools.netguard import Resolver, Target, check_url, parse_url, resolve_host
from meowgent.tools.spec import FollowCheck, ScopedBy, ToolContext, ToolError, redirect_needs_approval, tool

MAX_REDIRECTS = 5
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_USER_AGENT = "Mozilla/5.0 (compatible; Meowgent/0.1; web_fetch)"
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1"
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_POLL_SECONDS = 0.05
# A window ends at the last paragraph break in its final stretch, so the next one starts with a whole paragraph.
_PARAGRAPH_SEARCH = 500
# Room for the header and footer inside the tool output cap, so a window is never cut in its middle.
_FRAME_ROOM = 1000
_ERROR_EXCERPT = 800
# The spaces around an optional quote are read in one way only: `\s*["']?\s*` split a run of spaces
# every possible way, 0.5 s of backtracking on a 4 KB head.
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*(?:["']\s*)?([\w.:-]+)""", re.I)
# Browsers read these labels as windows-1252 (WHATWG Encoding); the page's author meant it so.
_WINDOWS_1252_ALIASES = frozenset({"ascii", "iso8859-1"})


@dataclass(frozen=True)
class Page:
    """A downloaded response: the last one after redirects."""

    url: str
    status: int
    reason: str
    media_type: str
    """Lowercase, without parameters; empty when the server sent no Content-Type."""
    charset: str | None
    body: bytes
    truncated: bool
    """True when the body was cut at fetch_max_bytes."""


@tool(risky=True, scope=ScopedBy.HOST, url="url", main="url", network=True)
def web_fetch(
    ctx: ToolContext,
    url: Annotated[str, "The http or https URL to read."],
    offset: Annotated[int, "Where in the page text to start; use the offset a previous call gave.", Field(ge=0)] = 0,
    limit: Annotated[int, "The most characters of page text to return.", Field(ge=1)] = 20000,
) -> str:
    """Read a web page (http or https) and return its main text as Markdown.

    The result starts with the page title, the final URL after redirects and which characters
    of the text it holds, as [chars a–b of N]. A long page comes in windows: the result ends
    with the offset to pass to read on. Links appear as their text, without URLs; images are left out.
    Reads HTML, plain text and JSON. Private and local network addresses are refused.
    A redirect to another host is followed only where a web_fetch of that URL would run without asking.
    """
    page = fetch(url, settings=ctx.settings, cancel=ctx.cancel, may_follow=ctx.may_follow)
    title, text = readable_text(page)
    if page.status >= 400:
        excerpt = " ".join(text.split())[:_ERROR_EXCERPT]
        says = f" The page says: {excerpt}" if excerpt else ""
        raise ToolError(f"{page.url} answered HTTP {page.status} {page.reason}.{says}")
    room = max(1, ctx.settings.max_tool_output - _FRAME_ROOM)
    return render_window(
        title=title,
        url=page.url,
        text=text,
        offset=offset,
        limit=min(limit, room),
        truncated_at=ctx.settings.fetch_max_bytes if page.truncated else None,
    )


def fetch(
    url: str,
    *,
    settings: Settings,
    cancel: threading.Event,
    resolve: Resolver = resolve_host,
    may_follow: FollowCheck = redirect_needs_approval,
) -> Page:
    """Download url, following and checking up to MAX_REDIRECTS redirects, within settings.fetch_timeout overall.

    A redirect to the host of the URL (or of a hop already followed) is followed; one to another
    host only if `may_follow` says so, before its name is even looked up.
    The download runs in a worker thread so that the deadline and `cancel` hold even while a
    DNS lookup or a read blocks; a worker left behind ends at its own per-read timeout.
    """
    stop = threading.Event()
    outcome: list[Page | Exception] = []

    def work() -> None:
        try:
            outcome.append(_download(url, settings=settings, stop=stop, resolve=resolve, may_follow=may_follow))
        except Exception as exc:  # handed to the caller's thread below
            outcome.append(exc)

    worker = threading.Thread(target=work, name="web_fetch", daemon=True)
    deadline = time.monotonic() + settings.fetch_timeout
    worker.start()
    while True:
        worker.join(_POLL_SECONDS)
        if not worker.is_alive():
            break
        if cancel.is_set():
            stop.set()
            raise ToolError("web_fetch was stopped.")
        if time.monotonic() >= deadline:
            stop.set()
            raise _too_slow(url, settings)
    result = outcome[0]
    if isinstance(result, Exception):
        raise result
    return result


def _too_slow(url: str, settings: Settings) -> ToolError:
    return ToolError(f"{url} took longer than {settings.fetch_timeout:g} seconds; gave up.")


def _download(
    url: str, *, settings: Settings, stop: threading.Event, resolve: Resolver, may_follow: FollowCheck
) -> Page:
    headers = {"User-Agent": _USER_AGENT, "Accept": _ACCEPT}
    # trust_env=False: a proxy from the environment would resolve names itself and bypass the address check.
    with httpx.Client(
        headers=headers, timeout=settings.fetch_timeout, trust_env=False, verify=_tls_context()
    ) as client:
        current = parse_url(url)
        judged = {_host_name(current)}  # the call was judged (approved, or allowed) for its own host
        for _ in range(MAX_REDIRECTS + 1):
            target = check_url(current, allow_private=settings.allow_private_fetch, resolve=resolve)
            try:
                response = _open(client, target)
                try:
                    location = response.headers.get("location")
                    if response.status_code in _REDIRECT_STATUSES and location:
                        current = parse_url(_join(target.url, location))
                        _judge_hop(current, judged, may_follow)
                        continue
                    return _receive(response, target, settings=settings, stop=stop)
                finally:
                    response.close()
            except httpx.TimeoutException:  # each step may take the whole budget, so the deadline has passed
                raise _too_slow(url, settings) from None
            except httpx.HTTPError as exc:
                raise ToolError(f"reading {target.url} failed: {exc or type(exc).__name__}.") from None
    raise ToolError(f"{url} redirected more than {MAX_REDIRECTS} times (last to {current}); gave up.")


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default verification (certifi's CA list), built once: loading it costs ~40 ms a fetch."""
    return ssl.create_default_context(cafile=certifi.where())


def _open(client: httpx.Client, target: Target) -> httpx.Response:
    """Connect to the first address that answers, as the checked host; a new DNS answer can't redirect us."""
    extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
    headers = {"Host": target.url.netloc.decode("ascii")}
    failure: Exception | None = None
    for address in target.addresses:
        request = client.build_request(
            "GET", target.url.copy_with(host=address), headers=headers, extensions=extensions
        )
        try:
            return client.send(request, stream=True)
        except httpx.ConnectError as exc:
            failure = exc
    raise ToolError(f"could not connect to {target.host}: {failure}.")


def _judge_hop(hop: httpx.URL, judged: set[str], may_follow: FollowCheck) -> None:
    """Go on to a host already judged for this call; ask `may_follow` about any other, and stop if it says why not."""
    host = _host_name(hop)
    if host in judged:
        return
    why_not = may_follow(str(hop))
    if why_not is not None:
        raise ToolError(why_not)
    judged.add(host)


def _host_name(url: httpx.URL) -> str:
    """The host as the rules see it: lowercase, without a final dot."""
    return url.host.lower().rstrip(".")


def _join(base: httpx.URL, location: str) -> httpx.URL:
    try:
        return base.join(location)
    except httpx.InvalidURL as exc:
        raise ToolError(f"{base} redirected to {location!r}, which is not a valid URL ({exc}).") from None


def _receive(response: httpx.Response, target: Target, *, settings: Settings, stop: threading.Event) -> Page:
    media_type, _, parameters = response.headers.get("content-type", "").partition(";")
    media_type = media_type.strip().lower()
    if media_type and not _is_readable(media_type):
        if response.status_code >= 400:
            body, truncated = b"", False
        else:
            raise ToolError(f"{target.url} is {media_type}; web_fetch reads only HTML, text and JSON.")
    else:
        body, truncated = _read_capped(response, limit=settings.fetch_max_bytes, stop=stop)
    return Page(
        url=str(target.url),
        status=response.status_code,
        reason=response.reason_phrase,
        media_type=media_type,
        charset=_charset_parameter(parameters),
        body=body,
        truncated=truncated,
    )


def _is_readable(media_type: str) -> bool:
    return (
        media_type in _HTML_TYPES
        or media_type.startswith("text/")
        or media_type in ("application/json", "application/xml")
        or media_type.endswith(("+json", "+xml"))
    )


def _read_capped(response: httpx.Response, *, limit: int, stop: threading.Event) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        if stop.is_set():  # the caller gave up and has already answered
            raise ToolError("web_fetch was stopped.")
        room = limit - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _charset_parameter(parameters: str) -> str | None:
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def readable_text(page: Page) -> tuple[str, str]:
    """(title, text) of a page: Markdown of the article for HTML, the decoded body for text and JSON."""
    if page.media_type:
        is_html = page.media_type in _HTML_TYPES
    else:  # no Content-Type: what a browser would sniff
        start = page.body[:512].lstrip().lower()
        is_html = start.startswith((b"<!doctype html", b"<html"))
        if not is_html and b"\x00" in page.body[:1024]:
            raise ToolError(f"{page.url} sent binary data without a Content-Type; web_fetch reads only text.")
    text = decode_body(page.body, header_charset=page.charset, is_html=is_html)
    if is_html:
        return extract_markdown(text, page.url)
    return "", text


def decode_body(body: bytes, *, header_charset: str | None, is_html: bool) -> str:
    """Text of a body: the byte order mark wins, then the header's charset, then a <meta> one, then UTF-8."""
    if body.startswith(codecs.BOM_UTF8):
        return body.decode("utf-8-sig", errors="replace")
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return body.decode("utf-16", errors="replace")
    meta = _META_CHARSET.search(body[:4096]) if is_html else None
    labels = (header_charset, meta.group(1).decode("ascii") if meta else None)
    for label in labels:
        codec = _codec(label)
        if codec is not None:
            return body.decode(codec, errors="replace")
    return body.decode("utf-8", errors="replace")


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return "cp1252" if name in _WINDOWS_1252_ALIASES else name


def render_window(*, title: str, url: str, text: str, offset: int, limit: int, truncated_at: int | None) -> str:
    """The header, the window of text from offset, and how to read on; ToolError when offset is past the end."""
    total = len(text)
    if offset and offset >= total:
        raise ToolError(
            f"offset {offset} is past the end: the page text has {total} characters, so use an offset below {total}."
        )
    end = min(offset + limit, total)
    if end < total:
        cut = text.rfind("\n\n", max(offset, end - _PARAGRAPH_SEARCH), end)
        if cut > offset:
            end = cut + 2
    lines = [f"Title: {title or '(none)'}", f"URL: {url}", f"[chars {offset}–{end} of {total}]"]
    if truncated_at is not None:
        lines.append(f"(The page is larger than {truncated_at:,} bytes; only its first {truncated_at:,} were read.)")
    window = text[offset:end].strip("\n")
    lines += ["", window or "(The page has no readable text.)", ""]
    if end < total:
        lines.append(f"[{total - end} more characters: call web_fetch with offset={end} to read more]")
    else:
        lines.append("[end of page]")
    return "\n".join(lines)
