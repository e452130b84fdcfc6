""" "Change it before approving": the plain fields a waiting call is edited in, and the arguments they make.

The page has three fields, in this order: `path`, `old` and `main` (the element `edit_args`). A tool of a kind
with a form (`meowgent.ui.html.tooltext`) uses the ones it needs, each with its own label; any other tool (an MCP
tool, say) gets `main` alone, holding the JSON of all its arguments. Gradio-free, so the mapping is tested
without a browser.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from meowgent.events import ToolCall
from meowgent.tools.registry import ToolRegistry
from meowgent.ui.html.tooltext import TEXTS, look_of

SLOTS = ("path", "old", "main")
"""The page's edit fields, in order; `main` is the field of the main argument (`edit_args`)."""


@dataclass(frozen=True)
class Field:
    """One labeled field: the argument it edits and the i18n key of its label."""

    argument: str
    label: str
    lines: int = 1


@dataclass(frozen=True)
class Form:
    """The fields a tool's call is edited in, by slot; `main` is None for a tool edited as JSON."""

    path: Field | None = None
    old: Field | None = None
    main: Field | None = None

    def slot(self, name: str) -> Field | None:
        return getattr(self, name)


_JSON = Field("", "field_json", lines=8)


class FormError(ValueError):
    """The fields cannot become arguments; `detail` says where (for the JSON field)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def form_for(call: ToolCall, *, tools: ToolRegistry | None = None) -> Form:
    """The fields of `call`'s tool, from its traits (`meowgent.ui.html.tooltext`); a tool of no kind with a form, or
    whose traits do not name the form's arguments, is edited as JSON in `main`."""
    traits = (tools or ToolRegistry.builtins()).traits(call.name)
    kind = TEXTS[look_of(call.name, traits)].fields
    fields = {spec.slot: Field(getattr(traits, spec.trait), spec.label, spec.lines) for spec in kind}
    if not fields or any(field.argument is None for field in fields.values()):
        return Form(main=_JSON)
    return Form(**fields)


def field_values(call: ToolCall, *, tools: ToolRegistry | None = None) -> dict[str, str]:
    """What each slot shows for `call`, as it was proposed ("" for an unused slot)."""
    form = form_for(call, tools=tools)
    values = {}
    for name in SLOTS:
        field = form.slot(name)
        if field is None:
            values[name] = ""
        elif field is _JSON:
            values[name] = json.dumps(call.arguments, indent=2, ensure_ascii=False)
        else:
            values[name] = _as_text(call.arguments.get(field.argument, ""))
    return values


def edited_arguments(call: ToolCall, values: dict[str, str], *, tools: ToolRegistry | None = None) -> dict | None:
    """The arguments the fields say, or None when they show what the model proposed.

    Arguments a form has no field for are kept as proposed. Raises FormError for JSON that does
    not parse or is not an object; everything else is checked later, like any call.
    """
    # A browser sends a text box's line ends as \n: untouched fields must not rewrite a file's \r\n.
    if all(_lines(values[name]) == _lines(shown) for name, shown in field_values(call, tools=tools).items()):
        return None
    form = form_for(call, tools=tools)
    if form.main is _JSON:
        try:
            arguments = json.loads(values["main"])
        except json.JSONDecodeError as exc:
            raise FormError(f"{exc.msg}, line {exc.lineno}") from None
        if not isinstance(arguments, dict):
            raise FormError("not an object")
    else:
        arguments = dict(call.arguments)
        for name in SLOTS:
            field = form.slot(name)
            if field is not None:
                arguments[field.argument] = values[name]
    return arguments


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
