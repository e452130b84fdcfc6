"""Several model servers as one `ModelBackend`: Ollama hosts and OpenAI-compatible servers, in one model list.

`HostPool` routes each reply: a chat stays on the host it started on while that host is healthy (the server's
prompt cache holds its transcript); a new chat goes to the healthy host with the model that runs the fewest
replies now. A host whose reply fails (unreachable, broken off, stalled, busy) ends that reply with its error and
is marked unhealthy, so the next reply goes elsewhere; its next good reply marks it healthy again. A model pinned
to a host ("qwen3@gpu-box", llm/pins.py) always goes to that host. One server alone is used as it is, without a pool
(`backend_for`), so a single host sends exactly the requests it always did, unless the model is pinned to it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from meowgent.config import Settings, is_loopback
from meowgent.llm.backend import ModelBackend
from meowgent.llm.errors import ModelError, ModelNotFound, missing_model
from meowgent.llm.pins import Pinned, split_pin, unknown_host
from meowgent.llm.types import ChatChunk, ChatRequest, Health, ModelInfo, ModelProfile, PullProgress

HOST_FAILURES = frozenset({"unreachable", "broken", "stalled", "busy"})
"""Error kinds that say the host, not the request, failed: the next reply goes to another host."""


@dataclass(frozen=True, slots=True)
class HostStatus:
    """One host as the status line shows it: values, which the page words."""

    name: str
    """Short: "gpu-box" from http://gpu-box:8000/v1 (with the port when two hosts share a name)."""
    url: str
    server: str
    """"ollama" or "openai"."""
    local: bool
    """On this computer (a loopback address): the page says so in its own words."""
    healthy: bool
    running: int
    """Replies it is streaming now."""
    kind: str | None = None
    """The `ModelError.kind` of its last failure, while unhealthy."""


class UnknownHost(ValueError):
    """The model the settings name is pinned to a host that none of the model servers is: said at start."""


class _Host:
    def __init__(self, name: str, backend: ModelBackend, server: str) -> None:
        self.name, self.backend, self.server = name, backend, server
        self.healthy = True
        self.running = 0
        self.failure: str | None = None
        self.models: frozenset[str] = frozenset()


