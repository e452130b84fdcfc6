"""Token estimates, calibration and fitting a transcript into the model's context."""

import copy
import json
import re
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.context import (
    APP_NOTE,
    MAX_FACTOR,
    MESSAGE_OVERHEAD,
    MIN_FACTOR,
    AnswerTooLong,
    ContextTooSmall,
    FitResult,
    TokenEstimator,
    budget_for,
    estimate_messages,
    estimate_tokens,
    fit_messages,
    trim_notice,
)
from meowgent.events import Notice
from meowgent.llm.client import OllamaClient, wire_messages
from meowgent.llm.types import ChatRequest, Holding, ModelInfo
from meowgent.ui.i18n import ENGLISH, error_text, notice_text
from tests.scripted_ollama import Text, Turn, reply

NOTE = "characters cut to fit the model's context; call the tool again to see them]"
NO_TOOLS = ModelInfo("plain", frozenset({"completion"}), 8192, None, None, None, None)


def system(chars=2000):
    return {"role": "system", "content": "You are Meowgent. Tools: read_file, write_file.\n" + "s" * chars}


def user(text):
    return {"role": "user", "content": text}


def call(*paths, content=""):
    calls = [{"function": {"name": "read_file", "arguments": {"path": p}}} for p in paths]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def result(text):
    return {"role": "tool", "content": text, "tool_name": "read_file"}


def listing(lines, tag="line"):
    return "".join(f"{tag} {i:05d}: some text that a file could hold\n" for i in range(lines))


def fit(messages, budget, factor=1.0):
    return fit_messages(messages, budget=budget, estimator=TokenEstimator(factor))


# ---- estimate_tokens ----


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("a" * 40, 10),  # 4 letters a token
        ("1234567890", 20),  # a digit is a token and splits its neighbours
        ("{}[]():,", 4),  # half a token per punctuation mark
        (" " * 20 + "\n" * 20, 6),  # runs of whitespace merge
        ("貓" * 10, 13),  # 1.3 tokens per Han character
        ("ひらがなカタカナ한국어", 15),  # Hiragana, Katakana, Hangul: 11 × 1.3
        ("ＡＢＣ。、", 7),  # fullwidth forms and CJK punctuation
        ("🐱🐶", 4),  # outside the BMP
        ("Привет", 6),  # other non-ASCII
        ("貓咪 cat 42", 8),  # 2.6 + 0.3 + 0.75 + 4, rounded up
    ],
)
def test_estimate_tokens_by_kind_of_character(text, tokens):
    assert estimate_tokens(text) == tokens


def test_estimate_messages_counts_content_calls_and_the_template():
    calls = call("notes.md")
    assert estimate_messages([user("a" * 40)]) == MESSAGE_OVERHEAD + 10
    assert estimate_messages([calls]) == MESSAGE_OVERHEAD + estimate_tokens(json.dumps(calls["tool_calls"]))
    # A tool result also pays for the tags its template wraps around it.
    assert estimate_messages([result("x")]) > MESSAGE_OVERHEAD + 1


def test_thinking_counts_only_after_the_latest_user_message():
    thought = {"role": "assistant", "content": "", "thinking": "t" * 400}
    old = estimate_messages([system(), user("a"), thought, user("b")])
    current = estimate_messages([system(), user("a"), user("b"), thought])
    assert current - old == 100


# ---- TokenEstimator ----


def test_calibration_rises_at_once_and_falls_slowly():
    estimator = TokenEstimator()
    estimator.calibrate(1000, 2000)
    assert estimator.factor == pytest.approx(1.5)
    estimator.calibrate(1000, 1000)
    assert estimator.factor == pytest.approx(1.45)
    assert estimator.estimate([user("a" * 400)]) == 151  # (4 + 100) × 1.45, rounded up


def test_calibration_ignores_cache_hits_and_tiny_prompts_and_stays_in_range():
    estimator = TokenEstimator()
    estimator.calibrate(1000, 300)  # Ollama counted only what its KV cache did not hold
    estimator.calibrate(100, 400)  # mostly template tokens we cannot see
    estimator.calibrate(1000, 0)
    assert estimator.factor == 1.0
    for _ in range(50):
        estimator.calibrate(1000, 10_000)  # a count of something the estimate left out: believed never
    assert estimator.factor == 1.0
    for _ in range(50):
        estimator.calibrate(1000, 1999)
    assert 1.99 < estimator.factor <= MAX_FACTOR
    assert TokenEstimator(0.1).factor == MIN_FACTOR
    assert TokenEstimator(10).factor == MAX_FACTOR


