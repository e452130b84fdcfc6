"""How many may watch at once: a cap on an app's open watch streams.

A watch link is public by design, so anyone holding one can open streams; each held stream costs a descriptor and
memory (1,500 idle viewers held 1,500 descriptors and 46 MB). Past the cap, the next viewer is told to try again
later and no stream is opened for it.
"""

from __future__ import annotations

import threading


class Seats:
    """A count of open watch streams, never past `cap` (`Settings.max_watchers`; thread-safe)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._taken = 0
        self._lock = threading.Lock()

    @property
    def taken(self) -> int:
        return self._taken

    @property
    def full(self) -> bool:
        return self._taken >= self.cap

    def take(self) -> bool:
        """A seat for one more viewer, or False when every seat is taken."""
        with self._lock:
            if self._taken >= self.cap:
                return False
            self._taken += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self._taken = max(self._taken - 1, 0)
