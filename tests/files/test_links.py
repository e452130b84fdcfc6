"""Each write of the person's and the agent's refuses a link out of the workspace, wherever it is on the path.

write_file and edit_file through the approval gate, an upload, and an undo that writes a file back or removes one.
The links are planted between the call and the undo, as a command could plant them.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from meowgent.files import upload
from meowgent.files.errors import FileRefused
from meowgent.tools.workspace import Workspace
from tests.files.conftest import CHAT, Bench


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the workspace with a file of the same name as the workspace's, mode 0o600."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "x.txt").write_bytes(b"SECRET")
    (folder / "x.txt").chmod(0o600)
    return folder


def untouched(outside: Path) -> bool:
    found = {item.name: (item.read_bytes(), stat.S_IMODE(item.stat().st_mode)) for item in outside.iterdir()}
    return found == {"x.txt": (b"SECRET", 0o600)}


def plant(bench: Bench, outside: Path, where: str) -> str:
    """`d/x.txt` in the workspace, with `d` or `x.txt` a link out; the path to write."""
    folder = bench.workspace / "d"
    folder.mkdir(exist_ok=True)
    if where == "folder":
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()
        folder.symlink_to(outside)
    else:
        (folder / "x.txt").unlink(missing_ok=True)
        (folder / "x.txt").symlink_to(outside / "x.txt")
    return "d/x.txt"


@pytest.mark.parametrize("where", ["folder", "file"])
def test_write_and_edit_refuse_a_link_out(bench, outside, where):
    path = plant(bench, outside, where)
    bench.say("go")
    bench.call("write_file", path=path, content="mine")
    assert "outside the workspace" in bench.conversation.messages[-1]["content"]
    bench.call("edit_file", path=path, old="SECRET", new="mine")
    assert "outside the workspace" in bench.conversation.messages[-1]["content"]
    assert untouched(outside)


@pytest.mark.parametrize("where", ["folder", "file"])
@pytest.mark.parametrize("replace", [False, True])
def test_an_upload_refuses_a_link_out(bench, outside, where, replace):
    path = plant(bench, outside, where)
    with pytest.raises(FileRefused) as caught:
        upload.save(Workspace(bench.workspace), path, io.BytesIO(b"mine"), replace=replace, max_bytes=100)
    assert caught.value.kind in {"unsafe_path", "exists"}
    assert untouched(outside)


@pytest.mark.parametrize("where", ["folder", "file"])
@pytest.mark.parametrize("created", [False, True])
def test_an_undo_refuses_a_link_planted_since_the_call(bench, outside, where, created):
    if not created:
        (bench.workspace / "d").mkdir()
        (bench.workspace / "d" / "x.txt").write_bytes(b"before")
    bench.say("go")
    call = bench.call("write_file", path="d/x.txt", content="agent")
    plant(bench, outside, where)
    with pytest.raises(FileRefused) as caught:
        bench.checkpoints.undo(CHAT, call, force=True)
    assert caught.value.kind == "unsafe_path"
    assert untouched(outside)


def test_an_upload_whose_temporary_file_is_swapped_is_refused_as_changed(bench, outside):
    class Swapping(io.BytesIO):
        """An upload that, once its temporary file exists, has a neighbour swap it for a link out."""

        def read(self, size: int | None = -1) -> bytes:
            for name in os.listdir(bench.workspace):
                if name.startswith(".meowgent-"):
                    os.rename(bench.workspace / name, bench.workspace / "away")
                    os.symlink(outside / "x.txt", bench.workspace / name)
            return super().read(size)

    (bench.workspace / "x.txt").write_bytes(b"old")
    with pytest.raises(FileRefused) as caught:
        upload.save(Workspace(bench.workspace), "x.txt", Swapping(b"new"), replace=True, max_bytes=100)
    assert caught.value.kind == "changed"
    assert (bench.workspace / "x.txt").read_bytes() == b"old"
    assert untouched(outside)
