"""A hostile neighbour for the race tests: a separate process that swaps Meowgent's temporary files for links.

Run as `python swapper.py SEED OUTSIDE_FILE OUTSIDE_FOLDER FOLDER...`. It watches each FOLDER with inotify and, the
moment a `.meowgent-*.tmp` file appears there, moves it away and puts a symbolic link in its place: to OUTSIDE_FILE,
or to a fresh, hard-to-guess name in OUTSIDE_FOLDER (which must never come to exist). Some swaps are undone a moment
later, so a write may also find its own file back. It also swaps the file being written for a link now and then.
It prints `ready` once it watches, and on SIGTERM the number of swaps it made, then exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import secrets
import signal
import struct
import sys
import time

IN_CREATE = 0x100
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name


def main(seed: int, outside_file: str, outside_folder: str, folders: list[str]) -> None:
    chance = random.Random(seed)
    libc = ctypes.CDLL(None, use_errno=True)
    watcher = libc.inotify_init1(0)
    folder_of = {libc.inotify_add_watch(watcher, os.fsencode(folder), IN_CREATE): folder for folder in folders}
    swaps = 0
    planted: set[str] = set()  # the links it made itself: their own IN_CREATE must not start another swap

    def report(*_: object) -> None:
        print(swaps, flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, report)
    print("ready", flush=True)
    while True:
        data = os.read(watcher, 65_536)
        for wd, name in _events(data):
            path = os.path.join(folder_of[wd], name)
            if path in planted:
                planted.discard(path)
            elif name.startswith(".meowgent-") and name.endswith(".tmp"):
                made = _swap(path, chance, outside_file, outside_folder)
                planted.update(made)
                swaps += bool(made)


def _events(data: bytes) -> list[tuple[int, str]]:
    found = []
    offset = 0
    while offset < len(data):
        wd, _mask, _cookie, length = _EVENT.unpack_from(data, offset)
        name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
        found.append((wd, os.fsdecode(name)))
        offset += _EVENT.size + length
    return found


def _swap(temp: str, chance: random.Random, outside_file: str, outside_folder: str) -> list[str]:
    """One swap of `temp` for a link; the links it made (none if the writer finished first)."""
    away = f"{temp}.away"
    aim = outside_file if chance.random() < 0.6 else os.path.join(outside_folder, f"fresh-{secrets.token_hex(8)}")
    try:
        if chance.random() < 0.2:
            os.unlink(temp)
        else:
            os.rename(temp, away)
        os.symlink(aim, temp)
    except OSError:
        return []
    made = [temp]
    if chance.random() < 0.3:  # now and then put the writer's own file back
        time.sleep(chance.random() / 1000)
        with contextlib.suppress(OSError):
            os.rename(away, temp)
    if chance.random() < 0.2:  # and now and then make the file being written a link out as well
        with contextlib.suppress(OSError):
            for name in os.listdir(os.path.dirname(temp)):
                if name.endswith(".txt"):
                    target = os.path.join(os.path.dirname(temp), name)
                    os.rename(target, target + ".away")
                    os.symlink(outside_file, target)
                    made.append(target)
                    break
    return made


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:])
