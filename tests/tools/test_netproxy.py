"""The host's proxy of a command with network, spoken to over its real Unix socket as the bridge would.

A local HTTP server (tests.sandboxing's greeter) plays the internet; the injected resolver names it
`example.test`, as DNS would name a public host. Nothing of the proxy is faked.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from meowgent.tools.netproxy import MAX_CONNECTIONS, HostProxy, Visited, Visits, visited_line
from meowgent.tools.proxyrequest import ANY_HOST, MAX_HEAD, MAX_LINE
from tests.sandboxing import GREETING, host_http_server

PUBLIC = "93.184.216.34"
"""A public address for names that must pass the address check; nothing here connects to it."""


def named(**names: str):
    """A resolver that knows only these names; others do not resolve."""

    def resolve(host: str, port: int) -> list[str]:
        if host not in names:
            raise OSError("Name or service not known")
        return [names[host]]

    return resolve


@pytest.fixture
def greeter() -> Iterator[int]:
    with host_http_server() as port:
        yield port


def connected(proxy: HostProxy) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(10)
    connection.connect(str(proxy.socket_path))
    return connection


def ask(proxy: HostProxy, head: bytes, *, then: bytes = b"") -> bytes:
    """Send `head` (and `then`) through the proxy's socket and read everything it answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(10)
        connection.connect(str(proxy.socket_path))
        connection.sendall(head + then)
        return read_all(connection)


def read_all(connection: socket.socket) -> bytes:
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    return answer


def test_an_absolute_form_get_reaches_an_allowed_host_in_origin_form(greeter):
    resolve = named(**{"example.test": "127.0.0.1"})
    with HostProxy(("example.test",), allow_private=True, resolve=resolve) as proxy:
        head = (
            f"GET http://example.test:{greeter}/ HTTP/1.1\r\nHost: example.test\r\nProxy-Connection: keep-alive\r\n\r\n"
        )
        answer = ask(proxy, head.encode())
    assert answer.startswith(b"HTTP/1.0 200")
    assert answer.endswith(GREETING.encode())
    assert proxy.visits.summary() == Visited(reached=("example.test",))