@given(st.lists(st.tuples(st.integers(0, 100_000), st.integers(-10, 1_000_000)), max_size=40))
def test_no_run_of_counts_takes_the_factor_out_of_its_range_or_halves_a_budget_at_once(samples):
    estimator = TokenEstimator()
    for estimated, actual in samples:
        before = estimator.factor
        estimator.calibrate(estimated, actual)
        assert MIN_FACTOR <= estimator.factor <= MAX_FACTOR
        assert estimator.factor <= before + (MAX_FACTOR - before) / 2  # one count moves it half the way at most


def test_calibration_is_safe_from_many_threads():
    estimator = TokenEstimator()

    def work(actual):
        for _ in range(2000):
            estimator.calibrate(1000, actual)
            estimator.estimate([user("hello")])

    threads = [threading.Thread(target=work, args=(actual,)) for actual in (600, 900, 1500, 2500)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 0.6 <= estimator.factor <= 2.5


def test_calibration_against_the_scripted_servers_counts(ollama_server):
    """The scripted server counts ceil(characters / 4) of the contents, less than we estimate for numbered lines;
    calibration brings the estimate closer without going below. A KV-cache hit (a small count) changes nothing."""
    messages = [system(), user("What do these lines say?\n" + listing(60))]
    raw = estimate_messages(messages)
    ollama_server.script(reply("ok"), reply("ok"), reply("ok"), Turn(Text("ok"), prompt_tokens=40))
    client, estimator = OllamaClient(ollama_server.url, read_timeout=10), TokenEstimator()
    prompt, *transcript = messages
    request = ChatRequest("qwen3", prompt["content"], tuple(transcript), None, False, frozenset(), 4096, Holding.NONE)
    counts = []
    for _ in range(4):
        final = [chunk for chunk in client.stream_chat(request) if chunk.done][-1]
        counts.append(final.prompt_tokens)
        estimator.calibrate(raw, final.prompt_tokens)
    actual = counts[0]
    assert counts == [actual] * 3 + [40]
    assert actual < raw
    assert actual <= estimator.estimate(messages) < raw
    assert estimator.factor == pytest.approx(1 - (1 - actual / raw) * (1 - 0.9**3))


# ---- budget and notes ----


@pytest.mark.parametrize(
    ("num_ctx", "budget"), [(40960, 30720), (16384, 12288), (4096, 3072), (2048, 1024), (1024, 512)]
)
def test_budget_leaves_a_quarter_and_at_least_1024_for_the_answer(num_ctx, budget):
    assert budget_for(num_ctx) == budget


@pytest.mark.parametrize(
    ("trimmed", "dropped", "num_ctx", "note"),
    [
        (0, 0, 16384, None),
        (2, 0, 16384, "Long tool output was shortened to fit the model's 16k-token context. The full history is kept."),
        (0, 1, 8192, "1 earlier message was left out to fit the model's 8k-token context. The full history is kept."),
        (
            3,
            4,
            16384,
            "Long tool output was shortened and 4 earlier messages were left out to fit the model's 16k-token "
            "context. The full history is kept.",
        ),
        (
            1,
            0,
            12000,
            "Long tool output was shortened to fit the model's 12,000-token context. The full history is kept.",
        ),
    ],
)
def test_trim_notice(trimmed, dropped, num_ctx, note):
    notice = trim_notice(FitResult([], trimmed, dropped, 0, 0), num_ctx)
    if note is None:
        assert notice is None
        return
    assert notice == Notice(
        "context_trimmed", {"results_shortened": trimmed > 0, "dropped": dropped, "context": num_ctx}
    )
    assert notice_text(ENGLISH, notice) == note  # the page's words for it


# ---- fit_messages ----


def test_nothing_changes_when_it_fits():
    messages = [system(), user("hi"), call("a"), result(listing(10)), user("and now?")]
    fitted = fit(messages, 100_000)
    assert fitted.messages == messages
    assert fitted.messages is not messages
    assert (fitted.trimmed_results, fitted.dropped_messages) == (0, 0)
    assert fitted.estimated_tokens == fitted.raw_tokens == estimate_messages(messages)
    assert trim_notice(fitted, 16384) is None


def test_one_token_over_is_enough_to_cut():
    messages = [system(), user("hi"), call("a"), result(listing(10)), user("and now?")]
    exact = estimate_messages(messages)
    assert fit(messages, exact).messages == messages
    fitted = fit(messages, exact - 1)
    assert fitted.dropped_messages == 3
    assert fitted.estimated_tokens <= exact - 1


def test_old_tool_results_are_shortened_oldest_first_to_head_and_tail():
    first, second = listing(400, "first"), listing(400, "second")
    messages = [system(), user("read both"), call("a"), result(first), call("b"), result(second), user("thanks")]
    budget = estimate_messages(messages) - 2000  # one result shortened is enough
    fitted = fit(messages, budget)
    assert fitted.trimmed_results == 1
    assert fitted.dropped_messages == 0
    shortened = fitted.messages[3]["content"]
    assert shortened.startswith("first 00000: ")
    assert shortened.endswith("first 00399: some text that a file could hold\n")
    head, cut, tail = re.fullmatch(rf"(.*)\n\[… ([\d,]+) {re.escape(NOTE)}\n(.*)", shortened, re.DOTALL).groups()
    assert len(head) + 1 + int(cut.replace(",", "")) + len(tail) == len(first)  # whole lines on both sides
    assert first.startswith(head + "\n")
    assert first.endswith(tail)
    assert fitted.messages[5] is messages[5]
    assert fitted.estimated_tokens <= budget


def test_old_turns_go_whole_and_the_current_turn_is_kept():
    messages = [
        system(),
        user("first question " * 100),
        call("a", content="looking " * 200),
        result("short"),
        {"role": "assistant", "content": "first answer " * 200},
        user("second question"),
        call("b"),
        result("also short"),
        {"role": "assistant", "content": "second answer"},
        user("third question"),
        call("c"),
        result("current result " * 300),
    ]
    fitted = fit(messages, estimate_messages(messages) - 500)
    assert fitted.messages == [messages[0], *messages[5:]]
    assert (fitted.trimmed_results, fitted.dropped_messages) == (0, 4)
    assert notice_text(ENGLISH, trim_notice(fitted, 4096)) == (
        "4 earlier messages were left out to fit the model's 4k-token context. The full history is kept."
    )


def test_results_after_the_latest_user_message_are_cut_only_when_nothing_older_is_left():
    big = listing(1000)
    messages = [system(), user("old"), call("a"), result(big), user("new"), call("b", "c"), result(big), result(big)]
    fitted = fit(messages, estimate_messages(messages[:1] + messages[4:6]) + 1500)
    assert fitted.messages[:3] == [messages[0], messages[4], messages[5]]
    assert fitted.dropped_messages == 3
    assert fitted.trimmed_results == 2  # both of the current call's results, the older first
    assert all(NOTE in m["content"] for m in fitted.messages[3:])


def test_the_current_answer_is_never_left_out_only_shortened():
    big = listing(300)
    messages = [system(), user("do it"), call("a", "b"), result(big), result(big), call("c"), result(big)]
    budget = estimate_messages(messages) // 8  # all three results must be shortened
    fitted = fit(messages, budget)
    assert [m["role"] for m in fitted.messages] == [m["role"] for m in messages]
    assert fitted.dropped_messages == 0
    assert [NOTE in m["content"] for m in fitted.messages[2:]] == [False, True, True, False, True]
    assert fitted.messages[2] is messages[2]
    assert fitted.estimated_tokens <= budget


def test_a_retry_note_from_meowgent_is_part_of_the_current_answer_not_a_new_turn():
    # Taken for the person's latest message, the note would make "do it" an old turn, left out whole.
    note = {"role": "user", "content": APP_NOTE + "Ollama could not read your last tool call (EOF), so it did not run."}
    messages = [
        system(),
        user("old " * 400),
        user("do it"),
        call("a", content=listing(200)),
        result(listing(300)),
        note,
    ]
    fitted = fit(messages, estimate_messages([messages[0], messages[2], note]) + 1200)
    assert [m["role"] for m in fitted.messages] == ["system", "user", "assistant", "tool", "user"]
    assert fitted.messages[1]["content"] == "do it"
    assert fitted.dropped_messages == 1


def test_the_models_own_long_output_in_the_current_answer_is_shortened_too():
    content = listing(2000, "written")
    native = {"role": "assistant", "content": "", "thinking": listing(500, "thought")}
    native["tool_calls"] = [{"function": {"name": "write_file", "arguments": {"path": "big.md", "content": content}}}]
    text = {"role": "assistant", "content": "<tool_call>" + json.dumps({"name": "write_file", "content": content})}
    messages = [system(), user("write it twice"), native, result("Created big.md"), text, result("Replaced big.md")]
    fitted = fit(messages, 4000)
    shortened_native, _, shortened_text, _ = fitted.messages[2:]
    arguments = shortened_native["tool_calls"][0]["function"]["arguments"]
    assert arguments["path"] == "big.md"
    assert arguments["content"].startswith("written 00000")
    assert arguments["content"].endswith("written 01999: some text that a file could hold\n")
    assert "characters of your own output cut to fit the model's context" in arguments["content"]
    assert "your own output" in shortened_native["thinking"]
    assert shortened_text["content"].startswith('<tool_call>{"name": "write_file"')
    assert fitted.messages[3] is messages[3]
    assert fitted.trimmed_results == 2  # the two messages of the model; its short results are kept as they were


def test_an_answer_too_long_even_shortened_stops_with_a_plain_error():
    messages = [system(), user("read everything")]
    for i in range(40):
        messages += [call(f"f{i}.md", content=f"Reading file {i}."), result(listing(200))]
    with pytest.raises(AnswerTooLong) as raised:
        fit(messages, 4000)
    assert raised.value.kind == "answer_too_long"
    assert raised.value.needed > 4000
    assert "Send a message to go on from here" in error_text(ENGLISH, raised.value)


def test_too_small_for_the_system_prompt_and_the_message_says_so():
    messages = [system(3500), user("a" * 350), call("a"), result("x")]
    needed = estimate_messages(messages[:2])
    with pytest.raises(ContextTooSmall) as raised:
        fit(messages, needed - 1)
    assert raised.value.needed == needed
    assert raised.value.values == {"needed": needed, "budget": needed - 1}
    assert error_text(ENGLISH, raised.value) == (
        f"Your message and the tool list need about {needed:,} tokens, but only {needed - 1:,} fit in the model's "
        "context with room left for the answer. Shorten the message or raise --num-ctx."
    )
    with pytest.raises(AnswerTooLong):  # the message fits, but then the answer's call and result do not
        fit(messages, needed)


def test_wrapped_results_of_a_model_without_tools_are_shortened_inside_their_tags():
    native = [system(), user("read"), call("a"), result(listing(500)), user("thanks")]
    wired = [native[0], *wire_messages(native[1:], NO_TOOLS.capabilities)]
    fitted = fit(wired, estimate_messages(wired) - 1000)
    shortened = fitted.messages[3]["content"]
    assert shortened.startswith('<tool_response name="read_file">\nline 00000')
    assert shortened.endswith("line 00499: some text that a file could hold\n\n</tool_response>")
    assert NOTE in shortened
    assert fitted.messages[4] is wired[4]  # the person's message is not mistaken for a result


def test_the_calibrated_factor_decides_what_fits():
    messages = [system(), user("q"), call("a"), result(listing(300)), user("next")]
    budget = estimate_messages(messages)
    assert fit(messages, budget).trimmed_results == 0
    fitted = fit(messages, budget, factor=1.2)
    assert fitted.trimmed_results == 1
    assert fitted.estimated_tokens == TokenEstimator(1.2).estimate(fitted.messages) <= budget


# ---- properties over random conversations ----

_PIECES = st.text(
    alphabet=st.sampled_from([*"abc xyz\n{}:,", *"0123456789", *"貓咪代理測試。", "🐱", "é", "Я"]),
    min_size=1,
    max_size=12,
)
_TEXT = st.builds(lambda piece, times: piece * times, _PIECES, st.integers(0, 600))


@st.composite
def conversations(draw):
    """A system prompt, then turns: the person's message and the model's calls, each followed by its results."""
    messages = [{"role": "system", "content": draw(_TEXT)}]
    for _ in range(draw(st.integers(0, 5))):
        messages.append(user(draw(_TEXT)))
        for _ in range(draw(st.integers(0, 3))):
            paths = draw(st.lists(st.sampled_from(["a.py", "b.md", "資料.txt"]), min_size=1, max_size=3))
            assistant = call(*paths, content=draw(_TEXT))
            if draw(st.booleans()):  # the text protocol: the call is in the content, no tool_calls
                del assistant["tool_calls"]
                paths = paths[:1]
            if draw(st.booleans()):
                assistant["thinking"] = draw(_TEXT)
            messages.append(assistant)
            messages.extend(result(draw(_TEXT)) for _ in paths)
        if draw(st.booleans()):
            messages.append({"role": "assistant", "content": draw(_TEXT)})
    if draw(st.booleans()):
        messages = [messages[0], *wire_messages(messages[1:], NO_TOOLS.capabilities)]
    return [{**m, "n": i} for i, m in enumerate(messages)]  # "n" traces each message back to the input


def _is_result(message):
    content = message["content"]
    return message["role"] == "tool" or (message["role"] == "user" and content.startswith("<tool_response"))


def _latest_user(messages):
    return max((i for i, m in enumerate(messages) if m["role"] == "user" and not _is_result(m)), default=0)


def _call_of(messages, i):
    """The index of the message a result answers: the nearest one before it that is not a result."""
    return next(j for j in range(i - 1, -1, -1) if not _is_result(messages[j]))


OWN_NOTE = "characters of your own output cut to fit the model's context]"


@settings(max_examples=300, deadline=None)
@given(conversations(), st.floats(-0.2, 1.1), st.floats(MIN_FACTOR, MAX_FACTOR))
def test_fitting_keeps_every_promise(messages, share, factor):
    """`share` places the budget between what must be kept (0) and the whole transcript (1)."""
    estimator = TokenEstimator(factor)
    latest = _latest_user(messages)
    floor = estimator.estimate([messages[0], messages[latest]] if latest else messages[:1])
    budget = floor + int(share * (estimator.estimate(messages) - floor))
    before = copy.deepcopy(messages)
    if floor > budget:  # and only then: the system prompt and the person's message alone are too long
        with pytest.raises(ContextTooSmall) as raised:
            fit_messages(messages, budget=budget, estimator=estimator)
        assert type(raised.value) is ContextTooSmall
        assert raised.value.needed == floor
        return
    current = range(latest + 1 if latest else 1, len(messages))
    try:
        fitted, too_long = fit_messages(messages, budget=budget, estimator=estimator), None
    except AnswerTooLong as raised:
        fitted, too_long = None, raised
    if too_long is not None:
        # Only when the current answer, as it is, does not fit: dropping older turns would have been enough.
        assert estimator.estimate([messages[0], *messages[latest:]] if latest else messages) > budget
        assert budget < too_long.needed <= estimator.estimate(messages)
        assert messages == before
        return
    assert messages == before, "the input is never changed"
    out = fitted.messages
    assert fitted.estimated_tokens == estimator.estimate(out) <= budget
    assert fitted.raw_tokens == estimate_messages(out)

    kept = [m["n"] for m in out]
    assert kept == sorted(set(kept)), "order is kept and nothing is duplicated"
    assert out[0] == messages[0]
    assert latest == 0 or messages[latest] in out
    assert set(current) <= set(kept), "the current answer is never left out"
    changed = [m for m in out if m != messages[m["n"]]]
    for message in changed:
        original = messages[message["n"]]
        if _is_result(original):
            assert NOTE in message["content"]
        else:  # only the model's own messages of the current answer
            assert original["role"] == "assistant"
            assert message["n"] in current
            assert OWN_NOTE in json.dumps(message, ensure_ascii=False)
    assert fitted.trimmed_results == len(changed)
    assert fitted.dropped_messages == len(messages) - len(out)

    for i, message in enumerate(messages):
        if _is_result(message):
            assert (i in kept) == (_call_of(messages, i) in kept), "a call and its results stay or go together"
    if any(messages[i] not in out for i in current):
        assert kept[: 2 if latest else 1] == ([0, latest] if latest else [0]), "older turns go first"
    if estimator.estimate(messages) <= budget:
        assert out == messages
        assert fitted.trimmed_results == fitted.dropped_messages == 0
