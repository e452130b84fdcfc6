"""The only module that talks to Ollama: streaming chat, installed models and their capabilities, downloads, health.

Every failure leaves this module as a `ModelError` whose `message` is a sentence a person can act on.
"""

from __future__ import annotations

import collections
import functools
import re
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import httpx
import ollama

SUGGESTED_MODEL = "qwen3"
"""The model named in advice when no other name fits."""

_DETAIL_LIMIT = 300

LOGPROBS_SINCE = (0, 12, 11)
"""The first Ollama release that answers `logprobs` on /api/chat, which is how a held-back call's text reaches us."""

HELD_CALL_PATIENCE = 5
"""How many read timeouts of silence a reply may hold when Ollama may be holding back a call it cannot show."""

SILENCE_TICK = 1.0
"""Seconds between the `silent_for` chunks of such a reply, so the page can count the seconds."""


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told of a tool: its name, what it does, and its arguments' JSON schema.

    No model server's format: each backend puts it in its own (llm/).
    """

    name: str
    description: str
    parameters: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True, slots=True)
class NativeToolCall:
    """A tool call that Ollama's own parser already took out of the model's text (`message.tool_calls`)."""

    name: str
    arguments: dict[str, Any]
    """Always a dict: the ollama client refuses a line whose arguments are not a JSON object (that is StreamBroken).
    The agent still validates the contents against the tool's schema."""


class ChatChunk(NamedTuple):
    """One streamed line of a chat reply (with a cancel flag, several content-only lines if the reader fell behind).

    A NamedTuple rather than a frozen dataclass: one is built per token, and a frozen
    dataclass's `__init__` costs three times as much (measured in bench/bench_agent.py).
    """

    content: str = ""
    thinking: str = ""
    tool_calls: tuple[NativeToolCall, ...] = ()
    done: bool = False
    done_reason: str | None = None
    prompt_tokens: int | None = None
    """`prompt_eval_count`, on the final chunk only."""
    output_tokens: int | None = None
    """`eval_count`, on the final chunk only."""
    token: str = ""
    """With `logprobs`, the model's own text of a line whose content and thinking are empty: text Ollama's
    parser holds back (a tool call being written, or a tag it consumed)."""
    silent_for: float = 0.0
    """Not a line from Ollama: the reply has been silent this long while a call may be held back."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What Meowgent needs to know about one installed model."""

    name: str
    """As Ollama lists it ("qwen3:latest") in `list_models()`; as asked for in `show()`."""
    capabilities: frozenset[str]
    """From /api/show, e.g. {"completion", "tools", "thinking", "vision"}; empty in `list_models()`."""
    context_length: int | None
    parameter_size: str | None
    quantization: str | None
    size_bytes: int | None
    """Known once `list_models()` has seen the model."""
    family: str | None
    parser: str | None = None
    """The `PARSER` line of the model's Modelfile (in `show()` only): Ollama parses this model's output itself."""
    renderer: str | None = None
    """The `RENDERER` line: Ollama builds this model's prompt in code rather than from `template`."""
    template: str = ""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """How to ask one model for tools on this Ollama server (see docs/architecture.md, "Model families")."""

    info: ModelInfo
    ollama_version: str | None

    @property
    def native_tools(self) -> bool:
        """Ollama's builtin parser reads this model's calls on every chat: send `tools=` and run its `tool_calls`."""
        return self.info.parser is not None and "tools" in self.info.capabilities

    @property
    def logprobs(self) -> bool:
        """Ask for `logprobs`, the only way to see the text of a call Ollama holds back."""
        return self.native_tools and supports_logprobs(self.ollama_version)

    @property
    def silent_calls(self) -> bool:
        """Ollama holds calls back and cannot show them: silence may be a call being written."""
        return self.native_tools and not self.logprobs


@dataclass(frozen=True, slots=True)
class PullProgress:
    """One progress line of a model download, as Ollama reports it."""

    status: str
    digest: str | None = None
    total: int | None = None
    completed: int | None = None


@dataclass(frozen=True, slots=True)
class Health:
    """Whether Ollama answers; `message` is what the connection banner shows."""

    ok: bool
    version: str | None
    message: str


class ModelError(Exception):
    """Ollama could not do what we asked.

    `message` (also `str(exc)`) is a plain sentence for a person; `kind` is a short id for code. Besides the
    subclasses' kinds, a plain ModelError has kind "server" (Ollama answered with an error we have no better name
    for, its text included), "not_ollama" (something else answers at that address) or "bad_host" (OLLAMA_HOST is
    not an address).
    """

    kind = "server"

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind


