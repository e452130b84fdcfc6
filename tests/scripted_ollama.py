"""A scripted Ollama: a real HTTP server on loopback that speaks Ollama's wire format, with replies you queue.

Tests, benchmarks and browser tests point the real `ollama` client (through `meowgent.llm.client`) at it. Standalone:
`python -m tests.scripted_ollama --port 11434 --demo` serves a reply with a tool call, then a final answer, forever
(`--parser-models` installs PARSER_MODELS too).

    with ScriptedOllama() as server:
        server.script(reply("Hello!", chunk_size=2), Turn(Thinking("hmm"), NativeToolCalls([...])))
        ...  # point OllamaClient(server.url) at it
        assert server.chat_requests[0]["model"] == "qwen3"

Steps: `Text`, `Thinking` and `NativeToolCalls` are output Ollama has already parsed and are sent as they are.
`Generated` tokens are what the model itself writes, markup and all (`generated(text)` cuts text into tokens;
`tool_call_text`, `xml_call_text` and `harmony_call_text` write a call in each family's format), and go through the
requested model's parsers like in Ollama. `ErrorLine`, `Drop`, `Stall` and `Status` are faults.

Replies: each /api/chat request takes the next queued Turn (FIFO). With the queue empty it answers with the
`fallback` turns in turn, by default the single reply DEFAULT_REPLY. A request Ollama itself would refuse (unknown
model, `think` or `tools` the model can't do) gets Ollama's error and takes no turn.

Models: DEFAULT_MODELS are installed at start and have no builtin parser, so `Generated` tokens stream as they are,
except through Ollama's generic parsers: `<think>` tags when `think` is on and the template has them, and calls after
the template's tag (`<tool_call>`, or `{` for llama3.2) when `tools` are sent. PARSER_MODELS have the Modelfile `PARSER`
line of the model Ollama's library ships, and run every `Generated` token through a port of that parser
(tests/ollama_parsers.py); install them with `ScriptedOllama(models={**DEFAULT_MODELS, **PARSER_MODELS})`, or pull
them (they are in DEFAULT_LIBRARY):
- `qwen3:4b`: PARSER qwen3-thinking (tools, thinking): thinking first, JSON calls in `<tool_call>` tags.
- `qwen3:4b-instruct`: PARSER qwen3 (tools): JSON calls in `<tool_call>` tags.
- `qwen3.5`: PARSER/RENDERER qwen3.5 (tools, thinking): thinking first, XML calls
  `<tool_call><function=NAME><parameter=P>value</parameter></function></tool_call>`; JSON in the tags is an error.
- `qwen3-coder`: PARSER/RENDERER qwen3-coder (tools): the same XML calls, no thinking.
- `gpt-oss`: PARSER/RENDERER harmony (tools, thinking): `<|channel|>analysis<|message|>...<|end|>` is thinking, a
  `commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>` message is a call, sent when generation
  ends.

Generated tokens go out as Ollama's ChatHandler sends them (server/routes.go, ported in tests/ollama_chat.py): a
chunk only when the parser gives content, thinking or calls, so nothing at all while it holds a call; with
`"logprobs": true` (honoured from Ollama LOGPROBS_SINCE, compared with `version`) one chunk per token, whose
`logprobs` carry the token's text even when its content is empty. A call the parser cannot read ends the stream with
its `{"error": ...}` line.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import re
import select
import socket
import socketserver
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.ollama_chat import Generation
from tests.ollama_parsers import ParseError

DEFAULT_REPLY = "Meow. (ScriptedOllama has no scripted reply left, so this is its default answer.)"

DEFAULT_VERSION = "0.17.0"
"""What /api/version answers unless ScriptedOllama(version=...) says otherwise: a recent release, so `logprobs` work."""

LOGPROBS_SINCE = "0.12.11"
"""The first Ollama release whose /api/chat and /api/generate honour `logprobs` and `top_logprobs`; older ones ignore
the fields, as Go ignores unknown JSON fields."""

CHATML_TEMPLATE = (
    "{{- if .Tools }}<|im_start|>system\n# Tools\n{{ range .Tools }}{{ . }}{{ end }}\nFor each function call, return "
    'a json object within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
    "<args-json-object>}\n</tool_call><|im_end|>\n{{ end }}"
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}"
    "{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
)
"""A Qwen-style template; with it the generic parsers read `<think>` tags (when `think` is on) and wait for
`<tool_call>` (when `tools` are sent)."""

LLAMA_TEMPLATE = (
    "{{- range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>\n\n{{ .Content }}<|eot_id|>{{ end }}"
    '{{- if .ToolCalls }}{"name": "{{ .Function.Name }}", "parameters": {{ .Function.Arguments }}}{{ end }}'
    "<|start_header_id|>assistant<|end_header_id|>\n\n"
)
"""A Llama-3-style template, whose tool calls are bare JSON objects; the generic tool parser waits for `{`."""

RENDERER_TEMPLATE = "{{ .Prompt }}"
"""What `ollama show` gives as the template of a model with a RENDERER: the renderer writes the prompt in Go."""


@dataclass(frozen=True)
class Model:
    """An installed (or downloadable) model as /api/tags and /api/show describe it."""

    capabilities: tuple[str, ...] = ("completion",)
    context_length: int = 8192
    parameter_size: str = "3.2B"
    quantization: str = "Q4_K_M"
    family: str = "llama"
    size: int = 2_000_000_000
    parser: str | None = None
    """The Modelfile's `PARSER` (tests/ollama_parsers.py parser_for), run on every `Generated` token."""
    renderer: str | None = None
    """The Modelfile's `RENDERER`; only shown, ScriptedOllama renders no prompts."""
    template: str = CHATML_TEMPLATE


