"""The store's schema, version by version: each migration brings a data file from the version before it to its own.

`PRAGMA user_version` counts the migrations applied. The list is append-only: a migration that has shipped is
never edited or reordered, since data files out there are at its version. So a migration spells out the
columns and phrases of the version it reads, rather than asking today's code what they are.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from typing import Any

from meowgent.persist.records import dump


def _v1_core(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            model TEXT NOT NULL DEFAULT '',
            workspace TEXT NOT NULL DEFAULT '',
            think INTEGER NOT NULL DEFAULT 1,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            pending TEXT NOT NULL DEFAULT '[]',
            interrupted INTEGER NOT NULL DEFAULT 0
        )"""
    )
    conn.execute("CREATE INDEX conversations_by_owner ON conversations (owner, updated)")
    for table in ("messages", "events"):
        conn.execute(
            f"""CREATE TABLE {table} (
                conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                body TEXT NOT NULL,
                PRIMARY KEY (conversation_id, seq)
            ) WITHOUT ROWID"""
        )
    # A rowid table on purpose: `calls()` lists calls in the order they were first recorded.
    conn.execute(
        """CREATE TABLE tool_calls (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            call_id TEXT NOT NULL,
            name TEXT NOT NULL,
            arguments TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'done', 'error')),
            result TEXT,
            started REAL,
            finished REAL,
            PRIMARY KEY (conversation_id, call_id)
        )"""
    )


