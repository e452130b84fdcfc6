"""Only our own address is served: DNS rebinding and cross-site requests get a 403; every page carries our CSP."""

import httpx
import pytest
from gradio_client import Client

from meowgent.ui.guard import addresses_for, content_security_policy, inline_scripts
from tests.scripted_ollama import Text, tool_call_text


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
        ("0.0.0.0", False, "attacker.test:7860", False),
        ("meow.lan", False, "meow.lan:7860", True),
    ],
)
def test_a_host_header_names_us_or_is_refused(host, share, header, allowed):
    assert addresses_for(host, 7860, share=share).allows_host(header) is allowed


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://127.0.0.1:7860", True),
        ("http://localhost:7860", True),
        ("https://attacker.test", False),
        ("http://attacker.test:7860", False),
        ("null", False),
        ("file://", False),
        ("http://127.0.0.1:7860.attacker.test", False),
    ],
)
def test_an_origin_is_one_of_our_pages_or_is_refused(origin, allowed):
    assert addresses_for("127.0.0.1", 7860).allows_origin(origin) is allowed


def test_a_public_name_for_a_proxy_is_served_on_its_own_port():
    addresses = addresses_for("127.0.0.1", 7860, public_names=["Meow.Example.org"])
    assert addresses.allows_host("meow.example.org")
    assert addresses.allows_origin("https://meow.example.org")
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


@pytest.mark.parametrize("path", ["", "config", "gradio_api/info", "gradio_api/queue/data?session_hash=x"])
def test_a_rebound_name_gets_a_plain_403_on_every_path(running_app, path):
    port = port_of(running_app.url)
    refused = httpx.get(running_app.url + path, headers={"Host": f"attacker.test:{port}"}, timeout=10)
    assert refused.status_code == 403
    assert refused.text.strip() == f"This page is only served at http://127.0.0.1:{port}"
    assert httpx.get(running_app.url + path.split("?")[0] or running_app.url, timeout=10).status_code != 403


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


def test_a_cross_site_post_is_refused_but_our_own_page_works(running_app):
    cross_site = httpx.post(
        running_app.url + "gradio_api/queue/join",
        headers={"Origin": "https://attacker.test"},
        json={"data": [], "fn_index": 0, "session_hash": "x"},
        timeout=10,
    )
    assert cross_site.status_code == 403
    client = Client(running_app.url, verbose=False)  # sends no Origin: like our own page's same-origin calls
    assert client.predict("", "", api_name="/on_load")[0]


def test_every_response_carries_the_policy(running_app):
    page = httpx.get(running_app.url, timeout=10)
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "img-src 'self' data: blob:" in policy
    assert policy == content_security_policy(inline_scripts(page.text))  # Gradio's own boot scripts, by hash
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "content-security-policy" in httpx.get(running_app.url + "config", timeout=10).headers
