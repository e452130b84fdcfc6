"""The command line: each group of settings adds its flags (defaulting to its `MEOWGENT_*` variable) and reads them
into `Settings` fields."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from meowgent.config import (
    DEFAULT_OLLAMA_HOST,
    TOKEN_VARIABLE,
    WORKSPACE_FOLDER,
    Secret,
    Settings,
    default_workspace,
    new_token,
)

_TRUE = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off"}
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _parse_auth(value: str) -> tuple[str, str]:
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise argparse.ArgumentTypeError("a login is USER:PASSWORD")
    return user, password


def _shell_env_name(name: str) -> str:
    if not _VARIABLE.fullmatch(name):
        raise argparse.ArgumentTypeError(f"{name!r} is not the name of an environment variable")
    if name.upper().startswith("MEOWGENT_"):
        raise argparse.ArgumentTypeError(f"{name} is Meowgent's own setting; commands never get MEOWGENT_* variables")
    return name


def _read_auth_file(path: str) -> tuple[str, str]:
    try:
        lines = Path(path).expanduser().read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot read the login file {path}: {exc.__class__.__name__}") from None
    try:
        return _parse_auth(lines[0].strip() if lines else "")
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"the first line of {path} must be USER:PASSWORD") from None


def _read_key_file(path: str) -> str:
    try:
        lines = Path(path).expanduser().read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot read the key file {path}: {exc.__class__.__name__}") from None
    if not lines or not lines[0].strip():
        raise argparse.ArgumentTypeError(f"the first line of {path} must be the API key")
    return lines[0].strip()


def _token(value: str | None) -> Secret | None:
    """The start token from its variable: random when unset, none at all when set empty."""
    if value is None:
        return new_token()
    return Secret(value.strip()) if value.strip() else None


def _listed(value: str) -> list[str]:
    """A comma-separated variable's items."""
    return [item.strip() for item in value.split(",") if item.strip()]


Env = Mapping[str, str]


class Flags(Protocol):
    """Where a group adds its flags: a titled group of the parser, so `--help` lists them together."""

    def add_argument(self, *names: str, **options: Any) -> argparse.Action: ...


def _variable(env: Env, name: str, default: object) -> object:
    """A flag's default: its `MEOWGENT_<name>` variable if set, else Meowgent's own."""
    return env.get(f"MEOWGENT_{name}", default)


@dataclass(frozen=True)
class SettingsGroup:
    """One group of settings: the flags it adds (each defaulting to its variable), the fields it reads from them.

    `read` may raise `argparse.ArgumentTypeError`, which becomes the parser's one-line error.
    """

    title: str
    flags: Callable[[Flags, Env, Settings], None]
    read: Callable[[argparse.Namespace, Env], dict[str, Any]]


def _page_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--host",
        default=_variable(env, "HOST", defaults.host),
        help="address to bind (MEOWGENT_HOST; default %(default)s; anything but loopback requires a login)",
    )
    flags.add_argument(
        "--port",
        type=int,
        default=int(_variable(env, "PORT", defaults.port)),
        help="port for the page (MEOWGENT_PORT; default %(default)s)",
    )
    flags.add_argument(
        "--share",
        action="store_true",
        default=str(_variable(env, "SHARE", "")).lower() in _TRUE,
        help="also make a temporary public link; a login is always required (MEOWGENT_SHARE=1)",
    )
    flags.add_argument(
        "--public-name",
        action="append",
        default=[name for name in str(_variable(env, "PUBLIC_NAMES", "")).split(",") if name.strip()],
        metavar="NAME",
        help="another host name this page is reached at, such as a reverse proxy's; repeat for several "
        "(MEOWGENT_PUBLIC_NAMES, comma-separated). Requests for any other name are refused",
    )


