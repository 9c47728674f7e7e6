"""agentcli: a terminal coding agent whose long sessions never die of a full context window."""

__version__ = "0.1.0"
