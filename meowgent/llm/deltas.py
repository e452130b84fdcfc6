"""The tool calls of an OpenAI-compatible stream, from their `delta.tool_calls` fragments; I/O-free.

A server with a tool parser (vLLM's `--tool-call-parser`, llama.cpp's `--jinja`) sends each call as fragments: an
`index`, an `id` and the function's `name` first (llama.cpp with `"arguments": ""`), then `arguments` text a piece at
a time, or the whole of it in one. `ToolCallDeltas.feed` turns them into live text in the format the model families'
reader already knows, `<tool_call>{"name": "NAME", "arguments": ARGUMENTS}</tool_call>`: the client sends it as
`ChatChunk.token` (`Holding.SHOWN`), so the live panels read it through `HeldCalls` like Ollama's held-back calls,
and `finish` gives the calls that run, which take those panels in order.

Servers differ in how they number parallel calls: vLLM counts `index` up, some servers send every call at `index` 0;
a new `id` at an index starts a new call. Each fragment is handled in O(its length); the live text of a call is
append-only, so the whole is linear in the reply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic_core import from_json

from meowgent.llm.types import NativeToolCall

OPEN = "<tool_call>"
CLOSE = "</tool_call>"


@dataclass
class _Call:
    index: int | None
    id: str | None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    shown: bool = False
    """Its live text has begun (it needs its name first)."""


class ToolCallDeltas:
    """One reply's calls, fragment by fragment. Whatever the fragments' split, the calls and the live text (joined)
    are the same."""

    def __init__(self) -> None:
        self._calls: list[_Call] = []
        self._live: _Call | None = None  # the call whose live text is open

    def feed(self, index: int | None, call_id: str | None, name: str | None, arguments: str | None) -> str:
        """One fragment of `delta.tool_calls`; returns the live text it adds."""
        call = self._call_for(index, call_id)
        if name and not call.name:
            call.name = name
        if arguments:
            call.arguments.append(arguments)
        if call is self._live:
            return arguments or ""
        if not call.name or call.shown or not self._after_live(call):
            return ""  # no name yet, or the live text has passed this call: it runs all the same, unseen until then
        out = self._close_live()
        call.shown, self._live = True, call
        return (
            out
            + OPEN
            + '{"name": '
            + json.dumps(call.name, ensure_ascii=False)
            + ', "arguments": '
            + "".join(call.arguments)
        )

    def finish(self) -> tuple[str, tuple[NativeToolCall, ...]]:
        """The reply ended: the rest of the live text, and the calls. Raises ValueError for a call without a name or
        whose arguments are not a JSON object (as a line of Ollama's with such a call is refused)."""
        return self._close_live(), tuple(_native(call) for call in self._calls)

    @property
    def started(self) -> bool:
        """A fragment has arrived."""
        return bool(self._calls)

    def _call_for(self, index: int | None, call_id: str | None) -> _Call:
        """The call a fragment belongs to: a new id starts one; otherwise the latest at its index (or the latest)."""
        for call in reversed(self._calls):
            if index is not None and call.index != index:
                continue
            if call_id and call.id and call.id != call_id:
                break  # a new id at this index: a new call
            if call_id and not call.id:
                call.id = call_id
            return call
        call = _Call(index, call_id)
        self._calls.append(call)
        return call

    def _after_live(self, call: _Call) -> bool:
        """Whether `call` comes after the one shown live, so panels stay in the order of the calls."""
        return self._live is None or self._calls.index(call) > self._calls.index(self._live)

    def _close_live(self) -> str:
        live, self._live = self._live, None
        if live is None:
            return ""
        return ("{}" if not live.arguments else "") + "}" + CLOSE


def _native(call: _Call) -> NativeToolCall:
    if not call.name:
        raise ValueError("a tool call has no name")
    text = "".join(call.arguments).strip() or "{}"
    try:
        arguments = from_json(text)
    except ValueError:
        raise ValueError("a tool call's arguments are not JSON") from None
    if type(arguments) is not dict:
        raise ValueError("a tool call's arguments are not a JSON object")
    return NativeToolCall(call.name, arguments)
