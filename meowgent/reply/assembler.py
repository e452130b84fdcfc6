"""ReplyAssembler: one model reply, read chunk by chunk into the page's events, the transcript's message and its calls.

I/O-free, in the style of httpx's decoders: `feed(chunk)` returns the events a chunk brings, `fail(error)` takes the
error that ended the stream, and `finish(ended)` the rest: what was held back, the assistant message and the calls to
queue. Calls come in two ways, and both end as the same events (see docs/architecture.md, "Model families"):
- written in the text (`<tool_call>{...}</tool_call>`), read by `ToolCallSplitter` as they stream, or as a fenced
  JSON block naming an offered tool (small models do), read from the splitter's prose by `FencedCalls`;
- parsed by the server (`ChatChunk.tool_calls`), each taking the live panel `HeldCalls` showed for it, if any.

What needs the outside comes in as callables: whether a call can run as written (`check`), whether it waits for the
person (`risky`), and the sentences for a reply that ended badly (`notes`). Every event passes the reply's
`ReplyGuard`; once it cuts the reply (`cut`), the caller stops reading and closes the stream.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from meowgent.conversation import InvalidCall
from meowgent.events import (
    AgentEvent,
    ErrorEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCall,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
)
from meowgent.llm.errors import ErrorLine, ModelError
from meowgent.llm.types import ChatChunk, Holding, NativeToolCall
from meowgent.reply.fenced import FencedCalls
from meowgent.reply.guard import Cut, Limits, ReplyGuard
from meowgent.reply.held import HeldCalls
from meowgent.reply.parse import CallParseError, new_call_id, normalize_arguments, parse_tool_call
from meowgent.reply.splitter import SplitterEvent, ToolCallSplitter

Ended = Literal["complete", "stopped", "error"]
TEXT_CALLS = "text_calls"
"""The key of an assistant message that holds the calls written in its text, parsed, and its text without them."""


class EndNotes(NamedTuple):
    """The sentences for a reply that did not end well; agent/notes.py has them, with the rest of what the model is
    told."""

    cut_off: Callable[[Literal["stopped", "error", "rejected"]], str]
    """The note that ends the transcript's copy of a reply that broke off, by why it did."""
    unclaimed: Callable[[Ended, str | None, bool], str]
    """What a live panel that never became a call says: how the reply ended, the server's words if its parser
    refused the call, and whether the model is asked to write it again."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One model reply, read to its end."""

    message: dict[str, Any]
    """The assistant message for the transcript."""
    calls: list[ToolCall | InvalidCall]
    """The calls to queue, in the model's order; none unless the reply ended complete."""
    ended: Ended
    rejected: str | None
    """The server's words when its parser refused the model's call (the reply then ended with "error")."""
    final: ChatChunk | None
    """The reply's last line, with the server's token counts."""


