"""Only our own address is served: DNS rebinding and cross-site requests get a 403; every page carries our CSP."""

import asyncio
import ipaddress
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.ui.app import serve
from meowgent.ui.routes.guard import Guard, addresses_for, content_security_policy, inline_scripts
from meowgent.ui.routes.localaddresses import LocalAddresses
from tests.scripted_ollama import Text, tool_call_text
from tests.ui.conftest import OWNER_HEADERS, RunningApp, free_port, owners_client, started_app

MACHINE = LocalAddresses(lambda: {ipaddress.ip_address(a) for a in ("127.0.0.1", "::1", "10.0.0.2", "fe80::1")})
"""This machine's addresses, for a server bound to 0.0.0.0 in these tests."""


@pytest.mark.parametrize(
    ("host", "share", "header", "allowed"),
    [
        ("127.0.0.1", False, "127.0.0.1:7860", True),
        ("127.0.0.1", False, "localhost:7860", True),
        ("127.0.0.1", False, "[::1]:7860", True),
        ("127.0.0.1", False, "LOCALHOST:7860", True),
        ("127.0.0.1", False, "attacker.test:7860", False),
        ("127.0.0.1", False, "127.0.0.1:7861", False),
        ("127.0.0.1", False, "127.0.0.1", False),
        ("127.0.0.1", False, "localhost.:7860", False),
        ("127.0.0.1", False, "127.0.0.1:port", False),
        ("127.0.0.1", False, "", False),
        ("127.0.0.1", False, "abc.gradio.live", False),
        ("127.0.0.1", True, "abc.gradio.live", True),
        ("127.0.0.1", True, "gradio.live", False),
        ("127.0.0.1", True, "gradio.live.attacker.test", False),
        ("192.168.1.5", False, "192.168.1.5:7860", True),
        ("192.168.1.5", False, "10.0.0.2:7860", False),
        ("0.0.0.0", False, "10.0.0.2:7860", True),
        ("0.0.0.0", False, "[fe80::1]:7860", True),
        ("0.0.0.0", False, "[fe80::1%25eth0]:7860", True),
        ("0.0.0.0", False, "localhost:7860", True),
        ("0.0.0.0", False, "10.0.0.3:7860", False),  # an IP literal, but not one of this machine's
        ("0.0.0.0", False, "8.8.8.8:7860", False),
        ("0.0.0.0", False, "0.0.0.0:7860", False),
        ("0.0.0.0", False, "10.0.0.2:7861", False),
        ("::", False, "10.0.0.2:7860", True),
        ("0.0.0.0", False, "attacker.test:7860", False),
        ("meow.lan", False, "meow.lan:7860", True),
        ("meow.lan", False, "10.0.0.2:7860", False),
    ],
)
def test_a_host_header_names_us_or_is_refused(host, share, header, allowed):
    assert addresses_for(host, 7860, share=share, machine=MACHINE).allows_host(header) is allowed


@pytest.mark.parametrize(
    ("bound", "share", "host", "origin", "allowed"),
    [
        ("127.0.0.1", False, "127.0.0.1:7860", "http://127.0.0.1:7860", True),
        ("127.0.0.1", False, "localhost:7860", "http://localhost:7860", True),
        ("127.0.0.1", False, "[::1]:7860", "http://[::1]:7860", True),
        ("127.0.0.1", False, "127.0.0.1:7860", "http://localhost:7860", False),  # another of our names
        ("127.0.0.1", False, "127.0.0.1:7860", "http://127.0.0.1:7861", False),
        ("127.0.0.1", False, "127.0.0.1:7860", "https://attacker.test", False),
        ("127.0.0.1", False, "127.0.0.1:7860", "http://attacker.test:7860", False),
        ("127.0.0.1", False, "127.0.0.1:7860", "null", False),
        ("127.0.0.1", False, "127.0.0.1:7860", "file://", False),
        ("127.0.0.1", False, "127.0.0.1:7860", "http://127.0.0.1:7860.attacker.test", False),
        ("127.0.0.1", False, "127.0.0.1:7860", "http://127.0.0.1:port", False),
        # --share: the tunnel forwards the browser's Host (our link) as plain HTTP, so only names compare
        ("127.0.0.1", True, "abc.gradio.live", "https://abc.gradio.live", True),
        ("127.0.0.1", True, "abc.gradio.live", "http://abc.gradio.live", True),
        ("127.0.0.1", True, "abc.gradio.live:443", "https://abc.gradio.live", True),
        ("127.0.0.1", True, "abc.gradio.live", "https://other.gradio.live", False),  # someone else's link
        ("127.0.0.1", True, "127.0.0.1:7860", "https://abc.gradio.live", False),
        ("127.0.0.1", True, "abc.gradio.live", "http://127.0.0.1:7860", False),
        ("127.0.0.1", True, "abc.gradio.live", "https://gradio.live", False),
        # bound to all: this machine's own addresses only
        ("0.0.0.0", False, "10.0.0.2:7860", "http://10.0.0.2:7860", True),
        ("0.0.0.0", False, "10.0.0.3:7860", "http://10.0.0.3:7860", False),
        ("0.0.0.0", False, "10.0.0.2:7860", "http://10.0.0.3:7860", False),
    ],
)
def test_an_origin_is_our_page_at_the_address_the_request_was_sent_to(bound, share, host, origin, allowed):
    addresses = addresses_for(bound, 7860, share=share, machine=MACHINE)
    assert addresses.allows_origin(origin, host=host) is allowed


