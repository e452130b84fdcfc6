"""What Meowgent tells the model about what happened to its calls and replies.

These are for the model, so they stay English whatever language the page speaks; each says what to do next.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from meowgent.context import APP_NOTE
from meowgent.events import ToolCall
from meowgent.reply.assembler import Ended, EndNotes
from meowgent.reply.formats import format_hint

NEW_MESSAGE = "The person sent a new message instead of approving this call."
"""The result of every call still waiting when the person sends a new message."""

NEW_ANSWER = "Not run: the person asked for a new answer."
"""What the page shows for a call of a reply the person asked to answer again (the model never sees that reply)."""

REPEATED = "Not run again: you just made this same call, and its result is above. Use that result to answer now."
"""The result of a call the model made again right after its result came back (agent/repeats.py)."""

_CUT_REASON = {
    "stopped": "the person pressed Stop",
    "error": "the model server failed",
    "rejected": "Ollama could not read the tool call",
}


def refused(call: ToolCall, reason: str) -> str:
    """A call the person's rules deny."""
    return f"Not run: the person's rules do not allow this call to {call.name} ({reason}). Do not retry it."


def rejected(call: ToolCall, reason: str) -> str:
    """A call the person rejected, with their reason if they gave one."""
    text = f"The person rejected this call to {call.name}; it did not run."
    return f"{text} Their reason: {reason}" if reason else text


def changed(edited: dict[str, Any], output: str) -> str:
    """The result of a call the person changed before approving it: the model is told what really ran."""
    ran = json.dumps(edited, ensure_ascii=False)
    return f"The person changed this call before approving it. It ran with these arguments: {ran}\n\n{output}"


def ask_again(detail: str, parser: str | None) -> str:
    """The message after a call the server's parser could not read: what went wrong, and the format it expects."""
    hint = format_hint(parser)
    how = f" Write each tool call exactly in this format:\n{hint}" if hint else " Use your own tool-call format."
    return f"{APP_NOTE}Ollama could not read your last tool call ({detail}), so it did not run.{how}"


def cut_off(why: Literal["stopped", "error", "rejected"]) -> str:
    """The end of the transcript's copy of a reply that broke off."""
    return f"\n\n[This answer was cut off: {_CUT_REASON[why]}.]"


def unclaimed(ended: Ended, refusal: str | None, retried: bool) -> str:
    """What a live panel that never became a call says, and so what the model wrote was not run."""
    if refusal is not None:
        again = " The model was asked to write it again." if retried else ""
        return f"Ollama could not read this tool call ({refusal}), so it did not run.{again}"
    if ended == "error":
        return "The answer broke off before this tool call was finished, so it did not run."
    return "Ollama did not turn this text into a tool call, so nothing ran."


END_NOTES = EndNotes(cut_off, unclaimed)


def person_acts(said: Iterable[str]) -> str:
    """The message that tells the model what the person did meanwhile, before their next message."""
    return APP_NOTE + " ".join(said)
