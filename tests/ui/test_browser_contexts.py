"""The browser tests' own contexts (tests/ui/conftest.py): lent again with nothing of the last test but a warm cache.

A context goes back to `OwnersBrowser` when its test ends and the next test asking for the same options gets it; the
apps of one test process take the same port in turn (`AppPort`), so that each new app's page is a cache hit.
"""

from urllib.parse import urlsplit

import pytest

from meowgent.ui.routes.gradiofix import mended_chunks
from tests.ui.conftest import CHROMIUM, SCREENS, open_app, started_app

if not CHROMIUM.exists():
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

pytestmark = pytest.mark.browser


def test_apps_started_in_turn_take_the_same_port_and_apps_at_once_do_not(tmp_path):
    first, beside, after = (tmp_path / name for name in ("first", "beside", "after"))
    for folder in (first, beside, after):
        folder.mkdir()
    with started_app(first, {}) as first_app, started_app(beside, {}) as app_beside:
        assert app_beside.url != first_app.url
    with started_app(after, {}) as app_after:
        assert app_after.url == first_app.url


def test_a_context_lent_again_keeps_nothing_of_the_last_test_but_its_cache(running_app, chromium):
    context = chromium.new_context(**SCREENS["laptop"])
    page = context.new_page()
    open_app(page, running_app.url)
    page.evaluate("() => { localStorage.setItem('left', 'by the last test'); sessionStorage.setItem('left', 'too'); }")
    context.grant_permissions(["clipboard-read"])
    assert context.cookies()  # the owner's, as the printed link leaves it
    chromium.take_back(context)
    running_app.restart()  # the next test's app, on the same port

    again = chromium.new_context(**SCREENS["laptop"])
    assert again is context
    assert [page.url for page in again.pages] == ["about:blank"]  # its cleaner's own (see take_back)
    assert again.cookies() == []
    page = again.new_page()
    network = again.new_cdp_session(page)
    network.send("Network.enable")
    scripts = []
    network.on("Network.responseReceived", lambda event: scripts.append(event["response"]))
    open_app(page, running_app.url)
    assert page.evaluate("() => [localStorage.getItem('left'), sessionStorage.getItem('left')]") == [None, None]
    assert page.evaluate("async () => (await navigator.permissions.query({name: 'clipboard-read'})).state") != "granted"
    # Gradio's scripts come from the cache (Chromium's "disk" cache, in memory for a context like this), or are
    # checked with the app and found unchanged (304); all but the chunk the app mends, which it serves itself.
    mended = mended_chunks()
    javascript = [script for script in scripts if script["url"].endswith(".js")]
    gradios = [script for script in javascript if urlsplit(script["url"]).path not in mended]
    assert gradios
    assert all(script["fromDiskCache"] or script["status"] == 304 for script in gradios), gradios


def test_a_context_is_lent_only_for_the_same_options(chromium):
    laptop = chromium.new_context(**SCREENS["laptop"])
    chromium.take_back(laptop)
    assert chromium.new_context(**SCREENS["phone"]) is not laptop
    assert chromium.new_context(**SCREENS["laptop"]) is laptop
