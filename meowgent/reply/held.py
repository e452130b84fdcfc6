"""Live panels for the calls Ollama holds back, and which of Ollama's native calls each panel becomes.

A model with a builtin parser writes its calls in its own format, and Ollama sends them only at the end, as
`tool_calls`. Meanwhile the page shows a panel per call: from the held-back token text when Ollama sends it
(`logprobs`), read by `CallTextReader`, or else a panel that counts the seconds of silence. Ollama's calls arrive
in the order they were written, so the n-th native call takes the n-th panel and the page shows one panel per call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from meowgent.events import AgentEvent, ToolCallInvalid, ToolCallProgress, ToolCallStarted, ToolCallWriting
from meowgent.llm.types import ChatChunk
from meowgent.reply.formats import CallClosed, CallOpened, CallPiece, CallTextReader
from meowgent.reply.parse import new_call_id

_NOT_A_CALL = "The model paused, but it was not writing a tool call."

SHOW_SILENCE_AFTER = 2.0
"""Seconds of silence before a reply that may hold back a call gets a "writing a tool call" panel: a token
takes well under a second, so a longer silence after the reply started is a call Ollama holds back."""


class HeldCalls:
    """The panels of one reply's held-back calls, in the order the model wrote them."""

    def __init__(self, *, prompt_seconds: float) -> None:
        """`prompt_seconds`: before the reply's first line, silence is prompt processing for this long (the read
        timeout), and only a longer one is shown as a call being written."""
        self._prompt_seconds = prompt_seconds
        self._started = False
        self._reader = CallTextReader()
        self._writing: str | None = None  # the panel the reader is filling
        self._silent: str | None = None  # the panel counting a silence
        self._unclaimed: deque[str] = deque()  # panels shown, waiting for their native call
        self._text: dict[str, list[str]] = {}  # canonical text so far, for a panel that ends without a call
        self._settled = True  # the reader holds nothing and no silence panel shows: prose ends nothing

    @property
    def pending(self) -> bool:
        """A panel shows a call that Ollama has not delivered (yet)."""
        return bool(self._unclaimed)

    def read(self, chunk: ChatChunk) -> list[AgentEvent]:
        """The panel events one line of the reply brings: held-back text, a silence, or text ending a silence."""
        if chunk.silent_for:
            return list(self.silence(chunk.silent_for))
        self._started = True
        if chunk.token:
            return list(self.tokens(chunk.token))
        if (chunk.content or chunk.thinking) and not self._settled:
            return self.prose()
        return []  # nearly every line: a plain test, no call

    def tokens(self, text: str) -> Iterator[AgentEvent]:
        """Held-back token text: panels open and fill as calls are read from it."""
        self._settled = False
        for event in self._reader.feed(text):
            if isinstance(event, CallOpened):
                self._writing = self._open()
                yield ToolCallStarted(self._writing)
            elif isinstance(event, CallPiece) and self._writing is not None:
                self._text[self._writing].append(event.text)
                yield ToolCallProgress(self._writing, event.text)
            elif isinstance(event, CallClosed):
                self._writing = None

    def silence(self, seconds: float) -> Iterator[AgentEvent]:
        """The reply has been silent `seconds`: after a while, a panel says a call is being written."""
        if seconds < (SHOW_SILENCE_AFTER if self._started else self._prompt_seconds):
            return
        if self._silent is None:
            self._silent, self._settled = self._open(), False
            yield ToolCallStarted(self._silent)
        yield ToolCallWriting(self._silent, seconds)

    def prose(self) -> list[AgentEvent]:
        """Ollama sent reply text or thinking: what it held was not a call, so a silence panel or a cut tag ends."""
        if not self._reader.in_call:
            self._reader.reset()
        closed = [] if self._silent is None else list(self._close(self._silent, _NOT_A_CALL))
        self._settled = not self._reader.in_call
        return closed

    def claim(self) -> tuple[str, bool]:
        """The id for Ollama's next native call: the oldest open panel's (True), or a new one (False)."""
        if not self._unclaimed:
            return new_call_id(), False
        call_id = self._unclaimed.popleft()
        self._text.pop(call_id, None)
        if call_id == self._writing:  # Ollama ended the call where the reader did not see an end
            self._reader.reset()
            self._writing = None
        if call_id == self._silent:
            self._silent = None
        return call_id, True

    def abandon(self, reason: str, *, retried: bool = False) -> Iterator[AgentEvent]:
        """The reply ended: panels no native call took end with `reason` (`retried`: the model writes them again)."""
        while self._unclaimed:
            yield from self._close(self._unclaimed[0], reason, retried=retried)

    def _open(self) -> str:
        call_id = new_call_id()
        self._unclaimed.append(call_id)
        self._text[call_id] = []
        return call_id

    def _close(self, call_id: str, reason: str, *, retried: bool = False) -> Iterator[AgentEvent]:
        self._unclaimed.remove(call_id)
        if call_id == self._silent:
            self._silent = None
        if call_id == self._writing:
            self._writing = None
            self._reader.reset()
        yield ToolCallInvalid(call_id, "".join(self._text.pop(call_id)), reason, retried)
