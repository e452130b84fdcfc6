"""The real engine (issue 31): tokens through the page against the raw `openai` client, and what the page costs.

Run from the repository root: `python -m bench.bench_engine` (needs /usr/bin/chromium; uses llama-server and a
model when tests/real_engine.py finds them, else a scripted llama.cpp at a fixed token rate).

One run, the page and the raw client taking turns on the same server:
- **the page**: the app in its own process, pointed at the server through a relay that notes each token's time on
  the wire (bench/wiretap.py); headless Chromium sends the prompt and shows the answer. The browser's CPU seconds
  (every Chromium process, from /proc), the app's and the server's are read before and after each answer.
- **the raw client**: `openai`'s `chat.completions.create(stream=True)` replaying the very request the app sent.
- **Stop**: an answer stopped from the page after a few tokens; the time to the server's connection closing and,
  on llama-server, to `/slots` saying no slot is busy.

Both page rows run in the same run: the page as it streams now, and as it streamed before issue 31
(`PAGE_BEFORE`: a frame every 50 ms through Gradio's Markdown and sanitizer), each in its own app process.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai

from bench.bench_ui import VIEWPORT, chromium, send
from bench.child import served_in_child
from bench.load import OWNER, OWNER_HEADERS, free_port
from bench.proccpu import browser_seconds, cpu_seconds, descendants
from bench.report import machine, table
from bench.wiretap import Tap

PROMPT = "Tell me a long story about a cat who learns to sail, in plain prose with many paragraphs."
TOKENS = 256
ROUNDS = 3
"""Answers each way (page now, page before, raw client), alternating."""
SCRIPTED_RATE = 20.0
"""Tokens a second of the scripted engine, as a small model on a laptop's CPU."""
SCRIPTED_MODEL = "qwen2.5-coder-0.5b-instruct"
STOP_AFTER = 20
"""Tokens on the wire before Stop is pressed."""
RATIO_GOAL = 0.95

_STORY = (
    "The cat sat by the harbour and watched the boats. Every morning the wind came in from the sea, and every "
    "morning she wondered where it had been. One day she found a small boat with a torn sail, and she decided "
    "that it would be hers. "
)

_FIRST_ANSWER_SCRIPT = """() => {
  const chat = document.querySelector('#chat');
  window.__firstToken = null; window.__lastChange = null;
  new MutationObserver(() => {
    const now = performance.timeOrigin + performance.now();
    window.__lastChange = now;
    if (window.__firstToken === null && chat.querySelector('[data-testid="bot"]')) window.__firstToken = now;
  }).observe(chat, {subtree: true, childList: true, characterData: true});
}"""


@dataclass(frozen=True)
class Engine:
    url: str
    """The OpenAI-compatible base URL, ending in /v1."""
    model: str
    label: str
    pid: int | None = None
    """The server's process, for its CPU time (None for the scripted one, which shares a process)."""
    slots: str | None = None
    """llama-server's /slots, to see Stop free the slot."""


@dataclass(frozen=True)
class Answer:
    """One answer, timed: its tokens and their rate, the first token seen, and the CPU seconds spent meanwhile."""

    tokens: int
    rate: float
    first_token: float
    browser_cpu: float = 0.0
    app_cpu: float = 0.0
    engine_cpu: float = 0.0


def serve_scripted(model: str, rate: str) -> None:
    """The scripted engine's process: the same story for every request at `rate` tokens a second."""
    from tests.scripted_openai import Content, ScriptedOpenAI, Turn

    turn = Turn(Content((_STORY * 40)[: TOKENS * 4]), delay=1 / float(rate))

    class Steady(ScriptedOpenAI):
        def _next_turn(self) -> Turn:
            return turn

    with Steady(dialect="llamacpp", models={model: 4096}) as server:
        print(server.url, flush=True)
        sys.stdin.read()


