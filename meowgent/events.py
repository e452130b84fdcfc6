"""The agent's event types.

The splitter emits `TextDelta`, `ToolCallDelta` and `ToolCallDone`. The agent emits
`TextDelta`, `ThinkingDelta` and the call-level events below. The UI reads only these,
never model text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# ---- stream level (ToolCallSplitter) ----


@dataclass(frozen=True, slots=True)
class TextDelta:
    """New prose from the model."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """New raw text of the tool call being written (only the new piece)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDone:
    """A tool call's raw text between the tags, stripped; `complete` is False if the stream ended inside it."""

    raw: str
    complete: bool = True


# ---- agent level ----


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the person sent; starts a run."""

    text: str


LEGACY = "legacy"
"""The kind of a `Notice` or `ErrorEvent` an older Meowgent stored as an English sentence: its one value, `text`, is
that sentence, shown as stored."""


@dataclass(frozen=True, slots=True)
class Notice:
    """A note for the person that is not an error (e.g. old output was shortened).

    The core writes no words for the person: `kind` names what happened and `values` holds the plain values (numbers,
    names) the page's catalogs (meowgent.ui.i18n) put into a sentence in the person's language.
    """

    kind: str
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A parsed call: `id` is ours, unique within a conversation."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """New reasoning text from a thinking model."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDone:
    """The model stopped thinking after `seconds`; carried in the event so a replay shows it too."""

    seconds: float


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began writing a tool call; later `ToolCallProgress` events carry its raw text."""

    call_id: str


@dataclass(frozen=True, slots=True)
class ToolCallProgress:
    """More raw JSON of the call being written."""

    call_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallWriting:
    """Ollama holds back the call being written and cannot show its text; the reply has been silent `seconds`."""

    call_id: str
    seconds: float


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """The call is complete and parsed. `risky` says whether it waits for the person."""

    call: ToolCall
    risky: bool


@dataclass(frozen=True, slots=True)
class ToolCallInvalid:
    """The call could not be parsed or validated; `error` is what the model was told."""

    call_id: str
    raw: str
    error: str
    retried: bool = False
    """Ollama's parser could not read it, and the model is asked to write it again: a step, not a failure."""


@dataclass(frozen=True, slots=True)
class ApprovalNeeded:
    """The run pauses: these risky calls wait, in order, for the person."""

    calls: tuple[ToolCall, ...]


ResultStatus = Literal["done", "error", "rejected"]
NotRun = Literal["person", "rules", "changed_call", "new_message", "new_answer"]
"""Why a rejected call did not run: the person rejected it, their rules refused it (or their change of it), or the
person sent a new message or asked for a new answer while it waited."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A call finished, failed or was rejected; `output` is exactly what the model sees."""

    call_id: str
    name: str
    output: str
    status: ResultStatus
    duration: float = 0.0
    edited_arguments: dict[str, Any] | None = None
    """What actually ran, when the person changed the call before approving it."""
    reached: tuple[str, ...] | None = None
    """For a command that had network: the hosts it reached through its proxy (None: it had no network)."""
    refused: tuple[str, ...] = ()
    """For a command that had network: the hosts its proxy refused to it."""
    repeated: bool = False
    """Not run: the model made this call again right after its result came back (agent/repeats.py)."""
    not_run: NotRun | None = None
    """Why a rejected call did not run, for the page to say in the person's language (`output` says it to the model)."""
    reason: Mapping[str, Any] = field(default_factory=dict)
    """With `not_run`, the reason given, as plain values: the person's own words (`{"said": ...}`), or the rules'
    (`meowgent.policy.why.Why.values()`)."""


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """Something failed: `kind` names what, `values` the plain values the page words it with (as for `Notice`)."""

    kind: str
    values: Mapping[str, Any] = field(default_factory=dict)


DoneReason = Literal["complete", "paused", "stopped", "error", "max_turns"]


@dataclass(frozen=True, slots=True)
class Done:
    """The run ended. Token counts come from the last model response, when Ollama gave them."""

    reason: DoneReason
    prompt_tokens: int | None = None
    output_tokens: int | None = None


Delta = TextDelta | ThinkingDelta | ToolCallProgress
"""Events that continue a stream; consecutive ones of one stream can be joined into one."""


def continues(previous: object, event: object) -> bool:
    """True if `event` is more of the same stream as `previous`: the same kind of delta, of the same call."""
    if type(event) is not type(previous) or not isinstance(event, Delta):
        return False
    return not isinstance(event, ToolCallProgress) or event.call_id == previous.call_id


AgentEvent = (
    UserMessage
    | Notice
    | TextDelta
    | ThinkingDelta
    | ThinkingDone
    | ToolCallStarted
    | ToolCallProgress
    | ToolCallWriting
    | ToolCallReady
    | ToolCallInvalid
    | ApprovalNeeded
    | ToolResult
    | ErrorEvent
    | Done
)
