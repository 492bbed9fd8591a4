"""Anytime-valid final tests: a group-sequential design with an α-spending function.

StatDP's final test (Algorithm 2 of Ding et al., CCS 2018) draws a fixed number of samples
of M(D1) and M(D2) and rejects H0: p1 <= e^eps p2 at level alpha. Here the samples come in
growing batches ("looks" at cumulative sizes n_1 < n_2 < ... < n_K = the budget) and the test
stops as soon as the evidence is decisive either way:

* **reject** at look k when the fixed-size p-value of look k (thinned Fisher, exact given
  the counts: :func:`privet.stats.hypothesis.thinned_fisher_pvalue`) is at most the level
  ``alpha_k`` the design spends there;
* **accept** ("no violation found") for futility when the event is clearly inside the null
  (an optimistic upper confidence bound on its ratio stays below the null boundary, or the
  conditional test of its odds ratio says it is below e^eps: :func:`clearly_below`), or at
  the last look.

Why the level holds under this optional stopping. Let A_k be the event "look k's test
rejects". Each look's sample size n_k is fixed in advance (it does not depend on the data),
and the event it tests was chosen on samples independent of the final samples, so under H0
P(A_k) <= alpha_k however the looks depend on each other. The test rejects only if some A_k
happens, so P(reject) <= sum_k P(A_k) <= sum_k alpha_k = alpha (a union bound, valid under
any dependence between looks). Stopping early -- for rejection, for futility, or by Ctrl-C
-- only removes looks, so it cannot raise this probability: futility stops never inflate the
type-I error; they only cost power, which :data:`FUTILITY` keeps small.

The spending function is the power family of Kim and DeMets (1987), alpha(t) = alpha t^rho
with t = n_k / n_K the information fraction; ``alpha_k = alpha(t_k) - alpha(t_{k-1})``. With
rho = 2, looks doubling from 2,000 and none above a third of the budget, the last look keeps
at least 8/9 of alpha (0.047 of 0.05 with StatDP's 500,000 samples: the decisions at the
full budget nearly match the fixed-size test's), while a clear violation, whose p-value is
astronomically small after a few thousand samples, stops at the first look.

The sequential p-value orders outcomes by the look where they stop (stage-wise ordering):
a rejection at look k reports ``p = alpha(t_{k-1}) + p_k`` (at most alpha(t_k)); a run that
does not reject reports ``p = min(1, alpha + min_j p_j / w_j)`` over the looks it made, with
``w_j = alpha_j / alpha`` (a weighted Bonferroni combination). It is valid at every level:
for u <= alpha, ``p <= u`` only when some look rejects, and P(reject at a look before k, or
at look k with p_k <= u - alpha(t_{k-1})) <= alpha(t_{k-1}) + (u - alpha(t_{k-1})) = u; for
u > alpha, ``P(p <= u) <= alpha + P(min_j p_j / w_j <= u - alpha) <= alpha + (u - alpha)``.
So ``p <= alpha`` exactly when the test rejects, a violation caught at the first look keeps
its tiny p-value, and multiple-testing corrections (Holm across a suite) may use it.

The null is written H0: p1 <= e^eps p2 + delta. Only delta = 0 (pure DP) is implemented; the
(eps, delta) test plugs in here (its fixed-size p-value and futility bound) without changing
the engines that call :func:`sequential_step`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from .hypothesis import thinned_fisher_pvalue

# default look schedule: the first look and the growth factor between looks
FIRST_LOOK = 2_000
GROWTH = 2.0
RHO = 2.0
# futility: accept when the event is clearly inside the null at level FUTILITY (see
# clearly_below: a violating event is dropped with probability at most 2 FUTILITY per look).
# Small, so that a violating event is almost never dropped; no effect on the type-I error.
FUTILITY = 1e-3

REJECT, ACCEPT, CONTINUE = "reject", "accept", "continue"


@dataclass(frozen=True)
class Design:
    """A group-sequential design: cumulative sizes per side at each look, and alpha spending.

    ``looks`` are increasing; the last is the budget. ``alpha`` is the total type-I error;
    ``rho`` the exponent of the power spending function alpha t^rho.
    """

    looks: tuple
    alpha: float
    rho: float = RHO

    def __post_init__(self):
        if not self.looks or any(b <= a for a, b in zip(self.looks, self.looks[1:])):
            raise ValueError(f"looks must be increasing and non-empty, got {self.looks!r}.")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha!r}.")

    @property
    def budget(self) -> int:
        return int(self.looks[-1])

    def spent(self, k: int) -> float:
        """alpha(t_k): the type-I error spent up to and including look ``k`` (0-based)."""
        if k < 0:
            return 0.0
        if k >= len(self.looks) - 1:
            return self.alpha
        return self.alpha * (self.looks[k] / self.budget) ** self.rho

    def level(self, k: int) -> float:
        """alpha_k: the level of look ``k``'s test."""
        return self.spent(k) - self.spent(k - 1)

    def weight(self, k: int) -> float:
        """w_k = alpha_k / alpha (independent of alpha): the p-value share of look ``k``."""
        return self.level(k) / self.alpha


