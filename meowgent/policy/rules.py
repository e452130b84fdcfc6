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
globs (`fnmatch`, where `*` also crosses `/`), and a rule with none of them covers every call:
- `command` (run_shell) is matched against each simple command of the line, as `shellsplit` gives it;
  `git status*` covers `git status --short` but not the `rm x` in `git status && rm x`.
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
are in `shellprograms` (`curl -o`, `wget -O`, `find -fprint` and `-delete`, `sed -i`, `tee`, ...).

Path rules judge the file tools only: `cat secrets/key.pem` in the shell is judged by command rules.

MCP tools (`SERVER__TOOL`) are judged by name only: `{"tool": "files__*", "action": "deny"}` covers a
whole server, `{"tool": "files__read_text", "action": "allow"}` one tool. Such a rule may name a
server that is not running (yet), and takes no command, path or host. Without a rule they ask.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from meowgent.events import ToolCall
from meowgent.mcp.config import SEPARATOR
from meowgent.shellsplit.parser import SimpleCommand, Word, invocations, parse_segment, program_name, split_command
from meowgent.shellsplit.programs import Write, read_program
from meowgent.tools.registry import ToolRegistry, builtin_tools
from meowgent.tools.spec import ExternalTool, ToolError
from meowgent.tools.workspace import Workspace

__all__ = [
    "DECISIONS",
    "RULES_FILE",
    "Decision",
    "Policy",
    "Rule",
    "RulesError",
    "Scope",
    "ScopeOffer",
    "Verdict",
    "parse_rules",
    "risk_notes",
    "scope_offer",
    "typed_scope",
]

Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
"""Weakest first: when several rules match, the last of these among them wins."""

_STRICT_FIRST: tuple[Decision, ...] = ("deny", "ask")  # the actions any reading of a call can trigger

RULES_FILE = "rules.json"
"""The rules file's name in the data folder."""

# Risk notes: a small, plain vocabulary the approval card can show as is.
DELETES = "deletes files"
NETWORK = "uses the network"
ADMIN = "runs with admin rights"
PERMISSIONS = "changes permissions"
OVERWRITES = "overwrites an existing file"
EDITS = "edits a file"
HIDDEN = "Meowgent can't tell everything this runs"
"""A sentence of its own, not a "this ..." phrase: the line is hidden (see `shellsplit`)."""


