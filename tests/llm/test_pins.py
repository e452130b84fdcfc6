"""NAME@HOST: which "@" pins a model to a host, which a start refuses, and the untagged name Ollama lists."""

from hypothesis import given
from hypothesis import strategies as st

from meowgent.llm.pins import Pinned, pinned, split_pin, unknown_host, with_latest

HOSTS = ("127.0.0.1", "gpu-box", "a:1", "a:2")

host_name = st.from_regex(r"[a-z0-9][a-z0-9.-]{0,20}(:[0-9]{1,5})?", fullmatch=True)
model_name = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


def test_a_pin_names_one_of_the_hosts_as_they_are_shown_in_any_case():
    assert split_pin("qwen3@gpu-box", HOSTS) == Pinned("qwen3", "gpu-box")
    assert split_pin("qwen3:latest@GPU-Box", HOSTS) == Pinned("qwen3:latest", "gpu-box")
    assert split_pin("qwen3@a:2", HOSTS) == Pinned("qwen3", "a:2")
    assert split_pin("qwen3", HOSTS) == Pinned("qwen3")


def test_a_model_s_own_at_sign_stays_in_its_name():
    assert split_pin("claude-3-5-sonnet@20240620", HOSTS) == Pinned("claude-3-5-sonnet@20240620")
    assert split_pin("vertex/claude@20240620@gpu-box", HOSTS) == Pinned("vertex/claude@20240620", "gpu-box")
    assert split_pin("@gpu-box", HOSTS) == Pinned("@gpu-box")  # no model before it: not a pin
    assert unknown_host("claude-3-5-sonnet@20240620", HOSTS) is None
    assert unknown_host("qwen3@sha256:0a1b2c", HOSTS) is None


def test_a_pin_to_no_known_host_is_found_for_the_start_to_refuse():
    assert unknown_host("qwen3@gpu-bx", HOSTS) == "gpu-bx"
    assert unknown_host("qwen3@a", HOSTS) == "a"  # two hosts are called a: the port tells which
    assert unknown_host("qwen3@gpu-box", HOSTS) is None
    assert unknown_host("qwen3", HOSTS) is None


def test_the_untagged_name_keeps_its_pin():
    assert with_latest("qwen3") == "qwen3:latest"
    assert with_latest("qwen3@gpu-box") == "qwen3:latest@gpu-box"


@given(model_name, st.lists(host_name, min_size=1, max_size=4, unique=True), st.data())
def test_a_pinned_name_splits_back_into_its_model_and_host(model, hosts, data):
    host = data.draw(st.sampled_from(hosts))
    assert split_pin(pinned(model, host), hosts) == Pinned(model, host)
    assert unknown_host(pinned(model, host), hosts) is None


@given(st.text(st.characters(blacklist_characters="@", blacklist_categories=("Cs",)), max_size=40))
def test_a_name_without_an_at_sign_is_never_pinned(name):
    assert split_pin(name, HOSTS) == Pinned(name)
    assert unknown_host(name, HOSTS) is None
