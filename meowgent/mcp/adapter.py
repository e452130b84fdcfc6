"""MCP tools in our registry, named `SERVER__TOOL`, and MCP results as the plain text the model sees.

Every MCP tool is risky: it waits for the person unless their rules or a chat scope say
otherwise. What a server says about its tools (`readOnlyHint`...) becomes hints on the
approval card, never a reason to skip it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types

from meowgent.config import Settings
from meowgent.mcp.client import McpCallError, McpManager, ServerState, not_running
from meowgent.mcp.config import SEPARATOR, McpConfigError, ServerConfig, config_path, load_config
from meowgent.mcp.sandboxed import Prepare, as_configured, sandboxed
from meowgent.tools.netproxy import visited_line
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool, ToolContext, ToolError, Visited, cap_text, check_schema

DESCRIPTION_CHARS = 1000
"""A server's description of one tool is cut here: it goes into every request's instructions."""

# What a server may claim about a tool (MCP annotations), as keys the approval card translates.
READ_ONLY = "read_only"
DESTRUCTIVE = "destructive"
IDEMPOTENT = "idempotent"
OPEN_WORLD = "open_world"

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The name the model sees: `server__tool`, with anything but letters, digits, - and _ as `_`."""
    return f"{server}{SEPARATOR}{_UNSAFE_NAME.sub('_', tool)}"


def hints(annotations: mcp_types.ToolAnnotations | None) -> tuple[str, ...]:
    """What the server claims about a tool, for the card; only what it states outright."""
    if annotations is None:
        return ()
    claimed = {
        READ_ONLY: annotations.read_only_hint,
        DESTRUCTIVE: annotations.destructive_hint,
        IDEMPOTENT: annotations.idempotent_hint,
        OPEN_WORLD: annotations.open_world_hint,
    }
    return tuple(key for key, value in claimed.items() if value is True)


def result_text(result: mcp_types.CallToolResult) -> str:
    """Everything a result holds as plain text: texts, structured JSON, and a line for each image or file."""
    parts = [_block_text(block) for block in result.content]
    structured = result.structured_content
    if structured is not None and not any(_repeats(part, structured) for part in parts):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    return "\n\n".join(parts) if parts else "(the tool returned nothing)"


def external_tools(
    state: ServerState, call: Callable[..., Any], problem: Callable[[], str | None]
) -> tuple[list[ExternalTool], list[str]]:
    """A running server's tools for the registry, and a sentence for each tool that had to be left out."""
    tools: dict[str, ExternalTool] = {}
    left_out = []
    for remote in state.tools:
        name = tool_name(state.name, remote.name)
        parameters = dict(remote.input_schema)
        why = check_schema(parameters) or (f"another tool is already called {name}" if name in tools else None)
        if why:
            left_out.append(f"{remote.name}: {why}")
            continue
        tools[name] = ExternalTool(
            name=name,
            description=(remote.description or remote.title or "").strip()[:DESCRIPTION_CHARS],
            parameters=parameters,
            function=_runner(state.name, remote.name, name, call),
            group=state.name,
            problem=problem,
            hints=hints(remote.annotations),
            title=(remote.title or (remote.annotations and remote.annotations.title) or "")[:DESCRIPTION_CHARS],
        )
    return list(tools.values()), left_out


class McpTools:
    """The configured MCP servers and their tools in the registry it is given, for one app."""

    def __init__(
        self,
        servers: list[ServerConfig],
        *,
        registry: ToolRegistry,
        timeout: float,
        error: str = "",
        prepare: Prepare = as_configured,
    ) -> None:
        self.registry = registry
        self.error = error
        """Why the configuration could not be used, for the sidebar ("" when it could)."""
        self.configs = {config.name: config for config in servers}
        self.left_out: dict[str, list[str]] = {}
        """Per server, the tools that could not be offered and why."""
        self._manager = McpManager(servers, timeout=timeout, on_change=self._on_change, prepare=prepare)

    @classmethod
    def from_settings(cls, settings: Settings, registry: ToolRegistry) -> McpTools:
        """The servers in the configuration file; a bad file gives no servers and a sentence in `error`."""
        path = config_path(settings.data_dir, settings.mcp_config)
        try:
            if settings.mcp_config is not None and not Path(path).is_file():
                raise McpConfigError(f"the MCP configuration {path} does not exist.")
            servers = load_config(path)
        except McpConfigError as exc:
            return cls([], registry=registry, timeout=settings.mcp_timeout, error=str(exc))
        return cls(servers, registry=registry, timeout=settings.mcp_timeout, prepare=sandboxed(settings))

    def start(self) -> McpTools:
        """Start every server in the background; they stop with `close()`, which their owner (the app) calls."""
        self._manager.start()
        return self

    def close(self) -> None:
        self._manager.close()
        for name in self.configs:
            self.registry.unregister_group(name)

    def states(self) -> list[ServerState]:
        return self._manager.states()

    def restart(self, name: str) -> None:
        self._manager.restart(name)

    def wait_settled(self, timeout: float) -> bool:
        return self._manager.wait_settled(timeout)

    def _on_change(self, state: ServerState) -> None:
        if state.status != "running":  # stopped tools stay known, so a call to one gets a clear error
            return
        tools, left_out = external_tools(state, self._manager.call, lambda: self._problem(state.name))
        self.left_out[state.name] = left_out
        self.registry.register_external(tools, group=state.name)

    def _problem(self, server: str) -> str | None:
        state = self._manager.state(server)
        return None if state.status == "running" else not_running(state)


def _runner(server: str, remote: str, name: str, call: Callable[..., Any]) -> Callable[..., str]:
    """The tool's function: the call, and for a server with a proxy, where it went meanwhile, said last (where a
    long result's cut keeps it) and given to the call's record, as a command's is."""

    def run(context: ToolContext, **arguments: Any) -> str:
        went: list[Visited] = []
        try:
            result = call(server, remote, arguments, cancel=context.cancel, on_visited=went.append)
        except McpCallError as exc:
            raise ToolError(_with_network(str(exc), went)) from None
        finally:
            for visited in went:
                context.on_visited(visited)
        text = _with_network(result_text(result), went)
        if result.is_error:
            raise ToolError(f"{name} reported an error: {cap_text(text, context.settings.max_tool_output)}")
        return text

    return run


def _with_network(text: str, went: list[Visited]) -> str:
    return "\n\n".join([text, *(visited_line(visited) for visited in went)])


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
        return f"[{kind}: {block.mime_type}, {_size(block.data)}]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[link to {block.name}: {block.uri}]"
    if isinstance(block, mcp_types.EmbeddedResource):
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[{resource.uri}]\n{text}"
        return f"[file {resource.uri}: {resource.mime_type or 'binary'}, {_size(getattr(resource, 'blob', ''))}]"
    return f"[{kind or 'unknown'} content]"


def _size(data: str) -> str:
    """The size of base64 data, decoded, as people read it."""
    try:
        count = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        count = len(data) * 3 // 4
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / 1024 / 1024:.1f} MB"


def _repeats(text: str, structured: Any) -> bool:
    """Whether a text block already says what the structured result says (servers often send both)."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = text
    wrapped = structured.get("result") if isinstance(structured, dict) and set(structured) == {"result"} else None
    return parsed == structured or (wrapped is not None and parsed == wrapped)
