"""Sensitivity of floating-point aggregations: neighbours whose float sum moves too much.

Casacuberta, Shoemate, Vadhan, Wagaman (*Widespread Underestimation of Sensitivity in
Differentially Private Libraries and How to Fix It*, CCS 2022, Sec. 3) show that a clamped
sum computed in floating point can change by more than ``U - L`` (replace one record) or
``max(|L|, |U|)`` (add or remove one) between neighbouring datasets: every addition rounds
to the partial sum's grid, and one record can move every later partial sum to a grid where
the small records round the other way. Noise calibrated to the declared sensitivity then
does not give the claimed ε.

:func:`sum_sensitivity` searches the datasets within the clamping bounds and the length
limit for the pair that maximizes ``|f(D1) - f(D2)|``:

1. adversarial families (Casacuberta et al.'s magnitudes and orderings): ``m`` records at
   the large bound, so that the partial sum sits at a power of two, then ``k`` small
   records sized against the partial sum's ulp (just above half of it: each rounds up; just
   below: each is absorbed; in between); the neighbour replaces (or removes) one large
   record, which moves the partial sum to the binade below, where the same records add
   exactly -- or the reverse;
2. a local search from the best pairs (the small value by float steps, the split ``m``,
   the changed record), then every pair is re-evaluated with ``aggregate`` itself.

``aggregate`` is the statistic as the library computes it (a callable on a 1-D array);
``batched=True`` says it also accepts a 2-D array (one dataset per row) and reduces the last
axis, which makes the families one vectorized call. The best pair can then be handed to
``detect``/``search`` on the mechanism that adds noise to it (:func:`certify`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.errors import ParameterError
from ..core.results import SensitivityResult

FACTORS = (0.5 + 2.0 ** -12, 0.5 + 2.0 ** -6, 0.5 + 2.0 ** -3, 0.625, 0.75, 0.875,
           1.0 - 2.0 ** -6, 0.5 - 2.0 ** -12, 0.5 - 2.0 ** -6, 0.25, 1.0 + 2.0 ** -6)


@dataclass
class Pair:
    """A candidate neighbouring pair and its aggregate values."""

    d1: np.ndarray
    d2: np.ndarray
    f1: float
    f2: float
    family: str

    @property
    def gap(self) -> Fraction:
        """``|f(D1) - f(D2)|`` exactly (a float subtraction could round an excess away)."""
        return abs(Fraction(self.f1) - Fraction(self.f2))


def declared_default(bounds: tuple[float, float], neighbors: str) -> float:
    """The sensitivity a library declares for a clamped sum: ``U - L`` when one record is
    replaced, ``max(|L|, |U|)`` when one is added or removed."""
    lo, hi = bounds
    return hi - lo if neighbors == "replace_one" else max(abs(lo), abs(hi))


def _neighbour(d: np.ndarray, position: int, bounds, neighbors: str) -> np.ndarray:
    """D2 from D1: the record at ``position`` replaced by the farthest bound, or removed."""
    if neighbors == "add_remove":
        return np.delete(d, position)
    lo, hi = bounds
    out = d.copy()
    out[position] = lo if abs(d[position] - lo) >= abs(d[position] - hi) else hi
    return out


class _Evaluator:
    def __init__(self, aggregate: Callable, batched: bool, dtype: Any):
        self.aggregate, self.batched, self.dtype = aggregate, batched, dtype
        self.count = 0

    def one(self, d: np.ndarray) -> float:
        self.count += 1
        return float(self.aggregate(np.asarray(d, dtype=self.dtype)))

    def many(self, rows: Sequence[np.ndarray]) -> np.ndarray:
        """Aggregates of datasets (same length: one call when batched)."""
        if self.batched and rows and len({len(r) for r in rows}) == 1:
            self.count += len(rows)
            return np.asarray(self.aggregate(np.stack(rows).astype(self.dtype)),
                              dtype=float).reshape(len(rows))
        return np.array([self.one(r) for r in rows])


def _ulp_of(value: float, dtype: Any) -> float:
    return float(np.spacing(np.asarray(abs(value), dtype=dtype)))


def _families(bounds, length: int, neighbors: str, dtype: Any) -> list[tuple[np.ndarray, int,
                                                                             str]]:
    """Candidate (D1, changed position, family) triples."""
    lo, hi = bounds
    big = hi if abs(hi) >= abs(lo) else lo
    other = lo if big == hi else hi
    out = []
    ms = set()
    for j in range(0, 64):
        p = 2.0 ** j
        if abs(big) > 0 and p / abs(big) > length:
            break
        m = int(round(p / abs(big))) if abs(big) > 0 else 0
        for mm in (m - 1, m, m + 1):
            if 1 <= mm < length:
                ms.add(mm)
    ms.update({max(1, length // 2), max(1, length - 1)})
    for m in sorted(ms):
        partial = float(np.asarray(big, dtype=dtype) * m)
        ulp = _ulp_of(partial, dtype)
        for f in FACTORS:
            for base in (0.0, other, lo):
                s = base + np.sign(big) * f * ulp if big != 0 else f * ulp
                if not lo <= s <= hi:
                    continue
                if np.issubdtype(np.dtype(dtype), np.integer):
                    s = float(np.round(s))  # integer records
                k = length - m
                d = np.r_[np.full(m, big), np.full(k, s)].astype(float)
                for pos in {0, m - 1}:
                    out.append((d, pos, f"{m} × {big:g} then {k} × {s:.6g}"))
    return out


def sum_sensitivity(aggregate: Callable[[np.ndarray], float], *,
                    bounds: tuple[float, float], length: int,
                    neighbors: str = "replace_one", declared: float | None = None,
                    dtype: Any = np.float64, batched: bool = False, iterations: int = 400,
                    budget: float | None = None, seed: int | None = 0,
                    name: str | None = None) -> SensitivityResult:
    """The neighbouring datasets (values in ``bounds``, at most ``length`` records) whose
    ``aggregate`` differs most, found by the families and the local search of the module
    docstring. ``neighbors``: ``'replace_one'`` or ``'add_remove'``; ``declared``: the
    sensitivity the mechanism calibrates its noise to (default ``U - L`` or
    ``max(|L|, |U|)``); ``dtype``: the type the records are stored in before summing.

    Returns a :class:`~privet.core.results.SensitivityResult` (``name`` names the
    aggregate in it): the pair, ``f(D1)`` and ``f(D2)``, the difference and its excess over
    the declared sensitivity (exact), ``exceeds``, the family that produced the pair and
    how many datasets were summed.
    """
    t0 = time.perf_counter()
    lo, hi = (float(b) for b in bounds)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ParameterError(f"bounds must be two finite numbers L < U, got {bounds!r}.")
    if neighbors not in ("replace_one", "add_remove"):
        raise ParameterError(f"neighbors must be 'replace_one' or 'add_remove', got "
                             f"{neighbors!r}.")
    if int(length) < 2:
        raise ParameterError(f"length must allow at least 2 records, got {length}.")
    length = int(length)
    decl = float(declared) if declared is not None else declared_default((lo, hi), neighbors)
    ev = _Evaluator(aggregate, batched, dtype)
    pairs: list[Pair] = []
    fams = _families((lo, hi), length, neighbors, dtype)
    d1s = [d for d, _, _ in fams]
    d2s = [_neighbour(d, pos, (lo, hi), neighbors) for d, pos, _ in fams]
    f1 = ev.many(d1s)
    f2 = ev.many(d2s)
    for (d, _, fam), a, b, d2, in zip(fams, f1, f2, d2s):
        pairs.append(Pair(d, d2, float(a), float(b), fam))
    pairs.sort(key=lambda p: -p.gap)
    best = pairs[0]
    rng = np.random.default_rng(seed)
    starts = pairs[:8]
    interrupted = False
    try:
        for it in range(int(iterations)):
            if budget is not None and time.perf_counter() - t0 > budget:
                break
            base = starts[it % len(starts)] if it < len(starts) * 4 else best
            cand = _mutate(base, rng, (lo, hi), neighbors, dtype)
            if cand is None:
                continue
            a, b = ev.one(cand[0]), ev.one(cand[1])
            family = base.family if base.family.endswith("(tuned)") else \
                base.family + " (tuned)"
            p = Pair(cand[0], cand[1], a, b, family)
            if p.gap > best.gap:
                best = p
    except KeyboardInterrupt:  # Ctrl-C: keep the best pair so far, say so
        interrupted = True
    # the reported pair is re-checked with the aggregate exactly as given
    f1b, f2b = ev.one(best.d1), ev.one(best.d2)
    gap = abs(Fraction(f1b) - Fraction(f2b))
    excess = gap - Fraction(decl)
    exceeds = excess > 0
    verdict_prefix = "interrupted: " if interrupted else ""
    if exceeds:
        verdict = (f"sensitivity exceeded: |f(D1) - f(D2)| = {float(gap):.17g} > declared "
                   f"{decl:g} (excess {float(excess):.3g})")
    else:
        verdict = (f"no pair above the declared sensitivity {decl:g} found "
                   f"({ev.count:,} datasets summed)")
    return SensitivityResult(
        aggregate=name or getattr(aggregate, "__name__", "aggregate"),
        verdict=verdict_prefix + verdict,
        bounds=(lo, hi), neighbors=neighbors, length=length, declared=decl,
        difference=float(gap), excess=float(excess),
        ratio=float(gap / Fraction(decl)) if decl > 0 else math.inf, exceeds=bool(exceeds),
        d1=tuple(best.d1.tolist()), d2=tuple(best.d2.tolist()), f1=f1b, f2=f2b,
        family=best.family, evaluated=ev.count, seconds=time.perf_counter() - t0,
        details={"f1_hex": float(f1b).hex(), "f2_hex": float(f2b).hex(),
                 "dtype": np.dtype(dtype).name, "iterations": int(iterations),
                 "interrupted": interrupted})


def _mutate(p: Pair, rng: np.random.Generator, bounds, neighbors: str, dtype: Any):
    """A neighbouring candidate of ``p``: the small records moved by float steps, a record
    moved between the two groups, or the changed record moved."""
    lo, hi = bounds
    d = p.d1.copy()
    n = len(d)
    kind = rng.integers(0, 3)
    if kind == 0:  # step every record equal to the last one by a few float steps
        s = d[-1]
        steps = int(rng.integers(-8, 9))
        if np.issubdtype(np.dtype(dtype), np.integer):
            t = s + steps
        else:
            t = np.asarray(s, dtype=dtype)
            for _ in range(abs(steps)):
                t = np.nextafter(t, np.asarray(np.inf if steps > 0 else -np.inf, dtype=dtype))
        if not lo <= float(t) <= hi:
            return None
        d[d == s] = float(t)
    elif kind == 1 and n > 2:  # move one record from the head group to the tail or back
        i = int(rng.integers(1, n - 1))
        d[i] = d[-1] if d[i] == d[0] else d[0]
    d2 = _neighbour(d, int(rng.integers(0, n)) if kind == 2 else _changed(p), bounds,
                    neighbors)
    return d, d2


def _changed(p: Pair) -> int:
    if len(p.d1) != len(p.d2):
        for i in range(len(p.d2)):
            if p.d1[i] != p.d2[i]:
                return i
        return len(p.d2)
    diff = np.flatnonzero(p.d1 != p.d2)
    return int(diff[0]) if diff.size else 0


__all__ = ["Pair", "declared_default", "sum_sensitivity"]
