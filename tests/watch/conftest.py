"""A real ChatService (with the scripted model server) for the watch tests."""

import pytest

from tests.chats.test_service import make_service


@pytest.fixture
def service(ollama_server, tmp_path):
    return make_service(ollama_server, tmp_path)
