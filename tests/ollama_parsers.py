"""Ollama's model-output parsers, ported from its Go source so that ScriptedOllama streams what real Ollama streams.

Ollama runs every token a model generates through a parser chosen by the model's Modelfile `PARSER` line
(`model/parsers/parsers.go` ParserForName), or, for a model without one, through generic parsers built from its chat
template (`thinking/parser.go` when `think` is on, `tools/tools.go` when `tools` are sent). A parser turns raw
tokens into content, thinking and tool calls, holds back text that may still turn into markup, and fails on a call
it cannot read.

Ported here, state machine for state machine:
- `qwen3`, `qwen3-thinking`: `model/parsers/qwen3.go` (Qwen3Parser), JSON inside `<tool_call>` tags.
  Bad JSON is an error, as in released versions (newer source sends an unreadable call as content).
- `qwen3-coder`: `model/parsers/qwen3coder.go` (Qwen3CoderParser), `<function=NAME><parameter=P>value</parameter>`
  inside `<tool_call>` tags, read as XML.
- `qwen3.5`: `model/parsers/qwen35.go` (Qwen35Parser), thinking, then the qwen3-coder parser. Its error is the
  qwen3-coder parser's, unwrapped (`EOF` for JSON inside `<tool_call>`), as released Ollama versions send it.
- `harmony` (gpt-oss): `harmony/harmonyparser.go` (HarmonyMessageHandler); a call is read when generation ends.
- no builtin parser, `think` on and `<think>` in the template: `thinking/parser.go` (Parser).
- no builtin parser, `tools` sent: `tools/tools.go` (Parser), holding from the template's tool-call tag.

Not ported: the other families, harmony's renaming of tool names that are not identifiers, and Go's exact wording for
every JSON/XML error (`go_json_error` and the XML reader give Go's words for the common cases).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

Call = dict[str, Any]
"""A parsed call as Ollama sends it, before the server adds `id`: {"function": {"index", "name", "arguments"}}."""


Events = list[tuple[str, str]]
"""What one `_eat` step of a parser found: (kind, text) pairs such as ("content", "Hi") or ("call", raw)."""


class ParseError(Exception):
    """The parser could not read a call; Ollama ends the stream with `{"error": message}`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Parsed:
    """What one `Add` call returns: text that is certain now, and finished calls."""

    content: str = ""
    thinking: str = ""
    calls: tuple[Call, ...] = ()


class Parser(Protocol):
    def add(self, text: str, *, done: bool) -> Parsed:
        """Feed the next generated text; `done` on the last call (with the empty string) when generation ends."""
        ...


# Helpers shared by the parsers (model/parsers/parsers.go).


def overlap(text: str, delim: str) -> int:
    """The length of the longest suffix of `text` that is a prefix of `delim`."""
    for size in range(min(len(delim), len(text)), 0, -1):
        if text.endswith(delim[:size]):
            return size
    return 0


def trailing_whitespace_len(text: str) -> int:
    return len(text) - len(text.rstrip())


def split_unambiguous(text: str, *tags: str) -> tuple[str, str]:
    """Split `text` into what can be emitted now and what must wait: a partial tag at the end and the whitespace
    before it (or any trailing whitespace), which may belong to markup or to the end of the message."""
    held = max((overlap(text, tag) for tag in tags), default=0)
    before = text[: len(text) - held]
    cut = len(before) - trailing_whitespace_len(before)
    return text[:cut], text[cut:]


def split_at_tag(buffer: str, tag: str, *, trim_after: bool) -> tuple[str, str]:
    """(text before `tag` without trailing whitespace, text after it); the caller keeps the second as its buffer."""
    before, _, after = buffer.partition(tag)
    return before.rstrip(), after.lstrip() if trim_after else after


def go_json_error(text: str) -> str | None:
    """The error Go's encoding/json gives for `text` (None if it is one valid JSON value), in Go's words."""
    stripped = text.strip()
    if not stripped:
        return "unexpected end of JSON input"
    try:
        _, end = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(stripped) or exc.msg.startswith("Unterminated string"):
            return "unexpected end of JSON input"
        where = next(
            (phrase for start, phrase in _GO_CONTEXT if exc.msg.startswith(start)), "looking for beginning of value"
        )
        # Python points at the backslash of a bad escape, Go at the character after it.
        bad = stripped[exc.pos + 1] if exc.msg.startswith("Invalid \\escape") else stripped[exc.pos]
        return f"invalid character {_go_quote(bad)} {where}"
    rest = stripped[end:].lstrip()
    return f"invalid character {_go_quote(rest[0])} after top-level value" if rest else None


