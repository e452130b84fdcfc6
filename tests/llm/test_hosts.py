"""HostPool over two scripted OpenAI-compatible servers: labels, stickiness, least busy, a host dying mid-answer; and
over a scripted Ollama and a scripted OpenAI server that serve the same model: a model pinned to one of them."""

from __future__ import annotations

import threading

import pytest

from meowgent.config import Settings
from meowgent.llm.client import OllamaClient
from meowgent.llm.errors import ModelError
from meowgent.llm.hosts import HostPool, UnknownHost, backend_for, host_names, is_local
from meowgent.llm.openai_client import OpenAIClient
from meowgent.llm.pins import Pinned, pinned
from meowgent.llm.types import ChatRequest, Holding
from tests.scripted_ollama import ScriptedOllama
from tests.scripted_openai import Content, Cut, ScriptedOpenAI, Turn

MODEL = "Qwen/Qwen3-8B"
QWEN = "qwen3:latest"
"""What a scripted Ollama lists, and what the OpenAI server beside it (Ollama's own /v1, say) serves too."""


def ask(chat: str | None, model: str = MODEL) -> ChatRequest:
    messages = ({"role": "user", "content": "hi"},)
    return ChatRequest(model, "sys", messages, None, False, frozenset({"tools"}), 4096, Holding.SHOWN, chat=chat)


def text(pool, chat, model: str = MODEL):
    return "".join(chunk.content for chunk in pool.stream_chat(ask(chat, model), cancel=threading.Event()))


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


@pytest.fixture
def same_model():
    """A scripted Ollama and a scripted OpenAI server, both serving `QWEN`, pooled, and their names in the pool."""
    with ScriptedOllama() as ollama, ScriptedOpenAI(models={QWEN: 40960}) as openai:
        pool = HostPool([(OllamaClient(ollama.url), "ollama"), (OpenAIClient(openai.url), "openai")])
        yield ollama, openai, pool, [status.name for status in pool.statuses()]


def test_a_pinned_model_is_answered_by_its_host_which_hears_the_model_s_own_name(same_model):
    ollama, openai, pool, (first, second) = same_model
    assert [first, second] == [f"127.0.0.1:{ollama.port}", f"127.0.0.1:{openai.port}"]
    ollama.script("From Ollama.")
    openai.script("From the OpenAI server.", "Still there.")
    assert text(pool, "a", QWEN) == "From Ollama."  # unpinned: the first of equals
    assert text(pool, "a", pinned(QWEN, second)) == "From the OpenAI server."  # the pin beats the chat's host
    assert text(pool, "a", QWEN) == "Still there."  # and the chat stays where its pinned reply ran
    assert [request["model"] for request in openai.chat_requests] == [QWEN, QWEN]
    assert [request["model"] for request in ollama.chat_requests] == [QWEN]


def test_the_host_that_will_answer_is_known_without_asking_it(same_model):
    ollama, openai, pool, (first, second) = same_model
    assert pool.answering(QWEN, "a") == Pinned(QWEN, first)
    assert pool.answering(pinned(QWEN, second), "a") == Pinned(QWEN, second)
    assert pool.answering(QWEN, "a") == Pinned(QWEN, first)  # asking routed nothing: the chat is on no host yet
    assert pool.answering("no-such-model", "a") == Pinned("no-such-model")
    assert ollama.chat_requests == openai.chat_requests == []


def test_facts_and_downloads_of_a_pinned_model_go_to_its_host(same_model):
    ollama, _openai, pool, (first, second) = same_model
    assert pool.show(pinned(QWEN, second)).host == second
    assert pool.show(pinned(QWEN, first)).host == first
    with pytest.raises(ModelError) as caught:
        list(pool.pull(pinned("qwen3:0.6b", second)))  # an OpenAI-compatible server can't download
    assert caught.value.kind == "no_download"
    assert list(pool.pull(pinned("qwen3:0.6b", first)))[-1].status == "success"
    assert "qwen3:0.6b" in ollama.models


def test_a_pin_to_a_host_no_server_is_stops_the_start_with_the_servers_names(tmp_path):
    urls = ("http://gpu-box:8000/v1", "http://gpu-2:8000/v1")
    with pytest.raises(UnknownHost) as caught:
        backend_for(Settings(workspace=tmp_path, openai_urls=urls, model="qwen3@gpu-3"))
    assert str(caught.value) == (
        "The model qwen3@gpu-3 is pinned to gpu-3, but no model server is called that. The servers are: gpu-box, "
        "gpu-2. Write the model as NAME@SERVER with one of them (--model, MEOWGENT_MODEL)."
    )
    assert isinstance(backend_for(Settings(workspace=tmp_path, openai_urls=urls, model="qwen3@GPU-2")), HostPool)


def test_a_pin_to_the_one_server_pools_it_and_a_version_after_at_is_no_pin(tmp_path):
    url = ("http://gpu-box:8000/v1",)
    pinned_there = backend_for(Settings(workspace=tmp_path, openai_urls=url, model="qwen3@gpu-box"))
    assert isinstance(pinned_there, HostPool)
    assert pinned_there.pin("qwen3@gpu-box") == Pinned("qwen3", "gpu-box")
    versioned = backend_for(Settings(workspace=tmp_path, openai_urls=url, model="claude-3-5-sonnet@20240620"))
    assert isinstance(versioned, OpenAIClient)
