"""A scripted OpenAI-compatible server: a real HTTP server on loopback speaking the SSE wire of vLLM or llama.cpp.

Tests point the real `openai` SDK (through `meowgent.llm.openai_client`) at it. Ported from the servers' sources:
- vLLM (`vllm/entrypoints/openai/serving_chat.py`): a first chunk with `{"role": "assistant", "content": ""}`; a
  call's first fragment has its `id` (`chatcmpl-tool-…`), `type` and `function.name` and no `arguments`, then
  `arguments` pieces with the `index` only; the last choice chunk has `finish_reason` ("tool_calls" when a call was
  streamed); with `stream_options.include_usage` a chunk with `choices: []` and `usage`; an exception in the
  generator becomes `data: {"error": {...}}`, and every stream ends with `data: [DONE]`. /v1/models lists
  `max_model_len`.
- llama.cpp (`tools/server`, `format_oai_sse`, `common_chat_msg_diff`): the first chunk has `"content": null`; a
  call's first fragment has `id`, `type`, `name` and `"arguments": ""`; `reasoning_content` for thinking; the final
  chunk carries `finish_reason`, `usage` and `timings` together. `server-context.cpp`: /v1/models gives each model a
  `meta` with `n_ctx_train` (the window the model was trained on, not the one it runs with); /props has
  `default_generation_settings.n_ctx` (the slot's window) and `chat_template_caps.supports_tools` (false: the
  template has no tools, and the server drops `tools` from every request); /slots says which slot is processing.

Both count the prompt as a tokenizer would (`count_prompt`): the messages and the tools' schemas, which the chat
template writes into the prompt.

    with ScriptedOpenAI(dialect="vllm") as server:
        server.script(Turn(Reasoning("hmm"), Content("Hi"), Calls(("read_file", {"path": "a"}))))
        OpenAIClient(server.url)  # http://127.0.0.1:PORT/v1

Quirks of a turn: `Calls(..., whole=True)` sends each call's arguments in one delta, `same_index=True` numbers every
call 0 (a new id starts the next). Faults: `ErrorEvent` (an error event mid-stream), `ErrorField` (llama.cpp's
`error:` line, then the end), `Cut` (the connection closes mid-stream), `Stall` (silence), `Status` (an HTTP error
before the stream, e.g. 429 with Retry-After). A server with `api_key` answers 401 to any other key, echoing the key
it got as OpenAI's own API does.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.scripted_ollama import Stall, _Dropped, _Handler, _Server, tokens_of

Dialect = Literal["vllm", "llamacpp"]
DEFAULT_MODELS: Mapping[str, int] = {"Qwen/Qwen3-8B": 32768}
"""Served model names and their context window (`max_model_len`, or llama.cpp's `n_ctx`)."""


@dataclass(frozen=True)
class Content:
    text: str
    token_size: int = 4


@dataclass(frozen=True)
class Reasoning:
    text: str
    token_size: int = 4


@dataclass(frozen=True)
class Calls:
    """Tool calls the server's parser streams, each as (name, arguments)."""

    calls: tuple[tuple[str, Mapping[str, Any]], ...]
    piece: int = 8
    """Characters of arguments per fragment."""
    whole: bool = False
    same_index: bool = False

    def __init__(
        self, *calls: tuple[str, Mapping[str, Any]], piece: int = 8, whole: bool = False, same_index: bool = False
    ):
        object.__setattr__(self, "calls", tuple(calls))
        object.__setattr__(self, "piece", piece)
        object.__setattr__(self, "whole", whole)
        object.__setattr__(self, "same_index", same_index)


@dataclass(frozen=True)
class ErrorEvent:
    message: str


@dataclass(frozen=True)
class ErrorField:
    """llama.cpp builds whose stream error is `server_sent_event(sink, "error", error_data)`: an `error: {...}` line
    (a field SSE readers skip), then the stream ends without `[DONE]`."""

    message: str


@dataclass(frozen=True)
class _Line:
    """An SSE line written as it is, not as `data:`."""

    text: str


@dataclass(frozen=True)
class Cut:
    """Close the connection without ending the stream."""


@dataclass(frozen=True)
class Status:
    code: int
    message: str = "busy"
    retry_after: str | None = None


Step = Content | Reasoning | Calls | ErrorEvent | ErrorField | Cut | Stall | Status


@dataclass(frozen=True)
class Turn:
    steps: tuple[Step, ...] = ()
    delay: float = 0.0
    """Seconds between chunks."""

    def __init__(self, *steps: Step, delay: float = 0.0) -> None:
        object.__setattr__(self, "steps", tuple(steps))
        object.__setattr__(self, "delay", delay)


@dataclass
class ScriptedOpenAI:
    """An OpenAI-compatible server on 127.0.0.1 whose chat replies are scripted. Thread-safe."""

    dialect: Dialect = "vllm"
    models: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_MODELS))
    api_key: str | None = None
    port: int = 0
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Every request as (path, JSON body); GET requests have an empty body."""
    headers: list[dict[str, str]] = field(default_factory=list)
    """Every request's headers, names in lower case."""
    disconnects: int = 0
    """Streams the client closed before they were finished."""
    n_ctx_train: int = 32768
    """llama.cpp: the window the model was trained on, in `meta` of /v1/models."""
    supports_tools: bool = True
    """llama.cpp: whether the chat template takes tools (/props); without, `tools` are dropped."""
    streaming: int = 0
    """Replies being streamed now: llama.cpp's /slots says its slot is processing."""

    def __post_init__(self) -> None:
        self._turns: deque[Turn] = deque()
        self._lock = threading.Condition()
        self._httpd: _Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedOpenAI:
        httpd = _Server(("127.0.0.1", self.port), self)  # type: ignore[arg-type]  # the owner's interface
        httpd.RequestHandlerClass = _OpenAIHandler
        self.port, self._httpd = httpd.server_address[1], httpd
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening and cut every open connection, as a crashed server would."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.stopping.set()
            httpd.shutdown()
            httpd.server_close()
            httpd.cut_connections()

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def script(self, *turns: Turn | Step | str) -> None:
        """Queue replies for the next chat requests; a bare step or string is a one-step turn."""
        wrapped = [t if isinstance(t, Turn) else Turn(Content(t) if isinstance(t, str) else t) for t in turns]
        with self._lock:
            self._turns.extend(wrapped)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [body for path, body in self.requests if path.endswith("/chat/completions")]

    def wait_for_disconnects(self, count: int = 1, timeout: float = 30.0) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: self.disconnects >= count, timeout)

    # Called from request threads (the interface tests/scripted_ollama.py's handler expects).

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append((path, body))

    def _count_disconnect(self) -> None:
        with self._lock:
            self.disconnects += 1
            self._lock.notify_all()

    def _next_turn(self) -> Turn:
        with self._lock:
            return self._turns.popleft() if self._turns else Turn(Content("Meow."))