class ServerUnreachable(ModelError):
    """Nothing accepts connections at the Ollama address."""

    kind = "unreachable"

    def __init__(self, host: str) -> None:
        super().__init__(
            f"Can't reach Ollama at {host}. Start it with `ollama serve` (or open the Ollama app), then try again."
        )
        self.host = host


class ModelNotFound(ModelError):
    """The model is not installed (or, for a download, does not exist in the library)."""

    kind = "not_found"

    def __init__(self, model: str, message: str | None = None) -> None:
        if message is None:
            message = (
                f"The model '{model}' isn't installed. Download it with `ollama pull {model}`."
                if model
                else f"No model is chosen. Pick one, or download one with `ollama pull {SUGGESTED_MODEL}`."
            )
        super().__init__(message)
        self.model = model


class UnsupportedFeature(ModelError):
    """The model cannot do what the request asked for (thinking, tools, chat)."""

    kind = "unsupported"

    def __init__(self, model: str, feature: str) -> None:
        hints = {
            "thinking": "Turn thinking off, or choose a model that can think, such as qwen3.",
            "tools": "Choose a model that supports tools, such as qwen3.",
        }
        hint = hints.get(feature, "Choose another model.")
        super().__init__(f"The model '{model}' doesn't support {feature}. {hint}")
        self.model = model
        self.feature = feature


class StreamBroken(ModelError):
    """A reply ended early: Ollama sent an error line, or the connection dropped."""

    kind = "broken"

    def __init__(self, detail: str, *, what: str = "answer") -> None:
        super().__init__(f"The {what} from Ollama broke off: {_sentence(detail)} Try again.")
        self.detail = detail


class ErrorLine(StreamBroken):
    """Ollama ended a reply with an `{"error": ...}` line, e.g. its parser could not read the model's tool call."""


class StreamStalled(ModelError):
    """Ollama sent nothing for longer than the read timeout."""

    kind = "stalled"

    def __init__(self, seconds: float, *, streaming: bool = True) -> None:
        super().__init__(
            f"The model stopped answering for {seconds:g} s. It may be stuck or short of memory; "
            "try again, or choose a smaller model."
            if streaming
            else f"Ollama didn't answer within {seconds:g} s. It may be busy; try again."
        )
        self.seconds = seconds


# Failures that can come out of the ollama client: the builtin ConnectionError is its own wording of a refused
# connection (non-streaming requests only; streams let httpx.ConnectError through), ValueError is a line that
# is not JSON or not shaped like Ollama's replies.
_FAILURES = (ConnectionError, ollama.ResponseError, httpx.HTTPError, ValueError)
_UNREACHABLE = (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout, httpx.ProxyError, httpx.UnsupportedProtocol)


