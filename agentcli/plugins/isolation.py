"""Isolation of one hook implementation, as a wrapper around its function.

pluggy's own caller runs the implementations; one that raises would end the whole call. So each
implementation is registered wrapped (``isolate``): a plain one runs on a copy of ``output`` that
replaces ``output`` only when it returns, and an exception is handed to ``fail`` instead of
propagating, so the next implementation still runs. A wrapper (``wrapper=True``, or the old
``hookwrapper=True``) that raises before or after its ``yield`` has its change to ``output`` undone
and is reported the same way; the implementations it wraps are not affected. KeyboardInterrupt and
other BaseExceptions go through untouched (Ctrl-C ends the turn, as before).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator
from typing import Any

from pydantic import BaseModel

Fail = Callable[[BaseException], None]


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


def _restore(output: Any, saved: Any) -> None:
    """Put ``saved`` (a snapshot) back into ``output`` in place: every implementation holds it."""
    if isinstance(output, dict):
        output.clear()
        output.update(saved)
    elif isinstance(output, list):
        output[:] = saved


class _Output:
    """Where ``output`` sits in the arguments pluggy passes (by position when it has no default)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        params = [
            p.name
            for p in inspect.signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        self.index = params.index("output") if "output" in params else None

    def get(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if "output" in kwargs:
            return kwargs["output"]
        return args[self.index] if self.index is not None and self.index < len(args) else None

    def replace(self, args: tuple[Any, ...], kwargs: dict[str, Any], value: Any) -> tuple[Any, ...]:
        if "output" in kwargs:
            kwargs["output"] = value
            return args
        if self.index is None or self.index >= len(args):
            return args
        return (*args[: self.index], value, *args[self.index + 1 :])


def isolate(function: Callable[..., Any], opts: dict[str, Any], fail: Fail) -> Callable[..., Any]:
    """``function`` as pluggy will call it, with failures handed to ``fail``; the result keeps the
    original's signature (pluggy reads the argument names through ``__wrapped__``)."""
    out = _Output(function)
    if opts.get("wrapper"):
        isolated = _new_style(function, out, fail)
    elif opts.get("hookwrapper"):
        isolated = _old_style(function, out, fail)
    else:
        isolated = _plain(function, out, fail)
    isolated.__wrapped__ = function  # type: ignore[attr-defined]
    isolated.__name__ = getattr(function, "__name__", "hook")
    isolated.__qualname__ = getattr(function, "__qualname__", isolated.__name__)
    isolated.__doc__ = getattr(function, "__doc__", None)
    return isolated


def _plain(function: Callable[..., Any], out: _Output, fail: Fail) -> Callable[..., Any]:
    def plain(*args: Any, **kwargs: Any) -> Any:
        output = out.get(args, kwargs)
        trial = snapshot(output) if isinstance(output, dict | list) else output
        try:
            result = function(*out.replace(args, kwargs, trial), **kwargs)
        except Exception as exc:
            fail(exc)
            return None
        if trial is not output:
            _restore(output, trial)
        return result

    return plain


def _new_style(function: Callable[..., Any], out: _Output, fail: Fail) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
        output = out.get(args, kwargs)
        saved = snapshot(output)
        try:
            inner = function(*args, **kwargs)
            next(inner)
        except Exception as exc:  # StopIteration (it did not yield) included
            _restore(output, saved)
            fail(exc)
            return (yield)
        try:
            result = yield
        except BaseException as raised:  # the wrapped call failed (Ctrl-C): the plugin sees it too
            return _throw(inner, raised, output, fail)
        saved = snapshot(output)
        try:
            inner.send(result)
        except StopIteration as done:
            return done.value
        except Exception as exc:
            _restore(output, saved)
            fail(exc)
            return result
        inner.close()
        fail(RuntimeError("the wrapper has a second yield"))
        return result

    return wrapper


def _throw(inner: Generator[None, Any, Any], raised: BaseException, output: Any, fail: Fail) -> Any:
    saved = snapshot(output)
    try:
        inner.throw(raised)
    except StopIteration as done:  # the plugin turned the failure into a result
        return done.value
    except Exception as exc:
        if exc is raised:
            raise
        _restore(output, saved)
        fail(exc)
        raise raised from exc
    inner.close()
    fail(RuntimeError("the wrapper has a second yield"))
    raise raised


def _old_style(function: Callable[..., Any], out: _Output, fail: Fail) -> Callable[..., Any]:
    def hookwrapper(*args: Any, **kwargs: Any) -> Generator[None, Any, None]:
        output = out.get(args, kwargs)
        saved = snapshot(output)
        try:
            inner = function(*args, **kwargs)
            next(inner)
        except Exception as exc:
            _restore(output, saved)
            fail(exc)
            yield
            return
        outcome = yield
        saved = snapshot(output)
        try:
            inner.send(outcome)
        except StopIteration:
            return
        except Exception as exc:
            _restore(output, saved)
            fail(exc)
            return
        inner.close()
        fail(RuntimeError("the hookwrapper has a second yield"))

    return hookwrapper
