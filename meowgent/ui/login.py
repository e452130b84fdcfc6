"""The login: who may log in, how often they may try, and what the login page says.

Gradio checks the password through `LoginThrottle`, which only knows the user name (behind a
`--share` tunnel every request comes from the same address anyway). After a few wrong passwords
for one name, every attempt for it, even the right one, is refused for a while, and the pause
doubles with each further failure: guessing a printed 16-character password stays hopeless.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

FREE_ATTEMPTS = 5
"""Wrong passwords for one name before it has to wait."""
FIRST_PAUSE = 30.0
"""Seconds of the first wait; each further wrong password doubles it."""
LONGEST_PAUSE = 3600.0

# Gradio shows this above its login form; the page's language is not known yet, so both.
LOGIN_MESSAGE = (
    "<h2>🐱 Meowgent</h2>"
    "<p>Log in with the user and password printed in the terminal where Meowgent started "
    "(or the ones you gave it).</p>"
    "<p lang='zh-TW'>請用啟動 Meowgent 的終端機上顯示的使用者名稱和密碼登入（或你自己設定的）。</p>"
)


@dataclass
class _Failures:
    count: int = 0
    blocked_until: float = 0.0


class LoginThrottle:
    """Gradio's `auth` callable: the right (user, password), and not while that user is paused."""

    def __init__(self, user: str, password: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._user = user
        self._password = password
        self._clock = clock
        self._failures: dict[str, _Failures] = {}
        self._lock = threading.Lock()

    def __call__(self, user: str, password: str) -> bool:
        # One record for every name that is not ours: random names cannot grow the table.
        name = user if user == self._user else ""
        with self._lock:
            failures = self._failures.setdefault(name, _Failures())
            now = self._clock()
            if now < failures.blocked_until:
                return False
            right = secrets.compare_digest(user.encode(), self._user.encode()) and secrets.compare_digest(
                password.encode(), self._password.encode()
            )
            if right:
                failures.count = 0
                return True
            failures.count += 1
            if failures.count >= FREE_ATTEMPTS:
                pause = min(FIRST_PAUSE * 2 ** (failures.count - FREE_ATTEMPTS), LONGEST_PAUSE)
                failures.blocked_until = now + pause
            return False
