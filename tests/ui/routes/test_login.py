"""Logins: wrong passwords pause the name, even for the right one, but not for a browser that logged in before."""

import asyncio
import stat

import httpx

from meowgent.ui.app import serve
from meowgent.ui.routes.login import (
    FIRST_PAUSE,
    FREE_ATTEMPTS,
    LOGIN_KEY_FILE,
    LOGIN_MESSAGE,
    REMEMBER_COOKIE,
    REMEMBER_SECONDS,
    LoginThrottle,
    RememberedBrowsers,
    RememberLogins,
    login_key,
)


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


def test_a_browser_that_logged_in_before_is_not_paused_by_a_strangers_guesses():
    """Issue 17: five wrong guesses of a known name locked its owner out."""
    clock = Clock()
    check = LoginThrottle("ann", "right", clock=clock)
    browsers = RememberedBrowsers(b"k" * 32, "ann")
    remembered = browsers.cookie()

    def attempt(cookie, password):
        """One POST to the login, through the middleware, as Gradio's login route calls the throttle."""
        answered = []

        async def gradio(scope, receive, send):
            await send({"type": "http.response.start", "status": 200 if check("ann", password) else 400})

        async def send(message):
            answered.append(message)

        headers = [(b"cookie", f"{REMEMBER_COOKIE}={cookie}".encode())] if cookie else []
        scope = {"type": "http", "method": "POST", "path": "/login", "headers": headers}
        asyncio.run(RememberLogins(gradio, browsers)(scope, None, send))
        (start,) = answered
        return start["status"], dict(start["headers"]) if "headers" in start else {}

    for _ in range(FREE_ATTEMPTS):
        assert attempt(None, "guess")[0] == 400
    assert attempt(None, "right")[0] == 400  # a browser never seen: paused
    assert attempt("forged.1.abc", "right")[0] == 400
    status, headers = attempt(remembered, "right")
    assert status == 200
    assert headers[b"set-cookie"].startswith(f"{REMEMBER_COOKIE}=".encode())
    assert b"HttpOnly" in headers[b"set-cookie"]
    for _ in range(FREE_ATTEMPTS):  # a remembered browser's own wrong passwords pause it too
        attempt(remembered, "guess")
    assert attempt(remembered, "right")[0] == 400


def test_a_remembered_browser_is_one_we_signed_for_this_name_and_not_too_long_ago():
    now = [1_000_000.0]
    browsers = RememberedBrowsers(b"k" * 32, "ann", clock=lambda: now[0])
    cookie = browsers.cookie()
    browser = browsers.browser(cookie)
    assert browser
    assert browser == cookie.split(".")[0]
    assert RememberedBrowsers(b"k" * 32, "bob").browser(cookie) is None
    assert RememberedBrowsers(b"x" * 32, "ann").browser(cookie) is None
    identifier, issued, signature = cookie.split(".")
    for forged in (f"{identifier}.{int(issued) + 1}.{signature}", f"other.{issued}.{signature}", "", "a.b", None):
        assert browsers.browser(forged) is None
    now[0] += REMEMBER_SECONDS
    assert browsers.browser(cookie) is None


def test_the_login_key_is_made_once_and_private(tmp_path):
    key = login_key(tmp_path)
    assert len(key) == 32
    assert login_key(tmp_path) == key
    assert stat.S_IMODE((tmp_path / LOGIN_KEY_FILE).stat().st_mode) == 0o600


def test_the_running_app_refuses_the_right_password_after_wrong_ones_but_lets_a_known_browser_in(running_app):
    running_app.demo.close()
    demo, url, _ = serve(running_app.settings, auth=("ann", "right"))
    running_app.demo = demo
    page = httpx.get(url + "config", timeout=10)
    assert page.status_code == 401
    assert page.json()["detail"]["auth_message"] == LOGIN_MESSAGE
    with httpx.Client(timeout=10) as owner:
        assert owner.post(url + "login", data={"username": "ann", "password": "right"}).status_code == 200
        assert REMEMBER_COOKIE in owner.cookies
        for _ in range(FREE_ATTEMPTS):
            assert (
                httpx.post(url + "login", data={"username": "ann", "password": "guess"}, timeout=10).status_code == 400
            )
        assert httpx.post(url + "login", data={"username": "ann", "password": "right"}, timeout=10).status_code == 400
        running_app.demo.close()  # and after a restart, the browser is still known
        demo, url, _ = serve(running_app.settings, auth=("ann", "right"))
        running_app.demo = demo
        for _ in range(FREE_ATTEMPTS):
            httpx.post(url + "login", data={"username": "ann", "password": "guess"}, timeout=10)
        assert owner.post(url + "login", data={"username": "ann", "password": "right"}).status_code == 200
        assert owner.get(url + "config").status_code == 200
