"""An MCP server's command line, URL or error as the page shows it: every credential as ••••.

`mcp.json` often carries keys: `--api-key X`, `--token=X`, `-H "Authorization: Bearer X"`,
`GITHUB_TOKEN=X`, `postgres://user:pass@host`, `https://host/mcp?key=X`. The page says where a
server runs, never with what key, on screen or in /config. What counts as a credential is read
from the text's shape, so an unknown option named like a key is hidden too: hiding a harmless
value costs nothing, showing a key is a leak. Everything here is linear in the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

HIDDEN = "••••"

# Parts of an option, variable, header or query name that say its value is a credential.
_SECRET_PARTS = (
    "token",
    "secret",
    "passw",
    "passphrase",
    "pwd",
    "apikey",
    "key",
    "auth",
    "credential",
    "cookie",
    "bearer",
    "session",
    "signature",
    "private",
)
_SECRET_WORDS = frozenset({"pass", "pw", "sig", "sas", "jwt", "u", "user"})
"""Whole words of a name that do too (`--user` takes curl's `user:password`)."""
_HEADER_OPTIONS = frozenset({"-H", "--header", "--headers"})
# A header as a word: `Authorization: Bearer X` (the name is a token of RFC 9110).
_HEADER = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:(.*)", re.DOTALL)
# Each pattern starts only where a run of its characters starts (the lookbehinds), so a long run that
# is not a URL or a key is read once, not once per position: linear on text a server wrote.
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s]*")
_QUERY_PARAMETER = re.compile(r"([?&#])([^=&#?]*)=([^&#?]*)")
# Keys whose shape gives them away wherever they stand (OpenAI, Stripe, GitHub, GitLab, Slack, Hugging Face,
# AWS, Google, a JWT).
_KNOWN_KEY = re.compile(
    r"(?<![A-Za-z0-9_-])(?:(?:sk|rk|pk)[-_][A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}"
    r"|glpat-[A-Za-z0-9_-]{8,}|xox[abprs]-[A-Za-z0-9-]{8,}|hf_[A-Za-z0-9]{8,}|AKIA[A-Z0-9]{12,}"
    r"|AIza[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9._-]*)"
)
_SHORTEST_SCRUBBED = 4
"""A known credential shorter than this is not looked for in free text: it would hide ordinary words."""


def shown_command(words: Sequence[str]) -> str:
    """The command line (program and arguments) with its credentials as ••••."""
    return " ".join(_redacted(words)[0])


def hidden_values(words: Sequence[str]) -> list[str]:
    """The values `shown_command` hides, to look for in other text about the same server."""
    return _redacted(words)[1]


def shown_url(url: str) -> str:
    """The URL without its user information and with the values of credential-named query parameters hidden."""
    return _shown_value(url, [])


def scrubbed(text: str, credentials: Iterable[str]) -> str:
    """Free text about a server (an error, the last line it wrote) without its known credentials, URL secrets
    or key shapes."""
    known = {value for value in credentials if len(value) >= _SHORTEST_SCRUBBED}
    for value in sorted(known, key=len, reverse=True):  # a longer one first: it may contain a shorter one
        text = text.replace(value, HIDDEN)
    return _shown_value(text, [])


def _redacted(words: Sequence[str]) -> tuple[list[str], list[str]]:
    shown: list[str] = []
    hidden: list[str] = []
    takes: str | None = None  # what the option before this word takes: "secret" or "header"
    for word in words:
        if takes == "secret":
            shown.append(HIDDEN)
            hidden.append(word)
        elif takes == "header":
            shown.append(_shown_header(word, hidden, always=True))
        else:
            shown.append(_shown_word(word, hidden))
        takes = _takes(word)
    return shown, hidden


def _takes(word: str) -> str | None:
    """What the next word is, when `word` is an option that takes a value and gives none of its own."""
    if not word.startswith("-") or "=" in word or word.strip("-") == "":
        return None
    if word in _HEADER_OPTIONS:
        return "header"
    return "secret" if _looks_secret(word) else None


def _shown_word(word: str, hidden: list[str]) -> str:
    name, equals, value = word.partition("=")
    if equals and name and not _URL.match(word):  # `--token=X`, `GITHUB_TOKEN=X`, `--url=postgres://…`
        if name in _HEADER_OPTIONS:
            return f"{name}={_shown_header(value, hidden, always=True)}"
        if _looks_secret(name):
            hidden.append(value)
            return f"{name}={HIDDEN}"
        return f"{name}={_shown_value(value, hidden)}"
    return _shown_header(word, hidden, always=False)


def _shown_header(text: str, hidden: list[str], *, always: bool) -> str:
    """`Name: value` with the value hidden when the name looks secret (any name, after -H)."""
    header = _HEADER.fullmatch(text)
    if header is None or _URL.match(text):
        if always:
            hidden.append(text)
            return HIDDEN
        return _shown_value(text, hidden)
    name, value = header.groups()
    if always or _looks_secret(name):
        hidden.append(value.strip())
        return f"{name}: {HIDDEN}"
    return _shown_value(text, hidden)


def _shown_value(text: str, hidden: list[str]) -> str:
    """A value with the secrets of each URL in it and every key of a known shape hidden."""

    def key(found: re.Match[str]) -> str:
        hidden.append(found.group())
        return HIDDEN

    return _KNOWN_KEY.sub(key, _URL.sub(lambda found: _shown_one_url(found.group(), hidden), text))


def _shown_one_url(url: str, hidden: list[str]) -> str:
    scheme, separator, rest = url.partition("://")
    end = next((index for index, char in enumerate(rest) if char in "/?#"), len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:  # user:password@host, or a token as the user name
        userinfo, _, host = authority.rpartition("@")
        hidden.append(userinfo)
        authority = f"{HIDDEN}@{host}"

    def parameter(found: re.Match[str]) -> str:
        mark, name, value = found.groups()
        if not _looks_secret(name):
            return found.group()
        hidden.append(value)
        return f"{mark}{name}={HIDDEN}"

    return scheme + separator + authority + _QUERY_PARAMETER.sub(parameter, tail)


def _looks_secret(name: str) -> bool:
    lowered = name.lower()
    compact = re.sub(r"[^a-z0-9]", "", lowered)
    return any(part in compact for part in _SECRET_PARTS) or any(
        word in _SECRET_WORDS for word in re.split(r"[^a-z0-9]+", lowered)
    )
