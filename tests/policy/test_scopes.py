"""scopes: what "Allow for this chat" allows, for which tool, and that it never widens what was allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.policy.rules import Policy, Rule
from meowgent.policy.scopes import Scope, ScopeOffer, scope_offer, typed_scope
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.workspace import Workspace
from tests.policy.calls import SHELL_RULES, call, shell
from tests.policy.test_commands import VOCABULARY, lines
from tests.policy.test_rules import DENY_SECRETS

RUN_SHELL = ToolRegistry.builtins().traits("run_shell")


# ---- scopes ----


@pytest.mark.parametrize(
    ("command", "covered"),
    [
        ("make", True),
        ("make test", True),
        ("make test && make lint", True),
        ("makefoo", False),
        ("make && rm -rf x", False),
        ("make $(curl evil)", False),
        ("FOO=1 make", False),
        ("make > out.txt", False),
        ("make 2>&1", True),
        ('make "oops', False),
        ("", False),
    ],
)
def test_a_prefix_scope_must_start_every_command(command: str, covered: bool, workspace: Path) -> None:
    assert Scope("run_shell", prefix="make").matches(shell(command), RUN_SHELL, Workspace(workspace)) == covered


def test_a_prefix_of_several_words_matches_on_word_boundaries(workspace: Path) -> None:
    scope, here = Scope("run_shell", prefix="git status"), Workspace(workspace)
    assert scope.matches(shell("git status -s"), RUN_SHELL, here)
    assert scope.matches(shell("git  status"), RUN_SHELL, here)
    assert not scope.matches(shell("git statusx"), RUN_SHELL, here)
    assert not scope.matches(shell("git status && rm -rf x"), RUN_SHELL, here)
    assert not scope.matches(shell("git"), RUN_SHELL, here)


def test_an_exact_command_scope(workspace: Path) -> None:
    scope, here = Scope("run_shell", command="make test"), Workspace(workspace)
    assert scope.matches(shell(" make test\n"), RUN_SHELL, here)
    assert not scope.matches(shell("make test && rm x"), RUN_SHELL, here)
    assert not scope.matches(call("write_file", path="x", content=""), here)


@pytest.mark.parametrize(
    "arguments", [{"command": "ls", "prefix": "ls"}, {"prefix": "ls; rm x"}, {"prefix": ""}, {"prefix": "ls > x"}]
)
def test_a_scope_names_one_command_or_one_prefix_of_one_simple_command(arguments: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="prefix"):
        Scope("run_shell", **arguments)


@pytest.mark.parametrize("path", ["../a.md", "/etc/passwd"])
def test_a_path_scope_stays_inside_the_workspace(path: str) -> None:
    with pytest.raises(ValueError, match="inside the workspace"):
        Scope("write_file", path=path)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("run_shell", {}),
        ("write_file", {}),  # "every write" is no longer a scope: it let a.md's approval write b.md
        ("write_file", {"command": "ls"}),
        ("edit_file", {"host": "example.org"}),
        ("web_fetch", {}),
        ("web_fetch", {"path": "a.md"}),
        ("mcp__tool", {"path": "a.md"}),
    ],
)
def test_each_tool_takes_only_the_scope_that_fits_it(tool: str, arguments: dict[str, str], workspace: Path) -> None:
    """A scope of another kind than its tool's traits say is dropped when a chat is loaded, and covers nothing."""
    scope, traits = Scope(tool, **arguments), ToolRegistry.builtins().traits(tool)
    assert not scope.fits(traits)
    assert Scope.from_stored({"tool": tool, **arguments}) is None
    everything = call(tool, command="ls", path="a.md", url="https://example.org/", content="", old="a", new="b")
    assert not scope.matches(everything, traits, Workspace(workspace))


def test_allowing_a_write_for_the_chat_allows_that_file_only(workspace: Path) -> None:
    """Issue 12: allowing the write of a.md let a later write of b.md run."""
    policy = Policy([], workspace)
    offer = scope_offer(call("write_file", path="./docs/../a.md", content="A"), workspace)
    assert offer == ScopeOffer(Scope("write_file", path="a.md"), "path")
    assert policy.decide(call("write_file", path="a.md", content="B"), scopes=[offer.scope]).action == "allow"
    assert policy.decide(call("write_file", path="b.md", content="B"), scopes=[offer.scope]).action == "ask"
    assert policy.decide(call("edit_file", path="a.md", old="A", new="B"), scopes=[offer.scope]).action == "ask"


def test_a_file_scope_follows_links_so_a_link_cannot_widen_it(workspace: Path) -> None:
    (workspace / "a.md").write_text("")
    (workspace / "link.md").symlink_to("secrets/key.pem")
    scopes = [Scope("write_file", path="link.md")]
    decided = Policy([], workspace).decide(call("write_file", path="link.md", content=""), scopes=scopes)
    assert decided.action == "ask"  # it writes secrets/key.pem, which the scope does not name


