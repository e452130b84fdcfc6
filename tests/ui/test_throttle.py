from meowgent.ui.throttle import FrameThrottle


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
    throttle = FrameThrottle(0.05)
    frames = sum(throttle.due(news=True, status=False, now=i * 0.001) for i in range(1000))
    assert 18 <= frames <= 21
