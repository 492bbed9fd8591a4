"""Privacy profiles δ(ε) of the Gaussian family, and their calibrations (pure math).

* :func:`gaussian_delta` -- the exact profile of the Gaussian mechanism with sensitivity Δ
  and noise σ, Theorem 8 of Balle & Wang, *Improving the Gaussian Mechanism for
  Differential Privacy: Analytical Calibration and Optimal Denoising* (ICML 2018):
  δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) with μ = Δ/σ.
* :func:`gaussian_epsilon` -- its inverse ε(δ); :func:`analytic_sigma` -- the smallest σ
  with δ(ε) ≤ δ (Balle & Wang's analytic calibration, found here by a root search on the
  exact profile rather than their Algorithm 1; the answer is the same);
  :func:`classic_sigma` -- the classic σ = Δ·sqrt(2 ln(1.25/δ))/ε of Dwork & Roth (Thm A.1),
  valid only for ε < 1.
* :func:`discrete_gaussian_delta` -- Theorem 7 of Canonne, Kamath, Steinke (NeurIPS 2020):
  adding N_Z(0, σ²) to an integer query of sensitivity Δ is (ε, δ)-DP for
  δ = P[Z > εσ²/Δ − Δ/2] − e^ε P[Z > εσ²/Δ + Δ/2], Z ~ N_Z(0, σ²) (exact, as a sum);
  :func:`discrete_gaussian_sigma` calibrates it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special


def gaussian_delta(epsilon, mu: float):
    """δ(ε) of the Gaussian mechanism with μ = Δ/σ (Balle & Wang 2018, Thm 8); vectorized in ε.

    The second term is evaluated in log space, so large ε does not overflow."""
    eps = np.asarray(epsilon, dtype=float)
    mu = float(mu)
    if mu <= 0:
        return np.zeros_like(eps) if eps.ndim else 0.0
    a = special.ndtr(mu / 2 - eps / mu)
    b = np.exp(eps + special.log_ndtr(-mu / 2 - eps / mu))
    out = np.clip(a - b, 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def gaussian_epsilon(delta: float, mu: float) -> float:
    """The smallest ε ≥ 0 with :func:`gaussian_delta` (ε, μ) ≤ δ."""
    d = float(delta)
    if gaussian_delta(0.0, mu) <= d:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, mu) > d:
        hi *= 2
    return float(optimize.brentq(lambda e: gaussian_delta(e, mu) - d, 0.0, hi, xtol=1e-13,
                                 rtol=1e-13))


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Balle & Wang's analytic calibration: the smallest σ with δ(ε) ≤ δ for sensitivity Δ."""
    eps, d = float(epsilon), float(delta)
    # δ(ε; μ) increases with μ = Δ/σ: find the largest admissible μ
    lo, hi = 1e-6, 1.0
    while gaussian_delta(eps, hi) < d:
        hi *= 2
    mu = optimize.brentq(lambda m: gaussian_delta(eps, m) - d, lo, hi, xtol=1e-14, rtol=1e-14)
    return float(sensitivity) / mu


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; proven only for ε < 1)."""
    return float(sensitivity) * math.sqrt(2 * math.log(1.25 / float(delta))) / float(epsilon)


def _dgauss_pmf(sigma2: float, sensitivity: int, extra: float = 0.0):
    """Support and pmf of N_Z(0, σ²), truncated where the tail is below 1e-40."""
    s = math.sqrt(sigma2)
    top = int(math.ceil(s * math.sqrt(2 * math.log(1e40)) + 2 + sensitivity + extra))
    k = np.arange(-top, top + 1)
    w = np.exp(-(k.astype(float) ** 2) / (2 * sigma2))
    return k, w / w.sum()


def discrete_gaussian_delta(epsilon, sigma2: float, sensitivity: int = 1):
    """δ(ε) of adding N_Z(0, σ²) to an integer query of sensitivity Δ (CKS20 Thm 7)."""
    eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
    k, p = _dgauss_pmf(float(sigma2), int(sensitivity), float(np.max(eps)) * sigma2)
    tail = np.cumsum(p[::-1])[::-1]                       # P[Z >= k_i]
    out = []
    for e in eps:
        def above(v: float) -> float:  # P[Z > v]
            idx = np.searchsorted(k, math.floor(v) + 1)
            return float(tail[idx]) if idx < len(k) else 0.0
        t = e * sigma2 / sensitivity
        out.append(max(above(t - sensitivity / 2) - math.exp(e) * above(t + sensitivity / 2),
                       0.0))
    arr = np.asarray(out)
    return float(arr[0]) if np.ndim(epsilon) == 0 else arr


def discrete_gaussian_sigma(epsilon: float, delta: float, sensitivity: int = 1) -> float:
    """The smallest σ (to 1e-9) with :func:`discrete_gaussian_delta` ≤ δ."""
    lo, hi = 1e-3, 1.0
    while discrete_gaussian_delta(epsilon, hi * hi, sensitivity) > delta:
        lo, hi = hi, hi * 2
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        if discrete_gaussian_delta(epsilon, mid * mid, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
    return hi


__all__ = ["analytic_sigma", "classic_sigma", "discrete_gaussian_delta",
           "discrete_gaussian_sigma", "gaussian_delta", "gaussian_epsilon"]