_GO_CONTEXT = (
    ("Expecting property name", "looking for beginning of object key string"),
    ("Expecting ':' delimiter", "after object key"),
    ("Expecting ',' delimiter", "after object key:value pair"),
    ("Invalid control character", "in string literal"),
    ("Invalid \\escape", "in string escape code"),
)
"""Python's json messages and the context Go's error names in their place (arrays say `after array element` in
Go, a detail not kept)."""


def _go_quote(char: str) -> str:
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    return "'" + json.dumps(char, ensure_ascii=False)[1:-1] + "'"


def _call(index: int, name: str, arguments: Mapping[str, Any]) -> Call:
    return {"function": {"index": index, "name": name, "arguments": dict(arguments)}}


def _thinking_enabled(think: object, *, default: bool) -> bool:
    # api.ThinkValue: a bool, or a level ("low", "medium", "high") that means on.
    return default if think is None else bool(think)


# qwen3 and qwen3-thinking (model/parsers/qwen3.go).

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"


class Qwen3Parser:
    """Thinking (when on, output starts inside it), then content with JSON calls in `<tool_call>` tags."""

    def __init__(self, *, thinking_support: bool, think: object = None) -> None:
        thinking = thinking_support and _thinking_enabled(think, default=thinking_support)
        self.state = "thinking" if thinking else "content"
        self.maybe_open_tag = thinking  # some checkpoints repeat the <think> that the prompt already opened
        self.buffer = ""
        self.call_index = 0

    def add(self, text: str, *, done: bool) -> Parsed:
        self.buffer += text
        content, thinking, calls = [], [], []
        for kind, value in _drain(self._eat):
            if kind == "call":
                calls.append(_call(self.call_index, *_qwen3_call(value)))
                self.call_index += 1
            else:
                (thinking if kind == "thinking" else content).append(value)
        return Parsed("".join(content), "".join(thinking), tuple(calls))

    def _eat(self) -> tuple[Events, bool]:
        buffer = self.buffer
        if self.state == "thinking":
            if self.maybe_open_tag:
                trimmed = buffer.lstrip()
                if trimmed.startswith(THINK_OPEN):
                    self.buffer = trimmed[len(THINK_OPEN) :].lstrip()
                    if not self.buffer:
                        return [], False
                    self.maybe_open_tag = False
                    return [], True
                if THINK_OPEN.startswith(trimmed):
                    return [], False
                self.maybe_open_tag = False
            close, tool = buffer.find(THINK_CLOSE), buffer.find(TOOL_OPEN)
            if tool != -1 and (close == -1 or tool < close):
                # A call before </think> ends the thinking too.
                return self._enter(TOOL_OPEN, "thinking", "tool_whitespace", "tool")
            if close != -1:
                return self._enter(THINK_CLOSE, "thinking", "thinking_done_whitespace", "content")
            return self._emit_unambiguous("thinking", THINK_CLOSE, TOOL_OPEN)
        if self.state in ("thinking_done_whitespace", "tool_whitespace"):
            return self._eat_whitespace("content" if self.state == "thinking_done_whitespace" else "tool")
        if self.state == "content":
            if TOOL_OPEN in buffer:
                return self._enter(TOOL_OPEN, "content", "tool_whitespace", "tool")
            return self._emit_unambiguous("content", TOOL_OPEN)
        # "tool": nothing streams until the whole call is there.
        if TOOL_CLOSE not in buffer:
            return [], False
        raw, self.buffer = split_at_tag(buffer, TOOL_CLOSE, trim_after=True)
        self.state = "content"
        return [("call", raw)], True

    def _enter(self, tag: str, kind: str, empty_state: str, state: str) -> tuple[Events, bool]:
        before, self.buffer = split_at_tag(self.buffer, tag, trim_after=True)
        self.state = state if self.buffer else empty_state
        return ([(kind, before)] if before else []), True

    def _eat_whitespace(self, next_state: str) -> tuple[Events, bool]:
        self.buffer = self.buffer.lstrip()
        if not self.buffer:
            return [], False
        self.state = next_state
        return [], True

    def _emit_unambiguous(self, kind: str, *tags: str) -> tuple[Events, bool]:
        ready, self.buffer = split_unambiguous(self.buffer, *tags)
        return ([(kind, ready)] if ready else []), False


