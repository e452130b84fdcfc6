"""What a tool is: a typed function with its traits (`@tool(...)`), or an external one (an MCP server's).

A built-in tool is a plain function whose first parameter is a `ToolContext` and whose other parameters
carry `Annotated[T, "description"]` hints. Its JSON schema comes from the signature through pydantic, its
description from the docstring, and what it is from the traits `@tool(...)` declares (`ToolTraits`): whether
it asks first, which argument holds its command, path or URL, what a chat scope of it is about, whether it
writes a file. The rules, the scopes, the risk notes and the page read the traits, never a table of names,
so a new tool declared here is judged, scoped and described with no edit anywhere else.

Tools from elsewhere (MCP servers) come with their own JSON schema and a runner: `ExternalTool`. Their
arguments are checked against that schema (jsonschema) before the runner sees them, and their traits are
`EXTERNAL_TRAITS`, whatever the server says: they ask first, and a chat scope covers the whole tool.
"""

from __future__ import annotations

import copy
import enum
import inspect
import threading
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Annotated, Any, ClassVar

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from meowgent.config import Settings
from meowgent.llm.types import ToolSpec

__all__ = [
    "EXTERNAL_TRAITS",
    "AnyTool",
    "ExternalTool",
    "FollowCheck",
    "ScopedBy",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolTraits",
    "Writes",
    "cap_text",
    "check_schema",
    "redirect_needs_approval",
    "redirect_not_allowed",
    "tool",
    "tool_of",
]


class ToolError(Exception):
    """Raised by a tool for bad input or a failed action; the message goes to the model as is."""


# ---- traits ----


class ScopedBy(enum.Enum):
    """What "Allow for this chat" allows for a tool: its words on the button are all the scope covers."""

    COMMAND = "command"
    """This command line, or the commands that start with words the person types (the `command` argument)."""
    PATH = "path"
    """This file, or a folder or glob the person types (the `path` argument, links followed)."""
    HOST = "host"
    """The host of this URL (the `url` argument)."""
    TOOL = "tool"
    """Every call of the tool: its arguments mean nothing a scope could name."""


class Writes(enum.Enum):
    """How a tool changes the file its `path` argument names."""

    REPLACES = "replaces"
    """It writes the whole file: replacing one that exists deserves a look."""
    EDITS = "edits"
    """It changes part of the file."""


@dataclass(frozen=True, slots=True)
class ToolTraits:
    """What a tool is, declared once: the rules, the chat scopes, the risk notes and the page read it from here.

    The defaults are what a tool nobody described is: it asks first, and a scope covers all its calls.
    Argument traits name one of the tool's own arguments (checked when the tool is defined).
    """

    risky: bool = True
    """It waits for the person unless a rule or a chat scope allows the call; else it runs at once."""
    scope: ScopedBy = ScopedBy.TOOL
    command: str | None = None
    """The argument holding a shell command line: `command` rules judge each command in it."""
    path: str | None = None
    """The argument holding a workspace path: `path` rules are matched against it, links followed."""
    url: str | None = None
    """The argument holding a URL: `host` rules are matched against its host."""
    main: str | None = None
    """The argument a person edits before approving (the edit form's main field); None: all of them, as JSON."""
    old: str | None = None
    """The argument holding the text a change replaces (the edit form shows it above the main field)."""
    writes: Writes | None = None
    """Whether it changes the file at `path`, and how."""
    reads_folder: bool = False
    """It reads everything under `path`: a rule about something inside the folder concerns it too."""
    network: bool = False
    """It reaches the network, whatever its arguments."""

    def __post_init__(self) -> None:
        needed = {ScopedBy.COMMAND: self.command, ScopedBy.PATH: self.path, ScopedBy.HOST: self.url}
        if self.scope in needed and needed[self.scope] is None:
            raise ValueError(f"a tool scoped by {self.scope.value} needs the argument that holds it")
        if (self.writes is not None or self.reads_folder) and self.path is None:
            raise ValueError("a tool that writes a file or reads a folder needs the argument that holds its path")

    def arguments(self) -> dict[str, str]:
        """The traits that name an argument, and the argument each names."""
        named = {item.name: getattr(self, item.name) for item in fields(self)}
        return {trait: value for trait, value in named.items() if isinstance(value, str)}


