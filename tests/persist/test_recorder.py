"""Recorder: what a running answer writes to the store, measured in the database file itself."""

import sqlite3
import threading
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

from meowgent.conversation import Conversation
from meowgent.events import Done, TextDelta, ToolCall, ToolCallReady, ToolResult
from meowgent.persist.calls import AuditRow, CallRow
from meowgent.persist.recorder import Recorder
from meowgent.persist.store import Store
from tests.reply.test_guard import OWNER, ask, start_service
from tests.scripted_ollama import Text, Turn, reply, tool_call_text

TABLES = ("conversations", "messages", "pending_calls", "events", "tool_calls", "audit")


def count_writes(database: Path) -> None:
    """Triggers in the file that log the bytes of every row the app inserts or updates, whatever its columns."""
    with closing(sqlite3.connect(database, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE written (bytes INTEGER NOT NULL)")
        for table in TABLES:
            columns = [name for _, name, *_ in conn.execute(f"PRAGMA table_info({table})")]
            size = " + ".join(f"COALESCE(LENGTH(new.{column}), 0)" for column in columns)
            for operation in ("INSERT", "UPDATE"):
                conn.execute(
                    f"CREATE TRIGGER count_{operation}_{table} AFTER {operation} ON {table}"
                    f" BEGIN INSERT INTO written VALUES ({size}); END"
                )


def written(database: Path) -> tuple[int, int]:
    """(rows, bytes) written since `count_writes`, and the log emptied."""
    with closing(sqlite3.connect(database, isolation_level=None)) as conn:
        rows, size = conn.execute("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM written").fetchone()
        conn.execute("DELETE FROM written")
    return rows, size


def test_n_status_changes_write_o_n_rows_and_bytes_not_o_n_squared(ollama_server, tmp_path):
    """An answer whose reply queues `calls` calls of 2 kB each: every call run is a status change and a save."""
    service = start_service(ollama_server, tmp_path, max_calls_per_reply=1000)
    database = tmp_path / "data" / "meowgent.db"
    count_writes(database)
    measured = {}
    for calls in (10, 40):
        # Calls refused at once (the path is too long to use), each carrying 2 kB of arguments while it waits.
        queue = "".join(tool_call_text("read_file", {"path": f"{i}-" + "x" * 2000}) for i in range(calls))
        ollama_server.script(Turn(Text(queue)), reply("None of them exist."))
        _, events = ask(service, f"read {calls} files")
        assert [e.status for e in events if isinstance(e, ToolResult)] == ["rejected"] * calls
        assert isinstance(events[-1], Done)
        measured[calls] = written(database)
    (rows_10, bytes_10), (rows_40, bytes_40) = measured[10], measured[40]
    # Linear: four times the calls, about four times the writes. Rewriting the queue on every save was 16 times.
    assert rows_40 < 4.5 * rows_10
    assert bytes_40 < 4.5 * bytes_10
    # Each call's 2 kB is written a fixed number of times, about ten: in the reply's message and events, the ready
    # event, the queue, the calls table (queued, then done) and the result, which names the path twice (in the note
    # to the model, and in the reason the page words in the person's language).
    assert bytes_40 < 40 * 2000 * 13


def test_a_retry_and_a_reload_see_exactly_the_saved_transcript(ollama_server, tmp_path):
    service = start_service(ollama_server, tmp_path)
    ollama_server.script(Turn(Text(tool_call_text("read_file", {"path": "notes.md"}))), reply("First answer."))
    chat_id, _ = ask(service, "read notes")
    ollama_server.script(reply("Second answer."))
    service.retry(OWNER, chat_id)
    list(service.follow(OWNER, chat_id, poll=0.02))
    conversation = service.get(OWNER, chat_id).conversation
    assert [m["role"] for m in conversation.messages] == ["user", "assistant"]
    assert conversation.messages[-1]["content"] == "Second answer."

    reloaded = start_service(ollama_server, tmp_path)  # a second service on the same data folder, as after a restart
    assert reloaded.get(OWNER, chat_id).conversation.messages == conversation.messages


def test_a_status_event_and_everything_it_changes_are_stored_together_or_not_at_all(tmp_path):
    store = Store(tmp_path / "data" / "meowgent.db")
    store.create_conversation("c1", owner="alice", title="t", model="m", workspace=tmp_path)
    recorder = Recorder(store)
    conversation = Conversation("c1", "m", messages=[{"role": "user", "content": "ls, please"}])
    call = ToolCall("k1", "run_shell", {"command": "ls"})
    result = ToolResult("k1", "run_shell", "a.md", "done")
    row = AuditRow(1.0, "run_shell", {"command": "ls"}, {"command": "ls"}, "approved", "once", "owner_browser", "done")

    recorder.record("c1", TextDelta("Here "), conversation, title="t")
    with pytest.raises(sqlite3.IntegrityError):  # a row the audit table refuses (not a code) undoes the whole event
        recorder.record(
            "c1",
            result,
            conversation,
            title="t",
            calls=[CallRow("k1", "run_shell", {"command": "ls"}, "done", "a.md")],
            audit=[replace(row, decision="approved, I think")],
        )
    assert (store.events("c1"), store.load("c1").messages, store.calls("c1"), store.audit("c1")) == ([], [], [], [])

    recorder.record(
        "c1", ToolCallReady(call, True), conversation, title="t", calls=[CallRow("k1", "run_shell", {}, "pending")]
    )
    recorder.record("c1", result, conversation, title="t", calls=[CallRow("k1", "run_shell", {}, "done")], audit=[row])
    assert [event["type"] for event in store.events("c1")] == ["TextDelta", "ToolCallReady", "ToolResult"]
    assert store.load("c1").messages == conversation.messages
    assert [call.status for call in store.calls("c1")] == ["done"]
    assert store.audit("c1") == [row]


def flushers() -> int:
    """Recorders' background flush threads alive in this process."""
    return sum(thread.name == "recorder-flush" for thread in threading.enumerate())


def test_closing_writes_the_buffered_text_and_ends_the_background_flushes(tmp_path):
    store = Store(tmp_path / "data" / "meowgent.db")
    store.create_conversation("c1", owner="alice", title="t", model="m", workspace=tmp_path)
    before = flushers()
    recorder = Recorder(store, flush_seconds=3600)  # no background flush in this test's time
    assert flushers() == before + 1
    recorder.record("c1", TextDelta("Here is "), Conversation("c1", "m"), title="t")
    recorder.record("c1", TextDelta("the list."), Conversation("c1", "m"), title="t")
    assert store.events("c1") == []
    recorder.close()
    assert [event["text"] for event in store.events("c1")] == ["Here is the list."]
    assert flushers() == before
