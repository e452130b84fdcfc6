"""A chat's tool calls and the audit trail of its risky ones: the rows, and how the store reads and writes them.

Rows hold codes and values, never sentences: `meowgent.ui.html.auditlog` words them in the person's language.
The functions take a connection inside a transaction that the store opened.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, fields
from typing import Any, Literal

from meowgent.persist.records import dump

CallStatus = Literal["pending", "approved", "rejected", "done", "error"]

AuditDecision = Literal["approved", "rejected", "not_approved", "allowed", "person", "not_decided", "legacy"]
"""The person approved or rejected it; `not_approved`: the rules refused it; `not_decided`: nobody decided, as a new
message or a new answer came first; `allowed`: the rules or a chat scope allowed it; `person`: the person's own act
(an upload, an undo), which needs no approval; `legacy`: an older Meowgent's phrase, in `AuditRow.legacy`."""
AuditScope = Literal["once", "rules_or_chat", "for_chat", "legacy"]
"""What the decision covered: this call; whatever the rules or the chat's scopes allow; `AuditRow.chat_scope` for
the rest of the chat."""
Decider = Literal["owner", "owner_browser", "account", "legacy"]
"""Who decided: the chat's owner (by their rules); the browser that owns the chat; `AuditRow.account`, logged in."""
AuditOutcome = Literal["done", "error", "rejected", "legacy"]
"""It ran; it ran and failed; it did not run."""


@dataclass(frozen=True, slots=True)
class CallRow:
    """One tool call of a chat as it stands: queued, decided, run."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    status: CallStatus
    result: str | None = None
    started: float | None = None
    finished: float | None = None


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One risky call: what was proposed and what ran, who decided what and why, how it ended."""

    time: float
    tool: str
    proposed: dict[str, Any]
    run: dict[str, Any] | None
    """The arguments that ran (the person's edit, if any); None if nothing ran."""
    decision: AuditDecision
    scope: AuditScope
    decided_by: Decider
    outcome: AuditOutcome
    reason: str = ""
    """Why the person rejected it, in their words."""
    why: dict[str, Any] | None = None
    """Why the rules refused it, or refused the person's change of it: their reason's values
    (`meowgent.policy.why.Why.values()`)."""
    chat_scope: dict[str, Any] | None = None
    """With scope `for_chat`: what the person allowed for the rest of the chat, as `Conversation.scopes` stores it."""
    account: str = ""
    """With decided_by `account`: the login name."""
    network: bool | None = None
    """For a command that ran: whether it could reach the network."""
    hosts: list[str] | None = None
    """For a command that ran with network: the hosts it was given (names or patterns; `*` any)."""
    reached: list[str] | None = None
    """For a command that ran with network: the hosts it reached through its proxy."""
    refused: list[str] | None = None
    """For a command that ran with network: the hosts its proxy refused to it."""
    legacy: dict[str, Any] | None = None
    """Phrases an older Meowgent stored that no code stands for, by field, kept as they were."""


_CALL_COLUMNS = ", ".join(f.name for f in fields(CallRow))
_AUDIT_FIELDS = tuple(f.name for f in fields(AuditRow))
_AUDIT_JSON = ("proposed", "run", "chat_scope", "legacy", "hosts", "reached", "refused", "why")
"""AuditRow fields stored as JSON text (NULL for None)."""


def record_call(conn: sqlite3.Connection, conversation_id: str, row: CallRow) -> None:
    """Insert or update one call. On update, `result`, `started` and `finished` left None keep their value."""
    conn.execute(
        f"INSERT INTO tool_calls (conversation_id, {_CALL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (conversation_id, call_id) DO UPDATE SET"
        " name = excluded.name, arguments = excluded.arguments, status = excluded.status,"
        " result = COALESCE(excluded.result, result), started = COALESCE(excluded.started, started),"
        " finished = COALESCE(excluded.finished, finished)",
        (
            conversation_id,
            row.call_id,
            row.name,
            dump(row.arguments),
            row.status,
            row.result,
            row.started,
            row.finished,
        ),
    )


def calls(conn: sqlite3.Connection, conversation_id: str) -> list[CallRow]:
    """The conversation's calls in the order they were first recorded."""
    rows = conn.execute(
        f"SELECT {_CALL_COLUMNS} FROM tool_calls WHERE conversation_id = ? ORDER BY rowid", (conversation_id,)
    )
    return [CallRow(call_id, name, json.loads(arguments), *rest) for call_id, name, arguments, *rest in rows]


def add_audit(conn: sqlite3.Connection, conversation_id: str, row: AuditRow) -> None:
    """Append one audit row after the conversation's last."""
    (seq,) = conn.execute(
        "SELECT COALESCE(MAX(seq) + 1, 0) FROM audit WHERE conversation_id = ?", (conversation_id,)
    ).fetchone()
    values = [_column(name, getattr(row, name)) for name in _AUDIT_FIELDS]
    conn.execute(
        f"INSERT INTO audit (conversation_id, seq, {', '.join(_AUDIT_FIELDS)}) VALUES (?, ?{', ?' * len(values)})",
        (conversation_id, seq, *values),
    )


def audit(conn: sqlite3.Connection, conversation_id: str) -> list[AuditRow]:
    """The conversation's audit trail, oldest first."""
    rows = conn.execute(
        f"SELECT {', '.join(_AUDIT_FIELDS)} FROM audit WHERE conversation_id = ? ORDER BY seq", (conversation_id,)
    )
    return [
        AuditRow(**{name: _field(name, value) for name, value in zip(_AUDIT_FIELDS, row, strict=True)}) for row in rows
    ]


def _column(name: str, value: Any) -> Any:
    """An AuditRow field as its column holds it."""
    return dump(value) if name in _AUDIT_JSON and value is not None else value


def _field(name: str, value: Any) -> Any:
    """An audit column's value as the AuditRow field."""
    if value is None:
        return None
    if name in _AUDIT_JSON:
        return json.loads(value)
    return bool(value) if name == "network" else value
