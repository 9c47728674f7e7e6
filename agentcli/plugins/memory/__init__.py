"""The bundled memory plugin (``"plugin": ["memory"]``): the model sees how full its context is, can
read and search its own history, and can compact at a moment it chooses. Built on the public plugin
API only."""

from agentcli.plugins.memory.plugin import MemoryPlugin


def make_plugin() -> MemoryPlugin:
    return MemoryPlugin()


__all__ = ["MemoryPlugin", "make_plugin"]
