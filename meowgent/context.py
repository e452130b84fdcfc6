"""Keep every request inside the model's context window.

Ollama truncates silently: a prompt longer than num_ctx loses its oldest tokens, the system prompt with the tool
list first. So before each request we estimate the prompt's tokens (no tokenizer here: a per-character model,
scaled by what the server reports it counted) and, when it is too long, send a shortened copy of the transcript.
The full history stays in the store; only the request is cut.
"""

from __future__ import annotations

import json
import math
import re
import string
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from meowgent.events import Notice

# Tokens per character by kind, fitted to Qwen's BPE on about 200 texts (Python, Markdown, JSON, JavaScript, licences,
# ls, ps and dpkg output) and rounded to the safe side: an estimate that is too low is exactly the silent truncation
# this module prevents. One rate for all ASCII (3.5 characters a token) undercounted number-heavy output by up to 70%.
# bench/bench_tokens.py measures the result.
_LETTER = 1 / 4  # English words and identifiers; any other ASCII too
_DIGIT = 2.0  # a digit is a token of its own (Qwen; Llama 3 groups three) and splits the tokens around it
_PUNCTUATION = 0.5
_SPACE = 0.15  # runs of spaces and newlines merge into single tokens
_CJK = 1.3  # Qwen needs 0.7 to 0.9 for Chinese, older 32k vocabularies up to about 1.5
_ASTRAL = 2.0  # emoji and rare Han outside the BMP: 1 to 3 tokens each
_OTHER = 1.0  # other non-ASCII: Cyrillic and Arabic need about 0.4, Greek and Devanagari about 0.9 to 1

_CJK_RUNS = re.compile(
    "["
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK and Kangxi radicals
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u31ff"  # Bopomofo, Hangul compatibility Jamo, Kanbun, Katakana extensions
    "\u3200-\u4dbf"  # enclosed and compatibility CJK, Han extension A
    "\u4e00-\u9fff"  # Han
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul
    "\uf900-\ufaff"  # Han compatibility ideographs
    "\ufe30-\ufe4f"  # CJK compatibility forms
    "\uff00-\uffef"  # halfwidth and fullwidth forms
    "]+"
)
_ASTRAL_RUNS = re.compile("[\U00010000-\U0010ffff]+")

MESSAGE_OVERHEAD = 4
"""Tokens the chat template adds around each message (role markers, separators)."""

TOOLS_OVERHEAD = 120
"""Tokens a chat template writes around a native tool list (Qwen 2.5's "# Tools … <tools></tools> … For each function
call, return a json object …" is about 100), besides the schemas themselves."""

MIN_FACTOR, MAX_FACTOR = 0.5, 2.0
"""The range of the learned correction, and of the samples it learns from: our estimate of the same text is within
about 1.5× of any tokenizer's, so a ratio beyond this says more about the count (a cache hit, text we did not
estimate) than about the text, and is ignored."""

_MIN_SAMPLE = 200
"""Smaller prompts are dominated by template tokens we never see, so they would skew the factor."""
_RISE, _FALL = 0.5, 0.1
"""EMA weights: a count above the estimate is believed at once, one below it only slowly (see `calibrate`)."""

_HEAD_TOKENS, _TAIL_TOKENS = 300, 100
"""What a shortened tool result keeps of its start and end, in estimated tokens."""

_RESULT_CUT = "[… {cut:,} characters cut to fit the model's context; call the tool again to see them]"
_OWN_CUT = "[… {cut:,} characters of your own output cut to fit the model's context]"

_WRAPPED = re.compile(r'(<tool_response name="[^"\n]*">\n)(.*)(\n</tool_response>)', re.DOTALL)
"""A tool result as `llm.client.wire_messages` hands it to a model without the `tools` capability."""

APP_NOTE = "[Meowgent] "
"""Starts a user-role message that Meowgent, not the person, writes to the model in the middle of an answer (asking
it to write a call again): part of the current answer, so fitting never takes it for the start of a new turn."""


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is for a typical local model's tokenizer, rounded up."""
    if not text:
        return 0
    # str.count runs in C; a few dozen passes beat one Python loop over the characters many times over.
    digits = sum(map(text.count, string.digits))
    punctuation = sum(map(text.count, string.punctuation))
    spaces = sum(map(text.count, " \n\t\r"))
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    letters = ascii_chars - digits - punctuation - spaces
    tokens = letters * _LETTER + digits * _DIGIT + punctuation * _PUNCTUATION + spaces * _SPACE
    if ascii_chars < len(text):
        cjk = sum(map(len, _CJK_RUNS.findall(text)))
        astral = sum(map(len, _ASTRAL_RUNS.findall(text)))
        tokens += cjk * _CJK + astral * _ASTRAL + (len(text) - ascii_chars - cjk - astral) * _OTHER
    return math.ceil(tokens)


