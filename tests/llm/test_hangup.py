"""meowgent.llm.hangup on real sockets: a hang-up reaches the connection it knows, and only while the reader has it.

What the server sees of it (a disconnect during a silence) is in test_client.py and test_openai_client.py.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from meowgent.llm.hangup import ReplyConnection


class NetworkStream:
    """What httpcore hands over for a connection: its socket through `get_extra_info`."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection

    def get_extra_info(self, info: str) -> object:
        return self.connection if info == "socket" else None


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    theirs.settimeout(2)
    yield ours, theirs
    ours.close()
    theirs.close()


def response_on(connection: socket.socket) -> httpx.Response:
    return httpx.Response(200, extensions={"network_stream": NetworkStream(connection)})


def hung_up(theirs: socket.socket) -> bool:
    """Whether the other end sees the connection closed (rather than silence)."""
    try:
        return theirs.recv(1) == b""
    except TimeoutError:
        return False


def test_a_hang_up_while_the_response_is_read_closes_its_connection(pair):
    ours, theirs = pair
    connection = ReplyConnection()
    theirs.settimeout(0.2)
    with connection.held(response_on(ours)):
        assert not hung_up(theirs)
        connection.hang_up()
        theirs.settimeout(2)
        assert hung_up(theirs)


def test_a_hang_up_before_the_connection_is_made_reaches_it_when_it_is(pair):
    ours, theirs = pair
    connection = ReplyConnection()
    connection.hang_up()
    connection.trace("connection.connect_tcp.started", {})
    connection.trace("connection.connect_tcp.complete", {"return_value": NetworkStream(ours)})
    assert hung_up(theirs)


def test_a_late_hang_up_leaves_a_connection_the_reader_gave_back(pair):
    ours, theirs = pair
    connection = ReplyConnection()
    connection.trace("connection.connect_tcp.complete", {"return_value": NetworkStream(ours)})
    with connection.held(response_on(ours)):
        pass
    connection.hang_up()  # the connection may be another request's by now
    ours.sendall(b"x")
    assert theirs.recv(1) == b"x"


def test_a_response_without_a_socket_has_nothing_to_hang_up():
    connection = ReplyConnection()
    with connection.held(httpx.Response(200)):
        connection.hang_up()  # no error: a mocked transport, or HTTP/2 on a stream of its own
