"""The only module that talks to an OpenAI-compatible server (vLLM, llama.cpp's llama-server, LM Studio, a LiteLLM
proxy), through the official `openai` SDK: it parses the SSE stream, we never do.

Calls arrive as `delta.tool_calls` fragments, read by `ToolCallDeltas` (llm/deltas.py) into live text the page shows
as it shows Ollama's held-back calls (`Holding.SHOWN`); the calls run at the reply's end. Every failure leaves this
module as a `ModelError` from the funnel in llm/errors.py, naming the host and never the API key.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import openai

from meowgent.llm.deltas import ToolCallDeltas
from meowgent.llm.errors import (
    FAILURES,
    NO_DOWNLOAD,
    OPENAI_CASE,
    RETRY_STATUSES,
    ModelError,
    ModelNotFound,
    StreamStalled,
    busy,
    missing_model,
    openai_error,
    openai_failure,
    stalled_at,
)
from meowgent.llm.hangup import ReplyConnection
from meowgent.llm.serverfacts import ServerFacts, ask_server, listed_windows
from meowgent.llm.types import ChatChunk, ChatRequest, Health, Holding, ModelInfo, ModelProfile, PullProgress
from meowgent.llm.watch import watched

TRIES = 3
"""Requests tried while the server answers 429 or 503, before saying it is busy."""
RETRY_AFTER_CAP = 10.0
"""Longest pause between tries, whatever `Retry-After` asks: well under a read timeout, so no pause is a stall."""
NO_KEY = "none"
"""The key sent to a server that needs none (the SDK requires one); vLLM and llama.cpp without `--api-key` ignore it."""
_CAPABILITIES = frozenset({"completion", "tools"})
_NO_TOOLS = frozenset({"completion"})
_NO_TOOL_PARSER = ("tool-call-parser", "enable-auto-tool-choice", "--jinja")
"""Words of vLLM's and llama.cpp's refusal of `tools` when they run without a tool parser."""


class OpenAIClient:
    """Talks to one OpenAI-compatible server; safe to share between threads."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 120.0,
        tries: int = TRIES,
        retry_cap: float = RETRY_AFTER_CAP,
    ) -> None:
        """`url` is the API's base, e.g. http://gpu-box:8000/v1."""
        self.host: str = shown_url(url)
        self._key = api_key or None
        self._read_timeout = read_timeout
        self._tries = max(1, tries)
        self._retry_cap = retry_cap
        self._http = httpx.Client(timeout=httpx.Timeout(read_timeout, connect=connect_timeout))
        try:
            self._client = openai.OpenAI(
                base_url=url.rstrip("/"), api_key=self._key or NO_KEY, max_retries=0, http_client=self._http
            )
        except (ValueError, httpx.InvalidURL, openai.OpenAIError) as exc:
            raise ModelError(
                f"'{self.host}' isn't an address a model server can be reached at. Use one like "
                "http://gpu-box:8000/v1.",
                kind="bad_host",
                values={"host": self.host, "case": OPENAI_CASE},
            ) from exc
        self._root = _api_root(url)
        self._lock = threading.Lock()
        self._models: dict[str, ModelInfo] = {}
        self._text_protocol: set[str] = set()  # models this server offers no tool parser for

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"OpenAIClient({self.host!r})"  # never the key

    def stream_chat(
        self, request: ChatRequest, *, cancel: threading.Event | None = None
    ) -> Generator[ChatChunk, None, None]:
        """Stream one reply; closing the generator closes the HTTP stream, so the server aborts the generation.

        Setting `cancel` ends the stream within a tenth of a second, even during a pause between tries; silence
        longer than the read timeout is a stall (llm/watch.py), as with Ollama, said with this server's address.
        """
        if cancel is None:
            return self._chat(request, threading.Event(), ReplyConnection())
        connection = ReplyConnection()
        chunks = self._chat(request, cancel, connection)
        return self._named(
            watched(chunks, cancel, stall_after=self._read_timeout, held_stall_after=None, hang_up=connection.hang_up)
        )

    def _named(self, stream: Generator[ChatChunk, None, None]) -> Generator[ChatChunk, None, None]:
        """The watcher's stall, said with this server's address (it knows no host)."""
        try:
            yield from stream
        except StreamStalled as exc:
            raise stalled_at(self.host, exc.seconds) from None

    def _chat(
        self, request: ChatRequest, cancel: threading.Event, connection: ReplyConnection
    ) -> Generator[ChatChunk, None, None]:
        """The reply's chunks; `connection` learns the socket when the response starts (the SDK takes no trace)."""
        if not request.model:
            raise ModelNotFound("")
        body = chat_body(request)
        with self._failures(model=request.model, streaming=True):
            stream = self._open(body, model=request.model, cancel=cancel)
            if stream is None:  # stopped while waiting to try again
                return
            deltas = ToolCallDeltas()
            final: Any = None
            usage: Any = None
            with stream, connection.held(stream.response):
                for part in stream:
                    usage = part.usage or usage
                    for choice in part.choices:  # one: we never ask for n > 1
                        delta = choice.delta
                        content, thinking = delta.content or "", _reasoning(delta)
                        if content or thinking:
                            yield ChatChunk(content, thinking)
                        if delta.tool_calls:
                            live = "".join(
                                [
                                    deltas.feed(
                                        call.index,
                                        call.id,
                                        call.function.name if call.function else None,
                                        call.function.arguments if call.function else None,
                                    )
                                    for call in delta.tool_calls
                                ]
                            )
                            if live:
                                yield ChatChunk(token=live)
                        final = choice.finish_reason or final
            rest, calls = deltas.finish()
        if final is None:
            raise openai_failure(httpx.RemoteProtocolError("no finish"), host=self.host, read_timeout=0, streaming=True)
        if rest:
            yield ChatChunk(token=rest)
        yield ChatChunk(
            tool_calls=calls,
            done=True,
            done_reason=final,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
        )

    def _open(self, body: dict[str, Any], *, model: str, cancel: threading.Event) -> Any:
        """The stream of the reply, tried again while the server is busy; None if `cancel` was set meanwhile."""
        for attempt in range(1, self._tries + 1):
            try:
                return self._client.chat.completions.create(**body)
            except openai.APIStatusError as exc:
                if exc.status_code not in RETRY_STATUSES:
                    if exc.status_code in (400, 500) and any(w in _error_text(exc) for w in _NO_TOOL_PARSER):
                        raise self._no_tool_parser(model) from exc
                    raise
                if attempt == self._tries:
                    raise busy(self.host, status=exc.status_code, tries=attempt) from exc
                pause = retry_delay(exc.response.headers.get("retry-after"), attempt=attempt, cap=self._retry_cap)
                if cancel.wait(pause):
                    return None
        raise AssertionError("unreachable")  # the loop returns or raises

    def _no_tool_parser(self, model: str) -> ModelError:
        with self._lock:
            self._text_protocol.add(model)
        return ModelError(
            f"The server at {self.host} has no tool parser for '{model}', so Meowgent describes the tools in the "
            "prompt from now on. Send the message again.",
            kind="no_tool_parser",
            values={"host": self.host, "model": model},
        )

    def list_models(self) -> list[ModelInfo]:
        """The served models from /v1/models, with the context window the server runs each with and whether its
        template takes tools, where it says (llm/serverfacts.py); else the window is a default (`num_ctx`)."""
        with self._failures(streaming=False):
            entries = [entry.model_dump() for entry in self._client.models.list().data]
        names = [entry["id"] for entry in entries]
        windows = listed_windows(entries)
        facts = ServerFacts()
        if any("max_model_len" not in entry for entry in entries):  # not vLLM, which says all in the listing
            headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
            facts = ask_server(self._http, self._root, headers=headers, names=names)
        windows = {**facts.windows, **windows}
        capabilities = _CAPABILITIES if facts.tools is not False else _NO_TOOLS
        models = [
            ModelInfo(
                name=name,
                capabilities=capabilities,
                context_length=windows.get(name),
                parameter_size=None,
                quantization=None,
                size_bytes=None,
                family=None,
                window_from="server" if name in windows else "default",
            )
            for name in names
        ]
        with self._lock:
            self._models = {model.name: model for model in models}
        return models

    def show(self, model: str) -> ModelInfo:
        if not model:
            raise ModelNotFound("")
        with self._lock:
            known = self._models.get(model)
        if known is None:
            known = next((m for m in self.list_models() if m.name == model), None)
        if known is None:
            raise missing_model(model, host=self.host)
        return known

    def profile(self, model: str) -> ModelProfile:
        """Native tools, their text live from `delta.tool_calls` (SHOWN); the text protocol where the server has
        refused tools for want of a parser, or says its template takes none (it would drop them silently)."""
        info = self.show(model)
        with self._lock:
            text = model in self._text_protocol or "tools" not in info.capabilities
        if text:
            return ModelProfile(info, native_tools=False, holding=Holding.NONE)
        return ModelProfile(info, native_tools=True, holding=Holding.SHOWN, told_format=True)

    def health(self, model: str | None = None) -> Health:
        """Whether the server answers (and, given `model`, serves it). Never raises."""
        try:
            if model:
                self.show(model)
            else:
                self.list_models()
        except ModelError as exc:
            return Health(ok=False, version=None, message=exc.message, kind=exc.kind, values=exc.values)
        return Health(ok=True, version=None, message=f"Connected to {self.host}.", values={"host": self.host})

    def pull(self, model: str) -> Iterator[PullProgress]:
        raise ModelError(
            f"The server at {self.host} can't download models; start it with the model you want.",
            kind=NO_DOWNLOAD,
            values={"host": self.host, "model": model},
        )

    @contextmanager
    def _failures(self, *, model: str | None = None, streaming: bool) -> Iterator[None]:
        """Turn what the SDK raises into a ModelError."""
        try:
            yield
        except openai.APIStatusError as exc:
            raise openai_error(
                exc.status_code, _error_text(exc), host=self.host, model=model, secret=self._key
            ) from None
        except openai.APIConnectionError as exc:  # the httpx error is its cause (none for some timeouts)
            timeout = isinstance(exc, openai.APITimeoutError) or not isinstance(exc.__cause__, Exception)
            cause = httpx.ReadTimeout("") if timeout else exc.__cause__
            raise openai_failure(cause, host=self.host, read_timeout=self._read_timeout, streaming=streaming) from None
        except openai.APIError as exc:  # an error event in a stream that had started
            raise openai_error(-1, _error_text(exc), host=self.host, model=model, secret=self._key) from None
        except FAILURES as exc:
            raise openai_failure(exc, host=self.host, read_timeout=self._read_timeout, streaming=streaming) from None


