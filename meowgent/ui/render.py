"""From agent events to chat messages: an incremental view, with no I/O.

`ChatView.apply(event)` is O(size of the event), so a long answer or a 1 MB tool call costs
nothing per token; `messages()` builds what the page shows, at most ~20 times a second.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import gradio as gr

from meowgent.events import (
    AgentEvent,
    ApprovalNeeded,
    Done,
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCall,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    ToolCallWriting,
    ToolResult,
    UserMessage,
)
from meowgent.toolcall import peek_call
from meowgent.ui.i18n import ENGLISH, error_text, t

STREAM_TAIL_CHARS = 2_000
"""While a call streams, only this much of its tail is shown, so a 1 MB argument stays light."""
RESULT_VIEW_CHARS = 4_000
"""Results longer than this are trimmed in the page (the model still gets all of them)."""
_KEY_ARGUMENTS = ("path", "command", "url", "pattern")
_PEEK_CHARS = 4_000  # the key argument comes first in practice; never parse a whole 1 MB call per frame

CallState = Literal["writing", "ready", "waiting", "done", "error", "rejected", "invalid", "interrupted"]
_STATE_MARK = {"error": "❌ ", "rejected": "🚫 ", "invalid": "❌ ", "interrupted": "⏹ "}
_STATE_LOG = {state: f"log_{state}" for state in ("writing", "waiting", "error", "rejected", "invalid", "interrupted")}


@dataclass
class _Text:
    role: Literal["user", "assistant"]
    parts: list[str] = field(default_factory=list)


@dataclass
class _Thinking:
    parts: list[str] = field(default_factory=list)
    seconds: float | None = None


@dataclass
class _Call:
    call_id: str
    raw: list[str] = field(default_factory=list)
    size: int = 0
    call: ToolCall | None = None
    state: CallState = "writing"
    result: str = ""
    duration: float | None = None
    edited: bool = False
    silent: float = 0.0
    """Seconds the model has been writing this call while Ollama holds its text back."""


@dataclass
class _Note:
    """An error (`kind` is the ErrorEvent's), a notice, or the stop mark, translated when shown."""

    mark: Literal["error", "notice", "stopped"]
    text: str = ""
    kind: str = ""


_Item = _Text | _Thinking | _Call | _Note


class ChatView:
    """What the page shows of one conversation, built from its events."""

    def __init__(self, language: str = ENGLISH) -> None:
        self.language = language
        """Shown in this language; change it and call messages() again to switch."""
        self._items: list[_Item] = []
        self._calls: dict[str, _Call] = {}
        self.waiting: tuple[ToolCall, ...] = ()
        """Calls waiting for the person, in order (empty when none)."""
        self.tokens_used: int | None = None
        """Prompt plus reply tokens of the last model response, as Ollama counted them."""

    def apply(self, event: AgentEvent) -> bool:
        """Take one event; True when something changed status (worth an immediate update)."""
        match event:
            case UserMessage(text):
                self.waiting = ()
                self._items.append(_Text("user", [text]))
            case TextDelta(text):
                return self._append_text(text)
            case ThinkingDelta(text):
                last = self._items[-1] if self._items else None
                if isinstance(last, _Thinking) and last.seconds is None:
                    last.parts.append(text)
                    return False
                self._items.append(_Thinking([text]))
            case ThinkingDone(seconds):
                thinking = self._open_thinking()
                if thinking is not None:
                    thinking.seconds = seconds
            case ToolCallStarted(call_id):
                self._calls[call_id] = panel = _Call(call_id)
                self._items.append(panel)
            case ToolCallProgress(call_id, text):
                panel = self._calls[call_id]
                panel.raw.append(text)
                panel.size += len(text)
                return False
            case ToolCallWriting(call_id, seconds):
                self._calls[call_id].silent = seconds
            case ToolCallReady(call, _):
                self._calls[call.id].call = call
                self._calls[call.id].state = "ready"
            case ToolCallInvalid(call_id, _, error):
                panel = self._calls[call_id]
                panel.state, panel.result = "invalid", error
            case ApprovalNeeded(calls):
                self.waiting = calls
                for call in calls:
                    self._calls[call.id].state = "waiting"
            case ToolResult(call_id, _, output, status, duration, edited):
                panel = self._calls[call_id]
                panel.state, panel.result, panel.duration = status, output, duration
                if edited is not None and panel.call is not None:
                    panel.call, panel.edited = replace(panel.call, arguments=edited), True
                self.waiting = tuple(c for c in self.waiting if c.id != call_id)
            case ErrorEvent(message, kind):
                self._items.append(_Note("error", message, kind))
            case Notice(message):
                self._items.append(_Note("notice", message))
            case Done(reason, prompt_tokens, output_tokens):
                if prompt_tokens is not None:
                    self.tokens_used = prompt_tokens + (output_tokens or 0)
                self._finish(reason)
        return True

    def messages(self) -> list[gr.ChatMessage]:
        return [message for item in self._items if (message := _render(item, self.language)) is not None]

    def _append_text(self, text: str) -> bool:
        last = self._items[-1] if self._items else None
        if isinstance(last, _Text) and last.role == "assistant":
            last.parts.append(text)
            return False
        self._items.append(_Text("assistant", [text]))
        return True

    def _open_thinking(self) -> _Thinking | None:
        for item in reversed(self._items):
            if isinstance(item, _Thinking):
                return item if item.seconds is None else None
        return None

    def _finish(self, reason: str) -> None:
        thinking = self._open_thinking()
        if thinking is not None:
            thinking.seconds = 0.0
        if reason in ("stopped", "error"):
            for panel in self._calls.values():
                if panel.state in ("writing", "ready"):
                    panel.state = "interrupted"
        if reason == "stopped":
            self._items.append(_Note("stopped"))


def _render(item: _Item, language: str) -> gr.ChatMessage | None:
    match item:
        case _Text(role, parts):
            return gr.ChatMessage(role=role, content=browser_safe("".join(parts)))
        case _Thinking(parts, seconds):
            metadata: dict[str, Any] = {
                "title": t(language, "thinking"),
                "status": "pending" if seconds is None else "done",
            }
            if seconds is not None:
                metadata["duration"] = round(seconds, 1)
            return gr.ChatMessage(role="assistant", content=browser_safe("".join(parts)), metadata=metadata)
        case _Call():
            return _render_call(item, language)
        case _Note("error", text, kind):
            return gr.ChatMessage(role="assistant", content=f"⚠️ {error_text(language, text, kind)}")
        case _Note("notice", text):
            return gr.ChatMessage(role="assistant", content=f"ℹ️ {text}")
        case _Note("stopped"):
            return gr.ChatMessage(role="assistant", content=t(language, "stopped"))
    return None


def _render_call(panel: _Call, language: str) -> gr.ChatMessage:
    if panel.call is not None:
        name, arguments = panel.call.name, panel.call.arguments
        body = arguments_view(arguments, language)
    else:
        raw = "".join(panel.raw) if panel.size <= _PEEK_CHARS else _head(panel.raw, _PEEK_CHARS)
        name, arguments = peek_call(raw)
        body = _streaming_body(panel, language)
    if panel.result:
        body += "\n\n" + fence(trim_for_view(panel.result, language=language))
    metadata: dict[str, Any] = {
        "title": browser_safe(_STATE_MARK.get(panel.state, "") + call_title(name, arguments, language)),
        "id": panel.call_id,
        "status": "pending" if panel.state in ("writing", "ready", "waiting") else "done",
    }
    if panel.edited:
        metadata["log"] = t(language, "log_edited")
    elif panel.state in _STATE_LOG:
        metadata["log"] = t(language, _STATE_LOG[panel.state])
    if panel.duration is not None and panel.state in ("done", "error"):
        metadata["duration"] = round(panel.duration, 2)
    return gr.ChatMessage(role="assistant", content=browser_safe(body), metadata=metadata)


def browser_safe(text: str) -> str:
    """Lone surrogates (JSON lets a model write `\\ud800`) cannot be sent as UTF-8; show them escaped instead."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def arguments_view(arguments: dict[str, Any], language: str = ENGLISH) -> str:
    """Each argument readable: short values inline, long or multi-line text in a block, trimmed."""
    lines = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if "\n" in text or "`" in text or len(text) > 80:
            lines.append(f"**{key}**\n\n{fence(trim_for_view(text, language=language))}")
        else:
            lines.append(f"**{key}**: `{text}`")
    return "\n\n".join(lines) or t(language, "no_arguments")


def call_title(name: str | None, arguments: dict[str, Any], language: str = ENGLISH) -> str:
    """`write_file → notes.md`: the tool and its key argument, as soon as they can be read."""
    if not name:
        return t(language, "preparing")
    key = next((arguments[k] for k in _KEY_ARGUMENTS if isinstance(arguments.get(k), str)), None)
    if key is None:
        return f"🔧 {name}"
    key = key.replace("\n", " ")
    return f"🔧 {name} → {key[:60]}{'…' if len(key) > 60 else ''}"


def _streaming_body(panel: _Call, language: str) -> str:
    if not panel.size and panel.silent:
        return t(language, "writing_call", seconds=int(panel.silent))
    if panel.size <= STREAM_TAIL_CHARS:
        return fence("".join(panel.raw), "json")
    return (
        t(language, "streaming_size", size=f"{panel.size:,}")
        + "\n\n"
        + fence("…" + _tail(panel.raw, STREAM_TAIL_CHARS), "json")
    )


def _head(parts: list[str], limit: int) -> str:
    out, size = [], 0
    for part in parts:
        out.append(part)
        size += len(part)
        if size >= limit:
            break
    return "".join(out)[:limit]


def _tail(parts: list[str], limit: int) -> str:
    out, size = [], 0
    for part in reversed(parts):
        out.append(part)
        size += len(part)
        if size >= limit:
            break
    return "".join(reversed(out))[-limit:]


def trim_for_view(text: str, limit: int = RESULT_VIEW_CHARS, *, language: str = ENGLISH) -> str:
    """Head and tail of a long result for the page; the transcript keeps all of it."""
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    cut = t(language, "more_chars", count=f"{len(text) - limit:,}")
    return f"{text[:head]}\n{cut}\n{text[-(limit - head) :]}"


def fence(text: str, language: str = "") -> str:
    """A fenced code block that no backtick run inside `text` can close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"
