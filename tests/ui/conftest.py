"""The real app, launched in this process against a scripted model server.

Every app a test starts has the start token `OWNER_TOKEN`; every browser context from `chromium` and every client
a test makes sends it (`OWNER_HEADERS`), as the owner's browser and scripts do. A test of strangers makes its own.
"""

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import gradio as gr
import httpx
import pytest
from gradio_client import Client
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from meowgent.config import Secret, Settings
from meowgent.ui.app import serve
from meowgent.ui.html.safehtml import shown_text as html_text
from meowgent.ui.routes.owner import OwnerToken
from tests.scripted_ollama import ScriptedOllama

OWNER_TOKEN = "the-owners-start-token-in-tests"
OWNER = Secret(OWNER_TOKEN)
"""`Settings.token` of every app the tests start."""
OWNER_HEADERS = {"Authorization": f"token {OWNER_TOKEN}"}
"""What the owner's scripts send (gradio_client's `headers=`, httpx's)."""


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


def port_is_free(port: int) -> bool:
    """Whether an app could listen on `port` now, checked as Gradio checks it (a closed app's connections in
    TIME_WAIT do not count)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class AppPort:
    """The port the apps of this test process take in turn.

    A browser's cache is keyed by URL, port included: on one port, each new app's page gets Gradio's 1.9 MB of
    scripts from the warm cache of a reused browser context (`OwnersBrowser`) instead of fetching and compiling them
    again. Measured on a new app each time, app start included: 2.9 CPU-s a test against 3.3 on a new port."""

    kept: ClassVar[int] = 0

    @classmethod
    def take(cls) -> int:
        """The kept port, or a fresh one while it is taken (a test's second app, or another program)."""
        if cls.kept and port_is_free(cls.kept):
            return cls.kept
        port = free_port()
        cls.kept = cls.kept or port
        return port


def serve_for_test(settings: Settings, **options: Any) -> tuple[gr.Blocks, str, Settings]:
    """`serve` the app on `AppPort`'s port, or on a fresh one if that fails; returns it with its URL and the settings
    it runs with. A port is only known to be free when looked at, a moment before the app listens: in a busy run
    another worker's app or model server can take it in between (seen once in a full run: "Cannot find empty port")."""
    try:
        settings = replace(settings, port=AppPort.take())
        demo, url, _ = serve(settings, **options)
    except OSError:
        settings = replace(settings, port=free_port())
        demo, url, _ = serve(settings, **options)
    return demo, url, settings


@pytest.fixture
def app_options() -> dict[str, Any]:
    """Overrides for `running_app`: the server's `models` and `version`, the app's `tools` (a ToolRegistry), and
    any Settings field. A test module that needs other models (or an older Ollama) defines its own `app_options`
    fixture; one test parametrizes it."""
    return {}


@contextmanager
def started_app(folder: Path, options: dict[str, Any]) -> Iterator[RunningApp]:
    """A fresh app with its workspace and data in `folder` and its own scripted model server (`options` as for
    `app_options`); stopped on leaving."""
    workspace = folder / "workspace"
    workspace.mkdir()
    options = dict(options)
    server = {key: options.pop(key) for key in ("models", "version") if key in options}
    tools = options.pop("tools", None)
    with ScriptedOllama(server.pop("models", None), **server) as ollama:
        settings = Settings(
            **{
                "workspace": workspace,
                "ollama_host": ollama.url,
                "data_dir": folder / "data",
                "shell_timeout": 30,
                "read_timeout": 5,
                "token": OWNER,
                **options,
            }
        )
        demo, url, settings = serve_for_test(settings, tools=tools)
        app = RunningApp(url, ollama, workspace, settings, demo)
        try:
            yield app
        finally:
            app.demo.close()


@pytest.fixture
def running_app(tmp_path: Path, app_options: dict[str, Any]) -> Iterator[RunningApp]:
    """A fresh app with its own workspace and scripted model server; script turns on `.ollama`."""
    with started_app(tmp_path, app_options) as app:
        yield app


CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENS = {
    "laptop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True},
}
"""The two screens the page is made for; a phone is narrow, touch-driven and mobile."""

IN_VIEW = """(element) => {
    const box = element.getBoundingClientRect();
    const inside = box.width > 0 && box.height > 0 && box.left >= 0 && box.top >= 0
        && box.right <= window.innerWidth && box.bottom <= window.innerHeight;
    const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return inside && element.contains(top);
}"""
"""Wholly inside the window and not covered by anything else (the sidebar, say)."""


def in_view(locator) -> bool:
    """The element is wholly on screen, uncovered, as it stands: nothing is scrolled to find it."""
    return locator.evaluate(IN_VIEW)


def page_scroll(page) -> int:
    """How far the page itself is, or could be, scrolled (0 for a page that is exactly one screen)."""
    return page.evaluate("() => Math.max(window.scrollY, document.scrollingElement.scrollHeight - window.innerHeight)")


def sign_in(page, url: str) -> None:
    """Give the page's context the cookie that opening the printed link leaves: the browser's own downloads send
    cookies, never a context's extra headers."""
    owner = OwnerToken(OWNER_TOKEN, urlsplit(url).port)
    page.context.add_cookies([{"name": owner.cookie_name, "value": owner.cookie_value, "url": url}])


LOAD_MS = 60_000
"""How long a page may take to load and run its on_load: Gradio's page is heavy, and a loaded machine slow (30 s ran
out with `yes` holding one of 2 cores and three workers' browsers on the other)."""
WAIT_MS = 30_000
"""How long a page may take to show what an action brings (an answer, a card, a panel): every browser context's
and `expect`'s deadline. On a quiet machine these come in well under a second; this much leaves room for a core
taken away (10 s ran out for `#approve` under that load). A check that something does NOT come never waits this
long: `expect(...).not_to_...` holds at once, and a test that waits on purpose says how long (assert_stops_growing)."""
expect.set_options(timeout=WAIT_MS)
CLIENT_TIMEOUT = httpx.Timeout(WAIT_MS / 1000)
"""For each request of a gradio_client (its config, the API's description, an event's stream, which Gradio keeps
alive every 15 s): httpx's 5 s ran out for the description, a few hundred KB made per request, with `yes` holding
both cores."""


LOOPBACK_TLS = ssl.create_default_context()
"""The one TLS context of the suite's HTTP clients that are made again and again. httpx loads the CA list for each
new client (29 ms of CPU here), though these only speak plain HTTP to 127.0.0.1; gradio_client makes two a call."""


def owners_client(url: str, *, headers: dict[str, str] = OWNER_HEADERS, **options: Any) -> Client:
    """A gradio_client of the app at `url`, as the owner's scripts make one (the start token in `headers`)."""
    # gradio_client hands `ssl_verify` to httpx's `verify`, which takes a context as well as a bool.
    return Client(
        url,
        verbose=False,
        headers=headers,
        httpx_kwargs={"timeout": CLIENT_TIMEOUT},
        ssl_verify=LOOPBACK_TLS,  # type: ignore[arg-type]
        **options,
    )


LOADED_CHAT = "#chats input:checked"
"""The chat list's picked chat: on_load fills the list and picks one, as its last step."""


def wait_for_load(page, *, banner: str = "Connected") -> None:
    """Wait until the page's on_load has run and the status line was read after it (its banner contains `banner`).

    Acting sooner races on_load: a language switch, a click on a chat or a message can land before on_load shows
    the page's chat, and on_load then overwrites what the click did."""
    expect(page.locator(LOADED_CHAT)).to_have_count(1, timeout=LOAD_MS)
    expect(page.locator("#status")).to_contain_text(banner, timeout=LOAD_MS)


def wait_for_event_end(page, first_output: str) -> None:
    """Wait until no event whose first output is `first_output` (a selector) runs, so that the next click on its
    trigger is taken.

    The app draws an event's progress on its first output alone, in Gradio's status tracker, hidden once the event
    has ended. Until then a click on the event's trigger is dropped (Gradio's trigger_mode "once"), and what the
    event shows (its last words, a card, a toast) comes before its end. Call it once the event is known to have
    started (something it shows is on the page): before that, the tracker is hidden too."""
    expect(page.locator(f"{first_output} [data-testid=status-tracker].hide")).to_have_count(1)


def wait_for_answer_end(page) -> None:
    """Wait until the answer's event has ended, so that the next Send is taken (the message box is its first
    output; Stop's hiding also comes a frame before the end)."""
    wait_for_event_end(page, "#msg")


FIRST_SHOWING = """([pattern, least, ids]) => {
    const text = document.getElementById("chat").innerText;
    const found = new RegExp(pattern).exec(text);
    if (!found || Number(found[1] ?? least) < least) return null;
    return {chat: text, shown: ids.filter((id) => document.getElementById(id)?.checkVisibility())};
}"""


@dataclass(frozen=True)
class Moment:
    """What the page showed at one moment."""

    chat: str
    """The chat's text."""
    shown: frozenset[str]
    """Which of the asked-for element ids were visible."""


def first_moment_showing(
    page, pattern: str, ids: tuple[str, ...] = ("approve", "stop"), *, counting: int = 0
) -> Moment:
    """The page at the first animation frame its chat's text matches `pattern` (a regular expression, in the syntax
    Python and JavaScript share) and, when the pattern has a group, that group counts at least `counting`. Separate
    reads (an `expect`, then `inner_text` or another `expect`) are up to a second apart, and more on a busy machine: a
    stream may have ended between them.

    Wait for what stays true once it is (a count that grows), not for a line of a live panel: the panel shows only
    its newest lines, and on a busy machine no frame may fall while a given line is among them."""
    moment = page.wait_for_function(FIRST_SHOWING, arg=[pattern, counting, list(ids)]).json_value()
    return Moment(moment["chat"], frozenset(moment["shown"]))


def send(page, text: str, *, by_button: bool = False) -> None:
    """Type `text` and send it with Enter (or the Send button), once the previous answer's event has ended: Gradio
    drops a Send while that event is still ending, which comes after the answer shows its end (Stopped, a card)."""
    wait_for_answer_end(page)
    box = page.locator("#msg textarea")
    box.fill(text)
    if by_button:
        page.locator("#send").click()
    else:
        box.press("Enter")


def open_app(page, url: str, *, banner: str = "Connected") -> None:
    """Open the app as the owner's browser does (its cookie, see `sign_in`) and wait for the page's on_load."""
    sign_in(page, url)
    page.goto(url, timeout=LOAD_MS)
    wait_for_load(page, banner=banner)


def reload_app(page, *, banner: str = "Connected") -> None:
    """Reload the page and wait for its on_load. Only for an app that kept running: after a restart, Gradio's tab
    reloads itself once it reconnects, racing this reload; open a new tab with `open_app` instead."""
    page.reload(timeout=LOAD_MS)
    wait_for_load(page, banner=banner)


PAGE_DIARY = """(() => {
    const diary = (window.meowgentDiary = []);
    const note = (line) => diary.push(`${Math.round(performance.now())} ms ${line}`);
    const fetched = window.fetch;
    window.fetch = function (resource, options) {
        try {  // the diary never stands in the page's way
            if (String(resource.url ?? resource).includes("/queue/join") && typeof options?.body === "string") {
                const event = JSON.parse(options.body);
                const named = window.gradio_config?.dependencies?.find((fn) => fn.id === event.fn_index)?.api_name;
                note(`event ${named ?? event.fn_index}: ${JSON.stringify(event.data).slice(0, 240)}`);
            }
        } catch (error) {
            note(`unreadable event: ${error}`);
        }
        return fetched.apply(this, arguments);
    };
    const noted = new WeakSet();
    const waiting = new MutationObserver(() => {
        const toasts = document.querySelector(".toast-wrap");
        if (!toasts) return;
        waiting.disconnect();
        new MutationObserver(() => {
            for (const toast of toasts.querySelectorAll(".toast-body"))
                if (!noted.has(toast)) {
                    noted.add(toast);
                    // Its words are drawn just after the toast itself.
                    setTimeout(() => note(`toast: ${toast.innerText.replace(/\\s+/g, " ")}`), 100);
                }
        }).observe(toasts, {childList: true, subtree: true});
    });
    waiting.observe(document, {childList: true, subtree: true});
    // A page that is not Gradio's (the watch page) has no toast box to wait for.
    document.addEventListener("DOMContentLoaded", () => document.querySelector("gradio-app") || waiting.disconnect());
})();"""
"""Kept by each page, read only for a failed test's report: the events the page ran with their inputs (a failure
seen once in many runs is often a value the page had not yet taken when a click came) and the toasts it showed (gone
before the report is written). In the page, so that a passing test pays nothing for it; the toasts are watched only
in Gradio's toast box, not over the whole page."""

PAGE_STATE = """() => ({
    status: document.getElementById("status")?.innerText ?? null,
    picked_chats: document.querySelectorAll("#chats input:checked").length,
    toasts: [...document.querySelectorAll(".toast-body")].map((toast) => toast.innerText),
    text: document.body.innerText.slice(0, 300),
    diary: window.meowgentDiary ?? [],
})"""


class PageDiary:
    """What each open browser context's pages said and showed, for the report of a browser test that fails: a
    failure seen once in many runs is read from its report, not reproduced."""

    open: ClassVar[dict[Any, list[str]]] = {}
    """Each lent context's console errors, page errors and failed requests, in order."""

    @classmethod
    def keep(cls, context) -> None:
        """Start keeping `context`'s diary (once for each context: `OwnersBrowser` lends one to test after test)."""
        context.add_init_script(PAGE_DIARY)
        context.on("console", lambda message: message.type == "error" and cls.note(context, f"console: {message.text}"))
        context.on("weberror", lambda error: cls.note(context, f"page error: {error.error}"))
        context.on(
            "requestfailed",
            lambda request: cls.unusual(request) and cls.note(context, f"failed: {request.url} {request.failure}"),
        )
        context.on("close", lambda _: cls.open.pop(context, None))

    @classmethod
    def note(cls, context, line: str) -> None:
        """Add a line to the diary of `context`'s present test (none while it waits in the pool)."""
        if context in cls.open:
            cls.open[context].append(line)

    @staticmethod
    def unusual(request: Any) -> bool:
        """Not the event stream the page drops each time an answer's event ends (seen in every report: noise)."""
        return not (urlsplit(request.url).path.endswith("/queue/data") and request.failure == "net::ERR_ABORTED")

    @classmethod
    def report(cls) -> str:
        lines = []
        for context, said in cls.open.items():
            for page in tests_pages(context):
                try:
                    state = page.wait_for_function(PAGE_STATE, timeout=2_000).json_value()  # with a deadline
                except Exception as exc:  # a page that hangs or has gone is worth a line too
                    lines.append(f"{page.url}: unreadable ({type(exc).__name__})")
                    continue
                diary = state.pop("diary")
                lines.append(f"{page.url}: {state}")
                lines.extend(f"  {line}" for line in diary)
            lines.extend(said)
        return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """Every browser context a test got (a fixture's of the test included) goes back at its end, its pages closed,
    before its fixtures stop its apps: an open page holds its app's event stream, and an app waits 5 s for its
    connections to end before it stops."""
    for context, browser in list(OwnersBrowser.lent.items()):
        browser.take_back(context)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call" and report.failed and PageDiary.open:
        report.sections.append(("open pages at the failure", PageDiary.report()))
    return report


def tests_pages(context) -> list[Any]:
    """The pages the test opened in a lent context: all but the first, the blank page its cleaner works from."""
    return context.pages[1:]


def web_origin(url: str) -> set[str]:
    """`url`'s scheme, host and port, as Chromium keys what a page stores (none for about:blank and the like)."""
    parts = urlsplit(url)
    return {f"{parts.scheme}://{parts.netloc}"} if parts.scheme in ("http", "https") else set()


@dataclass
class KeptContext:
    """What `OwnersBrowser` keeps of one of its contexts."""

    kind: str
    """Its options (as JSON): it is lent only to a test that asks for the same."""
    cleaner: Any
    """A DevTools session of a blank page of its own, which clears what the test's pages stored."""
    visited: set[str] = field(default_factory=set)
    """The origins its pages went to since it was last cleared."""

    def went_to(self, frame: Any) -> None:
        self.visited.update(web_origin(frame.url))


class OwnersBrowser:
    """A Browser whose contexts show the start token, as the owner's browser does once it opened the printed link
    (the tests of the link and its cookie, in test_owner.py, use contexts of `.unsigned`).

    Its contexts are lent to a test and taken back at the test's end, to be lent again with Chromium's HTTP cache
    warm (see `AppPort`). Everything else a test could leave goes: pages, cookies, permissions, and the data stored
    for any app's origin (the presenter's localStorage, say). A context is lent only for the same options, so a test
    that asks for a phone gets a phone. `close()` on a lent context still closes it for good."""

    lent: ClassVar[dict[Any, "OwnersBrowser"]] = {}
    """The contexts tests have now, each with the browser it goes back to."""

    def __init__(self, browser) -> None:
        self.unsigned = browser
        self._waiting: dict[str, list[Any]] = {}
        """Contexts waiting to be lent, by their options (as JSON)."""
        self._kept: dict[Any, KeptContext] = {}
        """What this browser keeps of each of its open contexts."""

    def new_context(self, **options):
        options = {"extra_http_headers": OWNER_HEADERS, **options}
        kind = json.dumps(options, sort_keys=True)
        waiting = self._waiting.setdefault(kind, [])
        context = waiting.pop() if waiting else self._new(options, kind)
        context.set_default_timeout(WAIT_MS)
        context.set_default_navigation_timeout(LOAD_MS)
        self.lent[context] = self
        PageDiary.open[context] = []
        return context

    def _new(self, options: dict[str, Any], kind: str):
        context = self.unsigned.new_context(**options)
        kept = self._kept[context] = KeptContext(kind, cleaner=context.new_cdp_session(context.new_page()))
        context.on("page", lambda page: page.on("framenavigated", kept.went_to))
        PageDiary.keep(context)
        context.on("close", lambda _: self._forget(context))
        return context

    def _forget(self, context) -> None:
        self.lent.pop(context, None)
        waiting = self._waiting[self._kept.pop(context).kind]
        if context in waiting:
            waiting.remove(context)

    def take_back(self, context) -> None:
        """Clear what the test left in `context` and keep it for the next test that asks for the same options.

        The test's pages close first, so that none can store anything after the clearing (Gradio's BrowserState
        writes the owner key whenever it changes). The clearing is done from a blank page the context keeps for it
        (the test may have closed all of its own; a new page for each clearing would cost 0.24 CPU-s)."""
        del self.lent[context]
        PageDiary.open.pop(context, None)
        kept = self._kept[context]
        try:
            for page in tests_pages(context):
                page.close()
            for visited in kept.visited:  # localStorage, IndexedDB, cookies and the like; not the HTTP cache
                kept.cleaner.send("Storage.clearDataForOrigin", {"origin": visited, "storageTypes": "all"})
            kept.visited.clear()
            context.clear_cookies()
            context.clear_permissions()
        except PlaywrightError:  # a crashed page, say: a context that cannot be cleared is not lent again
            context.close()
            return
        self._waiting[kept.kind].append(context)

    def __getattr__(self, name: str):
        return getattr(self.unsigned, name)


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for a test module (each test gets its own context, signed in as the owner). Not one for
    the whole process: Playwright's sync API keeps an event loop running while it is open, and the asyncio.run of
    later tests would fail."""
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            yield OwnersBrowser(browser)
        finally:
            browser.close()


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

        do_POST = do_GET  # a form's post is as much a leak

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Listener(f"http://127.0.0.1:{server.server_address[1]}", heard)
    finally:
        server.shutdown()
        server.server_close()
