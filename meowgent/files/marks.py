"""This chat's marks in the Files panel ("+12 −3", "new", "changed"), at the cost of the change, not of the file.

A mark compares a file now with its first checkpoint. A stat decides first: a missing file, something that is not a
file, a file over `DIFF_BYTES`, or a first state not kept or over `DIFF_BYTES` cannot be counted as lines, so its mark
is known without reading a byte (an 8 GB file costs one stat; no mark needs a hash). A file that can be counted is read
(at most `DIFF_BYTES`, and its first state's blob) and compared once; the mark is remembered with the file's stat
(size, mtime, ctime, inode) and the row, and reused until either changes. A refresh reads at most `INLINE_BYTES`
itself; the other marks are counted by one background thread, a file at a time, and show as pending ("counting…")
until a refresh finds them counted: a refresh never waits for one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from meowgent.files.access import read_current, resolve
from meowgent.files.errors import FileRefused
from meowgent.persist.checkpoints import CheckpointRow
from meowgent.tools.linediff import unified_diff
from meowgent.tools.workspace import Workspace

DIFF_BYTES = 1_000_000
"""A side larger than this is not compared line by line (a diff or a mark then says only that it changed)."""
INLINE_BYTES = 256_000
"""Bytes one refresh reads itself to count marks (a file and its first state); the rest wait for the background."""
REMEMBERED = 4_096
"""Marks remembered at most (the oldest forgotten first): one stat each tells whether they still hold."""

log = logging.getLogger(__name__)

_Key = tuple[int, bool]
"""The first checkpoint's seq and whether its bytes are still kept: the mark's other side."""
_Stat = tuple[int, int, int, int]
"""Size, mtime and ctime in ns, inode: a replacement (every write of the agent's tools is one: a new inode), a touch
or a write of another size changes one of them. A write in place of the same size within the clock's tick after a
count (a few ms) would not, as with git's index: the mark would stay as counted until the file changes again."""


@dataclass(frozen=True, slots=True)
class Mark:
    """How a chat changed one file, its first checkpoint against now: "+12 −3", or created."""

    path: str
    created: bool
    added: int | None
    removed: int | None
    """Line counts; None when the sides cannot be compared as text (binary, large, pruned, or the file is gone)."""
    pending: bool = False
    """Not counted yet: the background is on it, a later refresh shows it."""


class Marker:
    """The marks of one workspace's files, remembered and counted in the background; `first_text(row)` is a
    checkpoint's first state as text (None when it cannot be compared)."""

    def __init__(self, workspace: Workspace, first_text: Callable[[CheckpointRow], str | None]) -> None:
        self._workspace = workspace
        self._first_text = first_text
        self._lock = threading.Lock()
        self._known: dict[_Key, tuple[_Stat, Mark]] = {}
        self._waiting: deque[CheckpointRow] = deque()
        self._queued: set[_Key] = set()
        self._worker: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()

    def marks(self, firsts: Iterable[CheckpointRow]) -> dict[str, Mark]:
        """Each row's file marked against it, reading at most `INLINE_BYTES`; the others pending."""
        budget = INLINE_BYTES
        marks = {}
        for row in firsts:
            found = self._stat(row.path)
            if found is None:  # gone: nothing to count
                marks[row.path] = Mark(row.path, False, None, None)
                continue
            mark = _uncountable(row, found) or self._remembered(row, found)
            if mark is None:
                cost = found.st_size + (row.before_size if row.before is not None else 0)
                if cost <= budget:
                    budget -= cost
                    mark = self._count(row, found)
                else:
                    self._queue(row)
                    mark = Mark(row.path, row.before is None, None, None, pending=True)
            marks[row.path] = mark
        return marks

    def wait_idle(self, timeout: float) -> bool:
        """Whether the background counted every mark it was given within `timeout` seconds (tests, benchmarks)."""
        return self._idle.wait(timeout)

    def _stat(self, path: str) -> os.stat_result | None:
        """The stat of the file at its real path in the workspace; None when nothing is there or the path leaves it."""
        with contextlib.suppress(FileRefused, OSError):
            return os.lstat(resolve(self._workspace, path))
        return None

    def _remembered(self, row: CheckpointRow, found: os.stat_result) -> Mark | None:
        with self._lock:
            known = self._known.get(_key(row))
        return known[1] if known is not None and known[0] == _stat_of(found) else None

    def _count(self, row: CheckpointRow, found: os.stat_result) -> Mark:
        """Read both sides, count their lines, and remember the mark with the stat seen before reading (a write
        meanwhile changes the stat, so the next refresh counts again)."""
        mark = _counted(row, self._first_text(row), current_text(self._workspace, row.path))
        with self._lock:
            self._known[_key(row)] = (_stat_of(found), mark)
            while len(self._known) > REMEMBERED:
                del self._known[next(iter(self._known))]
        return mark

    def _queue(self, row: CheckpointRow) -> None:
        with self._lock:
            if _key(row) in self._queued:
                return
            self._queued.add(_key(row))
            self._waiting.append(row)
            self._idle.clear()
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="meowgent-marks", daemon=True)
                self._worker.start()

    def _work(self) -> None:
        """Count the waiting marks one at a time; the thread ends when none is left (the next queue starts one)."""
        while True:
            with self._lock:
                if not self._waiting:
                    self._worker = None
                    self._idle.set()
                    return
                row = self._waiting.popleft()
            try:
                if (found := self._stat(row.path)) is not None and _uncountable(row, found) is None:
                    self._count(row, found)
            except Exception:  # a thread's error is seen by no one: log it; the mark stays pending, the panel goes on
                log.exception("could not count the mark of %s", row.path)
            with self._lock:
                self._queued.discard(_key(row))


def _key(row: CheckpointRow) -> _Key:
    return row.seq, row.kept


def _stat_of(found: os.stat_result) -> _Stat:
    return found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino


def _uncountable(row: CheckpointRow, found: os.stat_result) -> Mark | None:
    """The mark a stat alone decides (no line counts), or None when the file must be read to count."""
    created = row.before is None
    if not stat.S_ISREG(found.st_mode) or found.st_size > DIFF_BYTES:
        return Mark(row.path, created, None, None)
    if not created and (not row.kept or row.before_size > DIFF_BYTES):
        return Mark(row.path, False, None, None)
    return None


def _counted(row: CheckpointRow, before: str | None, now: str | None) -> Mark:
    created = row.before is None
    if before is None or now is None:
        return Mark(row.path, created, None, None)
    lines = unified_diff(before, now, before="a", after="b").lines[2:]
    added = sum(1 for line in lines if line.startswith("+"))
    removed = sum(1 for line in lines if line.startswith("-"))
    return Mark(row.path, created, added, removed)


def current_text(workspace: Workspace, path: str) -> str | None:
    """The file now as text to compare: None when it is gone, not a file, over `DIFF_BYTES`, or binary."""
    with contextlib.suppress(FileRefused):
        data = read_current(workspace, path, limit=DIFF_BYTES)
        return None if data is None else as_text(data)
    return None


def as_text(data: bytes) -> str | None:
    """Bytes as text to compare, or None for binary (a NUL near the start)."""
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")
