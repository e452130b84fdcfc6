"""McpManager against real servers: the SDK fixture over stdio and HTTP, and servers that misbehave."""

import sys
import threading

import pytest

from meowgent.mcp.client import McpCallError, McpManager
from meowgent.mcp.config import ServerConfig
from tests.mcp.conftest import SETTLE_SECONDS, fixture_config
from tests.mcp_fixture_server import http_server


def python(code: str, name: str = "odd") -> ServerConfig:
    return ServerConfig(name, command=sys.executable, args=("-c", code))


def test_a_stdio_server_starts_lists_its_tools_and_answers(manager_of):
    manager = manager_of(fixture_config())
    state = manager.state("fx")
    assert state.status == "running"
    assert {"echo", "add", "touch", "picture", "fail", "crash", "slow"} <= {tool.name for tool in state.tools}
    result = manager.call("fx", "add", {"a": 2, "b": 3}, cancel=threading.Event())
    assert result.structured_content == {"result": 5}
    assert not result.is_error


def test_a_streamable_http_server_works_the_same():
    with http_server() as url:
        manager = McpManager([ServerConfig("web", url=url)], timeout=30)
        manager.start()
        try:
            assert manager.wait_settled(SETTLE_SECONDS)
            assert manager.state("web").status == "running"
            result = manager.call("web", "echo", {"text": "over http"}, cancel=threading.Event())
            assert result.content[0].text == "over http"
        finally:
            manager.close()
        assert manager.state("web").status == "stopped"


def test_stop_cancels_a_running_call_and_the_server_keeps_working(manager_of):
    manager = manager_of(fixture_config())
    cancel = threading.Event()
    started = threading.Timer(0.3, cancel.set)
    started.start()
    with pytest.raises(McpCallError, match="pressed Stop"):
        manager.call("fx", "slow", {"seconds": 120}, cancel=cancel)
    assert manager.state("fx").status == "running"
    assert manager.call("fx", "echo", {"text": "still here"}, cancel=threading.Event()).content[0].text == "still here"


def test_a_crash_stops_that_server_only_and_it_can_be_restarted(manager_of):
    manager = manager_of(fixture_config(), fixture_config("other"))
    with pytest.raises(McpCallError, match="fx stopped during the call"):
        manager.call("fx", "crash", {}, cancel=threading.Event())
    manager.wait_settled(SETTLE_SECONDS)
    state = manager.state("fx")
    assert state.status == "stopped"
    assert "process ended during a call to crash" in state.detail
    with pytest.raises(McpCallError, match=r"fx is stopped .*restart it from the sidebar"):
        manager.call("fx", "echo", {"text": "x"}, cancel=threading.Event())
    assert manager.call("other", "add", {"a": 1, "b": 1}, cancel=threading.Event()).structured_content == {"result": 2}
    manager.restart("fx")
    assert manager.wait_settled(SETTLE_SECONDS)
    assert manager.call("fx", "add", {"a": 1, "b": 2}, cancel=threading.Event()).structured_content == {"result": 3}


def test_an_error_result_is_a_result(manager_of):
    manager = manager_of(fixture_config())
    result = manager.call("fx", "fail", {"why": "no such row"}, cancel=threading.Event())
    assert result.is_error
    assert result.content[0].text.endswith("no such row")


@pytest.mark.parametrize(
    ("server", "says"),
    [
        (
            ServerConfig("odd", command="no-such-program-for-meowgent"),
            "the program 'no-such-program-for-meowgent' was not found",
        ),
        (python("import sys; print('hello'); sys.stdout.flush(); sys.stdin.read()"), "not MCP JSON"),
        (
            python("import sys; sys.stderr.write('bad token\\n'); sys.exit(2)"),
            "the server process ended; it said: bad token",
        ),
        (ServerConfig("odd", url="http://127.0.0.1:9/mcp"), "cannot connect to http://127.0.0.1:9/mcp"),
        (
            ServerConfig("odd", url="http://ann:s3cr3t-pw@127.0.0.1:9/mcp?key=k3y-value"),
            "cannot connect to http://••••@127.0.0.1:9/mcp?key=••••",
        ),
        (  # a server that echoes its key: the sidebar and the model get the sentence without it
            ServerConfig(
                "odd",
                command=sys.executable,
                args=("-c", "import os, sys; sys.stderr.write('refused ' + os.environ['API_KEY']); sys.exit(2)"),
                env={"API_KEY": "s3cr3t-value"},
            ),
            "the server process ended; it said: refused ••••",
        ),
    ],
)
def test_a_server_that_fails_to_start_is_stopped_with_a_plain_reason(manager_of, server, says):
    manager = manager_of(server, fixture_config())
    state = manager.state("odd")
    assert state.status == "stopped"
    assert says in state.detail
    assert manager.state("fx").status == "running"


def test_a_server_that_hangs_is_stopped_after_the_timeout(manager_of):
    manager = manager_of(python("import time; time.sleep(60)"), timeout=0.5)
    assert manager.state("odd").status == "stopped"
    assert manager.state("odd").detail == "it did not answer within 0.5 seconds"


def test_a_call_that_hangs_stops_its_server_with_a_clear_error(manager_of):
    # The timeout is also the start's: on a busy machine, Python and the SDK take seconds to import.
    manager = manager_of(fixture_config(), timeout=15)
    assert manager.state("fx").status == "running"
    with pytest.raises(McpCallError, match="fx did not answer within 15 seconds"):
        manager.call("fx", "slow", {"seconds": 60}, cancel=threading.Event())
    state = manager.state("fx")
    assert state.status == "stopped"
    assert state.detail == "a call to slow did not finish within 15 seconds"


def test_whoever_waits_for_a_running_server_finds_its_listener_done(manager_of):
    # The app offers a server's tools in this listener; a chat that starts as soon as the server is up must see them.
    heard: list[str] = []

    def slow_listener(state):
        if state.status == "running":
            threading.Event().wait(0.3)
        heard.append(state.status)

    manager = manager_of(fixture_config(), on_change=slow_listener)
    assert manager.state("fx").status == "running"
    assert heard == ["starting", "running"]
