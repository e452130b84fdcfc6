"""atomicwrite.write_in: one write into a folder held by its descriptor, against a neighbour that swaps names.

The neighbour acts from inside the stream of chunks: by the time the first chunk is asked for, the temporary file
exists, so a generator can do, at a known point, what a concurrent process does at a random one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from meowgent.tools.atomicwrite import TempSwapped, Wrote, write_in, write_then_name


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Path, Path]:
    """A folder to write in, and a file outside it that must never change."""
    folder = tmp_path / "ws"
    folder.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"SECRET")
    secret.chmod(0o600)
    return folder, secret


def write(folder: Path, name: str, chunks, *, replace: bool = True) -> Wrote:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return write_in(descriptor, name, chunks, replace=replace)
    finally:
        os.close(descriptor)


def temporary(folder: Path) -> Path:
    (found,) = [item for item in folder.iterdir() if item.name.startswith(".meowgent-")]
    return found


def neighbour(folder: Path, act: Callable[[Path], None]) -> Iterator[bytes]:
    """Chunks that let `act` loose on the temporary file between the first and the second."""
    yield b"new "
    act(temporary(folder))
    yield b"content"


def state(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), stat.S_IMODE(path.stat().st_mode)


def test_a_replaced_file_keeps_its_mode_and_nothing_is_left_behind(scene):
    folder, _ = scene
    (folder / "run.sh").write_bytes(b"old")
    (folder / "run.sh").chmod(0o750)
    assert write(folder, "run.sh", [b"new"]) == Wrote(3, created=False)
    assert state(folder / "run.sh") == (b"new", 0o750)
    assert os.listdir(folder) == ["run.sh"]


def test_a_temporary_file_swapped_for_a_link_out_is_refused_and_nothing_outside_changes(scene):
    folder, secret = scene
    (folder / "notes.txt").write_bytes(b"old")
    (folder / "notes.txt").chmod(0o644)

    def swap(temp: Path) -> None:
        temp.rename(folder / "away")
        temp.symlink_to(secret)

    with pytest.raises(TempSwapped):
        write(folder, "notes.txt", neighbour(folder, swap))
    assert state(secret) == (b"SECRET", 0o600)  # a chmod by name would have made it 0o644
    assert state(folder / "notes.txt") == (b"old", 0o644)
    assert (folder / "away").read_bytes() == b"new content"  # the file written, where the neighbour put it
    assert os.readlink(temporary(folder)) == str(secret)  # the neighbour's link is not ours to remove


def test_a_temporary_file_swapped_for_a_link_to_a_fresh_name_creates_nothing(scene):
    folder, secret = scene
    fresh = secret.parent / "fresh-3f9c2a"

    def swap(temp: Path) -> None:
        temp.unlink()
        temp.symlink_to(fresh)

    with pytest.raises(TempSwapped):
        write(folder, "new.txt", neighbour(folder, swap))
    assert not os.path.lexists(fresh)
    assert not os.path.lexists(folder / "new.txt")


def test_a_temporary_file_moved_away_and_back_is_still_ours(scene):
    folder, _ = scene

    def away_and_back(temp: Path) -> None:
        temp.rename(folder / "away")
        (folder / "away").rename(temp)

    assert write(folder, "a.txt", neighbour(folder, away_and_back)) == Wrote(11, created=True)
    assert (folder / "a.txt").read_bytes() == b"new content"
    assert os.listdir(folder) == ["a.txt"]


def test_the_name_swapped_for_a_link_out_is_replaced_and_the_link_target_untouched(scene):
    folder, secret = scene
    (folder / "a.txt").write_bytes(b"old")

    def swap_the_name(_temp: Path) -> None:
        (folder / "a.txt").unlink()
        (folder / "a.txt").symlink_to(secret)

    write(folder, "a.txt", neighbour(folder, swap_the_name))
    assert not (folder / "a.txt").is_symlink()
    assert (folder / "a.txt").read_bytes() == b"new content"
    assert state(secret) == (b"SECRET", 0o600)


def test_without_replace_any_name_there_is_left_alone_even_one_made_meanwhile(scene):
    folder, secret = scene
    (folder / "link").symlink_to(secret)
    asked: list[bool] = []

    def source() -> Iterator[bytes]:
        asked.append(True)
        yield b"x"

    with pytest.raises(FileExistsError):
        write(folder, "link", source(), replace=False)
    assert asked == []  # refused before a byte of the upload was read

    def made_meanwhile(_temp: Path) -> None:
        (folder / "late.txt").write_bytes(b"theirs")

    with pytest.raises(FileExistsError):
        write(folder, "late.txt", neighbour(folder, made_meanwhile), replace=False)
    assert (folder / "late.txt").read_bytes() == b"theirs"
    assert sorted(os.listdir(folder)) == ["late.txt", "link"]
    assert state(secret) == (b"SECRET", 0o600)


def test_a_folder_at_the_name_is_refused_before_anything_is_written(scene):
    folder, _ = scene
    (folder / "docs").mkdir()
    with pytest.raises(IsADirectoryError):
        write(folder, "docs", [b"x"])
    assert os.listdir(folder) == ["docs"]


def test_a_source_that_fails_leaves_no_temporary_file(scene):
    folder, _ = scene

    def failing() -> Iterator[bytes]:
        yield b"part"
        raise ValueError("the upload was too large")

    with pytest.raises(ValueError, match="too large"):
        write(folder, "big.bin", failing())
    assert os.listdir(folder) == []


def test_a_name_given_after_the_write_is_taken_only_by_the_file_written_and_none_drops_it(scene):
    """As a checkpoint's blob is named by its hash: the temporary file swapped just before the naming is refused."""
    folder, secret = scene
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert write_then_name(descriptor, [b"a", b"b"], lambda: "ab", new_mode=0o600) == (2, "ab")
        assert state(folder / "ab") == (b"ab", 0o600)
        assert write_then_name(descriptor, [b"dropped"], lambda: None) == (7, None)
        assert os.listdir(folder) == ["ab"]

        def swapped_then_named() -> str:
            temp = temporary(folder)
            temp.unlink()
            temp.symlink_to(secret)
            return "cd"

        with pytest.raises(TempSwapped):
            write_then_name(descriptor, [b"cd"], swapped_then_named, mode=0o644)
    finally:
        os.close(descriptor)
    assert not (folder / "cd").exists()
    assert state(secret) == (b"SECRET", 0o600)
