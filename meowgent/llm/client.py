"""The only module that talks to Ollama, and the only one that knows its wire format: streaming chat, installed
models and their capabilities, downloads, health.

Every failure leaves this module as a `ModelError` (llm/errors.py) whose `message` is a sentence a person can act on.
"""

from __future__ import annotations

import functools
import re
import ssl
import threading
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import ollama
from pydantic_core import from_json

from meowgent.llm.errors import (
    FAILURES,
    ModelError,
    ModelNotFound,
    StreamBroken,
    failure,
    not_ollama,
    response_error,
)
from meowgent.llm.hangup import ReplyConnection
from meowgent.llm.types import (
    ChatChunk,
    ChatRequest,
    Health,
    Holding,
    ModelInfo,
    ModelProfile,
    NativeToolCall,
    PullProgress,
    ToolSpec,
)
from meowgent.llm.watch import HELD_CALL_PATIENCE, watched

LOGPROBS_SINCE = (0, 12, 11)
"""The first Ollama release that answers `logprobs` on /api/chat, which is how a held-back call's text reaches us."""


class OllamaClient:
    """Talks to one Ollama server through the official client; safe to share between threads."""

    def __init__(self, host: str | None, *, connect_timeout: float = 5.0, read_timeout: float = 120.0) -> None:
        """`host` None or "" means OLLAMA_HOST, or Ollama's default address."""
        try:
            tls = _tls_context()
            self._client = ollama.Client(
                host=host, timeout=httpx.Timeout(read_timeout, connect=connect_timeout), verify=tls
            )
            # Replies read by `watched` have their silences judged there; this read timeout only frees a reader
            # left hanging on a server that went quiet. Each reply has a connection of its own, so that hanging up
            # on one can reach it before Ollama's first byte (llm/hangup.py): a reused one is never seen made.
            self._stream_client = ollama.Client(
                host=host,
                timeout=httpx.Timeout(read_timeout * HELD_CALL_PATIENCE, connect=connect_timeout),
                verify=tls,
                limits=httpx.Limits(max_keepalive_connections=0),
            )
            # Verifying a multi-gigabyte download can take minutes without a line of progress.
            self._pull_client = ollama.Client(
                host=host, timeout=httpx.Timeout(None, connect=connect_timeout), verify=tls
            )
        except (ValueError, httpx.InvalidURL) as exc:
            raise ModelError(
                f"'{host}' isn't an address Ollama can be reached at. Use one like http://127.0.0.1:11434.",
                kind="bad_host",
                values={"host": host},
            ) from exc
        # The ollama client resolves OLLAMA_HOST and default ports itself; read back what it chose.
        self.host: str = str(self._client._client.base_url).rstrip("/")
        self._read_timeout = read_timeout
        self._lock = threading.Lock()
        self._shown: dict[str, ModelInfo] = {}
        self._sizes: dict[str, int] = {}

    def close(self) -> None:
        """Close the connection pools."""
        self._client.close()
        self._stream_client.close()
        self._pull_client.close()

    def stream_chat(
        self, request: ChatRequest, *, cancel: threading.Event | None = None
    ) -> Generator[ChatChunk, None, None]:
        """Stream one reply. Closing the generator closes the response, so Ollama stops generating.

        Raises ModelError subclasses only, except that malformed messages or tools (a caller's bug) raise
        ValueError. Setting `cancel` ends the stream within a tenth of a second, even while the server sends
        nothing. Silence longer than the read timeout raises StreamStalled, except while Ollama may hold back a call
        it cannot show (`Holding.SILENT`): see llm/watch.py.
        """
        silent = request.holding is Holding.SILENT
        if cancel is None and not silent:  # read in this thread: the client's read timeout is the stall rule
            return self._chat(self._client, request, ReplyConnection())
        connection = ReplyConnection()
        chunks = self._chat(self._stream_client, request, connection)
        held = self._read_timeout * HELD_CALL_PATIENCE if silent else None
        return watched(
            chunks,
            cancel or threading.Event(),
            stall_after=self._read_timeout,
            held_stall_after=held,
            hang_up=connection.hang_up,
        )

    def _chat(
        self, client: ollama.Client, request: ChatRequest, connection: ReplyConnection
    ) -> Generator[ChatChunk, None, None]:
        """The reply's lines, read here rather than by the ollama client: its models cost more per token than all
        the rest of the agent (bench/bench_agent.py). `connection` learns the socket, for a reader that leaves."""
        if not request.model:
            raise ModelNotFound("")
        body = chat_body(request)
        done = False
        with (
            self._failures(model=request.model, what="answer"),
            client._client.stream("POST", "/api/chat", json=body, extensions={"trace": connection.trace}) as response,
            connection.held(response),
        ):
            if not response.is_success:
                response.read()
                raise ollama.ResponseError(response.text, response.status_code)
            for line in response.iter_lines():
                chunk = _chat_chunk(from_json(line))
                done = chunk.done
                yield chunk
        if not done:
            raise StreamBroken("the reply ended before the model said it was done.")

    def list_models(self) -> list[ModelInfo]:
        """Installed models from /api/tags, without capabilities (see `show`)."""
        with self._failures():
            listing = self._client.list()
        models = []
        for entry in listing.models:
            details = entry.details
            info = ModelInfo(
                name=entry.model or "",
                capabilities=frozenset(),
                context_length=None,
                parameter_size=details.parameter_size if details else None,
                quantization=details.quantization_level if details else None,
                size_bytes=int(entry.size) if entry.size is not None else None,
                family=details.family if details else None,
            )
            models.append(info)
        with self._lock:
            self._sizes.update({m.name: m.size_bytes for m in models if m.size_bytes is not None})
        return models

    def show(self, model: str) -> ModelInfo:
        """Capabilities and context length of one model; cached, since a model's capabilities never change."""
        if not model:
            raise ModelNotFound("")
        with self._lock:
            cached = self._shown.get(model)
        if cached is not None:
            return cached
        with self._failures(model=model):
            shown = self._client.show(model)
        details = shown.details
        info = ModelInfo(
            name=model,
            capabilities=frozenset(shown.capabilities or ()),
            context_length=_context_length(shown.modelinfo or {}),
            parameter_size=details.parameter_size if details else None,
            quantization=details.quantization_level if details else None,
            size_bytes=self._size_of(model),
            family=details.family if details else None,
            parser=_modelfile_line(shown.modelfile or "", "PARSER"),
            renderer=_modelfile_line(shown.modelfile or "", "RENDERER"),
            template=shown.template or "",
        )
        with self._lock:
            self._shown[model] = info
        return info

    def profile(self, model: str) -> ModelProfile:
        """The model and the Ollama version, which together decide how to ask for tools."""
        info = self.show(model)
        try:
            version: str | None = self.version()
        except ModelError:  # an answering server that hides its version: assume it is old
            version = None
        return profile_of(info, version)

    def version(self) -> str:
        """The Ollama server's version, from /api/version."""
        with self._failures():
            # The ollama client has no method for /api/version; _request_raw keeps its error handling and our timeouts.
            data = self._client._request_raw("GET", "/api/version").json()
        version = data.get("version") if isinstance(data, dict) else None
        if not isinstance(version, str):
            raise not_ollama(self.host, "no version")
        return version

    def health(self, model: str | None = None) -> Health:
        """Whether Ollama answers (and, given `model`, has it installed). Never raises."""
        version = None
        try:
            version = self.version()
            if model:
                self.show(model)
        except ModelError as exc:
            return Health(ok=False, version=version, message=exc.message, kind=exc.kind, values=exc.values)
        return Health(
            ok=True,
            version=version,
            message=f"Connected to Ollama {version} at {self.host}.",
            values={"host": self.host, "version": version},
        )

    def pull(self, model: str) -> Iterator[PullProgress]:
        """Download a model, yielding Ollama's progress lines; the last one has status "success"."""
        if not model:
            raise ModelNotFound("")
        stream = self._pull_client.pull(model, stream=True)
        status = ""
        try:
            with self._failures(model=model, what="download"):
                for part in stream:
                    status = part.status or ""
                    yield PullProgress(status=status, digest=part.digest, total=part.total, completed=part.completed)
        finally:
            stream.close()
        if status != "success":
            raise StreamBroken("the download ended before Ollama said it was complete.", what="download")
        with self._lock:
            # A newer version of the model may have different capabilities.
            self._shown.pop(model, None)

    @contextmanager
    def _failures(self, *, model: str | None = None, what: str | None = None) -> Iterator[None]:
        """Turn whatever the ollama client raises into a ModelError. `what` names the stream being read, if any."""
        try:
            yield
        except ollama.ResponseError as exc:
            raise response_error(exc.status_code, str(exc.error), host=self.host, model=model, what=what) from exc
        except FAILURES as exc:
            raise failure(exc, host=self.host, read_timeout=self._read_timeout, what=what) from exc

    def _size_of(self, model: str) -> int | None:
        with self._lock:
            return self._sizes.get(model) or self._sizes.get(f"{model}:latest")


