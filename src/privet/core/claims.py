"""Privacy claims: pure ε-DP, approximate (ε, δ)-DP and ρ-zero-concentrated DP.

A :class:`Claim` is what a mechanism promises; every engine reads it. Each claim has a
*privacy profile*, the curve δ(ε) of every (ε, δ(ε))-DP guarantee it implies, and its
*envelope* f(q) = inf_ε e^ε q + δ(ε): for every event E and neighbors D1, D2 the claim
promises P[M(D1) ∈ E] ≤ f(P[M(D2) ∈ E]). The conversions are exact where an exact one
exists and are the tightest known general ones otherwise:

* pure ε0 and (ε0, δ0): δ(ε) = δ0 + (1 − δ0)·max(0, e^ε0 − e^ε)/(1 + e^ε0). This is the
  profile of the (ε0, δ0) randomized-response mechanism, which dominates every (ε0, δ0)-DP
  mechanism (Kairouz, Oh, Viswanath, *The Composition Theorem for Differential Privacy*,
  ICML 2015), so it is exactly what the claim implies, no more and no less.
* ρ-zCDP: δ(ε) = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1 − 1/α)^α, the conversion of
  Canonne, Kamath, Steinke, *The Discrete Gaussian for Differential Privacy* (NeurIPS 2020,
  Sec. 2.3). It holds for every ρ-zCDP mechanism and is tighter than the classic
  ε = ρ + 2·sqrt(ρ ln(1/δ)) of Bun & Steinke 2016 (kept as :meth:`Claim.simple_epsilon_at`
  for comparison). It is not the Gaussian mechanism's own curve, which is smaller:
  :func:`privet.stats.profiles.gaussian_delta` gives that one.

Pure math on floats (NumPy only); constructing a claim checks its numbers and raises a
one-sentence :class:`~privet.core.errors.ParameterError` when they are wrong.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .errors import ParameterError, advice

KINDS = ("pure", "approx", "zcdp")

# the zCDP infimum over alpha is taken on this grid of log(alpha - 1), then refined
_LOG_AM1 = np.linspace(-12.0, 12.0, 241)


@dataclass(frozen=True)
class Claim:
    """A privacy claim: ``kind`` is ``pure`` (ε), ``approx`` ((ε, δ), δ > 0) or ``zcdp`` (ρ).

    Build one with :meth:`make` (checks the numbers); ``describe()`` is how reports show it.
    """

    kind: str
    epsilon: float | None = None
    delta: float = 0.0
    rho: float | None = None

    # -- construction ----------------------------------------------------------------------
    @staticmethod
    def make(epsilon: float | None = None, delta: float | None = None,
             rho: float | None = None) -> Claim | None:
        """The claim of ``epsilon=`` / ``epsilon=, delta=`` / ``rho=`` (None: no claim).

        One sentence on a wrong combination: δ outside [0, 1), ρ together with ε or δ, δ
        without ε, a non-positive ε or ρ.
        """
        if rho is not None:
            if epsilon is not None or (delta is not None and float(delta) != 0):
                raise ParameterError(
                    "give either rho= (a zCDP claim) or epsilon= with an optional delta= "
                    "(an (ε, δ) claim), not both; privet converts ρ to its (ε, δ) curve itself."
                )
            return Claim("zcdp", rho=_positive(rho, "rho (the zCDP parameter)"))
        d = _delta(delta)
        if epsilon is None:
            if d:
                raise ParameterError(
                    f"delta={d:g} needs an epsilon: declare epsilon=..., delta={d:g}.")
            return None
        eps = _positive(epsilon, "the claimed epsilon")
        return Claim("approx", eps, d) if d > 0 else Claim("pure", eps, 0.0)

    # -- the profile ---------------------------------------------------------------------------
    def delta_at(self, epsilon):
        """δ(ε): the smallest δ such that the claim implies (ε, δ)-DP (vectorized, ε ≥ 0)."""
        eps = np.maximum(np.asarray(epsilon, dtype=float), 0.0)
        if self.kind == "zcdp":
            out = _zcdp_delta(float(self.rho), eps)
        else:
            e0 = math.exp(float(self.epsilon))
            d0 = float(self.delta)
            out = d0 + (1.0 - d0) * np.maximum(0.0, e0 - np.exp(np.minimum(eps, 700.0))) / (1 + e0)
        return float(out) if np.ndim(out) == 0 else out

    def epsilon_at(self, delta):
        """ε(δ): the smallest ε with δ(ε) ≤ ``delta`` (inf when no ε reaches it; vectorized)."""
        d = np.asarray(delta, dtype=float)
        if np.any((d <= 0) | (d >= 1)):
            raise ParameterError(f"delta must lie strictly between 0 and 1, got {delta!r}.")
        if self.kind == "zcdp":
            out = _zcdp_epsilon(float(self.rho), d)
        else:
            e0 = math.exp(float(self.epsilon))
            d0 = float(self.delta)
            with np.errstate(divide="ignore", invalid="ignore"):
                t = e0 - (d - d0) * (1 + e0) / (1 - d0)
                out = np.where(d < d0, np.inf, np.log(np.maximum(t, 1.0)))
        return float(out) if np.ndim(out) == 0 else out

    def simple_epsilon_at(self, delta: float) -> float:
        """zCDP only: Bun & Steinke's ε = ρ + 2·sqrt(ρ ln(1/δ)) (looser than :meth:`epsilon_at`)."""
        if self.kind != "zcdp":
            raise ParameterError("simple_epsilon_at is the zCDP conversion; this claim is "
                                 f"{self.describe()}.")
        r = float(self.rho)
        return r + 2.0 * math.sqrt(r * math.log(1.0 / float(delta)))

    def envelope(self, q):
        """f(q) = min(1, inf_ε e^ε q + δ(ε)): the largest P[M(D1) ∈ E] the claim allows when
        P[M(D2) ∈ E] = q (increasing and concave in q; vectorized)."""
        q = np.clip(np.asarray(q, dtype=float), 0.0, 1.0)
        if self.kind == "zcdp":
            slopes, offsets = self._lines
            out = (slopes[None, :] * q.reshape(-1, 1) + offsets[None, :]).min(axis=1)
            out = out.reshape(q.shape)
        else:
            e0 = math.exp(float(self.epsilon))
            d0 = float(self.delta)
            out = np.minimum(e0 * q + d0, q + float(self.delta_at(0.0)))
        out = np.minimum(out, 1.0)
        return float(out) if np.ndim(out) == 0 else out

    @functools.cached_property
    def _lines(self) -> tuple[np.ndarray, np.ndarray]:
        """zCDP: the lines (e^ε, δ(ε)) whose lower envelope is f, on a grid of ε. On a grid
        the minimum is an upper bound on f (the null grows, so a test against it stays
        valid); the grid reaches the ε where δ(ε) < 1e-300."""
        grid = np.concatenate([[0.0], np.geomspace(1e-4, max(self.epsilon_at(1e-300), 1.0),
                                                   800)])
        return np.exp(grid), np.asarray(self.delta_at(grid))

    def point(self, epsilon: float | None = None, delta: float | None = None
              ) -> tuple[float, float]:
        """The (ε, δ) point a test runs at: ``epsilon`` with δ(ε), ``delta`` with ε(δ), or the
        claim's own (ε, δ) (zCDP: ε(δ) at ``delta``, which is then required)."""
        if epsilon is not None and delta is not None:
            return float(epsilon), float(delta)
        if epsilon is not None:
            return float(epsilon), float(self.delta_at(float(epsilon)))
        if delta is not None:
            e = float(self.epsilon_at(float(delta)))
            if math.isinf(e):  # a test at ε = ∞ can find nothing: say so, not "no violation"
                raise ParameterError(
                    f"the claim {self.describe()} says nothing at δ = {float(delta):g} (its ε "
                    "there is ∞), so there is nothing to test; give the test epsilon too ("
                    + advice("epsilon=...", "--epsilon E") + ") or a δ the claim covers.")
            return e, float(delta)
        if self.kind == "zcdp":
            raise ParameterError(f"the claim {self.describe()} has no single (ε, δ): give the "
                                 "test delta (delta=..., --delta) or the test epsilon.")
        return float(self.epsilon), float(self.delta)

    # -- words -----------------------------------------------------------------------------
    def describe(self) -> str:
        """``ε = 0.5``, ``(ε, δ) = (0.5, 1e-05)`` or ``ρ = 0.125 (zCDP)``."""
        if self.kind == "zcdp":
            return f"ρ = {self.rho:g} (zCDP)"
        if self.kind == "approx":
            return f"(ε, δ) = ({self.epsilon:g}, {self.delta:g})"
        return f"ε = {self.epsilon:g}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "epsilon": self.epsilon, "delta": self.delta,
                "rho": self.rho}

    @staticmethod
    def from_dict(d: dict) -> Claim | None:
        if not d:
            return None
        return Claim.make(d.get("epsilon"), d.get("delta"), d.get("rho"))


