"""Confidence intervals for probabilities and for the privacy violation eps(x, x', Phi).

Pure math (no I/O, no global state). Following Sec. 4 of DP-Finder (Bichsel et al., CCS 2018):

* :func:`hoeffding_interval` -- Sec. 4.3, guaranteed: Hoeffding's inequality on each
  probability at confidence 1 - alpha/2, union bound, then ``[l, u]`` on eps;
* :func:`clt_interval` -- Sec. 4.4, approximate: the same with normal intervals whose width
  comes from the empirical variance (App. B);
* :func:`mclt_interval` -- Sec. 4.5, approximate: the joint normal likelihood of the two
  correlated estimates (Eq. (10)), the CDF of their ratio by Hinkley's theorem (Thm. 4.4)
  with the bivariate normal integral of App. C, and a binary search for the smallest
  Delta_eps with *nominal* coverage 1 - alpha. Its real coverage is below nominal
  (``benchmarks/search_intervals.py`` measures 0.884 at nominal 0.90), so privet uses it
  only to size samples (Sec. 6.1), never as a confidence statement; its
  :class:`EpsInterval` says ``approximate=True``;
* :func:`clopper_pearson` -- exact binomial bounds, used to certify a lower bound on eps
  from a fresh sample ("eps >= L with confidence 1 - alpha").

All functions take counts/means and return plain floats, so they are easy to test on
known cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

__all__ = [
    "EpsInterval",
    "Moments",
    "bernoulli_moments",
    "bivariate_upper",
    "certified_lower_bound",
    "clopper_pearson",
    "clt_interval",
    "eps_interval",
    "hinkley_cdf",
    "hoeffding_interval",
    "mclt_interval",
    "moments",
    "paired_lower_bound",
    "either_lower_bound",
    "pvalue_of_bound",
    "samples_needed",
]

METHODS = ("hoeffding", "clt", "mclt")


@dataclass(frozen=True)
class Moments:
    """Sufficient statistics of n paired Bernoulli samples (S_i, S'_i) (App. B of DP-Finder).

    ``p1``/``p2`` are the sample means, ``var1``/``var2``/``cov`` the unbiased sample
    (co)variances; for an independent pair, ``cov`` is 0.
    """

    p1: float
    p2: float
    var1: float
    var2: float
    cov: float
    n: int

    @property
    def epsilon(self) -> float:
        """The estimate of Eq. (6): log(p1 / p2) (inf when p2 = 0 < p1, nan when 0/0)."""
        return _log_ratio(self.p1, self.p2)

    @property
    def rho(self) -> float:
        if self.var1 <= 0 or self.var2 <= 0:
            return 0.0
        return float(np.clip(self.cov / math.sqrt(self.var1 * self.var2), -1.0, 1.0))


def moments(s1: np.ndarray, s2: np.ndarray) -> Moments:
    """Moments of paired 0/1 (or [0, 1]) samples; App. B's unbiased variance and covariance."""
    a = np.asarray(s1, dtype=float)
    b = np.asarray(s2, dtype=float)
    n = a.shape[0]
    if n < 2 or b.shape[0] != n:
        raise ValueError("moments need two aligned samples of size >= 2.")
    m1, m2 = a.mean(), b.mean()
    var1 = (np.dot(a, a) - n * m1 * m1) / (n - 1)
    var2 = (np.dot(b, b) - n * m2 * m2) / (n - 1)
    cov = (np.dot(a, b) - n * m1 * m2) / (n - 1)
    return Moments(float(m1), float(m2), max(float(var1), 0.0), max(float(var2), 0.0),
                   float(cov), int(n))


def bernoulli_moments(p1: float, p2: float, n: int, rho: float = 0.0) -> Moments:
    """Moments of n Bernoulli pairs with the given means and correlation (population form)."""
    v1, v2 = p1 * (1 - p1), p2 * (1 - p2)
    return Moments(p1, p2, v1, v2, rho * math.sqrt(v1 * v2), int(n))


@dataclass(frozen=True)
class EpsInterval:
    """An interval ``[low, high]`` for eps(x, x', Phi) around ``estimate``.

    ``diameter`` is ``high - low`` (the quantity DP-Finder Sec. 6.1 drives below 4e-3).
    ``confidence`` is nominal; ``approximate`` is True for the normal approximations (CLT,
    M-CLT), whose real coverage may fall short of it (Hoeffding's is guaranteed).
    """

    low: float
    high: float
    estimate: float
    method: str
    confidence: float

    @property
    def approximate(self) -> bool:
        return self.method != "hoeffding"

    def describe(self) -> str:
        level = f"{float(self.confidence) * 100:.10g}%"  # 0.9999999 is not 100%
        name = {"clt": "CLT", "mclt": "M-CLT"}.get(self.method, self.method)
        label = (f"approximate {level} interval ({name}, a normal approximation: coverage "
                 "not guaranteed)" if self.approximate
                 else f"{level} confidence interval (Hoeffding)")
        return f"[{self.low:.4g}, {self.high:.4g}], {label}"

    @property
    def diameter(self) -> float:
        return self.high - self.low


def _log_ratio(p1: float, p2: float) -> float:
    if p2 <= 0:
        return math.inf if p1 > 0 else math.nan
    if p1 <= 0:
        return -math.inf
    return math.log(p1 / p2)


def _bounds_from_prob_intervals(m: Moments, d1: float, d2: float, method: str,
                                confidence: float) -> EpsInterval:
    lo = _log_ratio(max(m.p1 - d1, 0.0), min(m.p2 + d2, 1.0))
    hi = _log_ratio(min(m.p1 + d1, 1.0), max(m.p2 - d2, 0.0))
    lo = -math.inf if math.isnan(lo) else lo
    hi = math.inf if math.isnan(hi) else hi
    return EpsInterval(lo, hi, m.epsilon, method, confidence)


def hoeffding_interval(m: Moments, confidence: float = 0.9) -> EpsInterval:
    """Sec. 4.3 of DP-Finder: guaranteed interval for eps.

    Each probability gets ``[p - D, p + D]`` with ``D = sqrt(log(4/alpha) / (2n))`` (the
    paper writes ``sqrt(log(alpha/4) / (-2n))``), so ``2 exp(-2 n D^2) = alpha/2``; the union
    bound gives joint confidence 1 - alpha and ``[l, u]`` with
    ``l = log((p - D)/(p' + D))``, ``u = log((p + D)/(p' - D))``.
    """
    alpha = 1.0 - confidence
    d = math.sqrt(math.log(4.0 / alpha) / (2.0 * m.n))
    return _bounds_from_prob_intervals(m, d, d, "hoeffding", confidence)


def clt_interval(m: Moments, confidence: float = 0.9) -> EpsInterval:
    """Sec. 4.4 of DP-Finder: heuristic normal intervals per probability, union bound.

    ``D = -sqrt(Var^/n) * Phi^{-1}(alpha/4)`` for each probability (confidence 1 - alpha/2),
    then ``[l, u]`` as in Sec. 4.3.
    """
    alpha = 1.0 - confidence
    z = -stats.norm.ppf(alpha / 4.0)
    d1 = z * math.sqrt(m.var1 / m.n)
    d2 = z * math.sqrt(m.var2 / m.n)
    return _bounds_from_prob_intervals(m, d1, d2, "clt", confidence)


def bivariate_upper(h, k, gamma):
    """App. C of DP-Finder: ``L(h, k; gamma) = P(Y1 > h, Y2 > k)`` for standard normals with
    correlation ``gamma``.

    (The text copy says "Pr[Y1 <= h, Y2 <= k]" but integrates from h and k to infinity;
    Hinkley (1969) defines L as the upper orthant probability, which is what we compute.)
    Vectorized, by Owen's T function: with ``Phi2`` the lower CDF,
    ``Phi2(h, k; r) = (Phi(h) + Phi(k))/2 - T(h, a_h) - T(k, a_k) - beta``,
    ``a_h = (k - r h)/(h sqrt(1 - r^2))``, ``beta = 1/2`` iff ``h k < 0`` or
    (``h k = 0`` and ``h + k < 0``); and ``L(h, k; r) = Phi2(-h, -k; r)``.
    """
    h = -np.asarray(h, dtype=float)
    k = -np.asarray(k, dtype=float)
    r = np.clip(np.asarray(gamma, dtype=float), -1 + 1e-12, 1 - 1e-12)
    h, k, r = np.broadcast_arrays(h, k, r)
    s = np.sqrt(1.0 - r * r)
    # a zero argument makes a_h infinite; nudge it (the CDF is continuous there)
    hh = np.where(h == 0, 1e-300, h)
    kk = np.where(k == 0, 1e-300, k)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ah = (kk - r * hh) / (hh * s)
        ak = (hh - r * kk) / (kk * s)
    ah = np.nan_to_num(ah, nan=0.0, posinf=1e300, neginf=-1e300)
    ak = np.nan_to_num(ak, nan=0.0, posinf=1e300, neginf=-1e300)
    beta = np.where((hh * kk < 0), 0.5, 0.0)
    out = 0.5 * (special.ndtr(hh) + special.ndtr(kk)) - special.owens_t(hh, ah) \
        - special.owens_t(kk, ak) - beta
    # infinite arguments: the orthant probability degenerates to a one-dimensional one
    out = np.where(np.isneginf(h) | np.isneginf(k), 0.0, out)
    out = np.where(np.isposinf(h), special.ndtr(k), out)
    out = np.where(np.isposinf(k), special.ndtr(h), out)
    out = np.where(np.isposinf(h) & np.isposinf(k), 1.0, out)
    out = np.clip(out, 0.0, 1.0)
    return out if out.ndim else float(out)


def hinkley_cdf(w, mu1: float, mu2: float, s1: float, s2: float, rho: float):
    """Thm. 4.4 of DP-Finder (Hinkley 1969): ``P(X/X' <= w)`` for jointly normal (X, X')
    with means ``mu1, mu2``, standard deviations ``s1, s2`` and correlation ``rho``."""
    w = np.asarray(w, dtype=float)
    rho = float(np.clip(rho, -1 + 1e-9, 1 - 1e-9))
    a = np.sqrt(w * w / (s1 * s1) - 2 * rho * w / (s1 * s2) + 1.0 / (s2 * s2))
    gam = (s2 * w - rho * s1) / (s1 * s2 * a)
    h1 = (mu1 - mu2 * w) / (s1 * s2 * a)
    out = bivariate_upper(h1, -mu2 / s2, gam) + bivariate_upper(-h1, mu2 / s2, gam)
    return np.clip(out, 0.0, 1.0)


def mclt_interval(m: Moments, confidence: float = 0.9, tol: float = 1e-7) -> EpsInterval:
    """Sec. 4.5 of DP-Finder: the smallest symmetric ``[eps^ - D, eps^ + D]`` with
    ``F(exp(eps^ + D)) - F(exp(eps^ - D)) >= 1 - alpha``, where F is Hinkley's CDF of the
    ratio under the joint likelihood of Eq. (10) (means p, p', covariance C/n).
    Binary search on D. Degenerate cases (a zero variance, p' = 0) give an infinite width
    unless both estimates are identical in every sample (then the width is 0).
    """
    est = m.epsilon
    if not math.isfinite(est):
        return EpsInterval(-math.inf, math.inf, est, "mclt", confidence)
    s1 = math.sqrt(m.var1 / m.n)
    s2 = math.sqrt(m.var2 / m.n)
    if s1 == 0 or s2 == 0:
        if s1 == 0 and s2 == 0:  # every sample agrees: no spread at all
            return EpsInterval(est, est, est, "mclt", confidence)
        return EpsInterval(-math.inf, math.inf, est, "mclt", confidence)
    target = confidence
    rho = m.rho

    def cover(d: float) -> float:
        # far out (d in the hundreds) the ratio's CDF at exp(est + d) overflows to NaN: it
        # is then its limit 1 (no overflow warning for the user to puzzle over)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            w = np.exp(np.clip([est - d, est + d], -745.0, 709.0))
            f = hinkley_cdf(w, m.p1, m.p2, s1, s2, rho)
        top = 1.0 if math.isnan(f[1]) else float(f[1])
        return top - (0.0 if math.isnan(f[0]) else float(f[0]))

    hi = max(4 * s1 / max(m.p1, 1e-300) + 4 * s2 / max(m.p2, 1e-300), 1e-9)
    while cover(hi) < target:
        hi *= 2
        if hi > 1e3:
            return EpsInterval(-math.inf, math.inf, est, "mclt", confidence)
    lo = 0.0
    while hi - lo > tol * max(hi, 1e-12) and hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        if cover(mid) >= target:
            hi = mid
        else:
            lo = mid
    return EpsInterval(est - hi, est + hi, est, "mclt", confidence)


def eps_interval(m: Moments, method: str = "mclt", confidence: float = 0.9) -> EpsInterval:
    """Dispatch to :func:`hoeffding_interval`, :func:`clt_interval` or :func:`mclt_interval`."""
    if method == "hoeffding":
        return hoeffding_interval(m, confidence)
    if method == "clt":
        return clt_interval(m, confidence)
    if method == "mclt":
        return mclt_interval(m, confidence)
    raise ValueError(f"unknown interval method {method!r}; use one of {', '.join(METHODS)}.")


def samples_needed(p1: float, p2: float, rho: float, method: str, delta_eps: float = 2e-3,
                   confidence: float = 0.9, n_max: float = 1e13) -> int:
    """Smallest n whose interval half-width (Delta_eps = diameter / 2) is at most
    ``delta_eps`` when the sample moments equal the population ones (Fig. 6 of DP-Finder)."""

    def half(n: float) -> float:
        iv = eps_interval(bernoulli_moments(p1, p2, int(n), rho), method, confidence)
        return iv.diameter / 2

    lo, hi = 10.0, 1000.0
    while half(hi) > delta_eps:
        lo, hi = hi, hi * 2
        if hi > n_max:
            return int(n_max)
    while hi - lo > max(1.0, 1e-4 * hi):
        mid = 0.5 * (lo + hi)
        if half(mid) > delta_eps:
            lo = mid
        else:
            hi = mid
    return int(math.ceil(hi))


# -- certified bounds --------------------------------------------------------------------

def clopper_pearson(k: int, n: int, alpha: float, side: str = "two") -> tuple[float, float]:
    """Exact (Clopper-Pearson) bounds for a binomial proportion from ``k`` of ``n``.

    ``side='two'``: the central interval at level 1 - alpha; ``'lower'``/``'upper'``: a
    one-sided bound at level 1 - alpha (the other end is 0 or 1).
    """
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}.")
    a = alpha / 2 if side == "two" else alpha
    lower = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, a))
    # the complemented inverse keeps tiny levels exact (1 - a rounds to 1 below 1e-16)
    upper = 1.0 if k == n else float(special.betainccinv(k + 1, n - k, a))
    if side == "lower":
        return lower, 1.0
    if side == "upper":
        return 0.0, upper
    return lower, upper