NAMES = st.sampled_from(["127.0.0.1", "localhost", "::1", "10.0.0.2", "abc.gradio.live", "xyz.gradio.live", "a.test"])


@given(
    bound=st.sampled_from(["127.0.0.1", "0.0.0.0"]),
    share=st.booleans(),
    host_name=NAMES,
    host_port=st.sampled_from([None, 80, 443, 7860]),
    scheme=st.sampled_from(["http", "https"]),
    origin_name=NAMES,
    origin_port=st.sampled_from([None, 80, 443, 7860]),
)
def test_an_accepted_origin_names_the_very_host_the_request_was_sent_to(
    bound, share, host_name, host_port, scheme, origin_name, origin_port
):
    addresses = addresses_for(bound, 7860, share=share, machine=MACHINE)

    def address(name, port):
        name = f"[{name}]" if ":" in name else name
        return f"{name}:{port}" if port else name

    host = address(host_name, host_port)
    origin = f"{scheme}://{address(origin_name, origin_port)}"
    if addresses.allows_origin(origin, host=host):
        assert origin_name == host_name
        assert addresses.allows_host(host)


def test_a_public_name_for_a_proxy_is_served_on_its_own_port():
    addresses = addresses_for("127.0.0.1", 7860, public_names=["Meow.Example.org"])
    assert addresses.allows_host("meow.example.org")
    # A proxy may forward its own Host or ours: the page at its name is ours either way.
    assert addresses.allows_origin("https://meow.example.org", host="meow.example.org")
    assert addresses.allows_origin("https://meow.example.org", host="127.0.0.1:7860")
    assert not addresses.allows_host("example.org")


def test_the_policy_allows_exactly_the_inline_scripts_of_the_page():
    page = '<script>boot()</script><script type="module" src="./a.js"></script><SCRIPT data-x>more()</SCRIPT>'
    assert inline_scripts(page) == ["boot()", "more()"]
    policy = content_security_policy(inline_scripts(page))
    assert policy.count("'sha256-") == 2
    for directive in (
        "img-src 'self' data: blob:",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "connect-src 'self'",
    ):
        assert directive in policy


def port_of(url: str) -> int:
    return httpx.URL(url).port


@pytest.fixture(scope="module")
def untouched_app(tmp_path_factory) -> Iterator[RunningApp]:
    """One app for the tests that only read pages or are refused: none starts a chat or changes a setting, so none
    sees another's doing, in any order (an app start each cost more than the requests)."""
    with started_app(tmp_path_factory.mktemp("untouched"), {}) as app:
        yield app


@pytest.mark.parametrize("path", ["", "config", "gradio_api/info", "gradio_api/queue/data?session_hash=x"])
def test_a_rebound_name_gets_a_plain_403_on_every_path(untouched_app, path):
    port = port_of(untouched_app.url)
    refused = httpx.get(untouched_app.url + path, headers={"Host": f"attacker.test:{port}"}, timeout=10)
    assert refused.status_code == 403
    assert refused.text.strip() == f"This page is only served at http://127.0.0.1:{port}"
    served = httpx.get(untouched_app.url + path.split("?")[0] or untouched_app.url, headers=OWNER_HEADERS, timeout=10)
    assert served.status_code not in (401, 403)  # reached Gradio (which wants a session for the queue)


