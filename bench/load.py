"""Load: concurrent sessions through gradio_client against the app in its own process and one scripted model.

Run from the repository root: `python -m bench.load [--sessions 20] [--delay 0.02]`.

Each session opens its own page (its own gradio_client, so its own owner and chat) and has a three-turn chat:
1. "what files are here?" -> the model calls list_files (safe, runs at once), then answers;
2. "run echo" -> the model calls run_shell `echo <marker>` (risky); the session approves it; the model answers;
3. "thanks" -> a plain answer.

Every session carries a marker (`cat-07-3f9a`) in its messages, and the model echoes it back, so a reply that
reached the wrong chat shows up as a foreign marker. The model streams one token (4 characters) every 20 ms by
default, about 50 tokens/s: a 7-8B model on a good GPU. The app runs in a separate process, as it would for real,
so the clients' work does not compete with it for the GIL (it still shares the machine's cores).

Times are as gradio_client sees them, which is a little later than a browser would: its stream reader looks for
new messages every 50 ms when it has none.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import secrets
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.report import machine, table
from meowgent.config import Secret, Settings
from meowgent.ui.html.safehtml import shown_text
from tests.scripted_ollama import ScriptedOllama, Text, Turn, tool_call_text

CHUNK = 4
DELAY = 0.02
POLL = 0.005
"""Seconds between looks at a call's outputs: the resolution of the times measured."""
MARKER = re.compile(r"cat-\d{2}-[0-9a-f]{4}")

Responder = Callable[[Mapping[str, Any]], Turn]


