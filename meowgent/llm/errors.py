"""The one funnel for a model server's failures: every one becomes a `ModelError` of a few kinds, with the values
the page needs to say in the person's language what to do (and an English sentence for the log and the model).

A backend catches what its client raises and hands it here: the server's own error (`response_error`, from the
HTTP status and the server's text) or a failure of the connection or of its data (`failure`).
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

SUGGESTED_MODEL = "qwen3"
"""The model named in advice when no other name fits."""

_DETAIL_LIMIT = 300

FAILURES = (ConnectionError, httpx.HTTPError, ValueError)
"""What a client raises besides the server's own errors: the builtin ConnectionError is the ollama client's wording of
a refused connection (non-streaming requests only; streams let httpx.ConnectError through), ValueError is a line that
is not JSON or not shaped like the server's replies."""
_UNREACHABLE = (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout, httpx.ProxyError, httpx.UnsupportedProtocol)


class ModelError(Exception):
    """The model server could not do what we asked.

    `message` (also `str(exc)`) is a plain English sentence, for the log and for what the model is told. The page
    never shows it: it words `kind` with `values` (plain values: host, model, seconds, detail, …) from its catalogs,
    in the person's language (meowgent.ui.i18n). A `case` value, where there is one, picks the kind's sentence that
    fits. Besides the subclasses' kinds, a plain ModelError has kind "server" (the server answered with an error we
    have no better name for, its text in `detail`), "not_ollama" (something else answers at that address) or
    "bad_host" (the address is not one), or one of an OpenAI-compatible server's (`openai_error`, below).
    """

    kind = "server"

    def __init__(self, message: str, *, kind: str | None = None, values: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind is not None:
            self.kind = kind
        self.values: dict[str, object] = dict(values or {})


class ServerUnreachable(ModelError):
    """Nothing accepts connections at the server's address."""

    kind = "unreachable"

    def __init__(self, host: str) -> None:
        super().__init__(
            f"Can't reach Ollama at {host}. Start it with `ollama serve` (or open the Ollama app), then try again.",
            values={"host": host},
        )
        self.host = host


class ModelNotFound(ModelError):
    """The model is not installed (or, for a download, does not exist in the library)."""

    kind = "not_found"

    def __init__(self, model: str, *, in_library: bool = True) -> None:
        """`in_library` False: a download of a name the library does not have."""
        if not model:
            case, message = (
                "none_chosen",
                f"No model is chosen. Pick one, or download one with `ollama pull {SUGGESTED_MODEL}`.",
            )
        elif not in_library:
            case, message = (
                "not_in_library",
                f"There's no model called '{model}' to download. Check the name at https://ollama.com/library.",
            )
        else:
            case, message = "", f"The model '{model}' isn't installed. Download it with `ollama pull {model}`."
        super().__init__(message, values={"model": model or SUGGESTED_MODEL, **({"case": case} if case else {})})
        self.model = model


_FEATURE_HINTS = {
    "thinking": "Turn thinking off, or choose a model that can think, such as qwen3.",
    "tools": "Choose a model that supports tools, such as qwen3.",
}


class UnsupportedFeature(ModelError):
    """The model cannot do what the request asked for (thinking, tools, chat)."""

    kind = "unsupported"

    def __init__(self, model: str, feature: str) -> None:
        hint = _FEATURE_HINTS.get(feature, "Choose another model.")
        super().__init__(
            f"The model '{model}' doesn't support {feature}. {hint}",
            values={"model": model, "feature": feature, **({"case": feature} if feature in _FEATURE_HINTS else {})},
        )
        self.model = model
        self.feature = feature


class StreamBroken(ModelError):
    """A reply ended early: the server sent an error line, or the connection dropped."""

    kind = "broken"

    def __init__(self, detail: str, *, what: str = "answer") -> None:
        super().__init__(
            f"The {what} from Ollama broke off: {_sentence(detail)} Try again.",
            values={"case": what, "detail": _sentence(detail)},
        )
        self.detail = detail


class ErrorLine(StreamBroken):
    """The server ended a reply with an error line, e.g. its parser could not read the model's tool call."""


class StreamStalled(ModelError):
    """The server sent nothing for longer than the read timeout."""

    kind = "stalled"

    def __init__(self, seconds: float, *, streaming: bool = True) -> None:
        super().__init__(
            f"The model stopped answering for {seconds:g} s. It may be stuck or short of memory; "
            "try again, or choose a smaller model."
            if streaming
            else f"Ollama didn't answer within {seconds:g} s. It may be busy; try again.",
            values={"seconds": seconds, **({} if streaming else {"case": "request"})},
        )
        self.seconds = seconds


def failure(exc: Exception, *, host: str, read_timeout: float, what: str | None) -> ModelError:
    """A failure of the connection or of the server's data (one of FAILURES). `what` names the stream being read."""
    if isinstance(exc, _UNREACHABLE):
        return ServerUnreachable(host)
    if isinstance(exc, httpx.TimeoutException):
        return StreamStalled(read_timeout, streaming=what == "answer")
    if isinstance(exc, httpx.TransportError):
        detail = "the connection closed before it was finished (Ollama may have stopped or restarted)."
        return (
            StreamBroken(detail, what=what)
            if what
            else ModelError(
                f"The connection to Ollama at {host} broke off. Try again.", values={"case": "connection", "host": host}
            )
        )
    if what:
        return StreamBroken("Ollama sent a line Meowgent can't read.", what=what)
    return not_ollama(host, "a reply Meowgent can't read")


def response_error(status: int, text: str, *, host: str, model: str | None, what: str | None) -> ModelError:
    """The server's own error: its HTTP status (-1 for an error line in a stream that had started) and its text."""
    text = _clip(text)
    if what == "download" and model and "file does not exist" in text:
        return ModelNotFound(model, in_library=False)
    if status == 404:
        return ModelNotFound(model) if model else not_ollama(host, text)
    if status == 400 and " does not support " in text:
        feature = text.rsplit(" does not support ", 1)[1].strip().rstrip(".") or "this request"
        return UnsupportedFeature(model or "", feature)
    if status == -1 and what:
        return ErrorLine(text, what=what)
    doing = {"answer": "answer", "download": "download the model"}.get(what or "", "do that")
    case = {"case": what} if what in ("answer", "download") else {}
    return ModelError(f"Ollama couldn't {doing}: {_sentence(text)}", values={"detail": _sentence(text), **case})


def not_ollama(host: str, detail: str) -> ModelError:
    return ModelError(
        f"Something answers at {host}, but it doesn't look like Ollama ({detail}). Check OLLAMA_HOST.",
        kind="not_ollama",
        values={"host": host, "detail": detail},
    )


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?", "…")) else text + "."


# ---- OpenAI-compatible servers (vLLM, llama.cpp, LM Studio, a LiteLLM proxy) ----
# Their messages name the host (an address without any login in it) and never the API key: the server's own text is
# passed through `redacted` first, since some servers echo the key they refused.

WRONG_KEY = "wrong_key"
"""401 or 403: the server refused the API key (values: host, status)."""
BUSY = "busy"
"""429 or 503 after every retry (values: host, status, tries)."""
NO_DOWNLOAD = "no_download"
"""A model download asked of a server that cannot download models (values: host, model)."""

OPENAI_CASE = "openai"
"""The `case` of a kind Ollama shares whose sentence names Ollama (`unreachable`, `not_found`, `broken`, `server`,
`bad_host`): the page words it for another server. A kind with two such sentences has a second case that ends in it:
`stalled` of a plain request (`request_openai`), `broken` by the server's error event (`event_openai`) or by data
that is not the API's (`unreadable_openai`)."""
RETRY_STATUSES = frozenset({429, 503})
"""Statuses that mean "busy now": the request is tried again after a pause (llm/openai_client.py)."""
_HIDDEN = "••••"


def redacted(text: str, secret: str | None) -> str:
    """`text` without `secret` in it; linear in the text."""
    return text.replace(secret, _HIDDEN) if secret else text


def openai_error(status: int, text: str, *, host: str, model: str | None, secret: str | None) -> ModelError:
    """An OpenAI-compatible server's own error: its HTTP status (-1 for an error event in a stream that had started)
    and its text."""
    detail = _clip(redacted(text, secret))
    values: dict[str, object] = {"host": host, "status": status, "detail": detail}
    if status in (401, 403):
        return ModelError(
            f"The server at {host} refused the API key ({status}). Check MEOWGENT_OPENAI_API_KEY or the key file.",
            kind=WRONG_KEY,
            values=values,
        )
    if status == 404 and model:
        return missing_model(model, host=host)
    if status in RETRY_STATUSES:
        return busy(host, status=status, tries=1)
    if status == -1:
        return ModelError(
            f"The answer from {host} broke off: {_sentence(detail)} Try again.",
            kind="broken",
            values={**values, "detail": _sentence(detail), "case": "event_" + OPENAI_CASE},
        )
    return ModelError(
        f"The server at {host} couldn't answer: {_sentence(detail)}",
        values={**values, "detail": _sentence(detail), "case": OPENAI_CASE},
    )


def missing_model(model: str, *, host: str | None = None, hosts: int = 1) -> ModelError:
    """A model that the server at `host` (or, with no host, any of `hosts` servers) does not list."""
    if host is None:
        message = f"None of the model servers has a model called '{model}'."
        values: dict[str, object] = {"model": model, "hosts": hosts, "case": "pool"}
    else:
        message = f"The server at {host} has no model called '{model}'. Choose one it lists."
        values = {"model": model, "host": host, "case": OPENAI_CASE}
    return ModelError(message, kind="not_found", values=values)


def busy(host: str, *, status: int, tries: int) -> ModelError:
    return ModelError(
        f"The server at {host} is busy ({status}), also after {tries} tries. Try again in a while.",
        kind=BUSY,
        values={"host": host, "status": status, "tries": tries},
    )


def stalled_at(host: str, seconds: float) -> ModelError:
    """An OpenAI-compatible server's reply that went silent for `seconds` (the read timeout)."""
    return ModelError(
        f"The model at {host} stopped answering for {seconds:g} s. It may be stuck or short of memory; try again, "
        "or choose a smaller model.",
        kind="stalled",
        values={"host": host, "seconds": seconds, "case": OPENAI_CASE},
    )


def openai_failure(exc: Exception, *, host: str, read_timeout: float, streaming: bool) -> ModelError:
    """A failure of the connection to an OpenAI-compatible server (what its client raised it from, one of FAILURES)."""
    if isinstance(exc, _UNREACHABLE):
        return ModelError(
            f"Can't reach the model server at {host}. Check that it runs and that the address is right.",
            kind="unreachable",
            values={"host": host, "case": OPENAI_CASE},
        )
    if isinstance(exc, httpx.TimeoutException):
        if not streaming:
            return ModelError(
                f"The server at {host} didn't answer within {read_timeout:g} s. It may be busy; try again.",
                kind="stalled",
                values={"host": host, "seconds": read_timeout, "case": "request_" + OPENAI_CASE},
            )
        return stalled_at(host, read_timeout)
    if isinstance(exc, httpx.TransportError):
        return ModelError(
            f"The connection to {host} closed before the answer was finished (the server may have stopped). Try again.",
            kind="broken",
            values={"host": host, "detail": "closed", "case": OPENAI_CASE},
        )
    return ModelError(
        f"The server at {host} sent something Meowgent can't read. Check that it speaks the OpenAI API.",
        kind="broken" if streaming else "not_openai",
        values={"host": host, "detail": "unreadable", **({"case": "unreadable_" + OPENAI_CASE} if streaming else {})},
    )