def chat_body(request: ChatRequest) -> dict[str, Any]:
    """The arguments of `chat.completions.create` for `request` (pure).

    `enable_thinking` goes to the chat template (vLLM and llama.cpp pass `chat_template_kwargs` to it; a template
    without the variable ignores it); usage comes in the last chunk.
    """
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [{"role": "system", "content": request.system}, *openai_messages(request.messages)],
        "stream": True,
        "stream_options": {"include_usage": True},
        "extra_body": {"chat_template_kwargs": {"enable_thinking": request.think}},
    }
    if request.tools:
        body["tools"] = [{"type": "function", "function": spec.as_json()} for spec in request.tools]
    return body


def openai_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as the Chat Completions API takes it: calls with ids, each result with its call's id.

    A call keeps its id if the transcript has one; otherwise it gets a stable one from its name, arguments and
    how many such calls came before, so the same transcript always reads the same (the server's prompt cache).
    A result whose call is not in the transcript (cut to fit the context) goes in a user message, as for a model
    that cannot read role `tool`.
    """
    out: list[dict[str, Any]] = []
    waiting: deque[str] = deque()  # ids of the last calls, for their results in order
    seen: dict[str, int] = {}
    for message in messages:
        role = message["role"]
        if role == "tool":
            if waiting:
                out.append({"role": "tool", "tool_call_id": waiting.popleft(), "content": message["content"]})
            else:
                name = message.get("tool_name", "")
                out.append(
                    {
                        "role": "user",
                        "content": f'<tool_response name="{name}">\n{message["content"]}\n</tool_response>',
                    }
                )
            continue
        wire: dict[str, Any] = {"role": role, "content": message.get("content") or ""}
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            waiting.clear()
            wire["tool_calls"] = []
            for call in calls:
                function = call.get("function", {})
                arguments = json.dumps(function.get("arguments") or {}, ensure_ascii=False, sort_keys=True)
                call_id = call.get("id") or _stable_id(function.get("name", ""), arguments, seen)
                waiting.append(call_id)
                wire["tool_calls"].append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": function.get("name", ""), "arguments": arguments},
                    }
                )
        out.append(wire)
    return out


def retry_delay(header: str | None, *, attempt: int, cap: float) -> float:
    """Seconds to wait before try `attempt` + 1: the server's `Retry-After` (seconds or an HTTP date), else 0.5 s
    doubling; never more than `cap`."""
    delay = 0.5 * 2 ** (attempt - 1)
    if header:
        try:
            delay = float(header)
        except ValueError:
            with contextlib.suppress(TypeError, ValueError):
                delay = email.utils.parsedate_to_datetime(header).timestamp() - time.time()
    return min(max(delay, 0.0), cap)


def shown_url(url: str) -> str:
    """The server's address as messages and the page show it: without a login or a query."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname or "", parts.port
    except ValueError:  # "http://[gpu-box" or a port out of range: shown as given, and refused when asked
        return url.strip()
    netloc = f"[{host}]" if ":" in host else host
    if port:
        netloc += f":{port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", "")) or url


def _api_root(url: str) -> str:
    """The server's root, where llama.cpp serves /props: the base URL without its `/v1`."""
    base = url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _stable_id(name: str, arguments: str, seen: dict[str, int]) -> str:
    digest = hashlib.sha256(f"{name}\0{arguments}".encode()).hexdigest()[:16]
    seen[digest] = seen.get(digest, 0) + 1
    return f"call_{digest}_{seen[digest]}"


def _reasoning(delta: Any) -> str:
    """Thinking: vLLM's and llama.cpp's `reasoning_content`, or the newer `reasoning`: fields the SDK does not
    declare, so read from its extras (a `getattr` of a missing one raises inside pydantic, 4 µs a chunk)."""
    extra = delta.model_extra
    text = (extra.get("reasoning_content") or extra.get("reasoning")) if extra else None
    return text if isinstance(text, str) else ""


def _error_text(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, Mapping) else inner
        if message:
            return str(message)
    if isinstance(exc, openai.APIStatusError):
        return exc.response.text or exc.response.reason_phrase
    return exc.message