class _OpenAIHandler(_Handler):
    server: _Server

    def do_GET(self) -> None:
        if self._authorized():
            self._route({"/v1/models": self._models, "/props": self._props, "/slots": self._slots})

    def do_POST(self) -> None:
        if self._authorized():
            self._route({"/v1/chat/completions": self._chat})

    @property
    def owner(self) -> ScriptedOpenAI:
        return self.server.owner  # type: ignore[return-value]

    def _authorized(self) -> bool:
        key = self.owner.api_key
        got = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        with self.owner._lock:
            self.owner.headers.append({name.lower(): value for name, value in self.headers.items()})
        if key is None or got == key:
            return True
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        message = f"Incorrect API key provided: {got}."
        self._send_json(401, {"error": {"message": message, "type": "invalid_request_error", "code": 401}})
        return False

    def _models(self, body: dict[str, Any]) -> None:
        if self.owner.dialect == "vllm":
            data = [
                {
                    "id": name,
                    "object": "model",
                    "created": 1,
                    "owned_by": "vllm",
                    "root": name,
                    "parent": None,
                    "max_model_len": context,
                    "permission": [],
                }
                for name, context in self.owner.models.items()
            ]
        else:
            meta = {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": self.owner.n_ctx_train, "n_params": 494032768}
            data = [
                {"id": name, "object": "model", "created": 1, "owned_by": "llamacpp", "meta": meta}
                for name in self.owner.models
            ]
        self._send_json(200, {"object": "list", "data": data})

    def _props(self, body: dict[str, Any]) -> None:
        if self.owner.dialect != "llamacpp":
            self._send(404, "Not Found", "text/plain")
            return
        caps = {"supports_tools": self.owner.supports_tools, "supports_tool_calls": self.owner.supports_tools}
        props = {
            "default_generation_settings": {"params": {"temperature": 0.8}, "n_ctx": self._n_ctx()},
            "total_slots": 1,
            "model_alias": next(iter(self.owner.models), ""),
            "chat_template_caps": {**caps, "supports_system_role": True, "supports_parallel_tool_calls": False},
        }
        self._send_json(200, props)

    def _slots(self, body: dict[str, Any]) -> None:
        if self.owner.dialect != "llamacpp":
            self._send(404, "Not Found", "text/plain")
            return
        with self.owner._lock:
            processing = self.owner.streaming > 0
        self._send_json(200, [{"id": 0, "n_ctx": self._n_ctx(), "is_processing": processing}])

    def _n_ctx(self) -> int:
        return next(iter(self.owner.models.values()), 4096)

    def _chat(self, body: dict[str, Any]) -> None:
        model = body.get("model")
        if model not in self.owner.models:
            text = f"The model `{model}` does not exist."
            self._send_json(404, {"error": {"message": text, "type": "NotFoundError", "code": 404}})
            return
        turn = self.owner._next_turn()
        first = turn.steps[0] if turn.steps else None
        if isinstance(first, Status):
            headers = {"Retry-After": first.retry_after} if first.retry_after else {}
            self._send_error(first.code, first.message, headers)
            return
        self._begin_sse()
        usage = (body.get("stream_options") or {}).get("include_usage")
        if self.owner.dialect == "llamacpp" and not self.owner.supports_tools:
            body = {key: value for key, value in body.items() if key != "tools"}  # dropped without a word
        chunks = _chunks(turn, self.owner.dialect, model=model, usage=bool(usage), prompt=count_prompt(body))
        with self.owner._lock:
            self.owner.streaming += 1
        try:
            for index, chunk in enumerate(chunks):
                if index and turn.delay:
                    self._wait(turn.delay)
                if isinstance(chunk, Stall):
                    self._wait(chunk.seconds)
                elif isinstance(chunk, Cut):
                    raise _Dropped
                elif isinstance(chunk, _Line):
                    self._write_chunk(f"{chunk.text}\n\n".encode())
                else:
                    self._write_chunk(f"data: {chunk}\n\n".encode())
            self._write_chunk(b"")
        finally:
            with self.owner._lock:
                self.owner.streaming -= 1

    def _send_error(self, code: int, message: str, headers: Mapping[str, str]) -> None:
        data = json.dumps({"error": {"message": message, "type": "ServiceUnavailableError", "code": code}}).encode()
        self.send_response(code)
        for name, value in {**headers, "Content-Type": "application/json", "Content-Length": str(len(data))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _begin_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()


def count_prompt(body: Mapping[str, Any]) -> int:
    """The prompt's tokens as the server counts them, with a tokenizer's rate for JSON-heavy text (3 characters a
    token): every message, and every tool's schema, which the template writes into the prompt with words around it."""
    messages = sum(4 + len(json.dumps(message, ensure_ascii=False)) // 3 for message in body.get("messages", ()))
    tools = body.get("tools") or ()
    schemas = 100 + sum(len(json.dumps(tool, ensure_ascii=False)) // 3 for tool in tools) if tools else 0
    return messages + schemas


def _chunks(turn: Turn, dialect: Dialect, *, model: str, usage: bool, prompt: int) -> Iterator[str | Stall | Cut]:
    """The SSE data of one reply (JSON text, or "[DONE]"), with the faults in place."""
    ident = f"chatcmpl-{uuid.uuid4().hex}"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return json.dumps(
            {"id": ident, "object": "chat.completion.chunk", "created": 1, "model": model, "choices": [choice], **extra}
        )

    yield chunk({"role": "assistant", "content": "" if dialect == "vllm" else None})
    generated = 0
    called = False
    for step in turn.steps:
        if isinstance(step, (Stall, Cut)):
            yield step
            if isinstance(step, Cut):
                return
        elif isinstance(step, ErrorEvent):
            # vLLM's create_streaming_error_response, then its [DONE] (newer llama.cpp builds send the same shape).
            yield json.dumps(
                {"error": {"message": step.message, "type": "BadRequestError", "param": None, "code": 400}}
            )
            yield "[DONE]"
            return
        elif isinstance(step, ErrorField):
            yield _Line("error: " + json.dumps({"code": 500, "message": step.message, "type": "server_error"}))
            return
        elif isinstance(step, (Content, Reasoning)):
            key = "content" if isinstance(step, Content) else "reasoning_content"
            for token in tokens_of(step.text, token_size=step.token_size):
                generated += 1
                yield chunk({key: token})
        elif isinstance(step, Calls):
            called = True
            for number, (name, arguments) in enumerate(step.calls):
                index = 0 if step.same_index else number
                call_id = f"chatcmpl-tool-{uuid.uuid4().hex}" if dialect == "vllm" else uuid.uuid4().hex[:32]
                function: dict[str, Any] = {"name": name} if dialect == "vllm" else {"name": name, "arguments": ""}
                yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]})
                text = json.dumps(dict(arguments), ensure_ascii=False)
                pieces = [text] if step.whole else [text[i : i + step.piece] for i in range(0, len(text), step.piece)]
                for piece in pieces:
                    generated += 1
                    yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    counts = {"prompt_tokens": prompt, "completion_tokens": generated, "total_tokens": prompt + generated}
    finish = "tool_calls" if called else "stop"
    if dialect == "llamacpp":
        yield chunk({}, finish, usage=counts, timings={"predicted_n": generated})
    else:
        yield chunk({}, finish)
        if usage:
            yield json.dumps(
                {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": model,
                    "choices": [],
                    "usage": counts,
                }
            )
    yield "[DONE]"
