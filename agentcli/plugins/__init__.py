"""Plugin hooks (pluggy), named after OpenCode's: ``from agentcli.plugins import hookimpl``."""

from agentcli.plugins.hookspecs import hookimpl

__all__ = ["hookimpl"]
