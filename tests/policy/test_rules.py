"""rules: the rules file and a verdict for each call by its tool's traits: precedence, paths, hosts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meowgent.policy.rules import Policy, Rule, RulesError, parse_rules
from tests.policy.calls import call, shell

# ---- the rules file ----


def test_a_rules_file_is_a_json_list(tmp_path: Path, workspace: Path) -> None:
    path = tmp_path / "rules.json"
    entries = [
        {"tool": "run_shell", "action": "allow", "command": "git status*"},
        {"tool": "write_file", "action": "deny", "path": "secrets/**", "note": "never"},
        {"tool": "web_fetch", "action": "allow", "host": "*.python.org"},
        {"tool": "read_file", "action": "allow"},
    ]
    path.write_text(json.dumps(entries, indent=2))
    loaded = Policy.load(path, workspace)
    assert loaded.rules == (
        Rule("run_shell", "allow", command="git status*"),
        Rule("write_file", "deny", path="secrets/**"),
        Rule("web_fetch", "allow", host="*.python.org"),
        Rule("read_file", "allow"),
    )


def test_a_missing_rules_file_gives_the_defaults(tmp_path: Path, workspace: Path) -> None:
    defaults = Policy.load(tmp_path / "nothing.json", workspace)
    assert defaults.rules == ()
    assert defaults.decide(call("read_file", path="notes.md")).action == "allow"
    assert defaults.decide(call("list_files")).action == "allow"
    assert defaults.decide(call("search_files", pattern="x")).action == "allow"
    assert defaults.decide(call("write_file", path="new.md", content="x")).action == "ask"
    assert defaults.decide(call("edit_file", path="notes.md", old="a", new="b")).action == "ask"
    assert defaults.decide(shell("ls")).action == "ask"
    assert defaults.decide(call("web_fetch", url="https://example.com")).action == "ask"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[\n  {"tool": "read_file", "action": "allow"},\n  {"tool": ]', "line 3, column"),
        ('{"tool": "read_file", "action": "allow"}', "must hold a JSON list"),
        ('["read_file"]', 'rule 1 "read_file": each rule must be a JSON object'),
        ('[{"tool": "read_file", "action": "allow"}, {"tool": "read_file", "action": "alow"}]', "rule 2 "),
        ('[{"tool": "read_file", "action": "alow"}]', "'action' must be allow, ask or deny, not 'alow'"),
        ('[{"tool": "read_file"}]', "'action' is missing"),
        ('[{"action": "allow"}]', "'tool' is missing"),
        ('[{"tool": "read_flie", "action": "allow"}]', "there is no tool 'read_flie'; the tools are "),
        ('[{"tool": "run_shell", "action": "allow", "cmd": "ls"}]', "unknown key 'cmd'"),
        ('[{"tool": "run_shell", "action": "allow", "command": 5}]', "'command' must be a non-empty string"),
        ('[{"tool": "run_shell", "action": "allow", "command": ""}]', "'command' must be a non-empty string"),
        ('[{"tool": "run_shell", "action": "deny", "path": "secrets/**"}]', "path does not apply to run_shell"),
        ('[{"tool": "read_file", "action": "deny", "host": "x.org"}]', "host does not apply to read_file"),
        ('[{"tool": "*", "action": "deny", "path": "a", "host": "b"}]', "path and host does not apply to *"),
        ('[{"tool": "read_file", "action": "deny", "path": "/etc/**"}]', "relative to the workspace"),
        ('[{"tool": "read_file", "action": "deny", "path": "../x"}]', "relative to the workspace"),
    ],
)
def test_a_bad_rules_file_says_where_it_is_wrong(text: str, message: str) -> None:
    with pytest.raises(RulesError, match=r"^my-rules\.json\b") as caught:
        parse_rules(text, source="my-rules.json")
    assert message in str(caught.value)


def test_load_names_the_file_that_is_wrong(tmp_path: Path, workspace: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text('[{"tool": "read_file", "action": "maybe"}]')
    with pytest.raises(RulesError, match=f"^{path}, rule 1 "):
        Policy.load(path, workspace)


def test_tool_globs_and_rule_descriptions(workspace: Path) -> None:
    rules = parse_rules('[{"tool": "*_file", "action": "deny", "path": "secrets/**"}]')
    verdict = Policy(rules, workspace).decide(call("read_file", path="secrets/key.pem"))
    assert verdict.action == "deny"
    assert 'deny *_file path "secrets/**"' in str(verdict.reason)


# ---- precedence ----


@pytest.mark.parametrize(
    ("actions", "decision"),
    [
        (["allow"], "allow"),
        (["allow", "ask"], "ask"),
        (["ask", "allow"], "ask"),
        (["allow", "deny", "ask"], "deny"),
        (["deny", "allow"], "deny"),
    ],
)
def test_deny_beats_ask_beats_allow(workspace: Path, actions: list[str], decision: str) -> None:
    rules = [Rule("write_file", action, path="notes.md") for action in actions]  # type: ignore[arg-type]
    assert Policy(rules, workspace).decide(call("write_file", path="notes.md", content="")).action == decision


def test_a_rule_can_make_a_read_only_tool_ask(workspace: Path) -> None:
    policy = Policy([Rule("read_file", "ask", path="*.md")], workspace)
    assert policy.decide(call("read_file", path="notes.md")).action == "ask"
    assert policy.decide(call("read_file", path="src/main.py")).action == "allow"


# ---- paths ----

DENY_SECRETS = [Rule("*", "deny", path="secrets/**"), Rule("write_file", "allow", path="docs/**")]


@pytest.mark.parametrize(
    "path",
    ["secrets/key.pem", "./secrets/key.pem", "secrets/../secrets/key.pem", "docs/../secrets/x", "secrets", "secrets/"],
)
def test_a_path_deny_cannot_be_dodged_by_spelling(workspace: Path, path: str) -> None:
    policy = Policy(DENY_SECRETS, workspace)
    assert policy.decide(call("read_file", path=path)).action == "deny"
    assert policy.decide(call("write_file", path=path, content="x")).action == "deny"


def test_an_absolute_path_inside_the_workspace_is_judged_as_relative(workspace: Path) -> None:
    policy = Policy(DENY_SECRETS, workspace)
    assert policy.decide(call("read_file", path=str(workspace / "secrets" / "key.pem"))).action == "deny"
    assert policy.decide(call("write_file", path=str(workspace / "docs" / "a.md"), content="")).action == "allow"


def test_a_symlink_cannot_dodge_a_deny_or_borrow_an_allow(workspace: Path) -> None:
    (workspace / "public").symlink_to(workspace / "secrets")
    (workspace / "docs" / "main.py").symlink_to(workspace / "src" / "main.py")
    (workspace / "secrets" / "readme.md").symlink_to(workspace / "notes.md")
    policy = Policy(DENY_SECRETS, workspace)
    assert policy.decide(call("read_file", path="public/key.pem")).action == "deny"
    # Allowed under docs/, but writing there would change src/main.py.
    assert policy.decide(call("write_file", path="docs/main.py", content="")).action == "ask"
    # Named under secrets/: the deny applies to the name as written too.
    assert policy.decide(call("read_file", path="secrets/readme.md")).action == "deny"


def test_a_path_outside_the_workspace_is_denied(workspace: Path) -> None:
    verdict = Policy([], workspace).decide(call("read_file", path="../../etc/passwd"))
    assert verdict.action == "deny"
    assert "outside the workspace" in str(verdict.reason)  # the model's message, with how to do it right
    assert (verdict.reason.kind, verdict.reason.path) == ("outside", "../../etc/passwd")  # what the page names


@pytest.mark.parametrize(
    ("name", "path", "decision"),
    [
        ("list_files", "secrets", "deny"),
        ("list_files", ".", "ask"),  # it would list what is inside secrets/
        ("search_files", ".", "ask"),
        ("list_files", "src", "allow"),
        ("search_files", "docs", "allow"),
        ("search_files", "secrets/key.pem", "deny"),
    ],
)
def test_reading_a_folder_that_holds_denied_paths_asks(workspace: Path, name: str, path: str, decision: str) -> None:
    arguments = {"pattern": "x"} if name == "search_files" else {}
    assert Policy(DENY_SECRETS, workspace).decide(call(name, path=path, **arguments)).action == decision


@pytest.mark.parametrize(
    ("pattern", "folder", "decision"),
    [
        ("*.pem", "src", "ask"),  # `*` crosses folders, so src/x.pem would match
        (".env", "src", "allow"),  # only the .env at the top matches
        (".env", ".", "ask"),
        ("src/*.key", "src/deep", "ask"),
        ("src/*.key", "docs", "allow"),
    ],
)
def test_which_folders_may_hold_a_match(workspace: Path, pattern: str, folder: str, decision: str) -> None:
    policy = Policy([Rule("list_files", "deny", path=pattern)], workspace)
    assert policy.decide(call("list_files", path=folder)).action == decision


# ---- hosts ----


@pytest.mark.parametrize(
    ("url", "decision"),
    [
        ("https://docs.python.org/3/", "allow"),
        ("https://DOCS.Python.org./3/", "allow"),
        ("https://python.org/", "ask"),
        ("https://docs.python.org@evil.example/", "ask"),
        ("https://evil.example/?docs.python.org", "ask"),
        ("https://docs.python.org.evil.example/", "ask"),
        ("https://pypi.org/simple", "deny"),
        ("not a url", "ask"),
    ],
)
def test_host_rules(workspace: Path, url: str, decision: str) -> None:
    rules = [Rule("web_fetch", "allow", host="*.python.org"), Rule("web_fetch", "deny", host="pypi.org")]
    assert Policy(rules, workspace).decide(call("web_fetch", url=url)).action == decision


def test_path_rules_do_not_reach_the_shell(workspace: Path) -> None:
    """Documented limit: shell commands are judged by command patterns only."""
    policy = Policy([Rule("*", "deny", path="secrets/**"), Rule("run_shell", "allow", command="cat *")], workspace)
    assert policy.decide(shell("cat secrets/key.pem")).action == "allow"


def test_an_invalid_call_asks(policy: Policy) -> None:
    assert policy.decide(call("run_shell", command=["ls"])).action == "ask"
    assert policy.decide(call("no_such_tool")).action == "ask"
