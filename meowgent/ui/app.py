"""The page: `compose_app(settings)` lays out its panels and wires them; `serve` starts it.

Each panel (`meowgent.ui.panels`) lays itself out where it is made and binds its events in `wire()`. To add
one, write its module there, make it in the layout below, and wire it with the others.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import logging
import os
import sys
from typing import Any

import gradio as gr
from starlette.middleware import Middleware

from meowgent.agent.loop import Agent
from meowgent.chats.service import ChatService
from meowgent.config import Settings
from meowgent.files.checkpoints import Checkpoints
from meowgent.llm.backend import ModelBackend
from meowgent.llm.hosts import backend_for
from meowgent.mcp.adapter import McpTools
from meowgent.mcp.config import config_path
from meowgent.persist.private import private_temp_folder
from meowgent.persist.store import Store
from meowgent.policy.rulebook import Rulebook
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.sandbox import NoSandbox, sandbox_for
from meowgent.ui.page import CSS, HEAD, ON_LOAD
from meowgent.ui.panels.chat import ChatPanel
from meowgent.ui.panels.files import FilesPanel
from meowgent.ui.panels.mcp import McpPanel
from meowgent.ui.panels.rules import RulesPanel
from meowgent.ui.panels.shared import Page
from meowgent.ui.panels.sidebar import SidebarPanel, ThisChatPanel
from meowgent.ui.panels.topbar import TopBar
from meowgent.ui.panels.watch import WatchPanel
from meowgent.ui.routes.fileroutes import FileRoutes, Links
from meowgent.ui.routes.gradiofix import MendedTracker, mended_chunks
from meowgent.ui.routes.guard import Guard, addresses_for
from meowgent.ui.routes.login import (
    LOGIN_MESSAGE,
    LoginThrottle,
    RememberedBrowsers,
    RememberLogins,
    logged_in,
    login_key,
)
from meowgent.ui.routes.owner import LoginGate, OwnerToken, TokenGate
from meowgent.ui.routes.watchroutes import Watching
from meowgent.ui.state.approval import Commands
from meowgent.ui.state.presenter import PRESENTER_CSS
from meowgent.ui.state.render import CHAT_CSS
from meowgent.ui.state.request import PageContext
from meowgent.ui.state.snapshot import ContextWindows, Snapshots

log = logging.getLogger(__name__)

DATABASE = "meowgent.db"
EXPORT_SECONDS = 600
"""Downloads are kept this long (and at most until the app stops), then deleted."""
QUEUE_POLL_SECONDS = 0.01
"""How often Gradio's queue looks for new events while it has none (see `serve`)."""


PAGE_OPTIONS: dict[str, Any] = {
    "title": "Meowgent",
    "fill_height": True,
    "delete_cache": (EXPORT_SECONDS, EXPORT_SECONDS),
    # Gradio reports each start to its servers and asks them for its latest version unless told not to. app.py sets
    # GRADIO_ANALYTICS_ENABLED; this holds for an app composed by any other program too (the tests, say).
    "analytics_enabled": False,
}
"""Gradio's options for the page's Blocks."""


class App(gr.Blocks):
    """The page's Blocks; closing it also stops the MCP servers the app started and its watch links' broadcasts,
    and writes what its chats streamed (two apps share nothing)."""

    def __init__(
        self, service: ChatService, mcp_tools: McpTools, watching: Watching, *, file_links: Links, **options: Any
    ) -> None:
        super().__init__(**options)
        self.service = service
        self.mcp_tools = mcp_tools
        self.watching = watching
        self.file_links = file_links
        """The Files panel's download links and upload tickets, which `serve`'s middleware honours."""

    def close(self, verbose: bool = True) -> None:
        # First: its viewers' streams end (to reconnect after a restart), so none holds the server open.
        self.watching.close()
        try:
            super().close(verbose)
        finally:
            self.mcp_tools.close()
            self.service.close()


