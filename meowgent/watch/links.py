"""Watch links: an unguessable token that lets anyone watch one chat, live, and do nothing else.

The token is the whole permission, so it is 256 random bits, looked up in constant time, and ends when
its owner revokes it, when its chat is deleted, or after its lifetime. A link outlives a restart: the store keeps
its token's SHA-256 (`meowgent.persist.watchlinks`), never the token, so the data file opens nothing, and after a
restart the owner's page can no longer show the link (its holders still watch with it).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from meowgent.persist import watchlinks as stored
from meowgent.persist.store import Store
from meowgent.persist.watchlinks import WatchLinkRow

DAY = 24 * 60 * 60.0
DEFAULT_LIFETIME = DAY
"""A link ends a day after it was made, unless its owner ends it first."""
TOKEN_BYTES = 32


class ChatOwners(Protocol):
    """Who owns a chat (`meowgent.chats.service.ChatService`): `get` raises ChatError for anyone else."""

    def get(self, owner: str, chat_id: str) -> object: ...


@dataclass(frozen=True)
class WatchLink:
    token: str | None
    """None for a link made before the app restarted: only its digest was kept, so it cannot be shown again."""
    chat_id: str
    owner: str
    expires_at: float
    """On the links' clock (`time.time()` unless a test gives another)."""


_NO_LINK = WatchLink("", "", "", float("-inf"))
"""What a wrong token finds: a link that has always expired."""


class WatchLinks:
    """At most one live link per chat; only the chat's owner makes or ends it."""

    def __init__(self, chats: ChatOwners, *, store: Store, clock: Callable[[], float] = time.time) -> None:
        """`store`: where the links' digests are kept (the chats' store), and the live ones read back from."""
        self._chats = chats
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        # Keyed by the SHA-256 of the token, never the token: finding a presented token costs one hash and one
        # lookup of a digest the presenter cannot steer (matching a prefix of the digest needs a preimage), so
        # how long a wrong guess takes says nothing about any live token. A dict keyed by the token itself
        # would compare the guess against a stored token byte by byte.
        self._by_digest: dict[bytes, WatchLink] = {}
        self._by_chat: dict[str, bytes] = {}  # the digest of the chat's link
        with store.watch_links() as conn:
            for row in stored.live(conn, clock()):
                self._add(row.digest, WatchLink(None, row.conversation_id, row.owner, row.expires_at))

    def share(self, owner: str, chat_id: str, *, lifetime: float = DEFAULT_LIFETIME) -> WatchLink:
        """The chat's live link, made now if it has none. ChatError if `owner` does not own the chat."""
        self._chats.get(owner, chat_id)
        now = self._clock()
        with self._lock:
            self._drop_expired(now)
            link = self._link_of(chat_id)
            if link is None:
                token = secrets.token_urlsafe(TOKEN_BYTES)
                link, digest = WatchLink(token, chat_id, owner, now + lifetime), _digest(token)
                with self._store.watch_links() as conn:  # kept before it is given out: a shown link outlives a restart
                    stored.put(conn, WatchLinkRow(chat_id, digest, owner, link.expires_at))
                self._add(digest, link)
            return link

    def link_for(self, owner: str, chat_id: str) -> WatchLink | None:
        """The chat's live link, for its owner's page. ChatError if `owner` does not own the chat."""
        self._chats.get(owner, chat_id)
        with self._lock:
            link = self._link_of(chat_id)
        return link if link is not None and self._live(link) else None

    def lookup(self, token: str) -> WatchLink | None:
        """The live link of `token`; None for a wrong, revoked or expired one, after the same work."""
        key, now = _digest(token), self._clock()
        with self._lock:
            link = self._by_digest.get(key, _NO_LINK)  # a miss takes the same steps as a hit
        return link if now < link.expires_at else None

    def is_shared(self, chat_id: str) -> bool:
        """Whether the chat has a live link (a watched chat's feed ends when it has none)."""
        with self._lock:
            link = self._link_of(chat_id)
        return link is not None and self._live(link)

    def revoke(self, owner: str, chat_id: str) -> bool:
        """End the chat's link at once; True if it had one. ChatError if `owner` does not own the chat."""
        self._chats.get(owner, chat_id)
        return self.chat_deleted(chat_id)

    def chat_deleted(self, chat_id: str) -> bool:
        """End the link of a chat that is gone (its owner was checked by the deletion); True if it had one."""
        with self._lock:
            digest = self._by_chat.pop(chat_id, None)
            if digest is not None:
                del self._by_digest[digest]
            with self._store.watch_links() as conn:
                stored.remove(conn, chat_id)
        return digest is not None

    def _add(self, digest: bytes, link: WatchLink) -> None:
        self._by_chat[link.chat_id] = digest
        self._by_digest[digest] = link

    def _link_of(self, chat_id: str) -> WatchLink | None:
        digest = self._by_chat.get(chat_id)
        return None if digest is None else self._by_digest[digest]

    def _live(self, link: WatchLink) -> bool:
        return self._clock() < link.expires_at

    def _drop_expired(self, now: float) -> None:
        """Forget links past their lifetime (the caller holds the lock), so unshared chats cost nothing."""
        for digest in [digest for digest, link in self._by_digest.items() if link.expires_at <= now]:
            del self._by_chat[self._by_digest.pop(digest).chat_id]
        with self._store.watch_links() as conn:
            stored.drop_expired(conn, now)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
