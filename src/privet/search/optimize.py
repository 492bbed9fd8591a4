"""Local search for a larger violation from a starting triple (Sec. 5.2 of DP-Finder).

* :func:`slsqp` maximizes eps^d(x, x', Phi) (the smooth surrogate of Sec. 5.1, evaluated
  through :class:`~privet.search.relaxed.Relaxed` on one recorded tape) with SciPy's SLSQP,
  under the neighbor relation (bounds and linear constraints of
  :class:`~privet.search.space.Space`) and ``p^(x) >= p_min`` (Sec. 6.1, 1e-2). Gradients
  are forward finite differences with common random numbers: the same tape for every
  evaluation, so the differences see only the move of the inputs.
* :func:`local_search` is the derivative-free fallback for mechanisms that do not use
  ``privet.ops`` (or have integer inputs): random moves projected onto the relation,
  accepted when the hard correlated estimate of Eq. (5) on the tape improves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import optimize

from ..core.events import Event
from ..core.mechanism import Mechanism
from ..core.noise import Tape
from .estimate import hard_checks, soft_probability
from .relaxed import DEFAULT_C
from .space import Space

__all__ = ["compass_search", "local_search", "slsqp", "tail_walk"]

FLOOR = 1e-12


class _Budget(Exception):
    """The evaluation budget of the optimizer is spent."""


def _key(x: np.ndarray) -> bytes:
    return np.asarray(x, dtype=float).tobytes()


def slsqp(mech: Mechanism, space: Space, z0: np.ndarray, event: Event, tape: Tape, n: int,
          args: Mapping[str, Any] | None = None, *, p_min: float = 1e-2,
          c: float = DEFAULT_C, step: float | None = None, maxiter: int = 25,
          swap: bool = False, step0: float | None = None, max_evals: int = 150,
          restarts: int = 3) -> tuple[np.ndarray, float, int]:
    """Maximize eps^d from ``z0``; returns ``(z, eps^d(z), evaluations)``.

    ``step`` is the finite-difference step (default half the neighbor Delta, at least
    1/c, so that a difference spans many of the per-sample sigmoids: on 2**14 samples a
    tenth of Delta gave noisier gradients and lower bounds on noisyMax and AT). With
    ``swap`` the second input of ``space.unpack`` is the numerator (x of eps(x, x', Phi)).
    ``step0`` is the length of SLSQP's first step (the objective is scaled to give it;
    default ten times Delta, at most a quarter of the bounds' span). At most ``max_evals``
    evaluations of the surrogate probability; the best feasible point seen is returned.
    Up to ``restarts`` restarts from the best point while they improve eps^d.
    """
    h = step if step is not None else max(0.5 * space.delta, 1.0 / c)
    step0 = step0 if step0 is not None else min(10.0 * space.delta, (space.hi - space.lo) / 4)
    cache: dict[bytes, float] = {}
    count = [0]

    def f(x: np.ndarray) -> float:
        key = _key(x)
        if key not in cache:
            if count[0] >= max_evals:
                raise _Budget
            cache[key] = soft_probability(mech, tape, n, np.asarray(x, float), event, args, c)
            count[0] += 1
        return cache[key]

    def pair(z):
        x, x2 = space.unpack(z)
        return (x2, x) if swap else (x, x2)

    def values(z):
        x, x2 = pair(z)
        return f(x), f(x2)

    lin = space.linear_constraints()
    best = [math.inf, None]

    def objective(z):
        p1, p2 = values(z)
        val = -(math.log(max(p1, FLOOR)) - math.log(max(p2, FLOOR)))
        feasible = p1 >= p_min and (lin is None or np.all(lin[0] @ z + lin[1] >= -1e-9))
        if feasible and val < best[0]:
            best[0], best[1] = val, np.array(z, dtype=float)
        return val

    grads: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def jacobians(z):
        key = _key(z)
        if key in grads:
            return grads[key]
        p1, p2 = values(z)
        x, x2 = pair(z)
        g1 = np.zeros(len(z))
        g2 = np.zeros(len(z))
        for i in range(len(z)):
            zi = np.array(z, dtype=float)
            lo, hi = space.bounds[i]
            hi_room = hi - zi[i]
            d = h if hi_room >= h else -h
            zi[i] += d
            xi, x2i = pair(zi)
            if not np.array_equal(xi, x):
                g1[i] = (f(xi) - p1) / d
            if not np.array_equal(x2i, x2):
                g2[i] = (f(x2i) - p2) / d
        grads[key] = (g1, g2)
        return g1, g2

    def objective_jac(z):
        p1, p2 = values(z)
        g1, g2 = jacobians(z)
        return -(g1 / max(p1, FLOOR) - g2 / max(p2, FLOOR))

    # SLSQP's first step is the raw gradient (unit Hessian); eps^d changes by ~0.1 over moves
    # of the inputs by tens of units, so scale the objective to make that step ~ ``step0``
    z0 = np.asarray(z0, dtype=float)
    g0 = float(np.linalg.norm(objective_jac(z0)))
    scale = float(np.clip(step0 / g0, 1.0, 1e5)) if g0 > 0 else 1.0

    constraints: list[dict] = [{
        "type": "ineq",
        "fun": lambda z: values(z)[0] - p_min,
        "jac": lambda z: jacobians(z)[0],
    }]
    if lin is not None:
        a, b = lin
        constraints.append({"type": "ineq", "fun": lambda z: a @ z + b, "jac": lambda z: a})
    start = z0
    for _ in range(restarts + 1):
        before = best[0]
        try:
            optimize.minimize(lambda z: scale * objective(z), start,
                              jac=lambda z: scale * objective_jac(z), method="SLSQP",
                              bounds=space.bounds, constraints=constraints,
                              options={"maxiter": maxiter, "ftol": 1e-7})
        except (_Budget, ValueError, FloatingPointError):
            break
        # SLSQP often stops early on the bumpy surrogate; restarting from the best point
        # resets its quasi-Newton model and keeps climbing while that still pays
        if best[1] is None or not before - best[0] > 1e-4:
            break
        start = best[1]
    # the best feasible point evaluated (SLSQP's last iterate may be a worse line-search probe)
    z = best[1] if best[1] is not None else z0
    return z, -best[0] if best[1] is not None else -objective(z0), count[0]


def _hard_score(mech, space, event, tape, n, args, p_min, accept, swap):
    cache: dict[bytes, float] = {}

    def p(x: np.ndarray) -> float:
        key = _key(x)
        if key not in cache:
            cache[key] = float(np.mean(hard_checks(mech, tape, n, x, event, args)))
        return cache[key]

    def score(z) -> float:
        x, x2 = space.unpack(z)
        if swap:
            x, x2 = x2, x
        if accept is not None and not accept(x, x2):
            return -math.inf
        p1, p2 = p(x), p(x2)
        if p1 < p_min:
            return -math.inf if p1 == 0 else math.log(p1 / max(p2, 1.0 / n)) - 100.0
        if p2 == 0:
            return math.inf
        return math.log(p1 / p2)

    return score, cache


def compass_search(mech: Mechanism, space: Space, z0: np.ndarray, event: Event, tape: Tape,
                   n: int, args: Mapping[str, Any] | None = None, *, p_min: float = 1e-2,
                   budget: int = 40, step: float = 0.25,
                   accept: Callable[[np.ndarray, np.ndarray], bool] | None = None,
                   swap: bool = False) -> tuple[np.ndarray, float, int]:
    """Polish a solution on the hard estimate eps^ (Eq. (5)) over the tape: try +-step along
    each of ``space.directions()`` (projected onto the relation), keep improvements, halve
    the step after a sweep without one. The sigmoids of Fig. 8 cannot resolve gaps below
    ~1/c; this can."""
    score, cache = _hard_score(mech, space, event, tape, n, args, p_min, accept, swap)
    z = space.project(z0)
    best = score(z)
    evals = 1
    while evals < budget and best < math.inf and step > 1e-4:
        improved = False
        for direction in space.directions():
            for sign in (1.0, -1.0):
                cand = space.project(z + sign * step * direction)
                if np.array_equal(cand, z):
                    continue
                evals += 1
                s = score(cand)
                if s > best:
                    z, best, improved = cand, s, True
                    break
            if evals >= budget or best == math.inf:
                break
        if not improved:
            step /= 2
    return z, best, len(cache)


def local_search(mech: Mechanism, space: Space, z0: np.ndarray, event: Event, tape: Tape,
                 n: int, rng: np.random.Generator, args: Mapping[str, Any] | None = None, *,
                 p_min: float = 1e-2, budget: int = 60,
                 accept: Callable[[np.ndarray, np.ndarray], bool] | None = None,
                 swap: bool = False, step: float | None = None
                 ) -> tuple[np.ndarray, float, int]:
    """Derivative-free hill climbing on the hard correlated estimate eps^ (Eq. (5)) over
    the tape; the step shrinks by half after a run of failures. Returns ``(z, eps^, evals)``.
    """
    score, cache = _hard_score(mech, space, event, tape, n, args, p_min, accept, swap)
    z = space.project(z0)
    best = score(z)
    span = space.hi - space.lo
    if step is None:
        step = min(span / 4, 10.0 * max(space.delta, 1.0))
    step = max(step, 1.0 if space.integer else 1e-3)
    fails = 0
    evals = 0
    while evals < budget and best < math.inf:
        move = rng.normal(0.0, step, size=len(z))
        if rng.random() < 0.5:  # one coordinate, or about half of them
            mask = np.arange(len(z)) == rng.integers(len(z))
        else:
            mask = rng.random(len(z)) < 0.5
        cand = space.project(z + np.where(mask, move, 0.0))
        evals += 1
        s = score(cand)
        if s > best:
            z, best, fails = cand, s, 0
        else:
            fails += 1
            if fails >= 6:
                step = max(step / 2, 1.0 if space.integer else 1e-3)
                fails = 0
    return z, best, len(cache)


def tail_walk(mech: Mechanism, space: Space, z0: np.ndarray, event: Event, tape: Tape, n: int,
              score: Callable[[int, int, int, int], float],
              args: Mapping[str, Any] | None = None, *, p_min: float = 1e-2,
              rounds: int = 2, steps: int = 8,
              accept: Callable[[np.ndarray, np.ndarray], bool] | None = None,
              swap: bool = False) -> tuple[np.ndarray, float, int]:
    """Walk the pair toward the tail of the event, keeping x - x' fixed.

    For mechanisms such as noisyMax the ratio p(x)/p(x') grows toward e^eps only as p(x)
    shrinks, while SLSQP on eps^d stops where the surrogate is flat (p^(x) ~ 0.1-0.3 on
    noisyMax). The walk moves x and x' together (``space.shift``: they stay neighbors)
    along the hard estimate's common-mode descent direction of log p^(x) (central
    differences on the tape, step 2 Delta), in geometric steps Delta * 2^m, down to
    ``p_min``, and keeps the point that maximizes ``score(n11, n10, n01, n)`` -- the paired
    counts on the tape, scored by the caller (the certificate a confirmation would give):
    deeper in the tail the ratio is larger but the events rarer, so the best point trades
    the two off. Returns ``(z, score, evaluations)``.
    """
    cache: dict[bytes, np.ndarray] = {}

    def checks(x: np.ndarray) -> np.ndarray:
        key = _key(x)
        if key not in cache:
            cache[key] = hard_checks(mech, tape, n, x, event, args)
        return cache[key]

    def pair(z):
        x, x2 = space.unpack(z)
        return (x2, x) if swap else (x, x2)

    def value(z) -> tuple[float, float]:
        x, x2 = pair(z)
        if accept is not None and not accept(x, x2):
            return -math.inf, 0.0
        s1, s2 = checks(x), checks(x2)
        p1 = float(np.mean(s1))
        if p1 < p_min:
            return -math.inf, p1
        n11 = int(np.count_nonzero(s1 & s2))
        n10 = int(np.count_nonzero(s1 & ~s2))
        n01 = int(np.count_nonzero(~s1 & s2))
        return score(n11, n10, n01, n), p1

    z = np.asarray(z0, float)
    best, p1 = value(z)
    if not math.isfinite(best):
        return z, best, len(cache)
    h = 2.0 * max(space.delta, 1e-3)
    for _ in range(rounds):
        x, _x2 = pair(z)
        if len(x) != space.k:  # add/remove with the shorter input as x: no common move
            break
        grad = np.zeros(space.k)
        for i in range(space.k):
            up, dn = x.copy(), x.copy()
            up[i] = min(x[i] + h, space.hi)  # stay inside the domain's box
            dn[i] = max(x[i] - h, space.lo)
            if up[i] > dn[i]:
                grad[i] = (np.mean(checks(up)) - np.mean(checks(dn))) / (up[i] - dn[i])
        norm = float(np.linalg.norm(grad))
        if norm == 0 or p1 <= 0:
            break
        direction = -grad / norm
        improved = False
        start = z
        for m in range(steps):
            cand = space.shift(start, direction * space.delta * 2.0 ** m)
            if np.array_equal(cand, start):
                break
            s, q = value(cand)
            if q < p_min:
                break
            if s > best:
                z, best, p1, improved = cand, s, q, True
        if not improved:
            break
    return z, best, len(cache)
