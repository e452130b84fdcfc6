"""Migrations: a data file written by each older schema opens at the current version with all of its data."""

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.events import ToolCall
from meowgent.persist.calls import AuditRow
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


def at_version(path: Path, version: int) -> closing[sqlite3.Connection]:
    """A new data file at schema `version`, as the Meowgent of that version made it, open in a transaction."""
    path.parent.mkdir(exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for migration in MIGRATIONS[:version]:
        migration(conn)
    conn.execute(f"PRAGMA user_version = {version}")
    return closing(conn)


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
        assert [call.call_id for call in store.calls("c1")] == ["k1"]
        store.add_audit(
            "c1", AuditRow(3.0, "read_file", {"path": "a"}, None, "allowed", "rules_or_chat", "owner", "done")
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


# ---- v8: the audit trail as codes ----

NO_PATTERN = {"command": None, "prefix": None, "path": None, "host": None}
BY_BOB = {"decision": "approved", "decided_by": "account", "account": "bob", "outcome": "done"}
OLD_ROWS = [
    # (tool, decision, scope, decided_by, outcome) as versions 2 to 7 wrote them, and the codes they become
    (
        ("run_shell", "approved", "once", "the browser that owns the chat", "done"),
        {"decision": "approved", "scope": "once", "decided_by": "owner_browser", "outcome": "done"},
    ),
    (
        ("run_shell", "rejected", "once", "alice", "rejected"),
        {"decision": "rejected", "scope": "once", "decided_by": "account", "account": "alice", "outcome": "rejected"},
    ),
    (
        (
            "run_shell",
            "rejected: not approved",
            "by your rules or a permission for this chat",
            "the chat's owner",
            "rejected",
        ),
        {"decision": "not_approved", "scope": "rules_or_chat", "decided_by": "owner", "outcome": "rejected"},
    ),
    (
        ("web_fetch", "allowed", "by your rules or a permission for this chat", "the chat's owner", "error"),
        {"decision": "allowed", "scope": "rules_or_chat", "decided_by": "owner", "outcome": "error"},
    ),
    (  # json.dumps as str(Scope) wrote it: quotes escaped, non-ASCII as \u escapes
        ("run_shell", "approved", "for this chat: the command " + json.dumps('ls "x" 猫'), "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "run_shell", **NO_PATTERN, "command": 'ls "x" 猫'}},
    ),
    (
        ("run_shell", "approved", 'for this chat: commands starting with "git status"', "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "run_shell", **NO_PATTERN, "prefix": "git status"}},
    ),
    (
        ("write_file", "approved", 'for this chat: writing "docs/**"', "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "write_file", **NO_PATTERN, "path": "docs/**"}},
    ),
    (
        ("edit_file", "approved", 'for this chat: editing "a.md"', "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "edit_file", **NO_PATTERN, "path": "a.md"}},
    ),
    (  # how str(Scope) said a file or a host before it said "writing" and "reading pages from"
        ("edit_file", "approved", 'for this chat: edit_file on "*.md"', "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "edit_file", **NO_PATTERN, "path": "*.md"}},
    ),
    (
        ("web_fetch", "approved", 'for this chat: web_fetch from "example.com"', "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "web_fetch", **NO_PATTERN, "host": "example.com"}},
    ),
    (
        ("web_fetch", "approved", 'for this chat: reading pages from "*.python.org"', "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "web_fetch", **NO_PATTERN, "host": "*.python.org"}},
    ),
    (
        ("files__read", "approved", "for this chat: every tool of the MCP server files", "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "files__*", **NO_PATTERN}},
    ),
    (
        ("files__read", "approved", "for this chat: every files__read call", "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "files__read", **NO_PATTERN}},
    ),
    (  # "every write", from before a write was allowed for one file at a time
        ("write_file", "approved", "for this chat: every write_file call", "bob", "done"),
        {**BY_BOB, "scope": "for_chat", "chat_scope": {"tool": "write_file", **NO_PATTERN}},
    ),
    (  # phrases no Meowgent wrote: each kept as it is
        ("run_shell", "auto", 'for this chat: the command "a" and "b"', "", "not run"),
        {
            **dict.fromkeys(("decision", "scope", "decided_by", "outcome"), "legacy"),
            "legacy": {
                "decision": "auto",
                "scope": 'for this chat: the command "a" and "b"',
                "decided_by": "",
                "outcome": "not run",
            },
        },
    ),
    (
        ("run_shell", None, "always", None, None),
        {
            **dict.fromkeys(("decision", "scope", "decided_by", "outcome"), "legacy"),
            "legacy": {"decision": None, "scope": "always", "decided_by": None, "outcome": None},
        },
    ),
]


def write_v7_audit(path: Path, rows: list[tuple]) -> None:
    """A v7 data file with one chat whose audit table holds `rows` of (tool, decision, scope, decided_by, outcome).

    Row `seq` was proposed as {"n": seq}, ran as {"ran": 1} unless its outcome is "rejected", has the reason
    "reason {seq}" and, every third one excepted, could reach the network.
    """

    def v7_row(seq: int, tool: str, decision: str, scope: str, decided_by: str, outcome: str) -> tuple:
        ran = None if outcome == "rejected" else '{"ran": 1}'
        network = None if seq % 3 == 0 else 1
        return seq, 100.0 + seq, tool, json.dumps({"n": seq}), ran, decision, scope, decided_by, outcome, network

    with at_version(path, 7) as conn:
        conn.execute("INSERT INTO conversations (id, owner, created, updated) VALUES ('c1', 'alice', 1.0, 2.0)")
        conn.executemany(
            "INSERT INTO audit (conversation_id, seq, time, tool, proposed, run, decision, scope, decided_by,"
            " outcome, network, reason) VALUES ('c1', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'reason ' || ?1)",
            [v7_row(seq, *row) for seq, row in enumerate(rows)],
        )
        conn.execute("COMMIT")


def migrated(seq: int, old: tuple, codes: dict) -> AuditRow:
    """The row `write_v7_audit` wrote at `seq` from `old`, with its phrases as `codes`."""
    tool, *_, outcome = old
    return AuditRow(
        time=100.0 + seq,
        tool=tool,
        proposed={"n": seq},
        run=None if outcome == "rejected" else {"ran": 1},
        reason=f"reason {seq}",
        network=None if seq % 3 == 0 else True,
        **codes,
    )


def test_every_audit_phrase_an_older_meowgent_wrote_becomes_codes_and_nothing_is_lost(path):
    write_v7_audit(path, [old for old, _ in OLD_ROWS])
    with Store(path) as store:
        assert store.audit("c1") == [migrated(seq, old, codes) for seq, (old, codes) in enumerate(OLD_ROWS)]
    with raw(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_the_migrated_audit_table_still_goes_with_its_chat(path):
    write_v7_audit(path, [old for old, _ in OLD_ROWS[:2]])
    with Store(path) as store:
        store.delete("c1")
    with raw(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM audit").fetchone() == (0,)


PHRASES = {
    "decision": {
        "approved": "approved",
        "rejected": "rejected",
        "not_approved": "rejected: not approved",
        "allowed": "allowed",
    },
    "scope": {"once": "once", "rules_or_chat": "by your rules or a permission for this chat"},
    "decided_by": {"owner_browser": "the browser that owns the chat", "owner": "the chat's owner"},
    "outcome": {"done": "done", "error": "error", "rejected": "rejected"},
}
"""What each code stood for: the phrase it was migrated from."""


def phrase(row: AuditRow, field: str) -> str | None:
    """The phrase a migrated row's field was, told back from its code, its account or its legacy value."""
    code = getattr(row, field)
    if code == "legacy":
        return (row.legacy or {})[field]
    if code == "account":
        return row.account
    return PHRASES[field][code]


def any_phrase(field: str) -> st.SearchStrategy:
    return st.none() | st.text(max_size=30) | st.sampled_from([*PHRASES[field].values(), "for this chat: every x"])


@settings(max_examples=200, deadline=None)
@given(
    command=st.text(max_size=60),
    old=st.tuples(*(any_phrase(field) for field in ("decision", "scope", "decided_by", "outcome"))),
)
def test_any_command_scope_and_any_phrase_survive_the_migration(tmp_path_factory, command, old):
    """A command allowed for the chat comes back exactly; any other phrase can be told back from the row."""
    path = tmp_path_factory.mktemp("v7") / "data" / "meowgent.db"
    allowed = "for this chat: the command " + json.dumps(command)
    write_v7_audit(path, [("run_shell", "approved", allowed, "bob", "done"), ("run_shell", *old)])
    with Store(path) as store:
        scoped, row = store.audit("c1")
    assert scoped.chat_scope == {"tool": "run_shell", **NO_PATTERN, "command": command}
    for field, was in zip(("decision", "scope", "decided_by", "outcome"), old, strict=True):
        if getattr(row, field) == "for_chat":
            assert was.startswith("for this chat: ")
            assert row.chat_scope is not None
        else:
            assert phrase(row, field) == was, field


def test_a_chat_that_had_the_network_on_before_hosts_were_named_keeps_any_host(path):
    with at_version(path, 9) as conn:
        for chat, network in (("on", 1), ("off", 0)):
            conn.execute(
                "INSERT INTO conversations (id, owner, created, updated, network) VALUES (?, 'alice', 1.0, 2.0, ?)",
                (chat, network),
            )
        conn.execute("COMMIT")
    with Store(path) as store:
        assert (store.network("on"), store.network("off")) == (("*",), ())
        store.set_network("on", ("pypi.org",))
        assert store.network("on") == ("pypi.org",)


def test_the_audit_learns_not_decided_and_why_and_keeps_every_row_and_column(path):
    with at_version(path, 11) as conn:
        conn.execute("INSERT INTO conversations (id, owner, created, updated) VALUES ('c1', 'alice', 1.0, 2.0)")
        conn.execute(
            "INSERT INTO audit (conversation_id, seq, time, tool, proposed, run, decision, scope, decided_by, outcome,"
            " reason, network, hosts, reached, refused) VALUES ('c1', 0, 5.0, 'run_shell', '{\"command\": \"ls\"}',"
            " NULL, 'not_approved', 'rules_or_chat', 'owner', 'rejected', 'why', 1, '[\"a.test\"]', '[]', '[]')"
        )
        columns = ", ".join(name for _, name, *_ in conn.execute("PRAGMA table_info(audit)"))
        before = conn.execute(f"SELECT {columns} FROM audit").fetchall()
        conn.execute("COMMIT")
    with Store(path):
        pass
    with raw(path) as conn:
        assert conn.execute(f"SELECT {columns} FROM audit").fetchall() == before
        assert conn.execute("SELECT why FROM audit").fetchall() == [(None,)]  # the rules' reason was not kept then
        conn.execute("UPDATE audit SET decision = 'not_decided'")
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("UPDATE audit SET decision = 'made_up'")
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    with Store(path) as store:
        store.delete("c1")  # the table made again still goes with its chat
    with raw(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM audit").fetchone() == (0,)