def profile_of(info: ModelInfo, version: str | None) -> ModelProfile:
    """How to ask a model for tools on an Ollama of this version.

    Ollama runs a model's builtin parser (its Modelfile's `PARSER`) on every chat: such a model gets its tools
    natively and its calls come as `tool_calls`, held back while they are written. From LOGPROBS_SINCE their text
    comes with `logprobs`; before, nothing shows of them.
    """
    native = info.parser is not None and "tools" in info.capabilities
    if not native:
        return ModelProfile(info, native_tools=False, holding=Holding.NONE)
    holding = Holding.SHOWN if supports_logprobs(version) else Holding.SILENT
    return ModelProfile(info, native_tools=True, holding=holding)


def chat_body(request: ChatRequest) -> dict[str, Any]:
    """The JSON body of Ollama's /api/chat for `request`.

    Messages and tools go through the ollama package's own models, as its client sends them: empty fields are left
    out, and of a tool's schema only what Ollama's `Tool` knows is kept. `think` goes only to a model that can
    think (Ollama answers 400 to any other), and `logprobs` only where they show a held-back call.
    """
    messages = [{"role": "system", "content": request.system}, *wire_messages(request.messages, request.capabilities)]
    tools = [ollama.Tool.model_validate(ollama_tool(spec)) for spec in request.tools or ()]
    body: dict[str, Any] = {
        "model": request.model,
        "stream": True,
        "messages": [_wire_message(message) for message in messages],
        "tools": [tool.model_dump(exclude_none=True) for tool in tools],
        "options": {"num_ctx": request.context},
    }
    if "thinking" in request.capabilities:
        body["think"] = request.think
    if request.holding is Holding.SHOWN:
        body["logprobs"] = True
    return body


