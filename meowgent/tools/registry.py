"""Tool registry: `@tool(risky=...)` turns a typed function into a tool the model can call.

A tool is a plain function whose first parameter is a `ToolContext` and whose other
parameters carry `Annotated[T, "description"]` hints. Its JSON schema comes from the
signature through pydantic, its description from the docstring. Bad input never raises
out of `run_tool`: it becomes an error text the model can act on.

Tools from elsewhere (MCP servers) come with their own JSON schema and a runner: `ExternalTool`,
added to an app's `ToolRegistry` with `register_external`. Their arguments are checked against that schema (jsonschema)
before the runner sees them, and they ask the person by default.
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
import logging
import threading
import time
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from meowgent.config import Settings
from meowgent.llm.types import ToolSpec

log = logging.getLogger(__name__)

# Modules that define the built-in tools; imported lazily so importing the registry stays cheap.
_TOOL_MODULES = ("meowgent.tools.files", "meowgent.tools.shell", "meowgent.tools.web")


class ToolError(Exception):
    """Raised by a tool for bad input or a failed action; the message goes to the model as is."""


FollowCheck = Callable[[str], str | None]
"""A redirect's target URL, on a host the call was not judged for -> None to follow it, else why not (for the model)."""


def redirect_needs_approval(url: str) -> str:
    """Why web_fetch stopped at a redirect that the person would have to approve."""
    return (
        f"the page redirected to {url}, which needs the person's approval; "
        "call web_fetch with that URL if you still need it."
    )


