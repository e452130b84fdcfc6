"""A call's Undo in the chat: the button on a write's or an edit's panel, and a command's "can't be undone".

The button carries its call's id; the Files panel's script (`ui/panels/files.py`, `UNDO_CLICKS`) sends it to the
server on a click, where the owner is checked as for every event.
"""

from __future__ import annotations

from meowgent.ui.html.safehtml import Html, escape, tag
from meowgent.ui.i18n import t


def undo_button(call_id: str, language: str) -> Html:
    """ "↩ Undo this change" for a call's panel in the chat: the page's script sends its call id (`UNDO_CLICKS`)."""
    return Html(
        f'<button type="button" class="undo" value="{escape(call_id)}">{escape(t(language, "files_undo"))}</button>'
    )


def undone_mark(language: str) -> Html:
    """What a write's row shows once its change was undone, in the button's place."""
    return tag("span", t(language, "files_undone_mark"), cls="undone")


def no_undo_note(language: str) -> Html:
    """What a command's panel says instead of an Undo button."""
    return tag("p", t(language, "files_commands_cannot"), cls="no-undo")
