"""The approval card: what each waiting call will do, in plain words, in full, in the order it will run.

The card is HTML built from escaped text (meowgent.ui.html.safehtml): a path, command or address the
model chose can't end a code span, draw over the page or load anything.
"""

from __future__ import annotations

import enum
import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from meowgent.events import ToolCall
from meowgent.policy.risks import Risk, risk_notes
from meowgent.policy.why import Why
from meowgent.shellsplit.reader import split_command
from meowgent.tools.linediff import LineDiff
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.sandbox import NoSandbox, Sandbox
from meowgent.tools.spec import ExternalTool, ToolError
from meowgent.tools.workspace import Workspace
from meowgent.ui.html.actions import action, lookup
from meowgent.ui.html.callhtml import browser_safe, diff_html, edit_diff, lines_chars, technical_html, trim_for_view
from meowgent.ui.html.mcpcall import external, fields, fields_html, remote_name
from meowgent.ui.html.safehtml import Html, block, fill, join, show_invisible, tag, visible_lines
from meowgent.ui.html.tooltext import Look, look_of, tool_look
from meowgent.ui.i18n import ENGLISH, problems_text, risks, t

CARD_BOX_CHARS = 50_000
"""Each later call's text on the card is whole up to this size, then its head and tail. The box under the card
holds the first call's text whole, and the card doesn't repeat it: a 1 MB file travels to the page once."""


@dataclass(frozen=True)
class CallDescription:
    """`summary` says what will happen (safe HTML); `details` is the full command, content or URL as text, and what
    the summary shows only in part (an edit's long diff, an MCP call's long field)."""

    summary: Html
    details: str
    diff: LineDiff | None = None
    """An edit's diff, worked out once for its coloured view and, when that is cut, `details`."""
    target: str | None = None
    """Where a write or edit really goes, when a symbolic link sends its path elsewhere."""


@dataclass(frozen=True)
class Card:
    """The card for the waiting calls: `summary` is all of them (safe HTML), `details` the first one's text."""

    summary: Html
    details: str
    cut_short: tuple[str, ...] = ()
    """The ids of the calls whose text the card shows only in part: "Approve all" may not approve them."""


@dataclass(frozen=True)
class Step:
    """One call as the card lists it; `cut` when its text shows only in part."""

    html: Html
    cut: bool = False


def describe_call(
    call: ToolCall, workspace: Path, language: str = ENGLISH, *, tools: ToolRegistry | None = None
) -> CallDescription:
    """What approving this call will do, for a person who is not technical (`tools`: the app's, MCP's included)."""
    arguments = call.arguments
    traits = (tools or ToolRegistry.builtins()).traits(call.name)
    match look_of(call.name, traits):
        case Look.RUN:
            command = str(arguments.get(traits.command or "", ""))
            return CallDescription(_say(language, "run_command", folder=_code(str(workspace))), command)
        case Look.WRITE:
            content = str(arguments.get(traits.main or "", ""))
            path = str(arguments.get(traits.path or "", ""))
            target = link_target(workspace, path)
            summary = _write_summary(workspace, path, content, language, target=target)
            return CallDescription(_through_link(summary, path, target, language), content, target=target)
        case Look.EDIT:
            path = str(arguments.get(traits.path or "", ""))
            target = link_target(workspace, path)
            old, new = str(arguments.get(traits.old or "", "")), str(arguments.get(traits.main or "", ""))
            diff = edit_diff(old, new, language)
            summary = _say(language, "edit_file", path=_path(path, target))
            # The card draws the diff; the box under it holds the text only when the card shows it in part.
            folded = lines_chars(diff.lines) > CARD_BOX_CHARS
            details = "\n".join(diff.lines) if folded else ""
            return CallDescription(_through_link(summary, path, target, language), details, diff, target)
        case Look.FETCH:
            url = str(arguments.get(traits.url or "", ""))
            host = urlsplit(url).hostname or t(language, "unknown_site")
            return CallDescription(_say(language, "fetch", host=_code(host)), url)
    if mcp := external(call.name, tools):
        return _describe_mcp(call, mcp, language)
    details = json.dumps(arguments, indent=2, ensure_ascii=False)
    return CallDescription(_say(language, "other_tool", tool=_code(call.name)), details)


