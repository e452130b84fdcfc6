"""Read tool calls that Ollama holds back, as the model writes them, in whatever format the model family uses.

A model with a builtin parser in Ollama writes its calls in the format it was trained on, and Ollama sends that
text only as the token text of `logprobs`. `CallTextReader` takes that token text (everything Ollama held back,
call or not) and turns each call in it into append-only pieces of the canonical JSON text
`{"name": "NAME", "arguments": {...}}`, the form the live panel reads (see `ToolCallProgress`):

- JSON inside `<tool_call>` tags (qwen3, and qwen3.5 when it writes JSON): the JSON object, as written;
- Qwen3-coder XML inside `<tool_call>` tags (qwen3.5, qwen3-coder):
  `<function=NAME><parameter=P>value</parameter></function>` becomes `{"name": "NAME", "arguments": {"P": "value"}}`,
  with the single newline after `>` and before `</parameter>` dropped, as Ollama does;
- harmony (gpt-oss): `to=functions.NAME` … `<|message|>` JSON arguments `<|call|>`.

Incremental and I/O-free like `ToolCallSplitter`: each character is looked at O(1) times, and the only text held
back is a possible tag (a few characters) or a newline that may turn out to be the one Ollama trims. Values are
shown as strings; the call that runs is always Ollama's own, which types them by the tool's schema.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum, auto

from meowgent.reply.scan import JsonValue, held_from, partial_tag


@dataclass(frozen=True, slots=True)
class CallOpened:
    """A call begins; its pieces follow."""


@dataclass(frozen=True, slots=True)
class CallPiece:
    """The next piece of the open call's canonical JSON text."""

    text: str


@dataclass(frozen=True, slots=True)
class CallClosed:
    """The open call's text is complete."""


CallEvent = CallOpened | CallPiece | CallClosed


class _State(Enum):
    NOISE = auto()  # between calls: headers, tags, whitespace Ollama held back
    TAGGED = auto()  # after <tool_call>: JSON or XML decides at the first non-space character
    JSON = auto()
    XML_NAME = auto()
    XML_BODY = auto()  # between parameters
    XML_PARAMETER = auto()
    XML_VALUE = auto()
    HARMONY_NAME = auto()
    HARMONY_HEADER = auto()  # the rest of the header, up to <|message|>
    HARMONY_ARGUMENTS = auto()


TAG_OPEN = "<tool_call>"
HARMONY_RECIPIENT = "to=functions."
_FUNCTION = "<function="
_PARAMETER = "<parameter="
_PARAMETER_END = "</parameter>"
_FUNCTION_END = "</function>"
_MESSAGE = "<|message|>"

_OPENERS = (TAG_OPEN, HARMONY_RECIPIENT)
_OPENER = re.compile("|".join(re.escape(opener) for opener in _OPENERS))
_HARMONY_NAME_END = re.compile(r"[\s<]")
_HARMONY_ENDS = ("<|call|>", "<|end|>", "<|return|>")
_HARMONY_END = re.compile("|".join(re.escape(end) for end in _HARMONY_ENDS))


