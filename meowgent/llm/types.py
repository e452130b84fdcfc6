"""What Meowgent and a model server say to each other, in our own terms: no server's wire format, no `import ollama`.

Each backend in llm/ turns a `ChatRequest` into its server's request and its server's lines into `ChatChunk`s; the
rest of the code base (and `tools/`, which only needs `ToolSpec`) imports these types without loading a client.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Literal, NamedTuple

WindowSource = Literal["model", "server", "default"]
"""Where a model's context window comes from: "model", the most the model takes (Ollama's, which runs it with
`num_ctx` up to that); "server", the window a server was started with, which no request changes (llama.cpp's
`-c`, vLLM's `--max-model-len`); "default", nowhere: the server does not say, and `num_ctx` is assumed."""


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

    def brief(self) -> ToolSpec:
        """The same tool in fewer words, for a small context window: the description's first sentence, on one line.
        The arguments' schema stays whole: a call must still fit it."""
        first = _FIRST_SENTENCE.match(self.description)
        return replace(self, description=" ".join((first.group(1) if first else self.description).split()))


_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)
"""Up to the first full stop that ends a sentence (followed by a space or the end), not one inside "1.5" or "a.txt"."""


@dataclass(frozen=True, slots=True)
class NativeToolCall:
    """A tool call that the server's own parser already took out of the model's text (Ollama's `tool_calls`)."""

    name: str
    arguments: dict[str, Any]
    """Always a dict: a line whose arguments are not a JSON object is refused (that is StreamBroken).
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
    """The tokens of the prompt the server counted, on the final chunk only."""
    output_tokens: int | None = None
    """The tokens it generated, on the final chunk only."""
    token: str = ""
    """The model's own text of a line whose content and thinking are empty: text the server's parser holds back
    (a tool call being written, or a tag it consumed), where the server can show it (`Holding.SHOWN`)."""
    silent_for: float = 0.0
    """Not a line from the server: the reply has been silent this long while a call may be held back."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What Meowgent needs to know about one installed model."""

    name: str
    """As the server lists it ("qwen3:latest") in `list_models()`; as asked for in `show()`."""
    capabilities: frozenset[str]
    """E.g. {"completion", "tools", "thinking", "vision"} in `show()`; empty in `list_models()`."""
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
    host: str | None = None
    """Where it runs, when several servers serve models (`HostPool`): the host's short name, e.g. "gpu-box"."""
    window_from: WindowSource = "model"
    """What `context_length` is (see `WindowSource`)."""

    def window(self, num_ctx: int) -> int:
        """The context window a request is fitted to: a server's own as it is; else the model's, at most `num_ctx`."""
        if self.window_from == "server" and self.context_length:
            return self.context_length
        return min(self.context_length or num_ctx, num_ctx)


class Holding(Enum):
    """Whether the server holds back the model's tool calls while they are written, and whether we see their text."""

    NONE = "none"
    """Calls are in the reply's text as the model writes them (the text protocol)."""
    SHOWN = "shown"
    """The server holds calls back and sends whole ones at the end; meanwhile their text comes as `ChatChunk.token`."""
    SILENT = "silent"
    """The server holds calls back and shows nothing of them: a silence may be a call being written."""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """How to ask one model for tools on its server (see docs/architecture.md, "Model families")."""

    info: ModelInfo
    native_tools: bool
    """The server's builtin parser reads this model's calls on every chat: offer the tools natively and run the
    calls it sends (`ChatChunk.tool_calls`), instead of describing them in the system prompt."""
    holding: Holding
    told_format: bool = False
    """With native tools, the prompt still says how to write a call (`<tool_call>` JSON): an OpenAI-compatible
    server's small models, asked for their "usual format", invent one (Qwen2.5-Coder 1.5B on llama-server wrote
    `<tools><function name=… arguments='…'/></tools>`); that format is what llama.cpp's and vLLM's Hermes parsers
    read, and what the reply readers take from the text on any other."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One reply asked of a model, in our own terms; a backend writes it in its server's format.

    `messages` is the transcript as it is stored (results as role "tool" with their `tool_name`, calls as
    `tool_calls`), already fitted to the context window; the backend adapts it to what the model can read.
    """

    model: str
    system: str
    """The system prompt, sent first."""
    messages: tuple[dict[str, Any], ...]
    tools: tuple[ToolSpec, ...] | None
    """The tools offered natively, or None when the system prompt describes them (the text protocol)."""
    think: bool
    """Whether the person wants the model to think; a model that cannot is not asked either way."""
    capabilities: frozenset[str]
    """The model's, from `ModelInfo`: what the backend may ask of it and how it reads tool results."""
    context: int
    """The context window in tokens, which the request was fitted to."""
    holding: Holding
    chat: str | None = None
    """The chat the reply belongs to: with several hosts, a chat stays on one, so its prompt cache is reused."""


@dataclass(frozen=True, slots=True)
class PullProgress:
    """One progress line of a model download, as the server reports it."""

    status: str
    digest: str | None = None
    total: int | None = None
    completed: int | None = None


@dataclass(frozen=True, slots=True)
class Health:
    """Whether the server answers; `message` is what the connection banner shows."""

    ok: bool
    version: str | None
    message: str
    kind: str | None = None
    """The failure's `ModelError.kind` when not ok (None when the backend does not say)."""
    values: Mapping[str, object] = field(default_factory=dict)
    """The failure's `ModelError.values`, for the page to word."""
