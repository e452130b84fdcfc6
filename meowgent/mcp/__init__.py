"""MCP servers as tools: their configuration, one background loop that talks to them, and their tools in our registry.

- `config`: `mcp.json` (the de-facto `{"mcpServers": {...}}` format) -> `ServerConfig`s, or a plain error.
- `client`: `McpManager` owns one asyncio loop in a thread and every server session on it; the run
  thread calls a tool synchronously and Stop cancels it.
- `sandboxed`: how a stdio server is really started: as configured, or in the sandbox, with hosts behind a proxy of
  its own that lives as long as it does.
- `adapter`: an MCP tool as an `ExternalTool` named `SERVER__TOOL`, and its results as plain text.
"""
