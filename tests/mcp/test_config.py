"""mcp.json: the de-facto format in, ServerConfigs or one plain sentence out."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.flags import parse_settings
from meowgent.mcp.config import McpConfigError, ServerConfig, config_path, load_config, parse_config


def test_stdio_and_http_servers_are_read_in_order():
    text = json.dumps(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server-files", "."], "env": {"DEBUG": "1"}},
                "search": {"url": "https://example.org/mcp", "headers": {"Authorization": "Bearer x"}},
                "old": {"command": "old-server", "disabled": True},
            }
        }
    )
    files, search = parse_config(text)
    assert files == ServerConfig("files", command="npx", args=("-y", "server-files", "."), env={"DEBUG": "1"})
    assert files.transport == "stdio"
    assert files.describe() == "npx -y server-files ."
    assert search == ServerConfig("search", url="https://example.org/mcp", headers={"Authorization": "Bearer x"})
    assert search.transport == "http"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "line 1, column 2"),
        ("[]", '{"mcpServers"'),
        ('{"mcpServers": {"a": {}}}', 'either "command"'),
        ('{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}', 'either "command"'),
        ('{"mcpServers": {"a": {"url": "ftp://h"}}}', "http:// or https://"),
        ('{"mcpServers": {"a": {"command": "x", "args": "y"}}}', "'args' must be a list"),
        ('{"mcpServers": {"a": {"command": "x", "url2": 1}}}', "unknown key 'url2'"),
        ('{"mcpServers": {"a": {"command": ""}}}', "'command' must be a non-empty string"),
        ('{"mcpServers": {"a": {"url": "http://h", "headers": {"k": 1}}}}', "'headers' must be an object"),
        ('{"mcpServers": {"a__b": {"command": "x"}}}', "server 'a__b'"),
        ('{"mcpServers": {"a b": {"command": "x"}}}', "letters, digits"),
        ('{"mcpServers": {"a": 3}}', "must be a JSON object"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": "yes"}}}', "'sandbox' must be true, false or"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"net": true}}}}', "'sandbox' must be true, false or"),
        ('{"mcpServers": {"a": {"url": "http://h", "sandbox": true}}}', "unknown key 'sandbox'"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"network": true}}}}', 'takes "hosts" instead of "network"'),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"hosts": "all"}}}}', "'hosts' must be a list"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"hosts": [1]}}}}', "'hosts' must be a list"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"hosts": ["*"]}}}}', 'write "hosts": "any"'),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"hosts": ["https://x.org"]}}}}', "'https://x.org' in"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"hosts": ["x.org:443"]}}}}', "without a scheme, port"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"hosts": ["a b"]}}}}', "is not a host name"),
        ('{"mcpServers": {"a": {"command": "x", "sandbox": {"hosts": [], "x": 1}}}}', "'sandbox' must be true"),
    ],
)
def test_a_bad_configuration_says_what_is_wrong(text, says):
    with pytest.raises(McpConfigError, match=None) as error:
        parse_config(text, source="mcp.json")
    assert says in str(error.value)
    assert str(error.value).startswith("mcp.json")


def sandbox_of(value: object) -> ServerConfig:
    (server,) = parse_config(json.dumps({"mcpServers": {"a": {"command": "x", "sandbox": value}}}))
    return server


def test_the_sandbox_is_asked_for_with_no_network_with_named_hosts_or_with_any_host_in_so_many_words():
    assert (sandbox_of(True).sandbox, sandbox_of(True).hosts) == (True, ())
    assert (sandbox_of(False).sandbox, sandbox_of(False).hosts) == (False, ())
    named = sandbox_of({"hosts": ["API.GitHub.com.", "*.example.com", "api.github.com", "::1"]})
    assert (named.sandbox, named.hosts) == (True, ("api.github.com", "*.example.com", "::1"))
    assert sandbox_of({"hosts": "any"}).hosts == ("*",)
    assert sandbox_of({"hosts": []}).hosts == ()  # no network, as `true`


@given(st.lists(st.text(max_size=20), max_size=4))
def test_any_list_of_hosts_is_read_as_plain_host_patterns_or_refused_naming_one(words):
    try:
        hosts = sandbox_of({"hosts": words}).hosts
    except McpConfigError as error:
        said = str(error)
    else:
        said = ""
    if said:
        assert said.startswith("mcp.json, server 'a':")
        assert any(repr(word) in said for word in words) or '"hosts": "any"' in said
        return
    assert len(hosts) <= len(words)
    for host in hosts:
        assert host == host.lower()
        assert host != "*"
        assert host.count(":") != 1
        assert not any(c in host for c in " /@,\n")
        assert not host.endswith(".")


def test_the_file_is_in_the_data_folder_unless_given(tmp_path):
    assert config_path(tmp_path, None) == tmp_path / "mcp.json"
    assert config_path(tmp_path, tmp_path / "other.json") == tmp_path / "other.json"


def test_no_file_means_no_servers_and_an_unreadable_one_is_an_error(tmp_path):
    assert load_config(tmp_path / "mcp.json") == []
    (tmp_path / "mcp.json").write_bytes(b"\xff\xfe")
    with pytest.raises(McpConfigError, match="cannot read"):
        load_config(tmp_path / "mcp.json")


def test_the_flag_and_the_variable_choose_the_file(tmp_path):
    given = parse_settings(["--mcp-config", str(tmp_path / "servers.json")], environ={})
    assert given.mcp_config == tmp_path / "servers.json"
    from_environment = parse_settings([], environ={"MEOWGENT_MCP_CONFIG": str(tmp_path / "env.json")})
    assert from_environment.mcp_config == tmp_path / "env.json"
    assert parse_settings([], environ={}).mcp_config is None
