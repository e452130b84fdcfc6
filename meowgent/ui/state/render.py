"""From agent events to chat messages: an incremental view, with no I/O.

`ChatView.apply(event)` is O(size of the event), so a long answer or a 1 MB tool call costs
nothing per token; `messages()` builds what the page shows, at most ~20 times a second. The one
question about the world, where a symbolic link sends a write, is a function the page passes in.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import gradio as gr

from meowgent.events import (
    AgentEvent,
    ApprovalNeeded,
    Done,
    ErrorEvent,
    Notice,
    NotRun,
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
from meowgent.files.checkpoints import can_undo
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import EXTERNAL_TRAITS
from meowgent.ui.html.actions import action, lookup
from meowgent.ui.html.callhtml import arguments_html, label, output_html, trim_for_view
from meowgent.ui.html.prose import LiveProse, prose_html
from meowgent.ui.html.safehtml import Html, block, escape, join, tag, visible_lines
from meowgent.ui.html.tooltext import TEXTS, Look, look_of, tool_look
from meowgent.ui.html.undobutton import no_undo_note, undo_button, undone_mark
from meowgent.ui.i18n import ENGLISH, error_text, not_run_text, notice_text, t
from meowgent.ui.state.livecall import LiveCall, StreamedText

LIVE_LINES = 12
"""How many of the newest lines of a call being written are shown."""

CallState = Literal[
    "writing", "ready", "waiting", "done", "error", "rejected", "invalid", "retried", "interrupted", "repeated"
]
_STATE_MARK = {
    "error": "❌ ", "rejected": "🚫 ", "invalid": "❌ ", "retried": "🔁 ", "interrupted": "⏹ ", "repeated": "↩️ "
}  # fmt: skip
_STATE_LOG = {
    state: f"log_{state}"
    for state in ("writing", "waiting", "error", "rejected", "invalid", "retried", "interrupted", "edited", "repeated")
}
_VIEWER_LOG = _STATE_LOG | {"waiting": "log_waiting_viewer", "edited": "log_edited_viewer"}
"""What a watch page says instead: its reader watches, the presenter decides (never "waiting for your approval")."""

CHAT_CSS = """
.mg pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; }
.mg pre.mg-box, .mg pre.mg-diff { max-height: 18em; overflow: auto; }
.mg .mg-add { display: block; background: rgba(46, 160, 67, 0.2); }
.mg .mg-del { display: block; background: rgba(248, 81, 73, 0.2); }
.mg .mg-hunk { display: block; opacity: 0.7; }
.mg .mg-same { display: block; }
.mg .mg-label { font-weight: 600; margin: 6px 0 0; }
.mg details summary { cursor: pointer; opacity: 0.8; }
#chat button.undo { margin-left: 0.75em; padding: 0 0.5em; border: 1px solid currentColor; border-radius: 6px;
  font-size: 0.85em; cursor: pointer; }
#chat .undone { margin-left: 0.75em; font-size: 0.85em; opacity: 0.7; }
"""
"""The look of the classes used here; the app adds it to the page's style sheet."""


@dataclass
class _Text:
    role: Literal["user", "assistant"]
    prose: LiveProse = field(default_factory=LiveProse)


@dataclass
class _Thinking:
    prose: LiveProse = field(default_factory=LiveProse)
    seconds: float | None = None


@dataclass
class _Call:
    call_id: str
    live: LiveCall = field(default_factory=LiveCall)
    raw: StreamedText = field(default_factory=StreamedText)
    call: ToolCall | None = None
    state: CallState = "writing"
    result: str = ""
    duration: float | None = None
    edited: bool = False
    silent: float = 0.0
    """Seconds the model has been writing this call while Ollama holds its text back."""
    not_run: tuple[NotRun, Mapping[str, Any]] | None = None
    """Why it did not run, and the reason given: said in the page's language instead of the note to the model."""
    undone: bool = False
    """Every file change it made was undone since: its row says so instead of offering Undo."""


