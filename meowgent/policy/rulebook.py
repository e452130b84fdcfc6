"""Whose rules judge a call: the server's rules file, plus the rules each owner saves from the page.

Rules saved from the page belong to the browser or account that saved them and judge only that
owner's chats: another browser cannot make this owner's risky calls run without a card. The
server's own `rules.json` in the data folder, edited by whoever runs the server, applies to
everyone, and no owner's rules can undo its denials (deny beats ask beats allow).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from pathlib import Path

from meowgent.persist.private import FILE_MODE, private_folder, write_private
from meowgent.policy.rules import RULES_FILE, Policy, Rule, RulesError, parse_rules
from meowgent.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

OWNER_RULES_FOLDER = "rules"

RULES_EXAMPLE = """[
  {"tool": "run_shell", "action": "allow", "command": "git status*"},
  {"tool": "run_shell", "action": "deny", "command": "rm -rf *"},
  {"tool": "write_file", "action": "deny", "path": "secrets/**"}
]
"""


class Rulebook:
    """The policy for each owner; RulesError at start if the server's rules file is broken."""

    def __init__(self, data_dir: Path, workspace: Path, *, tools: ToolRegistry | None = None) -> None:
        self._workspace = workspace
        self._tools = tools or ToolRegistry.builtins()
        server_file = data_dir / RULES_FILE
        if server_file.is_file():  # written by hand, maybe readable by all
            server_file.chmod(FILE_MODE)
        self.server_rules: tuple[Rule, ...] = Policy.load(server_file, workspace, tools=self._tools).rules
        self._folder = data_dir / OWNER_RULES_FOLDER
        self._policies: dict[str, Policy] = {}
        self._lock = threading.Lock()

    def policy(self, owner: str) -> Policy:
        """The server's rules and this owner's, together."""
        with self._lock:
            if owner not in self._policies:
                self._policies[owner] = self._combined(self._owner_rules(owner))
            return self._policies[owner]

    def text(self, owner: str) -> str:
        """The owner's rules as they saved them, or an example to start from."""
        path = self._path(owner)
        return path.read_text(encoding="utf-8") if path.exists() else RULES_EXAMPLE

    def save(self, owner: str, text: str) -> int:
        """Check and keep the owner's rules; they judge the owner's next call. RulesError says what is wrong."""
        rules = parse_rules(text, tools=self._tools)
        private_folder(self._folder)
        write_private(self._path(owner), text)
        with self._lock:
            self._policies[owner] = self._combined(rules)
        return len(rules)

    def _combined(self, owner_rules: list[Rule]) -> Policy:
        return Policy([*self.server_rules, *owner_rules], self._workspace, tools=self._tools)

    def _owner_rules(self, owner: str) -> list[Rule]:
        path = self._path(owner)
        try:
            if not path.exists():
                return []
            return parse_rules(path.read_text(encoding="utf-8"), source=str(path), tools=self._tools)
        except (OSError, UnicodeDecodeError, RulesError) as exc:  # edited by hand since: risky calls ask
            log.warning("ignoring the owner's rules file %s: %s", path, exc)
            return []

    def _path(self, owner: str) -> Path:
        # Hashed: an owner name or key is never a file name (no `/`, no `..`), nor readable in a listing.
        return self._folder / f"{hashlib.sha256(owner.encode()).hexdigest()[:32]}.json"