class HostPool:
    """Several servers as one backend; safe to share between threads."""

    def __init__(self, backends: Sequence[tuple[ModelBackend, str]]) -> None:
        """`backends`: each server and what it is ("ollama" or "openai"), in the order the person listed them."""
        if not backends:
            raise ValueError("a pool needs at least one host")
        names = host_names([backend.host for backend, _ in backends])
        self._hosts = [_Host(name, backend, server) for name, (backend, server) in zip(names, backends, strict=True)]
        self._named = {host.name: host for host in self._hosts}
        self._lock = threading.Lock()
        self._sticky: dict[str, _Host] = {}
        self.host = ", ".join(host.backend.host for host in self._hosts)

    def stream_chat(
        self, request: ChatRequest, *, cancel: threading.Event | None = None
    ) -> Generator[ChatChunk, None, None]:
        host, model = self._route(request.model, request.chat)
        return self._streamed(host, dataclasses.replace(request, model=model), cancel)

    def _streamed(
        self, host: _Host, request: ChatRequest, cancel: threading.Event | None
    ) -> Generator[ChatChunk, None, None]:
        with self._lock:
            host.running += 1
        try:
            yield from host.backend.stream_chat(request, cancel=cancel)
        except ModelError as exc:
            if exc.kind in HOST_FAILURES:
                self._mark(host, exc.kind)
            raise
        else:
            self._mark(host, None)
        finally:
            with self._lock:
                host.running -= 1

    def profile(self, model: str) -> ModelProfile:
        """The profile on the host a new chat with `model` would go to."""
        host, name = self._route(model, None)
        return _labelled_profile(host.backend.profile(name), host.name)

    def show(self, model: str) -> ModelInfo:
        host, name = self._route(model, None)
        return dataclasses.replace(host.backend.show(name), host=host.name)

    def list_models(self) -> list[ModelInfo]:
        """Every host's models, each labelled with its host (a model on two hosts is listed twice). Hosts that
        fail are marked unhealthy and left out; if all fail, the first one's error is raised."""
        models: list[ModelInfo] = []
        errors: list[ModelError] = []
        for host in self._hosts:
            try:
                listed = host.backend.list_models()
            except ModelError as exc:
                self._mark(host, exc.kind)
                errors.append(exc)
                continue
            self._mark(host, None)
            with self._lock:
                host.models = frozenset(model.name for model in listed)
            models += [dataclasses.replace(model, host=host.name) for model in listed]
        if errors and len(errors) == len(self._hosts):
            raise errors[0]
        return models

    def health(self, model: str | None = None) -> Health:
        """Healthy when any host is; each host's own is in `statuses()` after this."""
        results = [(host, host.backend.health()) for host in self._hosts]
        for host, health in results:
            self._mark(host, None if health.ok else health.kind or "unreachable")
        good = [host.name for host, health in results if health.ok]
        if not good:
            first = results[0][1]
            return dataclasses.replace(first, values={**first.values, "hosts": len(results)})
        if model:
            try:
                self._route(model, None)
            except ModelError as exc:
                return Health(ok=False, version=None, message=exc.message, kind=exc.kind, values=exc.values)
        return Health(
            ok=True,
            version=None,
            message=f"Connected to {len(good)} of {len(results)} model servers.",
            values={"healthy": len(good), "hosts": len(results)},
        )

    def statuses(self) -> list[HostStatus]:
        """Each host's health as last seen, and the replies it runs now (no request is made)."""
        with self._lock:
            return [
                HostStatus(
                    host.name,
                    host.backend.host,
                    host.server,
                    is_local(host.backend.host),
                    host.healthy,
                    host.running,
                    host.failure,
                )
                for host in self._hosts
            ]

    def pull(self, model: str) -> Iterator[PullProgress]:
        """Downloads go to the host the name is pinned to, else to the first Ollama host (OpenAI-compatible servers
        cannot download)."""
        pin = self.pin(model)
        if pin.host is not None:
            return self._named[pin.host].backend.pull(pin.model)
        host = next((h for h in self._hosts if h.server == "ollama"), self._hosts[0])
        return host.backend.pull(model)

    def pin(self, name: str) -> Pinned:
        """`name` as the model and the host it is pinned to, if it names one of these hosts."""
        return split_pin(name, self._named)

    def check_pin(self, name: str) -> None:
        """Raise `UnknownHost` when `name` is pinned to a host none of these servers is."""
        host = unknown_host(name, self._named)
        if host is not None:
            raise UnknownHost(
                f"The model {name} is pinned to {host}, but no model server is called that. The servers are: "
                f"{', '.join(self._named)}. Write the model as NAME@SERVER with one of them (--model, MEOWGENT_MODEL)."
            )

    def answering(self, name: str, chat: str | None) -> Pinned:
        """The model and the host the next reply of `chat` with `name` goes to (host None when none serves it),
        without sending it there: what the status line names."""
        try:
            host, model = self._choose(name, chat)
        except ModelError:
            return Pinned(self.pin(name).model)
        return Pinned(model, host.name)

    def _route(self, name: str, chat: str | None) -> tuple[_Host, str]:
        """The host for the next reply of `chat` (kept for its later replies) and the model name that host knows."""
        host, model = self._choose(name, chat)
        if chat:
            with self._lock:
                self._sticky[chat] = host
        return host, model

    def _choose(self, name: str, chat: str | None) -> tuple[_Host, str]:
        pin = self.pin(name)
        if pin.host is not None:  # the person chose the host: it answers, healthy or not
            return self._named[pin.host], pin.model
        having = self._with_model(pin.model)
        with self._lock:
            sticky = self._sticky.get(chat) if chat else None
            if sticky is not None and sticky in having and sticky.healthy:
                return sticky, pin.model
            # An unhealthy host is still tried when no healthy one has the model: it may be back.
            candidates = [host for host in having if host.healthy] or having
            return min(candidates, key=lambda host: host.running), pin.model  # the first of equals: the person's order

    def _with_model(self, model: str) -> list[_Host]:
        if not model:
            raise ModelNotFound("")
        having = self._listing(model)
        if not having:  # not seen yet: list again (a model may have been added since)
            with contextlib.suppress(ModelError):
                self.list_models()
            having = self._listing(model)
        if not having:
            raise missing_model(model, hosts=len(self._hosts))
        return having

    def _listing(self, model: str) -> list[_Host]:
        with self._lock:
            return [host for host in self._hosts if model in host.models or f"{model}:latest" in host.models]

    def _mark(self, host: _Host, failure: str | None) -> None:
        with self._lock:
            host.healthy, host.failure = failure is None, failure


def backend_for(settings: Settings) -> ModelBackend:
    """The backend the settings name: one server as it is, or a pool of every host listed (or of the one server a
    model is pinned to). Raises `UnknownHost` when the model is pinned to a host none of them is."""
    from meowgent.llm.client import OllamaClient  # imported here: only a run with Ollama hosts needs it
    from meowgent.llm.openai_client import OpenAIClient

    timeouts = {"connect_timeout": settings.connect_timeout, "read_timeout": settings.read_timeout}
    key = settings.openai_key.reveal() if settings.openai_key else None
    backends: list[tuple[ModelBackend, str]] = [
        (OllamaClient(url, **timeouts), server)
        if server == "ollama"
        else (OpenAIClient(url, api_key=key, **timeouts), server)
        for url, server in named_servers(settings)
    ]
    pool = HostPool(backends)
    pool.check_pin(settings.model)
    if len(backends) == 1 and pool.pin(settings.model).host is None:
        return backends[0][0]
    return pool


def named_servers(settings: Settings) -> list[tuple[str, str]]:
    """Every server the settings name, as (URL, "ollama" or "openai"), in order. The default Ollama address is
    asked only when no server is named: OpenAI servers alone are exactly those."""
    ollama = settings.ollama_hosts or (() if settings.openai_urls else (settings.ollama_host,))
    return [*((url, "ollama") for url in ollama), *((url, "openai") for url in settings.openai_urls)]


def host_names(urls: Sequence[str]) -> list[str]:
    """Each server's short name: its host name, with the port where two share one."""
    names = [urlsplit(url).hostname or url for url in urls]
    return [
        f"{name}:{urlsplit(url).port}" if names.count(name) > 1 and urlsplit(url).port else name
        for name, url in zip(names, urls, strict=True)
    ]


def is_local(url: str) -> bool:
    """Whether the server runs on this computer (a loopback address or `localhost`)."""
    return is_loopback(urlsplit(url).hostname or "")


def _labelled_profile(profile: ModelProfile, host: str) -> ModelProfile:
    return dataclasses.replace(profile, info=dataclasses.replace(profile.info, host=host))
