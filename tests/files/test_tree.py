import os

import pytest

from meowgent.files.errors import FileRefused
from meowgent.files.tree import Entry, list_folder, search
from meowgent.tools.workspace import Workspace


def test_a_folder_lists_newest_first_and_shows_links_as_links(tmp_path):
    (tmp_path / "old.txt").write_text("old")
    (tmp_path / "new.txt").write_text("new!")
    (tmp_path / "sub").mkdir()
    (tmp_path / "out").symlink_to("/etc")
    os.utime(tmp_path / "old.txt", (1, 1))
    os.utime(tmp_path / "sub", (2, 2))
    entries = list_folder(Workspace(tmp_path))
    assert [entry.path for entry in entries][-2:] == ["sub", "old.txt"]
    kinds = {entry.path: (entry.kind, entry.size) for entry in entries}
    assert kinds["new.txt"] == ("file", 4)
    assert kinds["out"] == ("link", 0)
    assert kinds["sub"] == ("folder", 0)


def test_a_subfolder_lists_its_own_entries_and_a_link_out_is_refused(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a").write_text("a")
    (tmp_path / "out").symlink_to(tmp_path.parent)
    workspace = Workspace(tmp_path)
    assert [entry.path for entry in list_folder(workspace, "sub")] == ["sub/a"]
    with pytest.raises(FileRefused) as caught:
        list_folder(workspace, "out")
    assert caught.value.kind == "unsafe_path"


def test_search_finds_names_ignoring_case_bounded_and_says_what_it_skipped(tmp_path):
    (tmp_path / "src").mkdir()
    for number in range(5):
        (tmp_path / "src" / f"Report{number}.md").write_text("x")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "report.js").write_text("x")
    found = search(Workspace(tmp_path), "REPORT", limit=3)
    assert [entry.path for entry in found.entries] == ["src/Report0.md", "src/Report1.md", "src/Report2.md"]
    assert found.more
    assert found.skipped == ("node_modules",)
    assert isinstance(found.entries[0], Entry)
    assert found.entries[0].kind == "file"
    assert search(Workspace(tmp_path), "  ").entries == ()