class CallTextReader:
    """Turns the held-back text of a reply into the canonical JSON text of each call in it.

    Invariant: for any chunking of the same text, the events are the same once merged (consecutive pieces
    joined), and the pieces of each call join into a prefix of its canonical JSON text, the whole of it when
    the call is complete.
    """

    def __init__(self) -> None:
        self._state = _State.NOISE
        self._held = ""
        self._out: list[CallEvent] = []
        self._parts: list[str] = []  # the next CallPiece, joined once
        # JSON
        self._value = JsonValue()
        # XML and harmony
        self._name: list[str] = []
        self._parameters = 0
        self._value_started = False
        self._arguments_started = False

    def feed(self, text: str) -> list[CallEvent]:
        """Consume more held-back text and return what it completes."""
        data = self._held + text
        self._held = ""
        position = 0
        while position < len(data) and not self._held:
            position = self._step(data, position)
        return self._take()

    def reset(self) -> None:
        """Forget any call in progress and held text: Ollama released the text as prose, or ended the call itself."""
        self._state, self._held, self._name = _State.NOISE, "", []

    @property
    def in_call(self) -> bool:
        return self._state is not _State.NOISE

    def _step(self, data: str, position: int) -> int:
        match self._state:
            case _State.NOISE:
                return self._noise(data, position)
            case _State.TAGGED:
                return self._tagged(data, position)
            case _State.JSON:
                return self._json(data, position)
            case _State.XML_NAME | _State.XML_PARAMETER:
                return self._xml_name(data, position)
            case _State.XML_BODY:
                return self._xml_body(data, position)
            case _State.XML_VALUE:
                return self._xml_value(data, position)
            case _State.HARMONY_NAME:
                return self._harmony_name(data, position)
            case _State.HARMONY_HEADER:
                return self._harmony_header(data, position)
            case _State.HARMONY_ARGUMENTS:
                return self._harmony_arguments(data, position)

    # ---- between calls ----

    def _noise(self, data: str, position: int) -> int:
        found = _OPENER.search(data, position)
        if found is None:
            self._held = data[held_from(data, position, _OPENERS) :]
            return len(data)
        self._event(CallOpened())
        self._state = _State.TAGGED if found.group() == TAG_OPEN else _State.HARMONY_NAME
        return found.end()

    # ---- <tool_call> JSON or XML ----

    def _tagged(self, data: str, position: int) -> int:
        while position < len(data) and data[position].isspace():
            position += 1
        if position == len(data):
            return position
        if data.startswith(_FUNCTION, position):
            self._state, self._name, self._parameters = _State.XML_NAME, [], 0
            return position + len(_FUNCTION)
        if partial_tag(data, position, (_FUNCTION,)):
            self._held = data[position:]
            return len(data)
        self._state, self._value = _State.JSON, JsonValue()  # a reset may have cut a string
        return position

    def _json(self, data: str, position: int) -> int:
        """Pass the JSON through until the object (or array) that opened it closes (`scan.JsonValue`)."""
        end = self._value.end(data, position)
        self._piece(data[position : len(data) if end is None else end])
        if end is None:
            return len(data)
        self._close()
        return end

    def _xml_name(self, data: str, position: int) -> int:
        """The name of the function or of a parameter, up to `>`."""
        end = data.find(">", position)
        if end == -1:
            self._name.append(data[position:])
            return len(data)
        self._name.append(data[position:end])
        name = "".join(self._name).strip()
        self._name = []
        if self._state is _State.XML_NAME:
            self._piece('{"name": ' + _json_string(name) + ', "arguments": {')
            self._state = _State.XML_BODY
        else:
            self._piece((", " if self._parameters else "") + _json_string(name) + ': "')
            self._parameters += 1
            self._state, self._value_started = _State.XML_VALUE, False
        return end + 1

    def _xml_body(self, data: str, position: int) -> int:
        """Between parameters: the next `<parameter=` or the `</function>` that ends the call."""
        found = data.find("<", position)
        if found == -1:
            return len(data)
        rest = data[found : found + len(_PARAMETER)]
        if rest == _PARAMETER:
            self._state = _State.XML_PARAMETER
            return found + len(_PARAMETER)
        if rest.startswith(_FUNCTION_END):
            self._piece("}}")
            self._close()
            return found + len(_FUNCTION_END)
        if partial_tag(data, found, (_PARAMETER, _FUNCTION_END)):
            self._held = data[found:]
            return len(data)
        return found + 1

    def _xml_value(self, data: str, position: int) -> int:
        if not self._value_started:
            self._value_started = True
            if data[position] == "\n":  # Ollama drops one newline after the opening tag
                position += 1
        end = data.find(_PARAMETER_END, position)
        if end != -1:
            value = data[position:end]
            self._piece(_json_escaped(value[:-1] if value.endswith("\n") else value))
            self._piece('"')
            self._state = _State.XML_BODY
            return end + len(_PARAMETER_END)
        cut = held_from(data, position, (_PARAMETER_END,))
        if cut > position and data[cut - 1] == "\n":  # may be the newline Ollama drops before the closing tag
            cut -= 1
        self._piece(_json_escaped(data[position:cut]))
        self._held = data[cut:]
        return len(data)

    # ---- harmony ----

    def _harmony_name(self, data: str, position: int) -> int:
        found = _HARMONY_NAME_END.search(data, position)
        if found is None:
            self._name.append(data[position:])
            return len(data)
        self._name.append(data[position : found.start()])
        self._state = _State.HARMONY_HEADER
        return found.start()

    def _harmony_header(self, data: str, position: int) -> int:
        end = data.find(_MESSAGE, position)
        if end == -1:
            self._held = data[held_from(data, position, (_MESSAGE,)) :]
            return len(data)
        name, self._name = "".join(self._name), []
        self._piece('{"name": ' + _json_string(name) + ', "arguments": ')
        self._state, self._arguments_started = _State.HARMONY_ARGUMENTS, False
        return end + len(_MESSAGE)

    def _harmony_arguments(self, data: str, position: int) -> int:
        if not self._arguments_started:
            while position < len(data) and data[position].isspace():
                position += 1
            if position == len(data):
                return position
        found = _HARMONY_END.search(data, position)
        if found is not None:
            self._arguments(data[position : found.start()])
            self._piece("}" if self._arguments_started else "{}}")
            self._close()
            return found.end()
        cut = held_from(data, position, _HARMONY_ENDS)
        self._arguments(data[position:cut])
        self._held = data[cut:]
        return len(data)

    def _arguments(self, text: str) -> None:
        if text:
            self._arguments_started = True
            self._piece(text)

    # ---- output ----

    def _piece(self, text: str) -> None:
        if text:
            self._parts.append(text)

    def _event(self, event: CallOpened | CallClosed) -> None:
        self._flush()
        self._out.append(event)

    def _close(self) -> None:
        self._event(CallClosed())
        self._state = _State.NOISE

    def _flush(self) -> None:
        if self._parts:
            self._out.append(CallPiece("".join(self._parts)))
            self._parts = []

    def _take(self) -> list[CallEvent]:
        self._flush()
        out, self._out = self._out, []
        return out


def _json_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _json_escaped(text: str) -> str:
    """`text` as the inside of a JSON string; escaping is per character, so pieces can be escaped apart."""
    return json.dumps(text, ensure_ascii=False)[1:-1] if text else ""


_FORMAT_HINTS = {
    "qwen3": '<tool_call>\n{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}\n</tool_call>',
    "qwen3.5": (
        "<tool_call>\n<function=TOOL_NAME>\n<parameter=ARGUMENT>\nVALUE\n</parameter>\n</function>\n</tool_call>"
    ),
    "harmony": (
        "<|start|>assistant<|channel|>commentary to=functions.TOOL_NAME <|constrain|>json<|message|>"
        '{"ARGUMENT": "VALUE"}<|call|>'
    ),
}
_FORMAT_HINTS["qwen3-thinking"] = _FORMAT_HINTS["qwen3"]
_FORMAT_HINTS["qwen3-coder"] = _FORMAT_HINTS["qwen3.5"]


def format_hint(parser: str | None) -> str | None:
    """How a model with this Ollama parser must write a tool call, when we know it."""
    return _FORMAT_HINTS.get(parser or "")
