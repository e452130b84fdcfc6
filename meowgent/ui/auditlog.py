"""The approval log as a readable list: per risky call, what was proposed and what ran, who decided, why, the end."""

from __future__ import annotations

import time
from typing import Any

from meowgent.ui.actions import action, lookup
from meowgent.ui.i18n import ENGLISH, audit_words, t
from meowgent.ui.render import arguments_html
from meowgent.ui.safehtml import Html, block, escape, join, tag


def audit_html(entries: list[dict[str, Any]], language: str = ENGLISH) -> Html:
    """One item per call, oldest first; every value the model chose is escaped."""
    if not entries:
        return block(tag("p", t(language, "no_audit")))
    return block(tag("ol", join([tag("li", _entry(entry, language)) for entry in entries])), cls="mg mg-audit")


def _entry(entry: dict[str, Any], language: str) -> Html:
    tool, proposed, ran = entry["tool"], entry["proposed"] or {}, entry["run"]
    when = time.strftime("%H:%M:%S", time.localtime(entry["time"]))
    heading = tag("p", tag("strong", join([when, " · ", action(tool, lookup(proposed), language)])))
    decision = audit_words(language, "decision", entry["decision"])
    scope = audit_words(language, "scope", entry["scope"])
    who = t(language, "audit_by", who=audit_words(language, "by", entry["decided_by"]))
    decided = t(language, "audit_decided", decision=decision, scope=scope, who=who)
    lines: list[str | Html] = [heading, _line(language, "audit_decision", decided)]
    if reason := entry.get("reason"):
        lines.append(_line(language, "audit_reason", reason))
    if ran is None:
        lines.append(_line(language, "audit_ran", t(language, "audit_not_run")))
    elif ran == proposed:
        lines.append(_line(language, "audit_ran", t(language, "audit_ran_same")))
    else:
        lines.append(_line(language, "audit_ran", action(tool, lookup(ran), language)))
    lines.append(_line(language, "audit_outcome", audit_words(language, "outcome", entry["outcome"])))
    if entry.get("network") is not None:  # a command that ran: could it reach the network
        lines.append(
            _line(language, "audit_network", t(language, f"audit_network_{'on' if entry['network'] else 'off'}"))
        )
    lines.append(_unfolding(t(language, "audit_proposed"), arguments_html(tool, proposed, language)))
    if ran is not None and ran != proposed:
        lines.append(_unfolding(t(language, "audit_ran"), arguments_html(tool, ran, language)))
    return join(lines)


def _unfolding(summary: str, body: Html) -> Html:
    return tag("details", tag("summary", summary), body)


def _line(language: str, key: str, value: str | Html) -> Html:
    return tag("p", join([tag("strong", t(language, key)), escape(": " if language == ENGLISH else "："), value]))
