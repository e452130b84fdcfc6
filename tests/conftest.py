"""Fixtures shared by the whole test suite."""

import os
import secrets
import socket
import threading
from collections import Counter
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


SECONDS_BY_MARK = {"real_engine": 60.0, "browser": 15.0}
"""About how long one test of each kind takes on the shared 2 cores: a real model's chat minutes, a page load and
its app seconds."""
SECONDS_BY_FIXTURE = {"running_app": 4.0}
"""A test that starts the app in this process takes seconds; most others a fraction of one."""
SECONDS_OTHERWISE = 0.05


def expected_seconds(item: pytest.Item) -> float:
    """A rough guess of how long a test takes, from its marks and fixtures: only for ordering the files."""
    marked = [seconds for mark, seconds in SECONDS_BY_MARK.items() if item.get_closest_marker(mark)]
    fixtures = getattr(item, "fixturenames", ())
    started = [seconds for fixture, seconds in SECONDS_BY_FIXTURE.items() if fixture in fixtures]
    return max(marked + started, default=SECONDS_OTHERWISE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files in the order of their expected length, longest first (tests keep their order within a file).

    `--dist loadfile` hands files out in this order as workers free up, so the long files start early and the short
    ones fill the gaps at the end. xdist's own order (most tests first, dropped with `--no-loadscope-reorder`) put
    the files of a few long tests, a real model's or pages', last, and one of them set the wall time alone."""
    expected: Counter[str] = Counter()
    for item in items:
        expected[item.nodeid.split("::")[0]] += expected_seconds(item)
    items.sort(key=lambda item: -expected[item.nodeid.split("::")[0]])


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