def redirect_not_allowed(url: str, reason: str) -> str:
    """Why web_fetch stopped at a redirect that the person's rules refuse."""
    return f"the page redirected to {url}, which the person's rules do not allow ({reason}); do not fetch it."


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may use besides its arguments."""

    settings: Settings
    cancel: threading.Event = field(default_factory=threading.Event)
    """Set when the person presses Stop; long tools check it."""
    may_follow: FollowCheck = redirect_needs_approval
    """Whether web_fetch follows a redirect to another host. The call was judged for its own host only,
    so by default it follows none; the agent judges each as a new web_fetch of that URL would be."""
    network: bool = False
    """Whether the person let this call reach the network (for this command or this chat): the sandbox's rule."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    risky: bool
    function: Callable[..., str]
    arguments_model: type[BaseModel]

    def spec(self) -> ToolSpec:
        """What the model is told of it (also shown in the system prompt)."""
        return ToolSpec(self.name, self.description, _without_titles(self.arguments_model.model_json_schema()))

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Checked and converted arguments, or ToolError naming each problem."""
        if not isinstance(arguments, Mapping):
            raise ToolError(f"arguments for {self.name} must be a JSON object, got {type(arguments).__name__}.")
        try:
            model = self.arguments_model.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ToolError(_describe_validation_error(self, exc)) from None
        return {name: getattr(model, name) for name in type(model).model_fields}

    @property
    def argument_names(self) -> frozenset[str]:
        return frozenset(self.arguments_model.model_fields)


@dataclass(frozen=True)
class ExternalTool:
    """A tool defined elsewhere (an MCP server's): a JSON schema for its arguments and a runner.

    `group` is where it comes from (the server's name): a chat can turn a whole group off.
    `problem` says why it cannot run now (its server stopped), or None. `hints` are what its
    source says about it (read-only, destructive...): shown to the person, never trusted.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., str]
    """Called as `function(context, **arguments)` with validated arguments, like our own tools."""
    group: str
    problem: Callable[[], str | None] = lambda: None
    hints: tuple[str, ...] = ()
    risky: bool = True

    def spec(self) -> ToolSpec:
        """What the model is told of it, like ours."""
        return ToolSpec(self.name, self.description, _without_titles(copy.deepcopy(self.parameters)))

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments if they fit the schema, or ToolError naming each problem."""
        if not isinstance(arguments, Mapping):
            raise ToolError(f"arguments for {self.name} must be a JSON object, got {type(arguments).__name__}.")
        arguments = dict(arguments)
        validator = jsonschema.validators.validator_for(self.parameters)(self.parameters)
        problems = [_schema_problem(error) for error in sorted(validator.iter_errors(arguments), key=str)]
        if problems:
            allowed = ", ".join(sorted(self.argument_names)) or "none"
            raise ToolError(f"invalid arguments for {self.name}: {'; '.join(problems)}. Arguments are: {allowed}.")
        return arguments

    @property
    def argument_names(self) -> frozenset[str]:
        return frozenset(self.parameters.get("properties") or {})


AnyTool = Tool | ExternalTool


def check_schema(schema: object) -> str | None:
    """Why a JSON schema cannot check arguments, or None when it can."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "its arguments are not described as a JSON object"
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"its argument schema is invalid ({exc.message})"
    return None


def _schema_problem(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(part) for part in error.absolute_path)
    return f"'{where}': {error.message}" if where else error.message


@dataclass(frozen=True)
class ToolOutcome:
    """What a call produced: `text` is what the model sees; `ok` is False for errors."""

    text: str
    ok: bool
    duration: float = 0.0


_TOOL_ATTRIBUTE = "__meowgent_tool__"


def tool(*, risky: bool) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Make a function a built-in tool (found by `ToolRegistry.builtins`). `risky` tools wait for approval."""

    def define(function: Callable[..., str]) -> Callable[..., str]:
        definition = Tool(
            name=function.__name__,
            description=inspect.cleandoc(function.__doc__ or "").strip(),
            risky=risky,
            function=function,
            arguments_model=_arguments_model(function),
        )
        setattr(function, _TOOL_ATTRIBUTE, definition)
        return function

    return define


def tool_of(value: object) -> Tool | None:
    """The tool a `@tool` function defines; None for anything else."""
    definition = getattr(value, _TOOL_ATTRIBUTE, None)
    return definition if isinstance(definition, Tool) else None


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
    network: bool = False,
) -> str:
    """Validate and run one of Meowgent's own tools; returns the text the model sees, errors included."""
    context = ToolContext(settings=settings, cancel=cancel or threading.Event(), network=network)
    return ToolRegistry.builtins().execute(name, arguments, context).text


def cap_text(text: str, limit: int) -> str:
    """Keep the head and the tail of a long text, saying how much was cut in between."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n\n[... {cut:,} characters cut ...]\n\n{text[-tail:]}"


def _arguments_model(function: Callable[..., str]) -> type[BaseModel]:
    hints = typing.get_type_hints(function, include_extras=True)
    parameters = list(inspect.signature(function).parameters.values())[1:]  # first is the ToolContext
    fields: dict[str, Any] = {}
    for parameter in parameters:
        annotation = hints.get(parameter.name, Any)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (_with_description(annotation), default)
    return create_model(
        f"{function.__name__}_arguments",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )


def _with_description(annotation: Any) -> Any:
    """`Annotated[T, "text"]` becomes `Annotated[T, Field(description="text")]` for pydantic."""
    if typing.get_origin(annotation) is not Annotated:
        return annotation
    base, *metadata = typing.get_args(annotation)
    converted = [Field(description=item) if isinstance(item, str) else item for item in metadata]
    return Annotated[(base, *converted)]


def _without_titles(parameters: dict[str, Any]) -> dict[str, Any]:
    """`parameters` with pydantic's titles dropped (changed in place, so pass a copy of anything shared)."""
    _drop_titles(parameters)
    return parameters


def _drop_titles(schema: Any) -> None:
    """Pydantic's auto titles only repeat the names; they cost the model context."""
    if isinstance(schema, dict):
        schema.pop("title", None)
        for key, value in schema.items():
            if key != "properties":
                _drop_titles(value)
            else:
                for prop in value.values():
                    _drop_titles(prop)
    elif isinstance(schema, list):
        for item in schema:
            _drop_titles(item)


def _describe_validation_error(found: Tool, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            problems.append(f"unknown argument '{where}'")
        elif error["type"] == "missing":
            problems.append(f"missing required argument '{where}'")
        else:
            problems.append(f"'{where}': {error['msg']} (got {error.get('input')!r:.80})")
    allowed = ", ".join(
        f"{name}{'' if field_info.is_required() else '?'}"
        for name, field_info in found.arguments_model.model_fields.items()
    )
    return f"invalid arguments for {found.name}: {'; '.join(problems)}. Arguments are: {allowed} (? = optional)."
