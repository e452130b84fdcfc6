"""The sidebar's "MCP servers" section: each server's state and tools; which are off, or allowed, in this chat."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.mcp.adapter import McpTools, tool_name
from meowgent.mcp.client import ServerState
from meowgent.mcp.config import SEPARATOR, ServerConfig
from meowgent.policy.scopes import Scope
from meowgent.ui.i18n import ENGLISH, t
from meowgent.ui.panels.shared import Page

REFRESH_SECONDS = 5.0
"""How often an open page re-reads the servers' states (a crash shows without a click)."""

_MARKDOWN = re.compile(r"([\\`*_\[\]#!|~])")  # what could start markup inside a line


def describe_servers(tools: McpTools, config_file: str, language: str = ENGLISH) -> str:
    """The servers in plain words, as Markdown: state, where it runs, its tools; a bad configuration says why."""
    if tools.error:
        return t(language, "mcp_config_error", detail=_plain(tools.error))
    states = tools.states()
    if not states:
        return t(language, "mcp_none", path=config_file.replace("`", ""))
    return "\n\n".join(
        describe_server(state, tools.configs[state.name], tools.left_out.get(state.name, ()), language)
        for state in states
    )


class McpPanel:
    """The accordion (made where it is created, in the sidebar) and its events (`wire`, with the others)."""

    def __init__(self, page: Page, *, tools: McpTools, config_file: str) -> None:
        self.page = page
        self.tools = tools
        self.config_file = config_file
        localized = page.localized
        names = list(tools.configs)
        with localized(gr.Accordion, {"label": "mcp_servers"}, open=False, elem_id="mcp"):
            # Filled for an owner when the page opens a chat: what servers run here, and how, is not for /config.
            self.listing = gr.Markdown(elem_id="mcp_servers")
            self.off = localized(
                gr.CheckboxGroup, {"label": "mcp_off_here"}, choices=names, visible=bool(names), elem_id="mcp_off"
            )
            self.allowed = localized(
                gr.CheckboxGroup, {"label": "mcp_allow_here"}, choices=names, visible=bool(names), elem_id="mcp_allow"
            )
            self.restart = localized(
                gr.Button, {"value": "mcp_restart"}, size="sm", visible=bool(names), elem_id="mcp_restart"
            )
            self.timer = gr.Timer(REFRESH_SECONDS, active=bool(names))

    def wire(self) -> None:
        tools, context, service = self.tools, self.page.context, self.page.service
        owner_key, chat_id = self.page.owner_key, self.page.chat_id

        def listing(key: str, request: gr.Request):
            """The servers in words, for an owner; nothing for a caller that never opened the page."""
            if not context.is_known(key, request):
                return gr.skip()
            return describe_servers(tools, self.config_file, context.language_of(request))

        def on_show(key: str, chat: str, request: gr.Request):
            owner = context.owner_of(key, request)
            try:
                off, scopes = service.servers_off(owner, chat), service.scopes(owner, chat)
            except ChatError:
                off, scopes = [], []
            allowed = [name for name in tools.configs if server_scope(name) in scopes]
            return listing(key, request), gr.update(value=off), gr.update(value=allowed)

        @context.chat_action
        def on_off(key: str, chat: str, picked: list[str], request: gr.Request) -> None:
            known = [name for name in picked if name in tools.configs]
            service.set_servers_off(context.owner_of(key, request), chat, known)

        @context.chat_action
        def on_allow(key: str, chat: str, picked: list[str], request: gr.Request) -> None:
            owner = context.owner_of(key, request)
            for name in tools.configs:
                change = service.allow if name in picked else service.revoke
                change(owner, chat, server_scope(name))

        @context.chat_action
        def on_restart(key: str, request: gr.Request) -> str:
            context.known_owner(key, request)  # a stranger's client may not restart processes
            for state in tools.states():
                if state.status == "stopped":
                    tools.restart(state.name)
            return listing(key, request)

        chat_id.change(on_show, [owner_key, chat_id], [self.listing, self.off, self.allowed], concurrency_limit=None)
        self.off.input(on_off, [owner_key, chat_id, self.off], None, concurrency_limit=None)
        self.allowed.input(on_allow, [owner_key, chat_id, self.allowed], None, concurrency_limit=None)
        self.restart.click(on_restart, [owner_key], [self.listing], concurrency_limit=None)
        self.timer.tick(listing, [owner_key], [self.listing], show_progress="hidden", concurrency_limit=None)


def server_scope(server: str) -> Scope:
    """What "allowed without asking in this chat" means for one server: every one of its tools."""
    return Scope(f"{server}{SEPARATOR}*")


def describe_server(state: ServerState, config: ServerConfig, left_out: Iterable[str], language: str = ENGLISH) -> str:
    """One server: name and state, where it runs, the names the model sees, the tools left out and why."""
    if state.status == "running":
        status = t(language, "mcp_running", count=len(state.tools))
    elif state.status == "starting":
        status = t(language, "mcp_starting")
    else:
        status = t(language, "mcp_stopped", detail=_plain(state.detail))
    lines = [f"**{state.name}**: {status}", _plain(config.describe()[:200])]
    if state.tools:
        lines.append(", ".join(f"`{tool_name(state.name, tool.name)}`" for tool in state.tools))
    lines.extend(t(language, "mcp_left_out", detail=_plain(note)) for note in left_out)
    return "  \n".join(lines)


def _plain(text: str) -> str:
    """Text from a server or a file shown as itself: no Markdown, no HTML, one line."""
    return _MARKDOWN.sub(r"\\\1", html.escape(" ".join(text.split()), quote=False))