class OllamaClient:
    """Talks to one Ollama server through the official client; safe to share between threads."""

    def __init__(self, host: str | None, *, connect_timeout: float = 5.0, read_timeout: float = 120.0) -> None:
        """`host` None or "" means OLLAMA_HOST, or Ollama's default address."""
        try:
            tls = _tls_context()
            self._client = ollama.Client(
                host=host, timeout=httpx.Timeout(read_timeout, connect=connect_timeout), verify=tls
            )
            # Replies read by `_watched` have their silences judged there; this read timeout only frees a reader
            # left hanging on a server that went quiet.
            self._stream_client = ollama.Client(
                host=host,
                timeout=httpx.Timeout(read_timeout * HELD_CALL_PATIENCE, connect=connect_timeout),
                verify=tls,
            )
            # Verifying a multi-gigabyte download can take minutes without a line of progress.
            self._pull_client = ollama.Client(
                host=host, timeout=httpx.Timeout(None, connect=connect_timeout), verify=tls
            )
        except (ValueError, httpx.InvalidURL) as exc:
            raise ModelError(
                f"'{host}' isn't an address Ollama can be reached at. Use one like http://127.0.0.1:11434.",
                kind="bad_host",
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
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        think: bool | None = None,
        options: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        cancel: threading.Event | None = None,
        logprobs: bool = False,
        silent_calls: bool = False,
    ) -> Iterator[ChatChunk]:
        """Stream one reply. Closing the generator closes the response, so Ollama stops generating.

        Raises ModelError subclasses only, except that malformed `messages` or `tools` (a caller's bug) raise
        ValueError. `think` is sent only when not None. Setting `cancel` ends the stream within a tenth of a
        second, even while the server sends nothing. `logprobs` asks for each token's text (see
        `ChatChunk.token`).

        Silence longer than the read timeout raises StreamStalled. With `silent_calls` (Ollama may hold back a
        call it cannot show, even one the model starts its reply with), silence is allowed HELD_CALL_PATIENCE read
        timeouts, and is reported every SILENCE_TICK seconds as a chunk with `silent_for` set.
        """
        request = {"model": model, "messages": messages, "think": think, "options": options, "tools": tools}
        if cancel is None and not silent_calls:  # read in this thread: the client's read timeout is the stall rule
            return self._stream_chat(self._client, **request, logprobs=logprobs)
        chunks = self._stream_chat(self._stream_client, **request, logprobs=logprobs)
        held = self._read_timeout * HELD_CALL_PATIENCE if silent_calls else None
        return _watched(chunks, cancel or threading.Event(), stall_after=self._read_timeout, held_stall_after=held)

    def _stream_chat(
        self,
        client: ollama.Client,
        *,
        model: str,
        messages: list[dict[str, Any]],
        think: bool | None,
        options: dict[str, Any] | None,
        tools: list[dict[str, Any]] | None,
        logprobs: bool,
    ) -> Iterator[ChatChunk]:
        if not model:
            raise ModelNotFound("")
        extra: dict[str, Any] = {} if think is None else {"think": think}
        if logprobs:
            extra["logprobs"] = True
        stream = client.chat(model=model, messages=messages, tools=tools, options=options, stream=True, **extra)
        done = False
        try:
            with self._failures(model=model, what="answer"):
                for part in stream:
                    chunk = _chat_chunk(part)
                    done = chunk.done
                    yield chunk
        finally:
            stream.close()
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
        return ModelProfile(info, version)

    def version(self) -> str:
        """The Ollama server's version, from /api/version."""
        with self._failures():
            # The ollama client has no method for /api/version; _request_raw keeps its error handling and our timeouts.
            data = self._client._request_raw("GET", "/api/version").json()
        version = data.get("version") if isinstance(data, dict) else None
        if not isinstance(version, str):
            raise self._not_ollama("no version")
        return version

    def health(self, model: str | None = None) -> Health:
        """Whether Ollama answers (and, given `model`, has it installed). Never raises."""
        version = None
        try:
            version = self.version()
            if model:
                self.show(model)
        except ModelError as exc:
            return Health(ok=False, version=version, message=exc.message)
        return Health(ok=True, version=version, message=f"Connected to Ollama {version} at {self.host}.")

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
        except _FAILURES as exc:
            raise self._translate(exc, model=model, what=what) from exc

    def _translate(self, exc: Exception, *, model: str | None, what: str | None) -> ModelError:
        if isinstance(exc, _UNREACHABLE):
            return ServerUnreachable(self.host)
        if isinstance(exc, httpx.TimeoutException):
            return StreamStalled(self._read_timeout, streaming=what == "answer")
        if isinstance(exc, ollama.ResponseError):
            return self._response_error(exc, model=model, what=what)
        if isinstance(exc, httpx.TransportError):
            detail = "the connection closed before it was finished (Ollama may have stopped or restarted)."
            return (
                StreamBroken(detail, what=what)
                if what
                else ModelError(f"The connection to Ollama at {self.host} broke off. Try again.")
            )
        if what:
            return StreamBroken("Ollama sent a line Meowgent can't read.", what=what)
        return self._not_ollama("a reply Meowgent can't read")

    def _response_error(self, exc: ollama.ResponseError, *, model: str | None, what: str | None) -> ModelError:
        text = _clip(str(exc.error))
        status = exc.status_code
        if what == "download" and model and "file does not exist" in text:
            return ModelNotFound(
                model,
                f"There's no model called '{model}' to download. Check the name at https://ollama.com/library.",
            )
        if status == 404:
            return ModelNotFound(model) if model else self._not_ollama(text)
        if status == 400 and " does not support " in text:
            feature = text.rsplit(" does not support ", 1)[1].strip().rstrip(".") or "this request"
            return UnsupportedFeature(model or "", feature)
        if status == -1 and what:
            # An {"error": ...} line after the reply had started.
            return ErrorLine(text, what=what)
        doing = {"answer": "answer", "download": "download the model"}.get(what or "", "do that")
        return ModelError(f"Ollama couldn't {doing}: {_sentence(text)}")

    def _not_ollama(self, detail: str) -> ModelError:
        return ModelError(
            f"Something answers at {self.host}, but it doesn't look like Ollama ({detail}). Check OLLAMA_HOST.",
            kind="not_ollama",
        )

    def _size_of(self, model: str) -> int | None:
        with self._lock:
            return self._sizes.get(model) or self._sizes.get(f"{model}:latest")


