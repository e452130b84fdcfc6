"""The approval policy: which tool calls run at once, which wait for the person, which never run.

It comes from the person's rules file and our tool registry, never from anything the model says.

The rules file is `rules.json` in the data folder: a JSON list of rules, for example

    [
      {"tool": "run_shell", "action": "allow", "command": "git status*"},
      {"tool": "write_file", "action": "deny", "path": "secrets/**", "note": "why (ignored)"},
      {"tool": "web_fetch", "action": "allow", "host": "*.python.org"},
      {"tool": "read_file", "action": "allow"}
    ]

`tool` is a tool name or a glob over names, `action` is allow, ask or deny. The other keys are
globs (`fnmatch`, where `*` also crosses `/`), and a rule with none of them covers every call. Each is
matched against the argument the tool's traits name for it (`ToolTraits`), so a rule applies only to
tools that have one:
- `command` (run_shell) is matched against each simple command of the line, as `shellsplit` gives it;
  `git status*` covers `git status --short` but not the `rm x` in `git status && rm x` (see `commands`).
- `path` is matched against the path inside the workspace, posix style (`.` is the root); `dir/**`
  also covers `dir` itself.
- `host` is matched against the URL's host name, lowercased; `*.python.org` does not cover `python.org`.

Deny beats ask, and ask beats allow. Without a matching rule, read-only tools are allowed and the
others ask. A shell command is allowed only if every one of its commands is, substitutions included.
The commands that `eval`, `sh -c`, `trap`, `xargs`, `find -exec` and such run are judged like the others.

A shell line whose meaning its text does not pin down is *hidden* (see `shellsplit` for the list:
`${x@P}`, `$((x))`, `eval`, `bash -c`, `$'...'`, `PS4=...`, `hash -p`, a function definition,
`flock -c`, `git -c`, `python -c`, a wrapper option Meowgent does not know, a line that cannot be read,
...). A hidden line fails closed: it is denied while any deny rule exists, because that rule could
match what it runs; no allow rule and no chat scope covers it, not even one naming the exact line;
otherwise it asks, and its risk notes say Meowgent can't tell everything it runs.

Deny and ask rules are tried against every reading of a call, so they cannot be dodged: a command
also as its plain command (quotes removed, `FOO=1` and redirections dropped, `/bin/rm` as `rm`, and
again after `sudo`, `env` and such, read by their own option tables), and the whole line; a path both
as written (normalized) and with symbolic links followed. A `list_files` or `search_files` call over a
folder that holds what such a rule names asks. Allow rules see only the strict reading: a command as
written, a path with links followed. A `*` in an allow pattern never stands for writing a file: to
allow `make > build.log`, write the `>` in the pattern; to allow `sort -o sorted.txt in.txt` or
`git log --output=log.txt`, spell the option (`sort -o *`, `git log --output=*`). The write options
are in `shellsplit`'s program tables (`curl -o`, `wget -O`, `find -fprint` and `-delete`, `sed -i`, `tee`, ...).

Path rules judge the file tools only: `cat secrets/key.pem` in the shell is judged by command rules.

MCP tools (`SERVER__TOOL`) are judged by name only: `{"tool": "files__*", "action": "deny"}` covers a
whole server, `{"tool": "files__read_text", "action": "allow"}` one tool. Such a rule may name a
server that is not running (yet), and takes no command, path or host. Without a rule they ask.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from meowgent.events import ToolCall
from meowgent.mcp.config import SEPARATOR
from meowgent.policy.actions import ACTIONS, STRICT_FIRST, Action, Rule
from meowgent.policy.commands import judge_command
from meowgent.policy.patterns import folder_may_hold, host_of, path_matches
from meowgent.policy.risks import Risk, risk_notes
from meowgent.policy.scopes import Scope
from meowgent.policy.why import Why
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ExternalTool, ToolError, ToolTraits
from meowgent.tools.workspace import OutsideWorkspace, Workspace

__all__ = ["RULES_FILE", "Policy", "Rule", "RulesError", "Verdict", "parse_rules"]

RULES_FILE = "rules.json"
"""The rules file's name in the data folder."""


class RulesError(Exception):
    """The rules file cannot be used; the message names the file and the line or rule that is wrong."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with a call, why, and what it may do that deserves a look."""

    action: Action
    reason: Why
    risks: tuple[Risk, ...] = ()


