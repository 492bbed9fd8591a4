"""Certified lower bounds on eps from event counts, vectorized over many candidate events.

Pure math (no I/O, no global state). Four certificates, each "eps >= L with confidence
1 - alpha" from counts of one event on a *fresh* sample of n runs of M(x) and n of M(x'):

* :func:`union_bounds` -- independent samples: one-sided Clopper-Pearson bounds on
  p = P[M(x) in E] (below) and p' (above) at level alpha/2 each, joined by a union bound:
  ``L = ln(p_low / p'_up)`` (as :func:`privet.stats.intervals.certified_lower_bound`).
* :func:`conditional_bounds` -- independent samples taken as n pairs (the i-th run of M(x)
  with the i-th of M(x')): given the number m = n10 + n01 of discordant pairs (in E on one
  side only), n10 is Binomial(m, pi) exactly, with pi / (1 - pi) the odds ratio
  OR = p (1 - p') / (p' (1 - p)) (the exact conditional test of McNemar, valid for any
  pairing). Since p / p' = OR (1 - p) / (1 - p'), a Clopper-Pearson bound on pi at level
  ``share * alpha`` and bounds on p (above) and p' (below) at ``(1 - share) alpha / 2`` each
  give ``L = ln(OR_low) + ln(1 - p_up) - ln(1 - p'_low)`` (the last two computed as bounds
  on the complements, 1 - p_up = the lower bound of 1 - p). One test instead of two halves of
  alpha: for rare events (small p, p') the margin is about 0.55 times the union bound's,
  a third of the samples; for common events the (1 - p) terms cost more and the union bound
  wins. Which one to use is decided before the fresh sample is drawn (:func:`projected`).
* :func:`paired_bounds` -- correlated samples (Replay): as
  :func:`privet.stats.intervals.paired_lower_bound`, ``ratio = 1 + (b - c)/p'`` with b, c
  the discordant probabilities, union bound over three Clopper-Pearson bounds.

* :func:`either_bounds` -- pairs independent of each other (paired samples, or
  independent runs taken as pairs): given the m = n11 + n10 + n01 pairs with the event on
  either side, k = n11 + n10 is Binomial(m, p/q) and k' = n11 + n01 Binomial(m, p'/q)
  (q = P[E on either side]), so ``L = ln(low(p/q)) - ln(up(p'/q))`` at ``(1 - share)
  alpha`` and ``share * alpha`` (as :func:`privet.stats.intervals.either_lower_bound`).
  Under Replay the event under x' nearly implies it under x: p/q is near 1 and cheap to
  bound, and p'/q has binomial variance (1 - p'/q), not a count's: on RAPPOR's best events
  its margin is about half the three-way paired one's.

An event never seen under x' (p' counted 0) gets a finite bound that grows with n, never a
cap. :func:`projected` turns the counts of a *selection* sample into the certificate a fresh
sample of another size would give if it showed the same frequencies, shrunk by one
standard error towards no violation (a selection heuristic: it penalizes events seen a
handful of times, where the winner's curse is worst; with ``fast``, Wilson's score bounds
stand in for Clopper-Pearson's); only the fresh sample certifies.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["METHODS", "SHARES", "conditional_bounds", "cp_lower", "cp_upper", "decoupled",
           "either_bounds",
           "paired_bounds", "projected", "union_bounds", "wilson_lower", "wilson_upper"]

METHODS = ("union", "conditional", "paired", "either")
SHARE = 0.8  # the part of alpha the conditional certificate gives its odds-ratio bound
SHARES = (0.5, 0.8, 0.9, 0.95, 0.99)  # the splits a certificate plan chooses from


def cp_lower(k, n, alpha) -> np.ndarray:
    """One-sided lower Clopper-Pearson bound(s) at level 1 - alpha (0 where k = 0); k may
    be fractional (projected counts)."""
    k, n, alpha = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, alpha)))
    safe = np.where(k > 0, k, 1.0)
    out = special.betaincinv(safe, np.maximum(n - safe + 1, 1e-300), alpha)
    return np.where(k > 0, out, 0.0)


def cp_upper(k, n, alpha) -> np.ndarray:
    """One-sided upper Clopper-Pearson bound(s) at level 1 - alpha (1 where k = n)."""
    k, n, alpha = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, alpha)))
    safe = np.where(k < n, k, n - 1)
    out = special.betaincinv(safe + 1, np.maximum(n - safe, 1e-300), 1 - alpha)
    return np.where(k < n, out, 1.0)


def wilson_lower(k, n, alpha) -> np.ndarray:
    """Wilson's score bound (one-sided, level 1 - alpha): a fast stand-in for
    :func:`cp_lower` when ranking many candidates (it is not a certificate)."""
    return _wilson(k, n, alpha, -1.0)


def wilson_upper(k, n, alpha) -> np.ndarray:
    """Wilson's upper score bound; see :func:`wilson_lower`."""
    return _wilson(k, n, alpha, 1.0)