class ReplyAssembler:
    """Reads one reply. Whatever the chunking of the same reply, the events (consecutive deltas joined), the message
    and the calls are the same."""

    def __init__(
        self,
        limits: Limits,
        *,
        check: Callable[[ToolCall], str | None],
        risky: Callable[[ToolCall], bool],
        notes: EndNotes,
        holding: Holding,
        prompt_seconds: float,
        tools: Collection[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`check` says why a call cannot run as written (its tool is not offered, its arguments do not fit), or
        None; `prompt_seconds` is how long a silence before the first line is prompt processing (see HeldCalls);
        `tools` are the names offered, which a fenced JSON block must name to be a call.

        A call the model wrote in its text stays in the transcript's text as it wrote it; a whole reply whose calls
        all parsed also keeps them apart (`TEXT_CALLS`), for agent/request.py to send as the server's own calls while
        the answer they belong to goes on."""
        self._guard = ReplyGuard(limits)
        self._check = check
        self._risky = risky
        self._notes = notes
        self._holding = holding
        self._clock = clock
        self._splitter = ToolCallSplitter()
        self._fenced = FencedCalls(tools)
        self._held = HeldCalls(prompt_seconds=prompt_seconds)
        self._content: list[str] = []
        self._thinking: list[str] = []
        self._native: list[dict[str, Any]] = []  # the server's calls as the transcript keeps them
        self._prose: list[str] = []  # the text without the calls written in it
        self._written: list[ToolCall] = []  # the usable calls written in the text
        self._calls: list[ToolCall | InvalidCall] = []
        self._open_call: str | None = None  # the id of the call being written in the text, if any
        self._thinking_since: float | None = None
        self._final: ChatChunk | None = None
        self._rejected: str | None = None

    @property
    def cut(self) -> Cut | None:
        """Why the guard stopped the reply, once it has: the caller stops reading."""
        return self._guard.cut

    def feed(self, chunk: ChatChunk) -> list[AgentEvent]:
        """The events one line of the reply brings."""
        events: list[AgentEvent] = self._held.read(chunk)  # panels of calls the server holds back; nearly always []
        if chunk.thinking:
            if self._thinking_since is None:
                self._thinking_since = self._clock()
            self._thinking.append(chunk.thinking)
            events.insert(0, ThinkingDelta(chunk.thinking))
        elif self._thinking_since is not None and (chunk.content or chunk.tool_calls or chunk.done or events):
            events.insert(0, ThinkingDone(self._clock() - self._thinking_since))
            self._thinking_since = None
        if chunk.content:
            self._content.append(chunk.content)
            for piece in self._splitter.feed(chunk.content):
                self._split(piece, events)
        admitted = self._guard.admit(events) if events else events
        for call in chunk.tool_calls:
            if self._guard.cut:
                break
            admitted += self._guard.admit(self._native_call(call))
            arguments = {} if self._guard.cut else call.arguments  # a refused call's arguments are not kept
            self._native.append({"function": {"name": call.name, "arguments": arguments}})
        if chunk.done:
            self._final = chunk
        return admitted

    def fail(self, error: ModelError) -> list[AgentEvent]:
        """The stream ended with `error`: an error for the page, or nothing when the server's parser refused the call
        being written (then `Reply.rejected` says so, and the caller may ask the model again)."""
        # The panel shows a call the server has not delivered, or (unseen) one may have been written.
        if isinstance(error, ErrorLine) and (self._held.pending or self._holding is Holding.SILENT):
            self._rejected = error.detail
            return []
        return self._guard.admit([ErrorEvent(error.kind, error.values)])

    def finish(self, ended: Ended, *, retry_left: bool) -> tuple[list[AgentEvent], Reply]:
        """The reply ended (`ended`: as the stream did, unless the guard cut it): the events for what was held back,
        and the reply. `retry_left`: the model may still be asked once to write a refused call again."""
        if self._guard.cut:
            ended = self._guard.cut.ended
        pieces: list[AgentEvent] = []
        interrupted = ended != "complete"
        for piece in self._splitter.close():
            self._split(piece, pieces, interrupted=interrupted)
        for piece in self._fenced.close():
            self._piece(piece, pieces, interrupted=interrupted)
        # Admitted before anything below is decided: the text held back may pass a limit too, and only what the
        # page was shown may run.
        events = self._guard.admit(pieces)
        cut = self._guard.cut
        if ended != "stopped":  # after Stop, Done marks the panels as interrupted
            retried = retry_left and self._rejected is not None and not cut
            reason = cut.reason if cut else self._notes.unclaimed(ended, self._rejected, retried)
            events += self._guard.admit(list(self._held.abandon(reason, retried=retried)))
        message = self._message(ended)
        calls = [call for call in self._calls if self._guard.may_run(call.id)]
        if self._guard.refused:
            call_id, error = self._guard.refused
            calls.append(InvalidCall(call_id, "", error))
        reply = Reply(message, calls if ended == "complete" else [], ended, self._rejected, self._final)
        return events, reply

    def _message(self, ended: Ended) -> dict[str, Any]:
        """The assistant message for the transcript: the text as the model wrote it, calls in it included, and the
        server's own calls."""
        cut = self._guard.cut
        message: dict[str, Any] = {"role": "assistant", "content": self._guard.clip("".join(self._content))}
        if ended != "complete" and not cut:
            message["content"] += self._notes.cut_off("rejected" if self._rejected is not None else ended)
        if self._thinking:
            message["thinking"] = "".join(self._thinking)
        if self._native:
            message["tool_calls"] = self._native
        usable = not any(isinstance(call, InvalidCall) for call in self._calls)
        if self._written and usable and ended == "complete" and not cut:
            calls = [{"function": {"name": call.name, "arguments": call.arguments}} for call in self._written]
            message[TEXT_CALLS] = {"content": "".join(self._prose), "tool_calls": calls}
        return message

    def _split(self, piece: SplitterEvent, events: list[AgentEvent], *, interrupted: bool = False) -> None:
        """A piece from the splitter: its prose read for fenced calls; a tagged call as it is, after what the fenced
        reader held (a tag ends the prose it was reading)."""
        if type(piece) is TextDelta:
            for fenced in self._fenced.feed(piece.text):
                self._piece(fenced, events, interrupted=interrupted)
            return
        for fenced in self._fenced.close():
            self._piece(fenced, events, interrupted=interrupted)
        self._piece(piece, events, interrupted=interrupted)

    def _piece(self, piece: SplitterEvent, events: list[AgentEvent], *, interrupted: bool = False) -> None:
        """A piece of the text protocol: prose, more of the call being written, or its end."""
        if type(piece) is TextDelta:
            self._prose.append(piece.text)
            events.append(piece)
            return
        if self._open_call is None:
            self._open_call = new_call_id()
            events.append(ToolCallStarted(self._open_call))
        call_id = self._open_call
        if type(piece) is ToolCallDelta:
            events.append(ToolCallProgress(call_id, piece.text))
            return
        self._open_call = None
        if interrupted:  # the Done event that follows marks the panel; nothing to run or tell the model
            return
        try:
            if not piece.complete:
                raise CallParseError("the tool call was not finished: end it with </tool_call>.")
            call = parse_tool_call(piece.raw, call_id=call_id)
        except CallParseError as exc:
            self._invalid(InvalidCall(call_id, "", f"Error: {exc}"), piece.raw, events)
            return
        self._accept(call, events)
        if self._calls[-1] is call:  # usable
            self._written.append(call)

    def _native_call(self, native: NativeToolCall) -> list[AgentEvent]:
        """The server's parsed call, which is the one that runs; it takes the oldest live panel, if one shows it."""
        call_id, shown = self._held.claim()
        events: list[AgentEvent] = []
        name, arguments = native.name, native.arguments
        raw = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        if not shown:
            events += [ToolCallStarted(call_id), ToolCallProgress(call_id, raw)]
        try:
            call = ToolCall(call_id, name, normalize_arguments(arguments, name=name))
        except CallParseError as exc:
            self._invalid(InvalidCall(call_id, name, f"Error: {exc}"), raw, events)
            return events
        self._accept(call, events)
        return events

    def _accept(self, call: ToolCall, events: list[AgentEvent]) -> None:
        error = self._check(call)
        if error is not None:
            raw = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
            self._invalid(InvalidCall(call.id, call.name, f"Error: {error}"), raw, events)
            return
        self._calls.append(call)
        events.append(ToolCallReady(call, self._risky(call)))

    def _invalid(self, call: InvalidCall, raw: str, events: list[AgentEvent]) -> None:
        self._calls.append(call)
        events.append(ToolCallInvalid(call.id, raw, call.error))
