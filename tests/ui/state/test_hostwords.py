"""The picker's "where it runs", the status line's hosts and the banner, over scripted OpenAI servers and the pool."""

import socket

from meowgent.llm.hosts import HostPool, HostStatus
from meowgent.llm.openai_client import OpenAIClient
from meowgent.llm.pins import Pinned
from meowgent.llm.types import ModelInfo
from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.state.hostwords import answered_by, hosts_line, local_host, picker_choices
from meowgent.ui.state.models import server_status
from tests.scripted_openai import ScriptedOpenAI
from tests.ui.state.test_models import QWEN

MODEL = "Qwen/Qwen3-8B"
KEY = "sk-page-never-7777"


def info(name, host):
    return ModelInfo(name, frozenset(), None, None, None, None, None, host=host)


def test_a_model_on_two_hosts_is_one_choice_labelled_with_both_then_one_per_host_that_pins_it():
    models = [info("qwen3", "127.0.0.1"), info("llama3", "gpu-box"), info("qwen3", "gpu-box")]
    local = frozenset({"127.0.0.1"})
    assert picker_choices(models, local=local, language=ENGLISH) == [
        ("qwen3 · this computer, gpu-box", "qwen3"),
        ("qwen3 · this computer", "qwen3@127.0.0.1"),
        ("qwen3 · gpu-box", "qwen3@gpu-box"),
        ("llama3 · gpu-box", "llama3"),
    ]
    assert picker_choices(models, local=local, language=CHINESE)[:2] == [
        ("qwen3 · 這台電腦、gpu-box", "qwen3"),
        ("qwen3 · 這台電腦", "qwen3@127.0.0.1"),
    ]


def test_the_status_line_says_which_host_answers():
    local = frozenset({"127.0.0.1"})
    assert answered_by(Pinned("qwen3", "gpu-box"), local=local, language=ENGLISH) == "`qwen3`, answered by gpu-box"
    assert answered_by(Pinned("qwen3", "127.0.0.1"), local=local, language=CHINESE) == "`qwen3`，回答來自：這台電腦"
    assert answered_by(Pinned("qwen3"), local=local, language=ENGLISH) == "`qwen3`"


def test_one_server_s_models_are_labelled_as_they_always_were():
    assert picker_choices([QWEN], language=ENGLISH) == [("qwen3:latest · 8.2B · tools · thinking", "qwen3:latest")]


def test_the_hosts_line_says_each_host_s_health():
    statuses = [
        HostStatus("127.0.0.1", "http://127.0.0.1:11434", "ollama", True, True, 2),
        HostStatus("gpu-box", "http://gpu-box:8000/v1", "openai", False, False, 0, "wrong_key"),
    ]
    assert hosts_line(statuses, ENGLISH) == (
        "Model servers: 🟢 this computer (2 answering) · 🔴 gpu-box: refused the API key"
    )
    assert hosts_line(statuses, CHINESE) == "模型伺服器：🟢 這台電腦（2 個回答進行中） · 🔴 gpu-box：拒絕了金鑰"


def test_an_openai_server_s_banner_names_its_host():
    with ScriptedOpenAI() as server:
        status = server_status(OpenAIClient(server.url), suggested=MODEL)
    assert status.banner == f"🟢 Connected to {server.url}"
    assert [model.name for model in status.models] == [MODEL]


def test_a_wrong_key_is_said_in_the_banner_without_the_key():
    with ScriptedOpenAI(api_key="sk-the-right-one") as server:
        client = OpenAIClient(server.url, api_key=KEY)
        english = server_status(client, suggested=MODEL).banner
        chinese = server_status(client, suggested=MODEL, language=CHINESE).banner
    assert (
        english
        == f"🔴 The server at {server.url} refused the API key (401). Check MEOWGENT_OPENAI_API_KEY or the key file."
    )
    assert "拒絕了金鑰" in chinese
    assert KEY not in english + chinese


def test_nothing_listening_says_how_to_start_a_server():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    banner = server_status(OpenAIClient(url), suggested=MODEL).banner
    assert banner.startswith(f"🔴 Can't reach the model server at {url}.")
    assert "`vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes`" in banner


def test_a_pool_counts_the_servers_that_answer():
    with ScriptedOpenAI() as first, ScriptedOpenAI(dialect="llamacpp") as second:
        pool = HostPool([(OpenAIClient(first.url), "openai"), (OpenAIClient(second.url), "openai")])
        second.stop()
        status = server_status(pool, suggested=MODEL)
    assert status.banner == "🟢 Connected to 1 of 2 model servers"
    assert [model.host for model in status.models] == [f"127.0.0.1:{first.port}"]
    assert [host.healthy for host in pool.statuses()] == [True, False]


def test_two_servers_on_this_computer_keep_their_names():
    statuses = [
        HostStatus("127.0.0.1:8000", "http://127.0.0.1:8000/v1", "openai", True, True, 0),
        HostStatus("127.0.0.1:8080", "http://127.0.0.1:8080/v1", "openai", True, True, 0),
    ]
    assert local_host(statuses) == frozenset()
    assert hosts_line(statuses, ENGLISH) == "Model servers: 🟢 127.0.0.1:8000 · 🟢 127.0.0.1:8080"
    assert local_host(statuses[:1]) == {"127.0.0.1:8000"}