class Policy:
    """Our rules applied to tool calls in one workspace."""

    def __init__(self, rules: Sequence[Rule], workspace: Path, *, tools: ToolRegistry | None = None) -> None:
        self.rules = tuple(rules)
        self.workspace = Workspace(workspace)
        self.tools = tools or ToolRegistry.builtins()
        """The app's tools: what a call's name stands for (one of ours, or an MCP server's)."""

    @classmethod
    def load(cls, path: Path, workspace: Path, *, tools: ToolRegistry | None = None) -> Policy:
        """The policy in a rules file; a missing file gives the defaults, a bad one RulesError."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls([], workspace, tools=tools)
        except (OSError, UnicodeDecodeError) as exc:
            raise RulesError(f"cannot read the rules file {path}: {exc}") from None
        return cls(parse_rules(text, source=str(path), tools=tools), workspace, tools=tools)

    def decide(self, call: ToolCall, *, scopes: Iterable[Scope] = ()) -> Verdict:
        """Allow, ask or deny `call`; a scope the person chose in this chat can turn "ask" into "allow"."""
        action, reason = self._by_rules(call)
        if action == "ask":
            traits = self.tools.traits(call.name)
            scope = next((scope for scope in scopes if scope.matches(call, traits, self.workspace)), None)
            if scope is not None:
                action, reason = "allow", Why("chat_scope", text=str(scope))
        return Verdict(action, reason, risk_notes(call, self.workspace.root, tools=self.tools))

    def _by_rules(self, call: ToolCall) -> tuple[Action, Why]:
        try:
            found = self.tools.get(call.name)
            if isinstance(found, ExternalTool):  # before validating: a deny rule holds whatever the arguments
                return _judge_by_name(call.name, self.rules)
            arguments = found.validate(call.arguments)
        except ToolError as exc:
            return "ask", Why("unchecked", text=str(exc))
        traits = found.traits
        rules = [rule for rule in self.rules if fnmatchcase(call.name, rule.tool) and _applies(rule, traits, arguments)]
        if traits.command in arguments:
            return judge_command(arguments[traits.command], rules)
        try:
            target = self._target(traits, arguments)
        except OutsideWorkspace as exc:  # the page names the path; the model reads the whole message
            return "deny", Why("outside", text=str(exc), path=exc.path)
        except ToolError as exc:
            return "deny", Why("refused", text=str(exc))
        return _judge_target(target, rules, tool=found.name, risky=traits.risky)

    def _target(self, traits: ToolTraits, arguments: Mapping[str, Any]) -> _Target:
        paths: tuple[str, ...] = ()
        if traits.path in arguments:
            written_path = arguments[traits.path]
            resolved = self.workspace.relative(self.workspace.resolve(written_path))
            written = Path(os.path.normpath(self.workspace.root / written_path))
            paths = (resolved,)
            if written.is_relative_to(self.workspace.root):
                paths += (written.relative_to(self.workspace.root).as_posix(),)
        host = host_of(arguments[traits.url]) if traits.url in arguments else None
        return _Target(paths, host, reads_folder=traits.reads_folder)


def parse_rules(text: str, *, source: str = RULES_FILE, tools: ToolRegistry | None = None) -> list[Rule]:
    """The rules in the text of a rules file; RulesError names the line or the rule that is wrong.

    `tools` (the app's) says which tools there are and which patterns apply to each.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RulesError(f"{source}, line {exc.lineno}, column {exc.colno}: {exc.msg}.") from None
    if not isinstance(data, list):
        raise RulesError(f"{source} must hold a JSON list of rules, such as {_EXAMPLE}.")
    # MCP tools are named by their server and judged by name only, so our own tools are the ones to check.
    traits = {found.name: found.traits for found in (tools or ToolRegistry.builtins()).own()}
    rules = []
    for number, entry in enumerate(data, start=1):
        problem = _problem(entry, traits)
        if problem:
            raise RulesError(f"{source}, rule {number} {json.dumps(entry)}: {problem}.")
        rules.append(Rule(entry["tool"], entry["action"], entry.get("command"), entry.get("path"), entry.get("host")))
    return rules


# ---- rules file ----

_EXAMPLE = '[{"tool": "read_file", "action": "allow"}]'
_KEYS = ("tool", "action", "command", "path", "host", "note")
_PATTERN_KEYS = ("command", "path", "host")


def _argument(key: str, traits: ToolTraits) -> str | None:
    """The argument a rule's pattern key is matched against, in a tool with these traits; None if it has none."""
    return {"command": traits.command, "path": traits.path, "host": traits.url}[key]


def _problem(entry: object, traits: Mapping[str, ToolTraits]) -> str | None:
    """What is wrong with one rule, or None; `traits` are our own tools' by name."""
    if not isinstance(entry, dict):
        return f"each rule must be a JSON object, such as {_EXAMPLE[1:-1]}"
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        return f"unknown key {unknown[0]!r}; a rule has tool, action and optionally command, path, host or note"
    missing = next((key for key in ("tool", "action") if key not in entry), None)
    if missing:
        return f"{missing!r} is missing"
    wrong = next((key for key in _KEYS if key in entry and not (isinstance(entry[key], str) and entry[key])), None)
    if wrong:
        return f"{wrong!r} must be a non-empty string"
    if entry.get("action") not in ACTIONS:
        return f"'action' must be allow, ask or deny, not {entry.get('action')!r}"
    if SEPARATOR in entry["tool"]:  # an MCP tool: its server may not be running yet, and only names count
        wrong = next((key for key in _PATTERN_KEYS if key in entry), None)
        return f"{wrong} does not apply to MCP tools; name the server and tool only" if wrong else None
    named = [found for name, found in traits.items() if fnmatchcase(name, entry["tool"])]
    if not named:
        return f"there is no tool {entry['tool']!r}; the tools are {', '.join(sorted(traits))}"
    keys = [key for key in _PATTERN_KEYS if key in entry]
    if not any(all(_argument(key, found) for key in keys) for found in named):
        return f"{' and '.join(keys)} does not apply to {entry['tool']}; {_WHICH_KEY}"
    path = entry.get("path", "")
    if path.startswith("/") or ".." in path.split("/"):
        return "'path' is relative to the workspace and stays inside it, such as 'secrets/**'"
    return None


_WHICH_KEY = "command is for run_shell, path for the file tools, host for web_fetch"


def _judge_by_name(name: str, rules: Sequence[Rule]) -> tuple[Action, Why]:
    """An MCP tool's verdict from the rules naming it; their arguments mean nothing to our patterns."""
    named = [rule for rule in rules if fnmatchcase(name, rule.tool) and not any(rule.patterns().values())]
    for action in reversed(ACTIONS):
        rule = next((rule for rule in named if rule.action == action), None)
        if rule is not None:
            return action, Why("rule_matches_call", str(rule))
    return "ask", Why("mcp_no_rule", text=name)


def _applies(rule: Rule, traits: ToolTraits, arguments: Mapping[str, Any]) -> bool:
    """A rule applies to a call that has an argument for each pattern it sets (a path rule never to run_shell)."""
    return all(_argument(key, traits) in arguments for key, value in rule.patterns().items() if value is not None)


# ---- files and hosts ----


@dataclass(frozen=True, slots=True)
class _Target:
    """What path and host rules see: `paths` holds the strict reading first, then the one as written."""

    paths: tuple[str, ...]
    host: str | None
    reads_folder: bool


def _judge_target(target: _Target, rules: Sequence[Rule], *, tool: str, risky: bool) -> tuple[Action, Why]:
    for action in STRICT_FIRST:
        rule = next((rule for rule in rules if rule.action == action and _target_matches(rule, target)), None)
        if rule is not None:
            return action, Why("rule_matches_call", str(rule))
    # A folder-reading call over a denied path is not denied outright (listing the root must stay possible),
    # but it must not run unseen either.
    rule = next((rule for rule in rules if rule.action != "allow" and _reaches_into(rule, target)), None)
    if rule is not None:
        return "ask", Why("reads_inside", str(rule), tool, target.paths[0])
    rule = next((rule for rule in rules if rule.action == "allow" and _target_matches(rule, target, strict=True)), None)
    if rule is not None:
        return "allow", Why("rule_allows_call", str(rule))
    if risky:
        return "ask", Why("no_rule_call", text=tool)
    return "allow", Why("only_reads", text=tool)


def _target_matches(rule: Rule, target: _Target, *, strict: bool = False) -> bool:
    if rule.host is not None and not (target.host and fnmatchcase(target.host, rule.host.lower())):
        return False
    paths = target.paths[:1] if strict else target.paths
    return rule.path is None or any(path_matches(path, rule.path) for path in paths)


def _reaches_into(rule: Rule, target: _Target) -> bool:
    """Whether a call that reads a whole folder would read paths the rule names."""
    pattern = rule.path
    return target.reads_folder and pattern is not None and any(folder_may_hold(p, pattern) for p in target.paths)