def _page(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    public_names = tuple(name.strip().lower() for name in args.public_name)
    return {"host": args.host, "port": args.port, "share": args.share, "public_names": public_names}


def _folder_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--workspace",
        default=str(defaults.workspace),
        help="the only folder the agent's file tools and shell see "
        f"(MEOWGENT_WORKSPACE; default: ~/{WORKSPACE_FOLDER}, made if missing)",
    )
    flags.add_argument(
        "--data-dir",
        default=str(_variable(env, "DATA_DIR", defaults.data_dir)),
        help="where conversations are stored (MEOWGENT_DATA_DIR; default %(default)s)",
    )


def _folders(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    return {"workspace": Path(args.workspace), "data_dir": Path(args.data_dir)}


def _login_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--auth",
        type=_parse_auth,
        default=None,
        metavar="USER:PASS",
        help="require this login (MEOWGENT_AUTH); other users of this computer can see flags, so prefer the "
        "variable or --auth-file",
    )
    flags.add_argument(
        "--auth-file",
        default=None,
        metavar="FILE",
        help="require the login in the first line of FILE, as USER:PASS (MEOWGENT_AUTH_FILE)",
    )


def _login(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    """The login, from the first of: --auth, --auth-file, MEOWGENT_AUTH, MEOWGENT_AUTH_FILE; and the owner's token."""
    auth, auth_file = args.auth, None
    if auth is None and args.auth_file:
        auth, auth_file = _read_auth_file(args.auth_file), args.auth_file
    if auth is None and env.get("MEOWGENT_AUTH"):
        auth = _parse_auth(env["MEOWGENT_AUTH"])
    if auth is None and env.get("MEOWGENT_AUTH_FILE"):
        auth, auth_file = _read_auth_file(env["MEOWGENT_AUTH_FILE"]), env["MEOWGENT_AUTH_FILE"]
    return {
        "auth": auth,
        "auth_file": Path(auth_file).expanduser().resolve() if auth_file else None,
        "token": _token(env.get(TOKEN_VARIABLE)),
    }


def _watch_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--max-watchers",
        type=int,
        default=int(_variable(env, "MAX_WATCHERS", defaults.max_watchers)),
        metavar="N",
        help="people who may watch this app's watch links at once (MEOWGENT_MAX_WATCHERS; default %(default)s)",
    )


def _watch(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    return {"max_watchers": args.max_watchers}


def _limit_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--num-ctx",
        type=int,
        default=int(_variable(env, "NUM_CTX", defaults.num_ctx)),
        help="largest context window to ask the model for (MEOWGENT_NUM_CTX; default %(default)s)",
    )
    flags.add_argument(
        "--shell-timeout",
        type=float,
        default=float(_variable(env, "SHELL_TIMEOUT", defaults.shell_timeout)),
        help="seconds before a shell command is killed (MEOWGENT_SHELL_TIMEOUT; default %(default)s)",
    )
    flags.add_argument(
        "--read-timeout",
        type=float,
        default=float(_variable(env, "READ_TIMEOUT", defaults.read_timeout)),
        help="seconds of silence before an answer counts as stalled (MEOWGENT_READ_TIMEOUT; default %(default)s)",
    )


def _limits(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    return {"num_ctx": args.num_ctx, "shell_timeout": args.shell_timeout, "read_timeout": args.read_timeout}


def _sandbox_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--no-sandbox",
        dest="sandbox",
        action="store_false",
        default=str(_variable(env, "SANDBOX", "on")).lower() not in _OFF,
        help="run shell commands without the OS sandbox; not recommended (MEOWGENT_SANDBOX=off)",
    )
    flags.add_argument(
        "--bwrap",
        default=_variable(env, "BWRAP", None),
        metavar="FILE",
        help="the bubblewrap program for the sandbox (MEOWGENT_BWRAP; default: /usr/bin/bwrap, then bwrap on "
        "PATH, then the one installed with Meowgent)",
    )
    flags.add_argument(
        "--shell-env",
        action="append",
        type=_shell_env_name,
        default=[],
        metavar="NAME",
        help="also give shell commands this variable of Meowgent's environment; repeat for several "
        "(MEOWGENT_SHELL_ENV, comma-separated). Commands get only what a shell needs otherwise",
    )