def _wilson(k, n, alpha, sign: float) -> np.ndarray:
    k, n, alpha = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k, n, alpha)))
    z = special.ndtri(1.0 - alpha)
    p = k / n
    mid = p + z * z / (2 * n)
    half = z * np.sqrt(np.maximum(p * (1 - p) / n + z * z / (4 * n * n), 0.0))
    return np.clip((mid + sign * half) / (1 + z * z / n), 0.0, 1.0)


def _log(v: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(v)


def union_bounds(k1, n1, k2, n2, confidence: float = 0.9, fast: bool = False) -> np.ndarray:
    """``ln(p_low / p'_up)`` at level alpha/2 each (-inf where p_low = 0); ``fast`` uses
    Wilson's bounds (ranking only)."""
    lower, upper = (wilson_lower, wilson_upper) if fast else (cp_lower, cp_upper)
    alpha = 1.0 - float(confidence)
    lo = lower(k1, n1, alpha / 2)
    up = upper(k2, n2, alpha / 2)
    return np.where(lo > 0, _log(lo) - _log(up), -np.inf)


def conditional_bounds(n10, n01, k1, k2, n, confidence: float = 0.9,
                       share: float = SHARE, fast: bool = False) -> np.ndarray:
    """The exact conditional certificate of independent pairs (module docstring):
    ``ln(OR_low) + ln(1 - p_up) - ln(1 - p'_low)``; ``k1 = n11 + n10``, ``k2 = n11 + n01``."""
    lower, upper = (wilson_lower, wilson_upper) if fast else (cp_lower, cp_upper)
    alpha = 1.0 - float(confidence)
    n10, n01 = np.broadcast_arrays(np.asarray(n10, dtype=float), np.asarray(n01, dtype=float))
    m = n10 + n01
    pi = lower(n10, np.maximum(m, 1.0), share * alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_or = _log(pi) - _log(1.0 - pi)
    rest = (1.0 - share) * alpha / 2
    # 1 - p_up and 1 - p'_low as bounds on the complements' counts (the same numbers,
    # without cancellation when p or p' is near 1)
    k1, k2, n = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (k1, k2, n)))
    miss1 = lower(n - k1, n, rest)
    miss2 = upper(n - k2, n, rest)
    with np.errstate(invalid="ignore"):
        out = log_or + _log(miss1) - _log(miss2)
    return np.where((m > 0) & (pi > 0) & (miss1 > 0), out, -np.inf)


def paired_bounds(n11, n10, n01, n, confidence: float = 0.9, fast: bool = False
                  ) -> np.ndarray:
    """``ln(1 + (b_low - c_up) / p'_up)`` for correlated pairs (alpha/3 each): a lower bound
    on ln(p/p') where it is at least 0 (b_low >= c_up); a negative value only ranks
    candidates (the bound on p' from above would make it too high), and a certified
    epsilon is never below 0."""
    lower, upper = (wilson_lower, wilson_upper) if fast else (cp_lower, cp_upper)
    alpha = (1.0 - float(confidence)) / 3.0
    n11, n10, n01 = (np.asarray(v, dtype=float) for v in (n11, n10, n01))
    b_lo = lower(n10, n, alpha)
    c_up = upper(n01, n, alpha)
    p2_up = upper(n11 + n01, n, alpha)
    ratio = 1.0 + (b_lo - c_up) / p2_up
    return np.where(ratio > 0, _log(np.where(ratio > 0, ratio, 1.0)), -np.inf)