def estimate_messages(messages: Sequence[dict[str, Any]]) -> int:
    """Estimated tokens of a transcript as the chat template renders it, before calibration.

    Counted: content, tool calls as JSON, and the template's tokens around each message. Thinking counts only
    after the latest user message: Ollama's templates for thinking models (Qwen 3's, for one) leave older thinking
    out and keep it only within the current chain of tool calls.
    """
    return sum(_costs(messages))


def _costs(messages: Sequence[dict[str, Any]]) -> list[int]:
    latest = latest_person(messages)
    return [_cost(m, thinking=i > latest) for i, m in enumerate(messages)]


def _cost(message: dict[str, Any], *, thinking: bool) -> int:
    tokens = MESSAGE_OVERHEAD + estimate_tokens(message.get("content") or "")
    if thinking and message.get("role") == "assistant":
        tokens += estimate_tokens(message.get("thinking") or "")
    if message.get("tool_calls"):
        tokens += estimate_tokens(json.dumps(message["tool_calls"], ensure_ascii=False))
    if message.get("role") == "tool":
        # Templates wrap a result in tags as wire_messages does, so both forms cost the same.
        tokens += estimate_tokens(f'<tool_response name="{message.get("tool_name", "")}">\n\n</tool_response>')
    return tokens


def _is_result(message: dict[str, Any]) -> bool:
    """A tool result, natively or wrapped into a user message (a person would have to type the exact wrapper)."""
    role = message.get("role")
    return role == "tool" or (role == "user" and _WRAPPED.fullmatch(message.get("content") or "") is not None)


def _is_person(message: dict[str, Any]) -> bool:
    if message.get("role") != "user" or _is_result(message):
        return False
    return not str(message.get("content") or "").startswith(APP_NOTE)


def latest_person(messages: Sequence[dict[str, Any]]) -> int:
    """Index of the latest message from the person; 0 (the system prompt) when there is none."""
    return next((i for i in range(len(messages) - 1, 0, -1) if _is_person(messages[i])), 0)


def estimate_schemas(schemas: Sequence[dict[str, Any]]) -> int:
    """Estimated tokens of native tool schemas as a chat template writes them (each one's JSON, and its words around
    the list), before calibration: the server counts them in the prompt, so the estimate that is calibrated must too."""
    if not schemas:
        return 0
    return TOOLS_OVERHEAD + sum(estimate_tokens(json.dumps(schema, ensure_ascii=False)) for schema in schemas)


def _scaled(raw: int, factor: float) -> int:
    return math.ceil(raw * factor)


class TokenEstimator:
    """Token estimates corrected by the counts the model server reports; one per model, safe to share between threads.

    `calibrate` keeps an exponential moving average of actual / estimated, which `estimate` multiplies in.
    Ollama's prompt_eval_count can be smaller than the prompt: depending on the version it leaves out the tokens
    it reused from its KV cache (the system prompt and earlier turns). Such a count is a lower bound, never an
    overcount, so a ratio above the current factor moves it quickly and one below it only slowly, and a ratio
    under MIN_FACTOR (a cache hit, nothing a tokenizer does) is ignored. A request that the cache cannot serve,
    as after every change to the start of the transcript, brings the factor back up. A ratio over MAX_FACTOR is
    ignored too: one count of something the estimate left out must not shrink every chat's context for good (the
    estimator is shared by every chat with the model).
    """

    def __init__(self, factor: float = 1.0) -> None:
        self._lock = threading.Lock()
        self._factor = _clamp(factor)

    @property
    def factor(self) -> float:
        with self._lock:
            return self._factor

    def estimate(self, messages: Sequence[dict[str, Any]]) -> int:
        """Calibrated token estimate of a transcript."""
        return _scaled(estimate_messages(messages), self.factor)

    def calibrate(self, estimated: int, actual: int) -> None:
        """Learn from one response: `estimated` is the request's uncalibrated estimate (`FitResult.raw_tokens`),
        `actual` is the server's prompt_eval_count for it."""
        if estimated < _MIN_SAMPLE or actual <= 0:
            return
        ratio = actual / estimated
        if not MIN_FACTOR <= ratio <= MAX_FACTOR:
            return
        with self._lock:
            weight = _RISE if ratio > self._factor else _FALL
            self._factor = _clamp(self._factor + weight * (ratio - self._factor))


