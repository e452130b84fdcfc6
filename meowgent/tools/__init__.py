"""The tools the model can call: what a tool is (`spec`), the registry each app makes, the workspace guard, the
file and search tools, the shell (in its sandbox), web fetch."""

from meowgent.tools.registry import ToolRegistry, run_tool
from meowgent.tools.spec import ToolContext, ToolError, ToolTraits, tool

__all__ = ["ToolContext", "ToolError", "ToolRegistry", "ToolTraits", "run_tool", "tool"]