EXTERNAL_TRAITS = ToolTraits()
"""An external tool's traits, whatever its server claims (claims are shown on the card, never trusted), and those
of a name no registry knows: it asks first, and a chat scope covers the whole tool."""


# ---- what a running tool may use ----

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


@dataclass(frozen=True, slots=True)
class Visited:
    """Where a command went through its network proxy: the hosts reached and the ones refused to it."""

    reached: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may use besides its arguments."""

    settings: Settings
    cancel: threading.Event = field(default_factory=threading.Event)
    """Set when the person presses Stop; long tools check it."""
    may_follow: FollowCheck = redirect_needs_approval
    """Whether web_fetch follows a redirect to another host. The call was judged for its own host only,
    so by default it follows none; the agent judges each as a new web_fetch of that URL would be."""
    network: tuple[str, ...] = ()
    """The hosts the person let this call reach, for this command or this chat: names or patterns as the rules'
    `host` (`*.python.org`; `*` is any host, a deliberate choice); () is no network. The sandbox's rule."""
    on_visited: Callable[[Visited], None] = lambda visited: None
    """Told where a command went through its proxy, once it is over (the call's record keeps it)."""
    resolve: Callable[[str, int], Sequence[str]] | None = None
    """How a command's proxy finds a host's addresses (netguard's `Resolver`); None: the system's resolver. Tests
    name a local server `example.test` with it."""


def cap_text(text: str, limit: int) -> str:
    """Keep the head and the tail of a long text, saying how much was cut in between."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n\n[... {cut:,} characters cut ...]\n\n{text[-tail:]}"


# ---- tools ----


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    traits: ToolTraits
    function: Callable[..., str]
    arguments_model: type[BaseModel]

    @property
    def risky(self) -> bool:
        return self.traits.risky

    def spec(self) -> ToolSpec:
        """What the model is told of it (also shown in the system prompt)."""
        return _tool_spec(self.name, self.description, self.arguments_model.model_json_schema())

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
    `problem` says why it cannot run now (its server stopped), or None. `hints` and `title` are what its
    source says about it (read-only, destructive...; its name in words): shown to the person, never trusted.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., str]
    """Called as `function(context, **arguments)` with validated arguments, like our own tools."""
    group: str
    problem: Callable[[], str | None] = lambda: None
    hints: tuple[str, ...] = ()
    title: str = ""
    """Its source's name for it in words ("Add a note"), for the person; "" when it gives none."""
    traits: ClassVar[ToolTraits] = EXTERNAL_TRAITS

    @property
    def risky(self) -> bool:
        return self.traits.risky

    def spec(self) -> ToolSpec:
        """What the model is told of it, like ours."""
        return _tool_spec(self.name, self.description, copy.deepcopy(self.parameters))

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


_TOOL_ATTRIBUTE = "__meowgent_tool__"


def tool(*, risky: bool, **traits: Any) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Make a function a built-in tool (found by `ToolRegistry.builtins`) with the traits it declares (`ToolTraits`).

    `risky` tools wait for approval. A trait naming an argument the function does not take is an error here,
    when the tool is defined, not when a call is judged.
    """
    declared = ToolTraits(risky=risky, **traits)

    def define(function: Callable[..., str]) -> Callable[..., str]:
        arguments_model = _arguments_model(function)
        unknown = {
            trait: name for trait, name in declared.arguments().items() if name not in arguments_model.model_fields
        }
        if unknown:
            raise ValueError(f"the traits of {function.__name__} name arguments it does not take: {unknown}")
        definition = Tool(
            name=function.__name__,
            description=inspect.cleandoc(function.__doc__ or "").strip(),
            traits=declared,
            function=function,
            arguments_model=arguments_model,
        )
        setattr(function, _TOOL_ATTRIBUTE, definition)
        return function

    return define


def tool_of(value: object) -> Tool | None:
    """The tool a `@tool` function defines; None for anything else."""
    definition = getattr(value, _TOOL_ATTRIBUTE, None)
    return definition if isinstance(definition, Tool) else None


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


def _tool_spec(name: str, description: str, parameters: dict[str, Any]) -> ToolSpec:
    """What the model is told of a tool; `parameters` loses pydantic's titles in place, so pass a copy of anything
    shared."""
    _drop_titles(parameters)
    return ToolSpec(name, description, parameters)


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
