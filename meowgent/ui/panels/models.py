"""The sidebar's model section: the model picker and its facts, the context meter, "think", and getting a model;
and the status line's words about the model server, refreshed every few seconds."""

from __future__ import annotations

from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.llm.errors import ModelError
from meowgent.llm.hosts import HostPool
from meowgent.llm.pins import with_latest
from meowgent.tools.sandbox import NoSandbox
from meowgent.ui.i18n import chat_error_text, error_text, t
from meowgent.ui.panels.shared import Page
from meowgent.ui.state.hostwords import answered_by, hosts_line, local_host, picker_choices
from meowgent.ui.state.models import can_download, describe_pull, model_facts, pick_model, server_status

STATUS_SECONDS = 5.0


class ModelPanel:
    """The model picker and what goes with it."""

    def __init__(self, page: Page) -> None:
        self.page = page
        settings, localized = page.settings, page.localized
        self.model = localized(
            gr.Dropdown,
            {"label": "model"},
            choices=[settings.model],
            value=settings.model,
            allow_custom_value=True,
            elem_id="model",
        )
        self.facts = gr.Markdown(elem_id="model_facts")
        self.meter = gr.Markdown(elem_id="context_meter")
        self.think = localized(gr.Checkbox, {"label": "think"}, value=True, visible=False, elem_id="think")
        with localized(gr.Accordion, {"label": "get_model"}, open=False):
            self.pull_name = localized(
                gr.Textbox,
                {"label": "pull_name_label"},
                placeholder=settings.model,
                show_label=False,
                elem_id="pull_name",
            )
            self.pull = localized(gr.Button, {"value": "download"}, size="sm", elem_id="pull")
            self.pull_status = gr.Markdown(elem_id="pull_status")
        self.timer = gr.Timer(STATUS_SECONDS)

    def status(self, key: str, chat: str, picked: str, request: gr.Request) -> dict[Any, Any]:
        """The status line and the model picker's choices, for an owner; nothing ({}) for anyone else. With several
        servers, the line names the host the chat's next reply goes to."""
        page, settings = self.page, self.page.settings
        if not page.context.is_known(key, request):
            return {}
        language = page.context.language_of(request)
        server = server_status(page.client, suggested=settings.model, language=language)
        wanted = picked or settings.model
        pool = page.client if isinstance(page.client, HostPool) else None
        hosts = pool.statuses() if pool else []
        local = local_host(hosts)
        choices = picker_choices(server.models, local=local, language=language) or [(wanted, wanted)]
        installed = [name for _, name in choices] if server.models else []
        value = pick_model(wanted, installed)
        banner = server.banner
        if hosts:  # several servers: each one's health, as the pool last saw it
            banner += "  \n" + hosts_line(hosts, language)
        if isinstance(page.sandbox, NoSandbox):  # said on every page, in the status line, in the page's language
            banner += "  \n" + t(language, _sandbox_words(page.sandbox))
        if installed and value != wanted and with_latest(wanted) not in installed and can_download(page.client):
            banner += "  \n" + t(language, "banner_missing", model=wanted)
        elif installed and pool:  # the status line is in the main view, the model picker behind the menu
            banner += " · " + answered_by(pool.answering(value, chat or None), local=local, language=language)
        elif installed:
            banner += f" · `{value}`"
        return {self.status_line: banner, self.model: gr.update(choices=choices, value=value)}

    def facts_of(self, key: str, chat: str, picked: str, request: gr.Request) -> dict[Any, Any]:
        """The chat's model set to `picked`, and what the model is; the words of a refusal instead; {} for none."""
        if not picked:
            return {}
        page = self.page
        language = page.context.language_of(request)
        try:
            page.service.set_model(page.context.owner_of(key, request), chat, picked)
            info = page.client.show(picked)
        except ChatError as exc:
            return {self.facts: chat_error_text(language, exc), self.think: gr.update(visible=False)}
        except ModelError as exc:
            return {self.facts: error_text(language, exc), self.think: gr.update(visible=False)}
        facts = model_facts(info, num_ctx_cap=page.settings.num_ctx, language=language)
        return {self.facts: facts, self.think: gr.update(visible="thinking" in info.capabilities)}

    def wire(self, *, status_line: Any, after: list[Any]) -> None:
        """`status_line`: the top bar's; `after`: events after which the status is read again (the page's load)."""
        page, context, service = self.page, self.page.context, self.page.service
        self.status_line = status_line

        def on_tick(key: str, chat: str, picked: str, request: gr.Request):
            return self.status(key, chat, picked, request) or gr.skip()

        def on_model(key: str, chat: str, picked: str, request: gr.Request):
            return self.facts_of(key, chat, picked, request) or gr.skip()

        @context.chat_action
        def on_think(key: str, chat: str, enabled: bool, request: gr.Request) -> None:
            service.set_thinking(context.owner_of(key, request), chat, enabled)

        def on_pull(key: str, name: str, request: gr.Request, progress=gr.Progress()):
            language = context.language_of(request)
            name = name.strip() or page.settings.model
            try:
                context.known_owner(key, request)
            except ChatError as exc:
                yield f"⚠️ {chat_error_text(language, exc)}"
                return
            try:
                for step in page.client.pull(name):
                    fraction, sentence = describe_pull(step, language)
                    progress(fraction, desc=sentence)
                    yield sentence
            except ModelError as exc:
                yield f"⚠️ {error_text(language, exc)}"
                return
            yield t(language, "pull_ready", model=name)

        ticked = [status_line, self.model]
        ticking = [page.owner_key, page.chat_id, self.model]
        for event in after:
            event.then(on_tick, ticking, ticked)
        self.timer.tick(on_tick, ticking, ticked, show_progress="hidden", concurrency_limit=None)
        chat_model = [page.owner_key, page.chat_id, self.model]
        self.model.change(on_model, chat_model, [self.facts, self.think], concurrency_limit=None)
        self.think.change(on_think, [page.owner_key, page.chat_id, self.think], None, concurrency_limit=None)
        pull_event = gr.on(
            [self.pull.click, self.pull_name.submit],
            on_pull,
            [page.owner_key, self.pull_name],
            [self.pull_status],
            concurrency_limit=None,
        )
        pull_event.then(on_tick, ticking, ticked)


def _sandbox_words(missing: NoSandbox) -> str:
    """The key of the status line's sentence about no sandbox: turned off, refused as root, or none found."""
    if missing.chosen:
        return "sandbox_off"
    return "sandbox_refused" if missing.refused else "sandbox_missing"
