"""The page answers only its owner (issue 26): the start token, its cookie, and the gate on every route."""

import json
import subprocess
import textwrap

import httpx
import pytest
from gradio_client.exceptions import AuthenticationError
from hypothesis import given
from hypothesis import strategies as st
from playwright.sync_api import expect

from meowgent.ui.app import serve
from meowgent.ui.routes.owner import COOKIE_PREFIX, OwnerToken, presented_token
from tests.scripted_ollama import Text, reply, tool_call_text
from tests.ui.conftest import LOAD_MS, OWNER_HEADERS, OWNER_TOKEN, chat_text, owners_client
from tests.ui.test_app_api import open_page, screen
from tests.unprivileged import AS_NOBODY, can_become_nobody

JOIN = {"data": ["", "hello"], "fn_index": 0, "session_hash": "stranger", "event_data": None, "trigger_id": None}
REFUSAL = "Meowgent answers only the person who started it"


def test_each_app_names_its_cookie_by_its_port_and_keeps_a_digest_not_the_token():
    here, there = OwnerToken("tok", 7860), OwnerToken("tok", 7861)
    assert here.cookie_name == f"{COOKIE_PREFIX}7860" != there.cookie_name  # cookies ignore ports: names don't
    assert "tok" not in here.cookie_value
    assert here.signed_in(here.cookie_value)
    assert not here.signed_in(OwnerToken("other", 7860).cookie_value)
    assert not here.signed_in(None)
    assert here.url("http://127.0.0.1:7860/") == "http://127.0.0.1:7860/?token=tok"
    assert OwnerToken("a b&c", 1).url("http://h/") == "http://h/?token=a%20b%26c"


def test_a_script_shows_the_token_as_token_or_bearer():
    assert presented_token("token abc") == "abc"
    assert presented_token("Bearer abc") == "abc"
    assert presented_token("bearer  abc ") == "abc"
    for other in (None, "", "Basic abc", "token", "token ", "tokenabc", "abc"):
        assert presented_token(other) is None


@given(st.text(), st.text(min_size=1))
def test_only_the_very_token_matches(header, token):
    owner = OwnerToken(token, 7860)
    presented = presented_token(header)
    if owner.matches(presented):
        assert presented == token
        assert header.strip().lower().startswith(("token ", "bearer "))


def refused(response: httpx.Response) -> bool:
    return response.status_code == 401 and REFUSAL in response.text


def every_route(url: str, headers: dict, download: str) -> dict[str, httpx.Response]:
    """One request to each kind of route the page has, as a script without a browser sends them."""
    get = {
        path: httpx.get(url + path, headers=headers, timeout=10)
        for path in ("", "config", "gradio_api/info", "openapi.json", "gradio_api/openapi.json", download)
    }
    with httpx.stream("GET", url + "gradio_api/heartbeat/x", headers=headers, timeout=10) as heartbeat:
        if heartbeat.status_code != 200:  # a refusal is one short page; the owner's heartbeat would never end
            heartbeat.read()
        get["heartbeat"] = heartbeat
    joined = httpx.post(url + "gradio_api/queue/join", headers=headers, json=JOIN, timeout=10)
    upload = httpx.post(url + "gradio_api/upload", headers=headers, files={"files": ("a.txt", b"x")}, timeout=10)
    queue = httpx.get(url + "gradio_api/queue/data?session_hash=stranger", headers=headers, timeout=10)
    files = httpx.get(url + "gradio_api/file=/etc/hostname", headers=headers, timeout=10)
    return {**get, "queue/join": joined, "upload": upload, "queue/data": queue, "file=": files}


def test_without_the_token_every_route_is_refused_and_with_it_they_work(running_app):
    running_app.ollama.script(reply("Only for the owner."))
    links = running_app.demo.file_links
    download = links.add("a.txt", lambda: iter([b"the owner's file"]), media_type="text/plain").lstrip("/")
    strangers = every_route(running_app.url, {}, download)
    for route, response in strangers.items():
        assert refused(response), route
    assert running_app.ollama.chat_requests == []
    chinese = httpx.get(running_app.url + "config", headers={"Accept-Language": "zh-TW"}, timeout=10)
    assert "Meowgent 只回應啟動它的人" in chinese.text

    owners = every_route(running_app.url, OWNER_HEADERS, download)
    for route in ("", "config", "gradio_api/info", "heartbeat", "queue/join", download):
        assert owners[route].status_code == 200, route
    assert owners[download].text == "the owner's file"  # the stranger's try did not use up the one-time link
    for route in ("upload", "file=", "openapi.json", "gradio_api/openapi.json", "queue/data"):
        assert not refused(owners[route]), route  # past the gate: Gradio's and our own rules answer


def test_the_printed_link_signs_a_browser_in_once_and_a_wrong_token_does_not(running_app):
    port = httpx.URL(running_app.url).port
    wrong = httpx.get(running_app.url + "?token=wrong", timeout=10)
    assert refused(wrong)
    assert "set-cookie" not in wrong.headers
    with httpx.Client(timeout=10) as browser:
        opened = browser.get(running_app.url + f"?token={OWNER_TOKEN}&lang=zh-TW")
        assert opened.status_code == 303
        assert opened.headers["location"] == "/?lang=zh-TW"  # the token leaves the address bar
        cookie = opened.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE_PREFIX}{port}=")
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        assert OWNER_TOKEN not in cookie
        assert browser.get(running_app.url + "config").status_code == 200
        assert refused(browser.get(running_app.url + "?token=wrong"))  # a wrong token is refused even then
    value = cookie.split(";")[0].split("=", 1)[1]
    other_port = {f"{COOKIE_PREFIX}{port + 1}": value}
    assert refused(httpx.get(running_app.url + "config", cookies=other_port, timeout=10))


