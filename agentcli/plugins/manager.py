"""Loading plugins: config ``plugin`` entries (module paths or .py files) and the ``agentcli``
entry-point group; each is a module or object with ``@hookimpl`` functions."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

import pluggy

from agentcli.bus import Bus
from agentcli.plugins.hookspecs import Specs


class PluginError(Exception):
    pass


class Plugins:
    def __init__(self, bus: Bus | None = None) -> None:
        self.pm = pluggy.PluginManager("agentcli")
        self.pm.add_hookspecs(Specs)
        if bus is not None:
            bus.subscribe(lambda event: self.pm.hook.event(event=event))

    def register(self, plugin: Any, name: str | None = None) -> None:
        self.pm.register(plugin, name=name)

    def load(self, specs: list[str], base: Path) -> None:
        for spec in specs:
            self.register(_import(spec, base), name=spec)
        self.pm.load_setuptools_entrypoints("agentcli")

    @property
    def hook(self) -> Any:
        return self.pm.hook


def _import(spec: str, base: Path) -> Any:
    path = (base / spec).expanduser() if not Path(spec).is_absolute() else Path(spec)
    try:
        if spec.endswith(".py"):
            if not path.is_file():
                raise PluginError(f"plugin file not found: {path}")
            module_spec = importlib.util.spec_from_file_location(f"agentcli_plugin_{path.stem}", path)
            if module_spec is None or module_spec.loader is None:
                raise PluginError(f"cannot load plugin {path}")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
            return module
        return importlib.import_module(spec)
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"plugin '{spec}' failed to load: {type(exc).__name__}: {exc}") from None