def link_target(workspace: Path, path: str) -> str | None:
    """Where a write to `path` really goes (workspace-relative) when a symbolic link on the way leads elsewhere;
    None when it goes where its name says, or cannot go anywhere (the tool refuses it, and the card says so)."""
    space = Workspace(workspace)
    try:
        target = space.resolve(path)
    except (ToolError, ValueError):  # outside, a loop, or a name no file system can store
        return None
    named = Path(os.path.normpath(space.root / path))
    return space.relative(target) if target != named else None


def _describe_mcp(call: ToolCall, tool: ExternalTool, language: str) -> CallDescription:
    """Which MCP server and tool, what the server claims about it (shown, never trusted), and the arguments as
    labelled fields; the raw JSON is in "Technical details", and in `details` (the box) only when a field is too
    long for the card to show whole."""
    summary = tag("div", _say(language, "mcp_source", server=_code(tool.group), tool=_code(remote_name(tool))))
    if tool.hints:
        claims = t(language, "risk_separator").join(t(language, f"mcp_hint_{hint}") for hint in tool.hints)
        summary = join([summary, tag("div", t(language, "mcp_hints", hints=claims))])
    labelled = fields(call.arguments, tool.parameters)
    shown = fields_html(labelled, language, fold=lambda text: trim_for_view(text, CARD_BOX_CHARS, language=language))
    technical = technical_html(call.arguments, language, limit=CARD_BOX_CHARS)
    folded = any(len(text) > CARD_BOX_CHARS for _, text in labelled)
    details = json.dumps(call.arguments, indent=2, ensure_ascii=False) if folded else ""
    return CallDescription(join([summary, shown, technical]), details)


def risk_lines(call: ToolCall, workspace: Path, language: str, *, tools: ToolRegistry) -> list[Html]:
    """What deserves a second look, from our rules (never from the model): `⚠️ Heads up: this deletes files.`; and
    for a command Meowgent can't read whole, why: what in the line leaves it open, so the person can judge it."""
    notes = risk_notes(call, workspace, tools=tools)
    if not notes:
        return []
    lines = [tag("div", tag("strong", t(language, "heads_up", risks=risks(language, notes))))]
    if Risk.HIDDEN in notes:  # only a shell line is hidden
        command = str(call.arguments.get(tools.traits(call.name).command or "", ""))
        why = Why("hidden", problems=split_command(command).problems).values()
        lines.append(tag("div", t(language, "hidden_because", problems=problems_text(language, why))))
    return lines


def describe_queue(
    calls: tuple[ToolCall, ...],
    workspace: Path,
    language: str = ENGLISH,
    *,
    network: tuple[str, ...] = (),
    commands: Commands | None = None,
    tools: ToolRegistry | None = None,
) -> Card:
    """Every waiting call, in order, each in full: what it does, a warning if any, and its command or text.

    `details` is the text of the first call, which "Approve" decides. A later call's text longer than
    CARD_BOX_CHARS shows in part, so the card then asks for each call on its own (`cut_short`). `network` is the
    chat's hosts for its commands, `commands` how commands run on this computer (in the sandbox when None).
    """
    if not calls:
        return Card(Html(""), "")
    descriptions = [describe_call(call, workspace, language, tools=tools) for call in calls]
    where = _Sandbox(network, commands or Commands.SANDBOXED, tools or ToolRegistry.builtins())
    # The head call's text goes in the box under the card (`details`), so the card doesn't show it twice.
    steps = [
        _step(call, description, workspace, language, where, boxed=index > 0, tools=where.tools)
        for index, (call, description) in enumerate(zip(calls, descriptions, strict=True))
    ]
    cut_short = tuple(call.id for call, step in zip(calls, steps, strict=True) if step.cut)
    if len(calls) == 1:
        card = join([tag("h3", t(language, "card_one")), steps[0].html])
    else:
        items = join([tag("li", step.html) for step in steps])
        heading = tag("h3", t(language, "card_many", count=len(calls)))
        hint = t(language, "card_many_hint_cut" if cut_short else "card_many_hint")
        card = join([heading, tag("ol", items), tag("p", hint)])
    return Card(block(card, cls="mg mg-card"), _shown_text(calls[0], descriptions[0].details, where.tools), cut_short)


class Commands(enum.Enum):
    """How commands run on this computer, as every command's card says it (the value is the card's words)."""

    SANDBOXED = ""
    UNSANDBOXED = "card_no_sandbox"
    REFUSED = "card_sandbox_refused"
    """As root with only a bwrap that can't forbid user namespaces: an approved command does not run."""

    @classmethod
    def of(cls, sandbox: Sandbox | NoSandbox) -> Commands:
        if not isinstance(sandbox, NoSandbox):
            return cls.SANDBOXED
        return cls.REFUSED if sandbox.refused else cls.UNSANDBOXED


