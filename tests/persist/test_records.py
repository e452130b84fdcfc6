import dataclasses
import json
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent import events
from meowgent.conversation import InvalidCall
from meowgent.events import (
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
from meowgent.persist.records import (
    EVENT_TYPES,
    RecordError,
    call_from_record,
    call_to_record,
    event_from_record,
    event_to_record,
)

finite = st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | finite | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=12,
)
tool_calls = st.builds(ToolCall, st.text(), st.text(), st.dictionaries(st.text(), json_values, max_size=5))
invalid_calls = st.builds(InvalidCall, st.text(), st.text(), st.text())

EVENT_STRATEGIES = {
    UserMessage: st.builds(UserMessage, st.text()),
    Notice: st.builds(Notice, st.text(), st.dictionaries(st.text(), st.integers() | st.booleans())),
    TextDelta: st.builds(TextDelta, st.text()),
    ToolCallDelta: st.builds(ToolCallDelta, st.text()),
    ToolCallDone: st.builds(ToolCallDone, st.text(), st.booleans()),
    ThinkingDelta: st.builds(ThinkingDelta, st.text()),
    ThinkingDone: st.builds(ThinkingDone, finite),
    ToolCallStarted: st.builds(ToolCallStarted, st.text()),
    ToolCallProgress: st.builds(ToolCallProgress, st.text(), st.text()),
    ToolCallWriting: st.builds(ToolCallWriting, st.text(), st.floats(0, 1e6)),
    ToolCallReady: st.builds(ToolCallReady, tool_calls, st.booleans()),
    ToolCallInvalid: st.builds(ToolCallInvalid, st.text(), st.text(), st.text()),
    ApprovalNeeded: st.builds(ApprovalNeeded, st.lists(tool_calls, max_size=3).map(tuple)),
    ToolResult: st.builds(
        ToolResult,
        st.text(),
        st.text(),
        st.text(),
        st.sampled_from(typing.get_args(events.ResultStatus)),
        finite,
        st.none() | st.dictionaries(st.text(), json_values, max_size=3),
        reached=st.none() | st.lists(st.text(), max_size=3).map(tuple),
        refused=st.lists(st.text(), max_size=3).map(tuple),
        repeated=st.booleans(),
        not_run=st.none() | st.sampled_from(typing.get_args(events.NotRun)),
        reason=st.text(),
    ),
    ErrorEvent: st.builds(ErrorEvent, st.text(), st.dictionaries(st.text(), st.integers() | st.text())),
    Done: st.builds(
        Done,
        st.sampled_from(typing.get_args(events.DoneReason)),
        st.none() | st.integers(min_value=0),
        st.none() | st.integers(min_value=0),
    ),
}


def test_every_event_type_has_a_record_and_a_strategy():
    declared = {
        obj
        for obj in vars(events).values()
        if dataclasses.is_dataclass(obj) and obj.__module__ == events.__name__ and obj is not ToolCall
    }
    assert set(EVENT_TYPES.values()) == declared
    assert set(EVENT_STRATEGIES) == declared


@given(st.one_of(*EVENT_STRATEGIES.values()))
def test_every_event_survives_a_json_round_trip(event):
    record = event_to_record(event)
    assert record["type"] == type(event).__name__
    assert event_from_record(json.loads(json.dumps(record))) == event


@given(tool_calls | invalid_calls)
def test_every_call_survives_a_json_round_trip(call):
    assert call_from_record(json.loads(json.dumps(call_to_record(call)))) == call


def test_records_nest_tool_calls_as_dicts():
    call = ToolCall("c1", "write_file", {"path": "猫.txt", "content": "🐱"})
    call_record = {
        "type": "ToolCall",
        "id": "c1",
        "name": "write_file",
        "arguments": {"path": "猫.txt", "content": "🐱"},
    }
    assert event_to_record(ToolCallReady(call, True)) == {"type": "ToolCallReady", "call": call_record, "risky": True}
    assert event_to_record(ApprovalNeeded((call, call))) == {"type": "ApprovalNeeded", "calls": [call_record] * 2}
    assert call_to_record(InvalidCall("c2", "", "Error: bad JSON")) == {
        "type": "InvalidCall",
        "id": "c2",
        "name": "",
        "error": "Error: bad JSON",
    }


def test_a_record_missing_optional_fields_gets_the_defaults():
    assert event_from_record({"type": "Done", "reason": "complete"}) == Done("complete")


@pytest.mark.parametrize(
    "record",
    [
        {"type": "Teleported", "where": "moon"},
        {"text": "no type"},
        {"type": "TextDelta"},
        {"type": "TextDelta", "text": "x", "extra": 1},
        {"type": "ToolCallReady", "call": {"type": "InvalidCall", "id": "c", "name": "", "error": "e"}, "risky": True},
        {"type": "ApprovalNeeded", "calls": ["not a call"]},
    ],
)
def test_bad_event_records_raise_record_error(record):
    with pytest.raises(RecordError):
        event_from_record(record)


@pytest.mark.parametrize(
    "record",
    [{"type": "Done", "reason": "complete"}, {"id": "c", "name": "x"}, {"type": "ToolCall", "id": "c"}],
)
def test_bad_call_records_raise_record_error(record):
    with pytest.raises(RecordError):
        call_from_record(record)