def wire_messages(messages: Sequence[dict[str, Any]], capabilities: frozenset[str]) -> list[dict[str, Any]]:
    """The transcript as this model's chat template expects it.

    Models with the `tools` capability have a template that renders role `tool`. For the
    others the role would be dropped or mangled, so the result goes in a user message.
    """
    if "tools" in capabilities:
        return list(messages)
    return [
        {
            "role": "user",
            "content": f'<tool_response name="{m.get("tool_name", "")}">\n{m["content"]}\n</tool_response>',
        }
        if m["role"] == "tool"
        else m
        for m in messages
    ]


def _wire_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One message as the ollama client sends it: through its `Message` model, without empty fields."""
    kept = {key: value for key, value in message.items() if value}
    return ollama.Message.model_validate(kept).model_dump(exclude_none=True)


def ollama_tool(spec: ToolSpec) -> dict[str, Any]:
    """One tool as Ollama's `tools` lists it."""
    return {"type": "function", "function": spec.as_json()}


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """Loading the CA bundle takes about 0.1 s, so every client shares one context (honouring SSL_CERT_FILE)."""
    return httpx.create_ssl_context()


def _chat_chunk(part: Any) -> ChatChunk:
    """One line of /api/chat as a ChatChunk; ValueError for a line that is not shaped like Ollama's."""
    if type(part) is not dict:
        raise ValueError("a line of the reply is not a JSON object")
    if error := part.get("error"):
        raise ollama.ResponseError(str(error))
    message = part.get("message")
    if type(message) is not dict:
        raise ValueError("a line of the reply has no message")
    content, thinking = message.get("content") or "", message.get("thinking") or ""
    if type(content) is not str or type(thinking) is not str:
        raise ValueError("a line's content or thinking is not text")
    logprobs = part.get("logprobs")
    token = _token_text(logprobs) if logprobs and not (content or thinking) else ""
    done, calls = part.get("done"), message.get("tool_calls")
    if not done and not calls:  # nearly every line: one token of text, thinking or a held call
        return ChatChunk(content, thinking, token=token)
    if done is not None and type(done) is not bool:
        raise ValueError("a line's done is not true or false")
    return ChatChunk(
        content,
        thinking,
        tool_calls=_native_calls(calls) if calls else (),
        done=bool(done),
        done_reason=_optional(part, "done_reason", str) if done else None,
        prompt_tokens=_optional(part, "prompt_eval_count", int) if done else None,
        output_tokens=_optional(part, "eval_count", int) if done else None,
        token=token,
    )


