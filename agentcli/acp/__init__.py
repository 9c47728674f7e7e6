"""agentcli as an Agent Client Protocol agent (``agentcli acp``): editors drive its sessions.

``server`` (stdio, logging) → ``transport`` (JSON-RPC lines, bad input answered) → ``agent`` (the
protocol's methods) → ``session`` (one agentcli session and its SessionLoop) → ``updates`` /
``tool_calls`` / ``replay`` (what the client is shown), ``permission`` (questions asked in the
client), ``files`` (in-project files through the client), ``commands`` and ``prompt``.
"""