def _sandbox(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    listed = [_shell_env_name(name) for name in _listed(str(_variable(env, "SHELL_ENV", "")))]
    return {
        "sandbox": args.sandbox,
        "bwrap": Path(args.bwrap).expanduser() if args.bwrap else None,
        "shell_env": tuple(dict.fromkeys([*listed, *args.shell_env])),
    }


def _server_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--model",
        default=_variable(env, "MODEL", defaults.model),
        help="model a new chat starts with; NAME@SERVER pins it to one of the model servers, named by its host "
        "(with :PORT where two share one), such as qwen3@gpu-box (MEOWGENT_MODEL; default %(default)s)",
    )
    flags.add_argument(
        "--ollama-host",
        action="append",
        default=[],
        metavar="URL",
        help="an Ollama server; repeat for several (MEOWGENT_OLLAMA_HOSTS, comma-separated; default: OLLAMA_HOST, "
        f"else {DEFAULT_OLLAMA_HOST})",
    )
    flags.add_argument(
        "--openai-url",
        action="append",
        default=[],
        metavar="URL",
        help="an OpenAI-compatible server's API, such as http://gpu-box:8000/v1 (vLLM, llama.cpp, LM Studio, "
        "LiteLLM); repeat for several (MEOWGENT_OPENAI_URLS, comma-separated)",
    )
    flags.add_argument(
        "--openai-key-file",
        default=_variable(env, "OPENAI_KEY_FILE", None),
        metavar="FILE",
        help="the API key for those servers, in the first line of FILE (MEOWGENT_OPENAI_KEY_FILE; or the key "
        "itself in MEOWGENT_OPENAI_API_KEY)",
    )


def _servers(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    """The model servers: Ollama's (the flags, else the list, else OLLAMA_HOST), OpenAI-compatible ones, their key."""
    ollama_hosts = args.ollama_host or _listed(env.get("MEOWGENT_OLLAMA_HOSTS", ""))
    key_file = args.openai_key_file
    key = _read_key_file(key_file) if key_file else env.get("MEOWGENT_OPENAI_API_KEY")
    return {
        "model": args.model,
        "ollama_host": ollama_hosts[0] if ollama_hosts else env.get("OLLAMA_HOST") or DEFAULT_OLLAMA_HOST,
        "ollama_hosts": tuple(ollama_hosts),
        "openai_urls": tuple(args.openai_url or _listed(env.get("MEOWGENT_OPENAI_URLS", ""))),
        "openai_key": Secret(key.strip()) if key and key.strip() else None,
        "openai_key_file": Path(key_file).expanduser().resolve() if key_file else None,
    }


def _web_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--allow-private-fetch",
        action="store_true",
        default=str(_variable(env, "ALLOW_PRIVATE_FETCH", "")).lower() in _TRUE,
        help="let web_fetch reach private and loopback addresses (MEOWGENT_ALLOW_PRIVATE_FETCH=1)",
    )


