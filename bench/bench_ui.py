"""The page in headless Chromium: how far the screen lags the model, and whether a huge tool call freezes it.

Run from the repository root: `python -m bench.bench_ui` (needs /usr/bin/chromium).

(a) A 3,000-token answer (4 characters a token) streamed at about 1,000 tokens/s: the time from the model's
    last chunk leaving the scripted server to the last token on screen.
(b) A write_file call with a huge `content` streamed into the page, while the page is pinged with
    `page.evaluate("1")` every 100 ms: how long the page is too busy to answer.

The model's side is timed on the wire: a loopback relay between the app and the scripted server notes when
the chat reply's final chunk passes. The screen's side is timed in the page (a MutationObserver, then the
next animation frame) and, as a cross-check, when Playwright's per-frame poll sees the last token.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.load import OWNER, OWNER_HEADERS
from bench.report import table
from meowgent.config import Settings
from meowgent.ui.app import serve
from tests.scripted_ollama import ScriptedOllama, Text, Turn, tool_call_text

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1280, "height": 900}

ANSWER_TOKENS = 3_000
ANSWER_DELAYS = (0.001, 0.001, 0.001, 0.0005, 0.0005)
"""Seconds between 4-character chunks, one trial each: 1 ms is the nominal 1,000 tokens/s (the server's sleep
overhead makes it slower); 0.5 ms gets closer to a real 1,000."""
SENTINEL = "ZZEND"
TARGET_LAG = 0.3
TARGET_PING = 0.2
PING_EVERY = 0.1
AFTER_CARD = 2.0
"""Seconds to keep pinging after the approval card appears (it renders the whole call)."""
BIG_CALLS = (
    ("1 MB", 1024 * 1024, 4096, 0.02),
    ("256 KB", 256 * 1024, 4, 0.0),
)
"""(label, content bytes, characters a chunk, delay between chunks)."""

_WORDS = ("cat ", "sat ", "mat ", "nap ", "paw ", "fur ", "mew ", "toy ", "box ", "sun ")

_SEEN_SCRIPT = """sentinel => {
  const chat = document.querySelector('#chat');
  window.__seenAt = null;
  const observer = new MutationObserver(() => {
    if (window.__seenAt === null && chat.textContent.includes(sentinel)) {
      observer.disconnect();
      requestAnimationFrame(() => { window.__seenAt = performance.timeOrigin + performance.now(); });
    }
  });
  observer.observe(chat, {subtree: true, childList: true, characterData: true});
}"""


@dataclass
class WireClock:
    """A loopback TCP relay in front of the model server that notes when each streamed chat reply ends."""

    upstream: tuple[str, int]
    chat_sent: float = 0.0
    first_byte: float = 0.0
    finished_wall: float = 0.0
    """time.time() when the last chat reply's final chunk passed (comparable with the page's clock)."""
    finished: float = 0.0
    """time.perf_counter() of the same moment."""
    done: threading.Event = field(default_factory=threading.Event)
    _listener: socket.socket | None = None

    @property
    def url(self) -> str:
        assert self._listener is not None
        host, port = self._listener.getsockname()[:2]
        return f"http://{host}:{port}"

    def start(self) -> WireClock:
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()

    def expect_reply(self) -> None:
        """Forget the last reply's times; the next chat reply sets them."""
        self.done.clear()
        self.chat_sent = self.first_byte = self.finished = self.finished_wall = 0.0

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            state = {"chat": False, "tail": b""}
            threading.Thread(target=self._pump_up, args=(client, upstream, state), daemon=True).start()
            threading.Thread(target=self._pump_down, args=(upstream, client, state), daemon=True).start()

    def _pump_up(self, source: socket.socket, sink: socket.socket, state: dict) -> None:
        with contextlib.suppress(OSError), source, sink:
            while data := source.recv(65536):
                if data.startswith(b"POST /api/chat"):
                    state["chat"] = True
                    self.chat_sent = time.perf_counter()
                elif data[:4] in (b"GET ", b"POST"):
                    state["chat"] = False
                sink.sendall(data)

    def _pump_down(self, source: socket.socket, sink: socket.socket, state: dict) -> None:
        with contextlib.suppress(OSError), source, sink:
            while data := source.recv(65536):
                now = time.perf_counter()
                sink.sendall(data)
                if not state["chat"]:
                    continue
                if not self.first_byte:
                    self.first_byte = now
                state["tail"] = (state["tail"] + data)[-5:]
                if state["tail"] == b"0\r\n\r\n":  # the chunked encoding's last chunk: the reply is complete
                    self.finished, self.finished_wall = now, time.time()
                    state["chat"] = False
                    self.done.set()


