"""JSON-able records of events and queued calls, for the store and for anything that replays a page.

A record is a plain dict: `"type"` is the class name, the other keys are the dataclass fields.
A `ToolCall` inside an event is nested as its own record; a tuple of them becomes a list.
`json.loads(json.dumps(record))` turned back gives an equal object.
"""

from __future__ import annotations

import functools
import json
from dataclasses import fields
from typing import Any

from meowgent.conversation import InvalidCall
from meowgent.events import (
    LEGACY,
    AgentEvent,
    ApprovalNeeded,
    Done,
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCall,
    ToolCallDelta,
    ToolCallDone,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    ToolCallWriting,
    ToolResult,
    UserMessage,
)

# The splitter's own events are included so a recorded stream can be replayed through anything that reads events.
EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        UserMessage,
        Notice,
        TextDelta,
        ToolCallDelta,
        ToolCallDone,
        ThinkingDelta,
        ThinkingDone,
        ToolCallStarted,
        ToolCallProgress,
        ToolCallWriting,
        ToolCallReady,
        ToolCallInvalid,
        ApprovalNeeded,
        ToolResult,
        ErrorEvent,
        Done,
    )
}


dump = functools.partial(json.dumps, ensure_ascii=False, separators=(",", ":"))
"""A record (or any JSON-able value) as the compact JSON text the store keeps."""


class RecordError(ValueError):
    """A record that does not describe a known event or call (e.g. written by a newer Meowgent)."""


def event_to_record(event: AgentEvent | ToolCallDelta | ToolCallDone) -> dict[str, Any]:
    record: dict[str, Any] = {"type": type(event).__name__}
    for f in fields(event):
        value = getattr(event, f.name)
        if isinstance(value, ToolCall):
            value = call_to_record(value)
        elif isinstance(value, tuple):  # ApprovalNeeded.calls, or the hosts of a command's result
            value = [call_to_record(item) if isinstance(item, ToolCall) else item for item in value]
        record[f.name] = value
    return record


def event_from_record(record: dict[str, Any]) -> AgentEvent | ToolCallDelta | ToolCallDone:
    """The event a record describes; RecordError if it describes none."""
    values = dict(record)
    cls = EVENT_TYPES.get(values.pop("type", None))
    if cls is None:
        raise RecordError(f"Unknown event record type: {record.get('type')!r}")
    if cls is ToolCallReady:
        values["call"] = _tool_call(values.get("call"))
    elif cls is ApprovalNeeded:
        values["calls"] = tuple(_tool_call(call) for call in values.get("calls", ()))
    elif cls is ToolResult:
        values |= {key: tuple(values[key]) for key in ("reached", "refused") if values.get(key) is not None}
    elif cls in (Notice, ErrorEvent) and "message" in values:
        # Written before notes carried values: the English sentence it stored is all there is to show.
        values = {"kind": LEGACY, "values": {"text": values["message"]}}
    return _build(cls, values, record)


def call_to_record(call: ToolCall | InvalidCall) -> dict[str, Any]:
    if isinstance(call, ToolCall):
        return {"type": "ToolCall", "id": call.id, "name": call.name, "arguments": call.arguments}
    return {"type": "InvalidCall", "id": call.id, "name": call.name, "error": call.error}


def call_from_record(record: dict[str, Any]) -> ToolCall | InvalidCall:
    """The queued call a record describes; RecordError if it describes none."""
    values = dict(record)
    kind = values.pop("type", None)
    if kind == "ToolCall":
        return _build(ToolCall, values, record)
    if kind == "InvalidCall":
        return _build(InvalidCall, values, record)
    raise RecordError(f"Unknown call record type: {kind!r}")


def _tool_call(record: Any) -> ToolCall:
    call = call_from_record(record) if isinstance(record, dict) else None
    if not isinstance(call, ToolCall):
        raise RecordError(f"Expected a ToolCall record, got {record!r}")
    return call


def _build(cls: type, values: dict[str, Any], record: dict[str, Any]) -> Any:
    try:
        return cls(**values)
    except TypeError as exc:  # missing or unexpected fields
        raise RecordError(f"Bad {cls.__name__} record {record!r}: {exc}") from None
