"""Fixtures shared by the whole test suite."""

import os
import secrets
import socket
import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.sandboxing import host_http_server
from tests.scripted_ollama import ScriptedOllama

# Tests only talk to servers on loopback; a proxy configured in the environment must not get in between.
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

MOST_WORKERS = 4
"""More workers than this on a bigger machine gain little: the slowest test files set the wall time."""

# The suite runs in three workers on two cores beside browsers: a property's examples may come slowly while another
# worker holds the CPU. Time is what bench/ measures; a property test judges only what its examples show.
settings.register_profile("shared_cores", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("shared_cores")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for `-n auto` (pyproject's default): one more than the cores this process may use, at most 4. Browser
    tests wait on pages and servers much of the time, so a spare worker fills the gaps; more only add contention."""
    return min(len(os.sched_getaffinity(0)) + 1, MOST_WORKERS)


@pytest.fixture
def ollama_server() -> Iterator[ScriptedOllama]:
    """A started ScriptedOllama with the default models; stopped after the test."""
    with ScriptedOllama() as server:
        yield server


@pytest.fixture
def host_server() -> Iterator[int]:
    """The port of an HTTP server on the host's 127.0.0.1 (tests/sandboxing.py)."""
    with host_http_server() as port:
        yield port


@pytest.fixture
def abstract_listener() -> Iterator[tuple[str, threading.Event]]:
    """A real abstract Unix socket listening on the host (as D-Bus or X11 do); the event is set on a connection."""
    name = f"meowgent-test-{secrets.token_hex(6)}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(4)
    connected = threading.Event()

    def accept() -> None:
        try:
            listener.accept()
            connected.set()
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield name, connected
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
