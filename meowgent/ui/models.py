"""Models in plain words: the status banner, picker labels, model facts and download progress."""

from __future__ import annotations

from dataclasses import dataclass

from meowgent.llm import ModelError, ModelInfo, OllamaClient, PullProgress

_PULL_STEPS = {
    "pulling manifest": "Looking up the model…",
    "verifying sha256 digest": "Checking the download…",
    "writing manifest": "Finishing…",
    "success": "Done.",
}


@dataclass(frozen=True)
class ServerStatus:
    banner: str
    models: tuple[ModelInfo, ...]


def server_status(client: OllamaClient, *, suggested: str) -> ServerStatus:
    """Whether Ollama answers, with the exact commands to fix it if not, and the installed models."""
    health = client.health()
    if not health.ok:
        return ServerStatus(f"🔴 {health.message}", ())
    try:
        models = tuple(_with_facts(client, info) for info in client.list_models())
    except ModelError as exc:
        return ServerStatus(f"🔴 {exc.message}", ())
    if not models:
        return ServerStatus(
            f"🟡 Ollama {health.version} is running but has no models yet. "
            f"Download one below, or in a terminal: `ollama pull {suggested}`",
            (),
        )
    return ServerStatus(f"🟢 Connected to Ollama {health.version}", models)


def pick_model(wanted: str, installed: list[str]) -> str:
    """The installed name for `wanted` (`qwen3` is `qwen3:latest`), else the first installed model."""
    for name in (wanted, f"{wanted}:latest"):
        if name in installed:
            return name
    return installed[0] if installed else wanted


def model_label(info: ModelInfo) -> str:
    """`qwen3:latest · 8.2B · tools · thinking`: short enough for the picker."""
    marks = [info.parameter_size or ""] + [c for c in ("tools", "thinking", "vision") if c in info.capabilities]
    return " · ".join([info.name, *[m for m in marks if m]])


def model_facts(info: ModelInfo, *, num_ctx_cap: int) -> str:
    """Size, parameters, quantization, abilities and the context window in use, as a short paragraph."""
    facts = [f for f in (info.parameter_size and f"{info.parameter_size} parameters", info.quantization) if f]
    if info.size_bytes:
        facts.append(f"{info.size_bytes / 1e9:.1f} GB")
    lines = [f"**{info.name}**" + (f": {', '.join(facts)}." if facts else "")]
    abilities = [
        label
        for capability, label in (("tools", "use tools"), ("thinking", "think first"), ("vision", "see images"))
        if capability in info.capabilities
    ]
    if abilities:
        lines.append("Can " + " and ".join(abilities) + ".")
    if "tools" not in info.capabilities:
        lines.append("No built-in tool support: Meowgent explains the tools in its instructions instead.")
    if info.context_length:
        in_use = min(info.context_length, num_ctx_cap)
        lines.append(f"Context window: {in_use:,} tokens in use (the model allows {info.context_length:,}).")
    return "  \n".join(lines)


def context_meter(tokens_used: int | None, num_ctx: int) -> str:
    """`Context: 3,412 of 16,384 tokens (21%)`, after an answer; empty before the first."""
    if tokens_used is None:
        return ""
    percent = 100 * tokens_used / num_ctx
    bar = "▰" * min(10, round(percent / 10)) + "▱" * (10 - min(10, round(percent / 10)))
    return f"Context: {bar} {tokens_used:,} of {num_ctx:,} tokens ({percent:.0f}%)"


def describe_pull(step: PullProgress) -> tuple[float | None, str]:
    """Fraction done (None for a status line) and a sentence for one line of `ollama pull` progress."""
    if step.total and step.digest:
        done = step.completed or 0
        layer = step.digest.removeprefix("sha256:")[:12]
        percent = 100 * done / step.total
        return (
            done / step.total,
            f"Downloading part {layer}: {_megabytes(done)} of {_megabytes(step.total)} ({percent:.0f}%)",
        )
    return None, _PULL_STEPS.get(step.status, step.status.capitalize() + "…")


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _with_facts(client: OllamaClient, info: ModelInfo) -> ModelInfo:
    try:
        return client.show(info.name)
    except ModelError:
        return info
