"""A model pinned to one host: "qwen3@gpu-box" is the model qwen3, answered by the server named gpu-box.

Pure. The last "@" starts a pin only when what follows names one of the hosts (as `host_names` shows them, in any
case): a model's own "@" (a LiteLLM proxy's "claude-3-5-sonnet@20240620", Ollama's "qwen3@sha256:…") stays in
its name.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

PIN = "@"

_VERSION = re.compile(r"\d+|sha256:[0-9a-f]+")
"""What follows a model's own "@": a version (Vertex and LiteLLM names) or an Ollama digest, never a host."""


@dataclass(frozen=True, slots=True)
class Pinned:
    """A model name as the server knows it, and the host it is pinned to (None: any host that serves it)."""

    model: str
    host: str | None = None


def pinned(model: str, host: str) -> str:
    """The name that pins `model` to `host`: what the picker's "qwen3 · gpu-box" stands for."""
    return f"{model}{PIN}{host}"


def split_pin(name: str, hosts: Collection[str]) -> Pinned:
    """`name` as the model and the host among `hosts` it names; the whole name, unpinned, when it names none."""
    model, at, host = name.rpartition(PIN)
    known = _named(host, hosts) if at and model else None
    return Pinned(model, known) if known is not None else Pinned(name)


def unknown_host(name: str, hosts: Collection[str]) -> str | None:
    """The host `name` is pinned to when it is none of `hosts` (a version or a digest after "@" is no host)."""
    model, at, host = name.rpartition(PIN)
    if not at or not model or not host or _VERSION.fullmatch(host) or _named(host, hosts) is not None:
        return None
    return host


def with_latest(name: str) -> str:
    """The name as Ollama lists an untagged model: `qwen3:latest`, and `qwen3:latest@gpu-box` for `qwen3@gpu-box`."""
    model, at, host = name.rpartition(PIN)
    return f"{model}:latest{PIN}{host}" if at and model else f"{name}:latest"


def _named(host: str, hosts: Collection[str]) -> str | None:
    """The host among `hosts` that `host` names; host names are case-insensitive."""
    return next((known for known in hosts if known.lower() == host.lower()), None)
