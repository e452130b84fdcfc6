"""The system prompt: who the agent is, where it works, its tools and the exact call format."""

from __future__ import annotations

import json
import platform
from collections.abc import Iterable
from pathlib import Path

from meowgent.reply.parse import CALL_FORMAT
from meowgent.tools.spec import Tool


def system_prompt(
    tools: Iterable[Tool],
    *,
    workspace: Path,
    operating_system: str | None = None,
    native: bool = False,
    told_format: bool = False,
    brief: bool = False,
) -> str:
    """The instructions sent first in every request.

    `native`: the tools go to the server as `tools=`, and the model calls them in the format it was trained on, so the
    prompt names only what asks the person first and describes no competing call format; unless `told_format`
    (see `ModelProfile.told_format`): then one line says to write `<tool_call>` JSON, which the server's parser or
    ours reads. `brief`: each tool is described in its first sentence only (a small context window).
    """
    tools = list(tools)
    system = operating_system or f"{platform.system()} {platform.release()}".strip()
    if native:
        risky = ", ".join(t.name for t in tools if t.risky)
        usual = "call them in your usual tool-call format."
        call = f"write each call exactly as:\n{CALL_FORMAT}" if told_format else usual
        how = f"""Use the tools you are given to act; {call}
- These tools ask the person first: {risky}."""
    else:
        tool_lines = "\n".join(
            f"- {json.dumps((t.spec().brief() if brief else t.spec()).as_json(), ensure_ascii=False)}"
            + ("  (asks the person first)" if t.risky else "")
            for t in tools
        )
        how = f"""Tools (JSON schema of each):
{tool_lines}

To use a tool, write exactly one block per call, in this format:
{CALL_FORMAT}
- Arguments are a JSON object; escape newlines in strings as \\n.
- Tools marked "asks the person first" run only if the person approves."""
    return f"""You are Meowgent, a careful assistant that can use tools on the person's computer.

Environment:
- Operating system: {system}
- Workspace folder: {workspace}
  File tools and shell commands work inside this folder; use paths relative to it.

{how}
- You may write a short sentence before a call. After your calls, stop and wait: the results
  come back in the next message.
- If the person rejects a call, respect it and try another way or ask them.
- When you have the answer, reply in plain words without a tool call. Reply in the person's language."""
