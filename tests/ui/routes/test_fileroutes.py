"""The Files panel's HTTP side: one-time download links; Gradio's /upload only with a ticket, under the cap."""

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.files.errors import FileRefused
from meowgent.ui.routes.fileroutes import PREFIX, TICKET_COOKIE, FileRoutes, Links


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _call(routes: FileRoutes, path: str, *, method: str = "GET", headers=(), body: bytes = b""):
    sent = []
    received = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return received.pop(0) if received else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "path": path, "method": method, "headers": [(k.encode(), v.encode()) for k, v in headers]}
    await routes(scope, receive, send)
    status = next(message["status"] for message in sent if message["type"] == "http.response.start")
    return status, b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")


def call(routes, path, **options):
    return asyncio.run(_call(routes, path, **options))


async def gradio(scope, receive, send):
    """Gradio's app, standing in: it reads the whole body and says how much it got."""
    total = 0
    while True:
        message = await receive()
        total += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": str(total).encode()})


def test_a_download_link_serves_its_bytes_once_and_expires():
    clock = Clock()
    links = Links(clock=clock)
    routes = FileRoutes(gradio, links=links, max_upload_bytes=100)
    url = links.add("poem.md", lambda: iter([b"soft ", b"paws"]), media_type="text/plain")
    assert call(routes, url) == (200, b"soft paws")
    assert call(routes, url)[0] == 404  # once
    late = links.add("poem.md", lambda: iter([b"x"]), media_type="text/plain")
    clock.now += 61
    assert call(routes, late)[0] == 404
    assert call(routes, PREFIX + "guessed/poem.md")[0] == 404


def test_a_refusal_before_the_first_byte_is_a_plain_answer():
    def refused():
        raise FileRefused("missing", "poem.md does not exist.")
        yield b""

    links = Links()
    routes = FileRoutes(gradio, links=links, max_upload_bytes=100)
    status, body = call(routes, links.add("poem.md", refused, media_type="text/plain"))
    assert (status, body) == (409, b"poem.md does not exist.")


def test_gradios_upload_needs_a_ticket_and_stays_under_the_cap():
    links = Links()
    routes = FileRoutes(gradio, links=links, max_upload_bytes=100)
    upload = "/gradio_api/upload"
    assert call(routes, upload, method="POST", headers=[("content-length", "5")], body=b"hello")[0] == 403
    ticket = [("cookie", f"{TICKET_COOKIE}={links.ticket()}")]
    assert call(routes, upload, method="POST", headers=[*ticket, ("content-length", "5")], body=b"hello") == (200, b"5")
    assert call(routes, upload, method="POST", headers=[*ticket, ("content-length", "101")])[0] == 413
    assert call(routes, upload, method="POST", headers=ticket, body=b"no length")[0] == 413
    with pytest.raises(ConnectionError):  # a body longer than it said is cut off
        call(routes, upload, method="POST", headers=[*ticket, ("content-length", "2")], body=b"longer")
    assert call(routes, "/gradio_api/config")[0] == 200  # everything else passes through


@given(st.text(max_size=60))
def test_no_cookie_header_makes_a_ticket(header):
    links = Links()
    routes = FileRoutes(gradio, links=links, max_upload_bytes=100)
    status, _ = call(routes, "/upload", method="POST", headers=[("cookie", header), ("content-length", "1")], body=b"x")
    assert status == 403
