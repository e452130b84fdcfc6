"""The top bar of the main view: the menu button (opens the sidebar), the status line, presenter mode."""

from __future__ import annotations

import gradio as gr

from meowgent.ui.i18n import ENGLISH, t
from meowgent.ui.page import TOGGLE_SIDEBAR
from meowgent.ui.panels.shared import Page
from meowgent.ui.state.presenter import TOGGLE_PRESENTER


class TopBar:
    """One row above the chat; the status line is the model panel's to fill."""

    def __init__(self, page: Page) -> None:
        with gr.Row(elem_id="topbar"):
            self.menu = page.localized(gr.Button, {"value": "menu"}, size="sm", scale=0, min_width=0, elem_id="menu")
            self.status = gr.Markdown(t(ENGLISH, "status_checking"), elem_id="status")
            self.presenter = page.localized(
                gr.Button, {"value": "presenter"}, size="sm", scale=0, min_width=0, elem_id="presenter"
            )

    def wire(self) -> None:
        self.menu.click(None, js=TOGGLE_SIDEBAR)
        self.presenter.click(None, js=TOGGLE_PRESENTER)
