"""When a follower of a running answer draws a frame, and how much of the page it redraws.

The browser, not the wire, is the bottleneck: every frame Gradio sends costs the page tens of milliseconds of its
own state updates, whatever changed, and on a laptop that CPU time is taken from the model (issue 31). So text is
drawn at the rate the eye reads it, a status change at once, and a frame of text redraws only the chat.
"""

from __future__ import annotations

import math
from enum import Enum

FRAME_SECONDS = 0.2
"""At most one frame this often while text streams: prose reads smoothly at five updates a second."""
POLL_SECONDS = 0.05
"""How often a follower looks at a silent answer's log, so text held back by the interval shows on time."""


class Draw(Enum):
    """What a due frame must redraw."""

    WHOLE = "whole"
    """Everything a frame shows: a status changed (a call, the card, the buttons, the end of the answer)."""
    CHAT = "chat"
    """Only the chat: text or a call's arguments grew, and nothing else can have changed."""


class FrameThrottle:
    """At most one frame per `interval`, one at once on every status change, and never holding back the last news.

    A frame skipped because it came too soon is drawn at the next call after the interval, even when that call
    brings nothing new (the follower calls with no news during a silence), so text before a silence shows whole.
    """

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._last = -math.inf
        self._behind = False  # news arrived that no frame has shown yet
        self._status = False  # a status changed that no frame has shown yet

    def due(self, *, news: bool, status: bool, now: float) -> Draw | None:
        """What to draw now, if anything; `news`: events arrived since the last call; `status`: one of them
        changed a status."""
        self._behind = self._behind or news or status
        self._status = self._status or status
        if not self._behind or not (status or now - self._last >= self._interval):
            return None
        draw = Draw.WHOLE if self._status else Draw.CHAT
        self._last, self._behind, self._status = now, False, False
        return draw
