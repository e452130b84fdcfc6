"""Every sentence the page shows, in English and Traditional Chinese (zh-TW).

The catalogs are data: `en.py` and `zh_tw.py` map the same keys to templates with the same `{placeholders}`.
`t(language, key, **values)` formats one entry. Labels, the approval card, the banner, model facts, notices and
errors all come from here. The rest of Meowgent writes no words for the person: its notes and errors carry a kind
and plain values (`Notice`, `ErrorEvent`, `ModelError`, `ChatError`, `Risk`, a call's `ToolResult.not_run` and the
rules' `Why`), which the functions below word, so rewording an English entry never changes the Chinese page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from meowgent.events import Notice
from meowgent.policy.risks import Risk
from meowgent.ui.i18n import en, zh_tw

if TYPE_CHECKING:
    from meowgent.chats.errors import ChatError

ENGLISH, CHINESE = "en", "zh-TW"
LANGUAGES = {ENGLISH: "English", CHINESE: "繁體中文"}
CATALOGS: dict[str, dict[str, str]] = {ENGLISH: en.TEXT, CHINESE: zh_tw.TEXT}

_OWN_SENTENCES = (Risk.HIDDEN,)
"""Risk notes said as a sentence of their own, not as a phrase after "this …"."""


class Worded(Protocol):
    """What happened, as a kind and plain values: a `Notice`, an `ErrorEvent`, a `ModelError`, a `ContextTooSmall`."""

    kind: str
    values: Mapping[str, Any]


def t(language: str, key: str, **values: object) -> str:
    """The entry `key` in `language` (English if missing), formatted with `values`."""
    text = CATALOGS.get(language, en.TEXT).get(key) or en.TEXT[key]
    return text.format(**values) if values else text


def pick_language(accept_language: str | None) -> str:
    """zh-TW for a browser that prefers Chinese (Traditional Chinese is the one we have), else English."""
    for part in (accept_language or "").split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("zh"):
            return CHINESE
        if tag.startswith("en"):
            return ENGLISH
    return ENGLISH


def risks(language: str, notes: tuple[Risk, ...]) -> str:
    """Risk notes in `language`: "this …" and the phrases joined, then the notes that are sentences of their own."""
    phrases = [t(language, f"risk_{note.value}") for note in notes if note not in _OWN_SENTENCES]
    said = [t(language, "risk_this", risks=t(language, "risk_separator").join(phrases))] if phrases else []
    own = [t(language, f"risk_{note.value}") for note in notes if note in _OWN_SENTENCES]
    return t(language, "risk_sentences").join(said + own)


def chat_error_text(language: str, error: ChatError) -> str:
    """What a chat's action could not do, in `language`."""
    values = dict(error.values)
    if "why" in values:  # the rules' reason, as plain values
        values["detail"] = why_text(language, values.pop("why"))
    return t(language, f"chat_error_{error.kind.value}", **values)


def not_run_text(language: str, why: str, reason: Mapping[str, Any]) -> str:
    """Why a call did not run (`ToolResult.not_run`), in `language`, with the reason given: the person's own words,
    or the rules' (`why_text`)."""
    said = _entry(language, f"not_run_{why}", "not_run_other")
    if not reason:
        return said
    detail = str(reason["said"]) if "said" in reason else why_text(language, reason)
    return t(language, "not_run_with_reason", said=said, reason=detail)


def why_text(language: str, why: Mapping[str, Any]) -> str:
    """The rules' reason (`meowgent.policy.why.Why.values()`) in `language`: the rule and the command as written,
    and a line's problems (`problems_text`)."""
    values = {name: why.get(name, "") for name in ("rule", "text", "path")}
    return _entry(language, f"why_{why.get('kind')}", "why_other", **values, problems=problems_text(language, why))


def problems_text(language: str, why: Mapping[str, Any]) -> str:
    """What leaves a line open, from a reason's values: the first few problems, each quoting its snippet, and how
    many more."""
    problems = t(language, "problem_separator").join(
        _entry(language, f"problem_{kind}", "problem_other", snippet=f"`{snippet}`")
        for kind, snippet in why.get("problems", ())
    )
    if why.get("more"):
        problems += t(language, "problems_more", count=why["more"])
    return problems


def _entry(language: str, key: str, other: str, **values: object) -> str:
    """The entry `key`, or `other` where no catalog has it (a kind a newer Meowgent stored, say)."""
    return t(language, key if key in en.TEXT else other, **values)


def notice_text(language: str, notice: Notice) -> str:
    """A notice for the chat, in `language`."""
    if notice.kind == "context_trimmed":
        return _trimmed(language, **notice.values)
    return _said(language, "notice", notice)


def error_text(language: str, error: Worded) -> str:
    """An error for the chat or a warning, in `language`: an `ErrorEvent`, or the `ModelError` it was made from."""
    return _said(language, "error", error)


def _said(language: str, prefix: str, said: Worded) -> str:
    """The entry for `said`'s kind (and its `case` value, where it has one), formatted with its values; a kind no
    catalog words (a newer Meowgent's, say) is named in a plain sentence rather than failing the page."""
    case = said.values.get("case")
    key = f"{prefix}_{said.kind}_{case}" if case else f"{prefix}_{said.kind}"
    if key not in en.TEXT:
        return t(language, f"{prefix}_other", kind=said.kind)
    return t(language, key, **said.values)


def _trimmed(language: str, *, results_shortened: bool, dropped: int, context: int) -> str:
    """The context-trimming notice (meowgent.context.trim_notice): what was cut, and the model's context size."""
    cut = [t(language, "trimmed_results")] if results_shortened else []
    if dropped:
        cut.append(
            t(language, "trimmed_dropped_one") if dropped == 1 else t(language, "trimmed_dropped", count=dropped)
        )
    size = f"{context // 1024}k" if context % 1024 == 0 else f"{context:,}"
    return t(language, "notice_context_trimmed", cut=t(language, "trimmed_and").join(cut), size=size)