@dataclass(frozen=True)
class _Sandbox:
    """What the card says about where a command runs: the chat's network setting, and how commands run here."""

    network: tuple[str, ...]
    commands: Commands
    tools: ToolRegistry

    def line(self, call: ToolCall, workspace: Path, language: str) -> str:
        """No sandbox at all, or a command that needs the network it doesn't have (the control under the card)."""
        if tool_look(call.name, self.tools) is not Look.RUN:
            return ""
        if self.commands is not Commands.SANDBOXED:
            return t(language, self.commands.value)
        needs_network = Risk.NETWORK in risk_notes(call, workspace, tools=self.tools)
        return t(language, "network_needed") if not self.network and needs_network else ""


def _step(
    call: ToolCall,
    description: CallDescription,
    workspace: Path,
    language: str,
    where: _Sandbox,
    *,
    boxed: bool,
    tools: ToolRegistry,
) -> Step:
    """One call on the card: "Run `make test`", the sentence that says where and how, a warning, then its text:
    an edit's diff, and when `boxed` (a call after the first) any other text; the first call's text is in the
    box under the card."""
    title = action(call.name, lookup(call.arguments), language, target=description.target, tools=tools)
    # <div>, not <p>: Gradio's Markdown style runs paragraphs inside list items into one line.
    parts: list[str | Html] = [tag("div", tag("strong", title)), tag("div", description.summary)]
    parts += risk_lines(call, workspace, language, tools=tools)
    if sandbox_line := where.line(call, workspace, language):
        parts.append(tag("div", sandbox_line))
    if tool_look(call.name, tools) is Look.RUN:  # no checkpoint can know what a command changed (issue 21)
        parts.append(tag("div", t(language, "files_commands_cannot")))
    if description.diff is not None:
        parts.append(diff_html(description.diff, language, limit=CARD_BOX_CHARS))
        return Step(join(parts), cut=boxed and bool(description.details))  # the box holds a diff the card cuts
    if external(call.name, tools):  # its fields are in the summary, its JSON whole in `details` only when folded
        return Step(join(parts), cut=boxed and bool(description.details))
    if not boxed:
        return Step(join(parts))
    text = _shown_text(call, description.details, tools)
    parts.append(tag("pre", trim_for_view(text, CARD_BOX_CHARS, language=language), cls="mg-box"))
    return Step(join(parts), cut=len(text) > CARD_BOX_CHARS)


def _shown_text(call: ToolCall, details: str, tools: ToolRegistry) -> str:
    """Details as the page shows them: invisible characters marked, a command's blank lines folded."""
    text = visible_lines(details) if tool_look(call.name, tools) is Look.RUN else details
    return browser_safe(show_invisible(text))


def _say(language: str, key: str, **values: str | Html) -> Html:
    return fill(t(language, key), **values)


def _code(value: str) -> Html:
    return tag("code", value)


def _path(path: str, target: str | None) -> Html:
    """A path as the model wrote it, and where it really leads when a link sends it elsewhere."""
    return _code(path) if target is None else join([_code(path), " → ", _code(target)])


def _through_link(summary: Html, path: str, target: str | None, language: str) -> Html:
    """The summary, and a plain warning when a symbolic link sends the change to another file."""
    if target is None:
        return summary
    return join(
        [summary, tag("div", tag("strong", _say(language, "through_link", path=_code(path), target=_code(target))))]
    )


def _write_summary(workspace: Path, path: str, content: str, language: str, *, target: str | None) -> Html:
    size = len(content.encode("utf-8", "surrogatepass"))
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    amount = t(language, "amount_one" if lines == 1 else "amount_many", lines=f"{lines:,}", size=f"{size:,}")
    try:
        resolved = Workspace(workspace).resolve(path)
    except ToolError:
        return _say(language, "write_outside", path=_code(path), amount=amount)
    except ValueError:  # UnicodeEncodeError: a name no file system can store
        return _say(language, "write_invalid", path=_code(path), amount=amount)
    shown = _path(path, target)
    if resolved.is_file():
        return _say(language, "replace_file", path=shown, size=f"{resolved.stat().st_size:,}", amount=amount)
    return _say(language, "create_file", path=shown, amount=amount)
