"""MCP client: OpenCode's `mcp` servers, on the official `mcp` SDK.

`host.McpHost` runs every configured server in one background thread (an asyncio loop that owns the
client sessions); `tool.McpTool` is how a server's tool looks to the loop (``<server>_<tool>``, asked
and truncated like any tool). Importing this package is free: the SDK is imported by the host's
thread only, so a turn with no MCP server configured never loads it.
"""