def certified_lower_bound(k1: int, n1: int, k2: int, n2: int, confidence: float = 0.9, *,
                          alpha: float | None = None) -> float:
    """``eps >= log(p1_low / p2_up)`` with confidence 1 - alpha.

    One-sided Clopper-Pearson bounds at level 1 - alpha/2 on each probability and a union
    bound (the samples need not be independent of each other, only fresh). Returns -inf
    when the lower bound on p1 is 0 and +inf never (p2_up > 0 always for finite n).
    ``alpha`` (instead of ``confidence``) keeps levels below 1e-16 exact.
    """
    alpha = 1.0 - confidence if alpha is None else float(alpha)
    lo1, _ = clopper_pearson(k1, n1, alpha / 2, "lower")
    _, up2 = clopper_pearson(k2, n2, alpha / 2, "upper")
    return _log_ratio(lo1, up2) if lo1 > 0 else -math.inf


def paired_lower_bound(n11: int, n10: int, n01: int, n: int, confidence: float = 0.9, *,
                       alpha: float | None = None) -> float:
    """A certified lower bound from n *paired* (correlated) samples (S_i, S'_i).

    With ``b = P(S=1, S'=0)``, ``c = P(S=0, S'=1)`` and ``p' = P(S'=1)``, the ratio is
    ``p/p' = 1 + (b - c)/p'``. One-sided Clopper-Pearson bounds at level 1 - alpha/3 on b
    (below), c (above) and p' (above), joined by a union bound, give
    ``eps >= log(1 + max(b_low - c_up, 0)/p'_up)`` -- or, when the event never happened
    under x' (``p'`` counted 0), the same formula, which then grows with n.
    Correlated sampling makes b and c small, so this is far tighter than bounding p and p'
    separately when the two runs share their noise. ``alpha`` (instead of ``confidence``)
    keeps levels below 1e-16 exact.
    """
    alpha = ((1.0 - confidence) if alpha is None else float(alpha)) / 3.0
    b_lo, _ = clopper_pearson(n10, n, alpha, "lower")
    _, c_up = clopper_pearson(n01, n, alpha, "upper")
    _, p2_up = clopper_pearson(n11 + n01, n, alpha, "upper")
    ratio = 1.0 + (b_lo - c_up) / p2_up
    return math.log(ratio) if ratio > 0 else -math.inf