def _token_text(logprobs: Any) -> str:
    """The tokens' own text, from a line's `logprobs`."""
    if type(logprobs) is not list or not all(type(p) is dict and type(p.get("token")) is str for p in logprobs):
        raise ValueError("a line's logprobs are not a list of tokens")
    return "".join(p["token"] for p in logprobs)


def _native_calls(calls: Any) -> tuple[NativeToolCall, ...]:
    """Ollama's `tool_calls`; arguments that are not a JSON object make the line unreadable."""
    if type(calls) is not list:
        raise ValueError("a line's tool_calls are not a list")
    native = []
    for call in calls:
        function = call.get("function") if type(call) is dict else None
        if type(function) is not dict or type(function.get("name")) is not str:
            raise ValueError("a tool call has no name")
        if type(function.get("arguments")) is not dict:
            raise ValueError("a tool call's arguments are not a JSON object")
        native.append(NativeToolCall(function["name"], function["arguments"]))
    return tuple(native)


def _optional(part: dict[str, Any], key: str, kind: type) -> Any:
    value = part.get(key)
    if value is not None and (type(value) is not kind):
        raise ValueError(f"a line's {key} is not {kind.__name__}")
    return value


def _modelfile_line(modelfile: str, keyword: str) -> str | None:
    """The value of a `KEYWORD value` line of a Modelfile (keywords are case-insensitive), if there is one."""
    found = re.search(rf"^{keyword}[ \t]+(\S+)[ \t]*$", modelfile, re.IGNORECASE | re.MULTILINE)
    return found.group(1) if found else None


def supports_logprobs(version: str | None) -> bool:
    """Whether an Ollama of this version (e.g. "0.12.11", "0.13.0-rc1") sends `logprobs` on /api/chat."""
    numbers = re.match(r"v?(\d+)\.(\d+)\.(\d+)", version or "")
    return numbers is not None and tuple(int(n) for n in numbers.groups()) >= LOGPROBS_SINCE


def _context_length(model_info: Mapping[str, Any]) -> int | None:
    """`<architecture>.context_length`, or any `*.context_length` when the architecture key is missing."""
    arch = model_info.get("general.architecture")
    keys = [f"{arch}.context_length"] if arch else []
    keys += [key for key in model_info if key.endswith(".context_length")]
    for key in keys:
        value = model_info.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None
