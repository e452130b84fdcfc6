"""What the English page says for the core's notes, for tests that check the sentence a person reads."""

from meowgent.events import ErrorEvent, Notice
from meowgent.ui.i18n import ENGLISH, error_text, notice_text


def said(event: ErrorEvent | Notice) -> str:
    """The English page's sentence for an error or a notice."""
    return (error_text if isinstance(event, ErrorEvent) else notice_text)(ENGLISH, event)
