"""Small building blocks shared by the benchmark library modules.

Every helper is written with :mod:`privet.ops` so the relaxed (sigmoid) and symbolic
semantics of the search and detect engines can plug in; none branches in Python on a noisy
value, and none makes a noise draw whose shape depends on the input values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import ops
from ..core.errors import ParameterError
from ..core.mechanism import ABORTED, Domain

# Mechanisms whose output is an index into the input get a bounded input length, so their
# categorical output schema can list every index.
MAX_QUERIES = 32

# Reals of any length (query answers, StatDP Sec. 4.4.1).
QUERIES = Domain()
# Reals, at most MAX_QUERIES of them (index-valued outputs).
INDEXED = Domain(length=(1, MAX_QUERIES))


def index_categories(one_based_with_none: bool = False) -> tuple[int, ...]:
    """Category codes of an index output: 0..MAX_QUERIES-1, or 0..MAX_QUERIES when 0 = none."""
    return tuple(range(MAX_QUERIES + 1 if one_based_with_none else MAX_QUERIES))


def _concrete(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating, str)) or value is None


def positive_int(name: str, value: Any) -> Any:
    """``value`` as a positive int, or a one-sentence ParameterError.

    Symbolic values (z3 terms of a tracing interpreter) pass through unchanged.
    """
    if not _concrete(value):
        return value
    try:
        ok = float(value) == int(value) and int(value) >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ParameterError(f"argument {name} must be a positive integer, got {value!r}.")
    return int(value)


def scale(name: str, value: Any) -> Any:
    """A noise scale that must be positive and finite (symbolic values pass through)."""
    if not _concrete(value):
        return value
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not (v > 0 and math.isfinite(v)):
        raise ParameterError(f"noise scale {name} must be positive and finite, got {value!r}.")
    return v


def row(v: Any) -> Any:
    """A per-sample scalar ``(size,)`` as a column ``(size, 1)`` for broadcasting over queries."""
    return v[:, None] if getattr(v, "ndim", 0) >= 1 else v


def halt_after(above: Any, limit: int) -> Any:
    """Sparse-vector style stopping: entry i is live while fewer than ``limit`` earlier answers
    were above the threshold (the loop 'count += 1; if count >= N: break').

    Returns the live mask; ``cumsum`` keeps it one vectorized pass over the query axis. The
    count is an integer, so ``count < limit - 1/2`` is the same test; in a relaxed (sigmoid)
    semantics it keeps a count of exactly ``limit`` away from the sigmoid's midpoint.
    """
    before = ops.cumsum(above, axis=-1) - above
    return ops.lt(before, limit - 0.5)


def pad_aborted(values: Any, live: Any) -> Any:
    """``values`` where the mechanism is still running, ABORTED after it stopped."""
    return ops.where(live, values, ABORTED)


def first_index(above: Any, none_code: Any) -> Any:
    """Index of the first True along the last axis, ``none_code`` when there is none."""
    idx = ops.argmax(above, axis=-1)
    hit = ops.max(above, axis=-1)
    return ops.where(hit, idx, none_code)


def clip(values: Any, low: float, high: float) -> np.ndarray:
    """Clamp noisy counts onto their range (the truncation of FAIER Sec. 4.1)."""
    return np.clip(values, low, high)


def lyu_alg3(noise, x, epsilon: float, T: Any, c: int) -> tuple[Any, Any]:
    """Algorithm 3 of Lyu, Su, Li (VLDB 2017) up to its output encoding: the noisy answers
    x + Lap(c/eps2) and whether each is at least T + Lap(1/eps1), eps1 = eps2 = eps/2."""
    eps1 = epsilon / 2
    eps2 = epsilon - eps1
    rho = noise.laplace(1.0 / eps1)
    noisy = x + noise.laplace(c / eps2, x.shape)
    return noisy, ops.ge(noisy, row(T + rho))
