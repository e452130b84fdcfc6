"""The Files panel's pieces: rows with this chat's marks, refusals and undos in words, the chat's Undo button."""

from typing import get_args

from hypothesis import given
from hypothesis import strategies as st

from meowgent.chats.audit import own_act_row
from meowgent.files.checkpoints import CannotUndo, ChangedSince, Mark, Undone, UndoReport
from meowgent.files.errors import FileRefused, RefusalKind
from meowgent.files.tree import Entry
from meowgent.persist.checkpoints import CheckpointRow
from meowgent.ui.html import fileview
from meowgent.ui.html.auditlog import audit_html
from meowgent.ui.html.undobutton import undo_button
from meowgent.ui.i18n import CHINESE, ENGLISH
from tests.ui.conftest import html_text


def entry(path, kind="file"):
    return Entry(path, kind, 3, 0.0)


def test_rows_say_what_each_entry_is_and_mark_this_chats_files():
    marks = {"docs/poem.md": Mark("docs/poem.md", True, 16, 0), "docs/a.bin": Mark("docs/a.bin", False, None, None)}
    rows = fileview.tree_rows(
        [entry("docs/poem.md"), entry("docs/a.bin"), entry("docs/sub", "folder"), entry("docs/l", "link")],
        marks,
        ENGLISH,
    )
    assert rows == [
        ("📄 poem.md · new +16 −0", "file:docs/poem.md"),
        ("📄 a.bin · changed", "file:docs/a.bin"),
        ("📁 sub/", "folder:docs/sub"),
        ("🔗 l · a link (not followed)", "file:docs/l"),
    ]
    assert fileview.found_rows([entry("docs/poem.md")], {}, ENGLISH) == [("📄 docs/poem.md", "file:docs/poem.md")]


def test_a_mark_not_counted_yet_says_so_in_either_language():
    pending = Mark("big.txt", True, None, None, pending=True)
    assert fileview.mark_words(pending, ENGLISH) == "new counting…"
    assert fileview.mark_words(Mark("a.txt", False, None, None, pending=True), CHINESE) == "計算中…"


def test_a_folder_lists_the_newest_few_hundred_and_says_so():
    entries = [entry(f"f{n}") for n in range(fileview.LISTED + 5)]
    assert len(fileview.tree_rows(entries, {}, ENGLISH)) == fileview.LISTED
    assert "Showing the newest 300 of 305" in fileview.listing_note(300, 305, ENGLISH)
    assert fileview.listing_note(0, 0, CHINESE) == "這個資料夾是空的。"


def test_refusals_are_sentences_in_either_language():
    dots = FileRefused("bad_name", "", values={"name": "../x", "why": "dots"})
    assert "would leave the folder" in fileview.refusal_text(dots, ENGLISH)
    big = FileRefused("too_large", "", values={"path": "v.mp4", "limit": 100_000_000})
    assert fileview.refusal_text(big, ENGLISH) == "v.mp4 is bigger than the limit of 100.0 MB."
    assert "100.0 MB" in fileview.refusal_text(big, CHINESE)


def test_every_kind_of_refusal_has_words_in_both_languages():
    values = {"path": "a.txt", "limit": 10, "count": 3, "name": "x", "why": "empty"}
    for kind in get_args(RefusalKind):
        refused = FileRefused(kind, "", values=values)
        texts = {fileview.refusal_text(refused, language) for language in (ENGLISH, CHINESE)}
        assert len(texts) == 2, kind  # a key missing from one catalog falls back to English
    changed = FileRefused("changed", "", values={"path": "a.txt"})
    assert "a.txt was moved or replaced" in fileview.refusal_text(changed, ENGLISH)


def test_an_undo_says_what_it_did_and_a_changed_file_shows_its_diff():
    report = UndoReport(done=(Undone("a.txt", False), Undone("b.txt", True)), cannot=(CannotUndo("c", "undone"),))
    assert fileview.undo_said(report, ENGLISH) == [
        "a.txt is back as it was before the change.",
        "b.txt was removed: the agent had created it.",
        "This change to c was already undone.",
    ]
    asked = UndoReport(changed=(ChangedSince("a.txt", ("--- a/a.txt", "+++ b/a.txt", "+<b>mine</b>"), True),))
    shown = html_text(str(fileview.changed_since_html(asked, ENGLISH)))
    assert "a.txt changed after the agent wrote it" in shown
    assert "<b>mine</b>" in shown  # the file's text, escaped