def _v2_audit(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE audit (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            time REAL NOT NULL,
            tool TEXT NOT NULL,
            proposed TEXT NOT NULL,
            run TEXT,
            decision TEXT,
            scope TEXT,
            decided_by TEXT,
            outcome TEXT,
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID"""
    )


def _v3_scopes(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE conversations ADD COLUMN scopes TEXT NOT NULL DEFAULT '[]'")


def _v4_servers_off(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE conversations ADD COLUMN servers_off TEXT NOT NULL DEFAULT '[]'")


def _v5_pending_rows(conn: sqlite3.Connection) -> None:
    """The queued calls get a row each, so that running one deletes a row instead of rewriting the whole queue."""
    conn.execute(
        """CREATE TABLE pending_calls (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID"""
    )
    queues = conn.execute("SELECT id, pending FROM conversations").fetchall()
    conn.executemany(
        "INSERT INTO pending_calls (conversation_id, seq, body) VALUES (?, ?, ?)",
        [(cid, seq, dump(call)) for cid, queue in queues for seq, call in enumerate(json.loads(queue))],
    )
    conn.execute("ALTER TABLE conversations DROP COLUMN pending")


def _v6_audit_reason(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE audit ADD COLUMN reason TEXT NOT NULL DEFAULT ''")


def _v7_network(conn: sqlite3.Connection) -> None:
    """Whether a chat's commands may reach the network, and whether each audited command could (NULL: not a
    command, or recorded before the sandbox)."""
    conn.execute("ALTER TABLE conversations ADD COLUMN network INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE audit ADD COLUMN network INTEGER")


# ---- v8: the audit trail as codes and values ----

# What versions 2 to 7 stored in the audit table's English columns, and the code each phrase stands for.
_DECISIONS = {
    "approved": "approved",
    "rejected": "rejected",
    "rejected: not approved": "not_approved",
    "allowed": "allowed",
}
_SCOPES = {"once": "once", "by your rules or a permission for this chat": "rules_or_chat"}
_DECIDERS = {"the browser that owns the chat": "owner_browser", "the chat's owner": "owner"}
_OUTCOMES = {"done": "done", "error": "error", "rejected": "rejected"}
_FOR_CHAT = "for this chat: "
# "for this chat: " and the scope as str() said it, in every wording it had: (its pattern, the scope's field).
# The quoted value is JSON (json.dumps); a tool named in the phrase overrides the row's.
_SCOPE_PHRASES = (
    (re.compile(r'the command (".*")', re.DOTALL), "command"),
    (re.compile(r'commands starting with (".*")', re.DOTALL), "prefix"),
    (re.compile(r'(?:writing|editing) (".*")', re.DOTALL), "path"),
    (re.compile(r'(?P<tool>[\w.-]+) on (".*")', re.DOTALL), "path"),
    (re.compile(r'reading pages from (".*")', re.DOTALL), "host"),
    (re.compile(r'(?P<tool>web_fetch) from (".*")', re.DOTALL), "host"),
    (re.compile(r"every tool of the MCP server (?P<server>.+)", re.DOTALL), None),
    (re.compile(r"every (?P<tool>\S+) call", re.DOTALL), None),
)


def _chat_scope(phrase: str, tool: str) -> dict[str, str | None] | None:
    """The scope a "for this chat: …" phrase named, as conversations.scopes stores one; None if it names none."""
    for pattern, field in _SCOPE_PHRASES:
        found = pattern.fullmatch(phrase)
        if found is None:
            continue
        named = found.groupdict()
        scope: dict[str, str | None] = {"tool": named.get("tool") or tool}
        scope |= {"command": None, "prefix": None, "path": None, "host": None}
        if "server" in named:
            scope["tool"] = named["server"] + "__*"
        if field is not None:
            try:
                value = json.loads(found.groups()[-1])
            except ValueError:
                return None
            if not isinstance(value, str):
                return None
            scope[field] = value
        return scope
    return None


def _coded(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A v7 audit row with its English phrases as codes; a phrase no code stands for goes to `legacy` as it is."""
    conversation_id, seq, at, tool, proposed, run, decision, scope, decided_by, outcome, reason, network = row
    legacy: dict[str, Any] = {}

    def code(field: str, phrase: Any, codes: dict[str, str]) -> str:
        if phrase in codes:
            return codes[phrase]
        legacy[field] = phrase
        return "legacy"

    chat_scope = None
    if isinstance(scope, str) and scope.startswith(_FOR_CHAT):
        chat_scope = _chat_scope(scope.removeprefix(_FOR_CHAT), tool)
    scope_code = "for_chat" if chat_scope is not None else code("scope", scope, _SCOPES)
    # Every other name is the login name of the account that decided (request.username).
    account = decided_by if isinstance(decided_by, str) and decided_by and decided_by not in _DECIDERS else ""
    decider = "account" if account else code("decided_by", decided_by, _DECIDERS)
    return (
        conversation_id,
        seq,
        at,
        tool,
        proposed,
        run,
        code("decision", decision, _DECISIONS),
        scope_code,
        None if chat_scope is None else dump(chat_scope),
        decider,
        account,
        code("outcome", outcome, _OUTCOMES),
        reason,
        network,
        dump(legacy) if legacy else None,
    )


def _v8_audit_codes(conn: sqlite3.Connection) -> None:
    """Audit rows hold codes and values, which the page words in the person's language, instead of English.

    Each old row is converted; a phrase no code stands for is kept in `legacy` ({column: phrase}), shown as it is.
    """
    conn.execute(
        """CREATE TABLE audit_codes (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            time REAL NOT NULL,
            tool TEXT NOT NULL,
            proposed TEXT NOT NULL,
            run TEXT,
            decision TEXT NOT NULL
                CHECK (decision IN ('approved', 'rejected', 'not_approved', 'allowed', 'legacy')),
            scope TEXT NOT NULL CHECK (scope IN ('once', 'rules_or_chat', 'for_chat', 'legacy')),
            chat_scope TEXT,
            decided_by TEXT NOT NULL CHECK (decided_by IN ('owner', 'owner_browser', 'account', 'legacy')),
            account TEXT NOT NULL DEFAULT '',
            outcome TEXT NOT NULL CHECK (outcome IN ('done', 'error', 'rejected', 'legacy')),
            reason TEXT NOT NULL DEFAULT '',
            network INTEGER,
            legacy TEXT,
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID"""
    )
    old = conn.execute(
        "SELECT conversation_id, seq, time, tool, proposed, run, decision, scope, decided_by, outcome, reason,"
        " network FROM audit"
    ).fetchall()
    conn.executemany(f"INSERT INTO audit_codes VALUES ({', '.join('?' * 15)})", [_coded(row) for row in old])
    conn.execute("DROP TABLE audit")
    conn.execute("ALTER TABLE audit_codes RENAME TO audit")


def _v9_checkpoints(conn: sqlite3.Connection) -> None:
    """Checkpoints: a file's state before an approved write, its bytes kept as a blob in the data folder (by hash).

    `before` and `after` are the SHA-256 of the file before the call and of what the call left (NULL: no file).
    `kept` turns 0 when the cap prunes the blob: the row stays, so Undo can say why it cannot restore.
    The audit trail gains the decision `person`: the person's own act (an upload, an undo), which asks nobody.
    """
    conn.execute(
        """CREATE TABLE checkpoints (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            call_id TEXT NOT NULL,
            message INTEGER NOT NULL,
            path TEXT NOT NULL,
            before TEXT,
            before_size INTEGER NOT NULL DEFAULT 0,
            after TEXT,
            after_size INTEGER NOT NULL DEFAULT 0,
            time REAL NOT NULL,
            kept INTEGER NOT NULL DEFAULT 1,
            undone INTEGER NOT NULL DEFAULT 0
        )"""
    )
    conn.execute("CREATE INDEX checkpoints_by_chat ON checkpoints (conversation_id, seq)")
    conn.execute(
        """CREATE TABLE audit_v9 (
            conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            time REAL NOT NULL,
            tool TEXT NOT NULL,
            proposed TEXT NOT NULL,
            run TEXT,
            decision TEXT NOT NULL
                CHECK (decision IN ('approved', 'rejected', 'not_approved', 'allowed', 'person', 'legacy')),
            scope TEXT NOT NULL CHECK (scope IN ('once', 'rules_or_chat', 'for_chat', 'legacy')),
            chat_scope TEXT,
            decided_by TEXT NOT NULL CHECK (decided_by IN ('owner', 'owner_browser', 'account', 'legacy')),
            account TEXT NOT NULL DEFAULT '',
            outcome TEXT NOT NULL CHECK (outcome IN ('done', 'error', 'rejected', 'legacy')),
            reason TEXT NOT NULL DEFAULT '',
            network INTEGER,
            legacy TEXT,
            PRIMARY KEY (conversation_id, seq)
        ) WITHOUT ROWID"""
    )
    conn.execute("INSERT INTO audit_v9 SELECT * FROM audit")
    conn.execute("DROP TABLE audit")
    conn.execute("ALTER TABLE audit_v9 RENAME TO audit")


def _v10_network_hosts(conn: sqlite3.Connection) -> None:
    """Network by host: the hosts a chat's commands may reach (JSON; NULL for a chat stored before, whose
    `network` 1 reads as any host), and for each audited command the hosts it was given, the ones it reached and
    the ones refused to it (JSON; NULL: it had no network)."""
    conn.execute("ALTER TABLE conversations ADD COLUMN network_hosts TEXT")
    for column in ("hosts", "reached", "refused"):
        conn.execute(f"ALTER TABLE audit ADD COLUMN {column} TEXT")


def _v11_watch_links(conn: sqlite3.Connection) -> None:
    """Watch links outlive a restart: each chat's live link as the SHA-256 of its token (never the token)."""
    conn.execute(
        """CREATE TABLE watch_links (
            conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
            digest BLOB NOT NULL UNIQUE CHECK (length(digest) = 32),
            owner TEXT NOT NULL,
            expires_at REAL NOT NULL
        ) WITHOUT ROWID"""
    )


def _v12_not_decided(conn: sqlite3.Connection) -> None:
    """The audit's decision `not_decided`: a risky call nobody approved or rejected, because the person sent a new
    message or asked for a new answer first. Before, such a call was `not_approved`, which reads "rejected by your
    rules". SQLite cannot change a CHECK, so the table is made again as it stands, with the one value more. And
    `why`: the rules' reason for a call they refused (JSON; NULL for the rows before, which did not keep it)."""
    (made,) = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audit'").fetchone()
    allowed = "'allowed', 'person', 'legacy'"
    if made.count(allowed) != 1:
        raise sqlite3.DatabaseError("the audit table is not the one schema 11 made")
    again = made.replace(allowed, "'allowed', 'person', 'not_decided', 'legacy'").replace('"audit"', "audit_v12", 1)
    conn.execute(again)
    conn.execute("INSERT INTO audit_v12 SELECT * FROM audit")
    conn.execute("DROP TABLE audit")
    conn.execute("ALTER TABLE audit_v12 RENAME TO audit")
    conn.execute("ALTER TABLE audit ADD COLUMN why TEXT")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _v1_core,
    _v2_audit,
    _v3_scopes,
    _v4_servers_off,
    _v5_pending_rows,
    _v6_audit_reason,
    _v7_network,
    _v8_audit_codes,
    _v9_checkpoints,
    _v10_network_hosts,
    _v11_watch_links,
    _v12_not_decided,
]
"""Schema changes in order; `PRAGMA user_version` counts those applied. Append only: never edit or reorder."""

SCHEMA_VERSION = len(MIGRATIONS)