DEFAULT_MODELS: Mapping[str, Model] = {
    "qwen3": Model(("completion", "tools", "thinking"), 40960, "8.2B", "Q4_K_M", "qwen3", 5_225_387_923),
    "llama3.2": Model(
        ("completion", "tools"), 131072, "3.2B", "Q4_K_M", "llama", 2_019_393_189, template=LLAMA_TEMPLATE
    ),
    "llama-plain": Model(("completion",), 8192, "8.0B", "Q4_0", "llama", 4_661_224_676, template=LLAMA_TEMPLATE),
}
"""Installed at start, none with a builtin parser: tools and thinking, tools only, and plain completion."""

PARSER_MODELS: Mapping[str, Model] = {
    "qwen3:4b": Model(
        ("completion", "tools", "thinking"), 262144, "4.0B", "Q4_K_M", "qwen3", 2_497_293_931, parser="qwen3-thinking"
    ),
    "qwen3:4b-instruct": Model(
        ("completion", "tools"), 262144, "4.0B", "Q4_K_M", "qwen3", 2_497_293_918, parser="qwen3"
    ),
    "qwen3.5": Model(
        ("completion", "tools", "thinking"),
        262144,
        "9.7B",
        "Q4_K_M",
        "qwen35",
        6_591_254_322,
        parser="qwen3.5",
        renderer="qwen3.5",
        template=RENDERER_TEMPLATE,
    ),
    "qwen3-coder": Model(
        ("completion", "tools"),
        262144,
        "30.5B",
        "Q4_K_M",
        "qwen3moe",
        18_556_701_140,
        parser="qwen3-coder",
        renderer="qwen3-coder",
        template=RENDERER_TEMPLATE,
    ),
    "gpt-oss": Model(
        ("completion", "tools", "thinking"),
        131072,
        "20.9B",
        "MXFP4",
        "gptoss",
        13_780_173_724,
        parser="harmony",
        renderer="harmony",
        template=RENDERER_TEMPLATE,
    ),
}
"""Models with a builtin parser, as Ollama's library ships them; see the module docstring."""

DEFAULT_LIBRARY: Mapping[str, Model] = {
    **DEFAULT_MODELS,
    **PARSER_MODELS,
    "qwen3:0.6b": Model(("completion", "tools", "thinking"), 40960, "751.63M", "Q4_K_M", "qwen3", 522_653_767),
}
"""What /api/pull can download; any other name fails the way Ollama does for a name not in its library."""


# Steps of a turn.


@dataclass(frozen=True)
class Text:
    """Reply text (`message.content`)."""

    text: str


@dataclass(frozen=True)
class Thinking:
    """Reasoning text (`message.thinking`)."""

    text: str


