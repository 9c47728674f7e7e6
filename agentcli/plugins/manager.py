"""Loading plugins and calling their hooks, through pluggy's own hook caller.

A plugin spec is a bundled name (``memory``), a module path, a ``.py`` file (relative to the project
root) or a ``file://`` URL; entry points of the ``agentcli`` group load after the configured ones.
A module that defines ``make_plugin()`` is registered as the object it returns (per-loop state lives
there, not in the module); otherwise its ``@hookimpl`` functions are. ``AGENTCLI_LOAD_PLUGINS``
(comma-separated names) loads only the plugins it names, ``AGENTCLI_DISABLE_PLUGINS=1`` none.

Hooks are pluggy hooks called by pluggy (``plugins.hook.NAME(...)`` is pluggy's HookCaller), so
``tryfirst``/``trylast``, ``wrapper=True``, ``hookwrapper=True`` and a ``firstresult`` spec behave
as pluggy documents. Two things are agentcli's own:

- Order: pluggy calls the last registered implementation first; agentcli keeps OpenCode's order (as
  configured, then entry points) by registering in reverse (``register`` re-registers the others
  behind a newcomer). So the first plugin runs first, and its wrapper is the outermost.
- Isolation: each implementation is registered wrapped (``isolation.isolate``): it runs on a copy
  of ``output`` kept only when it returns, and a failure is reported once per turn as one line on
  stderr while the other implementations go on.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pluggy

from agentcli.bus import Bus
from agentcli.config import BUNDLED_PLUGINS as BUNDLED
from agentcli.plugins.hookspecs import Specs
from agentcli.plugins.isolation import isolate, snapshot

DISABLE_ENV = "AGENTCLI_DISABLE_PLUGINS"
LOAD_ENV = "AGENTCLI_LOAD_PLUGINS"  # comma-separated names: only these load ("" loads none)

__all__ = ["DISABLE_ENV", "LOAD_ENV", "PluginError", "Plugins", "snapshot"]


class PluginError(Exception):
    pass


def _stderr_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def allowed_names(env: Mapping[str, str] | None = None) -> set[str] | None:
    """The names ``AGENTCLI_LOAD_PLUGINS`` lets load, or None when it is not set (all may load)."""
    raw = (os.environ if env is None else env).get(LOAD_ENV)
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


class _Isolated:
    """What pluggy registers for one plugin: its hook implementations, each isolated, under the
    names and marker options the plugin gave them."""

    def __init__(self, plugin: Any, hooks: dict[str, Callable[..., Any]]) -> None:
        self.plugin = plugin
        for attr, function in hooks.items():
            setattr(self, attr, function)


class Plugins:
    def __init__(self, bus: Bus | None = None, report: Callable[[str], None] = _stderr_line) -> None:
        self.pm = pluggy.PluginManager("agentcli")
        self.pm.add_hookspecs(Specs)
        self.report = report
        self._reported: set[tuple[str, str]] = set()
        self.failures: list[tuple[str, str, str]] = []  # (plugin, hook, error), for callers and tests
        self._order: list[tuple[str, _Isolated]] = []  # configured order
        # One hook call at a time, whichever thread makes it (a turn's parallel tasks run in several):
        # a plugin never has to be thread-safe. Reentrant: a hook may lead to another.
        self._calling = threading.RLock()

        def before(*_: Any) -> None:
            self._calling.acquire()

        self.pm.add_hookcall_monitoring(before, lambda *_: self._calling.release())
        if bus is not None:
            bus.subscribe(lambda event: self.trigger("event", event=event))

    # --- loading -----------------------------------------------------------------------------

    def register(self, plugin: Any, name: str | None = None) -> None:
        """Register ``plugin`` after the others: its implementations run after theirs."""
        name = name or self.pm.get_canonical_name(plugin)
        proxy = self._isolated(plugin, name)
        self.pm.register(proxy, name=name)  # checks the hooks against the specs, and the name
        for earlier, _ in self._order:
            self.pm.unregister(name=earlier)
        for earlier, other in reversed(self._order):  # pluggy calls the last registered first
            self.pm.register(other, name=earlier)
        self._order.append((name, proxy))

    def _isolated(self, plugin: Any, name: str) -> _Isolated:
        hooks: dict[str, Callable[..., Any]] = {}
        marker = f"{self.pm.project_name}_impl"
        for attr in dir(plugin):
            opts = self.pm.parse_hookimpl_opts(plugin, attr)
            if opts is None:
                continue
            hook = opts.get("specname") or attr

            def fail(exc: BaseException, hook: str = hook) -> None:
                self._fail(name, hook, exc)

            function = isolate(getattr(plugin, attr), dict(opts), fail)
            setattr(function, marker, dict(opts))
            hooks[attr] = function
        return _Isolated(plugin, hooks)

    def load(self, specs: list[str], base: Path, *, entry_points: bool = True) -> None:
        """Load every spec; one that fails is reported and skipped, the others still load."""
        if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
            return
        allowed = allowed_names()
        for spec in specs:
            if allowed is not None and spec not in allowed:
                continue
            if spec not in BUNDLED and opencode_js(spec):
                self.failures.append((spec, "load", "an OpenCode JS/TS plugin"))
                self.report(
                    f"agentcli: plugin '{spec}' is an OpenCode JS/TS plugin; agentcli runs Python plugins "
                    "only (a module, a .py file, or an `agentcli` entry point): skipped, the rest of the "
                    "config is used"
                )
                continue
            try:
                self.register(_instantiate(_import(spec, base)), name=spec)
            except Exception as exc:
                self._fail(spec, "load", exc)
        if entry_points:
            for ep in importlib.metadata.entry_points(group="agentcli"):
                dist = ep.dist.name if ep.dist is not None else None
                if allowed is not None and not {ep.name, dist} & allowed:
                    continue
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
        """Call ``hook`` on every plugin in order (pluggy's caller); returns ``output``, which each
        implementation that returned has changed in place."""
        caller = getattr(self.pm.hook, hook)
        given = {"input": input, "output": output, **kwargs}
        names = caller.spec.argnames if caller.spec is not None else tuple(given)
        caller(**{n: given[n] for n in names if n in given})
        return output

    @property
    def hook(self) -> Any:
        """pluggy's hook relay: ``plugins.hook.NAME(input=…, output=…)`` calls every implementation
        (isolated, in configured order) and returns their results as pluggy does."""
        return self.pm.hook

    def _fail(self, plugin: str, hook: str, exc: BaseException) -> None:
        error = _first_line(exc)
        self.failures.append((plugin, hook, error))
        if (plugin, hook) in self._reported:
            return
        self._reported.add((plugin, hook))
        verb, outcome = (
            ("failed to load", "skipped")
            if hook == "load"
            else (f"failed in {hook}", "its change was dropped")
        )
        self.report(f"agentcli: plugin '{plugin}' {verb} ({error}); {outcome}")


def opencode_js(spec: str) -> bool:
    """An npm package ("@scope/name@3", "opencode-foo") or a JS/TS file: OpenCode's plugins, which
    agentcli cannot run (a Python module name has neither "@", "/" nor "-")."""
    path = spec[len("file://") :] if spec.startswith("file://") else spec
    if path.endswith((".js", ".mjs", ".cjs", ".ts", ".mts")):
        return True
    return not spec.startswith("file://") and not spec.endswith(".py") and any(c in spec for c in "@/-")


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
