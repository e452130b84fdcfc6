"""Five concurrent sessions with tool calls and approvals (bench.load): nothing fails, nothing crosses over."""

from bench.load import measure


def test_five_concurrent_sessions_complete_without_errors_or_cross_talk():
    result = measure(5)
    assert result.errors == []
    assert result.cross_talk == []
    assert result.mixed_requests == 0
    assert [s.completed for s in result.sessions] == [True] * 5
    # Every send showed the model's first words, and every action finished: three sends and one approval each.
    assert all(len(s.first_token) == 3 and len(s.steps) == 4 for s in result.sessions)
