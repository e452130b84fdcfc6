"""`bench --only agent` judges the CPU per token alone; the rate is reported, never called a miss (issue 30)."""

from bench.bench_agent import TARGET, verdict


def test_a_rate_below_the_raw_clients_is_not_called_a_miss():
    line = verdict("A stream", "text", {"best": 0.99, "median": 0.97, "CPU": 1 / 1.01})
    assert "meets the goal" in line
    assert "miss" not in line
    assert "0.99× (best) / 0.97× (median)" in line


def test_more_cpu_per_token_than_the_goal_is_a_miss_whatever_the_rate():
    line = verdict("A stream", "call", {"best": 1.2, "median": 1.1, "CPU": 1 / (TARGET + 0.1)})
    assert "**misses** the goal" in line
    assert f"{TARGET + 0.1:.2f}× the raw client's CPU per token" in line
