"""The tools the model can call: the registry, the workspace guard, the file tools, the shell (in its sandbox),
web fetch."""

from meowgent.tools.registry import ToolContext, ToolError, ToolRegistry, run_tool, tool

__all__ = ["ToolContext", "ToolError", "ToolRegistry", "run_tool", "tool"]
