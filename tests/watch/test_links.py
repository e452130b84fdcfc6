"""WatchLinks: one unguessable link per chat, only its owner makes or ends it, and it ends on time."""

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meowgent.chats.errors import ChatError
from meowgent.watch.links import DAY, WatchLinks

ALICE, BOB = "browser:alice", "browser:bob"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def links(service, store, clock):
    return WatchLinks(service, store=store, clock=clock)


def test_a_link_is_256_random_bits_and_finds_its_chat(service, links):
    chat = service.new_chat(ALICE)
    link = links.share(ALICE, chat.id)
    assert len(link.token) >= 43
    assert link.chat_id == chat.id
    assert link.owner == ALICE
    assert links.lookup(link.token) == link
    assert links.link_for(ALICE, chat.id) == link
    assert links.is_shared(chat.id)


def test_sharing_again_returns_the_live_link_and_each_chat_has_its_own(service, links):
    first, second = service.new_chat(ALICE), service.new_chat(ALICE)
    link = links.share(ALICE, first.id)
    assert links.share(ALICE, first.id) == link
    assert links.share(ALICE, second.id).token != link.token


def test_only_the_owner_shares_revokes_or_sees_the_link(service, links):
    chat = service.new_chat(ALICE)
    with pytest.raises(ChatError):
        links.share(BOB, chat.id)
    link = links.share(ALICE, chat.id)
    for act in (links.revoke, links.link_for, links.share):
        with pytest.raises(ChatError):
            act(BOB, chat.id)
    assert links.lookup(link.token) == link


def test_revoke_and_chat_deletion_end_the_link(service, links):
    chat, other = service.new_chat(ALICE), service.new_chat(ALICE)
    link, kept = links.share(ALICE, chat.id), links.share(ALICE, other.id)
    assert links.revoke(ALICE, chat.id) is True
    assert links.lookup(link.token) is None
    assert not links.is_shared(chat.id)
    assert links.revoke(ALICE, chat.id) is False
    assert links.share(ALICE, chat.id).token != link.token  # a new link, the old one stays dead
    assert links.chat_deleted(other.id) is True
    assert links.lookup(kept.token) is None


def test_a_link_expires_after_its_lifetime(service, links, clock):
    chat = service.new_chat(ALICE)
    link = links.share(ALICE, chat.id)
    assert link.expires_at == clock.now + DAY
    clock.now += DAY - 1
    assert links.lookup(link.token) == link
    clock.now += 1
    assert links.lookup(link.token) is None
    assert links.link_for(ALICE, chat.id) is None
    fresh = links.share(ALICE, chat.id, lifetime=60)
    assert fresh.token != link.token
    assert fresh.expires_at == clock.now + 60


class Watched(str):
    """A presented token that records every comparison made with it (a comparison of the secret would leak)."""

    compared = 0

    def __eq__(self, other):
        Watched.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(guess=st.text(max_size=60))
def test_a_presented_token_is_only_hashed_never_compared(service, store, guess):
    links = WatchLinks(service, store=store)
    link = links.share(ALICE, service.new_chat(ALICE).id)
    Watched.compared = 0
    assert links.lookup(Watched(guess)) is None
    assert links.lookup(Watched(link.token[:-1] + ("A" if link.token[-1] != "A" else "B"))) is None
    assert links.lookup(Watched(link.token)) == link
    assert Watched.compared == 0


def restarted(service, store, clock) -> WatchLinks:
    """The links a new process finds in the same store, as after a restart."""
    return WatchLinks(service, store=store, clock=clock)


def test_a_link_outlives_a_restart_with_its_chat_owner_and_end_but_not_its_token(service, store, links, clock):
    chat = service.new_chat(ALICE)
    link = links.share(ALICE, chat.id)
    after = restarted(service, store, clock)
    found = after.lookup(link.token)
    assert found is not None
    assert (found.chat_id, found.owner, found.expires_at) == (chat.id, ALICE, link.expires_at)
    assert found.token is None  # only its digest was kept: the owner's page cannot show it again
    assert after.link_for(ALICE, chat.id) is found
    assert after.is_shared(chat.id)
    assert after.share(ALICE, chat.id) is found  # still the one live link of the chat
    with pytest.raises(ChatError):
        after.link_for(BOB, chat.id)


def test_after_a_restart_a_link_still_expires_and_revoking_it_ends_it_for_good(service, store, links, clock):
    revoked, expiring = service.new_chat(ALICE), service.new_chat(ALICE)
    ended = links.share(ALICE, revoked.id)
    short = links.share(ALICE, expiring.id, lifetime=60)
    after = restarted(service, store, clock)
    assert after.revoke(ALICE, revoked.id) is True
    clock.now += 60
    again = restarted(service, store, clock)
    assert again.lookup(ended.token) is None
    assert again.lookup(short.token) is None
    assert not again.is_shared(expiring.id)
    with store.watch_links() as conn:
        assert conn.execute("SELECT COUNT(*) FROM watch_links").fetchone() == (0,)  # the expired row is gone too


def test_deleting_the_chat_ends_its_link_after_a_restart_too(service, store, links, clock):
    chat = service.new_chat(ALICE)
    link = links.share(ALICE, chat.id)
    service.delete(ALICE, chat.id)
    assert restarted(service, store, clock).lookup(link.token) is None


def test_the_data_file_holds_the_tokens_digest_never_the_token(service, store, links):
    tokens = [links.share(ALICE, service.new_chat(ALICE).id).token for _ in range(3)]
    store.close()  # everything written out to the data file (its -wal folded in)
    written = b"".join(path.read_bytes() for path in store.path.parent.iterdir() if path.is_file())
    for token in tokens:
        assert token.encode() not in written
        assert hashlib.sha256(token.encode()).digest() in written
