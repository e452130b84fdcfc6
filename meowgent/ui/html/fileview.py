"""The Files panel's words and pieces (pure): the tree's rows with this chat's marks, the changes to undo, what an
undo did or asks, a refusal in the page's language, and the Undo button of a call's panel in the chat.

A row's value says what it is ("folder:docs", "file:docs/a.md"), so picking it needs no second look at the disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from meowgent.files.checkpoints import Mark, UndoReport
from meowgent.files.errors import FileRefused
from meowgent.files.sizes import human_size
from meowgent.files.tree import Entry
from meowgent.persist.checkpoints import CheckpointRow
from meowgent.tools.linediff import LineDiff
from meowgent.ui.html.callhtml import diff_html
from meowgent.ui.html.safehtml import Html, block, join, tag
from meowgent.ui.i18n import t

T = TypeVar("T")

LISTED = 300
"""Rows of one folder shown at most (the newest); a search finds the others."""
_ICONS = {"folder": "📁", "file": "📄", "link": "🔗", "other": "❔"}


def tree_rows(entries: Sequence[Entry], marks: Mapping[str, Mark], language: str) -> list[tuple[str, str]]:
    """(label, value) for each entry, newest first as given, at most `LISTED`; this chat's files marked."""
    rows = []
    for entry in entries[:LISTED]:
        name = entry.path.rsplit("/", 1)[-1] if "/" in entry.path else entry.path
        label = f"{_ICONS[entry.kind]} {name}{'/' if entry.kind == 'folder' else ''}"
        if entry.kind == "link":
            label += f" · {t(language, 'files_link')}"
        if (mark := marks.get(entry.path)) is not None:
            label += f" · {mark_words(mark, language)}"
        rows.append((label, f"{'folder' if entry.kind == 'folder' else 'file'}:{entry.path}"))
    return rows


def found_rows(entries: Sequence[Entry], marks: Mapping[str, Mark], language: str) -> list[tuple[str, str]]:
    """A search's rows: each with its whole path, so two files of one name can be told apart."""
    return [
        (_with_path(label, entry.path), value)
        for (label, value), entry in zip(tree_rows(entries, marks, language), entries, strict=False)
    ]


def _with_path(label: str, path: str) -> str:
    icon, _, rest = label.partition(" ")
    name = path.rsplit("/", 1)[-1]
    return f"{icon} {path}{rest[len(name) :]}"


def mark_words(mark: Mark, language: str) -> str:
    """ "+12 −3", or "new", or "changed" when the sides can't be counted as lines, or "counting…" until they are."""
    if mark.pending:
        counting = t(language, "files_mark_pending")
        return f"{t(language, 'files_mark_created')} {counting}" if mark.created else counting
    if mark.added is not None and mark.removed is not None:
        counted = t(language, "files_mark_lines", added=mark.added, removed=mark.removed)
        return f"{t(language, 'files_mark_created')} {counted}" if mark.created else counted
    return t(language, "files_mark_created" if mark.created else "files_mark_changed")


def folder_line(folder: str, language: str) -> str:
    """Where the tree is, and so where uploads go."""
    name = folder or t(language, "files_folder_root")
    return t(language, "files_upload_into", folder=name)


def listing_note(shown: int, total: int, language: str) -> str:
    if total == 0:
        return t(language, "files_folder_empty")
    return t(language, "files_listing_more", count=shown, total=total) if total > shown else ""


def search_note(query: str, *, count: int, more: bool, skipped: Iterable[str], language: str) -> str:
    notes = []
    if count == 0:
        notes.append(t(language, "files_no_match", query=query))
    if more:
        notes.append(t(language, "files_search_more", count=count))
    if skipped := list(skipped):
        notes.append(t(language, "files_search_skipped", folders=", ".join(skipped[:10])))
    return " ".join(notes)


def change_rows(rows: Sequence[CheckpointRow], language: str) -> list[tuple[str, str]]:
    """The chat's changes newest first, as (label, call id): one entry per call, its files named."""
    calls: dict[str, list[CheckpointRow]] = {}
    for row in reversed(rows):
        calls.setdefault(row.call_id, []).append(row)
    labels = []
    for call_id, changed in calls.items():
        paths = ", ".join(row.path for row in reversed(changed))  # in the order the call wrote them
        done = all(row.undone for row in changed)
        labels.append((f"{paths} · {t(language, 'files_change_undone')}" if done else paths, call_id))
    return labels


