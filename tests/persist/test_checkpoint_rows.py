"""Migration v9: the checkpoints table, and the audit trail's `person` decision (uploads and undos)."""

from meowgent.chats.audit import own_act_row
from meowgent.persist import checkpoints as table
from meowgent.persist.checkpoints import CheckpointRow
from meowgent.persist.store import Store


def test_checkpoint_rows_round_trip_and_go_with_their_chat(tmp_path):
    store = Store(tmp_path / "m.db")
    store.create_conversation("c", owner="o", title="t", model="m", workspace=tmp_path)
    row = CheckpointRow(0, "c", "call", 2, "a.txt", None, 0, "ab" * 32, 5, 1.0, True, False)
    with store.checkpoints() as conn:
        seq = table.add(conn, row)
        table.mark_undone(conn, seq)
        assert table.of_chat(conn, "c") == [
            CheckpointRow(seq, "c", "call", 2, "a.txt", None, 0, "ab" * 32, 5, 1.0, True, True)
        ]
        assert table.kept_bytes(conn) == 5
    store.delete("c")
    with store.checkpoints() as conn:
        assert table.of_chat(conn, "c") == []


def test_an_upload_is_an_audit_row_of_the_persons_own(tmp_path):
    store = Store(tmp_path / "m.db")
    store.create_conversation("c", owner="o", title="t", model="m", workspace=tmp_path)
    row = own_act_row("upload", {"path": "report.pdf", "size": 2_100_000}, account="", now=5.0)
    store.add_audit("c", row)
    assert store.audit("c") == [row]
    assert (row.decision, row.decided_by, row.outcome) == ("person", "owner_browser", "done")