def _positive(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a positive number, got {value!r}.") from None
    if not (v > 0 and math.isfinite(v)):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}.")
    return v


def _delta(value) -> float:
    if value is None:
        return 0.0
    try:
        d = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"delta must be a number in [0, 1), got {value!r}.") from None
    if not 0.0 <= d < 1.0:
        raise ParameterError(
            f"delta must lie in [0, 1) (a probability of failure below 1), got {value!r}; "
            "use delta=0 for a pure ε claim.")
    return d


def _zcdp_log_terms(rho: float, eps: np.ndarray, log_am1: np.ndarray) -> np.ndarray:
    """log of exp((α−1)(αρ−ε))/(α−1)·(1−1/α)^α on a grid of log(α − 1) (CKS20 Sec. 2.3)."""
    am1 = np.exp(log_am1)[None, :]
    a = am1 + 1.0
    e = eps.reshape(-1, 1)
    return am1 * (a * rho - e) - np.log(am1) + a * (np.log(am1) - np.log(a))


def _zcdp_delta(rho: float, eps: np.ndarray) -> np.ndarray:
    flat = np.atleast_1d(eps).ravel()
    vals = _zcdp_log_terms(rho, flat, _LOG_AM1)
    best = np.argmin(vals, axis=1)
    # refine around the grid minimum (the log-term is convex in alpha)
    lo = _LOG_AM1[np.maximum(best - 1, 0)]
    hi = _LOG_AM1[np.minimum(best + 1, len(_LOG_AM1) - 1)]
    fine = lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, 201)[None, :]
    a = np.exp(fine) + 1.0
    e = flat[:, None]
    logs = (a - 1) * (a * rho - e) - fine + a * (fine - np.log(a))
    out = np.minimum(np.exp(np.minimum(logs.min(axis=1), 0.0)), 1.0)
    out = np.where(flat == 0, np.minimum(out, 1.0), out)
    return out.reshape(np.shape(eps)) if np.ndim(eps) else out[0]


