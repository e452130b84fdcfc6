import threading
import time

import pytest

from meowgent.chats.runs import Cursor, EventLog, RunBusy, RunRegistry
from meowgent.events import Done, TextDelta, ToolCallProgress, ToolCallStarted
from tests.words import said


def test_log_merges_consecutive_deltas_and_reads_from_a_cursor():
    log = EventLog()
    for piece in ["Hel", "lo"]:
        log.append(TextDelta(piece))
    events, cursor = log.read()
    assert events == [TextDelta("Hello")]
    log.append(TextDelta("!"))
    log.append(ToolCallStarted("c1"))
    log.append(ToolCallProgress("c1", '{"na'))
    log.append(ToolCallProgress("c1", 'me"'))
    events, cursor = log.read(cursor)
    assert events == [TextDelta("!"), ToolCallStarted("c1"), ToolCallProgress("c1", '{"name"')]
    assert log.read(cursor) == ([], cursor)
    assert log.read()[0] == [TextDelta("Hello!"), ToolCallStarted("c1"), ToolCallProgress("c1", '{"name"')]


def test_progress_of_different_calls_is_not_merged():
    log = EventLog()
    log.append(ToolCallProgress("a", "1"))
    log.append(ToolCallProgress("b", "2"))
    assert log.read()[0] == [ToolCallProgress("a", "1"), ToolCallProgress("b", "2")]


def test_a_million_small_deltas_stay_linear():
    log = EventLog()
    started = time.perf_counter()
    for _ in range(250_000):
        log.append(ToolCallProgress("c", "abcd"))
    events, _ = log.read(Cursor())
    assert events == [ToolCallProgress("c", "abcd" * 250_000)]
    assert time.perf_counter() - started < 10  # quadratic joining would take minutes


def slow_job(events, delay=0.01):
    def job(cancel):
        for event in events:
            if cancel.is_set():
                yield Done("stopped")
                return
            time.sleep(delay)
            yield event
        yield Done("complete")

    return job


def test_subscribe_sees_every_event_until_the_run_ends():
    registry = RunRegistry()
    registry.start("c", slow_job([TextDelta(str(i)) for i in range(20)]))
    seen = [event for batch in registry.subscribe("c", poll=0.05) for event in batch]
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "".join(str(i) for i in range(20))
    assert seen[-1] == Done("complete")
    assert not registry.is_running("c")


def test_a_second_subscriber_re_attaches_from_the_start():
    registry = RunRegistry()
    registry.start("c", slow_job([TextDelta("a"), TextDelta("b")]))
    registry.join("c")
    assert [e for batch in registry.subscribe("c") for e in batch] == [TextDelta("ab"), Done("complete")]


def test_one_run_per_conversation_and_stop_sets_cancel():
    registry = RunRegistry()
    gate = threading.Event()

    def job(cancel):
        gate.set()
        cancel.wait(5)
        yield Done("stopped" if cancel.is_set() else "complete")

    registry.start("c", job)
    gate.wait(5)
    with pytest.raises(RunBusy):
        registry.start("c", job)
    assert registry.stop("c")
    registry.join("c", 5)
    assert registry.log("c").read()[0] == [Done("stopped")]
    assert not registry.stop("c")


def test_a_crashing_job_ends_with_a_plain_error():
    registry = RunRegistry()

    def job(cancel):
        yield TextDelta("partial")
        raise RuntimeError("bug")

    registry.start("c", job)
    registry.join("c", 5)
    events = registry.log("c").read()[0]
    assert events[0] == TextDelta("partial")
    assert events[-1] == Done("error")
    assert "went wrong" in said(events[-2])
