"""The real app, launched in this process against a scripted model server."""

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from meowgent.config import Settings
from meowgent.ui.app import serve
from meowgent.ui.safehtml import shown_text as html_text
from tests.scripted_ollama import ScriptedOllama


@dataclass
class RunningApp:
    url: str
    ollama: ScriptedOllama
    workspace: Path
    settings: Settings
    demo: gr.Blocks

    def restart(self) -> None:
        """Stop the app and start a new one on the same port and data folder, as after a reboot."""
        self.demo.close()
        self.demo, _, _ = serve(self.settings)


def chat_text(chat: list[dict]) -> str:
    """All text a chatbot value shows (as gradio_client returns it), panel titles included."""
    parts = []
    for message in chat:
        parts.append((message.get("metadata") or {}).get("title") or "")
        content = message["content"]
        parts.extend(c.get("text", "") for c in content) if isinstance(content, list) else parts.append(content)
    return html_text("\n".join(parts))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def app_options() -> dict[str, Any]:
    """Overrides for `running_app`: the server's `models` and `version`, and any Settings field. A test module
    that needs other models (or an older Ollama) defines its own `app_options` fixture."""
    return {}


@pytest.fixture
def running_app(tmp_path: Path, app_options: dict[str, Any]) -> Iterator[RunningApp]:
    """A fresh app with its own workspace and scripted model server; script turns on `.ollama`."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    options = dict(app_options)
    server = {key: options.pop(key) for key in ("models", "version") if key in options}
    with ScriptedOllama(server.pop("models", None), **server) as ollama:
        settings = Settings(
            **{
                "workspace": workspace,
                "ollama_host": ollama.url,
                "port": free_port(),
                "data_dir": tmp_path / "data",
                "shell_timeout": 30,
                "read_timeout": 5,
                **options,
            }
        )
        demo, url, _ = serve(settings)
        app = RunningApp(url, ollama, workspace, settings, demo)
        try:
            yield app
        finally:
            app.demo.close()


@dataclass
class Listener:
    """An HTTP server standing in for an attacker's: it records every request that reaches it."""

    url: str
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def listener() -> Iterator[Listener]:
    heard: list[str] = []

    class Record(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            heard.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Listener(f"http://127.0.0.1:{server.server_address[1]}", heard)
    finally:
        server.shutdown()
        server.server_close()
