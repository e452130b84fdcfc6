"""Settings: every default in one place (meowgent.flags reads them from flags and `MEOWGENT_*` variables)."""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
TOKEN_VARIABLE = "MEOWGENT_TOKEN"
"""The owner's start token (as Jupyter's `JUPYTER_TOKEN`): set to choose it, empty to turn the check off."""
WORKSPACE_FOLDER = "meowgent-workspace"
"""The default workspace, in the home folder: a folder of its own, never Meowgent's checkout (whose code and
virtualenv the sandbox keeps read-only, so a workspace there could change nothing)."""


def default_workspace() -> Path:
    return Path.home() / WORKSPACE_FOLDER


class Secret:
    """A value that is never printed: its repr and str hide it (in Settings' repr, logs, /config, exports)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The value itself, for the one place that sends it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('••••')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __deepcopy__(self, memo: object) -> Secret:
        return self


def new_token() -> Secret:
    """A start token no one can guess (256 bits)."""
    return Secret(secrets.token_urlsafe(32))


@dataclass(frozen=True)
class Settings:
    """How one Meowgent server behaves. Frozen: pass a new one (`dataclasses.replace`) to change it."""

    workspace: Path = field(default_factory=default_workspace)
    """The only folder the file tools and the shell see."""
    ollama_host: str = DEFAULT_OLLAMA_HOST
    """Base URL of the Ollama server (the first of `ollama_hosts` when there are several)."""
    ollama_hosts: tuple[str, ...] = ()
    """Every Ollama server named with --ollama-host / MEOWGENT_OLLAMA_HOSTS; empty means `ollama_host` alone."""
    openai_urls: tuple[str, ...] = ()
    """OpenAI-compatible servers (vLLM, llama.cpp, LM Studio, a LiteLLM proxy), each its API's base URL."""
    openai_key: Secret | None = None
    """The API key for `openai_urls`, never shown."""
    openai_key_file: Path | None = None
    """The file the API key was read from, if any: commands in the sandbox cannot read it."""
    model: str = "qwen3"
    """The model a new chat starts with; "qwen3@gpu-box" pins it to one of the servers (meowgent/llm/pins.py)."""
    host: str = "127.0.0.1"
    """Address the web page binds to; anything but loopback requires a login."""
    port: int = 7860
    share: bool = False
    """Ask Gradio for a temporary public link (requires a login)."""
    public_names: tuple[str, ...] = ()
    """Other host names the page is reached at (a reverse proxy in front): served on any port, like the share link."""
    auth: tuple[str, str] | None = None
    """(user, password) for the page; made up and printed when sharing without one."""
    auth_file: Path | None = None
    """The file the login was read from, if any: commands in the sandbox cannot read it."""
    token: Secret | None = field(default_factory=new_token)
    """Without a login, the page answers only a browser or script that shows this (`MEOWGENT_TOKEN`; random unless
    set); None lets every account on this computer use the page."""
    max_watchers: int = 200
    """Viewers of this app's watch links at once; the next one is asked to try again later."""
    data_dir: Path = field(default_factory=lambda: Path.home() / ".meowgent")
    """Where conversations and rules are stored."""
    allow_private_fetch: bool = False
    """Let web_fetch reach loopback and private addresses (your own LAN)."""
    shell_timeout: float = 60.0
    """Seconds before run_shell kills the command's whole process group."""
    sandbox: bool = True
    """Run every shell command (and MCP servers that ask for it) in an OS sandbox; off only by choice."""
    bwrap: Path | None = None
    """The bubblewrap program to use; None looks for /usr/bin/bwrap, then bwrap on PATH, then the bundled one."""
    shell_env: tuple[str, ...] = ()
    """Names of variables of Meowgent's environment that shell commands also get (never MEOWGENT_*)."""
    max_turns: int = 25
    """Model replies per answer before the agent stops and says so."""
    num_ctx: int = 16384
    """Upper bound for the context window sent as options.num_ctx."""
    connect_timeout: float = 5.0
    """Seconds to wait for the Ollama server to accept a connection."""
    read_timeout: float = 120.0
    """Seconds of silence from a streaming model before we call it stalled. A model whose tool calls Ollama holds
    back without logprobs (Ollama before 0.12.11) may stay silent five times as long."""
    max_tool_output: int = 30_000
    """Characters of one tool result the model sees; longer output keeps head and tail."""
    fetch_max_bytes: int = 5_000_000
    fetch_timeout: float = 20.0
    mcp_config: Path | None = None
    """The MCP servers' configuration file; None means `mcp.json` in the data folder."""
    mcp_timeout: float = 120.0
    """Seconds an MCP server may take to start or to answer one call before it is marked stopped."""
    # Caps on one model reply (meowgent/reply/guard.py): a model that streams forever or floods calls is stopped with a
    # plain note, and the model is told how to go on.
    max_reply_chars: int = 4_000_000
    """Characters one model reply may stream (thinking, text and tool calls); past it the reply is stopped."""
    max_call_chars: int = 2_000_000
    """Characters of one tool call's JSON; a larger call is stopped before it runs and the model told to send parts."""
    max_calls_per_reply: int = 20
    """Tool calls one model reply may make; the reply is stopped at the next one, which the model is told to resend."""

    # The Files panel (meowgent/files/): what the person may upload and download, what is kept to undo.
    upload_max_bytes: int = 100_000_000
    """Bytes one uploaded file may have; a larger one is refused with a sentence."""
    upload_max_files: int = 50
    """Files one upload may bring at once."""
    zip_max_bytes: int = 1_000_000_000
    """Bytes of files the whole-workspace zip may hold; past it the download is refused with a sentence."""
    checkpoint_max_bytes: int = 200_000_000
    """Bytes of files kept in the data folder to undo the agent's writes; past it the oldest are pruned."""

    @property
    def secret_files(self) -> tuple[Path, ...]:
        """The files named in flags that Meowgent reads a secret from (the data folder and MCP file aside)."""
        return tuple(path for path in (self.auth_file, self.openai_key_file) if path is not None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "workspace", Path(self.workspace).expanduser().resolve())
        object.__setattr__(self, "data_dir", Path(self.data_dir).expanduser())


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) is this computer's loopback: what needs no login, what runs locally."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
