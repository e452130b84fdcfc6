"""A call the model makes again right after its result came back: same tool, same arguments.

Small models (Qwen2.5-Coder 1.5B on llama-server, docs/benchmarks.md) often answer a result by making the very call
that produced it. Such a call is not run or asked again: its result is a note saying the result is above (see
agent/notes.py). Only the calls of the reply just before count, so a command run again after something changed is
still a new call; and nothing is ever run by being a repeat, so no text can widen what the person approved.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from meowgent.conversation import InvalidCall
from meowgent.events import ToolCall


def repeats(calls: Iterable[ToolCall | InvalidCall], answered: Iterable[ToolCall]) -> frozenset[str]:
    """The ids of `calls` that repeat one of `answered` (the calls of the reply before, each with its result)."""
    before = {_key(call) for call in answered}
    return frozenset(call.id for call in calls if isinstance(call, ToolCall) and _key(call) in before)


def made(calls: Iterable[ToolCall | InvalidCall]) -> tuple[ToolCall, ...]:
    """The usable calls of a reply: what its next reply's calls are compared with."""
    return tuple(call for call in calls if isinstance(call, ToolCall))


def _key(call: ToolCall) -> tuple[str, str]:
    """Equal for equal JSON arguments, whatever their order."""
    return call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)
