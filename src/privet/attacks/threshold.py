"""Choosing the threshold of a score on a selection sample.

DP-Sniper (Bichsel et al., S&P 2021, its optimal threshold attack) fixes the threshold so that
P[M(D2) in S] = c (c = 0.01, :func:`threshold_at_rate`); its bound is then capped at
ln(1/c). Here every threshold of the sample is scored by what its event would certify: the
counts of the events ``{s >= t}`` for all candidate t come from three sorted arrays
(D1's scores, D2's and, pair by pair, their minimum), and an ``objective`` -- by default the
certificate a fresh sample of the certifying size would give (:func:`privet.stats.bounds.
projected`) -- picks the best; DP-Sniper's randomized boundary is scored too for the ties
of discrete scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["ORIENTATIONS", "Choice", "best_agreed", "best_of_counts", "best_of_many",
           "best_threshold",
           "candidates", "choice_counts",
           "counts_at", "oriented", "tails", "threshold_at_rate"]

MAX_CANDIDATES = 1024  # half dense in each tail
TIES = (0.25, 0.5, 0.75)

Objective = Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class Choice:
    """The best threshold of a score: the event ``s > t`` plus ``tie`` of ``s == t``, its
    objective value and its counts (n11, n10, n01) among n pairs of the selection sample."""

    threshold: float
    tie: float
    value: float
    counts: tuple
    n: int


def candidates(pooled: np.ndarray, limit: int = MAX_CANDIDATES) -> tuple[np.ndarray, bool]:
    """Thresholds to try: every distinct score (second value True), or quantiles dense in
    both tails (geometric fractions of the pooled scores above, and below, down to one
    score): the events ``s >= t`` and ``s <= t`` of every orientation
    (:func:`tails`) both reach their rare extremes, where an output seen under one input
    only (an impossible output: the bound grows with n) lives."""
    ordered = np.sort(np.asarray(pooled, dtype=float))
    if ordered.size == 0:
        return ordered, True
    uniq = ordered[np.r_[True, ordered[1:] != ordered[:-1]]]
    if len(uniq) <= limit:
        return uniq, True
    tail = np.geomspace(1.0 / len(ordered), 0.5, limit // 2)  # fractions above (or below)
    last = len(ordered) - 1
    idx = np.r_[np.ceil((1.0 - tail) * last), np.ceil(tail * last) - 1]
    return np.unique(ordered[np.clip(idx.astype(int), 0, last)]), False


def at_least(values: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """``#{v >= t}`` for each threshold of the ascending ``ts``: one sort of the values, then
    a binary search of each threshold among them (sorting n values is several times faster
    than n binary searches into the grid, whose random access defeats branch prediction; a
    NaN sorts above every threshold, as it reaches them all)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    return (len(ordered) - np.searchsorted(ordered, ts, side="left")).astype(float)


def counts_at(s1: np.ndarray, s2: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, ...]:
    """(n11, n10, n01) of ``{s >= t}`` for each t of the ascending ``ts``, pairing s1[i]
    with s2[i] (both in the event iff their minimum is; a NaN reaches every threshold, so
    ``fmin`` keeps the other score of its pair, as :func:`tails` does)."""
    s1, s2 = np.asarray(s1, float), np.asarray(s2, float)
    k1, k2, k11 = (at_least(v, ts) for v in (s1, s2, np.fmin(s1, s2)))
    return k11, k1 - k11, k2 - k11


ORIENTATIONS = ((False, False), (True, True), (False, True), (True, False))
"""(lower tail, favors the second input) of the four events of a score: ``s >= t`` for D1,
``s <= t`` for D2, ``s >= t`` for D2, ``s <= t`` for D1."""


