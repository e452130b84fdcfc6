""" "Change it before approving": the plain fields a waiting call is edited in, and the arguments they make.

The page has three fields, in this order: `path`, `old` and `main` (the element `edit_args`). A known tool
uses the ones it needs, each with its own label; any other tool (an MCP tool, say) gets `main` alone,
holding the JSON of all its arguments. Gradio-free, so the mapping is tested without a browser.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from meowgent.events import ToolCall

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
FORMS = {
    "write_file": Form(path=Field("path", "field_path"), main=Field("content", "field_content", lines=8)),
    "edit_file": Form(
        path=Field("path", "field_path"),
        old=Field("old", "field_old", lines=4),
        main=Field("new", "field_new", lines=4),
    ),
    "run_shell": Form(main=Field("command", "field_command", lines=2)),
    "web_fetch": Form(main=Field("url", "field_url")),
}


class FormError(ValueError):
    """The fields cannot become arguments; `detail` says where (for the JSON field)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def form_for(call: ToolCall) -> Form:
    """The fields of `call`'s tool; a tool without its own form is edited as JSON in `main`."""
    return FORMS.get(call.name, Form(main=_JSON))


def field_values(call: ToolCall) -> dict[str, str]:
    """What each slot shows for `call`, as it was proposed ("" for an unused slot)."""
    form = form_for(call)
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


def edited_arguments(call: ToolCall, values: dict[str, str]) -> dict | None:
    """The arguments the fields say, or None when they show what the model proposed.

    Arguments a form has no field for are kept as proposed. Raises FormError for JSON that does
    not parse or is not an object; everything else is checked later, like any call.
    """
    # A browser sends a text box's line ends as \n: untouched fields must not rewrite a file's \r\n.
    if all(_lines(values[name]) == _lines(shown) for name, shown in field_values(call).items()):
        return None
    form = form_for(call)
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
