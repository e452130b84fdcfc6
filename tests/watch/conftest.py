"""A real ChatService (with the scripted model server) and its real Store, for the watch tests."""

import pytest

from meowgent.persist.store import Store
from tests.chats.test_service import make_service


@pytest.fixture
def store(tmp_path_factory):
    """The service's store, where watch links keep their digests."""
    return Store(tmp_path_factory.mktemp("data") / "meowgent.db")


@pytest.fixture
def service(ollama_server, tmp_path, store):
    return make_service(ollama_server, tmp_path, store=store)
