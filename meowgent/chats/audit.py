"""What a chat's calls leave in the store: a row per call, and for each risky one a row of the audit trail.

The rows hold codes and values (see `meowgent.persist.calls`); `meowgent.ui.html.auditlog` words them.
A `CallLedger` remembers, for one chat, the calls proposed and the person's decisions until each call
has its result; it does no I/O, so the recorder writes its rows with the event that made them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Literal

from meowgent.conversation import Decision
from meowgent.events import AgentEvent, ToolCall, ToolCallReady, ToolResult
from meowgent.persist.calls import AuditRow, CallRow
from meowgent.policy.hosts import network_hosts


@dataclass(frozen=True, slots=True)
class _Decided:
    decision: Decision
    account: str
    """The login name of the person who decided; "" for the browser that owns the chat."""
    time: float


_MOVED_ON: frozenset[str | None] = frozenset({"new_message", "new_answer"})
"""Why a call ended undecided: the person went on instead of deciding (`ToolResult.not_run`)."""
_REFUSED: frozenset[str | None] = frozenset({"rules", "changed_call"})
"""Why a call ended refused: the rules' (`ToolResult.reason` holds their reason)."""


class CallLedger:
    """One chat's calls from proposal to result: the call rows they make, and the audit rows of the risky ones."""

    def __init__(self) -> None:
        self._calls: dict[str, ToolCall] = {}
        """Calls proposed in this chat, by id, until they have a result."""
        self._decided: dict[str, _Decided] = {}
        """Decisions not yet carried out, by call id."""
        self._lock = threading.Lock()  # decisions come from a page's thread, results from the run's

    def decided(
        self, calls: Iterable[ToolCall], decisions: Mapping[str, Decision], *, account: str, now: float
    ) -> list[CallRow]:
        """Remember the person's decisions on waiting calls; the rows that mark those calls approved or rejected."""
        rows = []
        with self._lock:
            for call in calls:
                if (decision := decisions.get(call.id)) is not None:
                    self._decided[call.id] = _Decided(decision, account, now)
                    status = "approved" if decision.approved else "rejected"
                    rows.append(CallRow(call.id, call.name, call.arguments, status))
        return rows

    def rows(
        self, event: AgentEvent, *, risky: Callable[[str], bool], chat_network: tuple[str, ...], now: float
    ) -> tuple[list[CallRow], list[AuditRow]]:
        """The call and audit rows an event makes: a ready call is queued, a result ends its call."""
        if isinstance(event, ToolCallReady):
            with self._lock:
                self._calls[event.call.id] = event.call
            return [CallRow(event.call.id, event.call.name, event.call.arguments, "pending")], []
        if not isinstance(event, ToolResult):
            return [], []
        with self._lock:
            call = self._calls.pop(event.call_id, None)
            decided = self._decided.pop(event.call_id, None)
        if call is None:  # a call that never parsed has no row
            return [], []
        ran = event.edited_arguments or call.arguments
        row = CallRow(call.id, call.name, ran, event.status, event.output, now - event.duration, now)
        if not risky(call.name):
            return [row], []
        return [row], [_audit_row(call, event, decided, chat_network=chat_network, now=now)]


def _audit_row(
    call: ToolCall, result: ToolResult, decided: _Decided | None, *, chat_network: tuple[str, ...], now: float
) -> AuditRow:
    """What was proposed, what ran, who decided what and how it ended, for one risky call."""
    ran = None if result.status == "rejected" else (result.edited_arguments or call.arguments)
    row = AuditRow(now, call.name, call.arguments, ran, "allowed", "rules_or_chat", "owner", result.status)
    if call.name == "run_shell" and ran is not None:  # the hosts as the agent gave them to the command
        hosts = network_hosts(chat_network, decided.decision.network if decided is not None else ())
        row = replace(row, network=bool(hosts), hosts=list(hosts) if hosts else None)
    if result.reached is not None:  # where it went through its proxy
        row = replace(row, reached=list(result.reached), refused=list(result.refused))
    if result.not_run in _REFUSED:
        row = replace(row, why=dict(result.reason))
    if decided is None:  # the rules or a chat scope let it run or refused it, or a new message or answer came first
        if result.status != "rejected":
            return row
        return replace(row, decision="not_decided" if result.not_run in _MOVED_ON else "not_approved")
    choice = decided.decision
    scope = choice.scope if choice.approved else None
    return replace(
        row,
        time=decided.time,
        decision="approved" if choice.approved else "rejected",
        scope="once" if scope is None else "for_chat",
        chat_scope=None if scope is None else asdict(scope),
        decided_by="account" if decided.account else "owner_browser",
        account=decided.account,
        reason=choice.reason,
    )


def own_act_row(act: Literal["upload", "undo"], details: dict[str, object], *, account: str, now: float) -> AuditRow:
    """The approval log's row for something the person did themselves (an upload, an undo): nobody approves it.

    `details` is what was done, as plain values ({"path": "report.pdf", "size": 2100000}); `account` is the login
    name ("" for the browser that owns the chat).
    """
    return AuditRow(
        now,
        act,
        details,
        details,
        "person",
        "once",
        "account" if account else "owner_browser",
        "done",
        account=account,
    )