@dataclass(frozen=True)
class NativeToolCalls:
    """One line whose `message.tool_calls` holds these calls, each {"name": ..., "arguments": {...}}."""

    calls: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class ErrorLine:
    """Ollama's `{"error": ...}` line, which ends the stream; as the very first output it is an HTTP 500 instead."""

    message: str


@dataclass(frozen=True)
class Drop:
    """Close the connection without finishing the response."""


@dataclass(frozen=True)
class Stall:
    """Send nothing for this many seconds, then go on."""

    seconds: float


@dataclass(frozen=True)
class Hold:
    """Send nothing until the test sets `release` (at most `most` seconds), then go on: an answer that is still
    streaming for as long as the test needs, however slow the machine."""

    release: threading.Event
    most: float = 60.0


@dataclass(frozen=True)
class Status:
    """Answer the whole request with this HTTP status and body (a dict is sent as JSON); must be a turn's only step."""

    code: int
    body: Mapping[str, Any] | str = ""


@dataclass(frozen=True)
class Generated:
    """Raw tokens as the model generates them, markup and all, run through the requested model's parser as Ollama
    does (see the module docstring). A model's stop token (`<|im_end|>`, `<|call|>`, ...) ends the generation: it
    and every later step are not sent."""

    tokens: Sequence[str]
    delay: float = 0.0
    """Seconds before each token, whether or not a chunk goes out for it."""


Step = Text | Thinking | NativeToolCalls | ErrorLine | Drop | Stall | Hold | Status | Generated


class Turn:
    """The reply to one /api/chat request."""

    def __init__(
        self,
        *steps: Step,
        chunk_size: int | None = None,
        delay: float = 0.0,
        done_reason: str = "stop",
        prompt_tokens: int | None = None,
        output_tokens: int | None = None,
        finish: bool = True,
    ) -> None:
        """
        chunk_size: split every Text and Thinking into lines of that many characters (None: one line per step).
        delay: seconds between lines.
        prompt_tokens, output_tokens: the final line's counts; by default ceil(characters / 4) of the request's
            message contents and tools, and of everything generated.
        finish: False ends the stream cleanly but without the final `"done": true` line (truncated by a proxy, say).
        """
        if any(isinstance(step, Status) for step in steps) and len(steps) != 1:
            raise ValueError("Status answers the whole request, so it must be the turn's only step")
        if chunk_size is not None and chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        self.steps = steps
        self.chunk_size = chunk_size
        self.delay = delay
        self.done_reason = done_reason
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        self.finish = finish

    def __repr__(self) -> str:
        return f"Turn{self.steps!r}"


def reply(text: str, *, chunk_size: int | None = None, delay: float = 0.0) -> Turn:
    """A turn that streams `text`."""
    return Turn(Text(text), chunk_size=chunk_size, delay=delay)


def tool_call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """A tool call in the text protocol, as a model writes it in its content."""
    return f"<tool_call>{json.dumps({'name': name, 'arguments': dict(arguments)})}</tool_call>"


def xml_call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """A tool call as qwen3-coder and qwen3.5 write it; values that are not strings are written as JSON."""
    parameters = "".join(
        f"<parameter={key}>\n{value if isinstance(value, str) else json.dumps(value)}\n</parameter>\n"
        for key, value in arguments.items()
    )
    return f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>"


def harmony_call_text(name: str, arguments: Mapping[str, Any]) -> str:
    """A tool call as gpt-oss writes it, a commentary message to `functions.NAME` ended by the stop token <|call|>."""
    header = f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
    return f"{header}{json.dumps(dict(arguments))}<|call|>"


_SPECIAL_TOKEN = re.compile(r"<\|[a-z_]+\|>|</?think>|</?tool_call>")


def tokens_of(text: str, *, token_size: int = 4) -> list[str]:
    """`text` cut into token-like pieces of `token_size` characters; special tokens and tags stay whole, as real
    tokenizers keep them."""
    if token_size < 1:
        raise ValueError("token_size must be at least 1")
    tokens: list[str] = []
    position = 0
    for match in [*_SPECIAL_TOKEN.finditer(text), None]:
        end = match.start() if match else len(text)
        tokens.extend(text[i : min(i + token_size, end)] for i in range(position, end, token_size))
        if match:
            tokens.append(match.group())
            position = match.end()
    return tokens


