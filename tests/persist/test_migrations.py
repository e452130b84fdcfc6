"""Migrations: a data file written by each older schema opens at the current version with all of its data."""

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from meowgent.events import ToolCall
from meowgent.persist.migrations import MIGRATIONS, SCHEMA_VERSION
from meowgent.persist.records import call_to_record
from meowgent.persist.store import Store
from tests.persist.test_store import save


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "meowgent.db"


def raw(path: Path) -> closing[sqlite3.Connection]:
    """A plain connection beside the Store, for what the API does not show."""
    return closing(sqlite3.connect(path, isolation_level=None))


def test_a_v1_database_is_migrated_and_keeps_its_data(path):
    path.parent.mkdir()
    with raw(path) as conn:
        conn.execute("BEGIN")
        MIGRATIONS[0](conn)
        conn.execute("PRAGMA user_version = 1")
        conn.execute(
            "INSERT INTO conversations (id, owner, title, model, workspace, think, created, updated, pending)"
            " VALUES ('c1', 'alice', 'Old chat', 'llama3', '/w', 0, 1.0, 2.0, '[]')"
        )
        conn.execute("""INSERT INTO messages VALUES ('c1', 0, '{"role":"user","content":"hi"}')""")
        conn.execute("""INSERT INTO events VALUES ('c1', 0, '{"type":"Done","reason":"complete"}')""")
        conn.execute(
            "INSERT INTO tool_calls (conversation_id, call_id, name, arguments, status)"
            """ VALUES ('c1', 'k1', 'read_file', '{"path":"a"}', 'done')"""
        )
        conn.execute("COMMIT")
        assert "audit" not in {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}

    with Store(path) as store:
        stored = store.load("c1")
        assert stored.row.title == "Old chat"
        assert stored.row.think is False
        assert stored.messages == [{"role": "user", "content": "hi"}]
        assert stored.events == [{"type": "Done", "reason": "complete"}]
        assert [call["call_id"] for call in store.calls("c1")] == ["k1"]
        store.add_audit(
            "c1",
            time=3.0,
            tool="read_file",
            proposed={"path": "a"},
            run=None,
            decision="auto",
            scope="once",
            decided_by="policy",
            outcome="done",
        )
        assert len(store.audit("c1")) == 1
    with raw(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_a_v3_database_gets_its_queued_calls_as_rows(path):
    path.parent.mkdir()
    queue = [call_to_record(ToolCall("k1", "write_file", {"path": "a", "content": "猫"})), {"type": "InvalidCall"}]
    with raw(path) as conn:
        conn.execute("BEGIN")
        for migration in MIGRATIONS[:3]:
            migration(conn)
        conn.execute("PRAGMA user_version = 3")
        conn.execute(
            "INSERT INTO conversations (id, owner, created, updated, pending) VALUES ('c1', 'alice', 1.0, 2.0, ?)",
            (json.dumps(queue),),
        )
        conn.execute("INSERT INTO conversations (id, owner, created, updated) VALUES ('c2', 'alice', 1.0, 2.0)")
        conn.execute("COMMIT")
    with Store(path) as store:
        assert store.load("c1").pending == queue
        assert store.load("c2").pending == []
        save(store, "c1", [], pending=queue[1:])
        assert store.load("c1").pending == queue[1:]
    with raw(path) as conn:
        assert "pending" not in {name for _, name, *_ in conn.execute("PRAGMA table_info(conversations)")}
