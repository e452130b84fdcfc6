"""Launching: the login policy, the owner's link, the help text, a public link offline, a page with no Ollama."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from app import can_open_a_browser, login_for
from meowgent.config import Settings, is_loopback
from meowgent.flags import parse_settings
from tests.sandboxing import failing_bwrap
from tests.scripted_openai import ScriptedOpenAI
from tests.ui.conftest import OWNER_TOKEN, free_port, owners_client

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("settings", "login", "made_up"),
    [
        (Settings(), None, False),
        (Settings(auth=("ann", "pw")), ("ann", "pw"), False),
        (Settings(share=True, auth=("ann", "pw")), ("ann", "pw"), False),
        (Settings(share=True), "generated", True),
        (Settings(host="0.0.0.0"), "generated", True),
        (Settings(host="192.168.1.5"), "generated", True),
        (Settings(host="localhost"), None, False),
        (Settings(host="::1"), None, False),
    ],
)
def test_a_public_link_or_address_never_serves_without_a_login(settings, login, made_up):
    auth, generated = login_for(settings)
    assert generated is made_up
    if login == "generated":
        user, password = auth
        assert re.fullmatch(r"meow-[0-9a-f]{8}", user)
        assert user != login_for(settings)[0][0]  # random, so nobody can pause it by guessing wrong on purpose
        assert len(password) >= 16
    else:
        assert auth == login


def test_loopback_names():
    assert is_loopback("127.0.0.1")
    assert is_loopback("127.5.5.5")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("example.com")


def run_app(*arguments, interruptible=False, **environment):
    """`python app.py` as a person starts it; `interruptible`: as from a terminal, where Ctrl-C reaches it even when
    the suite itself runs in the background (a shell ignores SIGINT for its background jobs, and their children
    inherit that, which the app rightly keeps)."""
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", **environment}
    return subprocess.Popen(
        [sys.executable, "app.py", *arguments],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) if interruptible else None,
    )


def test_help_explains_every_flag_and_its_variable():
    result = subprocess.run([sys.executable, "app.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for flag, variable in [
        ("--host", "MEOWGENT_HOST"),
        ("--port", "MEOWGENT_PORT"),
        ("--workspace", "MEOWGENT_WORKSPACE"),
        ("--model", "MEOWGENT_MODEL"),
        ("--share", "MEOWGENT_SHARE"),
        ("--auth", "MEOWGENT_AUTH"),
        ("--auth-file", "MEOWGENT_AUTH_FILE"),
        ("--public-name", "MEOWGENT_PUBLIC_NAMES"),
        ("--data-dir", "MEOWGENT_DATA_DIR"),
        ("--no-sandbox", "MEOWGENT_SANDBOX"),
        ("--bwrap", "MEOWGENT_BWRAP"),
        ("--shell-env", "MEOWGENT_SHELL_ENV"),
        ("--max-watchers", "MEOWGENT_MAX_WATCHERS"),
        ("MEOWGENT_TOKEN", "MEOWGENT_TOKEN="),
    ]:
        assert flag in result.stdout
        assert variable in result.stdout


def test_share_offline_says_so_requires_the_printed_password_and_the_page_says_how_to_start_ollama(tmp_path):
    port = free_port()
    dead = free_port()  # nothing listens here: Ollama is "not running"
    app = run_app(
        "--share", "--port", str(port), "--workspace", str(tmp_path), "--data-dir", str(tmp_path / "data"),
        OLLAMA_HOST=f"http://127.0.0.1:{dead}",
    )  # fmt: skip
    output = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any("Still serving locally" in line for line in output):
            line = app.stdout.readline()
            if not line and app.poll() is not None:
                break
            output.append(line)
        text = "".join(output)
        assert "Could not create a public link" in text
        for gradios_advice in ("frpc", "antivirus", "huggingface", "Could not create share link"):
            assert gradios_advice not in text  # our own sentence only
        user, password = re.search(r"User: (\S+)\s+Password: (\S+)", text).groups()
        url = f"http://127.0.0.1:{port}/"
        assert httpx.get(url + "config", timeout=10).status_code == 401
        client = owners_client(url, headers={}, auth=(user, password))
        key = client.predict("", "", api_name="/on_load")[0]
        banner, _model = client.predict(key, "qwen3", api_name="/on_tick")
        assert "ollama serve" in banner
        assert "ollama pull qwen3" in banner
    finally:
        app.terminate()
        app.wait(10)


def test_a_home_folder_that_does_not_exist_is_a_plain_message(tmp_path):
    missing = tmp_path / "no-such-home"
    app = run_app("--data-dir", str(tmp_path / "d"), HOME=str(missing))
    out, _ = app.communicate(timeout=60)
    assert app.returncode != 0
    assert f"Meowgent can't make its workspace folder {missing / 'meowgent-workspace'}" in out
    assert "--workspace" in out
    assert "Traceback" not in out
    assert not missing.exists()


def test_a_busy_port_is_a_plain_message_and_the_default_workspace_is_made_before_it(tmp_path):
    # One start serves both: the app stops at the busy port right after preparing its folders, the default
    # workspace (none is given, so $HOME/meowgent-workspace) among them.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        app = run_app("--port", str(port), "--data-dir", str(tmp_path / "d"), HOME=str(tmp_path))
        out, _ = app.communicate(timeout=60)
    assert app.returncode != 0
    assert f"Port {port} is already in use" in out
    assert "Traceback" not in out
    assert (tmp_path / "meowgent-workspace").is_dir()


def test_an_unusable_data_folder_is_a_plain_message(tmp_path):
    not_a_folder = tmp_path / "data"
    not_a_folder.write_text("a file where the data folder should be")
    app = run_app("--port", str(free_port()), "--workspace", str(tmp_path), "--data-dir", str(not_a_folder))
    out, _ = app.communicate(timeout=90)
    assert app.returncode != 0
    assert f"Cannot use the data folder {not_a_folder}" in out
    assert "--data-dir" in out
    assert "Traceback" not in out


def test_without_a_sandbox_the_start_says_so_once(tmp_path):
    app = run_app(
        "--port", str(free_port()), "--workspace", str(tmp_path), "--data-dir", str(tmp_path / "data"),
        MEOWGENT_BWRAP=str(failing_bwrap(tmp_path)),
    )  # fmt: skip
    output = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not any("Open http" in line for line in output):
            line = app.stdout.readline()
            if not line and app.poll() is not None:
                break
            output.append(line)
    finally:
        app.terminate()
        app.wait(10)
    text = "".join(output)
    assert "Open http" in text
    assert text.count("Commands run without a sandbox on this computer") == 1
    assert "No permissions to create new namespace" in text  # why, from the bwrap that refused


def start_lines(app) -> str:
    """What the app printed up to its "Open …" line (the app still running)."""
    output = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not any("Open http" in line for line in output):
        line = app.stdout.readline()
        if not line and app.poll() is not None:
            break
        output.append(line)
    return "".join(output)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_closes_the_app_and_says_so(tmp_path, stop):
    folders = ("--workspace", str(tmp_path), "--data-dir", str(tmp_path / "data"))
    app = run_app("--port", str(free_port()), *folders, interruptible=True)
    try:
        assert "Open http" in start_lines(app)
        app.send_signal(stop)
        out, _ = app.communicate(timeout=60)
    finally:
        app.kill()  # one that did not stop must not outlive the test
        app.wait(10)
    assert app.returncode == 0
    assert out.strip().endswith("Meowgent stopped.")  # printed once the app's own close has returned
    assert "Traceback" not in out
    assert "Keyboard interruption" not in out  # Gradio's line, which its own handling of Ctrl-C printed


def test_the_start_line_carries_the_owners_token_and_only_it_opens_the_page(tmp_path):
    port = free_port()
    app = run_app("--port", str(port), "--workspace", str(tmp_path), "--data-dir", str(tmp_path / "data"))
    try:
        text = start_lines(app)
        (token,) = re.findall(rf"Open http://127\.0\.0\.1:{port}/\?token=([\w-]+) in your browser\.", text)
        assert len(token) >= 40  # 256 random bits
        url = f"http://127.0.0.1:{port}/"
        assert httpx.get(url + "config", timeout=10).status_code == 401
        assert httpx.get(url + "config", headers={"Authorization": f"token {token}"}, timeout=10).status_code == 200
    finally:
        app.terminate()
        app.wait(10)
    assert "Warning" not in text


def test_a_chosen_token_is_printed_and_an_empty_one_turns_the_check_off_with_a_warning(tmp_path):
    port = free_port()
    chosen = run_app("--port", str(port), "--workspace", str(tmp_path), MEOWGENT_TOKEN="my-own-token")
    try:
        assert f"Open http://127.0.0.1:{port}/?token=my-own-token in your browser." in start_lines(chosen)
    finally:
        chosen.terminate()
        chosen.wait(10)
    port = free_port()
    app = run_app("--port", str(port), "--workspace", str(tmp_path), MEOWGENT_TOKEN="")
    try:
        text = start_lines(app)
        assert httpx.get(f"http://127.0.0.1:{port}/config", timeout=10).status_code == 200
    finally:
        app.terminate()
        app.wait(10)
    assert "Warning: MEOWGENT_TOKEN is empty, so every account on this computer can use this page." in text
    assert f"Open http://127.0.0.1:{port}/ in your browser." in text


@pytest.mark.parametrize(
    ("interactive", "environ", "platform", "opens"),
    [
        (True, {"DISPLAY": ":0"}, "linux", True),
        (True, {"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
        (True, {}, "darwin", True),
        (False, {"DISPLAY": ":0"}, "linux", False),  # output to a pipe or a file: a service, a script
        (True, {"DISPLAY": ":0", "CI": "true"}, "linux", False),
        (True, {}, "linux", False),  # a bare console: a text browser would take over the terminal
    ],
)
def test_a_browser_is_opened_only_for_a_person_at_a_desktop(interactive, environ, platform, opens):
    assert can_open_a_browser(interactive, environ, platform) is opens


def test_watch_links_allow_200_viewers_at_once_unless_told():
    assert Settings().max_watchers == 200
    assert parse_settings([], {}).max_watchers == 200
    assert parse_settings(["--max-watchers", "5"], {}).max_watchers == 5
    assert parse_settings([], {"MEOWGENT_MAX_WATCHERS": "7"}).max_watchers == 7


def test_the_token_is_random_unless_set_and_off_when_empty():
    first, second = parse_settings([], {}).token, parse_settings([], {}).token
    assert first != second
    assert "••••" in repr(first)
    assert parse_settings([], {"MEOWGENT_TOKEN": "mine"}).token.reveal() == "mine"
    assert parse_settings([], {"MEOWGENT_TOKEN": ""}).token is None


def test_with_only_an_openai_server_the_start_names_it_alone_and_the_status_takes_its_model(tmp_path):
    with ScriptedOpenAI(dialect="llamacpp", models={"smollm2": 4096}) as server:
        port = free_port()
        folders = ("--workspace", str(tmp_path), "--data-dir", str(tmp_path / "data"))
        ollama_nobody_asked_for = "http://127.0.0.1:11434"
        app = run_app(
            "--port", str(port), *folders, "--openai-url", server.url,
            OLLAMA_HOST=ollama_nobody_asked_for, MEOWGENT_TOKEN=OWNER_TOKEN,
        )  # fmt: skip
        try:
            text = start_lines(app)
            assert f"model servers: {server.url}\n" in text  # not the Ollama address nobody asked for
            client = owners_client(f"http://127.0.0.1:{port}/")
            key = client.predict("", "", api_name="/on_load")[0]
            banner, model = client.predict(key, "qwen3", api_name="/on_tick")  # the default name, before the list
        finally:
            app.terminate()
            app.wait(10)
    assert model["value"] == "smollm2"
    assert "qwen3" not in banner
    assert "smollm2" in banner


def test_a_model_pinned_to_a_host_no_server_is_stops_the_start_with_a_sentence(tmp_path):
    folders = ("--workspace", str(tmp_path), "--data-dir", str(tmp_path / "data"))
    servers = ("--openai-url", "http://gpu-box:8000/v1", "--ollama-host", "http://127.0.0.1:11434")
    app = run_app("--port", str(free_port()), *folders, *servers, MEOWGENT_MODEL="qwen3@gpu-bx")
    out, _ = app.communicate(timeout=90)
    assert app.returncode != 0
    assert "The model qwen3@gpu-bx is pinned to gpu-bx, but no model server is called that." in out
    assert "The servers are: 127.0.0.1, gpu-box." in out
    assert "Traceback" not in out