@dataclass
class _Note:
    """An error, a notice (worded from its kind and values when shown), or the stop mark (None)."""

    said: ErrorEvent | Notice | None = None


_Item = _Text | _Thinking | _Call | _Note


LinkTarget = Callable[[str], str | None]
"""Where a write to a path really goes when a symbolic link sends it elsewhere (None when it does not)."""


class ChatView:
    """What the page shows of one conversation, built from its events."""

    def __init__(
        self,
        language: str = ENGLISH,
        *,
        link_target: LinkTarget | None = None,
        tools: ToolRegistry | None = None,
        viewer: bool = False,
    ) -> None:
        """`viewer`: for a watch page, whose reader only watches: the presenter decides, and no Undo is offered."""
        self.language = language
        self._tools = tools or ToolRegistry.builtins()  # what each tool is, for its words (`meowgent.ui.html.tooltext`)
        """Shown in this language; change it and call messages() again to switch."""
        self._link_target = link_target or _no_links
        self._viewer = viewer
        self._items: list[_Item] = []
        self._calls: dict[str, _Call] = {}
        self.waiting: tuple[ToolCall, ...] = ()
        """Calls waiting for the person, in order (empty when none)."""
        self.tokens_used: int | None = None
        """Prompt plus reply tokens of the last model response, as Ollama counted them."""
        self._rendered: dict[int, tuple[tuple[Any, ...], list[gr.ChatMessage]]] = {}  # by id() of an item

    def apply(self, event: AgentEvent) -> bool:
        """Take one event; True when something changed status (worth an immediate update)."""
        match event:
            case UserMessage(text):
                self.waiting = ()
                self._items.append(_Text("user", LiveProse(text)))
            case TextDelta(text):
                return self._append_text(text)
            case ThinkingDelta(text):
                last = self._items[-1] if self._items else None
                if isinstance(last, _Thinking) and last.seconds is None:
                    last.prose.add(text)
                    return False
                self._items.append(_Thinking(LiveProse(text)))
            case ThinkingDone(seconds):
                thinking = self._open_thinking()
                if thinking is not None:
                    thinking.seconds = seconds
            case ToolCallStarted(call_id):
                self._calls[call_id] = panel = _Call(call_id)
                self._items.append(panel)
            case ToolCallProgress(call_id, text):
                panel = self._calls[call_id]
                panel.live.feed(text)
                panel.raw.add(text)
                return False
            case ToolCallWriting(call_id, seconds):
                self._calls[call_id].silent = seconds
            case ToolCallReady(call, _):
                self._calls[call.id].call = call
                self._calls[call.id].state = "ready"
            case ToolCallInvalid(call_id, _, error, retried):
                panel = self._calls[call_id]
                panel.state, panel.result = ("retried" if retried else "invalid"), error
            case ApprovalNeeded(calls):
                self.waiting = calls
                for call in calls:
                    self._calls[call.id].state = "waiting"
            case ToolResult(call_id, _, output, status, duration, edited):
                panel = self._calls[call_id]
                panel.state, panel.result, panel.duration = status, output, duration
                if event.repeated:  # its line says why; the note to the model is not for the page
                    panel.state, panel.result = "repeated", ""
                if event.not_run is not None:  # nor is it where the page can say why in the person's language
                    panel.not_run, panel.result = (event.not_run, event.reason), ""
                if edited is not None and panel.call is not None:
                    panel.call, panel.edited = replace(panel.call, arguments=edited), True
                self.waiting = tuple(c for c in self.waiting if c.id != call_id)
            case ErrorEvent() | Notice():
                self._items.append(_Note(event))
            case Done(reason, prompt_tokens, output_tokens):
                if prompt_tokens is not None:
                    self.tokens_used = prompt_tokens + (output_tokens or 0)
                self._finish(reason)
        return True

    def mark_undone(self, call_ids: Collection[str]) -> None:
        """The calls whose every file change was undone (`meowgent.ui.html.fileview.undone_calls`): their rows say
        "Undone" instead of offering Undo, which would only answer that it was undone already."""
        for call_id, panel in self._calls.items():
            panel.undone = call_id in call_ids

    def messages(self) -> list[gr.ChatMessage]:
        """The page's messages; an item rendered before and unchanged since is not rendered again."""
        out = []
        for item in self._items:
            version = (self.language, _version(item))
            cached = self._rendered.get(id(item))
            if cached is None or cached[0] != version:
                cached = self._rendered[id(item)] = (
                    version,
                    _render(item, self.language, self._link_target, self._tools, viewer=self._viewer),
                )
            out.extend(cached[1])
        return out

    def _append_text(self, text: str) -> bool:
        last = self._items[-1] if self._items else None
        if isinstance(last, _Text) and last.role == "assistant":
            last.prose.add(text)
            return False
        self._items.append(_Text("assistant", LiveProse(text)))
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
            self._items.append(_Note())


