"""The checkpoints table: what each approved write found before it ran, as rows the store reads and writes.

The bytes themselves are blobs in the data folder (`meowgent.files.checkpoints`); a row names them by SHA-256.
The functions take a connection inside a transaction that the store opened.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """One file's state before one call changed it, and what the call left."""

    seq: int
    """Increasing over the whole store: the order the changes were made in."""
    conversation_id: str
    call_id: str
    message: int
    """The index in the chat's transcript of the person's message the call answered."""
    path: str
    """Relative to the workspace, posix style."""
    before: str | None
    """SHA-256 of the file before the call; None: there was no file."""
    before_size: int
    after: str | None
    """SHA-256 of what the call left; None: no file."""
    after_size: int
    time: float
    kept: bool
    """False once the cap pruned its blobs: it can no longer be undone."""
    undone: bool


_COLUMNS = tuple(f.name for f in fields(CheckpointRow))
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM checkpoints"


def add(conn: sqlite3.Connection, row: CheckpointRow) -> int:
    """Insert a row (its `seq` is ignored); returns the seq it got."""
    names = _COLUMNS[1:]
    cursor = conn.execute(
        f"INSERT INTO checkpoints ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        tuple(getattr(row, name) for name in names),
    )
    return int(cursor.lastrowid or 0)


def of_chat(conn: sqlite3.Connection, conversation_id: str) -> list[CheckpointRow]:
    """The chat's checkpoints, oldest first."""
    return [
        _row(values) for values in conn.execute(f"{_SELECT} WHERE conversation_id = ? ORDER BY seq", (conversation_id,))
    ]


def mark_undone(conn: sqlite3.Connection, seq: int) -> None:
    conn.execute("UPDATE checkpoints SET undone = 1 WHERE seq = ?", (seq,))


def kept_bytes(conn: sqlite3.Connection) -> int:
    """The bytes of every distinct blob kept rows name (a blob two rows share counts once)."""
    (total,) = conn.execute(
        "SELECT COALESCE(SUM(size), 0) FROM ("
        " SELECT before AS hash, before_size AS size FROM checkpoints WHERE kept AND before IS NOT NULL"
        " UNION SELECT after, after_size FROM checkpoints WHERE kept AND after IS NOT NULL)"
    ).fetchone()
    return int(total)


def oldest_kept(conn: sqlite3.Connection) -> CheckpointRow | None:
    values = conn.execute(f"{_SELECT} WHERE kept ORDER BY seq LIMIT 1").fetchone()
    return None if values is None else _row(values)


def unkeep(conn: sqlite3.Connection, seq: int) -> None:
    conn.execute("UPDATE checkpoints SET kept = 0 WHERE seq = ?", (seq,))


def blob_in_use(conn: sqlite3.Connection, digest: str) -> bool:
    """Whether a kept row still names the blob."""
    found = conn.execute(
        "SELECT 1 FROM checkpoints WHERE kept AND (before = ? OR after = ?) LIMIT 1", (digest, digest)
    ).fetchone()
    return found is not None


def _row(values: tuple[object, ...]) -> CheckpointRow:
    row = dict(zip(_COLUMNS, values, strict=True))
    row["kept"], row["undone"] = bool(row["kept"]), bool(row["undone"])
    return CheckpointRow(**row)  # type: ignore[arg-type]
