"""`FileRefused`: why the Files panel could not do something, as a kind and values the page words in either language."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

RefusalKind = Literal[
    "unsafe_path",  # outside the workspace, through a link, a loop, a NUL: `detail` says which
    "changed",  # a folder on the way, or a write's temporary file, was swapped while in use (another process)
    "missing",
    "not_file",
    "not_folder",
    "bad_name",  # an upload's name: `why` says what is wrong with it
    "exists",  # an upload would replace a file; the page asks, then sends replace=True
    "too_large",  # an upload over `limit` bytes
    "too_many",  # more uploads at once than `limit`
    "zip_too_large",  # the workspace's files add up to more than `limit` bytes
    "io",  # the system refused a read or write: `detail`
]


class FileRefused(Exception):
    """A refusal with a plain English `message` (logs), a `kind` and plain `values` (the page's catalogs)."""

    def __init__(self, kind: RefusalKind, message: str, *, values: Mapping[str, object] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.values = dict(values or {})
