"""Model families: how soon a call's text reaches the page's follower, and what reading held-back calls costs.

(a) For each family, the scripted server generates a write_file call token by token (4 characters a token, 5 ms
    apart) and runs it through the port of the model's Ollama parser. The same pieces the page uses follow the
    answer (RunRegistry.subscribe -> ChatView -> FrameThrottle -> messages()); the latency is from the moment the
    model generated the content's first token to the first frame that shows it. The generation time of token k is
    the request time plus k times the measured time per token (the server paces tokens evenly).
(b) HeldCalls (CallTextReader and the panel events) per format, best of three, against a naive reader that
    re-reads everything held so far on every token: the cost of asking for logprobs, per token and per character,
    and that it stays linear.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

from bench.report import machine, table
from meowgent.agent.loop import Agent
from meowgent.chats.runs import RunRegistry
from meowgent.config import Settings
from meowgent.conversation import Conversation
from meowgent.events import ToolCallProgress
from meowgent.llm.client import OllamaClient
from meowgent.llm.types import ChatChunk, ChatRequest
from meowgent.reply.formats import CallPiece, CallTextReader
from meowgent.reply.held import HeldCalls
from meowgent.ui.state.render import ChatView
from meowgent.ui.state.throttle import FRAME_SECONDS, POLL_SECONDS, FrameThrottle
from tests.scripted_ollama import (
    DEFAULT_MODELS,
    PARSER_MODELS,
    ScriptedOllama,
    generated,
    harmony_call_text,
    tokens_of,
    tool_call_text,
    xml_call_text,
)

MARK = "MARKfirstcontent"  # letters only: the page shows punctuation as character references
TOKEN_DELAY = 0.005
TOKEN_SIZE = 4
SENTENCE = "I'll write the notes now.\n"

FAMILIES: tuple[tuple[str, str, str, Any], ...] = (
    # label, model, Ollama version, call text maker
    ("no parser (text protocol)", "qwen3", "0.17.0", tool_call_text),
    ("qwen3 (JSON in tags), logprobs", "qwen3:4b-instruct", "0.17.0", tool_call_text),
    ("qwen3.5 (XML), logprobs", "qwen3.5", "0.17.0", xml_call_text),
    ("qwen3-coder (XML), logprobs", "qwen3-coder", "0.17.0", xml_call_text),
    ("gpt-oss (harmony), logprobs", "gpt-oss", "0.17.0", harmony_call_text),
    ("qwen3.5 on Ollama 0.12.10 (no logprobs)", "qwen3.5", "0.12.10", xml_call_text),
)


class _TimedClient(OllamaClient):
    """Notes when each reply was asked for and when its last line arrived."""

    asked = 0.0
    finished = 0.0

    def stream_chat(
        self, request: ChatRequest, *, cancel: threading.Event | None = None
    ) -> Generator[ChatChunk, None, None]:
        self.asked = time.perf_counter()
        for chunk in super().stream_chat(request, cancel=cancel):
            if chunk.done:
                self.finished = time.perf_counter()
            yield chunk


def _model_text(model: str, make_call: Any, content: str) -> str:
    call = make_call("write_file", {"path": "notes.md", "content": content})
    if model == "qwen3.5":
        return "Plan.\n</think>\n\n" + SENTENCE + call
    if model == "gpt-oss":
        return "<|channel|>analysis<|message|>Plan.<|end|>" + call
    return SENTENCE + call


def _first_content_token(text: str) -> int:
    """1-based index of the token that holds the first character of MARK."""
    at, seen = text.index(MARK), 0
    for index, token in enumerate(tokens_of(text, token_size=TOKEN_SIZE), start=1):
        seen += len(token)
        if seen > at:
            return index
    raise ValueError("MARK not in text")


def measure_family(model: str, version: str, make_call: Any, content_chars: int) -> tuple[float, float]:
    """(seconds from the first content token to a frame showing it, seconds the call took to write)."""
    content = (MARK + " " + "cats nap in the sun. " * (content_chars // 21 + 1))[:content_chars]
    text = _model_text(model, make_call, content)
    tokens = tokens_of(text, token_size=TOKEN_SIZE)
    with (
        tempfile.TemporaryDirectory() as folder,
        ScriptedOllama({**DEFAULT_MODELS, **PARSER_MODELS}, version=version) as server,
    ):
        server.script(generated(text, token_size=TOKEN_SIZE, delay=TOKEN_DELAY))
        client = _TimedClient(server.url)
        agent = Agent(client, Settings(workspace=Path(folder), data_dir=Path(folder) / "data"))
        runs = RunRegistry()
        conversation = Conversation("bench", model)
        runs.start("bench", lambda cancel: agent.run(conversation, "write my notes", cancel))
        view, throttle, seen_at = ChatView(), FrameThrottle(FRAME_SECONDS), None
        for batch in runs.subscribe("bench", poll=POLL_SECONDS):
            changed = any([view.apply(event) for event in batch])
            drawn = throttle.due(news=bool(batch), status=changed, now=time.monotonic())
            if drawn and seen_at is None and any(MARK in str(message.content) for message in view.messages()):
                seen_at = time.perf_counter()
        client.close()
    per_token = (client.finished - client.asked) / len(tokens)
    generated_at = client.asked + _first_content_token(text) * per_token
    call_seconds = per_token * (len(tokens) - _first_content_token(text))
    if seen_at is None:
        raise RuntimeError(f"{model}: the content never showed")
    return seen_at - generated_at, call_seconds


def latency_section(content_chars: int) -> str:
    rows = []
    for label, model, version, make_call in FAMILIES:
        latency, call_seconds = measure_family(model, version, make_call, content_chars)
        rows.append([label, f"{call_seconds:.2f}", f"{latency * 1000:.0f}"])
    return (
        f"### Model families: first content token to the follower's frame ({content_chars:,}-character write_file, "
        f"{TOKEN_SIZE} characters a token, {TOKEN_DELAY * 1000:g} ms apart)\n\n"
        + table(["family", "call written in (s)", "first content visible after (ms)"], rows)
    )


class _RescanReader:
    """The naive way: keep everything held so far and read it all again on every token."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._sent = 0

    def feed(self, token: str) -> str:
        self._text.append(token)
        reader = CallTextReader()
        shown = "".join(e.text for e in reader.feed("".join(self._text)) if isinstance(e, CallPiece))
        new, self._sent = shown[self._sent :], len(shown)
        return new