class RulesError(Exception):
    """The rules file cannot be used; the message names the file and the line or rule that is wrong."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One entry of the rules file; a pattern left as None matches everything."""

    tool: str
    action: Decision
    command: str | None = None
    path: str | None = None
    host: str | None = None

    def __str__(self) -> str:
        patterns = [f"{key} {json.dumps(value)}" for key, value in self.patterns().items() if value is not None]
        return " ".join([self.action, self.tool, *patterns])

    def patterns(self) -> dict[str, str | None]:
        """The rule's patterns by key; None where the rule sets none."""
        return {"command": self.command, "path": self.path, "host": self.host}


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with a call, why (a sentence for the person), and what it may do that deserves a look."""

    decision: Decision
    reason: str
    risks: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scope:
    """Something the person allowed for the rest of one chat; it turns "ask" into "allow", never "deny".

    Each tool is scoped by what it acts on, so the words on the button are all it allows:
    - run_shell takes exactly one of `command` (this exact command line) or `prefix` (commands starting
      with these words: every command of the line must start with them, so prefix `git status` does not
      cover `git status && rm -rf x`); neither covers a hidden line (see `shellsplit`), such as
      `git status ${x@P}` or `git -c alias.x='!rm x' x`, even written exactly as it was allowed;
    - write_file and edit_file take `path`, a pattern over workspace paths as in rules (`*` also crosses
      `/`, `dir/**` covers the folder and all under it), matched against the path with links followed;
    - web_fetch takes `host`, a host name (or a pattern such as `*.python.org`), lowercased;
    - any other tool (an MCP tool, say) takes none of them and covers all its calls; one for
      `SERVER__*` covers every tool of that MCP server.
    """

    tool: str
    command: str | None = None
    prefix: str | None = None
    path: str | None = None
    host: str | None = None

    def __post_init__(self) -> None:
        wanted = _SCOPED_BY.get(self.tool, ())
        given = tuple(key for key in ("command", "prefix", "path", "host") if getattr(self, key) is not None)
        if len(given) != bool(wanted) or not set(given) <= set(wanted):
            takes = " or ".join(wanted) if wanted else "nothing besides the tool"
            raise ValueError(f"a {self.tool} scope takes exactly one {takes}, not {', '.join(given) or 'none'}")
        if self.prefix is not None and not _prefix_words(self.prefix):
            raise ValueError(f"the prefix {self.prefix!r} is not the start of one simple command")
        if self.path is not None and (not self.path or self.path.startswith("/") or ".." in self.path.split("/")):
            raise ValueError(f"{self.path!r} is not a path inside the workspace, such as 'docs/**'")

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> Scope | None:
        """A scope saved with a chat; None for one that no longer means anything (such as "every write")."""
        try:
            return cls(**data)
        except (TypeError, ValueError):
            return None

    def matches(self, call: ToolCall, workspace: Workspace | None = None) -> bool:
        """Whether this scope covers the call; a path scope needs the workspace to follow links, else covers nothing."""
        if call.name != self.tool and not (self.tool.endswith(SEPARATOR + "*") and fnmatchcase(call.name, self.tool)):
            return False
        if not _SCOPED_BY.get(self.tool):
            return True
        key = "path" if self.path is not None else "host" if self.host is not None else "command"
        argument = call.arguments.get(_CRITERIA[key])
        if not isinstance(argument, str):
            return False
        if self.command is not None:
            return argument.strip() == self.command.strip() and not split_command(argument).hidden
        if self.prefix is not None:
            return _all_start_with(argument, _prefix_words(self.prefix))
        if self.path is not None:
            return workspace is not None and _within_scope(argument, self.path, workspace)
        host = _host(argument)
        return host is not None and fnmatchcase(host.lower(), (self.host or "").lower())

    def words(self) -> tuple[str, dict[str, str]]:
        """What it allows, as a message key and its values (`allows_*` in the UI's texts), for the person."""
        for key in ("command", "prefix", "path", "host"):
            value = getattr(self, key)
            if value is not None:
                return f"allows_{self.tool}_{key}" if key == "path" else f"allows_{key}", {key: value}
        if self.tool.endswith(SEPARATOR + "*"):
            return "allows_server", {"server": self.tool.removesuffix(SEPARATOR + "*")}
        return "allows_tool", {"tool": self.tool}

    def __str__(self) -> str:
        if self.command is not None:
            return f"the command {json.dumps(self.command)}"
        if self.prefix is not None:
            return f"commands starting with {json.dumps(self.prefix)}"
        if self.path is not None:
            return f"{'editing' if self.tool == 'edit_file' else 'writing'} {json.dumps(self.path)}"
        if self.host is not None:
            return f"reading pages from {json.dumps(self.host)}"
        if self.tool.endswith(SEPARATOR + "*"):
            return f"every tool of the MCP server {self.tool.removesuffix(SEPARATOR + '*')}"
        return f"every {self.tool} call"


# What each tool's chat scope is about; tools not named here are scoped as a whole.
_SCOPED_BY: dict[str, tuple[str, ...]] = {
    "run_shell": ("command", "prefix"),
    "write_file": ("path",),
    "edit_file": ("path",),
    "web_fetch": ("host",),
}


@dataclass(frozen=True, slots=True)
class ScopeOffer:
    """What "Allow for this chat" offers for one call: `scope` as it stands, and what the person may type instead.

    `typed` is "prefix" (the start of a command), "path" (a folder or a glob) or None when nothing typed
    applies to this tool, so the UI shows the box only where it does something.
    """

    scope: Scope
    typed: Literal["prefix", "path"] | None


def scope_offer(call: ToolCall, workspace: Path) -> ScopeOffer | None:
    """The chat scope that fits the call (this command, this file, this host); None if its arguments cannot tell,
    or if no scope could ever cover it (a hidden shell line)."""
    kinds = _SCOPED_BY.get(call.name, ())
    try:
        if "command" in kinds:
            command = str(call.arguments["command"])  # a hidden line can't be allowed for the chat: no offer
            return None if split_command(command).hidden else ScopeOffer(Scope(call.name, command=command), "prefix")
        if "path" in kinds:
            folder = Workspace(workspace)
            path = folder.relative(folder.resolve(str(call.arguments["path"])))
            return ScopeOffer(Scope(call.name, path=_glob_escape(path)), "path")
        if "host" in kinds:
            host = _host(str(call.arguments["url"]))
            return ScopeOffer(Scope(call.name, host=host.lower()), None) if host else None
        return ScopeOffer(Scope(call.name), None)
    except (KeyError, ToolError, ValueError):
        return None


def typed_scope(call: ToolCall, text: str, workspace: Path) -> Scope:
    """The scope for what the person typed in the box the offer shows; ValueError says why it cannot be one.

    For a file tool, a folder (`docs` or `docs/`) stands for everything under it.
    """
    text = text.strip()
    offer = scope_offer(call, workspace)
    if offer is None or offer.typed is None or not text:
        raise ValueError("there is nothing to type for this call; use the button as it is")
    if offer.typed == "prefix":
        return Scope(call.name, prefix=text)
    pattern = text.removeprefix("./").rstrip("/") or "."
    if pattern == "." or (not _WILDCARD.search(pattern) and (Path(workspace) / pattern).is_dir()):
        pattern = "**" if pattern == "." else f"{pattern}/**"
    return Scope(call.name, path=pattern)


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
        return cls(parse_rules(text, source=str(path)), workspace, tools=tools)

    def decide(self, call: ToolCall, *, scopes: Iterable[Scope] = ()) -> Verdict:
        """Allow, ask or deny `call`; a scope the person chose in this chat can turn "ask" into "allow"."""
        decision, reason = self._by_rules(call)
        if decision == "ask":
            scope = next((scope for scope in scopes if scope.matches(call, self.workspace)), None)
            if scope is not None:
                decision, reason = "allow", f"you allowed {scope} for this chat"
        return Verdict(decision, reason, risk_notes(call, self.workspace.root))

    def _by_rules(self, call: ToolCall) -> tuple[Decision, str]:
        try:
            found = self.tools.get(call.name)
            if isinstance(found, ExternalTool):  # before validating: a deny rule holds whatever the arguments
                return _judge_by_name(call.name, self.rules)
            arguments = found.validate(call.arguments)
        except ToolError as exc:
            return "ask", f"the call cannot be checked: {exc}"
        rules = [rule for rule in self.rules if fnmatchcase(call.name, rule.tool) and _applies(rule, arguments)]
        if "command" in arguments:
            return _judge_command(arguments["command"], rules)
        try:
            target = self._target(call.name, arguments)
        except ToolError as exc:
            return "deny", str(exc)
        return _judge_target(target, rules, tool=found.name, risky=found.risky)

    def _target(self, tool: str, arguments: Mapping[str, Any]) -> _Target:
        paths: tuple[str, ...] = ()
        if "path" in arguments:
            resolved = self.workspace.relative(self.workspace.resolve(arguments["path"]))
            written = Path(os.path.normpath(self.workspace.root / arguments["path"]))
            paths = (resolved,)
            if written.is_relative_to(self.workspace.root):
                paths += (written.relative_to(self.workspace.root).as_posix(),)
        host = _host(arguments["url"]) if "url" in arguments else None
        return _Target(paths, host, reads_folder=tool in _FOLDER_TOOLS)


def parse_rules(text: str, *, source: str = RULES_FILE) -> list[Rule]:
    """The rules in the text of a rules file; RulesError names the line or the rule that is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RulesError(f"{source}, line {exc.lineno}, column {exc.colno}: {exc.msg}.") from None
    if not isinstance(data, list):
        raise RulesError(f"{source} must hold a JSON list of rules, such as {_EXAMPLE}.")
    # MCP tools are named by their server and judged by name only, so our own tools are the ones to check.
    arguments = {found.name: set(found.argument_names) for found in builtin_tools()}
    rules = []
    for number, entry in enumerate(data, start=1):
        problem = _problem(entry, arguments)
        if problem:
            raise RulesError(f"{source}, rule {number} {json.dumps(entry)}: {problem}.")
        rules.append(Rule(entry["tool"], entry["action"], entry.get("command"), entry.get("path"), entry.get("host")))
    return rules


def risk_notes(call: ToolCall, workspace: Path) -> tuple[str, ...]:
    """What the call may do that deserves a look, from our own tables; never from the model's words."""
    notes: list[str] = []
    command = call.arguments.get("command")
    if call.name == "run_shell" and isinstance(command, str):
        notes.extend(_shell_risks(command, Path(workspace)))
    elif call.name == "write_file" and _is_existing_file(call.arguments.get("path"), Path(workspace)):
        notes.append(OVERWRITES)
    elif call.name == "edit_file":
        notes.append(EDITS)
    elif call.name == "web_fetch":
        notes.append(NETWORK)
    return tuple(dict.fromkeys(notes))


# ---- rules file ----

_EXAMPLE = '[{"tool": "read_file", "action": "allow"}]'
_KEYS = ("tool", "action", "command", "path", "host", "note")
# A rule's pattern key and the tool argument it is matched against.
_CRITERIA = {"command": "command", "path": "path", "host": "url"}


def _problem(entry: object, arguments: Mapping[str, set[str]]) -> str | None:
    """What is wrong with one rule, or None; `arguments` maps each tool to its argument names."""
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
    if entry.get("action") not in DECISIONS:
        return f"'action' must be allow, ask or deny, not {entry.get('action')!r}"
    if SEPARATOR in entry["tool"]:  # an MCP tool: its server may not be running yet, and only names count
        wrong = next((key for key in _CRITERIA if key in entry), None)
        return f"{wrong} does not apply to MCP tools; name the server and tool only" if wrong else None
    tools = {name: names for name, names in arguments.items() if fnmatchcase(name, entry["tool"])}
    if not tools:
        return f"there is no tool {entry['tool']!r}; the tools are {', '.join(sorted(arguments))}"
    needed = {argument for key, argument in _CRITERIA.items() if key in entry}
    if not any(needed <= names for names in tools.values()):
        keys = " and ".join(key for key in _CRITERIA if key in entry)
        return f"{keys} does not apply to {entry['tool']}; {_WHICH_KEY}"
    path = entry.get("path", "")
    if path.startswith("/") or ".." in path.split("/"):
        return "'path' is relative to the workspace and stays inside it, such as 'secrets/**'"
    return None


_WHICH_KEY = "command is for run_shell, path for the file tools, host for web_fetch"


def _judge_by_name(name: str, rules: Sequence[Rule]) -> tuple[Decision, str]:
    """An MCP tool's verdict from the rules naming it; their arguments mean nothing to our patterns."""
    named = [rule for rule in rules if fnmatchcase(name, rule.tool) and not any(rule.patterns().values())]
    for action in reversed(DECISIONS):
        rule = next((rule for rule in named if rule.action == action), None)
        if rule is not None:
            return action, f"the rule {rule} matches this call"
    return "ask", f"{name} is a tool of an MCP server, and no rule allows it"


def _applies(rule: Rule, arguments: Mapping[str, Any]) -> bool:
    """A rule applies to a call that has an argument for each pattern it sets (a path rule never to run_shell)."""
    return all(_CRITERIA[key] in arguments for key, value in rule.patterns().items() if value is not None)


# ---- files and hosts ----

# Tools that read a whole folder: a rule about something inside the folder concerns them too.
_FOLDER_TOOLS = frozenset({"list_files", "search_files"})


@dataclass(frozen=True, slots=True)
class _Target:
    """What path and host rules see: `paths` holds the strict reading first, then the one as written."""

    paths: tuple[str, ...]
    host: str | None
    reads_folder: bool


def _judge_target(target: _Target, rules: Sequence[Rule], *, tool: str, risky: bool) -> tuple[Decision, str]:
    for action in _STRICT_FIRST:
        rule = next((rule for rule in rules if rule.action == action and _target_matches(rule, target)), None)
        if rule is not None:
            return action, f"the rule {rule} matches this call"
    # A folder-reading call over a denied path is not denied outright (listing the root must stay possible),
    # but it must not run unseen either.
    rule = next((rule for rule in rules if rule.action != "allow" and _reaches_into(rule, target)), None)
    if rule is not None:
        return "ask", f"{tool} would read inside {target.paths[0]}, where the rule {rule} applies"
    rule = next((rule for rule in rules if rule.action == "allow" and _target_matches(rule, target, strict=True)), None)
    if rule is not None:
        return "allow", f"the rule {rule} allows this call"
    if risky:
        return "ask", f"no rule allows this {tool} call"
    return "allow", f"{tool} only reads"


def _target_matches(rule: Rule, target: _Target, *, strict: bool = False) -> bool:
    if rule.host is not None and not (target.host and fnmatchcase(target.host, rule.host.lower())):
        return False
    paths = target.paths[:1] if strict else target.paths
    return rule.path is None or any(_path_matches(path, rule.path) for path in paths)


def _reaches_into(rule: Rule, target: _Target) -> bool:
    """Whether a call that reads a whole folder would read paths the rule names."""
    pattern = rule.path
    return target.reads_folder and pattern is not None and any(_folder_may_hold(p, pattern) for p in target.paths)


def _path_matches(path: str, pattern: str) -> bool:
    pattern = pattern.removeprefix("./")
    if fnmatchcase(path, pattern):
        return True
    return pattern.endswith("/**") and fnmatchcase(path, pattern[:-3])  # `dir/**` also names `dir`


_WILDCARD = re.compile(r"[*?\[]")


def _folder_may_hold(folder: str, pattern: str) -> bool:
    """Whether reading everything under `folder` could reach a path that `pattern` matches."""
    pattern = pattern.removeprefix("./")
    wildcard = _WILDCARD.search(pattern)
    if wildcard is None:
        return _within(pattern, folder)
    base = pattern[: wildcard.start()].rpartition("/")[0]  # every match lies under this folder, as `*` crosses `/`
    return not base or _within(base, folder) or _within(folder, base)


def _within(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder + "/")


def _within_scope(path: str, pattern: str, workspace: Workspace) -> bool:
    """Whether `path`, with links followed, is a workspace path the scope's pattern names."""
    try:
        resolved = workspace.relative(workspace.resolve(path))
    except ToolError:
        return False
    return _path_matches(resolved, pattern)


def _glob_escape(path: str) -> str:
    """A path as a pattern that names only it: `[` `*` `?` in a file name match themselves."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def _host(url: str) -> str | None:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


# ---- shell commands ----


def _judge_command(command: str, rules: Sequence[Rule]) -> tuple[Decision, str]:
    split = split_command(command)
    judged = [_judge_segment(segment, rules) for segment in split.segments]
    # Deny and ask patterns also see the whole line: `curl * | sh` is a fair thing to write in a rule.
    whole = _loose_matches((command.strip(),), rules)
    judged += [(action, f"the rule {rule} matches the command") for action, rule in whole]
    denied = next((verdict for verdict in judged if verdict[0] == "deny"), None)
    if denied:
        return denied
    if split.hidden:  # it may run anything, so any deny rule could match it, and no allow rule covers it
        unseen = next((rule for rule in rules if rule.action == "deny"), None)
        if unseen is not None:
            return (
                "deny",
                f"Meowgent can't tell everything it runs ({split.problem}), and the rule {unseen} could match",
            )
        return "ask", f"Meowgent can't tell everything it runs: {split.problem}"
    asked = next((verdict for verdict in judged if verdict[0] == "ask"), None)
    if asked:
        return asked
    if not split.segments:
        return "ask", "the command runs nothing that can be checked"
    return "allow", "your rules allow every command in it"


def _judge_segment(segment: str, rules: Sequence[Rule]) -> tuple[Decision, str]:
    loose = next(_loose_matches(_views(segment), rules), None)
    if loose is not None:
        return loose[0], f"the rule {loose[1]} matches `{segment}`"
    rule = next((rule for rule in rules if rule.action == "allow" and _allows(rule.command, segment)), None)
    if rule is not None:
        return "allow", f"the rule {rule} allows `{segment}`"
    return "ask", f"no rule allows `{segment}`"


def _loose_matches(views: tuple[str, ...], rules: Sequence[Rule]) -> Iterator[tuple[Decision, Rule]]:
    """The deny rules, then the ask rules, whose command pattern matches any of `views`."""
    for action in _STRICT_FIRST:
        for rule in rules:
            if rule.action == action and (rule.command is None or any(fnmatchcase(v, rule.command) for v in views)):
                yield action, rule


def _allows(pattern: str | None, segment: str) -> bool:
    """The strict reading: the segment as written, where `*` never covers writing a file.

    A redirection that writes is covered only by a pattern that writes a `>`; a write option (`git log
    --output=FILE`, `sort -o`, `tee`, `sed -i`) only by a pattern that spells that option at the start of
    one of its words, as `sort -o sorted.txt *` does.
    """
    if pattern is None:
        return True
    if not fnmatchcase(segment, pattern):
        return False
    needed = _write_spellings(segment)
    return needed is not None and all(_spells(pattern, spelling) for spelling in needed)


def _write_spellings(segment: str) -> list[str] | None:
    """What a pattern must spell to cover the files `segment` writes; None if it cannot be read."""
    try:
        parsed = parse_segment(segment)
    except ValueError:
        return None
    spellings = [">" for redirect in parsed.redirects if redirect.writes]
    return spellings + [write.spelling for write in _writes(parsed)]


def _writes(parsed: SimpleCommand) -> Iterator[Write]:
    """The files each command of the segment writes through its options or operands (wrappers included)."""
    for invocation in invocations(parsed.words):
        program = program_name(invocation[0])
        if program is not None:
            yield from read_program(program, invocation[1:]).writes


def _spells(pattern: str, spelling: str) -> bool:
    """Whether the pattern writes `spelling` at the start of one of its words (`>` anywhere, as before)."""
    if spelling == ">":
        return ">" in pattern
    starts = [0, *(index + 1 for index, char in enumerate(pattern) if char.isspace())]
    return any(pattern.startswith(spelling, start) for start in starts)


def _views(segment: str) -> tuple[str, ...]:
    """The segment as written, then each command it runs in plain form (see the module docstring)."""
    try:
        words = parse_segment(segment).words
    except ValueError:
        return (segment,)
    return (segment, *(" ".join(_plain(invocation)) for invocation in invocations(words)))


def _plain(words: Sequence[Word]) -> list[str]:
    return [program_name(words[0]) or words[0].text, *(w.text if w.literal is None else w.literal for w in words[1:])]


def _prefix_words(prefix: str) -> list[str]:
    """The words a scope prefix stands for, as written; empty if it is not the start of one simple command."""
    try:
        parsed = parse_segment(prefix)
    except ValueError:
        return []
    return [] if parsed.redirects else _texts(parsed)


def _all_start_with(command: str, wanted: list[str]) -> bool:
    """Whether every command of a line that is not hidden starts with the words `wanted`."""
    split = split_command(command)
    return not split.hidden and bool(split.segments) and all(_starts_with(s, wanted) for s in split.segments)


def _starts_with(segment: str, wanted: list[str]) -> bool:
    try:
        parsed = parse_segment(segment)
    except ValueError:
        return False
    writes = any(redirect.writes for redirect in parsed.redirects) or any(_writes(parsed))
    return not writes and _texts(parsed)[: len(wanted)] == wanted


def _texts(parsed: SimpleCommand) -> list[str]:
    return [word.text for word in (*parsed.assignments, *parsed.words)]


# ---- risk notes ----

_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})
_PROGRAM_RISKS = {
    **dict.fromkeys(_DELETERS, DELETES),
    **dict.fromkeys(("curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ftp", "telnet"), NETWORK),
    **dict.fromkeys(("sudo", "su", "doas"), ADMIN),
    **dict.fromkeys(("chmod", "chown", "chgrp"), PERMISSIONS),
}
_INSTALLS = dict.fromkeys(("install", "i", "ci", "add"), NETWORK)
_SUBCOMMAND_RISKS: dict[str, dict[str, str]] = {
    "git": {"clean": DELETES, **dict.fromkeys(("push", "pull", "clone", "fetch"), NETWORK)},
    **dict.fromkeys(("pip", "pip3", "npm", "pnpm", "yarn"), _INSTALLS),
}
_OPTIONS_WITH_VALUE = frozenset({"-C", "-c"})  # git's: `git -C repo push` still pushes
_TRUNCATING = frozenset({">", ">|", "&>", ">&"})


def _shell_risks(command: str, workspace: Path) -> Iterator[str]:
    split = split_command(command)
    for segment in split.segments:
        try:
            parsed = parse_segment(segment)
        except ValueError:
            continue
        for invocation in invocations(parsed.words):
            program, *arguments = _plain(invocation)
            yield from _program_risks(program, arguments)
        for redirect in parsed.redirects:
            truncates = redirect.operator.lstrip("0123456789") in _TRUNCATING and redirect.writes
            if truncates and _is_existing_file(redirect.target.literal, workspace, expand_user=True):
                yield OVERWRITES
        for write in _writes(parsed):
            yield from _write_risks(write, workspace)
    if split.hidden:
        yield HIDDEN


def _write_risks(write: Write, workspace: Path) -> Iterator[str]:
    if write.how == "deletes":
        yield DELETES
    elif write.how == "edits":
        yield EDITS
    elif write.how == "replaces" and _is_existing_file(write.target and write.target.literal, workspace):
        yield OVERWRITES


def _program_risks(program: str, arguments: list[str]) -> Iterator[str]:
    if program.startswith("python") and arguments[:1] == ["-m"] and len(arguments) > 1:
        program, arguments = arguments[1], arguments[2:]  # `python -m pip install` is pip
    if program in _PROGRAM_RISKS:
        yield _PROGRAM_RISKS[program]
    risk = _SUBCOMMAND_RISKS.get(program, {}).get(_subcommand(arguments) or "")
    if risk:
        yield risk


def _subcommand(arguments: list[str]) -> str | None:
    """The first argument that is not an option (nor an option's value)."""
    skip = False
    for argument in arguments:
        if skip:
            skip = False
        elif argument in _OPTIONS_WITH_VALUE:
            skip = True
        elif not argument.startswith("-"):
            return argument
    return None


def _is_existing_file(path: object, workspace: Path, *, expand_user: bool = False) -> bool:
    if not isinstance(path, str) or not path or "\0" in path:
        return False
    return (workspace / (os.path.expanduser(path) if expand_user else path)).is_file()
