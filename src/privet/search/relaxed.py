"""The ``Relaxed(c)`` interpreter: smooth semantics for ``privet.ops`` (Fig. 8 of DP-Finder).

A mechanism written with ``privet.ops`` runs unchanged under :class:`Relaxed`: its draws come
from a wrapped interpreter (a :class:`~privet.core.noise.Sampler` or a
:class:`~privet.core.noise.Replay` of a recorded tape), and its comparisons, selections and
Boolean connectives take the differentiable meanings of Fig. 8 (Sec. 5.1):

=====================  =========================================
``not B``              ``1 - B``
``E1 == E2``           ``exp(-c^2 (E1 - E2)^2)``
``E1 <= E2``           ``sigmoid(c (E2 - E1))``
``B1 and B2``          ``B1 * B2``
``B1 or B2``           ``B1 + B2 - B1 * B2``
``where(B, E1, E2)``   ``B * E1 + (1 - B) * E2``
``argmax(x)``          ``sum_i i * softmax(c x)_i``  (softmax-weighted index)
``max(x)``             ``sum_i x_i * softmax(c x)_i``
=====================  =========================================

so ``mean_i dcheck_i(x)`` is the smooth surrogate of the estimate of Eq. (11), and
eps^d(x, x', Phi) of Sec. 5.1 is its log-ratio. Sentinel (infinite) values stay hard: a
soft ``where`` between an infinite and a finite branch picks the branch the condition leans
to. :func:`soft_contains` evaluates an event (singleton or box) on soft outputs the same way.
"""

from __future__ import annotations

import numpy as np

from ..core import ops
from ..core.events import Box, Equals, Event, Interval, Singleton
from ..core.noise import Dist, Noise, Shape

DEFAULT_C = 50.0
EXP_FLOOR = 80.0  # exp(-80) ~ 2e-35: weights below it are treated as that

__all__ = ["DEFAULT_C", "Relaxed", "SoftOps", "soft_contains", "uses_ops"]


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=float)


def _diff(a, b) -> np.ndarray:
    """``a - b`` with ``inf - inf = 0`` (equal sentinels compare as equal)."""
    with np.errstate(invalid="ignore"):
        d = np.subtract(a, b, dtype=float)
    if np.isnan(d).any():
        d = np.where(np.isnan(d), 0.0, d)
    return d


