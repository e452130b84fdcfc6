"""Runaway replies against the launched app, driven through gradio_client: each is cut at its cap with a plain
sentence, nothing runs that the page did not show, and the app answers the next message."""

import json

import pytest

from tests.scripted_ollama import Stall, Text, Turn, tool_call_text
from tests.ui.conftest import chat_text
from tests.ui.test_faults import Page, assert_plain, assert_recovers


@pytest.fixture
def page(running_app):
    return Page(running_app.url)


def test_an_endless_reply_is_cut_at_the_default_cap(running_app, page):
    endless = "The cat sat on the mat and then it sat on the mat again. " * 400_000  # 23 MB: a model that goes on
    # and on (the Stall: still going when the cut comes, however much the socket buffers took; see test_guard).
    running_app.ollama.script(Turn(Text(endless), Stall(60), chunk_size=2048))
    chat, card, _ = page.send("tell me everything")
    text = chat_text(chat)
    assert "The model's reply passed 4,000,000 characters, so Meowgent stopped it there." in text
    # The page holds the cap (its punctuation escaped as entities, hence the margin), not the 23 MB stream.
    assert len(json.dumps(chat)) < 6_000_000
    assert card == ""
    assert running_app.ollama.wait_for_disconnects(1)
    assert_plain(text)
    assert_recovers(running_app, page, "tell me everything")


def test_a_20_mb_call_never_reaches_the_card(running_app, page):
    call = tool_call_text("write_file", {"path": "big.txt", "content": "m" * 20_000_000})
    running_app.ollama.script(Turn(Text("Saving.\n"), Text(call), chunk_size=65_536), "I'll write it in parts.")
    chat, card, _ = page.send("save a huge file")
    text = chat_text(chat)
    assert card == ""
    assert "began a tool call larger than 2,000,000 characters" in text
    assert "I'll write it in parts." in text
    assert not (running_app.workspace / "big.txt").exists()
    assert_recovers(running_app, page, "save a huge file")


def test_a_flood_of_calls_runs_twenty_and_says_so(running_app, page):
    flood = "".join(tool_call_text("list_files", {"path": "."}) for _ in range(500))
    running_app.ollama.script(Turn(Text(flood)), "Listed enough.")
    chat, _, _ = page.send("list it again and again")
    text = chat_text(chat)
    assert "tried to make more than 20 tool calls in one reply" in text
    assert "Listed enough." in text
    assert len(running_app.ollama.chat_requests) == 2
    told = [m for m in running_app.ollama.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert len(told) == 21
    assert_recovers(running_app, page, "list it again and again")