def _drain(eat: Callable[[], tuple[Events, bool]]) -> Iterator[tuple[str, str]]:
    """Run a parser's `eat` step until it says it needs more input."""
    more = True
    while more:
        events, more = eat()
        yield from events


def _qwen3_call(raw: str) -> tuple[str, Mapping[str, Any]]:
    """qwen3.go parseQwen3ToolCall: `{"name": ..., "arguments": {...}}` read into a Go struct."""
    error = go_json_error(raw)
    parsed: Any = None if error else json.loads(raw)
    parsed = {} if parsed is None else parsed  # Go leaves the struct empty for `null`
    if error is None and not isinstance(parsed, dict):
        error = f"json: cannot unmarshal {_go_json_type(parsed)} into Go value of type struct"
    elif error is None:
        for key, wanted in (("name", str), ("arguments", dict)):
            if parsed.get(key) is not None and not isinstance(parsed[key], wanted):
                error = f"json: cannot unmarshal {_go_json_type(parsed[key])} into Go struct field .{key}"
    if error is not None:
        raise ParseError(f"failed to parse JSON: {error}")
    if not parsed.get("name"):
        raise ParseError("empty function name")
    return parsed["name"], parsed.get("arguments") or {}


def _go_json_type(value: object) -> str:
    names = {list: "array", dict: "object", str: "string", bool: "bool", type(None): "null"}
    return names.get(type(value), "number")


# qwen3-coder (model/parsers/qwen3coder.go).


class Qwen3CoderParser:
    """Content, with calls in `<tool_call>` tags written as `<function=NAME><parameter=P>value</parameter>...`."""

    def __init__(self, tools: Sequence[Mapping[str, Any]] = ()) -> None:
        self.tools = tools
        self.collecting = False
        self.buffer = ""
        self.call_index = 0

    def add(self, text: str, *, done: bool) -> Parsed:
        self.buffer += text
        content, calls = [], []
        for kind, value in _drain(self._eat):
            if kind == "call":
                calls.append(_call(self.call_index, *_xml_call(value, self.tools)))
                self.call_index += 1
            else:
                content.append(value)
        return Parsed("".join(content), "", tuple(calls))

    def _eat(self) -> tuple[Events, bool]:
        if not self.collecting:
            if TOOL_OPEN in self.buffer:
                before, _, self.buffer = self.buffer.partition(TOOL_OPEN)
                self.collecting = True
                return ([("content", before.rstrip())] if before.rstrip() else []), True
            ready, self.buffer = split_unambiguous(self.buffer, TOOL_OPEN)
            return ([("content", ready)] if ready else []), False
        if TOOL_CLOSE not in self.buffer:
            return [], False
        raw, _, after = self.buffer.partition(TOOL_CLOSE)
        self.buffer = after.lstrip()
        self.collecting = False
        return [("call", raw)], True


# The XML that qwen3coder.go's transformToXML builds: `<function=x>` becomes `<function name="x">` and every other
# character is text. Go's encoding/xml then reads the first element; this reader gives the same results and errors.
_XML_TAG = re.compile(
    r"<(function|parameter)=([^>]+)>|<(function|parameter)(?:\s+name=\"([^\"]*)\")?>|</(function|parameter)>"
)


def _xml_call(raw: str, tools: Sequence[Mapping[str, Any]]) -> tuple[str, Mapping[str, Any]]:
    root = _read_xml(raw)
    name = root["name"]
    properties = _properties(tools, name)
    return name, {p["name"]: _parse_value(p["text"], _types(properties.get(p["name"]))) for p in root["children"]}