def test_a_typed_folder_or_glob_widens_a_file_scope(workspace: Path) -> None:
    write = call("write_file", path="docs/a.md", content="")
    assert typed_scope(write, "docs", workspace) == Scope("write_file", path="docs/**")
    assert typed_scope(write, "./docs/", workspace) == Scope("write_file", path="docs/**")
    assert typed_scope(write, "*.md", workspace) == Scope("write_file", path="*.md")
    assert typed_scope(write, ".", workspace) == Scope("write_file", path="**")
    policy = Policy([Rule("write_file", "deny", path="secrets/**")], workspace)
    scopes = [typed_scope(write, ".", workspace)]
    assert policy.decide(call("write_file", path="docs/b.md", content=""), scopes=scopes).action == "allow"
    assert policy.decide(call("write_file", path="secrets/x", content=""), scopes=scopes).action == "deny"
    with pytest.raises(ValueError, match="inside the workspace"):
        typed_scope(write, "../elsewhere", workspace)


def test_a_fetch_scope_is_for_its_host(workspace: Path) -> None:
    offer = scope_offer(call("web_fetch", url="https://Docs.Python.org/3/"), workspace)
    assert offer == ScopeOffer(Scope("web_fetch", host="docs.python.org"), None)  # nothing to type
    policy = Policy([], workspace)
    fetch = [offer.scope]
    assert policy.decide(call("web_fetch", url="http://docs.python.org/x"), scopes=fetch).action == "allow"
    elsewhere = call("web_fetch", url="https://evil.test/?docs.python.org")
    assert policy.decide(elsewhere, scopes=fetch).action == "ask"
    with pytest.raises(ValueError, match="nothing to type"):
        typed_scope(call("web_fetch", url="https://docs.python.org/"), "*", workspace)


def test_a_command_scope_is_exact_or_a_typed_prefix(workspace: Path) -> None:
    run = shell("git status -s")
    assert scope_offer(run, workspace) == ScopeOffer(Scope("run_shell", command="git status -s"), "prefix")
    assert typed_scope(run, " git status ", workspace) == Scope("run_shell", prefix="git status")


def test_other_tools_are_scoped_as_a_whole_and_old_saved_scopes_that_meant_every_write_are_dropped(
    workspace: Path,
) -> None:
    assert scope_offer(call("mcp__search", q="x"), workspace) == ScopeOffer(Scope("mcp__search"), None)
    assert Scope.from_stored({"tool": "write_file", "command": None, "prefix": None}) is None
    assert Scope.from_stored({"tool": "run_shell", "command": "ls", "prefix": None}) == Scope("run_shell", "ls")


@pytest.mark.parametrize(
    ("scope", "words"),
    [
        (Scope("run_shell", command="ls"), ("allows_command", {"command": "ls"})),
        (Scope("run_shell", prefix="git"), ("allows_prefix", {"prefix": "git"})),
        (Scope("write_file", path="a.md"), ("allows_write_file_path", {"path": "a.md"})),
        (Scope("edit_file", path="a.md"), ("allows_edit_file_path", {"path": "a.md"})),
        (Scope("web_fetch", host="x.org"), ("allows_host", {"host": "x.org"})),
        (Scope("mcp__search"), ("allows_tool", {"tool": "mcp__search"})),
    ],
)
def test_a_scope_has_words_for_the_person(scope: Scope, words: tuple[str, dict[str, str]]) -> None:
    assert scope.words() == words


def test_a_scope_turns_ask_into_allow_but_never_deny_into_allow(policy: Policy, workspace: Path) -> None:
    scopes = [Scope("run_shell", prefix="make"), Scope("run_shell", command="rm x"), Scope("write_file", path="**")]
    allowed = policy.decide(shell("make test"), scopes=scopes)
    assert allowed.action == "allow"
    assert str(allowed.reason) == 'you allowed commands starting with "make" for this chat'
    assert policy.decide(shell("rm x"), scopes=scopes).action == "deny"
    deny_secrets = Policy(DENY_SECRETS, workspace)
    assert deny_secrets.decide(call("write_file", path="notes.md", content=""), scopes=scopes).action == "allow"
    assert deny_secrets.decide(call("write_file", path="secrets/x", content=""), scopes=scopes).action == "deny"


def test_a_prefix_scope_does_not_cover_a_write_option(workspace: Path) -> None:
    scope, here = Scope("run_shell", prefix="git log"), Workspace(workspace)
    assert scope.matches(shell("git log --oneline -5"), RUN_SHELL, here)
    assert not scope.matches(shell("git log --output=notes.md"), RUN_SHELL, here)


scopes = st.lists(
    st.builds(Scope, st.just("run_shell"), prefix=st.sampled_from(["ls", "rm", "rm -rf", "curl", "echo", "cat", "v"]))
    | st.builds(Scope, st.just("run_shell"), command=st.sampled_from(VOCABULARY)),
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(lines, scopes, st.booleans())
def test_no_scope_turns_a_deny_into_an_allow(
    tmp_path_factory: pytest.TempPathFactory, line, chosen: list[Scope], exact: bool
) -> None:
    text = line[0]
    if exact:  # the person may even have allowed exactly this line
        chosen = [*chosen, Scope("run_shell", command=text)]
    policy = Policy(SHELL_RULES, tmp_path_factory.getbasetemp())
    before = policy.decide(shell(text)).action
    after = policy.decide(shell(text), scopes=chosen).action
    if before == "deny":
        assert after == "deny", (text, chosen)
    else:
        assert after in (before, "allow")
