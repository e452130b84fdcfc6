import io
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.files.errors import FileRefused
from meowgent.files.upload import Written, clean_name, save, save_all
from meowgent.tools.workspace import Workspace


def refusal(call) -> FileRefused:
    with pytest.raises(FileRefused) as caught:
        call()
    return caught.value


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../x", "dots"),
        ("a/../../x", "dots"),
        ("/etc/passwd", "absolute"),
        ("C:\\x", "absolute"),
        ("\\\\server\\x", "absolute"),
        ("", "empty"),
        ("   ", "empty"),
        ("a//b", "empty"),
        ("evil\u202etxt.exe", "invisible"),
        ("line\nbreak", "invisible"),
        ("zero\u200bwidth", "invisible"),
        ("CON", "reserved"),
        ("nul.txt", "reserved"),
        ("trailing.", "reserved"),
        ("x" * 256, "too_long"),
    ],
)
def test_bad_names_are_refused_with_a_reason(name, why):
    found = refusal(lambda: clean_name(name))
    assert (found.kind, found.values["why"]) == ("bad_name", why)


def test_names_are_nfc_and_keep_their_folders():
    assert clean_name(" cafe\u0301.md ") == "café.md"
    assert clean_name("docs\\notes.md") == "docs/notes.md"
    assert clean_name("報告.pdf") == "報告.pdf"


@given(st.text(max_size=30))
def test_a_clean_name_never_leaves_the_folder(name):
    try:
        cleaned = clean_name(name)
    except FileRefused:
        return
    parts = cleaned.split("/")
    assert ".." not in parts
    assert "" not in parts
    assert not cleaned.startswith("/")
    assert all(ord(character) >= 32 for character in cleaned)


def test_an_upload_is_written_and_replacing_asks_first(tmp_path):
    workspace = Workspace(tmp_path)
    assert save(workspace, "report.pdf", io.BytesIO(b"%PDF"), max_bytes=100) == Written("report.pdf", 4, False)
    assert refusal(lambda: save(workspace, "report.pdf", io.BytesIO(b"new"), max_bytes=100)).kind == "exists"
    assert (tmp_path / "report.pdf").read_bytes() == b"%PDF"
    assert save(workspace, "report.pdf", io.BytesIO(b"new"), replace=True, max_bytes=100).replaced
    assert (tmp_path / "report.pdf").read_bytes() == b"new"


def test_an_upload_goes_into_the_chosen_folder(tmp_path):
    (tmp_path / "docs").mkdir()
    written = save(Workspace(tmp_path), "a/b.txt", io.BytesIO(b"x"), folder="docs", max_bytes=10)
    assert written.path == "docs/a/b.txt"
    assert (tmp_path / "docs/a/b.txt").read_bytes() == b"x"


def test_nothing_is_written_through_a_link_to_outside(tmp_path):
    workspace_root = tmp_path / "ws"
    outside = tmp_path / "outside"
    workspace_root.mkdir()
    outside.mkdir()
    (workspace_root / "out").symlink_to(outside)
    (workspace_root / "file-link").symlink_to(outside / "target")
    workspace = Workspace(workspace_root)
    assert refusal(lambda: save(workspace, "x", io.BytesIO(b"x"), folder="out", max_bytes=10)).kind == "unsafe_path"
    assert refusal(lambda: save(workspace, "out/x", io.BytesIO(b"x"), max_bytes=10)).kind == "unsafe_path"
    found = refusal(lambda: save(workspace, "file-link", io.BytesIO(b"x"), replace=True, max_bytes=10))
    assert found.kind == "unsafe_path"
    assert list(outside.iterdir()) == []


def test_a_link_inside_is_not_written_through_either(tmp_path):
    (tmp_path / "real.txt").write_text("real")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "real.txt")
    found = refusal(lambda: save(Workspace(tmp_path), "alias.txt", io.BytesIO(b"x"), replace=True, max_bytes=10))
    assert found.kind == "unsafe_path"
    assert (tmp_path / "real.txt").read_text() == "real"


def test_size_and_count_caps_leave_nothing_behind(tmp_path):
    workspace = Workspace(tmp_path)
    found = refusal(lambda: save(workspace, "big.bin", io.BytesIO(b"x" * 11), max_bytes=10))
    assert (found.kind, found.values["limit"]) == ("too_large", 10)
    assert os.listdir(tmp_path) == []
    files = [(f"{n}.txt", io.BytesIO(b"x")) for n in range(3)]
    found = refusal(lambda: save_all(workspace, files, max_bytes=10, max_files=2))
    assert (found.kind, found.values) == ("too_many", {"count": 3, "limit": 2})
    assert os.listdir(tmp_path) == []
