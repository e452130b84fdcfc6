"""Store: conversations, transcripts, page event logs, tool calls, the audit trail, checkpoints and watch links'
digests in one SQLite file.

The standard library's sqlite3 in WAL mode: no server, readers never wait for the writer, and
a process killed mid-write leaves the last committed state. Every public write is one
transaction, and `transaction()` makes several writes one, so a crash never leaves half of it.
The store keeps JSON-able dicts (transcript messages as sent to Ollama, records from
`meowgent.persist.records`) and the rows of `meowgent.persist.calls`; the schema and its versions are
`meowgent.persist.migrations`. It does not decide who may see what: `conversations(owner)` filters,
the chat service checks ownership.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meowgent.persist import calls as call_tables
from meowgent.persist.calls import AuditRow, CallRow
from meowgent.persist.migrations import MIGRATIONS, SCHEMA_VERSION
from meowgent.persist.private import private_file, private_folder
from meowgent.persist.records import dump


class StoreError(Exception):
    """The data folder cannot be used, or a conversation is not in it; the message is a plain sentence."""


@dataclass(frozen=True)
class ConversationRow:
    """One conversation without its contents, as the chat list shows it."""

    id: str
    owner: str
    title: str
    model: str
    workspace: str
    think: bool
    created: float
    updated: float
    interrupted: bool


@dataclass(frozen=True, slots=True)
class Unchanged:
    """What a save may skip because the caller knows it is stored already: the save then writes only the rest."""

    messages: int
    """The first this many messages of the transcript are stored as they are."""
    calls_done: int
    """This many calls left the head of the stored queue of calls."""
    calls_kept: int
    """The stored calls after those are the first this many of the new queue."""


@dataclass(frozen=True)
class StoredConversation:
    """A conversation as saved: `pending` holds call records, `events` event records, both in order."""

    row: ConversationRow
    messages: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    events: list[dict[str, Any]]
    scopes: list[dict[str, Any]] = field(default_factory=list)
    """What the person allowed for the rest of the chat, as {"tool", "command", "prefix"} dicts."""


_CONVERSATION_COLUMNS = "id, owner, title, model, workspace, think, created, updated, interrupted"


class Store:
    """One SQLite file, shared by the threads of this process and by other processes on the same folder."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            # Only we may read it: the folder 0700, the file 0600 (SQLite gives its -wal and -shm files the same mode).
            private_folder(self.path.parent)
            private_file(self.path)
        except OSError as exc:
            raise StoreError(f"Cannot use the data folder {self.path.parent}: {exc.strerror}") from exc
        self._lock = threading.RLock()  # re-entered by the writes inside `transaction()`
        self._depth = 0
        """How many transactions are open: the outermost one commits, those inside it join it."""
        try:
            # Autocommit mode: transactions are begun explicitly below, so DDL in migrations is transactional too.
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            try:
                self._open()
            except BaseException:
                self._conn.close()
                raise
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"Cannot open the data file {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- conversations ----

    def create_conversation(
        self,
        conversation_id: str,
        *,
        owner: str,
        title: str,
        model: str,
        workspace: str | Path,
        think: bool = True,
        now: float | None = None,
    ) -> ConversationRow:
        now = time.time() if now is None else now
        row = ConversationRow(conversation_id, owner, title, model, str(workspace), think, now, now, False)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO conversations (id, owner, title, model, workspace, think, created, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (row.id, row.owner, row.title, row.model, row.workspace, row.think, row.created, row.updated),
            )
        return row

    def conversations(self, owner: str) -> list[ConversationRow]:
        """The owner's conversations, most recently updated first."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE owner = ?"
                " ORDER BY updated DESC, created DESC, id",
                (owner,),
            ).fetchall()
        return [_conversation_row(row) for row in rows]

    def load(self, conversation_id: str) -> StoredConversation | None:
        """Everything saved about one conversation, read as one consistent snapshot."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_CONVERSATION_COLUMNS}, scopes FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            if row is None:
                return None
            messages = _bodies(conn, "messages", conversation_id)
            pending = _bodies(conn, "pending_calls", conversation_id)
            events = _bodies(conn, "events", conversation_id)
        return StoredConversation(_conversation_row(row[:-1]), messages, pending, events, json.loads(row[-1]))

    def save_conversation(
        self,
        conversation_id: str,
        *,
        title: str,
        model: str,
        think: bool,
        messages: list[dict[str, Any]],
        pending: list[dict[str, Any]],
        scopes: list[dict[str, Any]] | None = None,
        now: float | None = None,
        unchanged: Unchanged | None = None,
    ) -> None:
        """Store the transcript and the queued calls as they are now, and mark the conversation updated.

        Only what changed is written, so that an answer's many saves cost what it adds, not its length each time.
        With `unchanged` the caller says what is stored already, and nothing else is read or serialized: new
        messages are appended (a retry that dropped the tail deletes it first), calls that ran are deleted from
        the head of the queue, new ones appended. Without it the stored transcript is compared by its JSON text
        and rewritten from the first difference on, and the queue is replaced.
        """
        now = time.time() if now is None else now
        with self._write() as conn:
            changed = conn.execute(
                "UPDATE conversations SET title = ?, model = ?, think = ?, scopes = ?, updated = ? WHERE id = ?",
                (title, model, think, dump(scopes or []), now, conversation_id),
            )
            if changed.rowcount == 0:
                raise _missing(conversation_id)
            keep = unchanged.messages if unchanged else _same_messages(conn, conversation_id, messages)
            conn.execute("DELETE FROM messages WHERE conversation_id = ? AND seq >= ?", (conversation_id, keep))
            conn.executemany(
                "INSERT INTO messages (conversation_id, seq, body) VALUES (?, ?, ?)",
                [(conversation_id, seq, dump(message)) for seq, message in enumerate(messages[keep:], keep)],
            )
            _save_queue(conn, conversation_id, pending, unchanged)

    def rename(self, conversation_id: str, title: str) -> None:
        self._update(conversation_id, "title", title)

    def servers_off(self, conversation_id: str) -> list[str]:
        """The MCP servers turned off in a conversation (empty for a missing one)."""
        with self._read() as conn:
            row = conn.execute("SELECT servers_off FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        return json.loads(row[0]) if row else []

    def set_servers_off(self, conversation_id: str, servers: list[str]) -> None:
        self._update(conversation_id, "servers_off", dump(servers))

    def network(self, conversation_id: str) -> tuple[str, ...]:
        """The hosts the person let every command of a conversation reach (none for a missing one); a chat that
        had the network on before hosts were named has any host, as it had then."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT network, network_hosts FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
        if not row:
            return ()
        on, hosts = row
        return tuple(json.loads(hosts)) if hosts is not None else (("*",) if on else ())

    def set_network(self, conversation_id: str, hosts: tuple[str, ...]) -> None:
        self._update(conversation_id, "network", bool(hosts))
        self._update(conversation_id, "network_hosts", dump(list(hosts)))

    def mark_interrupted(self, conversation_id: str, interrupted: bool) -> None:
        """Flag a conversation whose answer was cut short by a restart (or clear the flag)."""
        self._update(conversation_id, "interrupted", interrupted)

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation with its transcript, events, calls and audit rows; missing is fine."""
        with self._write() as conn:
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def unfinished(self) -> list[str]:
        """Ids of conversations whose event log does not end with a Done record: answers cut short by a crash."""
        with self._read() as conn:
            last_events = conn.execute(
                "SELECT c.id, e.body FROM conversations AS c JOIN events AS e ON e.conversation_id = c.id"
                " WHERE e.seq = (SELECT MAX(seq) FROM events WHERE conversation_id = c.id)"
                " ORDER BY c.updated DESC, c.id"
            ).fetchall()
        return [conversation_id for conversation_id, body in last_events if json.loads(body).get("type") != "Done"]

    # ---- event log ----

    def append_events(self, conversation_id: str, records: list[dict[str, Any]]) -> None:
        """Append event records after the last stored one, all or none."""
        bodies = [dump(record) for record in records]
        with self._write() as conn:
            _require(conn, conversation_id)
            (start,) = conn.execute(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM events WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()
            conn.executemany(
                "INSERT INTO events (conversation_id, seq, body) VALUES (?, ?, ?)",
                [(conversation_id, seq, body) for seq, body in enumerate(bodies, start)],
            )

    def events(self, conversation_id: str) -> list[dict[str, Any]]:
        with self._read() as conn:
            return _bodies(conn, "events", conversation_id)

    # ---- tool calls and audit ----

    def record_call(self, conversation_id: str, row: CallRow) -> None:
        """Insert or update one call. On update, `result`, `started` and `finished` left None keep their value."""
        with self._write() as conn:
            _require(conn, conversation_id)
            call_tables.record_call(conn, conversation_id, row)

    def calls(self, conversation_id: str) -> list[CallRow]:
        """The conversation's calls in the order they were first recorded."""
        with self._read() as conn:
            return call_tables.calls(conn, conversation_id)

    def add_audit(self, conversation_id: str, row: AuditRow) -> None:
        """Append one row to the conversation's audit trail."""
        with self._write() as conn:
            _require(conn, conversation_id)
            call_tables.add_audit(conn, conversation_id, row)

    def audit(self, conversation_id: str) -> list[AuditRow]:
        with self._read() as conn:
            return call_tables.audit(conn, conversation_id)

    # ---- internals ----

    # ---- checkpoints ----

    @contextmanager
    def checkpoints(self) -> Iterator[sqlite3.Connection]:
        """A write transaction for `meowgent.persist.checkpoints`' functions: a change and its pruning are one."""
        with self._write() as conn:
            yield conn

    @contextmanager
    def watch_links(self) -> Iterator[sqlite3.Connection]:
        """A write transaction for `meowgent.persist.watchlinks`' functions."""
        with self._write() as conn:
            yield conn

    def _open(self) -> None:
        self._conn.execute("PRAGMA busy_timeout = 5000")  # first, so the pragmas below wait for other processes too
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")  # with WAL: a kill loses nothing, power loss at most the tail
        self._conn.execute("PRAGMA foreign_keys = ON")
        with self._write() as conn:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"This data folder was written by a newer Meowgent (data version {version}, this one knows"
                    f" up to {SCHEMA_VERSION}). Upgrade Meowgent, or start it with another data folder."
                )
            if version < SCHEMA_VERSION:
                for migration in MIGRATIONS[version:]:
                    migration(conn)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Make the writes inside this block one transaction: all of them are stored, or none if one fails."""
        with self._write():
            yield

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock up front. A deferred transaction that reads and then writes
        # fails at once with "database is locked" if another process wrote in between; busy_timeout
        # does not help there, but it does make BEGIN IMMEDIATE wait its turn.
        with self._transaction("BEGIN IMMEDIATE") as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        # A transaction even for reads, so several SELECTs see one snapshot while other processes write.
        with self._transaction("BEGIN") as conn:
            yield conn

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self._lock:  # held by this thread until the outermost transaction ends
            if self._depth:  # inside `transaction()`: part of it
                yield self._conn
                return
            self._conn.execute(begin)
            self._depth += 1
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # SQLite may already have rolled back (e.g. disk full)
                    self._conn.execute("ROLLBACK")
                raise
            finally:
                self._depth -= 1

    def _update(self, conversation_id: str, column: str, value: object) -> None:
        with self._write() as conn:
            changed = conn.execute(f"UPDATE conversations SET {column} = ? WHERE id = ?", (value, conversation_id))
            if changed.rowcount == 0:
                raise _missing(conversation_id)


def _same_messages(conn: sqlite3.Connection, conversation_id: str, messages: list[dict[str, Any]]) -> int:
    """How many messages at the start of the stored transcript equal the start of `messages`."""
    rows = conn.execute("SELECT body FROM messages WHERE conversation_id = ? ORDER BY seq", (conversation_id,))
    stored = [body for (body,) in rows]
    pairs = enumerate(zip(stored, messages, strict=False))
    return next((seq for seq, (body, message) in pairs if body != dump(message)), min(len(stored), len(messages)))


def _save_queue(
    conn: sqlite3.Connection, conversation_id: str, pending: list[dict[str, Any]], unchanged: Unchanged | None
) -> None:
    """Bring the stored queue of calls to `pending`: all of it anew, or only its changes if they are known."""
    if unchanged is None:
        conn.execute("DELETE FROM pending_calls WHERE conversation_id = ?", (conversation_id,))
    elif unchanged.calls_done:
        conn.execute(
            "DELETE FROM pending_calls WHERE conversation_id = ? AND seq IN"
            " (SELECT seq FROM pending_calls WHERE conversation_id = ? ORDER BY seq LIMIT ?)",
            (conversation_id, conversation_id, unchanged.calls_done),
        )
    added = pending[unchanged.calls_kept if unchanged else 0 :]
    if not added:
        return
    (start,) = conn.execute(
        "SELECT COALESCE(MAX(seq) + 1, 0) FROM pending_calls WHERE conversation_id = ?", (conversation_id,)
    ).fetchone()
    conn.executemany(
        "INSERT INTO pending_calls (conversation_id, seq, body) VALUES (?, ?, ?)",
        [(conversation_id, seq, dump(call)) for seq, call in enumerate(added, start)],
    )


def _conversation_row(row: tuple[Any, ...]) -> ConversationRow:
    conversation_id, owner, title, model, workspace, think, created, updated, interrupted = row
    return ConversationRow(
        conversation_id, owner, title, model, workspace, bool(think), created, updated, bool(interrupted)
    )


def _bodies(conn: sqlite3.Connection, table: str, conversation_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(f"SELECT body FROM {table} WHERE conversation_id = ? ORDER BY seq", (conversation_id,))
    return [json.loads(body) for (body,) in rows]


def _require(conn: sqlite3.Connection, conversation_id: str) -> None:
    if conn.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)).fetchone() is None:
        raise _missing(conversation_id)


def _missing(conversation_id: str) -> StoreError:
    return StoreError(f"Conversation {conversation_id} is not in the store (it may have been deleted).")
