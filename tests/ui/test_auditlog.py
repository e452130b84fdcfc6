"""The approval log says whether a command that ran could reach the network."""

from meowgent.ui.auditlog import audit_html
from meowgent.ui.i18n import CHINESE
from tests.ui.conftest import html_text

RAN = {
    "seq": 0,
    "time": 0.0,
    "tool": "run_shell",
    "proposed": {"command": "pip install requests"},
    "run": {"command": "pip install requests"},
    "decision": "approved",
    "scope": "once",
    "decided_by": "the chat's owner",
    "outcome": "done",
    "reason": "",
}


def test_a_command_that_ran_says_whether_it_had_the_network():
    assert "Network: on" in html_text(audit_html([{**RAN, "network": True}]))
    assert "Network: off" in html_text(audit_html([{**RAN, "network": False}]))
    assert "網路：開啟" in html_text(audit_html([{**RAN, "network": True}], CHINESE))


def test_rows_without_it_say_nothing_about_the_network():
    """Calls that are not commands, commands that did not run, and rows from before the sandbox."""
    assert "Network" not in html_text(audit_html([{**RAN, "network": None}, RAN]))
