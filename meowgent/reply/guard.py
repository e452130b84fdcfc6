"""Caps on one model reply: its length, the size of one tool call and the number of calls.

A broken or hostile model (prompt injection through a fetched page, say) can stream forever, write a 20 MB call or
make thousands of calls in one reply. `ReplyGuard` watches the events of one reply as they stream and stops it at the
first limit it passes: the stream is closed, so Ollama stops generating, the person gets a note (its kind and the
limit, which the page words), and where the model can do better it gets an error it can act on. Everything shown
before the limit is kept.

The guard works on the agent's events, not on the model's wire format, so it holds whatever format the calls come in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Literal

from meowgent.config import Settings
from meowgent.events import (
    AgentEvent,
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
)

CALL_HEAD_CHARS = 200
"""What the transcript and the page keep of a call that was too large: enough for the model to see what it began."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one model reply may do."""

    reply_chars: int
    """Characters of thinking, text and tool calls together."""
    call_chars: int
    """Characters of one tool call as `{"name": ..., "arguments": {...}}` JSON."""
    calls: int
    """Tool calls."""

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(settings.max_reply_chars, settings.max_call_chars, settings.max_calls_per_reply)


@dataclass(frozen=True, slots=True)
class Cut:
    """Why a reply was stopped before its end."""

    kind: Literal["reply_too_long", "call_too_large", "too_many_calls"]
    """Also the kind of the note the page gets, with the limit as its one value."""
    limit: int
    reason: str
    """Why the calls still held back did not run: the error their panels close with, which the model reads."""
    note: str
    """What the transcript's copy of the reply says where it was cut."""
    ended: Literal["complete", "error"]
    """How the reply counts: "complete" lets the calls made before the limit run and the model read why."""


def _reply_too_long(limit: int) -> Cut:
    return Cut(
        "reply_too_long",
        limit,
        f"The model's reply passed {limit:,} characters, so Meowgent stopped it there. What it wrote so far is kept. "
        "Send a message to go on, or ask for a shorter answer.",
        f"[This answer was cut off here: it passed the limit of {limit:,} characters for one reply.]",
        "error",
    )


def _call_too_large(limit: int) -> tuple[Cut, str]:
    cut = Cut(
        "call_too_large",
        limit,
        f"The model began a tool call larger than {limit:,} characters. Meowgent stopped it before it ran and asked "
        "the model to send it in smaller parts.",
        f"[… this call was cut off here: it passed the limit of {limit:,} characters for one call.]",
        "complete",
    )
    error = (
        f"Error: this call was not run: it passed {limit:,} characters, the most one call may carry, so it was cut "
        "off. Send it in smaller parts: write_file with the first part of the content, then edit_file calls that "
        "each add the next part after the end of the previous one."
    )
    return cut, error


def _too_many_calls(limit: int) -> tuple[Cut, str]:
    cut = Cut(
        "too_many_calls",
        limit,
        f"The model tried to make more than {limit} tool calls in one reply. Meowgent handled the first {limit}, "
        "stopped the reply there and told the model to make the rest in its next reply.",
        f"[Stopped here: one reply may make at most {limit} tool calls.]",
        "complete",
    )
    error = (
        f"Error: this call was not run: one reply may make at most {limit} tool calls and this was one more. Read "
        "the results of the calls before it, then make the calls you still need in your next reply."
    )
    return cut, error


def _size(call: ToolCall) -> int:
    """Characters of the call as the canonical JSON that `ToolCallProgress` carries."""
    return len(json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False))


