"""CallLedger: the call rows and audit rows each event and decision makes, as codes and values, without I/O."""

from dataclasses import asdict

import pytest

from meowgent.chats.audit import CallLedger
from meowgent.conversation import Decision
from meowgent.events import Done, TextDelta, ToolCall, ToolCallReady, ToolResult
from meowgent.persist.calls import AuditRow, CallRow
from meowgent.policy.scopes import Scope
from meowgent.policy.why import Why

LS = ToolCall("c1", "run_shell", {"command": "ls"})
NOTE = ToolCall("c2", "write_file", {"path": "a.md", "content": "x"})
READ = ToolCall("c3", "read_file", {"path": "a.md"})
RISKY = {"run_shell", "write_file"}.__contains__


def rows(ledger: CallLedger, event, *, chat_network: tuple[str, ...] = (), now: float = 100.0):
    return ledger.rows(event, risky=RISKY, chat_network=chat_network, now=now)


def proposed(*calls: ToolCall) -> CallLedger:
    """A ledger that saw each call become ready, checking the row each one makes."""
    ledger = CallLedger()
    for call in calls:
        assert rows(ledger, ToolCallReady(call, True)) == ([CallRow(call.id, call.name, call.arguments, "pending")], [])
    return ledger


def ran(call: ToolCall, output: str = "ok", **more) -> ToolResult:
    return ToolResult(call.id, call.name, output, "done", **more)


def test_an_approved_call_is_marked_approved_then_done_and_audited_as_the_person_decided():
    ledger = proposed(LS)
    assert ledger.decided([LS], {LS.id: Decision(True)}, account="", now=50.0) == [
        CallRow("c1", "run_shell", {"command": "ls"}, "approved")
    ]
    calls, audit = rows(ledger, ran(LS, "$ ls", duration=2.0), now=100.0)
    assert calls == [CallRow("c1", "run_shell", {"command": "ls"}, "done", "$ ls", 98.0, 100.0)]
    assert audit == [
        AuditRow(
            time=50.0,  # when the person decided
            tool="run_shell",
            proposed={"command": "ls"},
            run={"command": "ls"},
            decision="approved",
            scope="once",
            decided_by="owner_browser",
            outcome="done",
            network=False,
        )
    ]
    assert rows(ledger, ran(LS)) == ([], [])  # a result comes once; a second one has no call left


def test_a_rejection_names_the_account_and_keeps_the_reason_and_nothing_ran():
    ledger = proposed(LS)
    decided = ledger.decided([LS], {LS.id: Decision(False, "not on a Friday", network=("*",))}, account="bob", now=7.0)
    assert decided == [CallRow("c1", "run_shell", {"command": "ls"}, "rejected")]
    _, (row,) = rows(ledger, ToolResult("c1", "run_shell", "Not run", "rejected"))
    assert (row.decision, row.decided_by, row.account, row.reason) == ("rejected", "account", "bob", "not on a Friday")
    assert (row.run, row.network, row.outcome, row.time) == (None, None, "rejected", 7.0)


def test_allowing_for_the_chat_keeps_the_scope_as_the_chat_stores_it():
    ledger = proposed(NOTE)
    scope = Scope("write_file", path="docs/**")
    ledger.decided([NOTE], {NOTE.id: Decision(True, scope=scope)}, account="", now=1.0)
    _, (row,) = rows(ledger, ran(NOTE))
    assert (row.scope, row.chat_scope, row.network) == ("for_chat", asdict(scope), None)
    assert Scope.from_stored(row.chat_scope) == scope


def test_a_scope_on_a_rejection_covers_nothing():
    ledger = proposed(NOTE)
    ledger.decided([NOTE], {NOTE.id: Decision(False, scope=Scope("write_file", path="a.md"))}, account="", now=1.0)
    _, (row,) = rows(ledger, ToolResult(NOTE.id, NOTE.name, "Not run", "rejected"))
    assert (row.decision, row.scope, row.chat_scope) == ("rejected", "once", None)