def either_lower_bound(n11: int, n10: int, n01: int, confidence: float = 0.9, *,
                       share: float = 0.9, alpha: float | None = None) -> float:
    """A certified lower bound from pairs (S_i, S'_i) independent of each other, given
    only the pairs where the event occurred on either side (m = n11 + n10 + n01).

    Given m, the labels of those pairs are independent draws, so the k = n11 + n10 with S
    are Binomial(m, p/q) and the k' = n11 + n01 with S' Binomial(m, p'/q), with
    q = P(S or S'): ``p/p' = (p/q)/(p'/q)``. One-sided Clopper-Pearson bounds, below on
    p/q at level ``(1 - share) alpha`` and above on p'/q at ``share * alpha``, joined by a
    union bound, give ``eps >= log(low / up)``. It holds for any dependence within a pair
    (paired samples under Replay, or independent runs taken as pairs). When the two runs
    share their noise, S' rarely occurs without S: p/q is close to 1 and its bound costs
    little, so nearly all of alpha goes to p'/q, whose binomial variance (1 - p'/q) is far
    below a count's. An event never seen under x' gets a bound that grows with m.
    """
    alpha = ((1.0 - confidence) if alpha is None else float(alpha))
    m = int(n11) + int(n10) + int(n01)
    if m <= 0 or n11 + n10 <= 0:
        return -math.inf
    lo, _ = clopper_pearson(int(n11) + int(n10), m, (1.0 - share) * alpha, "lower")
    _, up = clopper_pearson(int(n11) + int(n01), m, share * alpha, "upper")
    return _log_ratio(lo, up) if lo > 0 else -math.inf


def pvalue_of_bound(bound: Callable[[float], float], epsilon: float,
                    floor: float = 1e-300) -> float:
    """The p-value of H0: eps <= ``epsilon`` from a family of lower confidence bounds.

    ``bound(alpha)`` is a lower confidence bound on eps at confidence 1 - alpha (such as
    ``lambda a: certified_lower_bound(k1, n1, k2, n2, alpha=a)``), non-decreasing in alpha.
    ``p = inf{a : bound(a) > epsilon}``: under H0, ``P(p < u) <= P(bound(u) > eps_true)
    <= u``, so certified bounds join a multiple-testing correction (Holm) as p-values.
    Found by bisection on log(a) to a relative precision of 1e-6; 0 when even
    ``bound(floor)`` (``floor`` = 1e-300) exceeds ``epsilon`` (below any printable level:
    shown as ``p < 1e-300``), 1 when ``bound(1)`` does not.
    """
    if bound(floor) > epsilon:
        return 0.0
    if not bound(1.0) > epsilon:
        return 1.0
    lo, hi = math.log(floor), 0.0  # bound(e^lo) <= epsilon < bound(e^hi)
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        if bound(math.exp(mid)) > epsilon:
            hi = mid
        else:
            lo = mid
    return float(math.exp(hi))
