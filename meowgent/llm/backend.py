"""The seam between Meowgent and a model server: what the agent and the page ask of one, whatever its wire format."""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from typing import Protocol

from meowgent.llm.types import ChatChunk, ChatRequest, Health, ModelInfo, ModelProfile, PullProgress


class ModelBackend(Protocol):
    """A model server (`OllamaClient` is one). Every failure leaves it as a `ModelError` (llm/errors.py) whose
    `message` is a sentence a person can act on; `health` never raises."""

    host: str
    """The server's address, as the banner names it."""

    def stream_chat(
        self, request: ChatRequest, *, cancel: threading.Event | None = None
    ) -> Generator[ChatChunk, None, None]:
        """Stream one reply; closing the generator closes the response, so the server stops generating."""
        ...

    def profile(self, model: str) -> ModelProfile:
        """How to ask this model for tools on this server."""
        ...

    def show(self, model: str) -> ModelInfo:
        """One model's capabilities and context length."""
        ...

    def list_models(self) -> list[ModelInfo]:
        """The installed models."""
        ...

    def health(self, model: str | None = None) -> Health:
        """Whether the server answers (and, given `model`, has it installed)."""
        ...

    def pull(self, model: str) -> Iterator[PullProgress]:
        """Download a model, with the server's progress."""
        ...