@pytest.mark.parametrize(
    ("status", "decision", "run"),
    [
        ("done", "allowed", {"command": "ls"}),
        ("error", "allowed", {"command": "ls"}),
        ("rejected", "not_approved", None),
    ],
)
def test_a_call_nobody_decided_was_the_rules_or_a_chat_scope(status, decision, run):
    ledger = proposed(LS)
    _, (row,) = rows(ledger, ToolResult(LS.id, LS.name, "out", status), now=30.0)
    assert row == AuditRow(
        time=30.0,
        tool="run_shell",
        proposed={"command": "ls"},
        run=run,
        decision=decision,
        scope="rules_or_chat",
        decided_by="owner",
        outcome=status,
        network=None if run is None else False,
    )


@pytest.mark.parametrize(
    ("not_run", "decision"),
    [("rules", "not_approved"), ("new_message", "not_decided"), ("new_answer", "not_decided")],
)
def test_a_call_nobody_decided_that_did_not_run_says_whether_the_rules_refused_it(not_run, decision):
    # "not_approved" reads "rejected by your rules": a call the person went past without deciding is not that.
    ledger = proposed(LS)
    why = Why("rule_matches", 'deny run_shell command "ls"', "ls").values() if not_run == "rules" else {}
    result = ToolResult(LS.id, LS.name, "Not run", "rejected", not_run=not_run, reason=why)
    _, (row,) = rows(ledger, result, now=30.0)
    assert (row.decision, row.decided_by, row.outcome, row.run) == (decision, "owner", "rejected", None)
    assert row.why == (why or None)  # the rules' reason, kept for the log


def test_an_approved_change_the_rules_refused_keeps_their_reason():
    ledger = proposed(LS)
    ledger.decided([LS], {LS.id: Decision(True, arguments={"command": "rm x"})}, account="", now=1.0)
    why = Why("rule_matches", 'deny run_shell command "rm *"', "rm x").values()
    _, (row,) = rows(ledger, ToolResult(LS.id, LS.name, "Not run", "rejected", not_run="changed_call", reason=why))
    assert (row.decision, row.outcome, row.run, row.why) == ("approved", "rejected", None, why)


def test_an_edited_call_records_what_ran():
    ledger = proposed(LS)
    edited = {"command": "ls -la"}
    ledger.decided([LS], {LS.id: Decision(True, arguments=edited)}, account="", now=1.0)
    (call,), (row,) = rows(ledger, ran(LS, edited_arguments=edited))
    assert call.arguments == edited
    assert (row.proposed, row.run) == ({"command": "ls"}, edited)


@pytest.mark.parametrize(
    ("chat", "command", "hosts"),
    [
        ((), (), None),
        ((), ("pypi.org",), ["pypi.org"]),
        (("*.python.org",), (), ["*.python.org"]),
        (("*.python.org",), ("pypi.org",), ["*.python.org", "pypi.org"]),
        (("pypi.org",), ("*",), ["*"]),
    ],
)
def test_a_command_reached_the_hosts_of_the_chat_and_of_its_own_approval(chat, command, hosts):
    ledger = proposed(LS)
    ledger.decided([LS], {LS.id: Decision(True, network=command)}, account="", now=1.0)
    _, (row,) = rows(ledger, ran(LS), chat_network=chat)
    assert (row.network, row.hosts) == (hosts is not None, hosts)


def test_where_a_command_went_through_its_proxy_is_in_its_row():
    ledger = proposed(LS)
    ledger.decided([LS], {LS.id: Decision(True, network=("pypi.org",))}, account="", now=1.0)
    went = ToolResult(LS.id, LS.name, "out", "done", reached=("pypi.org",), refused=("x.com",))
    _, (row,) = rows(ledger, went)
    assert (row.reached, row.refused) == (["pypi.org"], ["x.com"])


def test_only_decided_calls_get_a_row_and_a_safe_call_no_audit():
    ledger = proposed(LS, NOTE, READ)
    assert ledger.decided([LS, NOTE], {NOTE.id: Decision(True)}, account="", now=1.0) == [
        CallRow(NOTE.id, "write_file", NOTE.arguments, "approved")
    ]
    calls, audit = rows(ledger, ran(READ, "x"))
    assert [call.status for call in calls] == ["done"]
    assert audit == []


@pytest.mark.parametrize(
    "event",
    [TextDelta("hi"), Done("complete"), ToolResult("never-ready", "run_shell", "Error: bad JSON", "error")],
    ids=["delta", "done", "a call that never parsed"],
)
def test_other_events_make_no_rows(event):
    assert rows(proposed(LS), event) == ([], [])