def _zcdp_epsilon(rho: float, delta: np.ndarray) -> np.ndarray:
    """ε(δ) = inf_α αρ + (ln(1/δ) + (α−1) ln(1−1/α) − ln α)/(α−1) (CKS20 Sec. 2.3, solved
    for ε), floored at 0."""
    flat = np.atleast_1d(delta).ravel()

    def eps_on(log_am1: np.ndarray) -> np.ndarray:
        am1 = np.exp(log_am1)[None, :]
        a = am1 + 1.0
        return a * rho + (np.log(1.0 / flat)[:, None] + am1 * (np.log(am1) - np.log(a))
                          - np.log(a)) / am1

    vals = eps_on(_LOG_AM1)
    best = np.argmin(vals, axis=1)
    out = np.empty(len(flat))
    for i, b in enumerate(best):  # one small refinement per δ (a handful of δ values)
        lo = _LOG_AM1[max(b - 1, 0)]
        hi = _LOG_AM1[min(b + 1, len(_LOG_AM1) - 1)]
        fine = np.linspace(lo, hi, 401)
        am1 = np.exp(fine)
        a = am1 + 1.0
        e = a * rho + (math.log(1.0 / flat[i]) + am1 * (np.log(am1) - np.log(a))
                       - np.log(a)) / am1
        out[i] = max(float(e.min()), 0.0)
    return out.reshape(np.shape(delta)) if np.ndim(delta) else out[0]


CLAIM_ULPS = 4  # the rounding a claimed ε written as a float is allowed (math.log(3): ln 3)


def as_claimed(epsilon: float) -> float:
    """A claimed ε with its own float rounding allowed (:data:`CLAIM_ULPS` ulps up): the ε an
    exact comparison holds a claim to."""
    return float(epsilon) + CLAIM_ULPS * math.ulp(float(epsilon))


def exp_below(x: float) -> Fraction:
    """A rational at most the real e^x (to 40 digits, then 1e-35 below): the float exp
    rounds up as often as down, and a δ taken with e^ε rounded up is below the true one."""
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 40
        return Fraction(decimal.Decimal(float(x)).exp()) * (1 - Fraction(1, 10**35))


__all__ = ["CLAIM_ULPS", "KINDS", "Claim", "as_claimed", "exp_below"]