def message_rows(
    messages: Sequence[Mapping[str, object]], rows: Sequence[CheckpointRow], *, app_note: str
) -> list[tuple[str, int]]:
    """The person's messages that some change answered (or that came before one), newest first: (their start, index)."""
    first_change = min((row.message for row in rows if not row.undone), default=None)
    if first_change is None:
        return []
    picked = []
    for index, message in enumerate(messages):
        content = str(message.get("content") or "")
        if message.get("role") == "user" and not content.startswith(app_note) and index >= first_change:
            text = " ".join(content.split())
            picked.append((text[:60] + ("…" if len(text) > 60 else ""), index))
    return picked[::-1]


def newest_change(rows: Sequence[CheckpointRow]) -> str | None:
    """The call of the newest change not undone yet: what "Undo this change" undoes until another is picked."""
    return next((row.call_id for row in reversed(rows) if not row.undone), None)


def newest_round(listed: Sequence[tuple[str, int]], rows: Sequence[CheckpointRow]) -> int | None:
    """Of `message_rows`' messages (newest first), the newest one that the newest change not undone yet answered
    or came after: undoing everything since it undoes the agent's last round of changes and no more."""
    latest = max((row.message for row in rows if not row.undone), default=None)
    if latest is None:
        return None
    return next((index for _, index in listed if index <= latest), None)


def open_calls(rows: Sequence[CheckpointRow]) -> list[str]:
    """The calls with a change not undone yet: those "Undo this change" can still undo."""
    return list(dict.fromkeys(row.call_id for row in rows if not row.undone))


def undone_calls(rows: Sequence[CheckpointRow]) -> frozenset[str]:
    """The calls whose every change was undone: nothing of theirs is left to undo."""
    return frozenset(row.call_id for row in rows) - set(open_calls(rows))


def kept(picked: object, offered: Sequence[T], default: T | None) -> T | None:
    """The person's pick while the list still offers it, else the default: a refresh of a list never moves a pick,
    and never keeps one that means nothing now. (A sequence, not a set: a value sent to the API may be anything.)"""
    return next((value for value in offered if value == picked), default) if picked is not None else default


def nothing_picked(picker: str, rows: Sequence[CheckpointRow], language: str) -> str:
    """What an Undo button pressed with nothing picked in its list (`picker`: "change" or "message") says."""
    if not rows:
        return t(language, "files_no_changes")
    if all(row.undone for row in rows):
        return t(language, "files_all_undone")
    return t(language, f"files_pick_{picker}")


def undo_said(report: UndoReport, language: str) -> list[str]:
    """What an undo did, or could not do, sentence by sentence."""
    said = [t(language, "files_removed" if item.removed else "files_undone", name=item.path) for item in report.done]
    said += [t(language, f"files_cannot_{item.why}", name=item.path) for item in report.cannot]
    return said or [t(language, "files_nothing_undone")]


def changed_since_html(report: UndoReport, language: str) -> Html:
    """The question before an undo that would lose later changes: each file, its diff (what the agent left → now)."""
    parts: list[Html] = []
    for changed in report.changed:
        parts.append(tag("p", t(language, "files_changed_since", name=changed.path)))
        if changed.diff:
            parts.append(diff_html(LineDiff(list(changed.diff), changed.exact), language))
        if not changed.exact:
            parts.append(tag("p", t(language, "files_diff_inexact")))
    return block(join(parts), cls="mg undo-question")


def refusal_text(refused: FileRefused, language: str) -> str:
    """Why the panel could not do something, in `language`."""
    values = dict(refused.values)
    if refused.kind == "bad_name":
        return t(language, f"files_bad_name_{values.get('why')}", **values)
    if isinstance(values.get("limit"), int):
        values["limit"] = human_size(values["limit"])
    values.setdefault("path", "")
    return t(language, f"files_refused_{refused.kind}", **values)
