from hypothesis import given
from hypothesis import strategies as st

from meowgent.ui.state.throttle import Draw, FrameThrottle


def test_a_status_change_draws_at_once_and_text_waits_for_the_interval():
    throttle = FrameThrottle(0.05)
    assert throttle.due(news=True, status=True, now=10.0)
    assert not throttle.due(news=True, status=False, now=10.01)
    assert throttle.due(news=True, status=True, now=10.02)


def test_text_held_back_is_drawn_when_the_interval_has_passed_even_without_news():
    throttle = FrameThrottle(0.05)
    assert throttle.due(news=True, status=False, now=10.0)
    assert not throttle.due(news=True, status=False, now=10.01)  # the end of a sentence, then silence
    assert not throttle.due(news=False, status=False, now=10.03)
    assert throttle.due(news=False, status=False, now=10.06)  # drawn during the silence
    assert not throttle.due(news=False, status=False, now=10.5)  # nothing new: no more frames


def test_steady_text_is_drawn_about_once_per_interval():
    throttle = FrameThrottle(0.2)
    frames = sum(throttle.due(news=True, status=False, now=i * 0.001) is not None for i in range(1000))
    assert 5 <= frames <= 6


def test_a_status_change_redraws_everything_and_text_alone_only_the_chat():
    throttle = FrameThrottle(0.2)
    assert throttle.due(news=True, status=True, now=10.0) is Draw.WHOLE
    assert throttle.due(news=True, status=False, now=10.3) is Draw.CHAT
    assert throttle.due(news=True, status=False, now=10.4) is None
    assert throttle.due(news=True, status=True, now=10.45) is Draw.WHOLE  # at once, whatever came before


@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.floats(0, 0.5)), max_size=60))
def test_no_status_change_is_left_to_a_frame_of_the_chat_alone(calls):
    """Every status change is drawn by a whole frame at once, so a frame of the chat alone never hides one."""
    throttle, now = FrameThrottle(0.2), 0.0
    for news, status, step in calls:
        now += step
        draw = throttle.due(news=news, status=status, now=now)
        if status:
            assert draw is Draw.WHOLE
        elif draw is not None:
            assert draw is Draw.CHAT