_CANCEL_POLL = 0.1


class _End:
    """What the reading thread leaves last: the exception that ended the stream, if any."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def _watched(
    chunks: Iterator[ChatChunk],
    cancel: threading.Event,
    *,
    stall_after: float,
    held_stall_after: float | None,
) -> Iterator[ChatChunk]:
    """Read `chunks` in a helper thread, so that `cancel` and the stall rule act even while a read blocks.

    A blocked socket read cannot be interrupted from another thread. The helper finishes that
    read (or hits the client's read timeout), sees it is no longer wanted and closes the response.
    Chunks are handed over in batches (a deque and an event set only when needed), so the
    hand-over costs almost nothing per token. `held_stall_after`, when given, replaces
    `stall_after`, and silences are then reported (see stream_chat).
    """
    handoff: collections.deque[ChatChunk | _End] = collections.deque()
    arrived = threading.Event()
    unwanted = threading.Event()

    def pump() -> None:
        end = _End()
        try:
            for chunk in chunks:
                if unwanted.is_set():
                    break
                handoff.append(chunk)
                if not arrived.is_set():
                    arrived.set()
        except BaseException as exc:
            end = _End(exc)
        finally:
            handoff.append(end)
            arrived.set()
            chunks.close()

    threading.Thread(target=pump, name="ollama-stream", daemon=True).start()
    last_line = time.monotonic()
    ticks = 0
    try:
        while True:
            if not arrived.wait(_CANCEL_POLL):
                if cancel.is_set():
                    return
                silent = time.monotonic() - last_line
                limit = stall_after if held_stall_after is None else held_stall_after
                if silent > limit:
                    raise StreamStalled(limit)
                if held_stall_after is not None and silent >= (ticks + 1) * SILENCE_TICK:
                    ticks = int(silent / SILENCE_TICK)
                    yield ChatChunk(silent_for=silent)
                continue
            arrived.clear()
            last_line, ticks = time.monotonic(), 0
            while handoff:
                item = handoff.popleft()
                if isinstance(item, _End):
                    if item.error is not None:
                        raise item.error
                    return
                kind = _joinable(item)
                if kind and handoff and _joinable(handoff[0]) == kind:
                    # A reader that fell behind takes the lines of one kind already waiting as one chunk, so what
                    # follows (readers, events, page) is paid per batch. One that keeps up gets them one by one.
                    parts = [getattr(item, kind)]
                    while handoff and _joinable(handoff[0]) == kind:
                        parts.append(getattr(handoff.popleft(), kind))
                    item = ChatChunk(**{kind: "".join(parts)})
                yield item
            if cancel.is_set():
                return
    finally:
        unwanted.set()


def _joinable(item: ChatChunk | _End) -> str | None:
    """What a line carries, if only content or only token text: it can then be joined with lines like it."""
    if type(item) is not ChatChunk or item.thinking or item.tool_calls or item.done:
        return None
    return "token" if item.token else "content"  # a line with token text has no content (see _chat_chunk)


def ollama_tool(spec: ToolSpec) -> dict[str, Any]:
    """One tool as Ollama's `tools` lists it."""
    return {"type": "function", "function": spec.as_json()}


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """Loading the CA bundle takes about 0.1 s, so every client shares one context (honouring SSL_CERT_FILE)."""
    return httpx.create_ssl_context()


def _chat_chunk(part: ollama.ChatResponse) -> ChatChunk:
    message = part.message
    done = bool(part.done)
    content, thinking = message.content or "", message.thinking or ""
    token = "" if content or thinking or not part.logprobs else "".join(p.token for p in part.logprobs)
    if not done and not message.tool_calls:  # nearly every line: one token of text, thinking or a held call
        return ChatChunk(content=content, thinking=thinking, token=token)
    calls = tuple(
        NativeToolCall(call.function.name, dict(call.function.arguments)) for call in message.tool_calls or ()
    )
    return ChatChunk(
        content=content,
        thinking=thinking,
        tool_calls=calls,
        done=done,
        done_reason=part.done_reason if done else None,
        prompt_tokens=part.prompt_eval_count if done else None,
        output_tokens=part.eval_count if done else None,
        token=token,
    )


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


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", "…")) else text + "."
