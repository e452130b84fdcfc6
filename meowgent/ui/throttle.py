"""When a follower of a running answer draws a frame: the browser, not the wire, is the bottleneck."""

from __future__ import annotations

import math

FRAME_SECONDS = 0.05
"""At most one browser update per frame while streaming (the browser, not the wire, is the bottleneck)."""


class FrameThrottle:
    """At most one frame per `interval`, one at once on every status change, and never holding back the last news.

    A frame skipped because it came too soon is drawn at the next call after the interval, even when that call
    brings nothing new (the follower calls with no news during a silence), so text before a silence shows whole.
    """

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._last = -math.inf
        self._behind = False  # news arrived that no frame has shown yet

    def due(self, *, news: bool, status: bool, now: float) -> bool:
        """Whether to draw now; `news`: events arrived since the last call; `status`: one of them changed a status."""
        self._behind = self._behind or news or status
        if not self._behind or not (status or now - self._last >= self._interval):
            return False
        self._last, self._behind = now, False
        return True
