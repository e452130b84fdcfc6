"""Meowgent's entry point: flags and environment -> Settings -> build_app() -> launch()."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import sys
import time
import webbrowser
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

# Read by gradio at import time, so set before anything imports it.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from meowgent.config import TOKEN_VARIABLE, Settings, default_workspace, is_loopback
from meowgent.flags import parse_settings

GENERATED_USER_PREFIX = "meow-"
"""A made-up login name is this and random letters: a stranger who does not know it cannot pause it."""


def login_for(settings: Settings) -> tuple[tuple[str, str] | None, bool]:
    """The login the page requires, and whether we made it up.

    A public link or a non-loopback address never serves without a login: a page that runs
    shell commands must not be open to whoever finds the URL. Both the name and the password
    we make up are random: wrong guesses for a known name would pause its logins (meowgent.ui.routes.login).
    """
    if settings.auth is not None:
        return settings.auth, False
    if settings.share or not is_loopback(settings.host):
        return (GENERATED_USER_PREFIX + secrets.token_hex(4), secrets.token_urlsafe(12)), True
    return None, False


def main(argv: Sequence[str] | None = None) -> None:
    settings = parse_settings(argv)
    if settings.workspace == default_workspace():  # named on the first line printed below
        try:
            settings.workspace.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:  # a home folder that does not exist, or that we may not write in
            sys.exit(
                f"Meowgent can't make its workspace folder {settings.workspace} ({exc.strerror}). "
                "Pick a folder with --workspace."
            )
    if not settings.workspace.is_dir():
        sys.exit(
            f"The workspace folder {settings.workspace} does not exist. Create it or pick another with --workspace."
        )
    if _port_taken(settings.host, settings.port):
        sys.exit(f"Port {settings.port} is already in use. Stop the other program or pick another with --port.")
    auth, generated = login_for(settings)

    from meowgent.llm.hosts import UnknownHost, backend_for, named_servers
    from meowgent.llm.openai_client import shown_url
    from meowgent.persist.store import StoreError
    from meowgent.policy.rules import RulesError

    try:
        client = backend_for(settings)
    except UnknownHost as exc:
        sys.exit(str(exc))
    from meowgent.ui.app import serve  # imported late: gradio takes seconds, and a mistake above is told at once

    servers = ", ".join(shown_url(url) for url, _ in named_servers(settings))
    print(f"Meowgent: workspace {settings.workspace}, model servers: {servers}")
    if generated:
        print(f"Login required. User: {auth[0]}  Password: {auth[1]}")
    try:
        demo, local_url, share_url = serve(settings, auth=auth, client=client)
    except RulesError as exc:
        sys.exit(f"Your rules file can't be used: {exc}")
    except StoreError as exc:
        sys.exit(f"{exc}. Pick another folder with --data-dir.")
    with closed_on_stop(demo):  # from here: whoever waits for the link below may stop the app at once
        announce(settings, local_url, share_url, login=auth is not None)
        while demo.is_running:  # not Gradio's block_thread(): it catches Ctrl-C itself, and the app's close never ran
            time.sleep(0.1)


def announce(settings: Settings, local_url: str, share_url: str | None, *, login: bool) -> None:
    """The owner's link (issue 26): the page answers only whoever opens it, or logs in; and the public link."""
    address = page_link(settings, local_url, login=login)
    if not login and settings.token is None:
        print(f"Warning: {TOKEN_VARIABLE} is empty, so every account on this computer can use this page.")
    print(f"Open {address} in your browser.")
    if can_open_a_browser(sys.stdout.isatty(), os.environ, sys.platform):
        webbrowser.open(address)
    if settings.share:
        if share_url:
            print(f"Public link (log in with the password above): {share_url}")
        else:
            print("Could not create a public link (is this computer offline?). Still serving locally.")


@contextlib.contextmanager
def closed_on_stop(demo: Any) -> Iterator[None]:
    """Until Ctrl-C or SIGTERM, then close the app: what its answers streamed is written, its watchers' streams end
    and its MCP servers stop."""
    signal.signal(signal.SIGTERM, _interrupt)  # `kill`, `systemctl stop` and `docker stop` end it as Ctrl-C does
    try:
        yield
    except KeyboardInterrupt:
        pass
    finally:
        for stop in (signal.SIGINT, signal.SIGTERM):  # a second one would cut the close short, with a traceback
            signal.signal(stop, signal.SIG_IGN)
        demo.close(verbose=False)  # the sentence below says it
    print("Meowgent stopped.")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def page_link(settings: Settings, local_url: str, *, login: bool) -> str:
    """The address to open: with the start token when the page has no login and checks it."""
    from meowgent.ui.routes.owner import OwnerToken  # imported late, as the page is: `--help` needs no web stack

    if login or settings.token is None:
        return local_url
    return OwnerToken(settings.token.reveal(), settings.port).url(local_url)


def can_open_a_browser(interactive: bool, environ: Mapping[str, str], platform: str) -> bool:
    """Only for a person at a terminal (not CI, not a pipe) with a desktop: on a bare console `webbrowser` would
    start a text browser in the very terminal Meowgent prints to."""
    desktop = platform in ("darwin", "win32") or bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))
    return interactive and not environ.get("CI") and desktop


def _port_taken(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


if __name__ == "__main__":
    main()
