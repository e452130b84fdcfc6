"""The watch_links table: each live watch link as the SHA-256 of its token, never the token itself.

So a link outlives a restart until it expires or is revoked, while the data file holds nothing that opens it.
The functions take a connection inside a transaction that the store opened (`Store.watch_links`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WatchLinkRow:
    """One chat's live link."""

    conversation_id: str
    digest: bytes
    """SHA-256 of the token: what a presented token is looked up by."""
    owner: str
    expires_at: float
    """On the links' clock (`time.time()`)."""


def put(conn: sqlite3.Connection, row: WatchLinkRow) -> None:
    """Keep the chat's link (a chat has at most one: a new one takes the old one's place)."""
    conn.execute(
        "INSERT OR REPLACE INTO watch_links (conversation_id, digest, owner, expires_at) VALUES (?, ?, ?, ?)",
        (row.conversation_id, row.digest, row.owner, row.expires_at),
    )


def remove(conn: sqlite3.Connection, conversation_id: str) -> None:
    conn.execute("DELETE FROM watch_links WHERE conversation_id = ?", (conversation_id,))


def drop_expired(conn: sqlite3.Connection, now: float) -> None:
    conn.execute("DELETE FROM watch_links WHERE expires_at <= ?", (now,))


def live(conn: sqlite3.Connection, now: float) -> list[WatchLinkRow]:
    """The links still live at `now`; the expired ones are deleted."""
    drop_expired(conn, now)
    rows = conn.execute("SELECT conversation_id, digest, owner, expires_at FROM watch_links ORDER BY conversation_id")
    return [WatchLinkRow(chat, bytes(digest), owner, expires_at) for chat, digest, owner, expires_at in rows]
