"""What an OpenAI-compatible server says of its models besides their names: the context window it runs them with,
and whether its chat template takes tools. `/v1/models` has no field for either, so each server says it its own way:

- vLLM: `max_model_len` on each model of `/v1/models`;
- llama.cpp (`tools/server`): `meta.n_ctx` on each model of `/v1/models` (newer builds), and `/props`:
  `default_generation_settings.n_ctx` (older builds also at the top level) and `chat_template_caps.supports_tools`
  (false for a template with no tools, when the server drops `tools` from every request without a word);
- LM Studio: `/api/v0/models`, `loaded_context_length` of a loaded model (else `max_context_length`);
- Ollama's OpenAI endpoint: its own `/api/ps`, the `context_length` of a loaded model.

The readers of each answer are pure; `ask_server` asks only what the listing left open, and never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from meowgent.llm.errors import FAILURES


@dataclass(frozen=True, slots=True)
class ServerFacts:
    """What one server said; a model it said nothing of is not in `windows`."""

    windows: Mapping[str, int] = field(default_factory=dict)
    """The context window each model runs with, by the name `/v1/models` lists."""
    tools: bool | None = None
    """Whether its chat template takes tools (llama.cpp); None when it does not say."""


def listed_windows(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The windows `/v1/models` itself gives (vLLM's `max_model_len`, llama.cpp's `meta.n_ctx`), by model id."""
    windows: dict[str, int] = {}
    for entry in entries:
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        window = positive(entry.get("max_model_len")) or positive(meta.get("n_ctx"))
        if isinstance(entry.get("id"), str) and window:
            windows[entry["id"]] = window
    return windows


def props_facts(body: Any, names: Sequence[str]) -> ServerFacts:
    """llama.cpp's `/props`: one window and one template for every model it serves."""
    if not isinstance(body, dict):
        return ServerFacts()
    settings = body.get("default_generation_settings")
    window = (positive(settings.get("n_ctx")) if isinstance(settings, dict) else None) or positive(body.get("n_ctx"))
    caps = body.get("chat_template_caps")
    tools = caps.get("supports_tools") if isinstance(caps, dict) else None
    return ServerFacts({name: window for name in names} if window else {}, tools if isinstance(tools, bool) else None)


def lmstudio_windows(body: Any) -> dict[str, int]:
    """LM Studio's `/api/v0/models`: the window a loaded model runs with, else the most it takes."""
    entries = body.get("data") if isinstance(body, dict) else None
    windows: dict[str, int] = {}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            window = positive(entry.get("loaded_context_length")) or positive(entry.get("max_context_length"))
            if window:
                windows[entry["id"]] = window
    return windows


def ollama_windows(body: Any) -> dict[str, int]:
    """Ollama's `/api/ps`: the window each loaded model runs with (a model not loaded has none yet)."""
    entries = body.get("models") if isinstance(body, dict) else None
    windows: dict[str, int] = {}
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict) or not (window := positive(entry.get("context_length"))):
            continue
        for key in ("name", "model"):
            if isinstance(entry.get(key), str):
                windows[entry[key]] = window
    return windows


def ask_server(http: httpx.Client, root: str, *, headers: Mapping[str, str], names: Sequence[str]) -> ServerFacts:
    """Ask the server's own endpoints (at `root`, the URL without `/v1`) what `/v1/models` left open for `names`:
    `/props` first (it also says whether the template takes tools), then LM Studio's and Ollama's."""

    def get(path: str) -> Any:
        try:
            response = http.get(f"{root}{path}", headers=dict(headers))
            return response.json() if response.is_success else None
        except FAILURES:
            return None

    props = props_facts(get("/props"), names)
    windows = dict(props.windows)
    readers: tuple[tuple[str, Callable[[Any], dict[str, int]]], ...] = (
        ("/api/v0/models", lmstudio_windows),
        ("/api/ps", ollama_windows),
    )
    for path, read in readers:
        if all(name in windows for name in names):
            break
        windows = read(get(path)) | windows
    return ServerFacts(windows, props.tools)


def positive(value: Any) -> int | None:
    """An integer above zero, else None (JSON's true is not 1)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
