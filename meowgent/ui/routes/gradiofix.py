"""Gradio's status tracker served with its timer loop mended: changes when Gradio's page code does.

Gradio 6's status tracker counts an event's elapsed time in a `requestAnimationFrame` loop, and only the tracker's
status effect stops it. The page-level loader (the full-page "Loading…" while the app starts) is removed while its
status is still pending, so on every page its loop runs for as long as the tab is open: a frame 60 times a second
with nothing on screen changing, about 0.05 of a core in Chromium (docs/benchmarks.md, "An idle page"), taken from
a model answering on the same CPU. `MendedTracker` serves that one chunk of Gradio's with the loop also ending once
its tracker has left the page; every other request passes through.

The chunk is minified, so the loop is found by its exact text (`LOOP`). A Gradio whose chunk lacks it is served as
it ships (the page works, idling as Gradio's does); `tests/ui/routes/test_gradiofix.py` fails then, to say so.
"""

from __future__ import annotations

from pathlib import Path

import gradio

from meowgent.ui.routes.guard import ASGIApp, Receive, Scope, Send

ASSETS = Path(gradio.__file__).parent / "templates" / "frontend" / "assets"
"""Where Gradio's page code is, served under `/assets/`."""
LOOP = "W&&ze()})}"
"""The tail of the timer loop `function ze(){requestAnimationFrame(()=>{…, W&&ze()})}`: `W` says it is running."""
MENDED = "W&&U?.isConnected&&ze()})}"
"""…and `U`, the tracker's element (Svelte sets it to null when the tracker is removed), is still on the page."""


def mend(chunk: str) -> str | None:
    """The tracker's code with its loop mended, or None where the loop is not found exactly once."""
    return chunk.replace(LOOP, MENDED) if chunk.count(LOOP) == 1 else None


def mended_chunks(assets: Path = ASSETS) -> dict[str, bytes]:
    """The mended tracker chunks by the path the page asks for them at."""
    mended = {}
    for path in assets.glob("statustracker-*.js"):
        text = mend(path.read_text(encoding="utf-8"))
        if text is not None:
            mended[f"/assets/{path.name}"] = text.encode()
    return mended


class MendedTracker:
    """ASGI middleware: answers a request for a mended chunk with it; passes every other request to the app."""

    def __init__(self, app: ASGIApp, *, chunks: dict[str, bytes]) -> None:
        self.app = app
        self.chunks = chunks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = self.chunks.get(scope.get("path", "")) if scope["type"] == "http" else None
        if body is None:
            await self.app(scope, receive, send)
            return
        headers = [(b"content-type", b"text/javascript; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