def compose_app(settings: Settings, *, client: ModelBackend | None = None, tools: ToolRegistry | None = None) -> App:
    client = client or backend_for(settings)  # one Ollama as it is, or a pool of every host the settings name
    store = Store(settings.data_dir / DATABASE)
    tools = tools or ToolRegistry.builtins()  # this app's: its MCP servers' tools join it as they start
    rulebook = Rulebook(settings.data_dir, settings.workspace, tools=tools)
    # Each chat is judged by its owner's rules (`Conversation.owner`).
    # Every approved write keeps the file's previous state first, so the person can undo it from the page.
    checkpoints = Checkpoints(store, settings.data_dir, settings.workspace, cap=settings.checkpoint_max_bytes)
    agent = Agent(client, settings, policies=rulebook.policy, tools=tools, checkpoints=checkpoints)
    service = ChatService(
        agent, store, default_model=settings.model, workspace=settings.workspace, checkpoints=checkpoints
    )
    mcp_tools = McpTools.from_settings(settings, tools).start()  # this app's servers, started in the background
    atexit.register(mcp_tools.close)  # they stop when the app closes, or at the latest when Python exits
    sandbox = sandbox_for(settings)  # probed now, at start, so a missing sandbox is said before any command
    if isinstance(sandbox, NoSandbox):
        said = "are refused" if sandbox.refused else "run without a sandbox"
        log.warning("Commands %s on this computer: %s", said, sandbox.reason)
    windows = ContextWindows(client, cap=settings.num_ctx)
    snapshots = Snapshots(service, windows, workspace=settings.workspace, tools=tools, commands=Commands.of(sandbox))
    watching = Watching.of(service, store=store, max_viewers=settings.max_watchers)
    file_links = Links()
    with App(service, mcp_tools, watching, file_links=file_links, **PAGE_OPTIONS) as demo:
        page = Page(settings, service, client, tools, sandbox, snapshots, PageContext(service))
        # Closed at first, so a phone opens on the chat; the page's script opens it on a wide screen.
        with gr.Sidebar(open=False, width=340, elem_id="sidebar"):
            sidebar = SidebarPanel(page)
            rules = RulesPanel(page, rulebook=rulebook)
            mcp_file = str(config_path(settings.data_dir, settings.mcp_config))
            mcp = McpPanel(page, tools=mcp_tools, config_file=mcp_file)
            this_chat = ThisChatPanel(page)
            watch = WatchPanel(page, links=watching.links)
            files = FilesPanel(page, links=file_links)
        # The main view is one screen tall: the status line, the chat (which gives up room), then the
        # approval card and the message box, so the card's buttons are in view whenever it shows.
        topbar = TopBar(page)
        watch.place_corner()
        chat = ChatPanel(page, scope_list=sidebar.scopes, meter=sidebar.models.meter)
        files.undo.question_box()  # an undo that would lose later changes asks here, in view on any screen

        topbar.wire()
        chat.wire(language_picker=sidebar.language)
        load, *switches = sidebar.wire(demo, chat=chat, this_chat=this_chat, status_line=topbar.status)
        switches += this_chat.wire(sidebar)
        rules.wire(after=[load])
        mcp.wire()
        watch.wire(after=[page.chat_id.change, sidebar.language.input])
        files.wire(demo, after=[load, *page.answers], follower=chat.follower)
        chat.card.show_after([load, *page.answers, *switches])
    show_progress_on_first_output(demo)
    return demo


def show_progress_on_first_output(demo: gr.Blocks) -> None:
    """Each event's progress drawn on its first output alone, and nowhere for an event that hides it.

    On every message of a streaming answer, Gradio's page sends the loading state of every progress target of every
    event that ever ran to each of them, and by default an event's targets are all its outputs: about 100 components
    a frame here, half the browser's CPU per token (docs/benchmarks.md, "The real engine"). The message box, the
    answer's first output, still shows that an answer is coming.
    """
    for fn in demo.fns.values():
        fn.show_progress_on = fn.outputs[:1] if fn.show_progress != "hidden" else []


