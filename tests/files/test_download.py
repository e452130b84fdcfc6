import io
import os
import shutil
import subprocess
import threading
import zipfile

import pytest

from meowgent.files.download import LEFT_OUT, plan, zip_chunks
from meowgent.files.errors import FileRefused
from meowgent.tools.workspace import Workspace


def make_tree(root):
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("# a\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\0" * 100)
    (root / "debug.log").write_text("log\n")
    (root / "keep.txt").write_text("keep\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.js").write_text("x")


def unzip(workspace, **options):
    cap = options.pop("cap", 10_000_000)
    data = b"".join(zip_chunks(workspace, plan(workspace, cap=cap, **options), cap=cap))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_zip_holds_every_file_with_its_bytes_and_says_what_it_left_out(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "outside-link").symlink_to("/etc/passwd")
    files = unzip(Workspace(tmp_path))
    assert files["docs/a.md"] == b"# a\n"
    assert files["build/out.o"] == b"\0" * 100
    left_out = files[LEFT_OUT].decode()
    assert "node_modules" in left_out
    assert "outside-link: a symbolic link" in left_out
    assert not any(name.startswith("node_modules/") for name in files)


def test_the_root_gitignore_hides_files_without_git(tmp_path):
    make_tree(tmp_path)
    names = set(unzip(Workspace(tmp_path), skip_ignored=True))
    assert {"docs/a.md", "keep.txt", ".gitignore"} <= names
    assert "build/out.o" not in names
    assert "debug.log" not in names


def test_a_root_gitignore_that_is_a_link_out_or_a_fifo_is_not_read(tmp_path):
    (tmp_path / "outside.txt").write_text("*.txt\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.txt").write_text("keep\n")
    (root / ".gitignore").symlink_to(tmp_path / "outside.txt")
    assert "keep.txt" in unzip(Workspace(root), skip_ignored=True)
    (root / ".gitignore").unlink()
    os.mkfifo(root / ".gitignore")
    answer: list[dict[str, bytes]] = []
    reader = threading.Thread(target=lambda: answer.append(unzip(Workspace(root), skip_ignored=True)), daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert answer, "the download hung reading a FIFO named .gitignore"
    assert "keep.txt" in answer[0]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_decides_what_is_hidden_in_a_repository(tmp_path):
    make_tree(tmp_path)
    (tmp_path / "docs" / ".gitignore").write_text("a.md\n")  # only git reads nested ones
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    names = set(unzip(Workspace(tmp_path), skip_ignored=True))
    assert "docs/a.md" not in names
    assert "build/out.o" not in names
    assert "keep.txt" in names


def test_past_the_cap_the_zip_is_refused_before_a_byte(tmp_path):
    make_tree(tmp_path)
    with pytest.raises(FileRefused) as caught:
        plan(Workspace(tmp_path), cap=50)
    assert caught.value.kind == "zip_too_large"
    assert caught.value.values == {"limit": "50 bytes"}


def test_a_file_that_grows_past_the_cap_stops_the_stream(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 10)
    workspace = Workspace(tmp_path)
    zip_plan = plan(workspace, cap=100)
    (tmp_path / "a").write_bytes(b"x" * 1000)
    with pytest.raises(FileRefused) as caught:
        b"".join(zip_chunks(workspace, zip_plan, cap=100))
    assert caught.value.kind == "zip_too_large"
