"""Checkpoints: a file's state before each approved write, so the person can undo what the agent changed.

Before a call that writes a file whose path is known (write_file, edit_file, an MCP tool with a `path` argument)
runs, `begin` keeps the file's bytes (or that there was no file); after it, `finish` records the change, keyed by
chat, call and the person's message it answered. Blobs live in the data folder by SHA-256 (shared when equal);
the index is the store's `checkpoints` table. Past `cap` bytes the oldest blobs are pruned and their rows say so.
Blobs are written and read through descriptors, never a path resolved again (meowgent.tools.atomicwrite), and a
blob read back must have its hash: a name swapped meanwhile changes nothing.

`undo` restores what a call found, or removes the file it created. If the file changed since the call wrote it,
nothing is touched and the answer says so with a bounded diff, until the person says yes (`force`). Shell
commands are never checkpointed: what a command changed cannot be known, so Undo never offers it (`can_undo`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import sqlite3
import stat
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from meowgent.files.access import CHUNK, open_file, read_chunks, remove_file, resolve, write_atomic
from meowgent.files.errors import FileRefused
from meowgent.files.marks import DIFF_BYTES, Mark, Marker, as_text, current_text
from meowgent.persist import checkpoints as table
from meowgent.persist.checkpoints import CheckpointRow
from meowgent.persist.private import FILE_MODE, FOLDER_MODE
from meowgent.persist.store import Store
from meowgent.tools.atomicwrite import TempSwapped, write_then_name
from meowgent.tools.linediff import unified_diff
from meowgent.tools.spec import AnyTool, ExternalTool
from meowgent.tools.workspace import Workspace

FOLDER = "checkpoints"
"""The blobs' folder in the data folder."""
DIFF_LINES = 400
"""Lines of a "changed since" diff shown at most."""


def can_undo(found: AnyTool) -> bool:
    """Whether a call of this tool is checkpointed: it writes a file whose path it names. Never a command."""
    if isinstance(found, ExternalTool):
        return "path" in found.argument_names
    return found.traits.writes is not None and found.traits.command is None


def written_path(found: AnyTool, arguments: Mapping[str, Any]) -> str | None:
    """The workspace path a call of `found` writes, if it is known."""
    if not can_undo(found):
        return None
    name = "path" if isinstance(found, ExternalTool) else found.traits.path
    value = arguments.get(name or "")
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class Before:
    """A file as `begin` found it, waiting for the call to finish."""

    chat: str
    call_id: str
    message: int
    path: str
    state: _State


@dataclass(frozen=True, slots=True)
class Undone:
    path: str
    removed: bool
    """The call had created the file, so undoing it removed the file."""


@dataclass(frozen=True, slots=True)
class ChangedSince:
    """The file is not what the call left: undoing would lose that; `diff` is what the call left → now."""

    path: str
    diff: tuple[str, ...]
    exact: bool
    """False when the diff is cut or not line by line (binary or large sides: then `diff` is empty)."""


@dataclass(frozen=True, slots=True)
class CannotUndo:
    path: str
    why: Literal["undone", "not_kept"]
    """Undone already; its bytes were not kept (larger than the cap, or pruned by it since)."""


@dataclass(frozen=True)
class UndoReport:
    """What an undo did. With any `changed` and no `force`, it did nothing: the page asks, then forces."""

    done: tuple[Undone, ...] = ()
    changed: tuple[ChangedSince, ...] = ()
    cannot: tuple[CannotUndo, ...] = ()
    rows: tuple[CheckpointRow, ...] = field(default=(), repr=False)
    """The checkpoints it concerned, newest first."""


@dataclass(frozen=True, slots=True)
class _State:
    digest: str | None
    """SHA-256 of the bytes; None: no file."""
    size: int
    kept: bool
    """The bytes are in a blob."""