def _clamp(factor: float) -> float:
    return min(max(factor, MIN_FACTOR), MAX_FACTOR)


def budget_for(num_ctx: int) -> int:
    """Tokens a prompt may use when the context holds `num_ctx`: a quarter, and at least 1024, stays free for the
    answer (at most half, so that a tiny context still takes a prompt)."""
    return num_ctx - max(num_ctx // 4, min(1024, num_ctx // 2))


class ContextTooSmall(Exception):
    """The system prompt and the latest user message alone do not fit: about `needed` tokens, where `budget` fit.

    The page says so from `kind` and `values`, in the person's language.
    """

    kind = "context_too_small"

    def __init__(self, needed: int, budget: int) -> None:
        super().__init__(f"needs about {needed:,} tokens, {budget:,} fit")
        self.needed = needed
        self.budget = budget
        self.values = {"needed": needed, "budget": budget}


class AnswerTooLong(ContextTooSmall):
    """The current answer's own calls and results do not fit even shortened: dropping any would make the model
    forget what it just did and repeat it, so the answer stops and the person decides."""

    kind = "answer_too_long"


@dataclass(frozen=True, slots=True)
class FitResult:
    """The transcript to send, and what was cut from it."""

    messages: list[dict[str, Any]]
    """A new list; messages left as they were are the caller's own dicts, shortened ones are copies."""
    trimmed_results: int
    """Messages in `messages` that were shortened: tool results, and the model's own long output in this answer."""
    dropped_messages: int
    estimated_tokens: int
    """Calibrated estimate of `messages` and the fixed part of the prompt."""
    raw_tokens: int
    """Uncalibrated estimate of the same: what to pass to `TokenEstimator.calibrate` with the server's count."""


def fit_messages(
    messages: list[dict[str, Any]], *, budget: int, estimator: TokenEstimator, fixed: int = 0
) -> FitResult:
    """The transcript shortened until its estimate fits `budget`; `messages[0]` is the system prompt. `fixed`: the
    uncalibrated tokens of what the prompt holds besides the messages (`estimate_schemas`), counted and never cut.

    Nothing changes when it already fits. Otherwise, in this order, each step only until it fits:
    1. shorten tool results older than the latest user message to their head and tail, oldest first;
    2. leave out whole turns (a user message and everything up to the next one), oldest first;
    3. shorten what came after the latest user message (the current answer), oldest first: tool results, and the
       model's own long text, thinking and call arguments, each to its head and tail.
    The system prompt and the latest user message are always kept verbatim, and the current answer is never left
    out: a model that no longer sees its own calls makes them again. A tool call is never kept without its results
    nor a result without its call. The input is never changed.

    Raises ContextTooSmall when the system prompt and the latest user message alone exceed `budget`, and its
    subclass AnswerTooLong when the current answer does not fit even shortened.
    """
    factor = estimator.factor  # one value throughout, even if another thread calibrates meanwhile
    costs = _costs(messages)
    total = fixed + sum(costs)
    if _scaled(total, factor) <= budget:
        return FitResult(list(messages), 0, 0, _scaled(total, factor), total)
    latest = latest_person(messages)
    floor = fixed + costs[0] + (costs[latest] if latest else 0)
    if _scaled(floor, factor) > budget:
        raise ContextTooSmall(_scaled(floor, factor), budget)
    fitting = _Fitting(messages, costs, total, latest=latest, fits=lambda total: _scaled(total, factor) <= budget)
    old, current = range(1, latest), range(latest + 1, len(messages))
    fitting.trim(old, own=False)
    fitting.drop(_split(old, lambda i: _is_person(messages[i])))  # whole turns
    fitting.trim(current, own=True)
    if not fitting.fits():
        raise AnswerTooLong(_scaled(fitting.total, factor), budget)
    fitted = [m for m in fitting.kept if m is not None]
    trimmed = sum(1 for m, original in zip(fitting.kept, messages, strict=True) if m is not None and m is not original)
    return FitResult(fitted, trimmed, len(messages) - len(fitted), _scaled(fitting.total, factor), fitting.total)


class _Fitting:
    """A transcript being fitted: what is kept of each message (None: left out), its cost, and the running total.

    Each index is shortened or left out at most once, so `messages[i]` is what `kept[i]` still holds.
    """

    def __init__(
        self, messages: list[dict[str, Any]], costs: list[int], total: int, *, latest: int, fits: Callable[[int], bool]
    ) -> None:
        self.messages = messages
        self.latest = latest
        """The latest user message: what comes after it is the current answer, whose thinking counts."""
        self.kept: list[dict[str, Any] | None] = list(messages)
        self.costs = costs
        self.total = total
        self._fits = fits

    def fits(self) -> bool:
        return self._fits(self.total)

    def trim(self, span: range, *, own: bool) -> None:
        """Shorten the messages of `span` in order until the transcript fits (`own`: the model's own text too)."""
        for i in span:
            if self.fits():
                return
            shortened = _shortened(self.messages[i], own=own)
            cost = _cost(shortened, thinking=i > self.latest) if shortened else self.costs[i]
            if cost < self.costs[i]:
                self.kept[i], self.total, self.costs[i] = shortened, self.total - self.costs[i] + cost, cost

    def drop(self, units: list[range]) -> None:
        """Leave out whole units (turns) in order until the transcript fits."""
        for unit in units:
            if self.fits():
                return
            for i in unit:
                self.kept[i], self.total = None, self.total - self.costs[i]


def _split(span: range, starts: Callable[[int], bool]) -> list[range]:
    """`span` cut into consecutive ranges: a new one begins at every index where `starts` holds."""
    firsts = [i for i in span if i == span.start or starts(i)]
    return [range(first, end) for first, end in pairwise([*firsts, span.stop])]


def _shortened(message: dict[str, Any], *, own: bool) -> dict[str, Any] | None:
    """A copy of a tool result (or, if `own`, of the model's own message) with long text cut to its head and tail;
    None if that saves nothing."""
    if _is_result(message):
        content = message.get("content") or ""
        wrapped = _WRAPPED.fullmatch(content) if message.get("role") == "user" else None
        before, text, after = wrapped.groups() if wrapped else ("", content, "")
        cut = _head_and_tail(text, _RESULT_CUT)
        return None if cut is None else {**message, "content": f"{before}{cut}{after}"}
    if not own or message.get("role") != "assistant":
        return None
    copy = dict(message)
    for key in ("content", "thinking"):
        if (cut := _head_and_tail(message.get(key) or "", _OWN_CUT)) is not None:
            copy[key] = cut
    if message.get("tool_calls"):
        copy["tool_calls"] = [_shortened_call(call) for call in message["tool_calls"]]
    return None if copy == message else copy


def _shortened_call(call: dict[str, Any]) -> dict[str, Any]:
    """A native tool call with each long string argument (a file's content, say) cut to its head and tail."""
    arguments = (call.get("function") or {}).get("arguments")
    if not isinstance(arguments, dict):
        return call
    shortened = {
        name: cut if isinstance(value, str) and (cut := _head_and_tail(value, _OWN_CUT)) is not None else value
        for name, value in arguments.items()
    }
    return {**call, "function": {**call["function"], "arguments": shortened}}


def _head_and_tail(text: str, note: str) -> str | None:
    """`text` cut to its head and tail with `note` (formatted with `cut`, the characters left out) in between;
    None if that saves nothing."""
    if not text:
        return None
    per_char = estimate_tokens(text) / len(text)
    head_chars, tail_chars = int(_HEAD_TOKENS / per_char), int(_TAIL_TOKENS / per_char)
    if head_chars + tail_chars >= len(text):
        return None
    head, tail = text[:head_chars], text[len(text) - tail_chars :]
    # Cut at line ends where one is near, so that code and listings keep whole lines.
    if (end := head.rfind("\n")) >= head_chars // 2:
        head = head[: end + 1]
    if 0 <= (start := tail.find("\n")) < tail_chars // 2:
        tail = tail[start + 1 :]
    cut = len(text) - len(head) - len(tail)
    head = head.rstrip("\n")
    return f"{head}\n{note.format(cut=cut)}\n{tail}"


def trim_notice(result: FitResult, num_ctx: int) -> Notice | None:
    """The note for the person when the request was shortened to fit `num_ctx` tokens; None when nothing was cut."""
    if not result.trimmed_results and not result.dropped_messages:
        return None
    return Notice(
        "context_trimmed",
        {"results_shortened": bool(result.trimmed_results), "dropped": result.dropped_messages, "context": num_ctx},
    )