def test_connect_opens_a_tunnel_to_an_allowed_host(greeter):
    resolve = named(**{"api.example.test": "127.0.0.1"})
    with HostProxy(("*.example.test",), allow_private=True, resolve=resolve) as proxy, connected(proxy) as connection:
        connection.sendall(f"CONNECT api.example.test:{greeter} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert connection.recv(100) == b"HTTP/1.1 200 Connection established\r\n\r\n"
        connection.sendall(b"GET / HTTP/1.0\r\n\r\n")  # what TLS would carry, here in the clear
        assert read_all(connection).endswith(GREETING.encode())
    assert proxy.visits.summary().reached == ("api.example.test",)


def test_a_host_not_granted_is_refused_with_a_403_that_names_it(greeter):
    resolve = named(**{"example.test": "127.0.0.1", "x.com": "127.0.0.1"})
    with HostProxy(("example.test",), allow_private=True, resolve=resolve) as proxy:
        answer = ask(proxy, f"CONNECT x.com:{greeter} HTTP/1.1\r\n\r\n".encode())
        ask(proxy, f"GET http://example.test:{greeter}/ HTTP/1.1\r\n\r\n".encode())
        ask(proxy, f"GET http://X.COM.:{greeter}/ HTTP/1.1\r\n\r\n".encode())  # the same host, written otherwise
    assert answer.startswith(b"HTTP/1.1 403 Forbidden")
    assert b"refused x.com: it is not among the hosts this command may reach (example.test)" in answer
    assert GREETING.encode() not in answer
    assert proxy.visits.summary() == Visited(reached=("example.test",), refused=("x.com",))


def test_a_watch_records_what_is_asked_for_while_it_lasts_and_each_new_host_is_told_once(greeter):
    """An MCP server's proxy outlives each call: a call's record is what was asked for while it ran."""
    told: list[tuple[str, bool]] = []
    visits = Visits(on_new=lambda host, reached: told.append((host, reached)))
    resolve = named(**{"example.test": "127.0.0.1", "x.com": "127.0.0.1"})
    fetch_example = f"GET http://example.test:{greeter}/ HTTP/1.1\r\n\r\n".encode()
    with HostProxy(("example.test",), allow_private=True, resolve=resolve, visits=visits, asker="fx") as proxy:
        ask(proxy, fetch_example)
        with visits.watching() as during:
            ask(proxy, fetch_example)
            refused = ask(proxy, f"CONNECT x.com:{greeter} HTTP/1.1\r\n\r\n".encode())
        ask(proxy, f"CONNECT other.test:{greeter} HTTP/1.1\r\n\r\n".encode())
    assert during.summary() == Visited(reached=("example.test",), refused=("x.com",))
    assert visits.summary() == Visited(reached=("example.test",), refused=("x.com", "other.test"))
    assert told == [("example.test", True), ("x.com", False), ("other.test", False)]
    assert b"refused x.com: it is not among the hosts fx may reach (example.test)" in refused


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.1", "::ffff:127.0.0.1", "169.254.169.254"])
def test_a_granted_name_that_resolves_to_a_private_address_is_refused(greeter, address):
    """`any` host, and still not the person's own Ollama, Meowgent or the cloud's metadata service."""
    with HostProxy((ANY_HOST,), allow_private=False, resolve=named(**{"example.test": address})) as proxy:
        answer = ask(proxy, f"GET http://example.test:{greeter}/ HTTP/1.1\r\n\r\n".encode())
        literal = ask(proxy, f"CONNECT 127.0.0.1:{greeter} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403")
    assert f"resolves to {address}".encode() in answer
    assert b"--allow-private-fetch" in answer
    assert literal.startswith(b"HTTP/1.1 403")
    assert GREETING.encode() not in answer + literal
    assert proxy.visits.summary() == Visited(refused=("example.test", "127.0.0.1"))


def test_a_name_that_does_not_resolve_is_a_502_not_a_refusal():
    with HostProxy((ANY_HOST,), allow_private=False, resolve=named()) as proxy:
        answer = ask(proxy, b"CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 502")
    assert b"could not find the address of nowhere.test:443" in answer
    assert proxy.visits.summary() == Visited()


def test_a_request_line_longer_than_the_cap_is_refused_without_waiting_for_its_end():
    with HostProxy((ANY_HOST,), allow_private=True, resolve=named()) as proxy, connected(proxy) as connection:
        connection.sendall(b"GET http://example.test/" + b"a" * (MAX_LINE + 10))  # no end of line, ever
        answer = read_all(connection)
    assert answer.startswith(b"HTTP/1.1 414")


def test_a_head_longer_than_the_cap_is_refused():
    header = b"X-Filler: " + b"b" * 1000 + b"\r\n"
    head = b"GET http://example.test/ HTTP/1.1\r\n" + header * (MAX_HEAD // len(header) + 2)
    with HostProxy((ANY_HOST,), allow_private=True, resolve=named()) as proxy:
        answer = ask(proxy, head)
    assert answer.startswith(b"HTTP/1.1 431")


def test_a_slow_client_is_dropped_at_the_head_time_limit():
    slow = HostProxy((ANY_HOST,), allow_private=True, resolve=named(), head_seconds=0.5)
    with slow as proxy, connected(proxy) as connection:
        started = time.monotonic()
        connection.sendall(b"GET http://exa")  # and nothing more
        assert read_all(connection) == b""
        assert 0.4 < time.monotonic() - started < 5


def test_connections_past_the_cap_get_a_503_and_the_slots_come_back():
    with HostProxy((ANY_HOST,), allow_private=True, resolve=named()) as proxy:
        held = []
        for _ in range(MAX_CONNECTIONS):
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(str(proxy.socket_path))
            held.append(connection)
        time.sleep(0.2)  # every held one is being served (waiting for its head)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(10)
            connection.connect(str(proxy.socket_path))
            assert read_all(connection).startswith(b"HTTP/1.1 503")  # at once, before it asks anything
        for connection in held:
            connection.close()
        time.sleep(0.2)
        assert ask(proxy, b"CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 502")


def test_closing_the_proxy_ends_an_open_tunnel_and_removes_its_socket(greeter):
    with HostProxy((ANY_HOST,), allow_private=True, resolve=named(**{"example.test": "127.0.0.1"})) as proxy:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(10)
        connection.connect(str(proxy.socket_path))
        connection.sendall(f"CONNECT example.test:{greeter} HTTP/1.1\r\n\r\n".encode())
        assert connection.recv(100).startswith(b"HTTP/1.1 200")
    ended = threading.Event()
    threading.Thread(target=lambda: (read_all(connection), ended.set()), daemon=True).start()
    assert ended.wait(5)
    connection.close()
    assert not proxy.socket_path.exists()


def test_the_result_line_says_where_the_command_went():
    went = Visited(reached=("pypi.org", "files.pythonhosted.org"), refused=("x.com",))
    assert visited_line(went) == "network: reached pypi.org, files.pythonhosted.org; refused x.com"
    assert visited_line(Visited()) == "network: reached no host"