def _sigmoid(t: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-t))`` as ``(1 + tanh(t/2)) / 2`` (faster than expit, no overflow)."""
    out = np.tanh(0.5 * t)
    out += 1.0
    out *= 0.5
    return out


class SoftOps:
    """The smooth ops backend of Fig. 8 with steepness ``c``; counts the calls it serves."""

    def __init__(self, c: float = DEFAULT_C, name: str = "soft"):
        self.c = float(c)
        self.name = name
        self.calls = 0

    # -- selections ---------------------------------------------------------------------
    def _weights(self, x, axis):
        """softmax(c x) along ``axis``, returned with that axis moved to the front (reductions
        over a short last axis are slow in NumPy; over the first axis they are elementwise)."""
        self.calls += 1
        z = np.ascontiguousarray(np.moveaxis(self.c * _arr(x), axis, 0))
        if not np.isfinite(z).all():
            z = np.where(np.isfinite(z), z, np.where(z > 0, 1e300, -1e300))
        top = z[0].copy()
        for row in z[1:]:
            np.maximum(top, row, out=top)
        z -= top
        np.maximum(z, -EXP_FLOOR, out=z)  # exp of large negatives is slow (subnormals)
        np.exp(z, out=z)
        total = z[0].copy()
        for row in z[1:]:
            total += row
        z /= total
        return z

    def argmax(self, x, axis=-1):
        w = self._weights(x, axis)
        out = np.zeros(w.shape[1:])
        for i in range(1, w.shape[0]):
            out += i * w[i]
        return out

    def argmin(self, x, axis=-1):
        return self.argmax(-_arr(x), axis=axis)

    def max(self, x, axis=-1):
        x = _arr(x)
        w = self._weights(x, axis)
        xf = np.moveaxis(x, axis, 0)
        hard = np.max(x, axis=axis)
        soft = np.zeros(w.shape[1:])
        with np.errstate(invalid="ignore"):
            for i in range(w.shape[0]):
                soft += np.where(w[i] > 0, w[i] * xf[i], 0.0)
        return np.where(np.isfinite(hard), soft, hard)

    def min(self, x, axis=-1):
        return -self.max(-_arr(x), axis=axis)

    def where(self, cond, a, b):
        self.calls += 1
        cond, a, b = _arr(cond), _arr(a), _arr(b)
        if np.isfinite(a).all() and np.isfinite(b).all():
            return b + cond * (a - b)
        cond, a, b = np.broadcast_arrays(cond, a, b)
        finite = np.isfinite(a) & np.isfinite(b)
        with np.errstate(invalid="ignore"):
            soft = cond * a + (1.0 - cond) * b
        return np.where(finite, soft, np.where(cond >= 0.5, a, b))

    # -- comparisons --------------------------------------------------------------------
    def le(self, a, b):
        self.calls += 1
        return _sigmoid(self.c * _diff(b, a))

    lt = le

    def ge(self, a, b):
        return self.le(b, a)

    gt = ge

    def eq(self, a, b):
        self.calls += 1
        d = _diff(a, b)
        return np.exp(np.maximum(-(self.c ** 2) * d * d, -EXP_FLOOR))

    def ne(self, a, b):
        return 1.0 - self.eq(a, b)

    # -- connectives --------------------------------------------------------------------
    def logical_and(self, a, b):
        self.calls += 1
        return _arr(a) * _arr(b)

    def logical_or(self, a, b):
        self.calls += 1
        a, b = _arr(a), _arr(b)
        return a + b - a * b

    def logical_not(self, a):
        self.calls += 1
        return 1.0 - _arr(a)

    def cumsum(self, x, axis=-1):
        return np.cumsum(x, axis=axis)


_SOFT = SoftOps(DEFAULT_C, "soft")
ops.register("soft", _SOFT)


def backend_for(c: float) -> tuple[str, SoftOps]:
    """The registered soft backend of steepness ``c`` (``'soft'`` for c = 50)."""
    if float(c) == DEFAULT_C:
        return "soft", _SOFT
    name = f"soft:{float(c):g}"
    try:
        with ops.semantics(name):
            backend = ops.current()
    except KeyError:
        backend = SoftOps(c, name)
        ops.register(name, backend)
    return name, backend


class Relaxed(Noise):
    """Draws from ``source`` (a Sampler, or a Replay of a tape); ops take the soft meaning.

    ``Relaxed(50, Replay(tape))`` replays a recorded tape with the smooth semantics, which is
    how :mod:`privet.search` evaluates eps^d on the same noise as the hard estimate.
    """

    def __init__(self, c: float = DEFAULT_C, source: Noise | None = None, *,
                 rng=None, size: int = 1):
        from ..core.noise import Sampler

        self.c = float(c)
        self.semantics, self.backend = backend_for(self.c)
        self.source = source if source is not None else Sampler(rng, size)
        self.size = self.source.size

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        return self.source._draw(dist, shape)

    def rewind(self) -> Relaxed:
        if hasattr(self.source, "rewind"):
            self.source.rewind()
        return self


def uses_ops(run) -> bool:
    """True when ``run()`` calls a ``privet.ops`` primitive under the soft backend."""
    before = _SOFT.calls
    run()
    return _SOFT.calls > before


def soft_contains(event: Event, outputs: np.ndarray, c: float = DEFAULT_C) -> np.ndarray:
    """The smooth indicator of ``event`` on soft outputs (one value in [0, 1] per row).

    Singleton and Equals use ``exp(-c^2 (y - v)^2)`` per coordinate (product = and); boxes
    and intervals ``sigmoid(c (y - low)) * sigmoid(c (high - y))``. Other events fall back
    to their hard indicator.
    """
    out = _arr(outputs)
    rows = out.reshape(out.shape[0], -1) if out.ndim > 1 else out.reshape(-1, 1)

    def eq(y, v):
        d = _diff(y, v)
        return np.exp(np.maximum(-(c ** 2) * d * d, -EXP_FLOOR))

    def sig(t):
        return _sigmoid(c * t)

    def inside(y, lo, hi):
        lo_part = np.where(np.isneginf(lo), 1.0, sig(_diff(y, lo)))
        hi_part = np.where(np.isposinf(hi), 1.0, sig(_diff(hi, y)))
        point = (lo == hi)
        return np.where(point, eq(y, lo), lo_part * hi_part)

    if isinstance(event, Singleton):
        d = _diff(rows, _arr(event.value))
        # prod_i exp(-c^2 d_i^2) = exp(-c^2 sum_i d_i^2)
        return np.exp(np.maximum(-(c ** 2) * np.einsum("ij,ij->i", d, d), -EXP_FLOOR))
    if isinstance(event, Box):
        return np.prod(inside(rows, _arr(event.lows), _arr(event.highs)), axis=1)
    if isinstance(event, (Interval, Equals)) and event.stat == "coord":
        y = rows[:, event.coord or 0]
        if isinstance(event, Equals):
            return eq(y, float(event.value))
        return inside(y, np.float64(event.low), np.float64(event.high))
    return event.contains(np.where(np.isfinite(rows), np.round(rows), rows)).astype(float)
