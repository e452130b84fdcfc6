"""`mcp.json`: which MCP servers to start, in the format other agents use.

    {"mcpServers": {
      "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {}},
      "search": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer ..."}}
    }}

A server has either a `command` (started as a child process, spoken to over stdin/stdout) or a
`url` (streamable HTTP). A command may ask for the sandbox shell commands run in: `"sandbox": true`
(no network), or `"sandbox": {"hosts": ["api.github.com", "*.example.com"]}`: its own network
namespace, whose only way out is a proxy that lets it reach those hosts (`"hosts": "any"`, said
in so many words, for any host). Anything wrong gives `McpConfigError` with a sentence naming the
server and the key, never a stack trace.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meowgent.mcp.redact import hidden_values, shown_command, shown_url
from meowgent.tools.proxyrequest import ANY_HOST, host_pattern

CONFIG_FILE = "mcp.json"
"""The file's name in the data folder, when no --mcp-config is given."""

ANY_HOSTS = "any"
"""`"sandbox": {"hosts": "any"}`: every host, as a deliberate choice (a `*` in a list is refused)."""
SEPARATOR = "__"
"""Between the server's name and the tool's in the name the model sees: `files__read_text`."""

# Server names become part of tool names, which models copy letter by letter: keep them plain.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_STDIO_KEYS = {"command", "args", "env", "cwd", "sandbox"}
_HTTP_KEYS = {"url", "headers"}
_COMMON_KEYS = {"type", "disabled", "description"}  # written by other clients; harmless here


class McpConfigError(Exception):
    """The MCP configuration cannot be used; the message says which server and key is wrong."""


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: `command` for a child process (stdio) or `url` for streamable HTTP."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    sandbox: bool = False
    """Start the command in the sandbox shell commands run in (meowgent.tools.sandbox); never without it."""
    hosts: tuple[str, ...] = ()
    """In the sandbox, the hosts it may reach through its proxy: names or patterns (`*.example.com`), `*` alone for
    any host; () for no network."""

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """Where the server lives, for the sidebar: the command line or the URL, with every credential as ••••."""
        if self.command is None:
            return shown_url(str(self.url))
        return shown_command([self.command, *self.args])

    def credentials(self) -> set[str]:
        """What `describe` hides, and the values of `env` and `headers`: never to be shown, wherever they appear."""
        words = [self.command, *self.args] if self.command is not None else [str(self.url)]
        return {*hidden_values(words), *self.env.values(), *self.headers.values()}


def config_path(data_dir: Path, override: Path | None) -> Path:
    """The configuration file in use: the one given by flag or variable, else `mcp.json` in the data folder."""
    return override if override is not None else data_dir / CONFIG_FILE


def load_config(path: Path) -> list[ServerConfig]:
    """The servers in a configuration file; no file means no servers."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise McpConfigError(f"cannot read {path}: {exc}") from None
    return parse_config(text, source=str(path))


def parse_config(text: str, *, source: str = CONFIG_FILE) -> list[ServerConfig]:
    """The servers described by the text of an MCP configuration file."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(f"{source}, line {exc.lineno}, column {exc.colno}: {exc.msg}.") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f'{source} must hold {{"mcpServers": {{"NAME": {{"command": ...}}}}}}.')
    found = []
    for name, entry in servers.items():
        where = f"{source}, server {name!r}"
        if not _NAME.fullmatch(name) or SEPARATOR in name:
            raise McpConfigError(f"{where}: use letters, digits, - and single _ in a server name.")
        if not isinstance(entry, dict):
            raise McpConfigError(f"{where}: each server must be a JSON object.")
        if entry.get("disabled") is True:
            continue
        found.append(_server(name, entry, where))
    return found


def _server(name: str, entry: dict[str, Any], where: str) -> ServerConfig:
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise McpConfigError(f'{where}: give either "command" (a program to start) or "url" (an HTTP server).')
    allowed = _COMMON_KEYS | (_STDIO_KEYS if has_command else _HTTP_KEYS)
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise McpConfigError(f"{where}: unknown key {unknown[0]!r}; use {', '.join(sorted(allowed - _COMMON_KEYS))}.")
    if has_url:
        url = _string(entry, "url", where)
        if not url.startswith(("http://", "https://")):
            raise McpConfigError(f"{where}: 'url' must start with http:// or https://.")
        return ServerConfig(name, url=url, headers=_strings(entry, "headers", where))
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise McpConfigError(f"{where}: 'args' must be a list of strings.")
    cwd = _string(entry, "cwd", where) if "cwd" in entry else None
    sandbox, hosts = _sandbox(entry.get("sandbox", False), where)
    return ServerConfig(
        name,
        command=_string(entry, "command", where),
        args=tuple(args),
        env=_strings(entry, "env", where),
        cwd=cwd,
        sandbox=sandbox,
        hosts=hosts,
    )


def _sandbox(value: Any, where: str) -> tuple[bool, tuple[str, ...]]:
    """(in the sandbox, the hosts it may reach) from `true`, `false` or `{"hosts": [...]}`."""
    if isinstance(value, bool):
        return value, ()
    if isinstance(value, dict) and "network" in value:  # what an older Meowgent took: all hosts, unsaid
        raise McpConfigError(
            f'{where}: \'sandbox\' takes "hosts" instead of "network": name the hosts the server may reach, as '
            f'{{"hosts": ["api.github.com"]}}, or write {{"hosts": "{ANY_HOSTS}"}} to let it reach any host.'
        )
    if not isinstance(value, dict) or set(value) != {"hosts"}:
        raise McpConfigError(f'{where}: \'sandbox\' must be true, false or {{"hosts": ["HOST", ...]}}.')
    return True, _hosts(value["hosts"], where)


def _hosts(value: Any, where: str) -> tuple[str, ...]:
    """The hosts of `"sandbox": {"hosts": ...}`: a list of names or patterns, or "any"."""
    if value == ANY_HOSTS:
        return (ANY_HOST,)
    if not isinstance(value, list) or not all(isinstance(host, str) for host in value):
        raise McpConfigError(f'{where}: \'hosts\' must be a list of host names, such as ["api.github.com"], or "any".')
    hosts = []
    for word in value:
        if word.strip() == ANY_HOST:
            raise McpConfigError(f'{where}: to let the server reach any host, write "hosts": "{ANY_HOSTS}".')
        try:
            hosts.append(host_pattern(word))
        except ValueError:
            raise McpConfigError(
                f"{where}: {word!r} in 'hosts' is not a host name; write the host alone, as \"api.github.com\" "
                'or "*.example.com", without a scheme, port, path or space.'
            ) from None
    return tuple(dict.fromkeys(hosts))


def _string(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise McpConfigError(f"{where}: {key!r} must be a non-empty string.")
    return value


def _strings(entry: dict[str, Any], key: str, where: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f"{where}: {key!r} must be an object of strings.")
    return dict(value)
