import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

from meowgent.conversation import InvalidCall
from meowgent.events import Done, TextDelta, ToolCall, ToolCallReady, ToolResult, UserMessage
from meowgent.persist.calls import AuditRow, CallRow
from meowgent.persist.migrations import SCHEMA_VERSION
from meowgent.persist.records import call_to_record, event_to_record
from meowgent.persist.store import Store, StoreError, Unchanged

ROOT = Path(__file__).resolve().parents[2]
APPROVED_LS = AuditRow(1.0, "run_shell", {"command": "ls"}, {"command": "ls"}, "approved", "once", "account", "done")
APPROVED_LS = replace(APPROVED_LS, account="alice")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "meowgent.db"


@pytest.fixture
def store(path: Path):
    with Store(path) as store:
        yield store


def raw(path: Path) -> closing[sqlite3.Connection]:
    """A plain connection beside the Store, for what the API does not show."""
    return closing(sqlite3.connect(path, isolation_level=None))


def new(store: Store, conversation_id: str, *, owner: str = "alice", now: float | None = None) -> None:
    store.create_conversation(conversation_id, owner=owner, title="New chat", model="qwen3", workspace="/w", now=now)


def save(store: Store, conversation_id: str, messages: list[dict], **changes) -> None:
    fields = {"title": "New chat", "model": "qwen3", "think": True, "pending": []} | changes
    store.save_conversation(conversation_id, messages=messages, **fields)


# ---- opening and schema ----


