"""Every kind and case an OpenAI-compatible server's funnel makes, and every host state, worded in both languages."""

import httpx
import pytest

from meowgent.events import ErrorEvent
from meowgent.llm.errors import ModelError, busy, missing_model, openai_error, openai_failure, stalled_at
from meowgent.llm.hosts import HOST_FAILURES, HostStatus
from meowgent.llm.openai_client import OpenAIClient
from meowgent.ui.i18n import CHINESE, ENGLISH, error_text
from meowgent.ui.state.hostwords import host_state
from tests.ui.test_i18n import CJK

HOST = "http://gpu-box:8000/v1"
KEY = "sk-never-shown-4242"


def _no_download():
    try:
        OpenAIClient(HOST).pull("qwen3")
    except ModelError as exc:
        return exc
    raise AssertionError("an OpenAI server downloaded a model")


def _no_tool_parser():
    return OpenAIClient(HOST)._no_tool_parser("qwen3")


def funnel_errors():
    """The funnel's every ModelError for an OpenAI-compatible server (statuses, connection failures, the pool's)."""
    statuses = [
        openai_error(status, f"rejected key {KEY}", host=HOST, model="qwen3", secret=KEY)
        for status in (401, 403, 404, 429, 503, -1, 500, 400)
    ]
    failures = [
        openai_failure(exc, host=HOST, read_timeout=30, streaming=streaming)
        for exc in (
            httpx.ConnectError("refused"),
            httpx.ReadTimeout(""),
            httpx.RemoteProtocolError("eof"),
            ValueError(),
        )
        for streaming in (True, False)
    ]
    return [
        *statuses,
        *failures,
        missing_model("qwen3", host=HOST),
        missing_model("qwen3", hosts=3),
        busy(HOST, status=503, tries=3),
        stalled_at(HOST, 30),
        _no_download(),
        _no_tool_parser(),
    ]


ERRORS = funnel_errors()


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: f"{e.kind}-{e.values.get('case', '')}")
def test_every_openai_error_is_its_own_sentence_in_english_and_chinese_without_ollama_or_the_key(error):
    english, chinese = error_text(ENGLISH, error), error_text(CHINESE, error)
    assert english == error.message  # the catalog says what the funnel's English sentence says
    assert CJK.search(chinese)
    for text in (english, chinese):
        assert "Ollama" not in text
        assert KEY not in text
    event = ErrorEvent(error.kind, error.values)  # as the chat stores it
    assert error_text(CHINESE, event) == chinese


def test_the_funnel_makes_every_new_kind():
    assert {e.kind for e in ERRORS} >= {"wrong_key", "busy", "no_download", "not_openai", "no_tool_parser"}
    named = {(e.kind, e.values.get("case")) for e in ERRORS if "host" in e.values}
    assert {("unreachable", "openai"), ("broken", "openai"), ("stalled", "openai")} <= named


@pytest.mark.parametrize("kind", [None, *sorted(HOST_FAILURES), "wrong_key", "not_openai", "not_ollama", "newer"])
@pytest.mark.parametrize("language", [ENGLISH, CHINESE])
def test_every_host_state_is_worded(kind, language):
    status = HostStatus("gpu-box", HOST, "openai", False, kind is None, 0, kind)
    said = host_state(status, language)
    assert "gpu-box" in said
    assert bool(CJK.search(said)) == (language == CHINESE and kind is not None)