def schedule(budget: int, first: int = FIRST_LOOK, growth: float = GROWTH) -> tuple:
    """Looks ``first, first*growth, ...`` below ``budget``, then ``budget`` itself.

    A budget at most ``first`` gives one look: the fixed-size test.
    """
    budget = int(budget)
    looks = []
    n = float(first)
    while n < budget:
        looks.append(int(round(n)))
        n *= growth
    while looks and looks[-1] > budget / 3:
        # no look close to the budget: it would spend alpha the last look needs (with the
        # last intermediate look at t <= 1/3, the last look keeps >= (1 - 1/9) alpha)
        looks.pop()
    return tuple(looks) + (budget,)


@dataclass(frozen=True)
class Step:
    """What one look decided.

    ``decision`` is :data:`REJECT`, :data:`ACCEPT` or :data:`CONTINUE`; ``p_look`` the
    fixed-size p-value of this look, ``level`` the level it was held to, ``p_value`` the
    sequential p-value of the run if it ends here (see the module docstring), ``bonferroni``
    the running min of p_j / w_j (pass it to the next look as ``previous``), ``futile``
    whether an accept came from the futility bound (rather than the exhausted budget).
    """

    decision: str
    p_look: float
    level: float
    p_value: float
    bonferroni: float = 1.0
    futile: bool = False


def _check_delta(delta: float) -> None:
    if delta != 0:
        raise ValueError("only pure DP (delta = 0) has a final test so far; an (eps, delta) "
                         "claim needs the test H0: p1 <= e^eps p2 + delta.")


def fixed_pvalue(c1: int, c2: int, n1: int, n2: int, epsilon: float,
                 delta: float = 0.0) -> float:
    """The fixed-size p-value of H0: p1 <= e^eps p2 + delta (delta = 0: Algorithm 2)."""
    _check_delta(delta)
    return float(thinned_fisher_pvalue(c1, c2, n1, n2, epsilon))


def clearly_below(c1: int, c2: int, n1: int, n2: int, epsilon: float, delta: float = 0.0,
                  confidence: float = 1 - FUTILITY) -> bool:
    """True when the event is within the null with room to spare, so that more samples would
    hardly make it a violation. Either of two tests, each at level ``1 - confidence``, says so:

    * the upper confidence bound on p1 and the lower one on p2 (Clopper-Pearson,
      (1 - confidence)/2 each) satisfy p1_up <= e^eps p2_low + delta (strong when the event
      is common);
    * the conditional test of the odds ratio (strong when the event is rare, where the two
      separate intervals are wide): given c1 + c2 = t, c1 follows Fisher's noncentral
      hypergeometric law with odds ratio w = p1 (1 - p2) / (p2 (1 - p1)), and a violation
      p1 > e^eps p2 (eps >= 0) has w > e^eps, a law stochastically larger than the one at
      w = e^eps. So P(c1 <= observed | t) <= 1 - confidence at w = e^eps bounds, for every
      violating event and every t, the chance that this test calls it clear.

    A violating event is thus called clear with probability at most 2 (1 - confidence) per
    look: a loss of power only, never of the type-I error (see the module docstring)."""
    _check_delta(delta)
    if c2 <= 0:
        return False
    a = (1.0 - confidence) / 2.0
    p1_up = 1.0 if c1 >= n1 else float(special.betainccinv(c1 + 1, n1 - c1, a))
    p2_lo = float(special.betaincinv(c2, n2 - c2 + 1, a))
    if p1_up <= math.exp(epsilon) * p2_lo + delta:
        return True
    return epsilon >= 0 and delta == 0 and \
        log_fnch_cdf(c1, n1, n2, c1 + c2, epsilon) <= math.log1p(-confidence)


