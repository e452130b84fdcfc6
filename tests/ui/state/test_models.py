"""Model facts and download progress in plain words; the banner against a real (scripted) server."""

import dataclasses

import pytest

from meowgent.llm.client import OllamaClient
from meowgent.llm.types import ModelInfo, PullProgress
from meowgent.ui.i18n import CHINESE
from meowgent.ui.state.models import context_meter, describe_pull, model_facts, model_label, pick_model, server_status

QWEN = ModelInfo(
    name="qwen3:latest",
    capabilities=frozenset({"completion", "tools", "thinking"}),
    context_length=40960,
    parameter_size="8.2B",
    quantization="Q4_K_M",
    size_bytes=5_225_387_923,
    family="qwen3",
)
PLAIN = ModelInfo("llama-plain:latest", frozenset({"completion"}), 8192, "8.0B", "Q4_0", None, "llama")


def test_labels_mark_tools_and_thinking():
    assert model_label(QWEN) == "qwen3:latest · 8.2B · tools · thinking"
    assert model_label(PLAIN) == "llama-plain:latest · 8.0B"


def test_facts_say_size_abilities_and_the_context_in_use():
    facts = model_facts(QWEN, num_ctx_cap=16384)
    assert "8.2B parameters, Q4_K_M, 5.2 GB" in facts
    assert "Can use tools and think first." in facts
    assert "16,384 tokens in use (the model allows 40,960)" in facts


def test_a_model_without_tools_still_works_and_the_page_says_how():
    facts = model_facts(PLAIN, num_ctx_cap=16384)
    assert "No built-in tool support" in facts
    assert "8,192 tokens in use" in facts


def test_a_servers_own_window_is_said_as_it_is_and_an_unknown_one_as_a_default():
    served = ModelInfo("m", frozenset({"completion"}), 4096, None, None, None, None, window_from="server")
    assert "Context window: 4,096 tokens, as the server runs the model." in model_facts(served, num_ctx_cap=16384)
    big = dataclasses.replace(served, context_length=131072)
    assert "131,072 tokens, as the server runs" in model_facts(big, num_ctx_cap=16384)  # --num-ctx can't change it
    unknown = dataclasses.replace(served, context_length=None, window_from="default")
    assert "16,384 tokens assumed: the server doesn't say its own" in model_facts(unknown, num_ctx_cap=16384)
    assert "上下文長度：假設為 16,384 個 token" in model_facts(unknown, num_ctx_cap=16384, language=CHINESE)


@pytest.mark.parametrize(
    ("wanted", "installed", "picked"),
    [
        ("qwen3", ["llama3.2:latest", "qwen3:latest"], "qwen3:latest"),
        ("qwen3:latest", ["qwen3:latest"], "qwen3:latest"),
        ("mistral", ["llama3.2:latest"], "llama3.2:latest"),
        ("mistral", [], "mistral"),
    ],
)
def test_pick_model(wanted, installed, picked):
    assert pick_model(wanted, installed) == picked


def test_pull_progress_reads_as_sentences():
    fraction, text = describe_pull(PullProgress("pulling 1a2b", "sha256:1a2b3c4d5e6f7a8b", 2_000_000, 500_000))
    assert fraction == 0.25
    assert text == "Downloading part 1a2b3c4d5e6f: 0.5 MB of 2.0 MB (25%)"
    assert describe_pull(PullProgress("verifying sha256 digest")) == (None, "Checking the download…")
    assert describe_pull(PullProgress("writing manifest")) == (None, "Finishing…")


def test_the_banner_says_how_to_start_ollama_when_it_is_down(ollama_server):
    client = OllamaClient(ollama_server.url)
    assert server_status(client, suggested="qwen3").banner.startswith("🟢 Connected to Ollama")
    ollama_server.stop()
    down = server_status(client, suggested="qwen3")
    assert "ollama serve" in down.banner
    assert down.models == ()


def test_an_empty_server_says_how_to_get_a_model(ollama_server):
    ollama_server.models.clear()
    status = server_status(OllamaClient(ollama_server.url), suggested="qwen3")
    assert "has no models yet" in status.banner
    assert "ollama pull qwen3" in status.banner


def test_the_context_meter_reads_plainly():
    assert context_meter(None, 16384) == ""
    assert context_meter(3412, 16384) == "Context: ▰▰▱▱▱▱▱▱▱▱ 3,412 of 16,384 tokens (21%)"