def _version(item: _Item) -> tuple[Any, ...]:
    """What an item's look depends on besides the language: equal versions render the same."""
    match item:
        case _Text(_, prose):
            return (prose.length,)
        case _Thinking(prose, seconds):
            return (prose.length, seconds)
        case _Call():
            changes = (item.raw.length, item.call is not None, len(item.result), item.duration, item.edited)
            return (item.state, int(item.silent), item.undone, *changes)
    return ()


def _no_links(path: str) -> None:
    return None


def _render(
    item: _Item, language: str, link_target: LinkTarget, tools: ToolRegistry, *, viewer: bool
) -> list[gr.ChatMessage]:
    match item:
        case _Text(role, prose):
            return [gr.ChatMessage(role=role, content=block(prose.html()))]
        case _Thinking(prose, seconds):
            metadata: dict[str, Any] = {
                "title": escape(t(language, "thinking")),
                "status": "pending" if seconds is None else "done",
            }
            if seconds is not None:
                metadata["duration"] = round(seconds, 1)
            return [gr.ChatMessage(role="assistant", content=block(prose.html()), metadata=metadata)]
        case _Call():
            return _render_call(item, language, link_target, tools, viewer=viewer)
        case _Note(ErrorEvent() as error):
            return [_note("⚠️ " + error_text(language, error))]
        case _Note(Notice() as notice):
            return [_note("ℹ️ " + notice_text(language, notice))]
        case _Note():
            return [_note(t(language, "stopped"))]
    return []


def _note(text: str) -> gr.ChatMessage:
    """An error or notice: our sentence, which may quote a server's words, so rendered like prose."""
    return gr.ChatMessage(role="assistant", content=block(prose_html(text)))


def _render_call(
    panel: _Call, language: str, link_target: LinkTarget, tools: ToolRegistry, *, viewer: bool
) -> list[gr.ChatMessage]:
    if panel.call is not None:
        name, arguments = panel.call.name, panel.call.arguments
        traits = tools.traits(name)
        path = arguments.get(traits.path) if traits.path else None
        target = link_target(path) if traits.writes is not None and isinstance(path, str) else None
        title = action(name, lookup(arguments), language, target=target, tools=tools)
        body = arguments_html(name, arguments, language, tools=tools)
    else:
        title, body = _live_view(panel, language, tools)
        if panel.state in ("invalid", "retried") and not panel.live.name:
            title = escape(t(language, "invalid_call"))
    output_outside = (
        panel.call is not None and panel.state in ("done", "error") and tool_look(panel.call.name, tools) is Look.RUN
    )
    if panel.result and not output_outside:
        body = join([body, tag("pre", trim_for_view(_result_shown(panel, tools), language=language), cls="mg-box")])
    if panel.not_run is not None:  # the rules' reason quotes the command, which may be as long as the model made it
        body = join([body, tag("p", trim_for_view(not_run_text(language, *panel.not_run), language=language))])
    button, note = _undo_parts(panel, language, tools)
    metadata: dict[str, Any] = {
        "title": join([_STATE_MARK.get(panel.state, ""), title, "" if viewer else button]),
        "id": panel.call_id,
        "status": "pending" if panel.state in ("writing", "ready", "waiting") else "done",
    }
    logs = _VIEWER_LOG if viewer else _STATE_LOG
    state = "edited" if panel.edited else panel.state
    if state in logs:
        metadata["log"] = t(language, logs[state])
    if panel.duration is not None and panel.state in ("done", "error"):
        metadata["duration"] = round(panel.duration, 2)
    messages = [gr.ChatMessage(role="assistant", content=block(join([body, note])), metadata=metadata)]
    if output_outside:
        messages.append(gr.ChatMessage(role="assistant", content=block(output_html(panel.result, language))))
    return messages


