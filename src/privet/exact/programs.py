"""BDD-language versions of the WMC paper's mechanisms, for sizes far beyond enumeration.

* :func:`randomized_response` -- Algorithm 4 (RR): each bit flips with probability lambda;
* :func:`rr_count` -- RRcount of Sec. V-D: the number of ones RR reports;
* :func:`geometric_above_threshold` -- Algorithm 5 (Appendix A) with the truncated geometric
  mechanism on ``{0..k}`` for the threshold and for every entry (lambda_1 = lambda_2);
* :func:`discrete_noisy_max` -- FAIER's Algorithm 2 (truncated geometric noise on {0..k},
  ties broken uniformly as "r <- i with probability 1/c").

These are programs of the embedded language, written as the paper writes them. Library
mechanisms written with the noise API do not need them: the Compile interpreter
(:mod:`privet.exact.compile`) turns the mechanism itself into a BDD.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..core.neighbors import all_differ, one_differs
from .bdd import Program, program


def randomized_response(n: int, lam=0.2) -> Program:
    """RR on n client bits (Algorithm 4); neighbors differ in exactly one bit."""

    def rr(p, x, lam=lam):
        return tuple(p.ite(p.flip(lam), 1 - xi, xi) for xi in x)

    return program(rr, length=n, low=0, high=1, neighbors=one_differs(1),
                   name=f"randomized_response(n={n})")


def rr_count(n: int, lam=0.2) -> Program:
    """RRcount (Sec. V-D): the count of ones among the RR outputs; V_x = count(x)."""

    def rrc(p, x, lam=lam):
        total = p.const(0)
        for xi in x:
            total = total + p.ite(p.flip(lam), 1 - xi, xi)
        return total

    return program(rrc, length=n, low=0, high=1, neighbors=one_differs(1),
                   name=f"rr_count(n={n})", truth=lambda x: int(np.sum(x)))


def geometric_above_threshold(n: int, k: int, threshold: int = 1, alpha=0.5,
                              alpha_q=None) -> Program:
    """Algorithm 5: index of the first entry whose noisy value reaches the noisy threshold.

    Inputs are lists of n integers in {0..k}; the noisy threshold and entries are
    ``clip(v + Z, 0, k)`` with Z two-sided alpha-geometric (the truncated geometric
    mechanism). The output n means "no entry reached the threshold". Neighbors: every
    entry differs by at most 1.
    """

    def gat(p, x, threshold=threshold, alpha=alpha, alpha_q=alpha_q):
        aq = alpha if alpha_q is None else alpha_q
        t = p.clip(threshold + p.geometric(alpha, -k, k), 0, k)
        out = p.const(len(x))
        noisy = [p.clip(xi + p.geometric(aq, -k, k), 0, k) for xi in x]
        for i in reversed(range(len(x))):
            out = p.ite(noisy[i] >= t, i, out)
        return out

    return program(gat, length=n, low=0, high=k, neighbors=all_differ(1),
                   name=f"geometric_above_threshold(n={n}, k={k})")


def discrete_noisy_max(n: int = 5, k: int = 2, alpha=0.5) -> Program:
    """FAIER's discrete noisy max: truncated alpha-geometric noise on {0..k}, uniform ties."""

    def dnm(p, x, alpha=alpha):
        best, r, c = p.const(-1), p.const(0), p.const(0)
        for i, xi in enumerate(x):
            v = p.clip(xi + p.geometric(alpha, -k, k), 0, k)
            eq = best == v
            c_eq = c + 1
            take = p.false
            for j in range(1, i + 2):      # "r <- i with probability 1/c"
                take = take | ((c_eq == j) & p.flip(Fraction(1, j)))
            gt = best < v
            r = p.ite(gt, i, p.ite(eq & take, i, r))
            c = p.ite(gt, 1, p.ite(eq, c_eq, c))
            best = p.ite(gt, v, best)
        return r

    return program(dnm, length=n, low=0, high=k, neighbors=all_differ(1),
                   name=f"discrete_noisy_max(n={n}, k={k})")


__all__ = ["discrete_noisy_max", "geometric_above_threshold",
           "randomized_response", "rr_count"]