def _web(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    return {"allow_private_fetch": args.allow_private_fetch}


def _mcp_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    flags.add_argument(
        "--mcp-config",
        default=_variable(env, "MCP_CONFIG", None),
        metavar="FILE",
        help="MCP servers to use as tools (MEOWGENT_MCP_CONFIG; default: mcp.json in the data folder)",
    )


def _mcp(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    return {"mcp_config": Path(args.mcp_config).expanduser() if args.mcp_config else None}


_MB = 1_000_000
"""A megabyte as the caps' flags count it (the README's "100 MB")."""
_CAPS = (  # (flag, variable after MEOWGENT_, field, bytes per unit, what it caps)
    ("--max-upload-mb", "MAX_UPLOAD_MB", "upload_max_bytes", _MB, "megabytes one uploaded file may have"),
    ("--max-uploads", "MAX_UPLOADS", "upload_max_files", 1, "files one upload may bring at once"),
    ("--max-zip-mb", "MAX_ZIP_MB", "zip_max_bytes", _MB, "megabytes of files the whole-workspace zip may hold"),
    (
        "--max-checkpoints-mb", "MAX_CHECKPOINTS_MB", "checkpoint_max_bytes", _MB,
        "megabytes of files kept to undo the agent's writes (the oldest are dropped past it)",
    ),
)  # fmt: skip


def _cap_value(text: str, *, named: str, unit: int) -> int:
    """A cap's flag or variable as bytes (or a count when `unit` is 1): a number above zero, whole for a count."""
    try:
        number = float(text) if unit > 1 else int(text)
    except ValueError:
        number = 0
    if not number > 0 or number * unit > 2**62 or int(number * unit) < 1:
        kind = "a number of megabytes above 0, such as 100 or 0.5" if unit > 1 else "a whole number above 0"
        raise argparse.ArgumentTypeError(f"{named} must be {kind}, not {text!r}")
    return int(number * unit)


def _cap_flags(flags: Flags, env: Env, defaults: Settings) -> None:
    for flag, variable, name, unit, what in _CAPS:
        default = getattr(defaults, name) / unit
        flags.add_argument(
            flag,
            dest=name,
            default=None,
            metavar="MB" if unit > 1 else "N",
            help=f"{what} (MEOWGENT_{variable}; default {default:g})",
        )


def _caps(args: argparse.Namespace, env: Env) -> dict[str, Any]:
    """Each cap from its flag, else its variable, else the default; a bad value names where it came from."""
    fields: dict[str, Any] = {}
    for flag, variable, name, unit, _ in _CAPS:
        given = getattr(args, name)
        if given is not None:
            fields[name] = _cap_value(given, named=flag, unit=unit)
        elif f"MEOWGENT_{variable}" in env:
            fields[name] = _cap_value(env[f"MEOWGENT_{variable}"], named=f"MEOWGENT_{variable}", unit=unit)
    return fields


SETTINGS_GROUPS: tuple[SettingsGroup, ...] = (
    SettingsGroup("the page", _page_flags, _page),
    SettingsGroup("folders", _folder_flags, _folders),
    SettingsGroup("limits", _limit_flags, _limits),
    SettingsGroup("sandbox", _sandbox_flags, _sandbox),
    SettingsGroup("login", _login_flags, _login),
    SettingsGroup("watch links", _watch_flags, _watch),
    SettingsGroup("files", _cap_flags, _caps),
    SettingsGroup("model servers", _server_flags, _servers),
    SettingsGroup("web", _web_flags, _web),
    SettingsGroup("MCP", _mcp_flags, _mcp),
)
"""Every group of settings, in the order `--help` lists them and their errors are found (the first one is shown)."""


def parse_settings(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Build Settings from command-line flags; each flag falls back to its MEOWGENT_* variable."""
    env = os.environ if environ is None else environ
    parser = settings_parser(env)
    args = parser.parse_args(argv)
    fields: dict[str, Any] = {}
    try:
        for group in SETTINGS_GROUPS:
            fields.update(group.read(args, env))
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    return Settings(**fields)


def settings_parser(env: Env) -> argparse.ArgumentParser:
    """The command line: every group's flags, under its title, each defaulting to its variable in `env`."""
    defaults = Settings(workspace=Path(env.get("MEOWGENT_WORKSPACE", default_workspace())))
    parser = argparse.ArgumentParser(
        prog="python app.py",
        description="Meowgent: chat with a local Ollama model that can use tools, with your approval.",
        epilog=f"Without a login, the page answers only the link printed at start; {TOKEN_VARIABLE} chooses its "
        f"token, and {TOKEN_VARIABLE}= (empty) lets every account on this computer use the page.",
    )
    for group in SETTINGS_GROUPS:
        group.flags(parser.add_argument_group(group.title), env, defaults)
    return parser