class ReplyGuard:
    """Counts one reply's events against `Limits` and cuts the reply at the first one passed.

    `admit` passes the reply's events through until a limit is passed. It then puts a plain note for the person in
    their place (and, for a call, a `ToolCallInvalid` for that call) and drops every later event of the reply; the
    reply's reader sees `cut` and closes its stream. Only calls whose `ToolCallReady` or `ToolCallInvalid` got through
    may run (`may_run`): what runs is exactly what the page was shown.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.cut: Cut | None = None
        self.refused: tuple[str, str] | None = None
        """(call id, error for the model) of the call that passed a limit, if one did."""
        self._chars = 0
        self._calls = 0
        self._thinking_chars = 0
        self._call_chars: dict[str, int] = {}  # streamed characters of each call, by id
        self._shown: set[str] = set()

    def admit(self, events: list[AgentEvent]) -> list[AgentEvent]:
        """What the page gets of the next events of the reply, in order: all of them until the first limit."""
        out: list[AgentEvent] = []
        for event in events:
            if self.cut is None:
                self._check(event, out)
            elif self._closes_a_panel(event):
                out.append(event)
        return out

    def _closes_a_panel(self, event: AgentEvent) -> bool:
        """After a cut, only the end of a call panel the page already shows gets through (a call Ollama held back
        and will now never send): never a call that may run, never the refused call's second error."""
        return (
            isinstance(event, ToolCallInvalid)
            and event.call_id in self._call_chars
            and event.call_id not in self._shown
            and (self.refused is None or event.call_id != self.refused[0])
        )

    def may_run(self, call_id: str) -> bool:
        """Whether a call of this reply may run: only if the page was shown it as ready or invalid."""
        return call_id in self._shown

    def clip(self, text: str) -> str:
        """The reply's text for the transcript: without what passed a limit, with a note where it was cut."""
        if self.cut is None:
            return text
        if self.cut.kind == "call_too_large" and self.refused:
            # The text ends inside the call, whose streamed characters are (about) the last ones.
            streamed = self._call_chars.get(self.refused[0], 0)
            text = text[: max(0, len(text) - streamed + CALL_HEAD_CHARS)]
        return f"{text[: max(0, self.limits.reply_chars - self._thinking_chars)]}\n\n{self.cut.note}"

    def _check(self, event: AgentEvent, out: list[AgentEvent]) -> None:
        kind = type(event)  # one test per event, most often the first: this runs for every token of the reply
        if kind is TextDelta:
            self._within_reply(event, event.text, out)
        elif kind is ToolCallProgress:
            before = self._call_chars.get(event.call_id, 0)
            self._call_chars[event.call_id] = before + len(event.text)
            if before + len(event.text) > self.limits.call_chars:
                head = event.text[: max(0, CALL_HEAD_CHARS - before)]
                self._refuse(event.call_id, head, *_call_too_large(self.limits.call_chars), out)
            else:
                self._within_reply(event, event.text, out)
        elif kind is ThinkingDelta:
            self._thinking_chars += len(event.text)
            self._within_reply(event, event.text, out)
        elif kind is ToolCallStarted:
            out.append(event)
            self._call_chars[event.call_id] = 0
            self._calls += 1
            if self._calls > self.limits.calls:
                self._refuse(event.call_id, "", *_too_many_calls(self.limits.calls), out)
        elif kind is ToolCallReady:
            if not self._call_chars.get(event.call.id) and _size(event.call) > self.limits.call_chars:
                # A call that arrived whole behind a panel that showed none of its text: measured here instead.
                self._refuse(event.call.id, "", *_call_too_large(self.limits.call_chars), out)
            else:
                self._shown.add(event.call.id)
                out.append(event)
        elif kind is ToolCallInvalid:
            self._shown.add(event.call_id)
            out.append(event)
        else:
            out.append(event)

    def _within_reply(
        self, event: TextDelta | ThinkingDelta | ToolCallProgress, text: str, out: list[AgentEvent]
    ) -> None:
        """The delta, or the part of it within the reply's length limit and the note that the reply was cut."""
        room = self.limits.reply_chars - self._chars
        self._chars += len(text)
        if len(text) <= room:
            out.append(event)
            return
        if room > 0:
            out.append(replace(event, text=text[:room]))
        self.cut = _reply_too_long(self.limits.reply_chars)
        out.append(ErrorEvent(self.cut.kind, {"limit": self.cut.limit}))

    def _refuse(self, call_id: str, head: str, cut: Cut, error: str, out: list[AgentEvent]) -> None:
        self.cut, self.refused = cut, (call_id, error)
        out.append(ToolCallInvalid(call_id, head, error))
        out.append(Notice(cut.kind, {"limit": cut.limit}))
