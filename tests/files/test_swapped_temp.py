"""Issue 26: a concurrent process swaps the temporary file of every write for a symbolic link out of the workspace.

The writers are the real ones: write_file and edit_file through the approval gate (checkpointed), uploads, and undo.
The swapper is a separate process watching the folders with inotify (`swapper.py`). Whatever it does, no file
outside the workspace may change its bytes or its mode, and nothing may be created there.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meowgent.files import upload
from meowgent.files.errors import FileRefused
from meowgent.tools.workspace import Workspace
from tests.files.conftest import CHAT, Bench, make_bench

_FILES = ("a.txt", "sub/b.txt")
_SECRET = b"SECRET outside\n"


@dataclass
class Scene:
    bench: Bench
    outside: Path
    secret: Path


def _scene(root: Path) -> Scene:
    outside = root / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_bytes(_SECRET)
    secret.chmod(0o600)
    bench = make_bench(root)
    (bench.workspace / "sub").mkdir()
    for name in _FILES:
        (bench.workspace / name).write_bytes(b"start\n")
        (bench.workspace / name).chmod(0o640)  # a mode that differs from the secret's: a chmod through a link shows
    return Scene(bench, outside, secret)


def _outside_state(outside: Path) -> dict[str, tuple[bytes, int]]:
    return {item.name: (item.read_bytes(), stat.S_IMODE(item.stat().st_mode)) for item in outside.iterdir()}


@contextmanager
def _swapping(scene: Scene, seed: int) -> Iterator[list[int]]:
    """The swapper running on the workspace's folders; yields a list that holds its swap count once it stopped."""
    folders = [scene.bench.workspace, scene.bench.workspace / "sub"]
    swapper = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("swapper.py")), str(seed), str(scene.secret), str(scene.outside)]
        + [str(folder) for folder in folders],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdout is not None
    assert swapper.stdout.readline().strip() == "ready"
    swaps: list[int] = []
    try:
        yield swaps
    finally:
        swapper.terminate()
        swaps.append(int(swapper.stdout.read().strip() or 0))
        swapper.wait()


def _repair(scene: Scene) -> None:
    """Put back a regular file where the swapper left a link, so every write has a mode to keep and a file to race.

    Made with O_EXCL and O_NOFOLLOW: the swapper may still be at work, and this must not write through its links.
    """
    for name in _FILES:
        path = scene.bench.workspace / name
        while _regular_content(path) is None:
            path.unlink(missing_ok=True)
            with contextlib.suppress(FileExistsError):
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o640)
                os.write(descriptor, b"start\n")
                os.fchmod(descriptor, 0o640)
                os.close(descriptor)


def _regular_content(path: Path) -> bytes | None:
    """The file's bytes, read without following a link; None for a link or nothing."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as file:
        return file.read()


def _act(scene: Scene, step: tuple[str, int, str], calls: list[str]) -> str:
    """One write of the kind `step` names; what it answered, or the kind of its refusal."""
    kind, which, text = step
    bench, name = scene.bench, _FILES[which]
    if kind == "write":
        return _tool(bench, calls, "write_file", path=name, content=text)
    if kind == "edit":
        old = _regular_content(bench.workspace / name)
        if not old:
            return "ran"
        return _tool(bench, calls, "edit_file", path=name, old=old.decode(errors="replace"), new=text + "!")
    try:
        if kind == "upload":
            source = io.BytesIO(text.encode())
            upload.save(Workspace(bench.workspace), name, source, replace=which == 0, max_bytes=1_000)
        elif calls:
            bench.checkpoints.undo(CHAT, calls.pop(), force=True)
    except FileRefused as refused:
        return refused.kind
    return "ran"


def _tool(bench: Bench, calls: list[str], name: str, **arguments: object) -> str:
    calls.append(bench.call(name, **arguments))
    result = bench.conversation.messages[-1]["content"]
    return "changed" if "its temporary file was moved or replaced" in result else "ran"


_STEP = st.tuples(
    st.sampled_from(("write", "edit", "upload", "undo")),
    st.integers(min_value=0, max_value=len(_FILES) - 1),
    st.text(alphabet="xyz\n", max_size=40),
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_STEP, min_size=1, max_size=12), seed=st.integers(min_value=0, max_value=2**31))
def test_whatever_the_swapper_does_nothing_outside_the_workspace_changes(steps, seed):
    with tempfile.TemporaryDirectory() as root:
        scene = _scene(Path(root))
        before = _outside_state(scene.outside)
        calls: list[str] = []
        with _swapping(scene, seed):
            for step in steps:
                _act(scene, step, calls)
        assert _outside_state(scene.outside) == before


def test_under_steady_swapping_writes_refuse_and_nothing_outside_changes(tmp_path):
    scene = _scene(tmp_path)
    before = _outside_state(scene.outside)
    calls: list[str] = []
    kinds = ("write", "upload", "undo", "edit")
    with _swapping(scene, seed=26) as swaps:
        answers = []
        for n in range(200):
            answers.append(_act(scene, (kinds[n % 4], n // 4 % 2, f"round {n}\n"), calls))
            _repair(scene)
    assert _outside_state(scene.outside) == before
    assert swaps[0] > 20, "the swapper hardly ever got in: the test proves nothing"
    # Or the system refused a step ("io"): a swap can land between two of the write's own calls (seen under load).
    assert set(answers) <= {"ran", "changed", "unsafe_path", "exists", "io"}, answers
    assert "changed" in answers  # the check before the rename caught a swap and said so
