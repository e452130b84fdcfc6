"""An MCP server that asks for the sandbox runs in it: the fixture server, started by McpManager, tried for real."""

import dataclasses
import secrets
import tempfile
import threading
from pathlib import Path

from meowgent.config import Settings
from meowgent.mcp.client import sandboxed
from meowgent.mcp.config import parse_config
from tests.mcp.conftest import fixture_config
from tests.sandboxing import failing_bwrap, needs_sandbox

ROOT = Path(__file__).resolve().parents[2]


def touch(manager, path: Path) -> str:
    """What the server's `touch` answered, with "error: " in front of an error result."""
    result = manager.call("fx", "touch", {"path": str(path)}, cancel=threading.Event())
    return ("error: " if result.is_error else "") + result.content[0].text


def test_the_configuration_asks_for_the_sandbox_with_or_without_network():
    text = (
        '{"mcpServers": {"a": {"command": "x", "sandbox": true}, "b": {"command": "x", "sandbox": {"network": true}},'
        ' "c": {"command": "x"}}}'
    )
    assert [(server.sandbox, server.network) for server in parse_config(text)] == [
        (True, False),
        (True, True),
        (False, False),
    ]


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