def generated(text: str, *, token_size: int = 4, delay: float = 0.0) -> Turn:
    """A turn whose model generates `text` (markup included), `token_size` characters a token, `delay` s apart."""
    return Turn(Generated(tokens_of(text, token_size=token_size), delay))


DEMO_TURNS = (
    Turn(
        Thinking("The person wants to know what is in the workspace. I'll list the files first."),
        Text("Let me look at the workspace.\n"),
        Text(tool_call_text("list_files", {"path": "."})),
        chunk_size=4,
        delay=0.03,
    ),
    reply(
        "Those are the files in your workspace. (A scripted demo answer from ScriptedOllama.)", chunk_size=4, delay=0.03
    ),
)


class ScriptedOllama:
    """An Ollama-compatible server on 127.0.0.1 whose chat replies are scripted. Thread-safe."""

    def __init__(
        self,
        models: Mapping[str, Model] | None = None,
        *,
        library: Mapping[str, Model] | None = None,
        fallback: Sequence[Turn] | None = None,
        version: str = DEFAULT_VERSION,
        host: str = "127.0.0.1",
        port: int = 0,
        pull_delay: float = 0.0,
    ) -> None:
        """`models` are installed (DEFAULT_MODELS if None; {} for none), `library` can be pulled.
        `version` is what /api/version says; `logprobs` works from LOGPROBS_SINCE on.
        port 0 picks a free port at the first start(); later starts reuse it."""
        models = DEFAULT_MODELS if models is None else models
        library = DEFAULT_LIBRARY if library is None else library
        self.models: dict[str, Model] = {_canonical(k): v for k, v in models.items()}
        """Installed models by full name ("qwen3:latest"); a successful pull adds one."""
        self.library: dict[str, Model] = {_canonical(k): v for k, v in library.items()}
        self.version = version
        self.host = host
        self.port = port
        self.pull_delay = pull_delay
        self.requests: list[tuple[str, dict[str, Any]]] = []
        """Every request as (path, JSON body); GET requests have an empty body."""
        self.disconnects = 0
        """Streamed responses the client closed before they were finished."""
        self._fallback = tuple(fallback or (reply(DEFAULT_REPLY),))
        self._fallback_next = 0
        self._turns: deque[Turn] = deque()
        self._lock = threading.Condition()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ScriptedOllama:
        """Listen (again) on `port`; a stopped server comes back on the same address."""
        if self._httpd is not None:
            raise RuntimeError("ScriptedOllama is already running")
        httpd = _Server((self.host, self.port), self)
        self.port = httpd.server_address[1]
        self._httpd = httpd
        # stop() waits up to one poll interval; tests stop a server after every test.
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, name=f"scripted-ollama-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and cut every open connection, as a crashed or quit Ollama would."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        httpd.cut_connections()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> ScriptedOllama:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def script(self, *turns: Turn | Step | str) -> None:
        """Queue replies for the next /api/chat requests; a bare step or string is a one-step turn."""
        wrapped = [t if isinstance(t, Turn) else reply(t) if isinstance(t, str) else Turn(t) for t in turns]
        with self._lock:
            self._turns.extend(wrapped)

    @property
    def pending(self) -> int:
        """Scripted turns not yet served."""
        with self._lock:
            return len(self._turns)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of every /api/chat request, in order."""
        with self._lock:
            return [body for path, body in self.requests if path == "/api/chat"]

    def wait_for_disconnects(self, count: int = 1, timeout: float = 30.0) -> bool:
        """Wait until at least `count` streamed responses were cut off by their client."""
        with self._lock:
            return self._lock.wait_for(lambda: self.disconnects >= count, timeout)

    # Called from request threads.

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append((path, body))

    def _next_turn(self) -> Turn:
        with self._lock:
            if self._turns:
                return self._turns.popleft()
            turn = self._fallback[self._fallback_next % len(self._fallback)]
            self._fallback_next += 1
            return turn

    def _find(self, name: str) -> Model | None:
        with self._lock:
            return self.models.get(_canonical(name))

    def _install(self, name: str, model: Model) -> None:
        with self._lock:
            self.models[_canonical(name)] = model

    def _count_disconnect(self) -> None:
        with self._lock:
            self.disconnects += 1
            self._lock.notify_all()


class _ClientGone(Exception):
    """The client closed the connection while we were still answering."""


class _Stopping(Exception):
    """The server is stopping; drop the connection."""


class _Dropped(Exception):
    """A scripted Drop: close the connection mid-response."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: ScriptedOllama) -> None:
        self.owner = owner
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's FQDN, which can hang without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up between keep-alive requests is normal, not worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._connections_lock:
            (self._connections.add if open_ else self._connections.discard)(connection)

    def cut_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def setup(self) -> None:
        super().setup()
        # Go's net/http (so Ollama) sets this too; without it every small write waits ~40 ms for a delayed ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, open_=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, open_=False)

    def do_GET(self) -> None:
        self._route({"/": self._root, "/api/tags": self._tags, "/api/version": self._version})

    def do_POST(self) -> None:
        self._route({"/api/chat": self._chat, "/api/show": self._show, "/api/pull": self._pull})

    def _route(self, routes: Mapping[str, Any]) -> None:
        path = urlsplit(self.path).path
        body = self._read_body()
        if body is None:
            return
        self.server.owner._record(path, body)
        handler = routes.get(path)
        try:
            if handler is None:
                self._send(404, "404 page not found", "text/plain")
            else:
                handler(body)
        except _ClientGone:
            self.close_connection = True
            self.server.owner._count_disconnect()
        except (_Stopping, _Dropped):
            self.close_connection = True

    def _read_body(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        if self.command != "POST":
            return {}
        raw = self.rfile.read(length) if length else b""
        if not raw:
            self._send_json(400, {"error": "missing request body"})
            return None
        try:
            body = json.loads(raw)
        except ValueError as exc:
            self._send_json(400, {"error": f"invalid JSON: {exc}"})
            return None
        if not isinstance(body, dict):
            self._send_json(400, {"error": "request body must be a JSON object"})
            return None
        return body

    # Endpoints.

    def _root(self, body: dict[str, Any]) -> None:
        self._send(200, "Ollama is running", "text/plain; charset=utf-8")

    def _version(self, body: dict[str, Any]) -> None:
        self._send_json(200, {"version": self.server.owner.version})

    def _tags(self, body: dict[str, Any]) -> None:
        with self.server.owner._lock:
            installed = list(self.server.owner.models.items())
        models = [
            {
                "name": name,
                "model": name,
                "modified_at": "2025-05-01T10:00:00.000000000Z",
                "size": model.size,
                "digest": _digest(name)[7:],
                "details": _details(model),
            }
            for name, model in installed
        ]
        self._send_json(200, {"models": models})

    def _show(self, body: dict[str, Any]) -> None:
        name = body.get("model") or body.get("name") or ""
        if not name:
            self._send_json(400, {"error": "model is required"})
            return
        model = self.server.owner._find(name)
        if model is None:
            self._send_json(404, {"error": f"model '{name}' not found"})
            return
        arch = model.family
        # Like Ollama, the PARSER and RENDERER lines are only in the modelfile text, not in fields of their own.
        self._send_json(
            200,
            {
                "license": LICENSE,
                "modelfile": _modelfile(_canonical(name), model),
                "parameters": PARAMETERS,
                "template": model.template,
                "details": _details(model),
                "model_info": {
                    "general.architecture": arch,
                    "general.parameter_count": _parameter_count(model.parameter_size),
                    f"{arch}.context_length": model.context_length,
                    f"{arch}.embedding_length": 4096,
                },
                "capabilities": list(model.capabilities),
                "modified_at": "2025-05-01T10:00:00.000000000Z",
            },
        )

    def _chat(self, body: dict[str, Any]) -> None:
        owner = self.server.owner
        logprobs = _at_least(owner.version, LOGPROBS_SINCE)
        if logprobs and not 0 <= (body.get("top_logprobs") or 0) <= 20:
            self._send_json(400, {"error": "top_logprobs must be between 0 and 20"})
            return
        name = body.get("model") or ""
        if not name:
            self._send_json(400, {"error": "model is required"})
            return
        model = owner._find(name)
        if model is None:
            self._send_json(404, {"error": f"model '{name}' not found"})
            return
        # The same checks, in the same order and words, as Ollama's ChatHandler.
        think = body.get("think")
        if think not in (None, False) and "thinking" not in model.capabilities:
            self._send_json(400, {"error": f"{json.dumps(name)} does not support thinking"})
            return
        if body.get("tools") and "tools" not in model.capabilities:
            self._send_json(400, {"error": f"registry.ollama.ai/library/{_canonical(name)} does not support tools"})
            return
        if "completion" not in model.capabilities:
            self._send_json(400, {"error": f"{json.dumps(name)} does not support chat"})
            return
        if isinstance(think, str) and model.parser != "harmony":
            # Levels ("low", "medium", "high") are for gpt-oss; everyone else takes true or false.
            self._send_json(400, {"error": f"think value {json.dumps(think)} is not supported for this model"})
            return
        messages = body.get("messages") or []
        if not messages:
            # Ollama answers an empty chat by loading the model.
            self._send_json(
                200, _stamped(_line(name, {"role": "assistant", "content": ""}, done=True, done_reason="load"))
            )
            return
        turn = owner._next_turn()
        status = turn.steps[0] if len(turn.steps) == 1 else None
        if isinstance(status, Status):
            if isinstance(status.body, str):
                self._send(status.code, status.body, "text/plain; charset=utf-8")
            else:
                self._send_json(status.code, dict(status.body))
            return
        generation = Generation(model.parser, model.template, body, logprobs=logprobs)
        actions = _plan(turn, name, prompt_tokens=_estimate_prompt(body), generation=generation)
        if body.get("stream", True) is False:
            self._chat_whole(actions, turn.delay)
        else:
            self._stream(actions, turn.delay)

    def _pull(self, body: dict[str, Any]) -> None:
        owner = self.server.owner
        name = body.get("model") or body.get("name") or ""
        if not name:
            self._send_json(400, {"error": "invalid model name"})
            return
        with owner._lock:
            model = owner.library.get(_canonical(name)) or owner.models.get(_canonical(name))
        actions: list[tuple[str, Any]] = [("line", {"status": "pulling manifest"})]
        if model is None:
            actions.append(("error", "pull model manifest: file does not exist"))
        else:
            for part, size in (("model", model.size), ("template", 1_723), ("license", 11_338), ("params", 120)):
                digest = _digest(f"{_canonical(name)}/{part}")
                for completed in (0, size // 3, 2 * size // 3, size):
                    line = {"status": f"pulling {digest[7:19]}", "digest": digest, "total": size}
                    actions.append(("line", {**line, "completed": completed} if completed else line))
            for status in ("verifying sha256 digest", "writing manifest"):
                actions.append(("line", {"status": status}))
            # Installed once its manifest is written, before "success" is said, as Ollama does: a client that read
            # "success" finds the model listed.
            actions += [("do", lambda: owner._install(name, model)), ("line", {"status": "success"})]
        if body.get("stream", True) is False:
            if model is not None:  # one answer at the end: the model is installed by then
                owner._install(name, model)
            kind, last = actions[-1]
            self._send_json(*((500, {"error": last}) if kind == "error" else (200, last)))
        else:
            self._stream(actions, owner.pull_delay)

    # Writing.

    def _stream(self, actions: Iterable[tuple[str, Any]], delay: float) -> None:
        """Write NDJSON lines in chunked encoding, as Ollama does, carrying out Stall, Drop and errors on the way."""
        started = False
        for kind, value in actions:
            if kind in ("stall", "hold"):
                self._pause(kind, value)
                continue
            if kind == "do":  # the server's own step at this point of the stream
                value()
                continue
            if kind == "drop":
                raise _Dropped
            if started and delay:
                self._wait(delay)
            if kind == "error" and not started:
                # Ollama sets the status from an error only while nothing has been written yet.
                self._send_json(500, {"error": value})
                return
            if not started:
                self._begin_stream()
                started = True
            if kind == "error":
                self._write_chunk(json.dumps({"error": value}).encode() + b"\n")
                break
            self._write_chunk(json.dumps(_stamped(value)).encode() + b"\n")
        if not started:
            self._begin_stream()
        self._write_chunk(b"")

    def _begin_stream(self) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
        except OSError as exc:
            raise self._write_failure() from exc

    def _chat_whole(self, actions: Iterable[tuple[str, Any]], delay: float) -> None:
        """`"stream": false`: one JSON object with everything joined, as Ollama does."""
        content, thinking, calls, logprobs, final = [], [], [], [], None
        for kind, value in actions:
            if kind in ("stall", "hold"):
                self._pause(kind, value)
            elif kind == "drop":
                raise _Dropped
            elif kind == "error":
                self._send_json(500, {"error": value})
                return
            else:
                self._wait(delay)
                message = value["message"]
                content.append(message.get("content", ""))
                thinking.append(message.get("thinking", ""))
                calls.extend(message.get("tool_calls", []))
                logprobs.extend(value.get("logprobs", []))
                final = value
        if final is None or not final.get("done"):
            raise _Dropped
        message = {"role": "assistant", "content": "".join(content)}
        if "".join(thinking):
            message["thinking"] = "".join(thinking)
        if calls:
            message["tool_calls"] = calls
        whole = {**final, "message": message} | ({"logprobs": logprobs} if logprobs else {})
        self._send_json(200, _stamped(whole))

    def _send_json(self, status: int, payload: Mapping[str, Any]) -> None:
        self._send(status, json.dumps(payload), "application/json; charset=utf-8")

    def _send(self, status: int, text: str, content_type: str) -> None:
        data = text.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError as exc:
            raise self._write_failure() from exc

    def _write_chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        except OSError as exc:
            raise self._write_failure() from exc

    def _write_failure(self) -> Exception:
        return _Stopping() if self.server.stopping.is_set() else _ClientGone()

    def _pause(self, kind: str, value: Any) -> None:
        """A Stall's seconds, or a Hold until its release (noticing a client gone or the server stopping)."""
        if kind == "stall":
            self._wait(value)
            return
        deadline = time.monotonic() + value.most
        while not value.release.is_set() and time.monotonic() < deadline:
            self._wait(0.05)

    def _wait(self, seconds: float) -> None:
        """Sleep, but notice at once when the client hangs up or the server stops."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], remaining)
            if self.server.stopping.is_set():
                raise _Stopping
            if not readable:
                continue
            try:
                peeked = self.connection.recv(1, socket.MSG_PEEK)
            except OSError as exc:
                raise _ClientGone from exc
            if not peeked:
                raise _ClientGone
            # Bytes from a client that doesn't wait for the answer; don't spin on them.
            time.sleep(min(remaining, 0.05))


def _plan(turn: Turn, model: str, *, prompt_tokens: int, generation: Generation) -> list[tuple[str, Any]]:
    """The turn as actions: ("line", json), ("error", text), ("drop", None), ("stall", seconds), ("hold", Hold)."""
    actions: list[tuple[str, Any]] = []
    generated = 0
    for step in turn.steps:
        if generation.stopped:
            break
        if isinstance(step, Text | Thinking):
            field = "content" if isinstance(step, Text) else "thinking"
            size = turn.chunk_size or max(len(step.text), 1)
            for start in range(0, max(len(step.text), 1), size):
                piece = step.text[start : start + size]
                message = {"role": "assistant", "content": ""} | {field: piece}
                actions.append(("line", _line(model, message)))
                generated += len(piece)
        elif isinstance(step, NativeToolCalls):
            calls = [
                {
                    "id": f"call_{i:08d}",
                    "function": {"index": i, "name": c["name"], "arguments": c.get("arguments", {})},
                }
                for i, c in enumerate(step.calls)
            ]
            actions.append(("line", _line(model, {"role": "assistant", "content": "", "tool_calls": calls})))
            generated += len(json.dumps(calls))
        elif isinstance(step, Generated):
            try:
                generated += _plan_tokens(step, model, generation, actions)
            except ParseError as exc:
                return [*actions, ("error", exc.message)]
        elif isinstance(step, ErrorLine):
            return [*actions, ("error", step.message)]
        elif isinstance(step, Drop):
            return [*actions, ("drop", None)]
        elif isinstance(step, Stall):
            actions.append(("stall", step.seconds))
        elif isinstance(step, Hold):
            actions.append(("hold", step))
    if turn.finish:
        try:
            last = generation.finish()
        except ParseError as exc:
            return [*actions, ("error", exc.message)]
        final = _line(model, last, done=True, done_reason=turn.done_reason)
        prompt = turn.prompt_tokens if turn.prompt_tokens is not None else prompt_tokens
        output = turn.output_tokens if turn.output_tokens is not None else max(1, math.ceil(generated / 4))
        final |= {
            "total_duration": 1_200_000_000,
            "load_duration": 50_000_000,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 100_000_000,
            "eval_count": output,
            "eval_duration": 1_000_000_000,
        }
        actions.append(("line", final))
    return actions


def _plan_tokens(step: Generated, model: str, generation: Generation, actions: list[tuple[str, Any]]) -> int:
    """Append the actions for a Generated step; returns the characters generated. Raises ParseError."""
    generated = 0
    for token in step.tokens:
        if step.delay:
            actions.append(("stall", step.delay))
        chunk = generation.token(token)
        if generation.stopped:
            break
        generated += len(token)
        if chunk is not None:
            message, logprobs = chunk
            actions.append(("line", _line(model, message) | ({"logprobs": logprobs} if logprobs else {})))
    return generated


def _line(model: str, message: dict[str, Any], *, done: bool = False, done_reason: str | None = None) -> dict[str, Any]:
    line = {"model": model, "created_at": "", "message": message, "done": done}
    if done_reason is not None:
        line["done_reason"] = done_reason
    return line


LICENSE = "Scripted model, no license."
PARAMETERS = 'stop                           "<|im_end|>"\ntemperature                    0.6'


def _modelfile(name: str, model: Model) -> str:
    """`ollama show --modelfile` text: FROM the blob, TEMPLATE, then RENDERER and PARSER when the model has them."""
    lines = [
        '# Modelfile generated by "ollama show"',
        "# To build a new Modelfile based on this, replace FROM with:",
        f"# FROM {name}",
        "",
        f"FROM /usr/share/ollama/.ollama/models/blobs/{_digest(name + '/model').replace(':', '-')}",
        f'TEMPLATE """{model.template}"""',
        *([f"RENDERER {model.renderer}"] if model.renderer else []),
        *([f"PARSER {model.parser}"] if model.parser else []),
        'PARAMETER stop "<|im_end|>"',
        "PARAMETER temperature 0.6",
        f'LICENSE """{LICENSE}"""',
    ]
    return "\n".join(lines) + "\n"


def _at_least(version: str, since: str) -> bool:
    """Whether Ollama `version` ("0.12.11", "0.13.0-rc1") is `since` or later; an unreadable one counts as new."""

    def numbers(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in re.findall(r"\d+", text.split("-", 1)[0])[:3])

    return not numbers(version) or numbers(version) >= numbers(since)


def _estimate_prompt(body: Mapping[str, Any]) -> int:
    """A deterministic stand-in for the prompt's token count: ceil(characters / 4)."""
    chars = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [] if isinstance(m, dict))
    if body.get("tools"):
        chars += len(json.dumps(body["tools"]))
    return max(1, math.ceil(chars / 4))


def _canonical(name: str) -> str:
    """Ollama's full name for a model: `qwen3` is `qwen3:latest`."""
    name = name.strip()
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _details(model: Model) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": model.family,
        "families": [model.family],
        "parameter_size": model.parameter_size,
        "quantization_level": model.quantization,
    }


def _parameter_count(parameter_size: str) -> int:
    units = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
    try:
        return int(float(parameter_size[:-1]) * units[parameter_size[-1].upper()])
    except (KeyError, ValueError, IndexError):
        return 0


def _stamped(line: dict[str, Any]) -> dict[str, Any]:
    """A chat line with `created_at` set to the moment it is sent; other lines as they are."""
    if "created_at" not in line:
        return line
    return {**line, "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.scripted_ollama", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=11434)
    parser.add_argument("--demo", action="store_true", help="answer with a tool call, then a final reply, forever")
    parser.add_argument("--parser-models", action="store_true", help="install PARSER_MODELS too")
    args = parser.parse_args(argv)
    models = {**DEFAULT_MODELS, **PARSER_MODELS} if args.parser_models else None
    fallback = DEMO_TURNS if args.demo else None
    server = ScriptedOllama(models, host=args.host, port=args.port, fallback=fallback).start()
    print(f"ScriptedOllama serving {server.url}; press Ctrl+C to stop.", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
