"""Comparison and selection primitives with one dispatch point.

Mechanisms call ``privet.ops.argmax(...)``, ``privet.ops.gt(...)`` and friends instead of the
NumPy functions so that the same code can be given other meanings: hard (NumPy, the
default), soft (sigmoid relaxations, DP-Finder Fig. 8, installed by the ``Relaxed``
interpreter) and symbolic (z3 terms, installed by the ``Trace`` interpreter).

An interpreter sets its meaning with :func:`semantics`; engines register a backend with
:func:`register`. A backend is any object with the methods of :class:`HardOps`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import numpy as np

SHORT_AXIS = 16  # a last axis of at most this many entries is reduced column by column


def _reduce(ufunc: np.ufunc, x, axis) -> Any:
    """``ufunc.reduce(x, axis)``; over a short last axis of a large array, as a running
    ``ufunc`` of its columns: NumPy's reduction pays a fixed cost per row, so the maximum of
    five noisy queries over 2^23 rows took about 65 ns a row, the columns' running maximum
    about 36 ns (the same values: NaN propagates either way)."""
    a = np.asarray(x)
    if (axis in (-1, a.ndim - 1) and a.ndim >= 2 and 1 < a.shape[-1] <= SHORT_AXIS
            and a.size >= 1 << 12 and a.dtype.kind in "fiub"):
        out = ufunc(a[..., 0], a[..., 1])
        for i in range(2, a.shape[-1]):
            ufunc(out, a[..., i], out=out)
        return out
    return ufunc.reduce(a, axis=axis)


class HardOps:
    """NumPy semantics."""

    name = "hard"

    def argmax(self, x, axis=-1):
        return np.argmax(x, axis=axis)

    def argmin(self, x, axis=-1):
        return np.argmin(x, axis=axis)

    def max(self, x, axis=-1):
        return _reduce(np.maximum, x, axis)

    def min(self, x, axis=-1):
        return _reduce(np.minimum, x, axis)

    def where(self, cond, a, b):
        return np.where(cond, a, b)

    def lt(self, a, b):
        return np.less(a, b)

    def le(self, a, b):
        return np.less_equal(a, b)

    def gt(self, a, b):
        return np.greater(a, b)

    def ge(self, a, b):
        return np.greater_equal(a, b)

    def eq(self, a, b):
        return np.equal(a, b)

    def ne(self, a, b):
        return np.not_equal(a, b)

    def logical_and(self, a, b):
        return np.logical_and(a, b)

    def logical_or(self, a, b):
        return np.logical_or(a, b)

    def logical_not(self, a):
        return np.logical_not(a)

    def cumsum(self, x, axis=-1):
        return np.cumsum(x, axis=axis)


_BACKENDS: dict[str, Any] = {"hard": HardOps()}
_CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar("privet_ops", default="hard")


def register(name: str, backend: Any) -> None:
    """Register a backend (an object with the methods of :class:`HardOps`) under ``name``."""
    _BACKENDS[name] = backend


def current() -> Any:
    """The backend in force."""
    return _BACKENDS[_CURRENT.get()]


@contextlib.contextmanager
def semantics(name: str) -> Iterator[None]:
    """Run the enclosed code with the ops meaning ``name`` ('hard', 'soft', 'symbolic', ...)."""
    if name not in _BACKENDS:
        raise KeyError(f"no ops semantics named {name!r}; registered: {sorted(_BACKENDS)}")
    token = _CURRENT.set(name)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def argmax(x, axis=-1):
    """Index of the largest entry along ``axis``."""
    return current().argmax(x, axis=axis)


def argmin(x, axis=-1):
    """Index of the smallest entry along ``axis``."""
    return current().argmin(x, axis=axis)


def max(x, axis=-1):  # noqa: A001 - mirrors numpy
    """Largest entry along ``axis``."""
    return current().max(x, axis=axis)


def min(x, axis=-1):  # noqa: A001 - mirrors numpy
    """Smallest entry along ``axis``."""
    return current().min(x, axis=axis)


def where(cond, a, b):
    """``a`` where ``cond`` holds, else ``b``."""
    return current().where(cond, a, b)


def lt(a, b):
    """a < b"""
    return current().lt(a, b)


def le(a, b):
    """a <= b"""
    return current().le(a, b)


def gt(a, b):
    """a > b"""
    return current().gt(a, b)


def ge(a, b):
    """a >= b"""
    return current().ge(a, b)


def eq(a, b):
    """a == b"""
    return current().eq(a, b)


def ne(a, b):
    """a != b"""
    return current().ne(a, b)


def logical_and(a, b):
    """a and b"""
    return current().logical_and(a, b)


def logical_or(a, b):
    """a or b"""
    return current().logical_or(a, b)


def logical_not(a):
    """not a"""
    return current().logical_not(a)


def cumsum(x, axis=-1):
    """Cumulative sum along ``axis``."""
    return current().cumsum(x, axis=axis)
