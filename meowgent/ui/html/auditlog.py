"""The approval log as a readable list: per risky call, what was proposed and what ran, who decided, why, the end.

The audit trail stores codes and values (`meowgent.persist.calls.AuditRow`); the words for them are here and in
`meowgent.ui.i18n`, in the person's language. A phrase an older Meowgent stored that no code stands for is shown
as it was.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from meowgent.files.sizes import human_size
from meowgent.persist.calls import AuditRow
from meowgent.policy.scopes import Scope
from meowgent.ui.html.actions import action, lookup
from meowgent.ui.html.callhtml import arguments_html
from meowgent.ui.html.safehtml import Html, block, escape, join, tag
from meowgent.ui.html.scopes import hosts_text, scope_label
from meowgent.ui.i18n import ENGLISH, t, why_text


@dataclass(frozen=True, slots=True)
class AuditWords:
    """One audit row's codes in words."""

    decision: str
    scope: str
    who: str
    """Who decided, as "by …" names them: "you", "you, in this browser", or the account's login name."""
    outcome: str


def audit_words(entry: AuditRow, language: str) -> AuditWords:
    """The row's decision, what it covered, who decided and how it ended, in `language`."""
    legacy = entry.legacy or {}

    def said(field: str, code: str, **values: str) -> str:
        if code == "legacy":
            return str(legacy.get(field) or "")
        return t(language, f"audit_{field}_{code}", **values)

    if entry.scope == "for_chat":
        scope = said("scope", entry.scope, scope=_chat_scope(entry.chat_scope or {}, language))
    else:
        scope = said("scope", entry.scope)
    who = entry.account if entry.decided_by == "account" else said("decided_by", entry.decided_by)
    return AuditWords(said("decision", entry.decision), scope, who, said("outcome", entry.outcome))


def audit_html(entries: list[AuditRow], language: str = ENGLISH) -> Html:
    """One item per call, oldest first; every value the model chose is escaped."""
    if not entries:
        return block(tag("p", t(language, "no_audit")))
    return block(tag("ol", join([tag("li", _entry(entry, language)) for entry in entries])), cls="mg mg-audit")


def _entry(entry: AuditRow, language: str) -> Html:
    if entry.decision == "person":
        return _own_act(entry, language)
    tool, proposed, ran = entry.tool, entry.proposed or {}, entry.run
    when = time.strftime("%H:%M:%S", time.localtime(entry.time))
    heading = tag("p", tag("strong", join([when, " · ", action(tool, lookup(proposed), language)])))
    words = audit_words(entry, language)
    who = t(language, "audit_by", who=words.who)
    decided = t(language, "audit_decided", decision=words.decision, scope=words.scope, who=who)
    if entry.decision == "not_decided":  # nobody decided: no scope, no one to name
        decided = words.decision
    lines: list[str | Html] = [heading, _line(language, "audit_decision", decided)]
    if entry.reason:
        lines.append(_line(language, "audit_reason", entry.reason))
    if entry.why:  # the rules refused it
        lines.append(_line(language, "audit_reason", why_text(language, entry.why)))
    if ran is None:
        lines.append(_line(language, "audit_ran", t(language, "audit_not_run")))
    elif ran == proposed:
        lines.append(_line(language, "audit_ran", t(language, "audit_ran_same")))
    else:
        lines.append(_line(language, "audit_ran", action(tool, lookup(ran), language)))
    lines.append(_line(language, "audit_outcome", words.outcome))
    if entry.network is not None:  # a command that ran: could it reach the network, and where
        lines.append(_line(language, "audit_network", _network_words(entry, language)))
    if entry.reached is not None:
        lines.append(_line(language, "audit_went", _went_words(entry.reached, entry.refused or [], language)))
    lines.append(_unfolding(t(language, "audit_proposed"), arguments_html(tool, proposed, language)))
    if ran is not None and ran != proposed:
        lines.append(_unfolding(t(language, "audit_ran"), arguments_html(tool, ran, language)))
    return join(lines)


def _network_words(entry: AuditRow, language: str) -> str:
    """ "off", "on, to pypi.org, *.python.org", or "on" for a command recorded before hosts were named."""
    if not entry.network:
        return t(language, "audit_network_off")
    if not entry.hosts:
        return t(language, "audit_network_on")
    return t(language, "audit_network_hosts", hosts=hosts_text(entry.hosts, language))


def _went_words(reached: list[str], refused: list[str], language: str) -> str:
    """ "reached pypi.org; refused x.com": where a command went through its proxy."""
    words = [t(language, "audit_reached", hosts=", ".join(reached)) if reached else t(language, "audit_reached_none")]
    if refused:
        words.append(t(language, "audit_refused", hosts=", ".join(refused)))
    return "; ".join(words)


def _own_act(entry: AuditRow, language: str) -> Html:
    """An upload or an undo: what the person did, and that it needed nobody's approval."""
    details = entry.proposed or {}
    path = str(details.get("path", ""))
    if entry.tool == "upload":
        key = "audit_upload_replaced" if details.get("replaced") else "audit_upload"
        said = t(language, key, path=path, size=human_size(int(details.get("size") or 0)))
    else:
        said = t(language, "audit_undo_removed" if details.get("removed") else "audit_undo", path=path)
    when = time.strftime("%H:%M:%S", time.localtime(entry.time))
    words = audit_words(entry, language)
    who = t(language, "audit_by", who=words.who)
    return join(
        [
            tag("p", tag("strong", join([when, " · ", said]))),
            _line(language, "audit_decision", join([words.decision, ", ", who])),
        ]
    )


def _chat_scope(stored: dict[str, Any], language: str) -> str:
    """What the person allowed for the chat, as the chat's list says it; a scope this Meowgent no longer reads
    (an "every write" from an older one, say) as its tool and pattern."""
    scope = Scope.from_stored(stored)
    if scope is not None:
        return scope_label(scope, language)
    return " ".join(str(value) for value in stored.values() if value is not None)


def _unfolding(summary: str, body: Html) -> Html:
    return tag("details", tag("summary", summary), body)


def _line(language: str, key: str, value: str | Html) -> Html:
    return tag("p", join([tag("strong", t(language, key)), escape(": " if language == ENGLISH else "："), value]))
