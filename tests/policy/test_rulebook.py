"""Rules per owner: saved privately, judging only that owner's calls, never undoing the server's denials."""

import stat

import pytest

from meowgent.events import ToolCall
from meowgent.policy.rulebook import RULES_EXAMPLE, Rulebook
from meowgent.policy.rules import RULES_FILE, RulesError

TOUCH = ToolCall("1", "run_shell", {"command": "touch x"})
ALLOW_ALL = '[{"tool": "*", "action": "allow"}]'


def test_an_owners_rules_judge_only_their_calls(tmp_path):
    book = Rulebook(tmp_path / "data", tmp_path)
    assert book.save("browser:alice", ALLOW_ALL) == 1
    assert book.policy("browser:alice").decide(TOUCH).action == "allow"
    assert book.policy("browser:bob").decide(TOUCH).action == "ask"
    assert book.text("browser:bob") == RULES_EXAMPLE
    assert book.text("browser:alice") == ALLOW_ALL
    assert Rulebook(tmp_path / "data", tmp_path).policy("browser:alice").decide(TOUCH).action == "allow"  # kept


def test_the_servers_denials_stand_whatever_an_owner_allows(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / RULES_FILE).write_text('[{"tool": "run_shell", "action": "deny", "command": "touch *"}]')
    book = Rulebook(data, tmp_path)
    book.save("user:ann", ALLOW_ALL)
    assert book.policy("user:ann").decide(TOUCH).action == "deny"


def test_bad_rules_are_not_saved_and_the_files_are_private(tmp_path):
    book = Rulebook(tmp_path / "data", tmp_path)
    with pytest.raises(RulesError):
        book.save("browser:alice", "[{")
    book.save("browser:alice/../../x", "[]")
    (saved,) = (tmp_path / "data" / "rules").iterdir()
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
    assert "alice" not in saved.name


def test_an_owners_file_broken_by_hand_makes_risky_calls_ask(tmp_path):
    book = Rulebook(tmp_path / "data", tmp_path)
    book.save("browser:alice", ALLOW_ALL)
    (next((tmp_path / "data" / "rules").iterdir())).write_text("not json")
    assert Rulebook(tmp_path / "data", tmp_path).policy("browser:alice").decide(TOUCH).action == "ask"
