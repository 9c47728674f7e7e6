"""Loading plugins and calling their hooks.

A plugin spec is a bundled name (``memory``), a module path, a ``.py`` file (relative to the project
root) or a ``file://`` URL; entry points of the ``agentcli`` group load after the configured ones.
A module that defines ``make_plugin()`` is registered as the object it returns (per-loop state lives
there, not in the module); otherwise its ``@hookimpl`` functions are.

Hooks are called by ``trigger``, not by pluggy's own caller: pluggy calls the last registered first
and lets one exception end the whole call. Here each implementation runs in configured order on a copy
of ``output``; the copy replaces ``output`` only when the implementation returns, and a failure is
reported once per turn as one line on stderr.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pluggy
from pydantic import BaseModel

from agentcli.bus import Bus
from agentcli.plugins.bundled import BUNDLED
from agentcli.plugins.hookspecs import Specs

DISABLE_ENV = "AGENTCLI_DISABLE_PLUGINS"


class PluginError(Exception):
    pass


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def snapshot(value: Any) -> Any:
    """A copy deep enough that a failed hook leaves nothing behind: containers and records are
    copied, other objects (functions, tools, models' classes) are shared."""
    if isinstance(value, dict):
        return {k: snapshot(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snapshot(v) for v in value]
    if isinstance(value, BaseModel):
        return value.model_copy(deep=True)
    return value


class Plugins:
    def __init__(self, bus: Bus | None = None, report: Callable[[str], None] = _stderr_line) -> None:
        self.pm = pluggy.PluginManager("agentcli")
        self.pm.add_hookspecs(Specs)
        self.report = report
        self._reported: set[tuple[str, str]] = set()
        self.failures: list[tuple[str, str, str]] = []  # (plugin, hook, error), for callers and tests
        if bus is not None:
            bus.subscribe(lambda event: self.trigger("event", event=event))

    # --- loading -----------------------------------------------------------------------------

    def register(self, plugin: Any, name: str | None = None) -> None:
        self.pm.register(plugin, name=name)

    def load(self, specs: list[str], base: Path, *, entry_points: bool = True) -> None:
        """Load every spec; one that fails is reported and skipped, the others still load."""
        if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
            return
        for spec in specs:
            try:
                self.register(_instantiate(_import(spec, base)), name=spec)
            except Exception as exc:
                self._fail(spec, "load", exc)
        if entry_points:
            for ep in importlib.metadata.entry_points(group="agentcli"):
                try:
                    self.register(_instantiate(ep.load()), name=ep.name)
                except Exception as exc:
                    self._fail(ep.name, "load", exc)

    # --- calling -----------------------------------------------------------------------------

    def new_turn(self) -> None:
        """A new user turn: a plugin that keeps failing is reported again, once."""
        self._reported.clear()

    def has(self, hook: str) -> bool:
        return bool(getattr(self.pm.hook, hook).get_hookimpls())

    def trigger(self, hook: str, input: Any = None, output: Any = None, **kwargs: Any) -> Any:
        """Call ``hook`` on every plugin in order; returns ``output`` (mutated in place)."""
        impls = [i for i in getattr(self.pm.hook, hook).get_hookimpls() if not (i.hookwrapper or i.wrapper)]
        # pluggy keeps them in registration order with trylast first and tryfirst last.
        impls.sort(key=lambda i: 0 if i.tryfirst else 2 if i.trylast else 1)
        for impl in impls:
            args = {"input": input, "output": output, **kwargs}
            trial = snapshot(output) if isinstance(output, dict | list) else output
            args["output"] = trial
            try:
                impl.function(**{name: args[name] for name in impl.argnames})
            except KeyboardInterrupt:
                raise
            except Exception as exc:
                self._fail(impl.plugin_name, hook, exc)
                continue
            if isinstance(output, dict) and trial is not output:
                output.clear()
                output.update(trial)
            elif isinstance(output, list) and trial is not output:
                output[:] = trial
        return output

    def _fail(self, plugin: str, hook: str, exc: BaseException) -> None:
        error = _first_line(exc)
        self.failures.append((plugin, hook, error))
        if (plugin, hook) in self._reported:
            return
        self._reported.add((plugin, hook))
        verb = "failed to load" if hook == "load" else f"failed in {hook}"
        self.report(
            f"agentcli: plugin '{plugin}' {verb} ({error}); {'skipped' if hook == 'load' else 'its change was dropped'}"
        )

    @property
    def hook(self) -> _Caller:
        """``plugins.hook.NAME(input=…, output=…)``: the same as ``trigger("NAME", …)``."""
        return _Caller(self)


class _Caller:
    def __init__(self, plugins: Plugins) -> None:
        self._plugins = plugins

    def __getattr__(self, hook: str) -> _HookCaller:
        return _HookCaller(self._plugins, hook)


class _HookCaller:
    """One hook, called the isolated way; ``get_hookimpls`` as pluggy's caller has it."""

    def __init__(self, plugins: Plugins, name: str) -> None:
        self._plugins, self._name = plugins, name

    def __call__(self, **kwargs: Any) -> Any:
        return self._plugins.trigger(self._name, **kwargs)

    def get_hookimpls(self) -> list[Any]:
        return list(getattr(self._plugins.pm.hook, self._name).get_hookimpls())


def _instantiate(module: Any) -> Any:
    factory = getattr(module, "make_plugin", None)
    return factory() if callable(factory) else module


def _import(spec: str, base: Path) -> Any:
    if spec in BUNDLED:
        return importlib.import_module(BUNDLED[spec])
    if spec.startswith("file://"):
        rest = spec[len("file://") :]
        # file:///abs and file://localhost/abs are absolute; file://./x or file://x are relative to base.
        absolute = rest.startswith(("/", "localhost/"))
        path = Path(unquote(urlparse(spec).path if absolute else rest))
        return _import_file(path if path.is_absolute() else base / path)
    if spec.endswith(".py"):
        path = Path(spec).expanduser()
        return _import_file(path if path.is_absolute() else base / path)
    return importlib.import_module(spec)


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise PluginError(f"plugin file not found: {path}")
    module_spec = importlib.util.spec_from_file_location(f"agentcli_plugin_{path.stem}", path)
    if module_spec is None or module_spec.loader is None:
        raise PluginError(f"cannot load plugin {path}")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module