def test_a_rebinding_page_cannot_start_a_chat_or_approve_a_command(running_app):
    """The attack from issue 13: join the queue as attacker.test, run the page's events, approve run_shell."""
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "id > pwned.txt"})))
    port = port_of(running_app.url)
    rebound = {"Host": f"attacker.test:{port}", "Origin": f"http://attacker.test:{port}"}
    joined = httpx.post(
        running_app.url + "gradio_api/queue/join",
        headers=rebound,
        json={"data": ["", ""], "fn_index": 0, "session_hash": "rebound", "event_data": None, "trigger_id": None},
        timeout=10,
    )
    assert joined.status_code == 403
    assert httpx.get(running_app.url + "config", headers=rebound, timeout=10).status_code == 403
    assert not (running_app.workspace / "pwned.txt").exists()
    assert running_app.ollama.chat_requests == []


def test_a_refusal_speaks_the_browsers_language(untouched_app):
    port = port_of(untouched_app.url)
    refused = httpx.get(
        untouched_app.url, headers={"Host": f"attacker.test:{port}", "Accept-Language": "zh-TW"}, timeout=10
    )
    assert refused.status_code == 403
    assert refused.text.strip() == f"這個網頁只在 http://127.0.0.1:{port} 提供"


@pytest.fixture
def shared_app(running_app):
    """The app as `--share` runs it (here the tunnel cannot be made, so requests come as the tunnel sends them)."""
    running_app.demo.close()
    running_app.settings = replace(running_app.settings, share=True, port=free_port())
    running_app.demo, running_app.url, _ = serve(running_app.settings)
    return running_app


OUR_LINK = "abc123.gradio.live"


def test_another_share_link_cannot_act_for_the_person_but_our_own_link_works(shared_app):
    """Issue 17: a page on another *.gradio.live link posted to ours as the logged-in person."""
    shared_app.ollama.script(Text(tool_call_text("run_shell", {"command": "id > pwned.txt"})))
    ours = {"Host": OUR_LINK, "Origin": f"https://{OUR_LINK}", **OWNER_HEADERS}
    theirs = {"Host": OUR_LINK, "Origin": "https://other.gradio.live", **OWNER_HEADERS}
    join = {"data": ["", ""], "fn_index": 0, "session_hash": "cross", "event_data": None, "trigger_id": None}
    for path in ("", "config", "gradio_api/info"):
        assert httpx.get(shared_app.url + path, headers=theirs, timeout=10).status_code == 403
        assert httpx.get(shared_app.url + path, headers=ours, timeout=10).status_code == 200
    refused = httpx.post(shared_app.url + "gradio_api/queue/join", headers=theirs, json=join, timeout=10)
    assert refused.status_code == 403
    joined = httpx.post(shared_app.url + "gradio_api/queue/join", headers=ours, json=join, timeout=10)
    assert joined.status_code == 200
    assert "event_id" in joined.json()
    assert not (shared_app.workspace / "pwned.txt").exists()
    assert shared_app.ollama.chat_requests == []


def test_a_websocket_from_another_share_link_is_closed_before_the_app_sees_it():
    reached = []

    async def app(scope, receive, send):
        reached.append(scope["type"])

    guard = Guard(app, addresses_for("127.0.0.1", 7860, share=True))

    def connect(origin):
        sent = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "websocket.connect"}

        headers = [(b"host", OUR_LINK.encode()), (b"origin", origin.encode())]
        asyncio.run(guard({"type": "websocket", "path": "/ws", "headers": headers}, receive, send))
        return sent

    assert connect("https://other.gradio.live") == [{"type": "websocket.close", "code": 1008}]
    assert reached == []
    assert connect(f"https://{OUR_LINK}") == []
    assert reached == ["websocket"]


def test_a_cross_site_post_is_refused_but_our_own_page_works(running_app):
    cross_site = httpx.post(
        running_app.url + "gradio_api/queue/join",
        headers={"Origin": "https://attacker.test"},
        json={"data": [], "fn_index": 0, "session_hash": "x"},
        timeout=10,
    )
    assert cross_site.status_code == 403
    client = owners_client(running_app.url)  # no Origin: like our page's own calls
    assert client.predict("", "", api_name="/on_load")[0]


def test_every_response_carries_the_policy(untouched_app):
    page = httpx.get(untouched_app.url, headers=OWNER_HEADERS, timeout=10)
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "img-src 'self' data: blob:" in policy
    assert policy == content_security_policy(inline_scripts(page.text))  # Gradio's own boot scripts, by hash
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert (
        "content-security-policy" in httpx.get(untouched_app.url + "config", headers=OWNER_HEADERS, timeout=10).headers
    )
    assert "content-security-policy" in httpx.get(untouched_app.url + "config", timeout=10).headers  # and a refusal