def log_fnch_cdf(x: int, n1: int, n2: int, t: int, log_odds: float) -> float:
    """An upper bound on log P(X <= x), equal to it up to rounding, for X of Fisher's
    noncentral hypergeometric law: t draws from n1 + n2, odds ratio e^log_odds
    (P(X = k) proportional to C(n1, k) C(n2, t - k) e^(k log_odds)). Summed in log space
    over a window of 40 standard deviations around Cornfield's mean (the law is unimodal;
    the mass left outside is bounded by the window's edge term and added); SciPy's
    ``nchypergeom_fisher`` is exact too but takes seconds at t = 10^5."""
    lo, hi = max(0, t - n2), min(n1, t)
    if x >= hi:
        return 0.0
    if x < lo:
        return -math.inf
    w = math.exp(log_odds)
    # Cornfield: k (n2 - t + k) = w (n1 - k) (t - k), the root inside [lo, hi]
    qa, qb, qc = 1.0 - w, (n2 - t) + w * (n1 + t), -w * float(n1) * t
    if abs(qa) < 1e-12:
        mean = -qc / qb
    else:
        disc = math.sqrt(max(qb * qb - 4.0 * qa * qc, 0.0))
        roots = ((-qb + disc) / (2.0 * qa), (-qb - disc) / (2.0 * qa))
        mean = min(roots, key=lambda r: 0.0 if lo <= r <= hi else min(abs(r - lo), abs(r - hi)))
    mean = min(max(mean, lo), hi)
    inv = sum(1.0 / max(v, 0.5) for v in (mean, n1 - mean, t - mean, n2 - t + mean))
    half = 40.0 * math.sqrt(1.0 / inv) + 50.0
    a, b = max(lo, int(mean - half)), min(hi, int(mean + half) + 1)
    if x >= b:
        return 0.0

    def log_terms(a: int, b: int) -> np.ndarray:  # log C(n1, k) C(n2, t - k) w^k, k in [a, b]
        k = np.arange(a, b + 1, dtype=float)
        return (-special.gammaln(k + 1) - special.gammaln(n1 - k + 1)
                - special.gammaln(t - k + 1) - special.gammaln(n2 - t + k + 1) + k * log_odds)

    logp = log_terms(a, b)
    top = float(logp.max())
    if (a > lo and logp[0] > top - 100.0) or (b < hi and logp[-1] > top - 100.0):
        a, b = lo, hi  # the window missed the bulk: the whole support
        logp = log_terms(a, b)
    total = float(special.logsumexp(logp))
    # mass left of the window: at most (a - lo) terms, each below the window's first
    left = math.log(a - lo) + float(logp[0]) if a > lo else -math.inf
    if x < a:
        return min(0.0, left - total)
    return min(0.0, float(np.logaddexp(left, special.logsumexp(logp[: x - a + 1]))) - total)


def sequential_step(c1: int, c2: int, n1: int, n2: int, epsilon: float, *, design: Design,
                    look: int, delta: float = 0.0, previous: float = 1.0) -> Step:
    """One look of the sequential final test of H0: p1 <= e^eps p2 + delta.

    ``c1`` of ``n1`` runs of M(D1) and ``c2`` of ``n2`` runs of M(D2) fell in the event
    (``n1``, ``n2`` = ``design.looks[look]``, the samples fresh with respect to the event's
    selection); ``previous`` is the previous look's ``Step.bonferroni`` (1 at the first).
    ``delta`` must be 0 for now (see the module docstring). Returns a :class:`Step`.
    """
    p = fixed_pvalue(c1, c2, n1, n2, epsilon, delta)
    return decide(p, design, look, previous,
                  lambda: clearly_below(c1, c2, n1, n2, epsilon, delta))


def decide(p: float, design: Design, look: int, previous: float = 1.0,
           futile: Callable[[], bool] | None = None) -> Step:
    """The decision of look ``look`` from its fixed-size p-value ``p`` (any valid test of a
    fixed sample size): reject at ``design.level(look)``, else accept at the last look or
    when ``futile()`` says the evidence clearly favours the null, else continue.
    ``previous``: the previous look's ``Step.bonferroni`` (1 at the first)."""
    level = design.level(look)
    w = design.weight(look)
    bonf = float(min(previous, p / w if w > 0 else 1.0, 1.0))
    if p <= level:
        return Step(REJECT, p, level, float(min(design.spent(look - 1) + p, design.alpha)),
                    bonf)
    p_seq = float(min(1.0, design.alpha + bonf))
    if look >= len(design.looks) - 1:
        return Step(ACCEPT, p, level, p_seq, bonf)
    if futile is not None and futile():
        return Step(ACCEPT, p, level, p_seq, bonf, futile=True)
    return Step(CONTINUE, p, level, p_seq, bonf)


def first_rejections(pvalues, alpha: float) -> int:
    """Fixed-sequence testing of nested nulls: the number of leading p-values below alpha.

    For test epsilons in increasing order, H0(eps_1) subset H0(eps_2) subset ...; testing
    them in that order at level alpha each and stopping at the first non-rejection controls
    the family-wise error at alpha with no correction (the first true null is the only one
    that can be rejected wrongly, and it is tested at level alpha).
    """
    p = np.asarray(list(pvalues), dtype=float)
    bad = np.flatnonzero(~(p < alpha))
    return int(bad[0]) if bad.size else int(p.size)


__all__ = ["ACCEPT", "CONTINUE", "Design", "FIRST_LOOK", "FUTILITY", "GROWTH", "REJECT",
           "RHO", "Step", "clearly_below", "decide", "first_rejections", "fixed_pvalue",
           "log_fnch_cdf",
           "schedule", "sequential_step"]
