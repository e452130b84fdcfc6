"""How Ollama's ChatHandler (server/routes.go) turns the tokens a model generates into streamed chunks.

Each token goes through the model's builtin parser, or else through the generic thinking and template tool parsers
(tests/ollama_parsers.py). A chunk goes out only when they give content, thinking or calls, or when the request asked
for `logprobs`; a token the runner stops on ends the generation; the final `done` line carries what the parser lets
go at the end (a harmony call, the held text of the template parser).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tests.ollama_parsers import (
    Parsed,
    Parser,
    TemplateToolParser,
    ThinkingParser,
    parser_for,
    template_thinks,
    template_tool_tag,
)

_QWEN_STOPS = frozenset({"<|im_end|>", "<|endoftext|>"})

STOP_TOKENS: Mapping[str | None, frozenset[str]] = {
    None: _QWEN_STOPS | {"<|eot_id|>"},
    "qwen3": _QWEN_STOPS,
    "qwen3-thinking": _QWEN_STOPS,
    "qwen3.5": _QWEN_STOPS,
    "qwen3-coder": _QWEN_STOPS,
    "harmony": frozenset({"<|call|>", "<|return|>", "<|endoftext|>"}),
}
"""Tokens that end generation, by parser; the runner stops on them and sends no text for them."""

_ALTERNATIVES = (" the", ",", "\n", " a", ".", " to", " and", " of", " in", " is")
"""Made-up runners-up for `top_logprobs`."""


class Generation:
    """One request's view of generated tokens, as server/routes.go ChatHandler turns runner output into chunks."""

    def __init__(self, parser: str | None, template: str, body: Mapping[str, Any], *, logprobs: bool) -> None:
        """`parser` and `template` are the model's; `body` is the /api/chat request; `logprobs` says whether this
        Ollama version honours the request's `logprobs` field at all."""
        tools = body.get("tools") or []
        messages = body.get("messages") or []
        last = messages[-1] if messages and isinstance(messages[-1], dict) else None
        self.parser: Parser | None = parser_for(parser, tools=tools, think=body.get("think"), last_message=last)
        # Without a builtin parser Ollama falls back on generic ones built from the template.
        generic = self.parser is None
        self.thinking = ThinkingParser() if generic and body.get("think") and template_thinks(template) else None
        self.tool_parser = TemplateToolParser(tools, tag=template_tool_tag(template)) if generic and tools else None
        self.logprobs = logprobs and bool(body.get("logprobs"))
        self.top_logprobs = int(body.get("top_logprobs") or 0) if self.logprobs else 0
        self.stop_tokens = STOP_TOKENS.get(parser, STOP_TOKENS[None])
        self.stopped = False
        self.tokens = 0
        self.calls = 0

    def token(self, token: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """The chunk (message, logprobs) Ollama sends for this token, None for no chunk. Raises ParseError."""
        if token in self.stop_tokens:
            self.stopped = True
            return None
        logprobs = [self._logprob(token)] if self.logprobs else []
        self.tokens += 1
        if self.parser is not None:
            message = self._parsed(self.parser.add(token, done=False))
            shows = message["content"] or message.get("thinking") or message.get("tool_calls")
            return (message, logprobs) if shows or logprobs else None
        message = self._generic(token, logprobs=bool(logprobs), done=False)
        return None if message is None else (message, logprobs)

    def finish(self) -> dict[str, Any]:
        """The message of the final `done` line: what the parser lets go when generation ends. Raises ParseError."""
        if self.parser is not None:
            return self._parsed(self.parser.add("", done=True))
        return self._generic("", logprobs=False, done=True) or {"role": "assistant", "content": ""}

    def _generic(self, text: str, *, logprobs: bool, done: bool) -> dict[str, Any] | None:
        """The generic thinking and tool parsers' message for `text` (routes.go, in its order); None for no chunk."""
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if self.thinking is not None:
            thinking, message["content"] = self.thinking.add(text)
            if not (thinking or message["content"] or done):
                return None  # no chunk, not even for logprobs
            if thinking:
                message["thinking"] = thinking
        if self.tool_parser is None:
            return message
        calls, content = self.tool_parser.add(message["content"])
        if content:
            # Ollama sends the content and drops calls found in the same piece.
            message["content"] = content
        elif calls:
            message |= {"content": "", "tool_calls": self._with_ids(calls)}
        elif done:
            message["content"] = self.tool_parser.leftover()
        elif not message.get("thinking"):
            # Held by the tool parser: only the token's logprobs go out.
            return {"role": "assistant", "content": ""} if logprobs else None
        return message

    def _parsed(self, parsed: Parsed) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": parsed.content}
        if parsed.thinking:
            message["thinking"] = parsed.thinking
        if parsed.calls:
            message["tool_calls"] = self._with_ids(parsed.calls)
        return message

    def _with_ids(self, calls: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        with_ids = []
        for call in calls:
            with_ids.append({"id": f"call_{self.calls:08d}", **call})
            self.calls += 1
        return with_ids

    def _logprob(self, token: str) -> dict[str, Any]:
        # Deterministic stand-ins: the chosen token is always the likeliest.
        logprob = -round(0.05 * (1 + self.tokens % 5), 4)
        entry: dict[str, Any] = {"token": token, "logprob": logprob, "bytes": list(token.encode())}
        if self.top_logprobs:
            runners_up = [t for t in _ALTERNATIVES if t != token][: self.top_logprobs - 1]
            entry["top_logprobs"] = [
                {"token": t, "logprob": round(logprob - 1.5 * rank, 4), "bytes": list(t.encode())}
                for rank, t in enumerate([token, *runners_up])
            ]
        return entry
