"""The bridge inside the sandbox: 127.0.0.1:PORT of the command's own network namespace to the host's proxy.

A command with network runs in a network namespace of its own (only its loopback), so the host's abstract Unix
sockets and its 127.0.0.1 are out of reach. Its one way out is the host's proxy (meowgent.tools.netproxy), whose
Unix socket is bound into the sandbox. Programs speak TCP to a proxy, hence this bridge, as Claude Code's sandbox
runtime does with socat (not installed everywhere; the host's Python is, and readable in the sandbox).

The sandbox runs it as `python -I -S -c SOURCE SOCKET PORT -- COMMAND...` (`netproxy.bridged`). It listens first,
so the command never finds the port closed, then forks. The parent becomes the command (same pid: with
`--as-pid-1` it stays the namespace's init); the child forwards connections until the PID namespace ends with the
command. The child's pid is in BRIDGE_PID_VARIABLE, so the check for processes left behind (meowgent.tools.jobs)
does not count it. It runs on every command with network, so it imports only C modules (`_socket`, `_thread`):
`socket` and `threading` would add about 25 ms to each command's start.
"""

import _socket
import _thread
import os
import sys

PORT = 3128
"""Where the command finds its proxy; the namespace is its own, so no other program holds it."""
SOCKET = "/run/meowgent-proxy.sock"
"""Where the host's proxy socket is bound in the sandbox (/run is an empty tmpfs there)."""
BRIDGE_PID_VARIABLE = "MEOWGENT_PROXY_BRIDGE"
_CHUNK = 65536
_SHUT_WR = 1


def _pump(source, target) -> None:
    """Copy until the end of `source`, then say so to `target` (a half close: the other way may still talk)."""
    try:
        while chunk := source.recv(_CHUNK):
            target.sendall(chunk)
        target.shutdown(_SHUT_WR)
    except OSError:
        source.close()
        target.close()


def _forward(client, path: str) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    _thread.start_new_thread(_pump, (upstream, client))
    _pump(client, upstream)


def _serve(listener, path: str) -> None:
    while True:
        descriptor, _ = listener._accept()
        client = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM, 0, descriptor)
        _thread.start_new_thread(_forward, (client, path))


def main(arguments: list[str]) -> None:
    path, port, command = arguments[0], int(arguments[1]), arguments[3:]
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    child = os.fork()
    if child == 0:
        try:
            _serve(listener, path)
        finally:
            os._exit(0)
    listener.close()
    os.execvpe(command[0], command, {**os.environ, BRIDGE_PID_VARIABLE: str(child)})


if __name__ == "__main__":
    main(sys.argv[1:])
