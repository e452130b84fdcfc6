"""From raw call text (or a native call) to a `ToolCall`, or an error the model can act on."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from pydantic_core import from_json

from meowgent.events import ToolCall

CALL_FORMAT = '<tool_call>{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>'

# Only the opening's language is read by a regex: `^```[\w-]*\s*\n?(.*?)\n?```$` tried every split of the
# whitespace after an opening with no closing fence, 3 s on 20 KB of spaces.
_FENCE_LANGUAGE = re.compile(r"[\w-]*")


class CallParseError(ValueError):
    """A call the model wrote that we cannot use; the message says exactly what to fix."""


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


def parse_tool_call(raw: str, *, call_id: str) -> ToolCall:
    """Parse the text between the tags, tolerating fences, `parameters` and string arguments."""
    text = _unfence(raw)
    if not text:
        raise CallParseError(f"the tool call was empty. Write it as {CALL_FORMAT}")
    try:
        payload = json.loads(_undoubled(text))
    except json.JSONDecodeError as exc:
        raise CallParseError(
            f"the tool call is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}). "
            f"Write exactly {CALL_FORMAT}, with strings quoted and newlines in values written as \\n."
        ) from None
    if not isinstance(payload, dict):
        raise CallParseError(f"the tool call must be a JSON object, like {CALL_FORMAT}")
    if isinstance(payload.get("function"), dict):  # OpenAI-style nesting
        payload = payload["function"]
    name = payload.get("name")
    if not isinstance(name, str) or not name:
        raise CallParseError(f'the tool call has no "name". Write it as {CALL_FORMAT}')
    arguments = payload.get("arguments", payload.get("parameters", {}))
    return ToolCall(call_id, name, normalize_arguments(arguments, name=name))


def normalize_arguments(arguments: Any, *, name: str) -> dict[str, Any]:
    """Arguments as a dict; models sometimes send them as a JSON string, or null for none."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            raise CallParseError(
                f'the "arguments" of {name} must be a JSON object, not the string {arguments[:80]!r}.'
            ) from None
    if not isinstance(arguments, dict):
        raise CallParseError(f'the "arguments" of {name} must be a JSON object, got {type(arguments).__name__}.')
    return arguments


def peek_call(partial: str) -> tuple[str | None, dict[str, Any]]:
    """The tool name and the arguments readable so far from an unfinished call; never raises."""
    text = partial.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
    try:
        payload = from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return None, {}
    if not isinstance(payload, dict):
        return None, {}
    if isinstance(payload.get("function"), dict):
        payload = payload["function"]
    name = payload.get("name")
    arguments = payload.get("arguments", payload.get("parameters"))
    return (name if isinstance(name, str) else None), (arguments if isinstance(arguments, dict) else {})


def _undoubled(text: str) -> str:
    """The object inside doubled outer braces, `{{"name": …, "arguments": {…}}}`, which small Qwen models copy from
    the example in Qwen2.5's template; any other text as it is. Never valid JSON itself (a key must be a string), so
    no call that parses is read differently."""
    inner = text[1:-1].strip()
    if text.startswith("{") and text.endswith("}") and inner.startswith("{") and inner.endswith("}"):
        try:
            json.loads(inner)
        except json.JSONDecodeError:
            return text
        return inner
    return text


def _unfence(raw: str) -> str:
    """The text inside a Markdown fence (```json … ```), or all of it when it is not fenced."""
    text = raw.strip()
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        after_language = _FENCE_LANGUAGE.match(text, 3).end()  # `[\w-]*` always matches, maybe nothing
        return text[after_language:-3].strip()
    return text
