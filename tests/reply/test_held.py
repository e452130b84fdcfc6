from meowgent.events import ToolCallInvalid, ToolCallProgress, ToolCallStarted, ToolCallWriting
from meowgent.llm.types import ChatChunk
from meowgent.reply.held import SHOW_SILENCE_AFTER, HeldCalls

READ_TIMEOUT = 120.0


def replying():
    """HeldCalls of a reply whose first line has come."""
    held = HeldCalls(prompt_seconds=READ_TIMEOUT)
    assert held.read(ChatChunk(content="Sure.")) == []
    return held


def test_native_calls_take_the_live_panels_in_the_order_they_were_written():
    held = replying()
    events = list(held.tokens('<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call><tool_call>{"name": "b"'))
    started = [e.call_id for e in events if isinstance(e, ToolCallStarted)]
    assert len(started) == 2
    assert "".join(e.text for e in events if isinstance(e, ToolCallProgress) and e.call_id == started[1]) == (
        '{"name": "b"'
    )
    assert held.claim() == (started[0], True)
    assert held.claim() == (started[1], True)
    fresh, shown = held.claim()  # a call nobody saw being written gets its own panel
    assert not shown
    assert fresh not in started


def test_a_silence_opens_one_counting_panel_which_the_next_call_takes():
    held = replying()
    assert list(held.silence(SHOW_SILENCE_AFTER / 2)) == []
    first = list(held.silence(SHOW_SILENCE_AFTER))
    second = list(held.silence(SHOW_SILENCE_AFTER + 1))
    (started,) = [e for e in first if isinstance(e, ToolCallStarted)]
    assert second == [ToolCallWriting(started.call_id, SHOW_SILENCE_AFTER + 1)]
    assert held.claim() == (started.call_id, True)


def test_before_the_first_line_silence_is_prompt_processing_up_to_the_read_timeout():
    held = HeldCalls(prompt_seconds=READ_TIMEOUT)
    assert held.read(ChatChunk(silent_for=READ_TIMEOUT - 1)) == []
    (started, writing) = held.read(ChatChunk(silent_for=READ_TIMEOUT + 1))
    assert writing == ToolCallWriting(started.call_id, READ_TIMEOUT + 1)


def test_prose_after_a_silence_closes_its_panel_and_abandon_closes_the_rest():
    held = replying()
    (started, _) = held.silence(SHOW_SILENCE_AFTER)
    (closed,) = held.read(ChatChunk(content="Oh, and"))
    assert isinstance(closed, ToolCallInvalid)
    assert closed.call_id == started.call_id
    events = list(held.tokens("<tool_call>\n<function=write_file>\n<parameter=path>\nnotes"))
    (abandoned,) = held.abandon("the answer broke off")
    assert abandoned == ToolCallInvalid(
        events[0].call_id, '{"name": "write_file", "arguments": {"path": "notes', ("the answer broke off")
    )
    assert list(held.abandon("again")) == []


def test_thinking_after_a_pause_means_the_pause_was_not_a_call():
    held = replying()
    (started, _) = held.silence(SHOW_SILENCE_AFTER)
    (closed,) = held.read(ChatChunk(thinking="Hmm, and then"))
    assert closed.call_id == started.call_id
    assert held.claim()[1] is False  # a call after it gets a panel of its own