def _held_text(make_call: Any, size: int) -> str:
    content = ("All work and no play makes Jack a dull boy. 貓咪 🐱\n" * (size // 40 + 1))[:size]
    return make_call("write_file", {"path": "notes.md", "content": content})


def _read_held(tokens: list[str]) -> tuple[float, str]:
    """Seconds for HeldCalls to read the tokens as the agent does, and the call text it showed."""
    held, shown = HeldCalls(prompt_seconds=Settings().read_timeout), []
    started = time.perf_counter()
    for token in tokens:
        shown.extend(event.text for event in held.tokens(token) if isinstance(event, ToolCallProgress))
    return time.perf_counter() - started, "".join(shown)


def reader_section(sizes: tuple[int, ...], rescan_limit: int) -> str:
    rows = []
    for label, make_call in (("JSON in tags", tool_call_text), ("XML", xml_call_text), ("harmony", harmony_call_text)):
        for size in sizes:
            tokens = tokens_of(_held_text(make_call, size), token_size=TOKEN_SIZE)
            seconds, shown = min(_read_held(tokens) for _ in range(3))
            assert json.loads(shown)["arguments"]["path"] == "notes.md"
            if size <= rescan_limit:
                rescan = _RescanReader()
                started = time.perf_counter()
                again = "".join(rescan.feed(token) for token in tokens)
                naive = time.perf_counter() - started
                assert again == shown, "both readers must show the same text"
                naive_cell, ratio = f"{naive:.3f}", f"{naive / seconds:.0f}×"
            else:
                naive_cell, ratio = "skipped", ""
            rows.append(
                [
                    label,
                    f"{size // 1024} KB",
                    f"{len(tokens):,}",
                    f"{seconds:.3f}",
                    f"{seconds / len(tokens) * 1e6:.2f}",
                    f"{seconds / size * 1e9:.0f}",
                    naive_cell,
                    ratio,
                ]
            )
    return f"### Reading held-back calls from logprobs tokens ({machine()})\n\n" + table(
        ["format", "call size", "tokens", "ours (s)", "µs a token", "ns a char", "re-read (s)", "speed-up"], rows
    )


def _answer_seconds(version: str, text: str) -> float:
    """Seconds for Agent.run to read a qwen3-coder reply holding `text` to its end, on this Ollama version."""
    installed = {**DEFAULT_MODELS, **PARSER_MODELS}
    with tempfile.TemporaryDirectory() as folder, ScriptedOllama(installed, version=version) as server:
        server.script(generated(text, token_size=TOKEN_SIZE))
        client = OllamaClient(server.url)
        agent = Agent(client, Settings(workspace=Path(folder), data_dir=Path(folder) / "data"))
        started = time.perf_counter()
        for _ in agent.run(Conversation("bench", "qwen3-coder"), "write", threading.Event()):
            pass
        seconds = time.perf_counter() - started
        client.close()
    return seconds


def logprobs_section(size: int) -> str:
    text = SENTENCE + _held_text(xml_call_text, size)
    tokens = len(tokens_of(text, token_size=TOKEN_SIZE))
    rows = []
    for label, version in (("without logprobs (Ollama 0.12.10)", "0.12.10"), ("with logprobs (0.17.0)", "0.17.0")):
        seconds = min(_answer_seconds(version, text) for _ in range(3))
        rows.append([label, f"{seconds:.2f}", f"{tokens / seconds:,.0f}"])
    return (
        f"### One qwen3-coder reply with a {size // 1024} KB XML write_file ({tokens:,} tokens, no delay), "
        "read by Agent.run, best of three\n\n"
        + table(["request", "seconds", "tokens/s"], rows)
        + "\nThe difference is what logprobs cost end to end: bigger lines from the server, their parsing in the "
        "ollama client, and the reader.\n"
    )


def run(*, quick: bool = False) -> str:
    sizes = (16 * 1024, 64 * 1024) if quick else (16 * 1024, 64 * 1024, 256 * 1024)
    return "\n".join(
        [
            latency_section(800 if quick else 2_000),
            reader_section(sizes, rescan_limit=16 * 1024),
            logprobs_section(16 * 1024 if quick else 64 * 1024),
        ]
    )


if __name__ == "__main__":
    print(run(quick=False))