def test_a_script_with_the_header_drives_the_page(running_app):
    running_app.ollama.script(reply("Purr, script."))
    client = owners_client(running_app.url, headers={"Authorization": f"Bearer {OWNER_TOKEN}"})
    key, _, _ = open_page(client)
    chat, _ = screen(client.predict(key, "hello", api_name="/on_send"))
    assert "Purr, script." in chat_text(chat)
    with pytest.raises(AuthenticationError):
        owners_client(running_app.url, headers={"Authorization": "token wrong"})


def test_behind_a_login_openapi_and_the_heartbeat_need_it(running_app):
    running_app.demo.close()
    running_app.demo, url, _ = serve(running_app.settings, auth=("ann", "pw"))
    for path in ("openapi.json", "gradio_api/heartbeat/x", "gradio_api/info"):
        stranger = httpx.get(url + path, timeout=10)
        assert stranger.status_code == 401, path
        assert "event-stream" not in stranger.headers.get("content-type", "")
    assert httpx.get(url, timeout=10).status_code == 200  # the login form
    assert httpx.get(url + "config", timeout=10).status_code == 401  # Gradio's own answer, which the form reads
    with httpx.Client(timeout=10) as owner:
        assert owner.post(url + "login", data={"username": "ann", "password": "pw"}).status_code == 200
        assert owner.get(url + "openapi.json").status_code == 200
        with owner.stream("GET", url + "gradio_api/heartbeat/x") as heartbeat:
            assert heartbeat.status_code == 200


# What another account of this computer tries, knowing only the port: it never saw the printed link.
ANOTHER_USER = textwrap.dedent(
    """
    import json, sys, urllib.request, urllib.error
    url, header = sys.argv[1], json.loads(sys.argv[2])
    def ask(path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json", **header})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return [response.status, response.read(2000).decode("utf-8", "replace")]
        except urllib.error.HTTPError as error:
            return [error.code, error.read(2000).decode("utf-8", "replace")]
    answers = {path: ask(path) for path in ("", "config", "gradio_api/info", "?token=guess")}
    for index in range(40):  # every event: send, approve, open a chat, ...
        join = {"data": ["", "x"], "fn_index": index, "session_hash": f"s{index}", "trigger_id": None}
        answers[f"join {index}"] = ask("gradio_api/queue/join", join)
    answers["queue"] = ask("gradio_api/queue/data?session_hash=s0")
    print(json.dumps(answers))
    """
)


@can_become_nobody
def test_another_account_on_this_computer_cannot_send_approve_or_read(running_app):
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "touch approved-by-someone"})))
    owner = owners_client(running_app.url)
    key, _, _ = open_page(owner)
    _, card = screen(owner.predict(key, "the owner's secret plan", api_name="/on_send"))
    assert "touch approved-by-someone" in card  # waiting for the owner
    requests_before = len(running_app.ollama.chat_requests)

    def as_nobody(header: dict) -> dict:
        done = subprocess.run(  # the system's Python: the script needs nothing else
            [*AS_NOBODY, "/usr/bin/python3", "-c", ANOTHER_USER, running_app.url, json.dumps(header)],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin", "NO_PROXY": "127.0.0.1"},
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    answers = as_nobody({})
    for asked, (status, body) in answers.items():
        assert status == 401, asked
        assert "secret plan" not in body
    assert not (running_app.workspace / "approved-by-someone").exists()
    assert len(running_app.ollama.chat_requests) == requests_before
    # The same account with the printed token gets in: what kept it out was the token, not the account.
    assert as_nobody(OWNER_HEADERS)["config"][0] == 200


@pytest.mark.parametrize("app_options", [{"token": None}])
def test_with_the_check_off_the_page_answers_anyone(running_app):
    assert httpx.get(running_app.url + "config", timeout=10).status_code == 200


def test_a_restart_with_the_same_token_keeps_the_browser_signed_in(running_app):
    with httpx.Client(timeout=10) as browser:
        browser.get(running_app.url + f"?token={OWNER_TOKEN}")
        running_app.restart()
        assert browser.get(running_app.url + "config").status_code == 200


def test_a_browser_opens_the_printed_link_and_uses_the_page_with_its_cookie_alone(running_app, chromium):
    running_app.ollama.script(reply("Purr, signed in."))
    context = chromium.unsigned.new_context()  # a browser with no header: only what the link leaves
    context.set_default_navigation_timeout(LOAD_MS)
    try:
        page = context.new_page()
        page.goto(running_app.url)
        assert REFUSAL in page.inner_text("body")
        page.goto(running_app.url + "?token=wrong")
        assert REFUSAL in page.inner_text("body")
        assert context.cookies() == []
        page.goto(running_app.url + f"?token={OWNER_TOKEN}")
        assert page.url == running_app.url
        expect(page.locator("#status")).to_contain_text("Connected", timeout=LOAD_MS)
        page.locator("#msg textarea").fill("hello")
        page.locator("#msg textarea").press("Enter")
        expect(page.locator("#chat")).to_contain_text("Purr, signed in.")
        (cookie,) = [cookie for cookie in context.cookies() if cookie["name"].startswith(COOKIE_PREFIX)]
        assert cookie["httpOnly"]
        assert cookie["sameSite"] == "Strict"
        assert OWNER_TOKEN not in cookie["value"]
    finally:
        context.close()
