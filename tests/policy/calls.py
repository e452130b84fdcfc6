"""What the policy tests share: calls as the agent makes them, and a set of shell rules."""

from __future__ import annotations

from meowgent.events import ToolCall
from meowgent.policy.rules import Rule

SHELL_RULES = [
    Rule("run_shell", "allow", command="ls"),
    Rule("run_shell", "allow", command="git status*"),
    Rule("run_shell", "allow", command="echo *"),
    Rule("run_shell", "allow", command="cat *"),
    Rule("run_shell", "allow", command="v=* ls"),
    Rule("run_shell", "deny", command="rm *"),
    Rule("run_shell", "deny", command="curl *"),
    Rule("run_shell", "ask", command="git push*"),
]


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall("call-1", name, arguments)


def shell(command: str) -> ToolCall:
    return call("run_shell", command=command)