class EchoingOllama(ScriptedOllama):
    """A ScriptedOllama that builds each chat reply from that request's body, so many sessions can share it.

    ScriptedOllama's FIFO script would hand one session's turn to another, and it has no public per-request hook.
    So this overrides two private methods: `_record`, which runs in the request's thread just before the reply
    is chosen, keeps the body in a thread-local, and `_next_turn` answers from it. It also keeps no request log:
    the memory bench sends thousands of ever longer transcripts.
    """

    def __init__(self, respond: Responder, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._respond = respond
        self._body = threading.local()

    def _record(self, path: str, body: dict[str, Any]) -> None:
        self._body.value = body

    def _next_turn(self) -> Turn:
        return self._respond(self._body.value)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


OWNER = Secret("the-owner-of-every-bench-app")
"""The start token of every app a bench serves: its clients and browsers send it, as the owner's browser does."""
OWNER_HEADERS = {"Authorization": f"token {OWNER.reveal()}"}

_CHILD = "import sys; from bench.load import serve_until_stdin_closes; serve_until_stdin_closes(*sys.argv[1:])"
_ROOT = Path(__file__).resolve().parent.parent


def serve_until_stdin_closes(workspace: str, data_dir: str, ollama_url: str, port: str) -> None:
    """The app's own process: print its URL, then serve until stdin closes."""
    from meowgent.ui.app import serve

    settings = Settings(
        workspace=Path(workspace),
        ollama_host=ollama_url,
        port=int(port),
        data_dir=Path(data_dir),
        shell_timeout=30,
        token=OWNER,
    )
    demo, url, _ = serve(settings)
    print(url, flush=True)
    # Nobody reads stdout any more, and a full pipe would block the app's next print; errors still go to stderr.
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stdin.read()
    demo.close()


@dataclass
class AppProcess:
    url: str
    pid: int
    workspace: Path


@contextlib.contextmanager
def app_process(ollama_url: str) -> Iterator[AppProcess]:
    """serve() in a child process with a fresh workspace, talking to `ollama_url`."""
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")  # inherited by the child
    with tempfile.TemporaryDirectory(prefix="meowgent-load-") as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        (workspace / "notes.md").write_text("cat facts\n")
        # A plain subprocess, not multiprocessing: spawn re-imports the caller's main script, which breaks callers
        # without a main guard, and fork would copy this process's threads and memory into the app.
        args = [str(workspace), str(Path(tmp) / "data"), ollama_url, str(free_port())]
        with subprocess.Popen(
            [sys.executable, "-c", _CHILD, *args], cwd=_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        ) as process:
            try:
                yield AppProcess(_read_url(process), process.pid, workspace)
            finally:
                process.stdin.close()  # the child's cue to close the app and exit
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


def _read_url(process: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 120
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([process.stdout], [], [], left)
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the app process exited with code {process.wait()} before serving")
        if line.startswith("http"):
            return line.strip()
    raise RuntimeError("the app process did not start serving within 120 s")


# The scripted model's side of the three-turn chat.


def marker_of(messages: list[Mapping[str, Any]]) -> str:
    """The marker of the newest user message: whose chat this request belongs to."""
    for message in reversed(messages):
        if message.get("role") == "user" and (found := MARKER.search(str(message.get("content")))):
            return found.group()
    return "cat-00-none"


def three_turns(*, chunk_size: int = CHUNK, delay: float = DELAY) -> Responder:
    """Replies for the load scenario, each naming the marker of the chat it answers."""

    def respond(body: Mapping[str, Any]) -> Turn:
        messages = body.get("messages") or []
        marker = marker_of(messages)
        last = messages[-1] if messages else {}
        content = str(last.get("content") or "")
        if last.get("role") == "tool":
            # Echo every marker the tool printed, so a result from another chat would surface here.
            seen = " ".join(sorted(set(MARKER.findall(content)))) or "nothing with a marker"
            steps = [Text(f"All done for {marker}. The tool showed {seen}; your workspace looks tidy and calm.")]
        elif "files" in content:
            call = tool_call_text("list_files", {"path": "."})
            steps = [Text(f"Let me look at the workspace for {marker}.\n"), Text(call)]
        elif "echo" in content:
            call = tool_call_text("run_shell", {"command": f"echo {marker}"})
            steps = [Text(f"I'll run that for {marker}; it needs your approval.\n"), Text(call)]
        else:
            steps = [Text(f"You're welcome, {marker}. Purr. Ask me anything else about your files.")]
        return Turn(*steps, chunk_size=chunk_size, delay=delay)

    return respond


# The sessions' side.


def chat_text(chat: list[dict[str, Any]]) -> str:
    """All text the chatbot shows, panel titles included."""
    parts = []
    for message in chat:
        parts.append((message.get("metadata") or {}).get("title") or "")
        content = message["content"]
        parts.extend(c.get("text", "") for c in content) if isinstance(content, list) else parts.append(str(content))
    return shown_text("\n".join(parts))


def screen(values: tuple[Any, ...]) -> tuple[list[dict[str, Any]], str, Any]:
    """(chat, card summary, card details as the frames left them): the chat is the first list among the outputs."""
    at = next(i for i, value in enumerate(values) if isinstance(value, list))
    return values[at], values[at + 1], values[at + 2]


def open_page(client: Any) -> str:
    """Load the page as a browser that never saw it would (every stored value empty); returns the owner key."""
    parameters = client.view_api(print_info=False, return_format="dict")["named_endpoints"]["/on_load"]["parameters"]
    return client.predict(*[""] * len(parameters), api_name="/on_load")[0]


def assistant_chars(chat: list[dict[str, Any]]) -> int:
    """Characters of the assistant's prose (tool panels excluded): grows when a new token is on screen."""
    return sum(
        len(chat_text([message]))
        for message in chat
        if message["role"] == "assistant" and not (message.get("metadata") or {}).get("title")
    )


@dataclass
class Session:
    marker: str
    first_token: list[float] = field(default_factory=list)
    """Seconds from each send until new assistant text was in the chat."""
    steps: list[float] = field(default_factory=list)
    """Seconds of each action (three sends and the approval) until its answer was complete."""
    total: float = 0.0
    error: str = ""
    foreign: set[str] = field(default_factory=set)
    completed: bool = False


class _Failed(Exception):
    """A step's answer is not what the scenario expects; the message says what was missing."""


def _timed(job, before: int, session: Session, *, first_token: bool) -> list[dict[str, Any]]:
    """Follow one streaming call; returns the final chat."""
    started = time.perf_counter()
    seen = False
    chat: list[dict[str, Any]] = []
    read = 0
    while True:
        # Polled every POLL seconds rather than by iterating the job, whose iterator looks every millisecond:
        # twenty of those took a sixth of a core from the app under test (and added a third to its first-token times).
        finished = job.done()
        outputs = job.outputs()
        for output in outputs[read:]:
            chat = screen(output)[0]
            if first_token and not seen and assistant_chars(chat) > before:
                session.first_token.append(time.perf_counter() - started)
                seen = True
        read = len(outputs)
        if finished:
            break
        time.sleep(POLL)
    job.result()  # raises if the call failed on the server
    session.steps.append(time.perf_counter() - started)
    if first_token and not seen:
        raise _Failed("no assistant text appeared")
    return chat


def _expect(chat: list[dict[str, Any]], text: str, step: str) -> None:
    if text not in chat_text(chat):
        raise _Failed(f"{step}: {text!r} is not in the chat")


def run_session(url: str, index: int) -> Session:
    """One person's three-turn chat; never raises, the outcome is in the result."""
    from gradio_client import Client

    marker = f"cat-{index:02d}-{secrets.token_hex(2)}"
    session = Session(marker)
    started = time.perf_counter()
    chat: list[dict[str, Any]] = []
    try:
        # Without ssl_verify=False, gradio_client loads the CA bundle (~18 ms of CPU) for every request it makes,
        # even to a plain-http loopback address: twenty sessions would spend more CPU on that than the app does.
        client = Client(url, verbose=False, ssl_verify=False, headers=OWNER_HEADERS)
        key = open_page(client)
        chat = _timed(
            client.submit(key, f"{marker}: what files are here?", api_name="/on_send"), 0, session, first_token=True
        )
        _expect(chat, f"All done for {marker}", "turn 1")
        job = client.submit(key, f"{marker}: please echo my marker", api_name="/on_send")
        chat = _timed(job, assistant_chars(chat), session, first_token=True)
        details = client.predict(key, api_name="/show_card_details")  # sent once, after the frames
        if details != f"echo {marker}":
            raise _Failed(f"turn 2: the approval card shows {details[:200]!r}, not `echo {marker}`")
        chat = _timed(client.submit(key, "", api_name="/on_approve"), 0, session, first_token=False)
        _expect(chat, f"All done for {marker}. The tool showed {marker};", "turn 2 after approval")
        chat = _timed(
            client.submit(key, f"{marker}: thanks!", api_name="/on_send"),
            assistant_chars(chat),
            session,
            first_token=True,
        )
        _expect(chat, f"You're welcome, {marker}.", "turn 3")
        session.completed = True
    except Exception as exc:  # a load test reports failures instead of stopping at the first
        session.error = f"{type(exc).__name__}: {exc}"[:300]
    session.total = time.perf_counter() - started
    session.foreign = set(MARKER.findall(chat_text(chat))) - {marker}
    return session


@dataclass
class LoadResult:
    sessions: list[Session]
    wall: float
    mixed_requests: int
    """Model requests whose transcript held more than one session's marker."""

    @property
    def errors(self) -> list[str]:
        return [f"{s.marker}: {s.error}" for s in self.sessions if s.error]

    @property
    def cross_talk(self) -> list[str]:
        return [f"{s.marker} shows {sorted(s.foreign)}" for s in self.sessions if s.foreign]


def measure(sessions: int = 20, *, chunk_size: int = CHUNK, delay: float = DELAY) -> LoadResult:
    """Run `sessions` concurrent sessions against a fresh app and scripted model."""
    respond = three_turns(chunk_size=chunk_size, delay=delay)
    mixed = 0
    lock = threading.Lock()

    def checked(body: Mapping[str, Any]) -> Turn:
        nonlocal mixed
        markers = {m for message in body.get("messages") or [] for m in MARKER.findall(str(message.get("content")))}
        if len(markers) > 1:
            with lock:
                mixed += 1
        return respond(body)

    with EchoingOllama(checked) as ollama, app_process(ollama.url) as app:
        results: list[Session | None] = [None] * sessions

        def one(index: int) -> None:
            results[index] = run_session(app.url, index)

        started = time.perf_counter()
        threads = [threading.Thread(target=one, args=(i,), name=f"session-{i}") for i in range(sessions)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
    return LoadResult([r for r in results if r is not None], wall, mixed)


def run(sessions: int = 20, *, quick: bool = False, chunk_size: int = CHUNK, delay: float = DELAY) -> str:
    sessions = min(sessions, 5) if quick else sessions
    result = measure(sessions, chunk_size=chunk_size, delay=delay)
    done = [s for s in result.sessions if s.completed]
    first = [t for s in result.sessions for t in s.first_token]
    steps = [t for s in result.sessions for t in s.steps]
    totals = [s.total for s in done]
    rate = f"{1 / delay:.0f} tokens/s ({chunk_size}-character tokens)" if delay else "no delay"
    rows = [
        ["sessions (completed)", f"{len(done)} of {sessions}"],
        ["model speed per session", rate],
        ["time to first token, p50 / p95", f"{_ms(_pct(first, 50))} / {_ms(_pct(first, 95))}"],
        ["send or approve → answer complete, p50 / p95", f"{_pct(steps, 50):.2f} / {_pct(steps, 95):.2f} s"],
        [
            "whole session (open the page, 3 turns, 1 approval), p50 / p95",
            f"{_pct(totals, 50):.2f} / {_pct(totals, 95):.2f} s",
        ],
        ["wall time, all sessions", f"{result.wall:.1f} s"],
        ["errors", str(len(result.errors))],
        ["cross-talk (chats showing another's marker)", str(len(result.cross_talk))],
        ["model requests mixing two sessions", str(result.mixed_requests)],
    ]
    text = (
        f"### Load: {sessions} concurrent sessions, three turns each with a safe call and an approved "
        f"run_shell ({machine()})\n\n" + table(["measure", "value"], rows)
    )
    problems = result.errors + result.cross_talk
    if problems:
        text += "\n" + "\n".join(f"- {p}" for p in problems[:10]) + "\n"
    return text


def _pct(values: list[float], percent: int) -> float:
    """The nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--delay", type=float, default=DELAY, help="seconds between 4-character tokens")
    args = parser.parse_args()
    print(run(args.sessions, delay=args.delay))


if __name__ == "__main__":
    main()