@dataclass
class App:
    url: str
    ollama: ScriptedOllama
    wire: WireClock
    workspace: Path


@contextlib.contextmanager
def launched_app() -> Iterator[App]:
    """The real app on a free port, behind a WireClock, against a ScriptedOllama (as tests/ui/conftest.py does)."""
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    with tempfile.TemporaryDirectory(prefix="meowgent-bench-") as tmp, ScriptedOllama() as ollama:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        wire = WireClock(("127.0.0.1", ollama.port)).start()
        settings = Settings(
            workspace=workspace,
            ollama_host=wire.url,
            port=_free_port(),
            data_dir=Path(tmp) / "data",
            shell_timeout=30,
            read_timeout=30,
            token=OWNER,
        )
        demo, url, _ = serve(settings)
        try:
            yield App(url, ollama, wire, workspace)
        finally:
            demo.close()
            wire.close()


@contextlib.contextmanager
def chromium() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser, url: str):
    """A fresh context (its own owner, so its own chat), loaded and ready to send."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport=VIEWPORT, extra_http_headers=OWNER_HEADERS)
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.goto(url)
    expect(page.locator("#status")).to_contain_text("Connected", timeout=15_000)
    return context, page


def send(page, text: str) -> None:
    box = page.locator("#msg textarea")
    box.fill(text)
    box.press("Enter")


def answer_text(tokens: int) -> str:
    """`tokens` 4-character tokens of plain prose in paragraphs, ending with the sentinel."""
    words = [_WORDS[(i * 7) % len(_WORDS)] for i in range(tokens - 2)]
    for i in range(59, len(words), 60):
        words[i] = words[i][:3] + "\n"
    return "".join(words) + "end " + SENTINEL


def bench_answer_lag(browser, app: App) -> tuple[list[list[str]], list[float]]:
    rows, lags = [], []
    for trial, delay in enumerate(ANSWER_DELAYS, start=1):
        context, page = open_page(browser, app.url)
        try:
            text = answer_text(ANSWER_TOKENS)
            app.ollama.script(Turn(Text(text), chunk_size=4, delay=delay))
            page.evaluate(_SEEN_SCRIPT, SENTINEL)
            app.wire.expect_reply()
            send(page, "tell me a long story")
            page.wait_for_function(
                "s => document.querySelector('#chat').textContent.includes(s)", arg=SENTINEL, polling="raf"
            )
            polled = time.perf_counter()
            if not app.wire.done.wait(10):
                raise RuntimeError("the scripted reply never finished on the wire")
            page.wait_for_function("() => window.__seenAt !== null")
            seen_wall = page.evaluate("window.__seenAt") / 1000
        finally:
            context.close()
        streamed = app.wire.finished - app.wire.first_byte
        lag = seen_wall - app.wire.finished_wall
        lags.append(lag)
        rows.append(
            [
                str(trial),
                f"{ANSWER_TOKENS:,}",
                f"{delay * 1000:g} ms",
                f"{streamed:.2f} s",
                f"{ANSWER_TOKENS / streamed:,.0f} tokens/s",
                f"{lag * 1000:.0f} ms",
                f"{(polled - app.wire.finished) * 1000:.0f} ms",
                "yes" if lag <= TARGET_LAG else "**no**",
            ]
        )
    return rows, lags


def big_content(size: int) -> str:
    line = "row {:07d}: the quick brown cat naps on the warm lazy dog's blanket\n"
    out, total, i = [], 0, 0
    while total < size:
        piece = line.format(i)
        out.append(piece)
        total += len(piece)
        i += 1
    return "".join(out)[:size]


def bench_big_call(browser, app: App, label: str, size: int, chunk: int, delay: float) -> list[str]:
    context, page = open_page(browser, app.url)
    try:
        call = tool_call_text("write_file", {"path": "big.txt", "content": big_content(size)})
        app.ollama.script(Turn(Text("I'll save the whole file now.\n"), Text(call), chunk_size=chunk, delay=delay))
        app.wire.expect_reply()
        send(page, "save the big file")
        started = time.perf_counter()
        pings: list[tuple[float, float]] = []  # (seconds since send, round trip)
        card_at = None
        approve = page.locator("#approve")
        while True:
            before = time.perf_counter()
            page.evaluate("1")
            after = time.perf_counter()
            pings.append((before - started, after - before))
            if card_at is None and approve.is_visible():
                card_at = time.perf_counter()
            if card_at is not None and after - card_at >= AFTER_CARD:
                break
            if after - started > 300:
                raise RuntimeError(f"{label}: no approval card after 300 s")
            time.sleep(max(0.0, PING_EVERY - (time.perf_counter() - before)))
    finally:
        context.close()
    wire = app.wire
    streamed = wire.finished - wire.first_byte
    during = [rtt for at, rtt in pings if at <= wire.finished - started]
    trips = [rtt for _, rtt in pings]
    worst_at, worst = max(pings, key=lambda ping: ping[1])
    phase = "streaming" if worst_at <= wire.finished - started else "after the stream (card, final render)"
    return [
        label,
        f"{chunk:,} chars" + (f", {delay * 1000:g} ms apart" if delay else ", no delay"),
        f"{streamed:.1f} s ({len(call) / streamed / 1e6:.2f} MB/s)",
        f"{(card_at - wire.finished):.2f} s",
        str(len(trips)),
        f"{_p95(during) * 1000:.0f} / {max(during, default=0) * 1000:.0f} ms",
        f"{_p95(trips) * 1000:.0f} / {worst * 1000:.0f} ms ({phase})",
        "yes" if worst < TARGET_PING else "**no**",
    ]


def run() -> str:
    with launched_app() as app, chromium() as browser:
        answer_rows, lags = bench_answer_lag(browser, app)
        big_rows = [bench_big_call(browser, app, *config) for config in BIG_CALLS]
        version = browser.version
    header = table(["nproc", "CPU", "Chromium"], [[str(len(os.sched_getaffinity(0))), _cpu(), version]])
    answer = table(
        [
            "trial",
            "tokens",
            "chunk delay",
            "stream time",
            "achieved rate",
            "last chunk → on screen (in page)",
            "(Playwright poll)",
            f"≤ {TARGET_LAG * 1000:.0f} ms",
        ],
        answer_rows,
    )
    big = table(
        [
            "write_file content",
            "chunks",
            "stream time",
            "stream end → card",
            "pings",
            "ping p95 / max while streaming",
            "ping p95 / max overall",
            f"< {TARGET_PING * 1000:.0f} ms",
        ],
        big_rows,
    )
    return (
        "### Machine\n\n"
        + header
        + f"\n### (a) {ANSWER_TOKENS:,}-token answer: model's last chunk to last token on screen\n\n"
        + answer
        + f"\nMedian {statistics.median(lags) * 1000:.0f} ms.\n"
        + "\n### (b) huge write_file argument: `page.evaluate('1')` round trips every 100 ms\n\n"
        + big
    )


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return "unknown"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


if __name__ == "__main__":
    print(run())