def tails(s1: np.ndarray, s2: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Counts (n11, n10, n01) of ``{s >= t}`` and of ``{s <= t}`` (``-s >= -t`` over the
    reversed, negated grid) for each threshold of the ascending, distinct ``ts``: an array
    (2, 3, len(ts)).

    Three sorts (D1's scores, D2's, and the pairs' minima), then a binary search of each
    threshold in each: ``#{s >= t}`` and ``#{s <= t}`` are positions in the sorted scores; the
    pair is in ``{s >= t}`` when its minimum is, and in ``{s <= t}`` when its maximum is --
    ``#{max > t} = #{s1 > t} + #{s2 > t} - #{min > t}`` (the minima and maxima together are
    the scores of both inputs), so the maxima need no sort of their own. A NaN score sorts
    above every threshold (it reaches all of them and lies below none; ``fmin`` keeps the
    other score of its pair)."""
    s1, s2 = np.asarray(s1, float), np.asarray(s2, float)
    n = len(s1)
    a1, a2, lo = np.sort(s1), np.sort(s2), np.sort(np.fmin(s1, s2))
    ge1, ge2, ge11 = (n - np.searchsorted(a, ts, side="left") for a in (a1, a2, lo))
    le1, le2, le_lo = (np.searchsorted(a, ts, side="right") for a in (a1, a2, lo))
    le11 = n - ((n - le1) + (n - le2) - (n - le_lo))  # #{max <= t}
    up = (ge11, ge1 - ge11, ge2 - ge11)
    down = (le11[::-1], (le1 - le11)[::-1], (le2 - le11)[::-1])
    return np.array([up, down], dtype=float)


def oriented(arr: np.ndarray, ts: np.ndarray, orientation: int) -> tuple[np.ndarray, tuple]:
    """The grid and counts of one of the four :data:`ORIENTATIONS` from :func:`tails`' array
    (the second input's events swap n10 and n01)."""
    lower, second = ORIENTATIONS[orientation]
    n11, n10, n01 = arr[1 if lower else 0]
    return (-ts[::-1] if lower else ts), ((n11, n01, n10) if second else (n11, n10, n01))


def best_threshold(s1: np.ndarray, s2: np.ndarray, objective: Objective,
                   ties: tuple[float, ...] = TIES) -> Choice | None:
    """The threshold maximizing ``objective(n11, n10, n01, n)`` over the events
    ``{s >= t}`` (D1's outputs should score high); ``s1[i]`` and ``s2[i]`` are a pair (the
    same noise under Replay, or just the i-th draw of each). With ``ties``, randomized
    boundaries at each candidate are scored as well (expected counts, coins independent of
    everything else). None when no event occurs at all."""
    s1, s2 = np.asarray(s1, float), np.asarray(s2, float)
    ts, every = candidates(np.r_[s1, s2])
    if len(ts) == 0:
        return None
    return best_of_counts(ts, every, *counts_at(s1, s2, ts), len(s1), objective, ties)


def best_of_counts(ts: np.ndarray, every: bool, n11, n10, n01, n: int, objective: Objective,
                   ties: tuple[float, ...] = TIES) -> Choice | None:
    """:func:`best_threshold` from the counts of the events ``{s >= t}`` for the thresholds
    ``ts`` (``every``: they are all the distinct scores, so randomized ties apply)."""
    return best_of_many([(ts, every, n11, n10, n01)], n, objective, ties)[0]


def best_of_many(items: list[tuple], n: int, objective: Objective,
                 ties: tuple[float, ...] = TIES) -> list[Choice | None]:
    """:func:`best_of_counts` of each ``(ts, every, n11, n10, n01)`` of ``items`` (counts among
    the same ``n`` pairs), with two calls of the elementwise ``objective`` in all: one on the
    events of every item side by side, one on every randomized boundary (the objective's
    fixed cost per call was most of its time on grids of a thousand thresholds)."""
    if not items:
        return []
    got = _candidates(items, n, objective, ties)
    return [_choice(c, (c[1], c[4]), n) for c in got]


def best_agreed(items: list[tuple], held: list[tuple], n: int, m: int, objective: Objective,
                ties: tuple[float, ...] = TIES) -> list[Choice | None]:
    """The event of each item that two disjoint samples both support: every candidate
    threshold (and randomized boundary) of :func:`best_of_many` is valued at the lesser of
    ``objective`` on ``items`` (counts among ``n`` pairs) and on ``held`` (the same grids'
    counts on another sample of ``m`` pairs), and the largest such value wins. Its counts
    are those of both samples together (among ``n + m`` pairs) and its value the lesser of
    the two.

    Among the thousands of thresholds of a continuous score the best on one sample is often
    a rare event whose counts are lucky there; the other sample's counts are independent of
    that luck, so the lesser value of the two rarely rewards it. Where the ratio is flat
    over a range of thresholds (report noisy max releasing its value, every ω ≤ t below
    min(a): ratio e^0.25 exactly) the commoner end of that range wins, whose certificate
    is tightest (the best of each sample, judged on the other, chose thresholds deep in the
    range, with a sixth of its probability)."""
    if not items:
        return []
    one = _candidates(items, n, objective, ties)
    two = _candidates(held, m, objective, ties)
    out = []
    for a, b in zip(one, two):
        plain = tuple(np.minimum(u, v) for u, v in zip(a[1], b[1]))
        mixed = None if a[4] is None else np.minimum(a[4], b[4])
        out.append(_choice(a, (plain, mixed), n + m, other=b))
    return out


def _candidates(items: list[tuple], n: int, objective: Objective,
                ties: tuple[float, ...]) -> list[tuple]:
    """Per item of :func:`best_of_many`: (its thresholds, the objective at each (with NaN
    read as -inf, and as it came), its counts (3, k), its randomized boundaries (q, counts
    (3, j)) or None, their values) -- two calls of ``objective`` in all."""
    cuts = np.cumsum([len(it[0]) for it in items])[:-1]
    allv = np.asarray(objective(*(np.concatenate([np.asarray(it[k], float) for it in items])
                                  for k in (2, 3, 4)), n), dtype=float)
    raw = np.split(allv, cuts)
    values = np.split(np.where(np.isnan(allv), -np.inf, allv), cuts)
    mixes: list = [None] * len(items)
    for m, (ts, every, n11, n10, n01) in enumerate(items):
        if ties and every and len(ts) > 2:
            # outputs at t_i join with probability q: with every distinct score a candidate,
            # the events at t_i and t_i+1 differ by exactly the outputs scoring t_i
            # (choice_counts reads a choice's counts back the same way)
            a = np.array([n11[:-1], n10[:-1], n01[:-1]], dtype=float)   # >= t_i
            b = np.array([n11[1:], n10[1:], n01[1:]], dtype=float)      # >= t_{i+1}
            q = np.repeat(np.asarray(ties, dtype=float), a.shape[1])
            mix = np.tile(b, len(ties)) + q * (np.tile(a, len(ties)) - np.tile(b, len(ties)))
            mixes[m] = (q, mix)
    mixed = [x for x in mixes if x is not None]
    split = iter(())
    if mixed:
        allm = np.asarray(objective(*np.concatenate([x[1] for x in mixed], axis=1), n),
                          dtype=float)
        split = iter(np.split(np.where(np.isnan(allm), -np.inf, allm),
                              np.cumsum([x[1].shape[1] for x in mixed])[:-1]))
    return [(np.asarray(it[0], float), (values[m], raw[m]), np.array(it[2:5], dtype=float),
             mixes[m], None if mixes[m] is None else next(split))
            for m, it in enumerate(items)]


def _choice(cand: tuple, values: tuple, n: int, other: tuple | None = None) -> Choice | None:
    """The best candidate of one item of :func:`_candidates` by ``values`` ((its thresholds'
    values, NaN read as -inf and as they are), its boundaries' values), with its counts
    (plus ``other``'s: another sample's candidates of the same item); None when its event
    never occurs."""
    ts, _, counts, mix, _ = cand
    (plain, raw), mixed = values
    if other is not None:
        counts = counts + other[2]
        mix = None if mix is None else (mix[0], mix[1] + other[3][1])
    best = int(np.argmax(plain))
    choice = Choice(float(ts[best]), 1.0, float(raw[best]),
                    tuple(float(c) for c in counts[:, best]), n)
    if mix is not None:
        q, cs = mix
        i = int(np.argmax(mixed))
        if mixed[i] > choice.value:
            j = i % (len(ts) - 1)
            choice = Choice(float(ts[j]), float(q[i]), float(mixed[i]),
                            tuple(float(c) for c in cs[:, i]), n)
    return None if choice.counts[0] + choice.counts[1] <= 0 else choice


def choice_counts(ts: np.ndarray, every: bool, n11, n10, n01, choice: Choice
                  ) -> tuple[float, float, float]:
    """The counts (n11, n10, n01) of ``choice``'s event -- a :func:`best_of_many` choice
    over the thresholds ``ts``, its randomized tie mixed as there -- in another sample's
    counts of the events ``{s >= t}`` over the same ``ts``."""
    c = np.array([n11, n10, n01], dtype=float)
    j = int(np.searchsorted(ts, choice.threshold))
    if choice.tie >= 1.0 or j + 1 >= len(ts):
        got = c[:, j]
    else:
        got = c[:, j + 1] + choice.tie * (c[:, j] - c[:, j + 1])
    return float(got[0]), float(got[1]), float(got[2])


def threshold_at_rate(s2: np.ndarray, c: float) -> tuple[float, float]:
    """DP-Sniper's threshold: ``(t, q)`` with P[s > t] + q P[s = t] = c on D2's scores."""
    s = np.sort(np.asarray(s2, float))[::-1]
    n = len(s)
    want = c * n
    k = int(min(max(np.ceil(want), 1), n)) - 1
    t = s[k]
    above = int(np.sum(s > t))
    at = int(np.sum(s == t))
    return float(t), float(min(max((want - above) / at, 0.0), 1.0))
