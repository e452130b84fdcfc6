"""An MCP server that asks for the sandbox runs in it: the fixture server, started by McpManager, tried for real.

With hosts, a local HTTP server plays a public host: the resolver given to the server's proxy names it
`example.test`, as DNS would (the command proxy's tests do the same).
"""

import dataclasses
import logging
import secrets
import tempfile
import threading
import time
from pathlib import Path

import pytest

from meowgent.config import Settings
from meowgent.mcp.client import McpCallError
from meowgent.mcp.sandboxed import sandboxed
from meowgent.tools import netbridge
from meowgent.tools.spec import Visited
from tests.mcp.conftest import example_test, fixture_config
from tests.sandboxing import GREETING, failing_bwrap, needs_sandbox

ROOT = Path(__file__).resolve().parents[2]


def touch(manager, path: Path) -> str:
    """What the server's `touch` answered, with "error: " in front of an error result."""
    result = manager.call("fx", "touch", {"path": str(path)}, cancel=threading.Event())
    return ("error: " if result.is_error else "") + result.content[0].text


@needs_sandbox
def test_a_sandboxed_server_writes_only_in_the_workspace(manager_of, tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    settings = Settings(workspace=workspace, data_dir=tmp_path / "data")
    server = dataclasses.replace(fixture_config(), sandbox=True)
    manager = manager_of(server, prepare=sandboxed(settings))
    assert manager.state("fx").status == "running", manager.state("fx").detail
    assert touch(manager, workspace / "made") == f"wrote {workspace / 'made'}"
    assert (workspace / "made").read_text() == "ran"
    assert touch(manager, ROOT / "escaped").startswith("error: ")  # the SDK hides why: read-only
    in_tmp = Path(tempfile.gettempdir()) / f"meowgent-escape-{secrets.token_hex(4)}"
    touch(manager, in_tmp)  # the sandbox's own /tmp
    assert not in_tmp.exists()
    assert not (ROOT / "escaped").exists()


def test_a_server_that_asks_for_the_sandbox_does_not_start_without_one(manager_of, tmp_path: Path):
    settings = Settings(workspace=tmp_path, data_dir=tmp_path / "data", bwrap=failing_bwrap(tmp_path))
    manager = manager_of(dataclasses.replace(fixture_config(), sandbox=True), prepare=sandboxed(settings))
    state = manager.state("fx")
    assert state.status == "stopped"
    assert state.detail.startswith("it asks for a sandbox and this computer has none, so it was not started")


def test_a_server_that_does_not_ask_starts_as_before_without_a_sandbox(manager_of, tmp_path: Path):
    settings = Settings(workspace=tmp_path, data_dir=tmp_path / "data", bwrap=failing_bwrap(tmp_path))
    manager = manager_of(fixture_config(), prepare=sandboxed(settings))
    assert manager.state("fx").status == "running"


def filters_marked(mark: str) -> list[str]:
    """The `Seccomp:` line of every process whose environment has `mark`, read from the host's /proc."""
    found = []
    for folder in Path("/proc").glob("[0-9]*"):
        try:
            if f"FIXTURE_MARK={mark}".encode() in (folder / "environ").read_bytes().split(b"\0"):
                found += [line for line in (folder / "status").read_text().splitlines() if line.startswith("Seccomp:")]
        except OSError:  # ended while we looked, or another user's
            continue
    return found


@needs_sandbox
def test_a_sandboxed_server_runs_under_the_seccomp_filter(manager_of, tmp_path: Path):
    """The SDK can't pass bwrap the filter's descriptor: the server starts through meowgent/tools/seccomp_exec.py."""
    settings = Settings(workspace=tmp_path, data_dir=tmp_path / "data")
    mark = secrets.token_hex(8)
    server = dataclasses.replace(fixture_config(), sandbox=True, env={"FIXTURE_MARK": mark})
    manager = manager_of(server, prepare=sandboxed(settings))
    assert manager.state("fx").status == "running", manager.state("fx").detail
    assert "Seccomp:\t2" in filters_marked(mark)  # bwrap itself, which has the mark too, is not filtered


# ---- with network: its own namespace, its own proxy ----


def call(manager, tool: str, **arguments) -> tuple[str, list[Visited]]:
    """What the server's tool answered ("error: " in front of an error result), and where the call went."""
    went: list[Visited] = []
    result = manager.call("fx", tool, arguments, cancel=threading.Event(), on_visited=went.append)
    return ("error: " if result.is_error else "") + result.content[0].text, went


@pytest.fixture
def networked(manager_of, tmp_path: Path):
    """Start the fixture server in the sandbox, allowed only `example.test`, with a mark in its environment."""
    settings = Settings(workspace=tmp_path, data_dir=tmp_path / "data", allow_private_fetch=True)
    mark = secrets.token_hex(8)

    def start(hosts: tuple[str, ...] = ("example.test",)):
        server = dataclasses.replace(fixture_config(), sandbox=True, hosts=hosts, env={"FIXTURE_MARK": mark})
        manager = manager_of(server, prepare=sandboxed(settings, resolve=example_test))
        assert manager.state("fx").status == "running", manager.state("fx").detail
        return manager, mark

    return start


@needs_sandbox
def test_a_server_reaches_a_host_its_configuration_names_and_is_refused_another(networked, host_server, caplog):
    manager, _ = networked()
    with caplog.at_level(logging.WARNING, logger="meowgent.mcp.sandboxed"):
        reached, went = call(manager, "fetch", url=f"http://example.test:{host_server}/")
        assert reached == GREETING
        assert went == [Visited(reached=("example.test",))]
        refused, went = call(manager, "fetch", url=f"http://other.test:{host_server}/")
        assert refused.startswith("error: ")
        assert "403" in refused
        assert "refused other.test: it is not among the hosts the MCP server fx may reach (example.test)" in refused
        assert 'add it to the "hosts" of fx in the MCP configuration' in refused
        assert went == [Visited(refused=("other.test",))]
        call(manager, "fetch", url=f"http://example.test:{host_server}/")  # a host already seen is logged once
    logged = [record.getMessage() for record in caplog.records]
    assert logged == [
        "MCP server fx reached example.test through its proxy",
        "MCP server fx was refused other.test by its proxy (not among its hosts, or not public)",
    ]


@needs_sandbox
def test_the_hosts_own_loopback_is_out_of_reach_but_through_the_proxy(networked, host_server):
    manager, _ = networked()
    direct, went = call(manager, "fetch", url=f"http://127.0.0.1:{host_server}/")  # no_proxy: straight to it
    assert direct.startswith("error: ")
    assert "Connection refused" in direct
    assert went == [Visited()]


@needs_sandbox
def test_a_server_with_any_host_still_cannot_reach_an_abstract_socket_of_the_host(
    networked, manager_of, abstract_listener
):
    name, connected = abstract_listener
    manager, _ = networked(hosts=("*",))
    assert call(manager, "connect_abstract", name=name)[0] == "not connected: ConnectionRefusedError"
    assert not connected.is_set()
    # The same server outside the sandbox gets through: the test can fail.
    outside = manager_of(dataclasses.replace(fixture_config("out")))
    assert outside.call("out", "connect_abstract", {"name": name}, cancel=threading.Event()).content[0].text == (
        "connected"
    )
    assert connected.wait(5)


def marked_processes(mark: str) -> dict[int, list[str]]:
    """The command line of every process whose environment has `mark`, read from the host's /proc."""
    found = {}
    for folder in Path("/proc").glob("[0-9]*"):
        try:
            if f"FIXTURE_MARK={mark}".encode() in (folder / "environ").read_bytes().split(b"\0"):
                found[int(folder.name)] = (folder / "cmdline").read_bytes().decode().split("\0")
        except OSError:  # ended while we looked, or another user's
            continue
    return found


def processes_left(mark: str, *, within: float = 30.0) -> dict[int, list[str]]:
    """The processes with `mark` still there once they had `within` seconds to end: the bridge dies when the proxy's
    socket closes, which a loaded machine may take a moment to schedule (a wait, not an assert)."""
    deadline = time.monotonic() + within
    while (found := marked_processes(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def proxy_socket(mark: str) -> Path:
    """The host's end of the server's proxy, as bwrap binds it into the sandbox."""
    for argv in marked_processes(mark).values():
        if netbridge.SOCKET in argv:
            return Path(argv[argv.index(netbridge.SOCKET) - 1])
    raise AssertionError("no bwrap of the server binds a proxy socket")


@needs_sandbox
def test_the_proxy_lives_as_long_as_the_server(networked, host_server):
    manager, mark = networked()
    first = proxy_socket(mark)
    assert first.exists()
    assert call(manager, "fetch", url=f"http://example.test:{host_server}/")[0] == GREETING
    with pytest.raises(McpCallError):  # the server's process ends; restarted, it gets a proxy of its own again
        call(manager, "crash")
    manager.restart("fx")
    assert manager.wait_settled(60)
    assert manager.state("fx").status == "running", manager.state("fx").detail
    second = proxy_socket(mark)
    assert second != first
    assert second.exists()
    assert not first.exists()
    assert call(manager, "fetch", url=f"http://example.test:{host_server}/")[0] == GREETING
    manager.close()
    assert not second.exists()
    assert processes_left(mark) == {}  # the server, bwrap and the bridge all ended with it
