"""Tests and certified bounds for approximate DP from event counts (pure functions).

An (ε, δ) claim promises, for every event E and neighbors D1, D2,
``p1 = P[M(D1) ∈ E] ≤ e^ε·P[M(D2) ∈ E] + δ = e^ε p2 + δ``; a claim with a whole profile
promises ``p1 ≤ f(p2)`` with its envelope f (:meth:`privet.core.claims.Claim.envelope`).
From ``c1`` of ``n1`` fresh runs on D1 and ``c2`` of ``n2`` independent fresh runs on D2:

* :func:`approx_pvalue` -- a valid p-value for H0: p1 ≤ f(p2). For a level α it rejects
  when the one-sided Clopper–Pearson lower bound on p1 at level (1 − w)α exceeds
  f(upper bound on p2 at level wα); the p-value is the smallest such α (the rejection
  regions are nested in α, so P_H0[p ≤ α] ≤ α). Validity is the union bound: under H0,
  rejecting needs p1 below its lower bound or p2 above its upper bound, which together
  happen with probability at most (1 − w)α + wα = α -- the confidence-set p-value of
  Berger & Boos (JASA 1994) with the nuisance p2 ranging over its confidence interval.
  Exact (no normal approximation), conservative, and it can be as small as 1e-300.
  (For δ = 0 StatDP's thinned Fisher test of :mod:`privet.stats.hypothesis` is more
  powerful and stays the pure test.)
* :func:`delta_lower_bound`, :func:`epsilon_lower_bound` -- one event, certified: δ at ε
  and ε at δ, with confidence 1 − α (the same union bound, α/2 per side).
* :func:`simultaneous_bounds` -- a :class:`ProfileBound` over a *family* of K events chosen
  on other samples and counted on one fresh sample: 2K one-sided Clopper–Pearson bounds at
  level α/(2K) each hold together with probability ≥ 1 − α (union bound), so the certified
  curve ε_L(δ) = max_k ln((L1_k − δ)/U2_k) holds for every δ at once (the family-of-pairs
  idea of Delta-Siege: Lokna, Paradis, Dimitrov, Vechev, CCS 2023). A union bound rather
  than a DKW band: DKW's additive width sqrt(ln(2/α)/2n) swamps tail probabilities of
  1e-5, where approximate-DP violations live; Clopper–Pearson bounds are relative there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

LOG_ALPHA_MIN = -300.0 * math.log(10)   # p-values below 1e-300 are reported as 1e-300
_ITER = 60


def cp_lower(k, n, a):
    """One-sided Clopper–Pearson lower bound on p from k of n at level 1 − a (vectorized)."""
    k, n, a = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, a)))
    safe = np.where(k > 0, k, 1.0)
    out = special.betaincinv(safe, n - safe + 1, a)
    return np.where((k > 0) & np.isfinite(out), out, 0.0)   # no answer: the trivial bound


def cp_upper(k, n, a):
    """One-sided Clopper–Pearson upper bound on p from k of n at level 1 − a (vectorized)."""
    k, n, a = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, a)))
    safe = np.where(k < n, k, n - 1.0)
    out = special.betainccinv(safe + 1, n - safe, a)   # the (1 - a) quantile, no 1 - a round-off
    return np.where((k < n) & np.isfinite(out), out, 1.0)


def point_envelope(epsilon: float, delta: float) -> Callable:
    """f(q) = min(1, e^ε q + δ): the envelope of one (ε, δ) point."""
    e = math.exp(float(epsilon))
    d = float(delta)
    return lambda q: np.minimum(1.0, e * np.asarray(q, dtype=float) + d)


def approx_pvalue(c1, n1, c2, n2, epsilon: float | None = None, delta: float | None = None,
                  *, envelope: Callable | None = None, split: float = 0.5) -> np.ndarray:
    """p-value of H0: P[M(D1) ∈ E] ≤ f(P[M(D2) ∈ E]) from independent fresh counts.

    ``f`` is ``envelope`` (a claim's, vectorized and increasing) or the point
    (``epsilon``, ``delta``): f(q) = min(1, e^ε q + δ). The p-value is
    ``inf{α : CPlow(c1, n1; (1 − w)α) > f(CPup(c2, n2; wα))}`` with ``w = split`` (see the
    module docstring for why it is valid); it is 1 when no α ≤ 1 rejects. Vectorized over
    events (``c1, n1, c2, n2`` broadcast); found by bisection on log α to 1e-6 relative.
    """
    f = envelope if envelope is not None else point_envelope(float(epsilon), float(delta or 0))
    c1, n1, c2, n2 = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in
                                           (c1, n1, c2, n2)))
    if np.any(c1 < 0) or np.any(c2 < 0) or np.any(c1 > n1) or np.any(c2 > n2):
        raise ValueError("counts must lie between 0 and the number of samples.")
    w = float(split)
    if not 0 < w < 1:
        raise ValueError(f"split must lie in (0, 1), got {split!r}.")

    def rejects(log_a: np.ndarray) -> np.ndarray:
        a = np.exp(log_a)
        return cp_lower(c1, n1, (1 - w) * a) > f(cp_upper(c2, n2, w * a))

    hi = np.zeros(c1.shape)                       # log 1: the largest level
    out = np.ones(c1.shape)
    live = rejects(hi)
    if not live.any():
        return out if out.ndim else float(out)
    lo = np.full(c1.shape, LOG_ALPHA_MIN)
    floor = rejects(lo)
    for _ in range(_ITER):                        # invariant: rejects at hi, not at lo
        mid = 0.5 * (lo + hi)
        r = rejects(mid)
        hi = np.where(r, mid, hi)
        lo = np.where(r, lo, mid)
    out = np.where(live, np.exp(hi), 1.0)
    out = np.where(live & floor, math.exp(LOG_ALPHA_MIN), out)
    return out if out.ndim else float(out)


def delta_lower_bound(c1: int, n1: int, c2: int, n2: int, epsilon: float,
                      confidence: float = 0.9) -> float:
    """δ ≥ CPlow(p1) − e^ε CPup(p2) at ε, confidence 1 − α (α/2 per side, union bound)."""
    a = (1.0 - float(confidence)) / 2
    return float(cp_lower(c1, n1, a) - math.exp(float(epsilon)) * cp_upper(c2, n2, a))


def epsilon_lower_bound(c1: int, n1: int, c2: int, n2: int, delta: float,
                        confidence: float = 0.9) -> float:
    """ε ≥ ln((CPlow(p1) − δ)/CPup(p2)) at δ, confidence 1 − α (−inf when nothing is shown)."""
    a = (1.0 - float(confidence)) / 2
    lo = float(cp_lower(c1, n1, a)) - float(delta)
    return math.log(lo / float(cp_upper(c2, n2, a))) if lo > 0 else -math.inf


@dataclass(frozen=True)
class ProfileBound:
    """Simultaneous bounds over a family of events: ``lower1[k] ≤ P[M(D1_k) ∈ E_k]`` and
    ``upper2[k] ≥ P[M(D2_k) ∈ E_k]`` for every k at once, with probability ≥ ``confidence``.

    ``delta_at(ε)`` and ``epsilon_at(δ)`` are then certified lower bounds on the mechanism's
    δ(ε) and ε(δ) for every ε and δ at once (a lower curve of its privacy profile).
    """

    lower1: np.ndarray
    upper2: np.ndarray
    confidence: float

    def delta_at(self, epsilon):
        """max_k L1_k − e^ε U2_k, floored at 0 (vectorized in ε)."""
        e = np.exp(np.asarray(epsilon, dtype=float))
        vals = self.lower1[None, :] - np.atleast_1d(e)[:, None] * self.upper2[None, :]
        out = np.maximum(vals.max(axis=1), 0.0) if self.lower1.size else np.zeros(e.size)
        return float(out[0]) if np.ndim(epsilon) == 0 else out

    def epsilon_at(self, delta):
        """max_k ln((L1_k − δ)/U2_k), floored at 0 (vectorized in δ)."""
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        num = self.lower1[None, :] - d[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = np.where(num > 0, np.log(np.maximum(num, 1e-300) / self.upper2[None, :]),
                            -np.inf)
        out = np.maximum(vals.max(axis=1), 0.0) if self.lower1.size else np.zeros(d.size)
        return float(out[0]) if np.ndim(delta) == 0 else out

    def best_event(self, epsilon: float | None = None, delta: float | None = None) -> int:
        """Index of the event that attains :meth:`delta_at` (ε) or :meth:`epsilon_at` (δ)."""
        if epsilon is not None:
            return int(np.argmax(self.lower1 - math.exp(float(epsilon)) * self.upper2))
        num = self.lower1 - float(delta)
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = np.where(num > 0, np.log(np.maximum(num, 1e-300) / self.upper2), -np.inf)
        return int(np.argmax(vals))


def simultaneous_bounds(c1, n1, c2, n2, confidence: float = 0.9) -> ProfileBound:
    """Clopper–Pearson bounds for K events at level α/(2K) each: jointly valid (union bound).

    ``c1[k]`` counts event k among ``n1`` runs on its D1 (the side it favours), ``c2[k]``
    among ``n2`` runs on its D2; the events must be chosen without these samples.
    """
    c1 = np.atleast_1d(np.asarray(c1, dtype=float))
    c2 = np.atleast_1d(np.asarray(c2, dtype=float))
    k = max(len(c1), 1)
    a = (1.0 - float(confidence)) / (2 * k)
    return ProfileBound(np.asarray(cp_lower(c1, n1, a), dtype=float).ravel(),
                        np.asarray(cp_upper(c2, n2, a), dtype=float).ravel(),
                        float(confidence))


__all__ = ["ProfileBound", "approx_pvalue", "cp_lower", "cp_upper", "delta_lower_bound",
           "epsilon_lower_bound", "point_envelope", "simultaneous_bounds"]