class Checkpoints:
    """One app's checkpoints: the store's index, the blobs in the data folder, the workspace they restore into."""

    def __init__(self, store: Store, data_dir: Path, workspace: Path | str, *, cap: int) -> None:
        self._store = store
        self._folder = data_dir / FOLDER
        self._workspace = Workspace(workspace)
        self._cap = cap
        self._lock = threading.Lock()
        self._in_flight: Counter[str] = Counter()
        """Blobs written by `begin` whose row `finish` has not made yet: pruning leaves them alone."""
        self._marker = Marker(self._workspace, lambda row: self._text(row.before, row.before_size))

    def begin(self, chat: str, call_id: str, *, message: int, path: str) -> Before | None:
        """Keep the file at `path` before a call writes it; None when there is nothing a checkpoint could restore
        (the path leaves the workspace or names a folder: the tool will refuse it anyway)."""
        try:
            relative = self._workspace.relative(resolve(self._workspace, path))
            state = self._keep(relative)
        except FileRefused:
            return None
        return Before(chat, call_id, message, relative, state)

    def finish(self, before: Before) -> CheckpointRow | None:
        """Record the change the call made, if it made one (a failed call leaves the file as it was)."""
        try:
            after = self._keep(before.path)
        except FileRefused:
            after = _State(None, 0, False)  # a folder or a link now: Undo will find it changed
        try:
            if after.digest == before.state.digest:
                return None
            row = CheckpointRow(
                0, before.chat, before.call_id, before.message, before.path, before.state.digest,
                before.state.size, after.digest, after.size, time.time(), before.state.kept, False,
            )  # fmt: skip
            with self._store.checkpoints() as conn:
                seq = table.add(conn, row)
                self._prune(conn)
            return dataclasses.replace(row, seq=seq)
        finally:
            self._release(before.state, after)

    def changes(self, chat: str) -> list[CheckpointRow]:
        """The chat's checkpoints, oldest first."""
        with self._store.checkpoints() as conn:
            return table.of_chat(conn, chat)

    def undo(self, chat: str, call_id: str, *, force: bool = False) -> UndoReport:
        """Put back what the call found: its file's bytes, or no file."""
        rows = [row for row in reversed(self.changes(chat)) if row.call_id == call_id]
        return self._undo(rows, force=force)

    def undo_since(self, chat: str, message: int, *, force: bool = False) -> UndoReport:
        """Undo every change of the chat made answering `message` or later, newest first."""
        rows = [row for row in reversed(self.changes(chat)) if row.message >= message]
        return self._undo(rows, force=force)

    def marks(self, chat: str) -> dict[str, Mark]:
        """Each file this chat created or changed (and not undone since), against its first checkpoint; at the cost
        of the change, not of the file, and never waiting (`meowgent.files.marks`)."""
        first: dict[str, CheckpointRow] = {}
        for row in self.changes(chat):
            if not row.undone:
                first.setdefault(row.path, row)
        return self._marker.marks(first.values())

    def marks_counted(self, timeout: float) -> bool:
        """Whether the marks left to the background were all counted within `timeout` seconds (tests, benchmarks)."""
        return self._marker.wait_idle(timeout)

    # ---- undo ----

    def _undo(self, rows: list[CheckpointRow], *, force: bool) -> UndoReport:
        cannot = [
            CannotUndo(row.path, "undone" if row.undone else "not_kept") for row in rows if row.undone or not row.kept
        ]
        todo = [row for row in rows if not row.undone and row.kept]
        changed = () if force else self._changed(todo)
        if changed:
            return UndoReport(changed=changed, cannot=tuple(cannot), rows=tuple(rows))
        done = []
        for row in todo:
            if row.before is None:
                remove_file(self._workspace, row.path)
            elif (kept := self._read_blob(row.before)) is not None:
                write_atomic(self._workspace, row.path, [kept], replace=True)
            else:
                cannot.append(CannotUndo(row.path, "not_kept"))  # its blob is gone, or not what was kept
                continue
            with self._store.checkpoints() as conn:
                table.mark_undone(conn, row.seq)
            done.append(Undone(row.path, removed=row.before is None))
        return UndoReport(done=tuple(done), cannot=tuple(cannot), rows=tuple(rows))

    def _changed(self, rows: list[CheckpointRow]) -> tuple[ChangedSince, ...]:
        """The files whose state is not what the newest of `rows` left, followed back through the older ones."""
        state: dict[str, str | None] = {}
        changed = []
        for row in rows:  # newest first: each must find what it left, then leaves what it found
            if row.path not in state:
                state[row.path] = self._digest(row.path, size=row.after_size)
            if state[row.path] != row.after:
                changed.append(self._changed_since(row))
            state[row.path] = row.before
        return tuple(changed)

    def _changed_since(self, row: CheckpointRow) -> ChangedSince:
        left = self._text(row.after, row.after_size)
        now = current_text(self._workspace, row.path)
        if left is None or now is None:
            return ChangedSince(row.path, (), False)
        diff = unified_diff(left, now, before=f"a/{row.path}", after=f"b/{row.path}")
        shown = tuple(diff.lines[:DIFF_LINES])
        return ChangedSince(row.path, shown, diff.exact and len(shown) == len(diff.lines))

    # ---- states and blobs ----

    def _keep(self, path: str) -> _State:
        """The file's state now, its bytes kept in a blob when they fit under the cap."""
        if not os.path.lexists(resolve(self._workspace, path)):
            return _State(None, 0, True)
        digest, size, kept = self._store_blob(read_chunks(self._workspace, path))
        return _State(digest, size, kept)

    def _store_blob(self, chunks: Iterable[bytes]) -> tuple[str, int, bool]:
        """Write the chunks to a blob named by their hash (unless the total passes the cap); hash, size, kept.
        Written through the folder's descriptor (meowgent.tools.atomicwrite): a name swapped meanwhile is refused."""
        hasher = hashlib.sha256()
        size = 0
        reserved: list[str] = []

        def within_cap() -> Iterator[bytes]:
            nonlocal size
            for chunk in chunks:
                hasher.update(chunk)
                size += len(chunk)
                if size <= self._cap:
                    yield chunk

        def reserve() -> str | None:
            if size > self._cap:
                return None
            with self._lock:  # before it has its name, so that no pruning or release removes it meanwhile
                self._in_flight[hasher.hexdigest()] += 1
            reserved.append(hasher.hexdigest())
            return reserved[0]

        try:
            with self._blobs() as folder:
                write_then_name(folder, within_cap(), reserve, new_mode=FILE_MODE)
        except (OSError, TempSwapped) as exc:
            if reserved:
                self._release(_State(reserved[0], size, True))
            raise FileRefused("changed", f"a checkpoint could not be kept: {exc}") from None
        return hasher.hexdigest(), size, bool(reserved)

    @contextlib.contextmanager
    def _blobs(self) -> Iterator[int]:
        """The blobs' folder, ours alone, opened without following a link (made if missing)."""
        self._folder.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(self._folder, FOLDER_MODE)
        try:
            folder = os.open(self._folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as exc:
            raise FileRefused("changed", f"the checkpoints' folder is not a folder of ours: {exc.strerror}") from None
        try:
            os.fchmod(folder, FOLDER_MODE)
            yield folder
        finally:
            os.close(folder)

    def _read_blob(self, digest: str) -> bytes | None:
        """A blob's bytes, read through descriptors; None when it is missing, or is not what was kept (a link, a
        FIFO, other bytes: something swapped it)."""
        try:
            with self._blobs() as folder:
                blob = os.open(digest, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
                with os.fdopen(blob, "rb") as file:
                    data = file.read() if stat.S_ISREG(os.fstat(blob).st_mode) else None
        except (OSError, FileRefused):
            return None
        return data if data is not None and hashlib.sha256(data).hexdigest() == digest else None

    def _remove_blob(self, digest: str) -> None:
        with contextlib.suppress(OSError, FileRefused), self._blobs() as folder:
            os.unlink(digest, dir_fd=folder)

    def _release(self, *states: _State) -> None:
        """`begin`'s and `finish`'s blobs now have their row, or need none: a blob no kept row names goes."""
        # The store's lock first, then ours, as in `finish`'s pruning: the other order could deadlock with it.
        with self._store.checkpoints() as conn, self._lock:
            for state in states:
                if state.digest is not None and state.kept and state.digest in self._in_flight:
                    self._in_flight[state.digest] -= 1
                    if not self._in_flight[state.digest]:
                        del self._in_flight[state.digest]
            for state in states:
                unused = state.digest not in self._in_flight and not table.blob_in_use(conn, state.digest or "")
                if state.digest is not None and unused:
                    self._remove_blob(state.digest)

    def _prune(self, conn: sqlite3.Connection) -> None:
        """Drop the oldest checkpoints' blobs until the kept ones fit under the cap."""
        while table.kept_bytes(conn) > self._cap and (oldest := table.oldest_kept(conn)) is not None:
            table.unkeep(conn, oldest.seq)
            with self._lock:
                for digest in (oldest.before, oldest.after):
                    if digest is not None and digest not in self._in_flight and not table.blob_in_use(conn, digest):
                        self._remove_blob(digest)

    def _digest(self, path: str, *, size: int) -> str | None:
        """SHA-256 of the file at `path` now if it has `size` bytes, else "size" (it differs, and reading it would
        not tell more); None if there is none; "" for something else there (a folder)."""
        try:
            if not os.path.lexists(resolve(self._workspace, path)):
                return None
            with open_file(self._workspace, path) as (descriptor, found):
                if found.st_size != size:
                    return "size"
                hasher = hashlib.sha256()
                while chunk := os.read(descriptor, CHUNK):
                    hasher.update(chunk)
                return hasher.hexdigest()
        except FileRefused:
            return ""

    def _text(self, digest: str | None, size: int) -> str | None:
        """A blob as text to compare, if it is one and small enough."""
        if digest is None:
            return ""
        if size > DIFF_BYTES:
            return None
        data = self._read_blob(digest)
        return None if data is None else as_text(data)
