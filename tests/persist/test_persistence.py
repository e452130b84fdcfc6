"""Conversations survive: a real app process, a real `kill -9`, a restart, and two processes on one folder."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bench.load import screen
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui.conftest import (
    LOOPBACK_TLS,
    OWNER_HEADERS,
    OWNER_TOKEN,
    chat_text,
    free_port,
    html_text,
    owners_client,
)

ROOT = Path(__file__).resolve().parents[2]


class AppProcess:
    """`python app.py` in a subprocess, as a person starts it."""

    def __init__(self, ollama_url: str, workspace: Path, data_dir: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        environment = {
            **os.environ,
            "OLLAMA_HOST": ollama_url,
            "NO_PROXY": "127.0.0.1,localhost",
            "MEOWGENT_TOKEN": OWNER_TOKEN,
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "app.py",
                "--workspace",
                str(workspace),
                "--data-dir",
                str(data_dir),
                "--port",
                str(self.port),
            ],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.url = f"http://127.0.0.1:{self.port}/"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the app exited: {self.process.stderr.read().decode()}")
            try:
                if httpx.get(self.url, headers=OWNER_HEADERS, timeout=1, verify=LOOPBACK_TLS).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("the app did not start within 60 s")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


@pytest.fixture
def folders(tmp_path):
    workspace, data = tmp_path / "workspace", tmp_path / "data"
    workspace.mkdir()
    return workspace, data


def integrity(data: Path) -> str:
    with sqlite3.connect(data / "meowgent.db") as connection:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]


def test_kill_9_mid_stream_loses_at_most_a_second_and_marks_the_answer(ollama_server, folders):
    workspace, data = folders
    words = " ".join(f"w{i:04d}" for i in range(600))
    ollama_server.script(reply(words, chunk_size=6, delay=0.02))  # about 12 s of streaming
    app = AppProcess(ollama_server.url, workspace, data)
    try:
        client = owners_client(app.url)
        key = client.predict("", "", api_name="/on_load")[0]
        job = client.submit(key, "count for me", api_name="/on_send")
        seen: list[tuple[float, str]] = []
        started = time.monotonic()
        while time.monotonic() - started < 4:
            outputs = job.outputs()
            if outputs:
                seen.append((time.monotonic(), chat_text(outputs[-1][1])))
            time.sleep(0.1)
        killed_at = time.monotonic()
        app.kill()
    finally:
        app.stop()
    shown_a_second_before = max((text for at, text in seen if at <= killed_at - 1.0), key=len)
    assert "w0010" in shown_a_second_before  # the answer was well under way

    assert integrity(data) == "ok"
    restarted = AppProcess(ollama_server.url, workspace, data)
    try:
        after = chat_text(screen(owners_client(restarted.url).predict(key, "", api_name="/on_load"))[0])
    finally:
        restarted.stop()
    last_word = shown_a_second_before.split()[-1]
    assert last_word in after
    assert "count for me" in after
    assert "cut off because Meowgent stopped" in after


def test_a_pending_approval_survives_a_restart_and_approving_runs_it(ollama_server, folders):
    workspace, data = folders
    ollama_server.script(
        Turn(Text("I'll save it. " + tool_call_text("write_file", {"path": "kept.md", "content": "survived"}))),
        reply("Saved after the restart."),
    )
    app = AppProcess(ollama_server.url, workspace, data)
    try:
        client = owners_client(app.url)
        key = client.predict("", "", api_name="/on_load")[0]
        _chat, card, _details = screen(client.predict(key, "save it", api_name="/on_send"))
        assert "kept.md" in html_text(card)
    finally:
        app.stop()
    assert not (workspace / "kept.md").exists()

    restarted = AppProcess(ollama_server.url, workspace, data)
    try:
        client = owners_client(restarted.url)
        _chat, card, _details = screen(client.predict(key, "", api_name="/on_load"))
        assert "kept.md" in html_text(card)
        assert client.predict(key, api_name="/show_card_details") == "survived"  # sent once, after the frames
        chat, card, _details = screen(client.predict(key, "", api_name="/on_approve"))
    finally:
        restarted.stop()
    assert (workspace / "kept.md").read_text() == "survived"
    assert "Saved after the restart." in chat_text(chat)
    assert card == ""


def test_two_app_processes_on_one_data_folder(ollama_server, folders):
    workspace, data = folders
    ollama_server.script(*[reply(f"answer {i} " + "x" * 200, chunk_size=8, delay=0.002) for i in range(6)])
    first = AppProcess(ollama_server.url, workspace, data)
    second = AppProcess(ollama_server.url, workspace, data)
    try:
        clients = [owners_client(app.url) for app in (first, second)]
        keys = [client.predict("", "", api_name="/on_load")[0] for client in clients]
        jobs = [
            client.submit(key, f"question {n} from process {p}", api_name="/on_send")
            for n in range(3)
            for p, (client, key) in enumerate(zip(clients, keys, strict=True))
        ]
        for job in jobs:
            job.result(timeout=60)
        histories = [
            chat_text(screen(client.predict(key, "", api_name="/on_load"))[0])
            for client, key in zip(clients, keys, strict=True)
        ]
    finally:
        first.stop()
        second.stop()
    assert integrity(data) == "ok"
    for process, history in enumerate(histories):
        assert f"from process {process}" in history
        assert f"from process {1 - process}" not in history