def test_the_undo_pickers_list_calls_and_the_persons_messages():
    rows = [
        CheckpointRow(1, "c", "call1", 2, "a.txt", None, 0, "h", 1, 0.0, True, False),
        CheckpointRow(2, "c", "call1", 2, "b.txt", None, 0, "h", 1, 0.0, True, False),
        CheckpointRow(3, "c", "call2", 4, "a.txt", "h", 1, "i", 1, 0.0, True, True),
    ]
    assert fileview.change_rows(rows, ENGLISH) == [("a.txt · undone", "call2"), ("a.txt, b.txt", "call1")]
    messages = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "write  two\nfiles"},
        {"role": "user", "content": "[Meowgent] note"},
        {"role": "user", "content": "again"},
    ]
    assert fileview.message_rows(messages, rows, app_note="[Meowgent]") == [("again", 4), ("write two files", 2)]


def test_the_undo_pickers_pick_the_newest_change_not_undone_and_the_message_it_answered():
    rows = [
        CheckpointRow(1, "c", "call1", 2, "a.txt", None, 0, "h", 1, 0.0, True, False),
        CheckpointRow(2, "c", "call2", 2, "b.txt", None, 0, "h", 1, 0.0, True, False),
        CheckpointRow(3, "c", "call3", 4, "a.txt", "h", 1, "i", 1, 0.0, True, True),
    ]
    listed = [("thanks", 6), ("again", 4), ("write two files", 2)]
    assert fileview.newest_change(rows) == "call2"  # call3 is undone already
    assert fileview.newest_round(listed, rows) == 2  # not "thanks", which no change answered
    assert fileview.newest_change(rows[2:]) is None
    assert fileview.newest_round(listed, rows[2:]) is None
    assert fileview.newest_change([]) is None


def test_only_changes_not_undone_yet_can_be_picked_to_undo():
    rows = [
        CheckpointRow(1, "c", "call1", 2, "a.txt", None, 0, "h", 1, 0.0, True, False),
        CheckpointRow(2, "c", "call2", 2, "b.txt", None, 0, "h", 1, 0.0, True, True),
        CheckpointRow(3, "c", "call1", 2, "c.txt", None, 0, "h", 1, 0.0, True, True),
    ]
    assert fileview.open_calls(rows) == ["call1"]  # once, though two of its files; call2 is undone
    assert fileview.undone_calls(rows) == {"call2"}  # call1 still has a change to undo
    assert fileview.undone_calls([*rows[1:]]) == {"call1", "call2"}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@given(picked=JSON, offered=st.lists(st.integers(0, 9) | st.text(max_size=3), max_size=6), default=JSON)
def test_a_kept_pick_is_one_the_list_offers_or_else_the_default(picked, offered, default):
    kept = fileview.kept(picked, offered, default)
    if picked is not None and picked in offered:
        assert kept == picked
        assert any(kept is value for value in offered)  # the list's own value, never what was sent
    else:
        assert kept is default


def test_an_undo_with_nothing_picked_says_what_to_do_in_either_language():
    rows = [CheckpointRow(1, "c", "call1", 2, "a.txt", None, 0, "h", 1, 0.0, True, False)]
    assert fileview.nothing_picked("change", rows, ENGLISH) == (
        "Pick one of the agent's changes in the list above, then press Undo."
    )
    assert fileview.nothing_picked("message", rows, ENGLISH) == (
        "Pick one of your messages in the list above, then press Undo."
    )
    assert fileview.nothing_picked("change", [], ENGLISH) == "The agent hasn't changed any file in this chat yet."
    undone = [CheckpointRow(1, "c", "call1", 2, "a.txt", None, 0, "h", 1, 0.0, True, True)]
    assert fileview.nothing_picked("message", undone, ENGLISH) == (
        "Every change the agent made in this chat is undone already."
    )
    assert fileview.nothing_picked("message", rows, CHINESE) == "請先在上面的清單選一則你的訊息，再按復原。"


def test_the_chats_undo_button_carries_its_call_id_as_data():
    button = str(undo_button('x"><img src=y>', ENGLISH))
    assert button.startswith('<button type="button" class="undo" value="x&#34;&#62;&#60;img')
    assert "<img" not in button


def test_the_approval_log_words_uploads_and_undos_as_the_persons_own():
    rows = [
        own_act_row("upload", {"path": "r.pdf", "size": 2_100_000, "replaced": True}, account="", now=0.0),
        own_act_row("undo", {"path": "p.md", "removed": True}, account="bob", now=0.0),
    ]
    shown = html_text(str(audit_html(rows, ENGLISH)))
    assert "You replaced r.pdf with your file (2.1 MB)" in shown
    assert "You undid the agent's change: p.md, which it had created, was removed" in shown
    assert "your own act, which needs no approval, by bob" in shown
