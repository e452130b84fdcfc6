"""HostPool over two scripted OpenAI-compatible servers: labels, stickiness, least busy, a host dying mid-answer."""

from __future__ import annotations

import threading

import pytest

from meowgent.config import Settings
from meowgent.llm.client import OllamaClient
from meowgent.llm.errors import ModelError
from meowgent.llm.hosts import HostPool, backend_for, host_names, is_local
from meowgent.llm.openai_client import OpenAIClient
from meowgent.llm.types import ChatRequest, Holding
from tests.scripted_openai import Content, Cut, ScriptedOpenAI, Turn

MODEL = "Qwen/Qwen3-8B"


def ask(chat: str | None) -> ChatRequest:
    messages = ({"role": "user", "content": "hi"},)
    return ChatRequest(MODEL, "sys", messages, None, False, frozenset({"tools"}), 4096, Holding.SHOWN, chat=chat)


def text(pool, chat):
    return "".join(chunk.content for chunk in pool.stream_chat(ask(chat), cancel=threading.Event()))


@pytest.fixture
def two():
    with ScriptedOpenAI() as first, ScriptedOpenAI(dialect="llamacpp") as second:
        yield first, second, HostPool([(OpenAIClient(first.url), "openai"), (OpenAIClient(second.url), "openai")])


def test_models_are_listed_from_every_host_with_where_they_run(two):
    first, second, pool = two
    listed = pool.list_models()
    assert [(m.name, m.host) for m in listed] == [
        (MODEL, f"127.0.0.1:{first.port}"),
        (MODEL, f"127.0.0.1:{second.port}"),
    ]
    assert all(status.local and status.healthy for status in pool.statuses())


def test_a_chat_sticks_to_its_host_and_a_new_chat_goes_to_the_least_busy(two):
    first, second, pool = two
    first.script("one", "two")
    second.script("other")
    slow = pool.stream_chat(ask("a"), cancel=threading.Event())
    next(slow)  # chat a streams on the first host
    assert text(pool, "b") == "other"  # the first is busy: chat b goes to the second
    slow.close()
    assert text(pool, "a") == "two"  # chat a stays where its prompt cache is
    assert [len(first.chat_requests), len(second.chat_requests)] == [2, 1]


def test_a_host_that_dies_mid_answer_ends_it_plainly_and_the_next_answer_goes_elsewhere(two):
    first, second, pool = two
    first.script(Turn(Content("Hal"), Cut()))
    second.script("served by the other")
    with pytest.raises(ModelError) as caught:
        text(pool, "a")
    assert caught.value.kind == "broken"
    assert not pool.statuses()[0].healthy
    assert text(pool, "a") == "served by the other"


def test_one_host_is_used_as_it_is_and_several_make_a_pool(tmp_path):
    one = backend_for(Settings(workspace=tmp_path))
    assert isinstance(one, OllamaClient)
    several = backend_for(Settings(workspace=tmp_path, openai_urls=("http://gpu-box:8000/v1",)))
    assert isinstance(several, OpenAIClient)
    both = backend_for(
        Settings(workspace=tmp_path, ollama_hosts=("http://127.0.0.1:11434",), openai_urls=("http://gpu-box:8000/v1",))
    )
    assert isinstance(both, HostPool)
    assert [s.name for s in both.statuses()] == ["127.0.0.1", "gpu-box"]


def test_short_host_names():
    assert host_names(["http://gpu-box:8000/v1", "http://a:1", "http://a:2"]) == ["gpu-box", "a:1", "a:2"]
    assert is_local("http://localhost:8080/v1")
    assert not is_local("http://gpu-box:8000/v1")