def _read_xml(raw: str) -> dict[str, Any]:
    stack: list[dict[str, Any]] = []
    root: dict[str, Any] | None = None
    position = 0
    for match in _XML_TAG.finditer(raw):
        if stack:
            stack[-1]["text"] += raw[position : match.start()]
        position = match.end()
        line = raw.count("\n", 0, match.end()) + 1
        opened = match.group(1) or match.group(3)
        if opened:
            element = {"tag": opened, "name": match.group(2) or match.group(4) or "", "text": "", "children": []}
            if root is None:
                if opened != "function":
                    raise ParseError(f"expected element type <function> but have <{opened}>")
                root = element
            elif len(stack) == 1 and opened == "parameter":
                stack[-1]["children"].append(element)
            stack.append(element)
            continue
        closed = match.group(5)
        if not stack:
            raise ParseError(f"XML syntax error on line {line}: unexpected end element </{closed}>")
        if stack[-1]["tag"] != closed:
            raise ParseError(f"XML syntax error on line {line}: element <{stack[-1]['tag']}> closed by </{closed}>")
        stack.pop()
        if not stack:
            return root  # type: ignore[return-value]
    if root is None:
        raise ParseError("EOF")
    raise ParseError(f"XML syntax error on line {raw.count(chr(10)) + 1}: unexpected EOF")


