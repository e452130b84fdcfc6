"""The store's schema, version by version: each migration brings a data file from the version before it to its own.

`PRAGMA user_version` counts the migrations applied. The list is append-only: a migration that has shipped is
never edited or reordered, since data files out there are at its version. So a migration spells out the
columns and phrases of the version it reads, rather than asking today's code what they are.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from meowgent.persist.records import dump


def _v1_core(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            workspace TEXT NOT NULL DEFAULT '',
            think INTEGER NOT NULL DEFAULT 1,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            pending TEXT NOT NULL DEFAULT '[]',
            interrupted INTEGER NOT NULL DEFAULT 0
        )"""
    )
    conn.execute("CREATE INDEX conversations_by_owner ON conversations (owner, updated)")
    for table in ("messages", "events"):
        conn.execute(
            f"""CREATE TABLE {table} (
                conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                body TEXT NOT NULL,
                PRIMARY KEY (conversation_id, seq)
            ) WITHOUT ROWID"""
        )
    # A rowid table on purpose: `calls()` lists calls in the order they were first recorded.
    conn.execute(
        """CREATE TABLE tool_calls (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            call_id TEXT NOT NULL,
            name TEXT NOT NULL,
            arguments TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'done', 'error')),
            result TEXT,
            started REAL,
            finished REAL,
            PRIMARY KEY (conversation_id, call_id)
        )"""
    )


def _v2_audit(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE audit (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            time REAL NOT NULL,
            tool TEXT NOT NULL,
            proposed TEXT NOT NULL,
            run TEXT,
            decision TEXT,
            scope TEXT,
            decided_by TEXT,
            outcome TEXT,
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID"""
    )


def _v3_scopes(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE conversations ADD COLUMN scopes TEXT NOT NULL DEFAULT '[]'")


def _v4_servers_off(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE conversations ADD COLUMN servers_off TEXT NOT NULL DEFAULT '[]'")


def _v5_pending_rows(conn: sqlite3.Connection) -> None:
    """The queued calls get a row each, so that running one deletes a row instead of rewriting the whole queue."""
    conn.execute(
        """CREATE TABLE pending_calls (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID"""
    )
    queues = conn.execute("SELECT id, pending FROM conversations").fetchall()
    conn.executemany(
        "INSERT INTO pending_calls (conversation_id, seq, body) VALUES (?, ?, ?)",
        [(cid, seq, dump(call)) for cid, queue in queues for seq, call in enumerate(json.loads(queue))],
    )
    conn.execute("ALTER TABLE conversations DROP COLUMN pending")


def _v6_audit_reason(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE audit ADD COLUMN reason TEXT NOT NULL DEFAULT ''")


def _v7_network(conn: sqlite3.Connection) -> None:
    """Whether a chat's commands may reach the network, and whether each audited command could (NULL: not a
    command, or recorded before the sandbox)."""
    conn.execute("ALTER TABLE conversations ADD COLUMN network INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE audit ADD COLUMN network INTEGER")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _v1_core,
    _v2_audit,
    _v3_scopes,
    _v4_servers_off,
    _v5_pending_rows,
    _v6_audit_reason,
    _v7_network,
]
"""Schema changes in order; `PRAGMA user_version` counts those applied. Append only: never edit or reorder."""

SCHEMA_VERSION = len(MIGRATIONS)
