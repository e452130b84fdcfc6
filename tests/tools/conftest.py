"""What the tool tests share: whether this computer can run the sandbox they try to break."""

import pytest

from meowgent.config import Settings
from meowgent.tools.sandbox import NoSandbox, sandbox_for

FOUND = sandbox_for(Settings())
needs_sandbox = pytest.mark.skipif(isinstance(FOUND, NoSandbox), reason=f"no sandbox here: {FOUND}")
"""For tests of what the sandbox forbids. test_sandbox.py fails, instead of skipping, where user namespaces work
and still no sandbox was found."""