def _properties(tools: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    for tool in tools:
        function = tool.get("function") or {}
        if function.get("name") == name:
            return (function.get("parameters") or {}).get("properties") or {}
    return {}


def _types(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    if not schema:
        return ()
    if schema.get("anyOf"):
        return tuple(t for option in schema["anyOf"] for t in _types(option))
    declared = schema.get("type") or ()
    return (declared,) if isinstance(declared, str) else tuple(declared)


def _parse_value(raw: str, types: tuple[str, ...]) -> Any:
    """qwen3coder.go parseValue: one newline trimmed at each end, then the most specific declared type that fits."""
    raw = raw.removeprefix("\n").removesuffix("\n")
    if raw.lower() == "null":
        return None
    if not types:
        return raw
    only = len(types) == 1
    if "boolean" in types:
        if raw.lower() in ("true", "false"):
            return raw.lower() == "true"
        if only:
            return False
    if "integer" in types:
        if re.fullmatch(r"[+-]?\d+", raw) and -(2**63) <= int(raw) < 2**63:
            return int(raw)
        if only:
            return raw
    if "number" in types:
        try:
            number = float(raw)
        except ValueError:
            if only:
                return raw
        else:
            return int(number) if number.is_integer() and math.isfinite(number) else number
    for kind, wanted in (("array", list), ("object", dict)):
        if kind in types:
            try:
                value = json.loads(raw)
            except ValueError:
                value = None
            if isinstance(value, wanted):
                return value
            if only:
                return raw
    return raw


# qwen3.5 (model/parsers/qwen35.go).


class Qwen35Parser:
    """Thinking (on unless `think` is false), then everything after it through the qwen3-coder parser."""

    def __init__(self, tools: Sequence[Mapping[str, Any]] = (), *, think: object = None, prefill: bool = False) -> None:
        self.tool_parser = Qwen3CoderParser(tools)
        thinking = _thinking_enabled(think, default=True) and not prefill
        self.state = "thinking" if thinking else "content"
        self.allow_open_tag = thinking
        self.trim_thinking_space = False
        self.buffer = ""

    def add(self, text: str, *, done: bool) -> Parsed:
        self.buffer += text
        content, thinking, calls = [], [], []
        for kind, value in _drain(self._eat):
            if kind == "thinking":
                thinking.append(value)
                continue
            parsed = self.tool_parser.add(value, done=done)
            content.append(parsed.content)
            calls.extend(parsed.calls)
        return Parsed("".join(content), "".join(thinking), tuple(calls))

    def _eat(self) -> tuple[Events, bool]:
        if self.state == "thinking":
            return self._eat_thinking()
        if self.state == "thinking_done_whitespace":
            self.buffer = self.buffer.lstrip()
            if not self.buffer:
                return [], False
            self.state = "content"
            return [], True
        content, self.buffer = self.buffer, ""
        return ([("content", content)] if content else []), False

    def _eat_thinking(self) -> tuple[Events, bool]:
        if self.allow_open_tag:
            trimmed = self.buffer.lstrip()
            if trimmed.startswith(THINK_OPEN):
                self.buffer = trimmed[len(THINK_OPEN) :].lstrip()
                self.allow_open_tag = False
                self.trim_thinking_space = not self.buffer
                return [], bool(self.buffer)
            if THINK_OPEN.startswith(trimmed):
                return [], False
            self.allow_open_tag = False
        if self.trim_thinking_space:
            self.buffer = self.buffer.lstrip()
            if not self.buffer:
                return [], False
            self.trim_thinking_space = False
        buffer = self.buffer
        if THINK_CLOSE in buffer:
            thinking, self.buffer = split_at_tag(buffer, THINK_CLOSE, trim_after=True)
            self.state = "content" if self.buffer else "thinking_done_whitespace"
            return ([("thinking", thinking)] if thinking else []), True
        if overlap(buffer, THINK_CLOSE) or overlap(buffer, TOOL_OPEN):
            ready, self.buffer = split_unambiguous(buffer, THINK_CLOSE, TOOL_OPEN)
            return ([("thinking", ready)] if ready else []), False
        if TOOL_OPEN in buffer:
            # qwen3.5 sometimes starts a call without closing its thinking; close it on its behalf.
            thinking, calling = split_at_tag(buffer, TOOL_OPEN, trim_after=True)
            self.buffer = thinking + THINK_CLOSE + TOOL_OPEN + calling
            return [], True
        ready, self.buffer = split_unambiguous(buffer)
        return ([("thinking", ready)] if ready else []), False


# harmony, gpt-oss (harmony/harmonyparser.go).


class HarmonyParser:
    """Messages `<|start|>role<|channel|>name [to=recipient]<|message|>body<|end|>`: analysis is thinking, final
    (and commentary without a recipient) is content, a message to `functions.NAME` is a call, read when generation
    ends (the model stops on `<|call|>`)."""

    def __init__(self, *, last_message: Mapping[str, Any] | None = None) -> None:
        if last_message and last_message.get("role") == "assistant" and last_message.get("content"):
            self.buffer = "<|start|>assistant<|channel|>final<|message|>"
        elif last_message and last_message.get("role") == "assistant" and last_message.get("thinking"):
            self.buffer = "<|start|>assistant<|channel|>analysis<|message|>"
        else:
            self.buffer = "<|start|>assistant"
        self.state = "start"
        self.mode = "content"
        self.tool_name: str | None = None
        self.tool_text = ""

    def add(self, text: str, *, done: bool) -> Parsed:
        self.buffer += text
        out: dict[str, list[str]] = {"content": [], "thinking": [], "tool": []}
        for kind, value in _drain(self._eat):
            if kind == "header":
                self._enter(value)
            elif kind == "end":
                self.mode = "content"
            else:
                out[self.mode].append(value)
        self.tool_text += "".join(out["tool"])
        calls: tuple[Call, ...] = ()
        if done and self.tool_name is not None:
            name, raw = self.tool_name.removeprefix("functions."), self.tool_text
            self.tool_name, self.tool_text = None, ""
            error = go_json_error(raw)
            if error is None and not isinstance(json.loads(raw), dict | None):
                error = f"json: cannot unmarshal {_go_json_type(json.loads(raw))} into Go value of type map"
            if error is not None:
                raise ParseError(f"error parsing tool call: raw='{raw}', err={error}")
            calls = (_call(0, name, json.loads(raw) or {}),)
        return Parsed("".join(out["content"]), "".join(out["thinking"]), calls)

    def _enter(self, header: str) -> None:
        channel, recipient = _harmony_header(header)
        if channel in ("analysis", "commentary") and recipient:
            self.mode, self.tool_name = "tool", recipient
        elif channel == "analysis":
            self.mode = "thinking"
        elif channel in ("commentary", "final"):
            self.mode = "content"

    def _eat(self) -> tuple[Events, bool]:
        if self.state == "start":
            if "<|start|>" not in self.buffer:
                return [], False
            self.buffer = self.buffer.partition("<|start|>")[2]
            self.state = "header"
            return [], True
        if self.state == "header":
            if "<|message|>" not in self.buffer:
                return [], False
            header, _, self.buffer = self.buffer.partition("<|message|>")
            self.state = "body"
            return [("header", header)], True
        if "<|end|>" in self.buffer:
            body, _, self.buffer = self.buffer.partition("<|end|>")
            self.state = "start"
            return [*([("body", body)] if body else []), ("end", "")], True
        held = overlap(self.buffer, "<|end|>")
        body, self.buffer = self.buffer[: len(self.buffer) - held], self.buffer[len(self.buffer) - held :]
        return ([("body", body)] if body else []), False


def _harmony_header(raw: str) -> tuple[str, str]:
    """(channel, recipient) of a header such as `assistant<|channel|>commentary to=functions.x <|constrain|>json`."""
    if "<|constrain|>" in raw:
        raw = raw.replace("<|constrain|>", " <|constrain|>", 1).strip()
    channel = ""
    if "<|channel|>" in raw:
        before, _, after = raw.partition("<|channel|>")
        channel = after.split(maxsplit=1)[0] if after.strip() and not after[0].isspace() else ""
        raw = (before + after[len(channel) :]).strip()
    tokens = raw.split()
    if not tokens:
        return channel, ""
    if tokens[0].startswith("to="):
        return channel, tokens[0][3:]
    return channel, tokens[1][3:] if len(tokens) > 1 and tokens[1].startswith("to=") else ""


# No builtin parser, `think` on (thinking/parser.go).


class ThinkingParser:
    """Ollama's generic thinking parser for models without a builtin one: a leading `<think>...</think>` is thinking,
    everything after it is content (which the template tool parser may read next)."""

    def __init__(self, opening: str = THINK_OPEN, closing: str = THINK_CLOSE) -> None:
        self.opening, self.closing = opening, closing
        self.state = "looking"
        self.buffer = ""

    def add(self, text: str) -> tuple[str, str]:
        """(thinking, content) that are certain after `text`."""
        self.buffer += text
        thinking, content = [], []
        more = True
        while more:
            more = self._eat(thinking, content)
        return "".join(thinking), "".join(content)

    def _eat(self, thinking: list[str], content: list[str]) -> bool:
        trimmed = self.buffer.lstrip()
        if self.state == "looking":
            if trimmed.startswith(self.opening):
                self.buffer = trimmed[len(self.opening) :].lstrip()
                self.state = "thinking" if self.buffer else "opened_whitespace"
                return True
            if self.opening.startswith(trimmed):
                return False
            self.state = "done"
            content.append(self.buffer)
            self.buffer = ""
            return False
        if self.state == "opened_whitespace":
            if not trimmed:
                return False
            self.state, self.buffer = "thinking", trimmed
            return True
        if self.state == "thinking":
            if self.closing in self.buffer:
                before, _, after = self.buffer.partition(self.closing)
                after = after.lstrip()
                thinking.append(before)
                content.append(after)
                self.state, self.buffer = ("done" if after else "closed_whitespace"), ""
                return False
            held = overlap(self.buffer, self.closing)
            thinking.append(self.buffer[: len(self.buffer) - held])
            self.buffer = self.buffer[len(self.buffer) - held :]
            return False
        if self.state == "closed_whitespace":
            if trimmed:
                self.state = "done"
            content.append(trimmed)
            self.buffer = ""
            return False
        content.append(self.buffer)
        self.buffer = ""
        return False


def template_thinks(template: str) -> bool:
    """Whether Ollama infers thinking tags from the template (thinking/template.go InferTags, for `<think>` only)."""
    return THINK_OPEN in template and THINK_CLOSE in template


# No builtin parser, `tools` sent (tools/tools.go).


class TemplateToolParser:
    """Ollama's generic parser for models without a builtin one: text streams until the template's tool-call tag
    (or a partial tag) shows up, then everything is held until it reads a JSON object naming a tool.

    One deviation: tools.go keeps the text before the tag in its buffer, so it can send that text again (with each
    piece while the tag is partial, and at the end, instead of the held text, when no call came); this sends it once
    and holds only what starts at the tag."""

    def __init__(self, tools: Sequence[Mapping[str, Any]], *, tag: str) -> None:
        self.tag = tag
        self.names = [str((t.get("function") or {}).get("name", "")) for t in tools]
        self.properties = [p for name in self.names for p in _properties(tools, name)]
        self.parsing = False
        self.buffer = ""
        self.count = 0
        self.scan = _BraceScan()

    def add(self, text: str) -> tuple[tuple[Call, ...], str]:
        """(calls, content) for the next text, as tools.Parser.Add returns them."""
        self.buffer += text
        content = ""
        if not self.parsing:
            start = self._find_tag()
            if start == -1:
                content, self.buffer = self.buffer, ""
                return (), content
            content, self.buffer = self.buffer[:start], self.buffer[start:]
            if self.tag not in self.buffer:
                return (), content
            self.parsing = True
        calls = []
        while (found := self._find_call()) is not None:
            name, arguments, end = found
            calls.append(_call(self.count, name, arguments))
            self.count += 1
            self._keep(self.buffer[end:])
        if calls:
            return tuple(calls), content
        if self.tag == "{" and self.scan.object_in(self.buffer) is not None:
            # A bare JSON tag that closed without naming a tool was ordinary text after all.
            content = content + self.buffer
            self._keep("")
        return (), content

    def leftover(self) -> str:
        """tools.Parser.Content: the held text, sent as content when generation ends without a call."""
        return "" if self.count else self.buffer

    def _keep(self, buffer: str) -> None:
        self.buffer = buffer
        self.scan = _BraceScan()

    def _find_tag(self) -> int:
        held = overlap(self.buffer, self.tag)
        if held:
            return len(self.buffer) - held
        return self.buffer.find(self.tag)

    def _find_call(self) -> tuple[str, Mapping[str, Any], int] | None:
        named = [(i + len(n), n) for n in self.names if n and (i := self.buffer.find(n)) != -1]
        if not named:
            return None
        name_end, name = min(named)
        found = self._find_arguments()
        if found is None:
            return None
        arguments, end = found
        return name, arguments, max(name_end, end)

    def _find_arguments(self) -> tuple[Mapping[str, Any], int] | None:
        # Like tools.go: the first balanced {...} by brace count, then the first object in it that has a key one of
        # the tools takes.
        span = self.scan.object_in(self.buffer)
        if span is None:
            return None
        try:
            data = json.loads(self.buffer[span[0] : span[1]])
        except ValueError:
            return None
        found = self._arguments_in(data)
        return (found, span[1]) if found is not None else None

    def _arguments_in(self, data: Any) -> Mapping[str, Any] | None:
        if isinstance(data, dict):
            if any(p in data for p in self.properties):
                return data
            children: Sequence[Any] = list(data.values())
        elif isinstance(data, list):
            children = data
        else:
            return None
        return next((found for child in children if (found := self._arguments_in(child)) is not None), None)


class _BraceScan:
    """The first balanced `{...}` of a growing buffer, counting braces as tools.go does (strings are not special).

    It resumes where it stopped, so that holding a long call costs linear time, not a rescan per token."""

    def __init__(self) -> None:
        self.position, self.depth, self.start = 0, 0, -1
        self.span: tuple[int, int] | None = None

    def object_in(self, buffer: str) -> tuple[int, int] | None:
        """(start, end) of the object, None while it is not closed yet; `buffer` only ever grows at its end."""
        while self.span is None and self.position < len(buffer):
            brace = _BRACE.search(buffer, self.position)
            if brace is None:
                self.position = len(buffer)
                break
            self.position = brace.end()
            if brace.group() == "{":
                self.depth += 1
                self.start = brace.start() if self.start == -1 else self.start
            else:
                self.depth -= 1
                if self.depth == 0 and self.start != -1:
                    self.span = (self.start, brace.end())
        return self.span


_BRACE = re.compile(r"[{}]")


def template_tool_tag(template: str) -> str:
    """The tag the generic parser waits for: `<tool_call>` when the template writes calls in it, else `{`.

    tools/template.go reads it from the template's tool-call block; this looks only for the tag our templates use."""
    return TOOL_OPEN if TOOL_OPEN in template else "{"


def parser_for(
    name: str | None,
    *,
    tools: Sequence[Mapping[str, Any]] = (),
    think: object = None,
    last_message: Mapping[str, Any] | None = None,
) -> Parser | None:
    """The builtin parser a Modelfile's `PARSER name` selects (parsers.go ParserForName); None for no parser."""
    prefill = bool(last_message and last_message.get("role") == "assistant" and last_message.get("content"))
    if name == "qwen3":
        return Qwen3Parser(thinking_support=False, think=think)
    if name == "qwen3-thinking":
        return Qwen3Parser(thinking_support=True, think=think)
    if name == "qwen3.5":
        return Qwen35Parser(tools, think=think, prefill=prefill)
    if name == "qwen3-coder":
        return Qwen3CoderParser(tools)
    if name == "harmony":
        return HarmonyParser(last_message=last_message)
    if name is None:
        return None
    raise ValueError(f"ScriptedOllama has no port of Ollama's {name!r} parser")
