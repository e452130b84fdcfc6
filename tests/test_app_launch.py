"""Launching: the login policy, the help text, a public link offline, and a page with no Ollama at all."""

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from gradio_client import Client

from app import login_for
from meowgent.config import Settings, is_loopback
from tests.sandboxing import failing_bwrap
from tests.scripted_openai import ScriptedOpenAI
from tests.ui.conftest import free_port

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


def run_app(*arguments, **environment):
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", **environment}
    return subprocess.Popen(
        [sys.executable, "app.py", *arguments],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
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
        client = Client(url, auth=(user, password), verbose=False)
        key = client.predict("", "", api_name="/on_load")[0]
        banner, _model = client.predict(key, "qwen3", api_name="/on_tick")
        assert "ollama serve" in banner
        assert "ollama pull qwen3" in banner
    finally:
        app.terminate()
        app.wait(10)


def test_a_busy_port_is_a_plain_message(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        app = run_app("--port", str(port), "--workspace", str(tmp_path), "--data-dir", str(tmp_path / "d"))
        out, _ = app.communicate(timeout=60)
    assert app.returncode != 0
    assert f"Port {port} is already in use" in out
    assert "Traceback" not in out


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


def test_with_only_an_openai_server_the_start_names_it_alone_and_the_status_takes_its_model(tmp_path):
    with ScriptedOpenAI(dialect="llamacpp", models={"smollm2": 4096}) as server:
        port = free_port()
        app = run_app("--port", str(port), "--workspace", str(tmp_path), "--data-dir", str(tmp_path / "data"),
                      "--openai-url", server.url, OLLAMA_HOST="http://127.0.0.1:11434")  # fmt: skip
        output = []
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and not any("Open http" in line for line in output):
                line = app.stdout.readline()
                if not line and app.poll() is not None:
                    break
                output.append(line)
            text = "".join(output)
            assert f"model servers: {server.url}\n" in text  # not the Ollama address nobody asked for
            client = Client(f"http://127.0.0.1:{port}/", verbose=False)
            key = client.predict("", "", api_name="/on_load")[0]
            banner, model = client.predict(key, "qwen3", api_name="/on_tick")  # the default name, before the list
        finally:
            app.terminate()
            app.wait(10)
    assert model["value"] == "smollm2"
    assert "qwen3" not in banner
    assert "smollm2" in banner
