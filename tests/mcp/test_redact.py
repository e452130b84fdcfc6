"""Credentials in an MCP server's command line, URL and errors are shown as ••••, whatever they are."""

import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from meowgent.mcp.config import ServerConfig
from meowgent.mcp.redact import HIDDEN, scrubbed, shown_command, shown_url


@pytest.mark.parametrize(
    ("words", "shown"),
    [
        (["npx", "-y", "server-github", "--token", "abc123"], "npx -y server-github --token ••••"),
        (["server", "--api-key=XYZ", "--port", "8080"], "server --api-key=•••• --port 8080"),
        (["server", "--API_KEY", "XYZ", "--verbose"], "server --API_KEY •••• --verbose"),
        (["curl", "-H", "Authorization: Bearer tok"], "curl -H Authorization: ••••"),
        (["curl", "--header", "X-Trace: 12"], "curl --header X-Trace: ••••"),
        (["curl", "-u", "ann:pw", "https://h.example"], "curl -u •••• https://h.example"),
        (["server", "Authorization: Bearer tok"], "server Authorization: ••••"),
        (["psql", "postgres://user:pass@db.example:5432/app"], "psql postgres://••••@db.example:5432/app"),
        (["git", "clone", "https://ghtoken@github.com/a/b"], "git clone https://••••@github.com/a/b"),
        (["x", "https://h.example/mcp?a=1&key=sec&b=2#access_token=t"], "x https://h.example/mcp?a=1&key=••••&b=2#access_token=••••"),
        (
            ["env", "GITHUB_TOKEN=t0k", "DATABASE_URL=postgres://u:p@h/d", "npx", "s"],
            "env GITHUB_TOKEN=•••• DATABASE_URL=postgres://••••@h/d npx s",
        ),
        (["server", "sk-proj-abcdefghijkl", "ghp_abcdefghijkl1234"], "server •••• ••••"),
        (["python", "-m", "server", "--root", "C:\\work", "--port=80"], "python -m server --root C:\\work --port=80"),
        (["uvx", "mcp-server-fetch"], "uvx mcp-server-fetch"),
    ],
)  # fmt: skip
def test_credentials_in_a_command_line_are_hidden_and_the_rest_is_kept(words, shown):
    assert shown_command(words) == shown


def test_a_url_keeps_its_host_and_path():
    assert shown_url("https://example.org/mcp") == "https://example.org/mcp"
    assert (
        shown_url("https://a:b@example.org/mcp?signature=x&page=2")
        == "https://••••@example.org/mcp?signature=••••&page=2"
    )


def test_free_text_loses_the_known_credentials_urls_secrets_and_keys():
    said = "401 for https://h.example/x?token=abc with s3cr3t-value (key ghp_abcdefghijkl) bad token"
    assert (
        scrubbed(said, {"s3cr3t-value", "pw"})
        == "401 for https://h.example/x?token=•••• with •••• (key ••••) bad token"
    )


ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40)
USERINFO = st.text(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:%@", min_size=1, max_size=30)
QUERY_VALUE = st.text(string.ascii_letters + string.digits + "-._~!$'()*+,;=:@/%", min_size=1, max_size=30)
PLACES = {
    "option": (ANY_TEXT, lambda s: ["--token", s]),
    "option=": (ANY_TEXT, lambda s: [f"--api-key={s}"]),
    "header": (ANY_TEXT, lambda s: ["-H", f"Authorization: Bearer {s}"]),
    "named header": (ANY_TEXT, lambda s: ["--header", f"X-Api-Key: {s}"]),
    "variable": (ANY_TEXT, lambda s: [f"OPENAI_API_KEY={s}"]),
    "userinfo": (USERINFO, lambda s: [f"postgres://app:{s}@db.example/app"]),
    "query": (QUERY_VALUE, lambda s: [f"https://h.example/sse?x=1&key={s}&y=2"]),
}
AROUND = st.lists(st.sampled_from(["npx", "-y", "@scope/server", "--port", "8080", ".", "--verbose", "serve"]))


@given(place=st.sampled_from(sorted(PLACES)), data=st.data(), before=AROUND, after=AROUND)
def test_whatever_the_secret_it_never_appears_in_what_is_shown(place, data, before, after):
    alphabet, put = PLACES[place]
    secret = data.draw(alphabet)
    config = ServerConfig("s", command="npx", args=(*before, *put(secret), *after), env={"KEY": secret})
    placeholder = ServerConfig("s", command="npx", args=(*before, *put("\x00"), *after)).describe()
    assume(secret not in placeholder.replace("\x00", "") + HIDDEN)  # it would show as a part of other words
    assert secret not in config.describe()
    assert secret in config.credentials()
    assert secret not in scrubbed(f"it said: {secret} was refused", config.credentials()) or len(secret) < 4


@given(secret=ANY_TEXT)
def test_env_and_header_values_are_never_shown(secret):
    assume(secret not in "npx serve https://h.example/mcp")
    stdio = ServerConfig("s", command="npx", args=("serve",), env={"TOKEN": secret})
    http = ServerConfig("h", url="https://h.example/mcp", headers={"Authorization": secret})
    assert secret not in stdio.describe()
    assert secret not in http.describe()