def test_creates_the_folder_and_a_wal_database_at_the_current_version(path):
    Store(path).close()
    with raw(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert SCHEMA_VERSION >= 2


def test_a_newer_database_is_refused_and_left_alone(path):
    Store(path).close()
    with raw(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer Meowgent"):
        Store(path)
    with raw(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION + 1,)


def test_a_file_that_is_not_a_database_is_a_clear_error(path):
    path.parent.mkdir()
    path.write_bytes(b"meow " * 1000)
    with pytest.raises(StoreError, match="Cannot open the data file"):
        Store(path)


# ---- conversations ----


def test_conversations_are_the_owners_newest_first(store):
    new(store, "a", now=1.0)
    new(store, "b", now=3.0)
    new(store, "c", now=2.0)
    new(store, "d", owner="bob", now=4.0)
    assert [row.id for row in store.conversations("alice")] == ["b", "c", "a"]
    assert [row.id for row in store.conversations("bob")] == ["d"]
    assert store.conversations("mallory") == []

    save(store, "a", [], now=5.0)
    rows = store.conversations("alice")
    assert [row.id for row in rows] == ["a", "b", "c"]
    assert (rows[0].created, rows[0].updated, rows[0].interrupted, rows[0].workspace) == (1.0, 5.0, False, "/w")


def test_load_round_trips_transcript_pending_and_events_across_a_reopen(path):
    call = ToolCall("k1", "write_file", {"path": "猫/🐱.txt", "content": 'line\n"quoted"\t', "n": [1, 2.5, None]})
    messages = [
        {"role": "user", "content": "こんにちは 🐱 — naïve ✓"},
        {
            "role": "assistant",
            "content": "",
            "thinking": "I should write the file.",
            "tool_calls": [
                {"function": {"name": "write_file", "arguments": {"path": "猫/🐱.txt", "deep": {"a": [{}]}}}}
            ],
        },
        {"role": "tool", "content": "wrote 3 bytes", "tool_name": "write_file"},
    ]
    pending = [call_to_record(call), call_to_record(InvalidCall("k2", "", "Error: bad JSON"))]
    events = [event_to_record(e) for e in (UserMessage("hi"), ToolCallReady(call, True), Done("paused"))]
    with Store(path) as store:
        new(store, "c1")
        save(store, "c1", messages, title="Files", model="llama3", think=False, pending=pending, now=7.0)
        store.append_events("c1", events)
    with Store(path) as store:
        stored = store.load("c1")
        assert stored.messages == messages
        assert stored.pending == pending
        assert stored.events == events
        assert (stored.row.title, stored.row.model, stored.row.think, stored.row.updated) == (
            "Files",
            "llama3",
            False,
            7.0,
        )
        assert store.load("missing") is None


def _msg(text: str) -> dict:
    return {"role": "user", "content": text}


@pytest.mark.parametrize(
    ("before", "after", "inserted"),
    [
        pytest.param("abc", "abcde", [3, 4], id="grow"),
        pytest.param("abcde", "ab", [], id="shrink"),
        pytest.param("abcde", "abXde", [2, 3, 4], id="change-middle"),
        pytest.param("abc", "abc", [], id="same"),
        pytest.param("abc", "", [], id="empty"),
        pytest.param("", "ab", [0, 1], id="from-empty"),
    ],
)
def test_save_writes_only_the_changed_tail(store, path, before, after, inserted):
    new(store, "c1")
    save(store, "c1", [_msg(ch) for ch in before])
    with raw(path) as conn:  # a trigger in the file itself sees the Store's inserts
        conn.execute("CREATE TABLE inserted (seq INTEGER)")
        conn.execute("CREATE TRIGGER log AFTER INSERT ON messages BEGIN INSERT INTO inserted VALUES (new.seq); END")
    save(store, "c1", [_msg(ch) for ch in after])
    assert store.load("c1").messages == [_msg(ch) for ch in after]
    with raw(path) as conn:
        assert [seq for (seq,) in conn.execute("SELECT seq FROM inserted ORDER BY seq")] == inserted


def test_a_save_that_knows_what_is_stored_writes_only_the_changes(store, path):
    calls = [{"type": "ToolCall", "id": f"k{i}", "name": "read_file", "arguments": {"path": str(i)}} for i in range(4)]
    new(store, "c1")
    save(store, "c1", [_msg("a"), _msg("b")], pending=calls[:3])
    with raw(path) as conn:
        conn.execute("CREATE TABLE log (what TEXT)")
        for table in ("messages", "pending_calls"):
            for operation, row in (("INSERT", "new"), ("DELETE", "old")):
                conn.execute(
                    f"CREATE TRIGGER log_{operation}_{table} AFTER {operation} ON {table}"
                    f" BEGIN INSERT INTO log VALUES ('{operation} {table} ' || {row}.seq); END"
                )
    # The first call ran and its result was appended; the store is told so and reads nothing to find out.
    messages = [_msg("a"), _msg("b"), _msg("result")]
    save(store, "c1", messages, pending=calls[1:3] + calls[3:], unchanged=Unchanged(2, 1, 2))
    with raw(path) as conn:
        assert [what for (what,) in conn.execute("SELECT what FROM log")] == [
            "INSERT messages 2",
            "DELETE pending_calls 0",
            "INSERT pending_calls 3",
        ]
    stored = store.load("c1")
    assert stored.messages == messages
    assert stored.pending == calls[1:]


def test_events_append_after_the_last_in_order(store, path):
    new(store, "c1")
    store.append_events("c1", [event_to_record(TextDelta("a")), event_to_record(TextDelta("b"))])
    store.append_events("c1", [])
    store.append_events("c1", [event_to_record(Done("complete"))])
    assert store.events("c1") == [
        {"type": "TextDelta", "text": "a"},
        {"type": "TextDelta", "text": "b"},
        {"type": "Done", "reason": "complete", "prompt_tokens": None, "output_tokens": None},
    ]
    with raw(path) as conn:
        assert [seq for (seq,) in conn.execute("SELECT seq FROM events ORDER BY seq")] == [0, 1, 2]


def test_rename_and_interrupted_flag_do_not_reorder_the_list(store):
    new(store, "c1", now=1.0)
    store.rename("c1", "Cats")
    store.mark_interrupted("c1", True)
    row = store.load("c1").row
    assert (row.title, row.interrupted, row.updated) == ("Cats", True, 1.0)
    store.mark_interrupted("c1", False)
    assert store.load("c1").row.interrupted is False


def test_delete_cascades_to_every_table(store, path):
    for conversation_id in ("gone", "kept"):
        new(store, conversation_id)
        save(store, conversation_id, [_msg("hi")])
        store.append_events(conversation_id, [event_to_record(UserMessage("hi"))])
        store.record_call(conversation_id, CallRow("k1", "run_shell", {"command": "ls"}, "pending"))
        store.add_audit(conversation_id, APPROVED_LS)
    store.delete("gone")
    store.delete("gone")  # deleting twice is fine
    assert store.load("gone") is None
    with raw(path) as conn:
        for table in ("messages", "events", "tool_calls", "audit"):
            counts = dict(conn.execute(f"SELECT conversation_id, COUNT(*) FROM {table} GROUP BY conversation_id"))
            assert counts == {"kept": 1}, table


@pytest.mark.parametrize(
    "write",
    [
        lambda s: save(s, "nope", []),
        lambda s: s.append_events("nope", [{"type": "TextDelta", "text": "x"}]),
        lambda s: s.record_call("nope", CallRow("k", "read_file", {}, "pending")),
        lambda s: s.add_audit("nope", APPROVED_LS),
        lambda s: s.rename("nope", "x"),
        lambda s: s.mark_interrupted("nope", True),
    ],
    ids=["save", "append_events", "record_call", "add_audit", "rename", "mark_interrupted"],
)
def test_writes_to_a_missing_conversation_raise_store_error(store, write):
    with pytest.raises(StoreError, match="not in the store"):
        write(store)


def test_record_call_upserts_and_keeps_what_an_update_leaves_out(store):
    new(store, "c1")
    store.record_call("c1", CallRow("k2", "read_file", {"path": "a"}, "done", result="A", started=1.0))
    store.record_call("c1", CallRow("k1", "run_shell", {"command": "ls"}, "pending", started=2.0))
    store.record_call("c1", CallRow("k1", "run_shell", {"command": "ls"}, "approved"))
    store.record_call("c1", CallRow("k1", "run_shell", {"command": "ls"}, "done", result="x", finished=3.0))
    assert store.calls("c1") == [
        CallRow(
            call_id="k2",
            name="read_file",
            arguments={"path": "a"},
            status="done",
            result="A",
            started=1.0,
            finished=None,
        ),
        CallRow(
            call_id="k1",
            name="run_shell",
            arguments={"command": "ls"},
            status="done",
            result="x",
            started=2.0,
            finished=3.0,
        ),
    ]


def test_a_failed_write_is_rolled_back_and_the_store_stays_usable(store):
    new(store, "c1")
    with pytest.raises(sqlite3.IntegrityError):
        store.record_call("c1", CallRow("k1", "read_file", {}, "maybe"))
    assert store.calls("c1") == []
    store.record_call("c1", CallRow("k1", "read_file", {}, "pending"))
    assert [call.status for call in store.calls("c1")] == ["pending"]


def test_audit_rows_keep_order_and_json(store):
    new(store, "c1")
    rows = [
        AuditRow(10.0, "run_shell", {"command": "ls"}, {"command": "ls -la"}, "approved", "once", "account", "done"),
        AuditRow(11.0, "run_shell", {"command": "ls"}, None, "rejected", "once", "owner_browser", "rejected"),
    ]
    rows[0] = replace(rows[0], account="alice", reason="why not", network=False)
    rows.append(
        AuditRow(
            12.0,
            "write_file",
            {"path": "猫.md", "content": "x"},
            {"path": "猫.md", "content": "x"},
            "approved",
            "for_chat",
            "owner_browser",
            "error",
            chat_scope={"tool": "write_file", "command": None, "prefix": None, "path": "猫.md", "host": None},
            legacy={"outcome": None, "decision": "an old phrase"},
        )
    )
    for row in rows:
        store.add_audit("c1", row)
    assert store.audit("c1") == rows
    with raw(store.path) as conn:
        assert [seq for (seq,) in conn.execute("SELECT seq FROM audit ORDER BY seq")] == [0, 1, 2]


@pytest.mark.parametrize(
    ("field", "value"),
    [("decision", "auto"), ("scope", "always"), ("decided_by", "alice"), ("outcome", "not run")],
)
def test_an_audit_row_holds_only_codes(store, field, value):
    """A sentence or a name in a code's column is refused: the words are the page's, an account is `account`."""
    new(store, "c1")
    with pytest.raises(sqlite3.IntegrityError):
        store.add_audit("c1", replace(APPROVED_LS, **{field: value}))
    assert store.audit("c1") == []


def test_a_transaction_stores_all_of_its_writes_or_none(store):
    new(store, "c1")

    def three_writes_then_one_that_fails() -> None:
        with store.transaction():
            store.append_events("c1", [event_to_record(Done("complete"))])
            store.record_call("c1", CallRow("k1", "run_shell", {"command": "ls"}, "done"))
            store.add_audit("c1", APPROVED_LS)
            store.rename("gone", "x")  # a conversation deleted meanwhile

    with pytest.raises(StoreError):
        three_writes_then_one_that_fails()
    assert (store.events("c1"), store.calls("c1"), store.audit("c1")) == ([], [], [])
    with store.transaction():
        store.append_events("c1", [event_to_record(Done("complete"))])
        store.add_audit("c1", APPROVED_LS)
        assert store.audit("c1") == [APPROVED_LS]  # reads inside see the writes before them
    assert (len(store.events("c1")), store.audit("c1")) == (1, [APPROVED_LS])


def test_unfinished_lists_conversations_whose_log_does_not_end_with_done(store):
    logs = {
        "finished": [UserMessage("hi"), TextDelta("hello"), Done("complete")],
        "paused": [UserMessage("hi"), Done("paused")],
        "cut": [UserMessage("hi"), TextDelta("hel")],
        "restarted": [UserMessage("hi"), Done("complete"), UserMessage("more"), ToolResult("k", "t", "o", "done")],
        "empty": [],
    }
    for conversation_id, log in logs.items():
        new(store, conversation_id)
        store.append_events(conversation_id, [event_to_record(event) for event in log])
    assert sorted(store.unfinished()) == ["cut", "restarted"]


def test_many_threads_share_one_store(store):
    def writer(n: int) -> None:
        new(store, f"c{n}")
        for i in range(50):
            store.append_events(f"c{n}", [{"type": "TextDelta", "text": str(i)}])
            store.load(f"c{n}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n in range(8):
        assert [event["text"] for event in store.events(f"c{n}")] == [str(i) for i in range(50)]


# ---- integrity with real processes ----

KILLED_WRITER = """
import sys
from pathlib import Path
from meowgent.persist.store import Store

store = Store(Path(sys.argv[1]))
store.create_conversation("c", owner="o", title="save 0", model="m", workspace="/w")
print("ready", flush=True)
events = saves = 0
while True:
    store.append_events("c", [{"type": "TextDelta", "text": str(events + i)} for i in range(20)])
    events += 20
    saves += 1
    messages = [{"role": "user", "content": f"{saves}:{i} 猫" * 50} for i in range(saves % 7 + 1)]
    pending = [{"type": "ToolCall", "id": str(saves), "name": "read_file", "arguments": {}}]
    store.save_conversation("c", title=f"save {saves}", model="m", think=True, messages=messages, pending=pending)
"""

CONCURRENT_WRITER = """
import json, sys, time
from pathlib import Path
from meowgent.persist.calls import CallRow
from meowgent.persist.store import Store

name, seconds = sys.argv[2], float(sys.argv[3])
store = Store(Path(sys.argv[1]))
committed = {}
deadline = time.monotonic() + seconds
i = 0
while time.monotonic() < deadline:
    cid = f"{name}-{i // 10}"
    if i % 10 == 0:
        store.create_conversation(cid, owner=name, title=cid, model="m", workspace="/w")
        committed[cid] = 0
    store.append_events(cid, [{"type": "TextDelta", "text": f"{cid}/{committed[cid] + k}"} for k in range(5)])
    committed[cid] += 5
    store.record_call(cid, CallRow(f"k{i}", "read_file", {"path": "a"}, "done", result="ok"))
    i += 1
store.close()
print(json.dumps(committed))
"""


def _spawn(script: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", script, *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _integrity(path: Path) -> str:
    with raw(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def test_kill_9_mid_write_leaves_whole_transactions(path):
    writer = _spawn(KILLED_WRITER, str(path))
    try:
        assert writer.stdout.readline() == "ready\n", writer.stderr.read()
        time.sleep(1.0)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.communicate()
    assert writer.returncode == -signal.SIGKILL

    with Store(path) as store:
        assert _integrity(path) == "ok"
        stored = store.load("c")
    texts = [event["text"] for event in stored.events]
    assert texts == [str(i) for i in range(len(texts))]  # contiguous from 0
    assert len(texts) % 20 == 0
    saves = int(stored.row.title.removeprefix("save "))
    assert saves > 10, "the writer should have done real work before the kill"
    assert len(texts) // 20 in (saves, saves + 1)  # killed after a save, or between an append and its save
    assert len(stored.messages) == saves % 7 + 1
    assert all(message["content"].startswith(f"{saves}:") for message in stored.messages)
    assert stored.pending[0]["id"] == str(saves)


def test_two_processes_write_one_folder_while_a_third_reads(path):
    writers = {name: _spawn(CONCURRENT_WRITER, str(path), name, "2") for name in ("w0", "w1")}
    try:
        with Store(path) as store:
            reads = 0
            while any(writer.poll() is None for writer in writers.values()):
                for owner in writers:
                    for row in store.conversations(owner)[:3]:
                        texts = [event["text"] for event in store.load(row.id).events]
                        assert texts == [f"{row.id}/{i}" for i in range(len(texts))]
                        assert len(texts) % 5 == 0  # a reader never sees half a transaction
                        reads += 1
            assert reads > 0
            for name, writer in writers.items():
                out, err = writer.communicate()
                assert (writer.returncode, err) == (0, ""), err  # no "database is locked" escaped
                committed = json.loads(out)
                assert len(committed) > 1
                assert {row.id for row in store.conversations(name)} == set(committed)
                for conversation_id, count in committed.items():
                    assert len(store.events(conversation_id)) == count
                    assert len(store.calls(conversation_id)) == count // 5
            assert _integrity(path) == "ok"
    finally:
        for writer in writers.values():
            if writer.poll() is None:
                writer.kill()
                writer.communicate()


def test_the_data_folder_and_every_file_of_the_database_are_ours_alone(path):
    path.parent.mkdir(mode=0o755)
    path.touch(mode=0o644)  # as an older Meowgent left them
    with Store(path) as store:
        store.create_conversation("c1", owner="browser:a", title="t", model="qwen3", workspace=path.parent)
        files = sorted(path.parent.iterdir())
        assert [file.name for file in files] == ["meowgent.db", "meowgent.db-shm", "meowgent.db-wal"]
        for file in files:
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file.name
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_chats_network_setting_and_each_commands_are_kept(store):
    new(store, "c1")
    assert store.network("c1") == ()
    store.set_network("c1", ("pypi.org", "*.pythonhosted.org"))
    assert store.network("c1") == ("pypi.org", "*.pythonhosted.org")
    store.set_network("c1", ())
    assert store.network("c1") == ()
    assert store.network("missing") == ()
    with pytest.raises(StoreError):
        store.set_network("missing", ("*",))
    went = {"hosts": ["*.python.org"], "reached": ["docs.python.org"], "refused": ["x.com"]}
    for network in (True, None):
        store.add_audit("c1", replace(APPROVED_LS, proposed={"command": "curl x"}, network=network, **went))
    assert [row.network for row in store.audit("c1")] == [True, None]
    assert [row.reached for row in store.audit("c1")] == [["docs.python.org"]] * 2
