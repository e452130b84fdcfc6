"""What each kind of OpenAI-compatible server says of its models' windows and tools, read from its own answers."""

from meowgent.llm.serverfacts import ServerFacts, listed_windows, lmstudio_windows, ollama_windows, props_facts


def test_the_listing_gives_vllms_max_model_len_and_newer_llama_cpps_meta_n_ctx():
    entries = [
        {"id": "vllm-model", "max_model_len": 131072},
        {"id": "llama-model", "meta": {"n_ctx": 4096, "n_ctx_train": 32768}},
        {"id": "old-llama", "meta": {"n_ctx_train": 32768}},  # the trained window is not the one in use
        {"id": "plain"},
        {"id": "odd", "max_model_len": True, "meta": "x"},
    ]
    assert listed_windows(entries) == {"vllm-model": 131072, "llama-model": 4096}


def test_llama_cpp_props_in_old_and_new_shapes():
    new = {"default_generation_settings": {"n_ctx": 4096}, "chat_template_caps": {"supports_tools": False}}
    assert props_facts(new, ["a", "b"]) == ServerFacts({"a": 4096, "b": 4096}, tools=False)
    assert props_facts({"n_ctx": 2048}, ["a"]) == ServerFacts({"a": 2048}, tools=None)
    assert props_facts({"chat_template_caps": {"supports_tools": "yes"}}, ["a"]) == ServerFacts()
    assert props_facts("Not Found", ["a"]) == props_facts(None, ["a"]) == ServerFacts()


def test_lm_studio_prefers_the_loaded_window():
    body = {
        "data": [
            {"id": "loaded", "state": "loaded", "loaded_context_length": 8192, "max_context_length": 32768},
            {"id": "on-disk", "state": "not-loaded", "max_context_length": 32768},
            {"id": "embedding"},
        ]
    }
    assert lmstudio_windows(body) == {"loaded": 8192, "on-disk": 32768}
    assert lmstudio_windows({"data": "x"}) == lmstudio_windows([]) == {}


def test_ollama_ps_gives_loaded_models_by_name_and_model():
    body = {"models": [{"name": "qwen3:latest", "model": "qwen3:latest", "context_length": 4096}, {"name": "x"}]}
    assert ollama_windows(body) == {"qwen3:latest": 4096}
    assert ollama_windows({"models": None}) == {}