def _set_up_queue(demo: App) -> None:
    """Gradio's event queue, set on the one that Blocks made: `demo.queue(...)` would build Gradio's whole web app
    again, only for `launch` to build it once more (docs/benchmarks.md, "app")."""
    # Answers stream for minutes and mostly wait on the model: no session may queue behind another.
    demo._queue.default_concurrency_limit = None
    # Gradio's queue looks for new events every millisecond while it has none (off Windows): 5% of a core for an
    # idle app, taken from a model answering on the same CPU. A 10 ms look, as its progress loop has, costs 0.5%.
    demo._queue.sleep_when_free = QUEUE_POLL_SECONDS
    # After each event Gradio sums up the last 10,000 in a pandas table, for a monitoring page this app never turns
    # on: 4 ms of CPU while it keeps 10 events, 22 ms at 10,000 (docs/benchmarks.md, "app"). Gradio misspells the name.
    demo._queue.ANAYLTICS_CACHE_FREQUENCY = sys.maxsize  # events between two summaries: none comes


def serve(
    settings: Settings,
    *,
    auth: tuple[str, str] | None = None,
    client: ModelBackend | None = None,
    tools: ToolRegistry | None = None,
) -> tuple[App, str, str | None]:
    """Build and start the app without blocking; returns it with its local and public URLs."""
    # Gradio's cache (exports, uploads) in a folder only we can read, gone when we exit.
    os.environ["GRADIO_TEMP_DIR"] = str(private_temp_folder())
    demo = compose_app(settings, client=client, tools=tools)
    _set_up_queue(demo)
    addresses = addresses_for(settings.host, settings.port, share=settings.share, public_names=settings.public_names)
    # Gradio's /upload takes files only from a Meowgent page's ticket, up to the upload caps in all.
    upload_cap = settings.upload_max_bytes * settings.upload_max_files
    middleware = [Middleware(Guard, addresses=addresses)]
    # Only the owner gets past this, on every route but the watch links': the login's or the start token's holder.
    if auth:
        middleware.append(Middleware(LoginGate, logged_in=logged_in))
    elif settings.token is not None:
        middleware.append(Middleware(TokenGate, owner=OwnerToken(settings.token.reveal(), settings.port)))
    # Gradio's status tracker, mended: served as Gradio's own assets are, past the same gates.
    middleware.append(Middleware(MendedTracker, chunks=mended_chunks()))
    middleware.append(Middleware(FileRoutes, links=demo.file_links, max_upload_bytes=upload_cap))
    if auth:  # a browser that logged in is remembered, so a stranger's wrong guesses cannot lock it out
        browsers = RememberedBrowsers(login_key(settings.data_dir), auth[0])
        middleware.append(Middleware(RememberLogins, browsers=browsers))
    # Gradio prints its own share-link advice (a download URL, antivirus, a cache path); app.py says it in a sentence.
    with contextlib.redirect_stdout(io.StringIO()):
        _, local_url, share_url = demo.launch(
            server_name=settings.host,
            server_port=settings.port,
            share=settings.share,
            auth=LoginThrottle(*auth) if auth else None,
            auth_message=LOGIN_MESSAGE,
            prevent_thread_lock=True,
            show_error=False,
            quiet=True,
            css=CHAT_CSS + CSS + PRESENTER_CSS,
            js=ON_LOAD,
            head=HEAD,
            max_threads=200,
            max_file_size=settings.upload_max_bytes,
            footer_links=[],  # no API page, no Gradio settings or run history: this is a product, not a demo
            run_history=False,  # it kept every input, the owner key included, in the browser's storage
            # The watch page ahead of Gradio's routes: it needs no login (its token is the permission), and Gradio
            # checks its login per route, so every other path still needs one.
            app_kwargs={"middleware": middleware, "routes": [demo.watching.mount()]},
            # Gradio's launch asks the new server for its page once, with 3 s to answer, and fails with advice
            # about proxies when it does not: seen on a machine whose cores were all busy, as with a model answering
            # on the CPU. The server has started by then (its startup events answered), so nothing is lost.
            _frontend=False,
        )
    return demo, local_url, share_url
