"""Gradio's status tracker, served with its timer loop mended (`meowgent.ui.routes.gradiofix`)."""

import asyncio

from hypothesis import assume, given
from hypothesis import strategies as st

from meowgent.ui.routes.gradiofix import LOOP, MENDED, MendedTracker, mend, mended_chunks


def test_the_installed_gradio_has_the_loop_and_it_is_served_mended():
    chunks = mended_chunks()
    assert chunks, "Gradio's status tracker no longer has the timer loop this module mends: look again"
    for path, body in chunks.items():
        assert path.startswith("/assets/statustracker-")
        assert MENDED.encode() in body
        assert body.count(b"&&ze()") == 1


@given(st.text(), st.text())
def test_only_a_chunk_with_exactly_one_loop_is_mended(before, after):
    once = before + LOOP + after
    if once.count(LOOP) == 1:
        assert mend(once) == before + MENDED + after
    else:
        assert mend(once) is None


@given(st.text())
def test_a_chunk_without_the_loop_is_served_as_it_ships(chunk):
    assume(LOOP not in chunk)
    assert mend(chunk) is None


def _get(middleware, path):
    sent = []

    async def send(message):
        sent.append(message)

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 204, "headers": []})

    asyncio.run(MendedTracker(app, chunks=middleware)({"type": "http", "path": path}, None, send))
    return sent


def test_the_mended_chunk_is_answered_and_every_other_path_passes_through():
    chunks = {"/assets/statustracker-x.js": b"mended"}
    answered = _get(chunks, "/assets/statustracker-x.js")
    assert answered[0]["status"] == 200
    assert answered[1]["body"] == b"mended"
    assert (b"content-type", b"text/javascript; charset=utf-8") in answered[0]["headers"]
    assert _get(chunks, "/assets/statustracker-y.js")[0]["status"] == 204
