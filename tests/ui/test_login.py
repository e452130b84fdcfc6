"""Logins: wrong passwords pause the name, even for the right one; the login page says who we are."""

import httpx

from meowgent.ui.app import serve
from meowgent.ui.login import FIRST_PAUSE, FREE_ATTEMPTS, LOGIN_MESSAGE, LoginThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_wrong_passwords_pause_the_name_even_for_the_right_password():
    clock = Clock()
    check = LoginThrottle("ann", "right", clock=clock)
    assert check("ann", "right")
    for _ in range(FREE_ATTEMPTS):
        assert not check("ann", "wrong")
    assert not check("ann", "right")  # paused
    clock.now += FIRST_PAUSE
    assert check("ann", "right")


def test_the_pause_doubles_and_other_names_share_one_record():
    clock = Clock()
    check = LoginThrottle("ann", "right", clock=clock)
    for _ in range(FREE_ATTEMPTS + 1):
        clock.now += 2 * FIRST_PAUSE  # each try after any pause: still counted
        check("ann", "wrong")
    clock.now += FIRST_PAUSE
    assert not check("ann", "right")  # the second pause is twice as long
    clock.now += FIRST_PAUSE
    assert check("ann", "right")
    for name in ("x1", "x2", "x3", "x4", "x5"):
        check(name, "guess")
    assert not check("x6", "guess")
    assert check("ann", "right")  # guessing other names does not lock the real one out


def test_the_running_app_refuses_the_right_password_after_wrong_ones(running_app):
    running_app.demo.close()
    demo, url, _ = serve(running_app.settings, auth=("ann", "right"))
    running_app.demo = demo
    page = httpx.get(url + "config", timeout=10)
    assert page.status_code == 401
    assert page.json()["detail"]["auth_message"] == LOGIN_MESSAGE
    for _ in range(FREE_ATTEMPTS):
        assert httpx.post(url + "login", data={"username": "ann", "password": "guess"}, timeout=10).status_code == 400
    assert httpx.post(url + "login", data={"username": "ann", "password": "right"}, timeout=10).status_code == 400
