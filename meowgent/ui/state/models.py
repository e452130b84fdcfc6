"""Models in plain words: the status banner, picker labels, model facts and download progress."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from meowgent.events import ErrorEvent
from meowgent.llm.backend import ModelBackend
from meowgent.llm.client import OllamaClient
from meowgent.llm.errors import OPENAI_CASE, ModelError
from meowgent.llm.hosts import HostPool
from meowgent.llm.pins import pinned, with_latest
from meowgent.llm.types import Health, ModelInfo, PullProgress
from meowgent.ui.i18n import ENGLISH, error_text, t

_PULL_STEPS = {
    "pulling manifest": "pull_manifest",
    "verifying sha256 digest": "pull_verify",
    "writing manifest": "pull_finish",
    "success": "pull_done",
}


@dataclass(frozen=True)
class ServerStatus:
    banner: str
    models: tuple[ModelInfo, ...]


def server_status(client: ModelBackend, *, suggested: str, language: str = ENGLISH) -> ServerStatus:
    """Whether the model server answers, with the exact commands to fix it if not, and the installed models."""
    health = client.health()
    if not health.ok:
        return ServerStatus(_down(client, health, suggested=suggested, language=language), ())
    try:
        models = tuple(_with_facts(client, info) for info in client.list_models())
    except ModelError as exc:
        return ServerStatus(f"🔴 {error_text(language, exc)}", ())
    if not models:
        if health.version:  # Ollama's, which can download one
            return ServerStatus(t(language, "banner_empty", version=health.version, model=suggested), ())
        return ServerStatus(t(language, "banner_empty_server", host=client.host), ())
    if health.version:
        return ServerStatus(t(language, "banner_ok", version=health.version), models)
    if "hosts" in health.values:
        return ServerStatus(t(language, "banner_ok_hosts", **health.values), models)
    return ServerStatus(t(language, "banner_ok_server", host=client.host), models)


def _down(client: ModelBackend, health: Health, *, suggested: str, language: str) -> str:
    """The banner when no server answers: one Ollama's as it always was; otherwise what is wrong at the host that
    failed (a refused key, a busy server, nothing listening), and how to start one when nothing listens."""
    if isinstance(client, OllamaClient) or health.kind is None:
        return t(language, "banner_down", host=client.host, model=suggested)
    said = error_text(language, ErrorEvent(health.kind, dict(health.values)))
    problem = t(language, "banner_down_server", problem=said)
    if health.kind == "unreachable" and health.values.get("case") == OPENAI_CASE:
        problem += " " + t(language, "banner_start_server")
    return problem


def can_download(client: ModelBackend) -> bool:
    """Whether a model the servers lack can be downloaded (an Ollama server is among them). Where none can, a model
    asked for and not served is no news: the picker shows the server's own instead (the default model's name is
    Ollama's, and an OpenAI-compatible server serves what it was started with)."""
    if isinstance(client, HostPool):
        return any(host.server == "ollama" for host in client.statuses())
    return isinstance(client, OllamaClient)


def pick_model(wanted: str, installed: list[str]) -> str:
    """The installed name for `wanted` (`qwen3` is `qwen3:latest`, `qwen3@gpu-box` is `qwen3:latest@gpu-box`), else
    the first installed model."""
    for name in (wanted, with_latest(wanted)):
        if name in installed:
            return name
    return installed[0] if installed else wanted


def model_label(info: ModelInfo) -> str:
    """`qwen3:latest · 8.2B · tools · thinking`: short enough for the picker."""
    marks = [info.parameter_size or ""] + [c for c in ("tools", "thinking", "vision") if c in info.capabilities]
    return " · ".join([info.name, *[m for m in marks if m]])


def model_facts(info: ModelInfo, *, num_ctx_cap: int, language: str = ENGLISH) -> str:
    """Size, parameters, quantization, abilities and the context window in use, as a short paragraph."""
    parameters = info.parameter_size and t(language, "parameters", size=info.parameter_size)
    facts = [fact for fact in (parameters, info.quantization) if fact]
    if info.size_bytes:
        facts.append(f"{info.size_bytes / 1e9:.1f} GB")
    separator = t(language, "fact_separator")
    lines = [t(language, "facts", name=info.name, facts=separator.join(facts)) if facts else f"**{info.name}**"]
    abilities = [t(language, f"ability_{c}") for c in ("tools", "thinking", "vision") if c in info.capabilities]
    if abilities:
        lines.append(t(language, "can", abilities=t(language, "and").join(abilities)))
    if "tools" not in info.capabilities:
        lines.append(t(language, "no_native_tools"))
    lines += _window_facts(info, num_ctx_cap, language)
    return "  \n".join(lines)


def _window_facts(info: ModelInfo, num_ctx_cap: int, language: str) -> list[str]:
    """The context window in use, and where it comes from (see `WindowSource`)."""
    in_use = f"{info.window(num_ctx_cap):,}"
    if info.window_from == "default":
        return [t(language, "context_window_default", in_use=in_use)]
    if not info.context_length:
        return []
    if info.window_from == "server":
        return [t(language, "context_window_server", in_use=in_use)]
    return [t(language, "context_window", in_use=in_use, limit=f"{info.context_length:,}")]


def context_meter(tokens_used: int | None, num_ctx: int, language: str = ENGLISH) -> str:
    """`Context: 3,412 of 16,384 tokens (21%)`, after an answer; empty before the first."""
    if tokens_used is None:
        return ""
    percent = 100 * tokens_used / num_ctx
    bar = "▰" * min(10, round(percent / 10)) + "▱" * (10 - min(10, round(percent / 10)))
    used, total = f"{tokens_used:,}", f"{num_ctx:,}"
    return t(language, "context_meter", bar=bar, used=used, total=total, percent=f"{percent:.0f}")


def describe_pull(step: PullProgress, language: str = ENGLISH) -> tuple[float | None, str]:
    """Fraction done (None for a status line) and a sentence for one line of `ollama pull` progress."""
    if step.total and step.digest:
        done = step.completed or 0
        layer = step.digest.removeprefix("sha256:")[:12]
        sizes = {"done": _megabytes(done), "total": _megabytes(step.total)}
        sentence = t(language, "pull_part", layer=layer, percent=f"{100 * done / step.total:.0f}", **sizes)
        return done / step.total, sentence
    key = _PULL_STEPS.get(step.status)
    return None, t(language, key) if key else step.status.capitalize() + "…"


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _with_facts(client: ModelBackend, info: ModelInfo) -> ModelInfo:
    """`info` with what `show` adds (capabilities, context), asked of and labelled with the host that listed it."""
    name = pinned(info.name, info.host) if info.host else info.name
    try:
        return dataclasses.replace(client.show(name), host=info.host)
    except ModelError:
        return info