def either_bounds(n11, n10, n01, confidence: float = 0.9, share: float = SHARE,
                  fast: bool = False) -> np.ndarray:
    """``ln(low(p/q)) - ln(up(p'/q))`` on the m = n11 + n10 + n01 pairs with the event on
    either side (module docstring; -inf where m = 0 or the lower bound is 0)."""
    lower, upper = (wilson_lower, wilson_upper) if fast else (cp_lower, cp_upper)
    alpha = 1.0 - float(confidence)
    n11, n10, n01 = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (n11, n10, n01)))
    m = n11 + n10 + n01
    safe = np.maximum(m, 1.0)
    lo = lower(n11 + n10, safe, (1.0 - share) * alpha)
    up = upper(n11 + n01, safe, share * alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _log(lo) - _log(up)
    return np.where((m > 0) & (lo > 0), out, -np.inf)


def _moved(n11, n10, n01, n, shrink: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The counts moved ``shrink`` standard errors towards no violation (:func:`projected`)."""
    n11, n10, n01 = (np.asarray(v, dtype=float) for v in (n11, n10, n01))
    z = float(shrink)
    d10 = np.maximum(n10 - z * np.sqrt(n10), 0.0)
    # at most the pairs left beside the moved n10: an x' count moved past n made the
    # frequency of x' above 1, and an event of x' in nearly every pair (an oriented event
    # that favours x') projected an infinite certificate instead of a negative one
    d01 = np.minimum(n01 + z * np.sqrt(n01 + 1.0) + (n01 == 0),
                     np.maximum(float(n) - d10, 0.0))
    d11 = np.clip(n11, 0.0, np.maximum(float(n) - d10 - d01, 0.0))  # room for the moved
    return d11, d10, d01


def decoupled(n11, n10, n01, n, shrink: float = 1.0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of coupled pairs (the i-th runs of M(x) and M(x') given the same seed) as the
    counts independent pairs of the same frequencies would show: the discordant counts are
    first moved ``shrink`` standard errors towards no violation (as :func:`projected` moves
    them; with common random numbers they, not the marginal counts, carry the noise of the
    estimated ratio), then the moved marginals k1 = n11 + n10, k2 = n11 + n01 are paired as
    independent draws pair them on average (n11 = k1 k2 / n). Projected with shrink 0, they
    give the independent certificate a fresh sample of those frequencies would give."""
    d11, d10, d01 = _moved(n11, n10, n01, n, shrink)
    k1, k2 = d11 + d10, d11 + d01
    i11 = k1 * k2 / max(float(n), 1.0)
    return i11, np.maximum(k1 - i11, 0.0), np.maximum(k2 - i11, 0.0)


def projected(n11, n10, n01, n, size: float, confidence: float = 0.9, method: str = "union",
              shrink: float = 1.0, fast: bool = False, share: float = SHARE) -> np.ndarray:
    """The certificate ``method`` would give on a fresh sample of ``size`` pairs showing the
    frequencies of these counts (of ``n`` pairs), each count first moved ``shrink`` standard
    errors towards no violation (n10 down, n01 and the x' count up, plus one for a count of
    0). For independent samples the pairing of the counts is any (n11 may be the expected
    k1 k2 / n)."""
    d11, d10, d01 = _moved(n11, n10, n01, n, shrink)
    r = float(size) / float(n)
    a11, a10, a01 = d11 * r, d10 * r, d01 * r
    if method == "union":
        return union_bounds(a11 + a10, size, a11 + a01, size, confidence, fast)
    if method == "conditional":
        return conditional_bounds(a10, a01, a11 + a10, a11 + a01, size, confidence, share,
                                  fast)
    if method == "paired":
        return paired_bounds(a11, a10, a01, size, confidence, fast)
    if method == "either":
        return either_bounds(a11, a10, a01, confidence, share, fast)
    raise ValueError(f"unknown certificate {method!r}; use one of {', '.join(METHODS)}.")