def _result_shown(panel: _Call, tools: ToolRegistry) -> str:
    """What a call's result box shows: a finished edit's result repeats the diff drawn above it, so only its
    first line ("Edited a.md at line 3.")."""
    if panel.call is not None and panel.state == "done" and tool_look(panel.call.name, tools) is Look.EDIT:
        return panel.result.partition("\n")[0]
    return panel.result


def _undo_parts(panel: _Call, language: str, tools: ToolRegistry) -> tuple[Html, Html]:
    """A finished call's Undo as (for its title, for its body): for a file it wrote, the button, on the row a
    person sees without opening the panel; for a command, "can't be undone" inside; else nothing."""
    call = panel.call
    if call is None or panel.state != "done":
        return Html(""), Html("")
    if call.name in tools.all() and can_undo(tools.get(call.name)):
        return (undone_mark(language) if panel.undone else undo_button(call.id, language)), Html("")
    if tool_look(call.name, tools) is Look.RUN:
        return Html(""), no_undo_note(language)
    return Html(""), Html("")


def _live_view(panel: _Call, language: str, tools: ToolRegistry) -> tuple[Html, Html]:
    """Title and body of a call still being written: its last lines as text, not JSON."""
    live = panel.live
    arguments = live.arguments
    traits = tools.traits(live.name) if live.name else EXTERNAL_TRAITS
    lines = None  # the count in "Writing report.md… 57 lines so far", only while the call is being written
    if panel.state == "writing" and traits.writes is not None:
        content = arguments.get(traits.main) if traits.main else None
        lines = content.lines if content is not None else 0
    title = action(live.name, lambda key: _head_text(arguments.get(key)), language, live_lines=lines, tools=tools)
    if not panel.raw.length and panel.silent:  # Ollama holds the call's text back while the model writes it
        return title, tag("p", t(language, "writing_call", seconds=int(panel.silent)))
    in_title = {traits.path} if TEXTS[look_of(live.name, traits)].path_in_title else set()
    shown = [key for key, text in arguments.items() if not text.raw and key not in in_title]
    if live.broken or not shown:
        return title, tag("pre", _tail_lines(panel.raw))
    parts = []
    for key in shown:
        text = arguments[key]
        parts += [label(key, language), tag("pre", _live_text(key, text))]
    raw = tag("pre", panel.raw.head() if panel.raw.whole else "…" + panel.raw.tail(), cls="mg-box")
    parts.append(tag("details", tag("summary", t(language, "technical")), raw))
    return title, join(parts)


def _live_text(key: str, text: StreamedText) -> str:
    """The last lines of an argument being written; a command's runs of blank lines folded, as everywhere."""
    if key != "command":
        return "\n".join(text.last_lines(LIVE_LINES))
    # While the command is whole in the head, the marks count its real runs, not only those in its last lines.
    folded = visible_lines(text.head() if text.whole else "\n".join(text.last_lines(LIVE_LINES)))
    return "\n".join(folded.split("\n")[-LIVE_LINES:])


def _head_text(text: StreamedText | None) -> str | None:
    return None if text is None or text.raw else text.head()


def _tail_lines(text: StreamedText) -> str:
    return "\n".join(text.last_lines(LIVE_LINES))
