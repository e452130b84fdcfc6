"""The sidebar's rules editor: the person's rules as JSON, and saving them (only an owner reads or saves)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.policy.rulebook import RULES_EXAMPLE, Rulebook
from meowgent.policy.rules import RulesError
from meowgent.ui.i18n import chat_error_text, t
from meowgent.ui.panels.shared import Page


class RulesPanel:
    """The "Rules" accordion."""

    def __init__(self, page: Page, *, rulebook: Rulebook) -> None:
        self.page = page
        self.rulebook = rulebook
        localized = page.localized
        with localized(gr.Accordion, {"label": "rules"}, open=False):
            localized(gr.Markdown, {"value": "rules_help"})
            self.text = localized(
                gr.Code, {"label": "rules_label"}, value=RULES_EXAMPLE, language="json", elem_id="rules"
            )
            self.save = localized(gr.Button, {"value": "save_rules"}, size="sm", elem_id="save_rules")
            self.status = gr.Markdown(elem_id="rules_status")

    def wire(self, *, after: list[Any]) -> None:
        """`after`: the events after which an owner's rules are shown (the page's load)."""
        page, context, rulebook = self.page, self.page.context, self.rulebook

        def on_rules(key: str, request: gr.Request):
            return rulebook.text(context.owner_of(key, request)) if context.is_known(key, request) else gr.skip()

        def on_save_rules(key: str, text: str, request: gr.Request):
            language = context.language_of(request)
            try:
                count = rulebook.save(context.known_owner(key, request), text)
            except ChatError as exc:
                return chat_error_text(language, exc)
            except RulesError as exc:
                return t(language, "rules_not_saved", detail=exc)
            return t(language, "rules_saved", count=count)

        for event in after:
            event.then(on_rules, [page.owner_key], [self.text])
        self.save.click(on_save_rules, [page.owner_key, self.text], [self.status], concurrency_limit=None)