@contextlib.contextmanager
def engine() -> Iterator[Engine]:
    """llama-server with a small model when one is found, else the scripted engine."""
    try:
        from tests.real_engine import find_engine, root_of, running_server
    except ImportError:
        found = None
    else:
        found = find_engine()
    if found is None:
        with served_in_child("bench.bench_engine", "serve_scripted", SCRIPTED_MODEL, str(SCRIPTED_RATE)) as url:
            yield Engine(url, SCRIPTED_MODEL, f"scripted llama.cpp, {SCRIPTED_RATE:g} tokens/s")
        return
    # Greedy, one slot, and every answer TOKENS long: a small model ends its story after a dozen tokens, too few
    # for a rate (`--ignore-eos` bars the end tokens; the page and the raw client get the same answer). No prompt
    # cache: the raw client replays the page's request right after it, and would otherwise find the whole prompt
    # already read (its first token in 0.2 s against the page's 20). A thread per core, as llama.cpp starts by
    # default: the page's CPU then takes from the engine's, as on a person's laptop (the tests' one thread would
    # leave the page a core of its own).
    options = ("--ignore-eos", "--no-cache-prompt")
    with running_server(found, max_tokens=TOKENS, threads=os.cpu_count() or 1, options=options) as url:
        pid = next(pid for pid in descendants(os.getpid()) if _name(pid) == "llama-server")
        yield Engine(url, found.model.stem, f"llama-server, {found.model.stem}", pid, root_of(url) + "/slots")


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def serve_app(workspace: str, data_dir: str, openai_url: str, model: str, port: str, mode: str) -> None:
    """The app's own process (`mode` "before" streams as the page did before issue 31); serves until stdin closes."""
    from meowgent.config import Settings

    if mode:
        _pace(*mode.split(":"))
    from meowgent.ui.app import serve

    settings = Settings(
        workspace=Path(workspace),
        openai_urls=(openai_url,),
        model=model,
        port=int(port),
        data_dir=Path(data_dir),
        read_timeout=120,
        token=OWNER,
    )
    demo, url, _ = serve(settings)
    print(url, flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stdin.read()
    demo.close()


def _pace(seconds: str, draw: str) -> None:
    """Streams as the page did before issue 31, or half-way (in the app's own process, before it starts): a frame
    at most every `seconds`, and with `draw` "whole" every component in every frame."""
    from meowgent.ui.state import follow

    follow.FRAME_SECONDS = float(seconds)
    if draw == "whole":
        follow.chat_frame = follow.frame


@dataclass(frozen=True)
class AppProcess:
    url: str
    pid: int


@contextlib.contextmanager
def app_process(openai_url: str, model: str, mode: str) -> Iterator[AppProcess]:
    import subprocess

    from bench.load import _read_url

    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    os.environ["MEOWGENT_TOKEN"] = ""  # a script on a single-user machine
    with tempfile.TemporaryDirectory(prefix="meowgent-engine-") as tmp:
        (Path(tmp) / "workspace").mkdir()
        args = [str(Path(tmp) / "workspace"), str(Path(tmp) / "data"), openai_url, model, str(free_port()), mode]
        code = "import sys; from bench.bench_engine import serve_app; serve_app(*sys.argv[1:])"
        root = Path(__file__).resolve().parent.parent
        with subprocess.Popen(
            [sys.executable, "-c", code, *args], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        ) as process:
            try:
                yield AppProcess(_read_url(process), process.pid)
            finally:
                process.stdin.close()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


def open_page(browser, url: str):
    from playwright.sync_api import expect

    context = browser.new_context(viewport=VIEWPORT, extra_http_headers=OWNER_HEADERS)
    context.set_default_timeout(120_000)
    page = context.new_page()
    page.goto(url)
    expect(page.locator("#status")).to_contain_text("Connected", timeout=60_000)
    return context, page


def _counted(times: list[float], timings: dict | None) -> tuple[int, float]:
    """The answer's tokens and their rate: llama.cpp's own count and clock (`timings`) where it sends them, else the
    chunks on the wire between the first and the last. A chunk is not a token: a character of several tokens (an
    emoji) comes in one chunk once it is whole, so the wire alone undercounts (110 chunks for 256 tokens)."""
    timings = timings or {}
    rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0
    return timings.get("predicted_n") or len(times), timings.get("predicted_per_second") or rate


def page_answer(browser, app: AppProcess, tap: Tap, eng: Engine) -> tuple[Answer, dict]:
    """One answer through the page; the request the app sent, to replay."""
    context, page = open_page(browser, app.url)
    try:
        page.evaluate(_FIRST_ANSWER_SCRIPT)
        before = (browser_seconds(), cpu_seconds(app.pid), cpu_seconds(eng.pid) if eng.pid else 0.0)
        number, sent = len(tap.replies), time.time()
        send(page, PROMPT)
        reply = tap.reply(number, 60)
        reply.done.wait(600)
        page.locator("#send").wait_for(state="visible", timeout=60_000)
        after = (browser_seconds(), cpu_seconds(app.pid), cpu_seconds(eng.pid) if eng.pid else 0.0)
        first_seen = page.evaluate("window.__firstToken") / 1000
    finally:
        context.close()
    answer = Answer(
        *_counted(reply.tokens, reply.timings),
        first_token=first_seen - sent,
        browser_cpu=after[0] - before[0],
        app_cpu=after[1] - before[1],
        engine_cpu=after[2] - before[2],
    )
    return answer, reply.body


def direct_answer(body: dict, eng: Engine) -> Answer:
    """The same request through the raw `openai` client, straight to the server."""
    client = openai.OpenAI(base_url=eng.url, api_key="none", max_retries=0)
    known = {"model", "messages", "tools", "stream", "stream_options"}
    args = {key: value for key, value in body.items() if key in known}
    extra = {key: value for key, value in body.items() if key not in known}
    engine_before = cpu_seconds(eng.pid) if eng.pid else 0.0
    started = time.time()
    times, timings = [], None
    for chunk in client.chat.completions.create(**args, extra_body=extra):
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is not None and (delta.content or getattr(delta, "reasoning_content", None)):
            times.append(time.time())
        timings = (chunk.model_extra or {}).get("timings") or timings
    engine_cpu = (cpu_seconds(eng.pid) - engine_before) if eng.pid else 0.0
    return Answer(*_counted(times, timings), first_token=times[0] - started, engine_cpu=engine_cpu)


def stop_answer(browser, app: AppProcess, tap: Tap, eng: Engine) -> tuple[float, float | None]:
    """Stop pressed after STOP_AFTER tokens: seconds to the server's connection closing, and to an idle slot."""
    context, page = open_page(browser, app.url)
    try:
        number = len(tap.replies)
        send(page, PROMPT)
        reply = tap.reply(number, 60)
        while len(reply.tokens) < STOP_AFTER and not reply.done.is_set():
            time.sleep(0.01)
        if reply.done.is_set():
            raise RuntimeError(f"the answer ended after {len(reply.tokens)} tokens, before Stop could be pressed")
        pressed = time.time()
        page.locator("#stop").click(timeout=30_000)
        reply.done.wait(60)
        idle = _idle_slot(eng.slots, pressed) if eng.slots else None
    finally:
        context.close()
    return (reply.hung_up or reply.ended) - pressed, idle


def _idle_slot(slots_url: str, since: float, timeout: float = 30) -> float:
    while time.time() - since < timeout:
        with urllib.request.urlopen(slots_url, timeout=5) as response:
            slots = json.load(response)
        if not any(slot.get("is_processing") for slot in slots):
            return time.time() - since
        time.sleep(0.01)
    raise TimeoutError("the server's slot stayed busy after Stop")


PAGES = {
    "0.05:whole": "page before issue 31: every component, 20 frames/s",
    "0.05:chat": "page, the chat alone, 20 frames/s",
    "0.2:whole": "page, every component, 5 frames/s",
    "": "page now: the chat alone, 5 frames/s",
}
"""The app's pace (`_pace`), and the row's name; "" is the code as it is."""
QUICK_PAGES = ("0.05:whole", "")


def run(quick: bool = False) -> str:
    """With `quick`, one round of the page before issue 31 and now (a real engine may give 3 tokens a second)."""
    rounds, pages = (1, {mode: PAGES[mode] for mode in QUICK_PAGES}) if quick else (ROUNDS, PAGES)
    results: dict[str, list[Answer]] = {"direct": [], **{mode: [] for mode in pages}}
    with engine() as eng, Tap(eng.url.removesuffix("/v1")) as tap, chromium() as browser, contextlib.ExitStack() as on:
        started = {mode: on.enter_context(app_process(tap.url, eng.model, mode)) for mode in pages}
        for _ in range(rounds):
            for mode, app in started.items():
                answer, body = page_answer(browser, app, tap, eng)
                results[mode].append(answer)
                results["direct"].append(direct_answer(body, eng))
        try:
            stop: Stop = stop_answer(browser, started[""], tap, eng)
        except (RuntimeError, TimeoutError) as exc:  # keep the rates measured; say why Stop was not
            stop = str(exc)
    return report(eng, results, pages, stop)


Stop = tuple[float, float | None] | str
"""Seconds from the click to the server's connection closing and to an idle slot, or why it was not measured."""


def report(eng: Engine, results: dict[str, list[Answer]], pages: dict[str, str], stop: Stop) -> str:
    direct = statistics.median(a.rate for a in results["direct"])
    rows = []
    for key, label in [("direct", "raw `openai` client"), *pages.items()]:
        answers = results[key]
        rate = statistics.median(a.rate for a in answers)
        tokens = statistics.median(a.tokens for a in answers)
        per_100 = [100 * a.browser_cpu / a.tokens for a in answers if a.tokens]
        rows.append(
            [
                label,
                f"{tokens:.0f}",
                f"{rate:.1f}",
                f"{rate / direct:.2f}",
                f"{statistics.median(a.first_token for a in answers):.2f} s",
                f"{statistics.median(per_100):.2f}" if key != "direct" else "",
                f"{statistics.median(100 * a.app_cpu / a.tokens for a in answers):.2f}" if key != "direct" else "",
                f"{statistics.median(100 * a.engine_cpu / a.tokens for a in answers):.2f}" if eng.pid else "",
            ]
        )
    out = f"Engine: {eng.label}. Machine: {machine()}.\n\n" + table(
        [
            "reader",
            "tokens",
            "tokens/s (median)",
            "× raw",
            "time to first token",
            "browser CPU s / 100 tokens",
            "app CPU s / 100 tokens",
            "engine CPU s / 100 tokens",
        ],
        rows,
    )
    if isinstance(stop, str):
        return out + f"\nStop: not measured ({stop}).\n"
    closed, idle = stop
    out += f"\nStop after {STOP_AFTER} tokens: the server's connection closed {closed:.2f} s after the click"
    out += f"; its slot idle after {idle:.2f} s.\n" if idle is not None else " (no /slots to read).\n"
    return out


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
