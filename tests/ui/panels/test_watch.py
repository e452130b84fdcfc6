"""The share panel's pure parts: the address a link is shown on, and the lifetime it states."""

import pytest

from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.panels.watch import ends_in, page_origin, watch_url
from meowgent.watch.links import DAY, WatchLink


@pytest.mark.parametrize(
    ("host", "proto", "origin"),
    [
        ("127.0.0.1:7860", None, "http://127.0.0.1:7860"),
        ("[::1]:7860", None, "http://[::1]:7860"),
        ("abc123.gradio.live", None, "https://abc123.gradio.live"),
        ("meow.example.org", "https", "https://meow.example.org"),
        ("meow.example.org", "http", "http://meow.example.org"),
        ("laptop.local:7860", "gopher", "http://laptop.local:7860"),
    ],
)
def test_the_link_is_on_the_address_the_person_is_using(host, proto, origin):
    assert page_origin(host, forwarded_proto=proto) == origin


def test_the_watch_url_is_the_origin_the_mount_and_the_token():
    link = WatchLink("tok-123", "chat", "owner", 0.0)
    assert watch_url("https://abc.gradio.live", link) == "https://abc.gradio.live/watch/tok-123"


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (DAY, "ends in 24 hours"),
        (DAY - 1, "ends in 24 hours"),
        (3 * 3600 + 1, "ends in 3 hours"),
        (2 * 3600, "ends in 2 hours"),
        (2 * 3600 - 1, "ends in 120 minutes"),
        (61, "ends in 2 minutes"),
    ],
)
def test_the_lifetime_is_said_in_hours_then_minutes(seconds, said):
    assert said in ends_in(seconds, ENGLISH)
    assert said.split()[2] in ends_in(seconds, CHINESE)


@pytest.mark.parametrize("seconds", [60, 1, 0])
def test_the_last_minute_is_said_as_such(seconds):
    assert "ends within a minute" in ends_in(seconds, ENGLISH)
    assert "一分鐘內" in ends_in(seconds, CHINESE)
