"""A command with network, for real: run_shell in bwrap, its own network namespace, the bridge, the host's proxy.

A server on the host's 127.0.0.1 plays a public host; the resolver given to the call names it `example.test`.
What the command printed, and the result's `network:` line, say what it reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from meowgent.config import Settings
from meowgent.tools import netbridge
from meowgent.tools.mounts import HostView, SandboxPolicy, bwrap_options
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.sandbox import Sandbox
from meowgent.tools.spec import ToolContext
from tests.sandboxing import GREETING, fetch_directly, needs_sandbox

BACKGROUND = "it left processes running in the background"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return Settings(workspace=workspace, data_dir=tmp_path / "data", shell_timeout=30)


def example_test(host: str, port: int) -> list[str]:
    """DNS for the tests: `example.test` is the host's 127.0.0.1, `other.test` a public address."""
    known = {"example.test": "127.0.0.1", "other.test": "93.184.216.34"}
    if host not in known:
        raise OSError("Name or service not known")
    return [known[host]]


def run(settings: Settings, command: str, *, hosts: tuple[str, ...] = ("example.test",)) -> str:
    context = ToolContext(settings=settings, network=hosts, resolve=example_test)
    return ToolRegistry.builtins().execute("run_shell", {"command": command}, context).text


def test_with_a_proxy_the_namespace_is_its_own_and_the_socket_is_bound_over_the_empty_run():
    policy = SandboxPolicy(Path("/w"), network=True, proxy=Path("/tmp/meowgent-x/proxy-1.sock"))
    options = bwrap_options(policy, HostView(), disable_userns=True)
    assert "--unshare-net" in options
    bind = options.index("/tmp/meowgent-x/proxy-1.sock")
    assert options[bind - 1 : bind + 2] == ["--ro-bind", "/tmp/meowgent-x/proxy-1.sock", netbridge.SOCKET]
    assert options.index("/run") < bind  # /run's tmpfs first, or it would cover the socket
    launch = Sandbox("/usr/bin/bwrap", True).launch(policy, ["bash", "-c", "true"], environ={"PATH": "/usr/bin"})
    command = launch.argv[launch.argv.index("--") + 1 :]  # the bridge, which then becomes the command
    assert command[1:4] == ("-I", "-S", "-c")
    assert command[5:] == (netbridge.SOCKET, str(netbridge.PORT), "--", "bash", "-c", "true")
    assert launch.env["HTTPS_PROXY"] == launch.env["http_proxy"] == f"http://127.0.0.1:{netbridge.PORT}"


@needs_sandbox
@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl here")
def test_curl_reaches_a_granted_host_through_the_proxy_and_the_result_says_so(settings, host_server):
    allowed = replace(settings, allow_private_fetch=True)
    result = run(allowed, f"curl -sS http://example.test:{host_server}/")
    assert GREETING in result
    assert "network: reached example.test" in result
    assert BACKGROUND not in result  # the bridge is not the command's: it is not reported as left behind


@needs_sandbox
def test_pythons_urllib_goes_through_the_proxy_too(settings, host_server):
    allowed = replace(settings, allow_private_fetch=True)
    script = f"import urllib.request; print(urllib.request.urlopen('http://example.test:{host_server}/').read())"
    result = run(allowed, f'{sys.executable} -c "{script}"')
    assert GREETING in result


@needs_sandbox
def test_a_name_that_points_at_the_hosts_loopback_is_refused_without_allow_private_fetch(settings, host_server):
    result = run(
        settings, f"{sys.executable} -c \"import urllib.request as u; u.urlopen('http://example.test:{host_server}/')\""
    )
    assert GREETING not in result
    assert "403" in result
    assert "network: reached no host; refused example.test" in result


@needs_sandbox
def test_the_hosts_own_127_0_0_1_is_out_of_reach_with_network_on(settings, host_server):
    result = run(replace(settings, allow_private_fetch=True), fetch_directly(host_server))
    assert "Connection refused" in result
    assert GREETING not in result


def abstract_probe(name: str) -> str:
    code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); print('CON' + 'NECTED')"
    return f'{sys.executable} -c "{code}"'


@needs_sandbox
def test_an_abstract_socket_of_the_host_is_unreachable_with_network_on(settings, abstract_listener):
    name, connected = abstract_listener
    result = run(settings, abstract_probe(name), hosts=("*",))
    assert "CONNECTED" not in result
    assert "ConnectionRefusedError" in result
    assert not connected.is_set()
    # The same probe outside the sandbox gets through: the test can fail.
    outside = subprocess.run(["bash", "-c", abstract_probe(name)], capture_output=True, text=True, env=os.environ)
    assert "CONNECTED" in outside.stdout
    assert connected.wait(5)


@needs_sandbox
def test_a_command_that_leaves_a_process_behind_is_still_reported_with_network_on(settings):
    assert BACKGROUND in run(settings, "sleep 100 &")
