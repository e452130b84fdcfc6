"""The approval log words the audit trail's codes in the person's language, and shows old phrases as they were."""

import re
from dataclasses import asdict, replace
from typing import get_args

import pytest

from meowgent.persist.calls import AuditDecision, AuditOutcome, AuditRow, AuditScope, Decider
from meowgent.persist.store import Store
from meowgent.policy.scopes import Scope
from meowgent.policy.why import Why
from meowgent.ui.html.auditlog import audit_html, audit_words
from meowgent.ui.i18n import CHINESE, ENGLISH
from tests.persist.test_migrations import write_v7_audit
from tests.ui.conftest import html_text

RAN = AuditRow(
    time=0.0,
    tool="run_shell",
    proposed={"command": "pip install requests"},
    run={"command": "pip install requests"},
    decision="approved",
    scope="once",
    decided_by="owner",
    outcome="done",
)


def test_a_command_that_ran_says_whether_it_had_the_network():
    assert "Network: on" in html_text(audit_html([replace(RAN, network=True)]))
    assert "Network: off" in html_text(audit_html([replace(RAN, network=False)]))
    assert "網路：開啟" in html_text(audit_html([replace(RAN, network=True)], CHINESE))


def test_a_command_with_network_says_its_hosts_and_where_it_went():
    went = replace(RAN, network=True, hosts=["pypi.org", "*.pythonhosted.org"], reached=["pypi.org"], refused=["x.com"])
    text = html_text(audit_html([went]))
    assert "Network: on, to pypi.org, *.pythonhosted.org" in text
    assert "Where it went: reached pypi.org; refused x.com" in text
    anywhere = html_text(audit_html([replace(went, hosts=["*"], reached=[], refused=[])], CHINESE))
    assert "網路：開啟，連到 任何主機" in anywhere
    assert "沒有連上任何主機" in anywhere


def test_a_refusal_of_the_rules_gives_their_reason_in_the_pages_language():
    why = Why("rule_matches", 'deny run_shell command "pip *"', "pip install requests").values()
    refused = replace(RAN, run=None, decision="not_approved", scope="rules_or_chat", outcome="rejected", why=why)
    english, chinese = html_text(audit_html([refused])), html_text(audit_html([refused], CHINESE))
    assert 'Reason: the rule deny run_shell command "pip *" matches `pip install requests`' in english
    assert '原因：規則 deny run_shell command "pip *" 符合 `pip install requests`' in chinese
    assert "被你的規則拒絕" in chinese


def test_a_call_nobody_decided_names_no_one():
    passed_over = replace(RAN, run=None, decision="not_decided", scope="rules_or_chat", outcome="rejected")
    assert "Decision: not decided: a new message or a new answer came first\n" in html_text(audit_html([passed_over]))


def test_rows_without_it_say_nothing_about_the_network():
    """Calls that are not commands, commands that did not run, and rows from before the sandbox."""
    assert "Network" not in html_text(audit_html([replace(RAN, network=None), RAN]))


# What the log said for each phrase that versions 2 to 7 stored, before rows held codes (their _AUDIT_WORDS).
WORDS_BEFORE = {
    ENGLISH: {
        "decision": {
            "approved": "approved",
            "rejected": "rejected",
            "rejected: not approved": "rejected by your rules",
            "allowed": "allowed without asking",
        },
        "scope": {
            "once": "this time only",
            "by your rules or a permission for this chat": "by your rules or a permission for this chat",
        },
        "decided_by": {"the browser that owns the chat": "you, in this browser", "the chat's owner": "you"},
        "outcome": {"done": "it ran", "error": "it ran and failed", "rejected": "it did not run"},
    },
    CHINESE: {
        "decision": {
            "approved": "已核准",
            "rejected": "已拒絕",
            "rejected: not approved": "被你的規則拒絕",
            "allowed": "不必詢問即允許",
        },
        "scope": {"once": "只限這一次", "by your rules or a permission for this chat": "依你的規則或此對話中的允許"},
        "decided_by": {"the browser that owns the chat": "你（在這個瀏覽器）", "the chat's owner": "你"},
        "outcome": {"done": "已執行", "error": "已執行但失敗", "rejected": "沒有執行"},
    },
}


@pytest.mark.parametrize("language", [ENGLISH, CHINESE])
def test_a_row_an_older_meowgent_wrote_reads_as_it_did(tmp_path, language):
    before = WORDS_BEFORE[language]
    old = [
        ("run_shell", decision, scope, decided_by, outcome)
        for decision in before["decision"]
        for scope in before["scope"]
        for decided_by in [*before["decided_by"], "alice"]
        for outcome in before["outcome"]
    ]
    path = tmp_path / "data" / "meowgent.db"
    write_v7_audit(path, old)
    with Store(path) as store:
        rows = store.audit("c1")
    for (_, decision, scope, decided_by, outcome), row in zip(old, rows, strict=True):
        words = audit_words(row, language)
        assert words.decision == before["decision"][decision]
        assert words.scope == before["scope"][scope]
        assert words.who == before["decided_by"].get(decided_by, "alice")
        assert words.outcome == before["outcome"][outcome]


def test_a_phrase_no_code_stands_for_is_shown_as_it_was(tmp_path):
    path = tmp_path / "data" / "meowgent.db"
    write_v7_audit(path, [("run_shell", "auto <b>", "always", "", "not run")])
    with Store(path) as store:
        (row,) = store.audit("c1")
    assert audit_words(row, CHINESE) == audit_words(row, ENGLISH)
    shown = html_text(audit_html([row], CHINESE))
    assert "決定：auto <b>（always），由決定" in shown
    assert "結果：not run" in shown
    assert "<b>" not in audit_html([row])


def test_what_was_allowed_for_the_chat_is_said_as_the_chats_list_says_it():
    scope = Scope("run_shell", command="make test")
    row = replace(
        RAN,
        scope="for_chat",
        chat_scope={"tool": "run_shell", "command": "make test", "prefix": None, "path": None, "host": None},
    )
    assert Scope.from_stored(row.chat_scope) == scope
    assert audit_words(row, ENGLISH).scope == "for this chat: this exact command: make test"
    assert audit_words(row, CHINESE).scope == "此對話中都允許：完全相同的指令：make test"
    every_write = replace(
        row, chat_scope={"tool": "write_file", "command": None, "prefix": None, "path": None, "host": None}
    )  # an "every write" scope, which no longer exists
    assert audit_words(every_write, ENGLISH).scope == "for this chat: write_file"


def test_an_account_is_named_and_every_code_has_words_in_both_languages():
    assert audit_words(replace(RAN, decided_by="account", account="alice"), CHINESE).who == "alice"
    codes = {"decision": AuditDecision, "scope": AuditScope, "decided_by": Decider, "outcome": AuditOutcome}
    for field, literal in codes.items():
        for code in set(get_args(literal)) - {"legacy", "account", "for_chat"}:
            row = replace(RAN, **{field: code})
            english, chinese = (asdict(audit_words(row, language)) for language in (ENGLISH, CHINESE))
            said = "who" if field == "decided_by" else field
            assert english[said], (field, code)
            assert re.search(r"[\u4e00-\u9fff]", chinese[said]), (field, code)
