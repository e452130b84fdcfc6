"""Migration v11: the watch_links table, each chat's live watch link as its token's SHA-256."""

import hashlib
import sqlite3

import pytest

from meowgent.persist import watchlinks as table
from meowgent.persist.migrations import SCHEMA_VERSION
from meowgent.persist.store import Store
from meowgent.persist.watchlinks import WatchLinkRow
from tests.persist.test_migrations import at_version

DIGEST, OTHER = hashlib.sha256(b"one token").digest(), hashlib.sha256(b"another token").digest()


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "m.db")
    for chat in ("c", "d"):
        store.create_conversation(chat, owner="o", title="t", model="m", workspace=tmp_path)
    return store


def test_a_chats_link_round_trips_and_a_new_one_takes_its_place(store):
    with store.watch_links() as conn:
        table.put(conn, WatchLinkRow("c", DIGEST, "o", 100.0))
        assert table.live(conn, 99.0) == [WatchLinkRow("c", DIGEST, "o", 100.0)]
        table.put(conn, WatchLinkRow("c", OTHER, "o", 200.0))
        assert table.live(conn, 99.0) == [WatchLinkRow("c", OTHER, "o", 200.0)]


def test_expired_links_are_deleted_when_read_and_removed_ones_are_gone(store):
    with store.watch_links() as conn:
        table.put(conn, WatchLinkRow("c", DIGEST, "o", 100.0))
        table.put(conn, WatchLinkRow("d", OTHER, "o", 300.0))
        assert table.live(conn, 100.0) == [WatchLinkRow("d", OTHER, "o", 300.0)]
        table.remove(conn, "d")
        assert table.live(conn, 0.0) == []
        assert conn.execute("SELECT COUNT(*) FROM watch_links").fetchone() == (0,)


def test_a_link_goes_with_its_chat(store):
    with store.watch_links() as conn:
        table.put(conn, WatchLinkRow("c", DIGEST, "o", 100.0))
    store.delete("c")
    with store.watch_links() as conn:
        assert table.live(conn, 0.0) == []


def test_only_a_sha256_digest_fits(store):
    with store.watch_links() as conn, pytest.raises(sqlite3.IntegrityError):
        table.put(conn, WatchLinkRow("c", b"the-token-itself-is-never-kept-here", "o", 100.0))
    with store.watch_links() as conn:
        assert table.live(conn, 0.0) == []


def test_a_v10_data_file_gets_the_table_and_keeps_its_chats(tmp_path):
    path = tmp_path / "data" / "meowgent.db"
    with at_version(path, 10) as conn:
        conn.execute(
            "INSERT INTO conversations (id, owner, title, model, workspace, think, created, updated)"
            " VALUES ('c1', 'alice', 'Old chat', 'qwen3', '/w', 1, 1.0, 2.0)"
        )
        conn.execute("COMMIT")
    with Store(path) as store:
        assert store.load("c1").row.title == "Old chat"
        with store.watch_links() as conn:
            assert table.live(conn, 0.0) == []
            assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
