"""Error control across the claims of one run (pure math).

A run that makes m statistical claims of a violation at level alpha each (``privet suite``
over the library: one detect test per mechanism, one certified bound per searched one) cries
wolf somewhere with probability up to m alpha. :func:`holm` controls the family-wise error
rate (FWER): the probability of *any* false claim of a violation is at most alpha, whatever
the dependence between the p-values (Holm 1979, "A simple sequentially rejective multiple
test procedure").

Why Holm and not e-BH (false discovery rate). A suite's red verdict is read as "this
mechanism is broken" and gates CI jobs, so one false alarm on a correct mechanism is the
error to bound, which is the FWER; the FDR bounds only the expected share of false alarms
among the alarms and allows one on a correct mechanism whenever enough broken ones are
found (the library holds many). Holm is uniformly more powerful than Bonferroni, needs no
assumption on dependence, and works with the p-values the engines already compute (the
sequential detect's p-value is valid at every level, see :mod:`privet.stats.sequential`).
"""

from __future__ import annotations

import numpy as np


def holm(pvalues, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down procedure: ``(rejected, adjusted)``.

    Sort the m p-values, p_(1) <= ... <= p_(m); reject H_(1), ..., H_(j) while
    p_(i) <= alpha / (m - i + 1), stopping at the first that fails. ``adjusted`` are the Holm
    adjusted p-values, ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in the original order, so
    ``rejected == adjusted <= alpha``. NaN p-values count as 1.
    """
    p = np.asarray(list(pvalues), dtype=float)
    p = np.where(np.isnan(p), 1.0, p)
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=bool), np.zeros(0)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted_sorted = np.maximum.accumulate(scaled)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted <= alpha, adjusted


def holm_threshold(alpha: float, m: int) -> float:
    """The level the smallest of m p-values must meet (alpha / m): a claim that cannot reach
    it is never significant after correction, so a test may stop for it."""
    return float(alpha) / max(int(m), 1)


__all__ = ["holm", "holm_threshold"]
