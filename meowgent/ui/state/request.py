"""Who is asking, in which language: `PageContext`, and `chat_action`, which turns a refused action into a warning.

Every event of the page is also an API endpoint anyone who reaches the server can call, so every handler that
changes or reads a chat names its owner from the request (`owner_of`), never from the page's state alone.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import gradio as gr

from meowgent.chats.errors import ChatError
from meowgent.chats.service import ChatService
from meowgent.ui.i18n import ENGLISH, chat_error_text


def owner_of(key: str, request: gr.Request) -> str:
    """The owner of a request: with a login, the account; otherwise the random key kept in this browser."""
    return f"user:{request.username}" if request.username else f"browser:{key}"


class PageContext:
    """The owner and the language of a request: the language is kept per Gradio session (a browser tab).

    A dict, not a gr.State: a State's value comes with an event only as one of its inputs, and every handler
    needs the language, for its warnings if nothing else.
    """

    def __init__(self, service: ChatService) -> None:
        self.service = service
        self._languages: dict[str, str] = {}

    owner_of = staticmethod(owner_of)

    def language_of(self, request: gr.Request) -> str:
        return self.picked(request) or ENGLISH

    def picked(self, request: gr.Request) -> str | None:
        """The language this tab has so far, if any: its switch may come before the page's load has finished."""
        return self._languages.get(request.session_hash or "")

    def set_language(self, request: gr.Request, language: str) -> None:
        self._languages[request.session_hash or ""] = language

    def forget(self, request: gr.Request) -> None:
        """The tab closed: its language is no longer needed."""
        self._languages.pop(request.session_hash or "", None)

    def known_owner(self, key: str, request: gr.Request) -> str:
        """The owner of a request that changes something lasting or reads what only owners see; ChatError for a
        caller with none."""
        owner = owner_of(key, request)
        self.service.require_owner(owner)
        return owner

    def is_known(self, key: str, request: gr.Request) -> bool:
        """Whether the caller owns chats here: what the page tells only them (models, folder, rules, servers)."""
        try:
            self.known_owner(key, request)
        except ChatError:
            return False
        return True

    def warn(self, exc: ChatError, request: gr.Request) -> None:
        gr.Warning(chat_error_text(self.language_of(request), exc))

    def chat_action(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        """`handler`, with a ChatError it raises shown as a warning in the page's language, and nothing changed.

        The handler takes the `gr.Request` as its parameter `request`; a generator stops where the error came.
        """
        position = list(inspect.signature(handler).parameters).index("request")

        def request_in(args: tuple[Any, ...], kwargs: dict[str, Any]) -> gr.Request:
            return kwargs["request"] if "request" in kwargs else args[position]

        if inspect.isgeneratorfunction(handler):

            @functools.wraps(handler)
            def stream(*args: Any, **kwargs: Any) -> Any:
                try:
                    return (yield from handler(*args, **kwargs))
                except ChatError as exc:
                    self.warn(exc, request_in(args, kwargs))

            return stream

        @functools.wraps(handler)
        def act(*args: Any, **kwargs: Any) -> Any:
            try:
                return handler(*args, **kwargs)
            except ChatError as exc:
                self.warn(exc, request_in(args, kwargs))
                return gr.skip()

        return act
