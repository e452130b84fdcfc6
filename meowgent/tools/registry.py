"""The tools one app offers the model: `ToolRegistry`, an instance passed to whoever needs it.

It holds Meowgent's own tools (every `@tool` of the tool modules, see `meowgent.tools.spec`) and the
external ones (MCP servers') that come and go. `execute` validates and runs a call; bad input never
raises out of it: it becomes an error text the model can act on.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from meowgent.config import Settings
from meowgent.tools.spec import (
    EXTERNAL_TRAITS,
    AnyTool,
    ExternalTool,
    Tool,
    ToolContext,
    ToolError,
    ToolTraits,
    cap_text,
    tool_of,
)

log = logging.getLogger(__name__)

# Modules that define the built-in tools; imported lazily so importing the registry stays cheap.
_TOOL_MODULES = ("meowgent.tools.files", "meowgent.tools.search", "meowgent.tools.shell", "meowgent.tools.web")


@dataclass(frozen=True)
class ToolOutcome:
    """What a call produced: `text` is what the model sees; `ok` is False for errors."""

    text: str
    ok: bool
    duration: float = 0.0


@functools.cache
def builtin_tools() -> tuple[Tool, ...]:
    """Every `@tool` of Meowgent's own tool modules, in their order (immutable, so shared by every registry)."""
    found: dict[str, Tool] = {}
    for module_name in _TOOL_MODULES:
        for value in vars(importlib.import_module(module_name)).values():
            definition = tool_of(value)
            if definition is not None:
                if found.get(definition.name, definition) is not definition:
                    raise ValueError(f"tool {definition.name!r} is defined twice")
                found[definition.name] = definition
    return tuple(found.values())


class ToolRegistry:
    """The tools one app offers the model: the built-ins, and external ones (MCP servers') that come and go.

    An instance, passed to whoever needs it: two apps in one process never share their MCP tools. External
    tools change from the MCP thread while run threads read, hence the lock.
    """

    def __init__(self, tools: Collection[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for found in tools:
            if found.name in self._tools:
                raise ValueError(f"tool {found.name!r} is registered twice")
            self._tools[found.name] = found
        self._lock = threading.Lock()

    @classmethod
    def builtins(cls) -> ToolRegistry:
        """A registry of Meowgent's own tools, ready for external ones."""
        return cls(builtin_tools())

    def all(self) -> dict[str, AnyTool]:
        """Every registered tool by name."""
        with self._lock:
            return dict(self._tools)

    def register_external(self, tools: Collection[ExternalTool], *, group: str) -> None:
        """Make `group`'s tools these ones, replacing what it registered before."""
        with self._lock:
            own = {name for name, found in self._tools.items() if not isinstance(found, ExternalTool)}
            clash = next((found.name for found in tools if found.name in own or found.group != group), None)
            if clash is not None:
                raise ValueError(f"tool {clash!r} cannot be registered for {group!r}")
            stale = [n for n, found in self._tools.items() if isinstance(found, ExternalTool) and found.group == group]
            for name in stale:
                del self._tools[name]
            self._tools.update({found.name: found for found in tools})

    def unregister_group(self, group: str) -> None:
        """Forget every external tool of `group`."""
        self.register_external((), group=group)

    def offered(self, *, off: Collection[str] = ()) -> dict[str, AnyTool]:
        """The tools to offer the model: ours, and external ones that can run and whose group is not `off`."""
        return {
            name: found
            for name, found in self.all().items()
            if not isinstance(found, ExternalTool) or (found.group not in off and found.problem() is None)
        }

    def offered_tool(self, name: str, *, off: Collection[str] = ()) -> AnyTool:
        """The tool called `name` if it may be called now; ToolError says why not."""
        found = self.get(name)
        if isinstance(found, ExternalTool):
            if found.group in off:
                raise ToolError(f"the tools of {found.group} are turned off in this chat; do not call {name}.")
            problem = found.problem()
            if problem is not None:
                raise ToolError(problem)
        return found

    def get(self, name: str) -> AnyTool:
        """The tool called `name`, or ToolError listing the tools that exist."""
        tools = self.all()
        if not isinstance(name, str) or name not in tools:
            raise ToolError(f"there is no tool named {name!r}. Available tools: {', '.join(sorted(tools))}.")
        return tools[name]

    def traits(self, name: str) -> ToolTraits:
        """What the tool called `name` is; a name not registered (an MCP server's tool while its server is not
        running, a `SERVER__*` scope) is an external tool."""
        found = self.all().get(name)
        return EXTERNAL_TRAITS if found is None else found.traits

    def own(self) -> tuple[Tool, ...]:
        """Meowgent's own tools here: the ones whose arguments rules and scopes can name."""
        return tuple(found for found in self.all().values() if isinstance(found, Tool))

    def execute(self, name: str, arguments: Mapping[str, Any], context: ToolContext) -> ToolOutcome:
        """Validate and run a tool; every failure becomes an error outcome, never an exception."""
        started = time.monotonic()
        try:
            found = self.get(name)
            text = found.function(context, **found.validate(arguments))
            return ToolOutcome(cap_text(text, context.settings.max_tool_output), True, time.monotonic() - started)
        except ToolError as exc:
            return ToolOutcome(f"Error: {exc}", False, time.monotonic() - started)
        except Exception as exc:  # a bug in a tool must not end the conversation
            log.exception("tool %s failed", name)
            return ToolOutcome(
                f"Error: {name} failed unexpectedly ({type(exc).__name__}: {exc}).",
                False,
                time.monotonic() - started,
            )


def run_tool(
    name: str,
    arguments: Mapping[str, Any],
    *,
    settings: Settings,
    cancel: threading.Event | None = None,
    network: tuple[str, ...] = (),
) -> str:
    """Validate and run one of Meowgent's own tools; returns the text the model sees, errors included."""
    context = ToolContext(settings=settings, cancel=cancel or threading.Event(), network=network)
    return ToolRegistry.builtins().execute(name, arguments, context).text
