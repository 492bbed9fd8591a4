"""Threshold attacks for approximate DP: a family of tail events over a scalar statistic.

Approximate-DP violations live in the tails: the event that witnesses δ(ε) is
E = {y : P[M(D1) = y] > e^ε P[M(D2) = y]}, a set where the likelihood ratio is large. The
attack learns a scalar statistic s(y) that orders outputs by that ratio and tests the
*family* of events E_k = {s(y) > t_k} (and {s(y) < t_k}) at many thresholds at once
(the family-of-pairs idea of Delta-Siege: Lokna, Paradis, Dimitrov, Vechev, "Group and
Attack: Auditing Differential Privacy", CCS 2023), with three-way care about samples:

1. *selection* samples of every candidate pair (D1, D2) fit the statistic (identity for a
   scalar output; Fisher's linear discriminant for vectors; the estimated log-likelihood
   ratio for discrete outputs), set thresholds at D1's tail quantiles (so every event has
   a D1-side probability the selection sample can see, down to ``20/n_select``), and pick
   the pair whose events look most violating;
2. *fresh* samples of that pair count every event once, D2's sample as large as the claim
   needs (to bound e^ε·P[M(D2) ∈ E] one needs about e^ε/δ runs of D2);
3. the engines turn the counts into a p-value (:func:`privet.stats.approx.approx_pvalue`,
   Bonferroni over the family) or simultaneous bounds (:func:`~privet.stats.approx.
   simultaneous_bounds`).

Samples are drawn with :func:`privet.execution.map_reduce` (chunk seeds spawned from the
run's seed, so every executor gives the same counts); raw outputs of the fresh sample never
leave their chunk: each chunk is reduced to its event counts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.mechanism import Mechanism
from ..execution import map_reduce

LEVELS = 16          # tail levels per side of D1's distribution
MIN_TAIL_COUNT = 20  # the shallowest level's expected count in the selection sample
TABLE_MAX = 512      # distinct outputs up to which a discrete output gets a likelihood table


# -- the statistic ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Statistic:
    """A scalar statistic s(y) of an output row: ``identity`` (scalar outputs),
    ``projection`` (s = w·y, non-finite entries read as 0) or ``table`` (s = the selection
    sample's log-likelihood ratio of the row; rows it never saw score 0)."""

    kind: str
    weights: tuple = ()
    keys: tuple = ()
    scores: tuple = ()

    def __call__(self, out: np.ndarray) -> np.ndarray:
        rows = _rows(out)
        if self.kind == "identity":
            return rows[:, 0]
        if self.kind == "projection":
            return np.where(np.isfinite(rows), rows, 0.0) @ np.asarray(self.weights)
        keys = np.asarray(self.keys, dtype=float).reshape(len(self.keys), -1)
        pos = _row_positions(keys, rows)
        found = pos >= 0
        out_s = np.zeros(len(rows))
        out_s[found] = np.asarray(self.scores, dtype=float)[pos[found]]
        return out_s

    def describe(self) -> str:
        if self.kind == "identity":
            return "ω"
        if self.kind == "projection":
            return "ω·w, w = [" + ", ".join(f"{v:.3g}" for v in self.weights) + "]"
        return "ln P̂[M(D1) = ω]/P̂[M(D2) = ω] (selection sample)"


def _rows(out: np.ndarray) -> np.ndarray:
    a = np.asarray(out, dtype=float)
    return a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(-1, 1)


def _row_positions(keys: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Index of each row in ``keys`` (distinct rows), -1 when absent: one integer code per
    row (mixed radix over the columns' values), then a sorted search."""
    from ..core.noise import row_codes

    codes = row_codes(np.vstack([keys, rows]))
    kc, rc = codes[:len(keys)], codes[len(keys):]
    order = np.argsort(kc)
    at = np.minimum(np.searchsorted(kc[order], rc), len(kc) - 1)
    hit = kc[order][at] == rc
    return np.where(hit, order[at], -1)


def fit_statistic(o1: np.ndarray, o2: np.ndarray) -> Statistic:
    """The statistic that orders outputs by their likelihood ratio, learnt on selection samples.

    Discrete outputs with at most ``TABLE_MAX`` distinct rows: the smoothed empirical
    log-ratio ln((c1 + 1/2)/n1) − ln((c2 + 1/2)/n2) (optimal for discrete outputs); one
    numeric column: the value itself (both tails are tested); several: Fisher's linear
    discriminant w = Σ⁻¹(m1 − m2) with the pooled covariance (optimal for Gaussian noise
    with a shared covariance, e.g. a noisy gradient step)."""
    from ..core.noise import row_codes

    r1, r2 = _rows(o1), _rows(o2)
    both = np.vstack([r1, r2])
    finite = both[np.isfinite(both)]
    if len(both) and (finite.size == 0 or np.all(finite == np.round(finite))):
        # distinct rows through one integer code per row (a 1-d sort, not a row sort)
        _, first, inv = np.unique(row_codes(both), return_index=True, return_inverse=True)
        if len(first) <= TABLE_MAX:
            c1 = np.bincount(inv[:len(r1)], minlength=len(first))
            c2 = np.bincount(inv[len(r1):], minlength=len(first))
            score = np.log((c1 + 0.5) / len(r1)) - np.log((c2 + 0.5) / len(r2))
            return Statistic("table", keys=tuple(map(tuple, both[first].tolist())),
                             scores=tuple(score.tolist()))
    if r1.shape[1] == 1:
        return Statistic("identity")
    a = np.where(np.isfinite(r1), r1, 0.0)
    b = np.where(np.isfinite(r2), r2, 0.0)
    cov = 0.5 * (np.cov(a, rowvar=False) + np.cov(b, rowvar=False))
    w = np.linalg.pinv(np.atleast_2d(cov)) @ (a.mean(axis=0) - b.mean(axis=0))
    norm = float(np.linalg.norm(w))
    w = w / norm if norm > 0 else np.ones_like(w) / math.sqrt(len(w))
    return Statistic("projection", weights=tuple(float(v) for v in w))


# -- the family of events -------------------------------------------------------------------

@dataclass(frozen=True)
class Family:
    """Events {s > t} for t in ``above`` and {s < t} for t in ``below`` (both sorted)."""

    statistic: Statistic
    above: tuple
    below: tuple

    @property
    def size(self) -> int:
        return len(self.above) + len(self.below)

    def describe(self, k: int) -> str:
        s = self.statistic.describe()
        if k < len(self.above):
            return f"{s} > {self.above[k]:.6g}"
        return f"{s} < {self.below[k - len(self.above)]:.6g}"

    def spec(self, k: int) -> dict:
        above = k < len(self.above)
        t = self.above[k] if above else self.below[k - len(self.above)]
        return {"statistic": self.statistic.describe(), "side": ">" if above else "<",
                "threshold": float(t)}

    def counts(self, out: np.ndarray) -> np.ndarray:
        """Counts of every event among the rows of ``out``: one searchsorted per side."""
        s = self.statistic(out)
        s = s[~np.isnan(s)]
        n = len(s)
        res = []
        if self.above:
            t = np.asarray(self.above)
            idx = np.searchsorted(t, s, side="left")           # s > t_j  <=>  idx > j
            le = np.cumsum(np.bincount(idx, minlength=len(t) + 1))[:len(t)]
            res.append(n - le)
        if self.below:
            t = np.asarray(self.below)
            idx = np.searchsorted(t, s, side="right")          # s < t_j  <=>  idx <= j
            res.append(np.cumsum(np.bincount(idx, minlength=len(t) + 1))[:len(t)])
        return np.concatenate(res).astype(np.int64) if res else np.zeros(0, np.int64)


def tail_levels(n_select: int, levels: int = LEVELS) -> np.ndarray:
    """D1-side tail probabilities of the thresholds: geometric from 1/2 down to the level
    the selection sample still sees about ``MIN_TAIL_COUNT`` times."""
    low = min(0.25, max(MIN_TAIL_COUNT / max(int(n_select), 1), 1e-9))
    return np.geomspace(0.5, low, levels)


def make_family(stat: Statistic, s1: np.ndarray, levels: np.ndarray) -> Family:
    """Thresholds at D1's upper and lower tail quantiles (a table statistic: upper only,
    since its large values are exactly where D1 is more likely)."""
    s1 = s1[np.isfinite(s1)]
    if s1.size == 0:
        return Family(stat, (), ())
    up = np.unique(np.quantile(s1, 1 - levels, method="higher"))
    up = up[up < s1.max()]          # {s > t} must not be empty on the selection sample
    if stat.kind == "table":        # discrete scores: the largest distinct levels as well
        up = np.unique(np.r_[up, np.unique(s1)[:-1]])[-2 * len(levels):]
        low = np.zeros(0)
    else:
        low = np.unique(np.quantile(s1, levels, method="lower"))
        low = low[low > s1.min()]
    return Family(stat, tuple(float(t) for t in up), tuple(float(t) for t in low))


def _count_reduce(family: Family, out: np.ndarray) -> np.ndarray:
    return family.counts(out)


def _keep(out: np.ndarray) -> list:
    return [np.asarray(out)]


def _concat(a: list, b: list) -> list:
    return a + b


# -- the audit ----------------------------------------------------------------------------

@dataclass
class Candidate:
    """A pair after selection: its family of events and the selection's view of them."""

    x1: np.ndarray
    x2: np.ndarray
    args: dict
    pattern: str
    family: Family
    score: float
    best: int


@dataclass
class TailCounts:
    """Fresh counts of a family on the selected pair: ``c1`` of ``n1`` runs on D1, ``c2``
    of ``n2`` on D2 (one entry per event)."""

    candidate: Candidate
    c1: np.ndarray
    n1: int
    c2: np.ndarray
    n2: int
    interrupted: bool = False
    notes: list = field(default_factory=list)
    looks: int = 1   # the looks the caller's union bound must cover


def extreme_pairs(mech: Mechanism, lengths: Sequence[int]) -> list[tuple]:
    """Neighbor pairs at the edges of a bounded domain, (d1, d2, pattern, {}) in both orders:
    one record moved from the top of the domain to the bottom (replace-one, one-differs or
    all-differ when Δ covers the range), or a record at either bound added (add/remove).
    Sensitivity is largest there for monotone queries (sums, means, gradients), and the
    Table 1 patterns, built around 1, do not reach a domain like [-1, 1]'s ends."""
    dom = mech.domain
    lo, hi = float(dom.low), float(dom.high)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    out = []
    for n in lengths:
        base = np.full(int(n), hi)
        cands = []
        if mech.neighbors.kind == "add_remove":
            for v in (lo, hi):
                cands.append((base, np.r_[base, v], f"add {v:g} (n={n})"))
                cands.append((np.full(int(n), lo), np.r_[np.full(int(n), lo), v],
                              f"add {v:g} to lows (n={n})"))
        else:
            moved = base.copy()
            moved[0] = lo
            cands.append((base, moved, f"one record {hi:g} -> {lo:g} (n={n})"))
        for a, b, pat in cands:
            try:
                a, b = dom.check(a), dom.check(b)
            except Exception:  # noqa: BLE001 - an input the domain refuses is skipped
                continue
            if mech.neighbors.are_neighbors(a, b):
                out += [(a, b, pat, {}), (b, a, pat + " (swapped)", {})]
    return out


def _stream(seed: int, phase: int, index: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(np.random.SeedSequence(seed).entropy, spawn_key=(phase, index))


def select(mech: Mechanism, pairs: Sequence[tuple], score: Callable[[np.ndarray, np.ndarray,
           int, int], np.ndarray], *, n_select: int, seed: int, executor: Any = None,
           progress: Any = None) -> Candidate:
    """Selection (phase 1): sample every input of ``pairs`` ((d1, d2, pattern, args)
    tuples) ``n_select`` times, fit a statistic and a family per ordered pair, and keep the
    pair whose best event scores highest by ``score(c1, c2, n1, n2)`` (vectorized over the
    family; larger is more violating)."""
    cache: dict = {}
    levels = tail_levels(n_select)
    best: Candidate | None = None
    for d1, d2, pattern, args in pairs:
        outs = []
        for x in (d1, d2):
            key = (np.asarray(x, float).tobytes(), repr(sorted(args.items())))
            if key not in cache:
                red = map_reduce(mech, x, int(n_select), _keep, args=args,
                                 seed=_stream(seed, 11, len(cache)), executor=executor,
                                 combine=_concat, progress=progress)
                if red.value is None or red.interrupted:
                    raise KeyboardInterrupt
                cache[key] = np.concatenate(red.value, axis=0)
            outs.append(cache[key])
        o1, o2 = outs
        stat = fit_statistic(o1, o2)
        fam = make_family(stat, stat(o1), levels)
        if fam.size == 0:
            continue
        c1, c2 = fam.counts(o1), fam.counts(o2)
        sc = np.asarray(score(c1, c2, len(o1), len(o2)), dtype=float)
        k = int(np.argmax(sc))
        if best is None or sc[k] > best.score:
            best = Candidate(np.asarray(d1), np.asarray(d2), dict(args), pattern, fam,
                             float(sc[k]), k)
    if best is None:
        raise ValueError("no event separates the outputs of any input pair")
    return best


def looks(n1: int, n2: int) -> int:
    """How many looks :func:`count_fresh` may take: one at ``n1`` runs of D2 and, when
    ``n2`` is larger, one at ``n2`` (each look costs its share of the error budget, so two
    keep most of the power of one while evident violations stop at the first)."""
    return 2 if int(n2) > int(n1) else 1


def count_fresh(mech: Mechanism, cand: Candidate, n1: int, n2: int, *, seed: int,
                executor: Any = None, progress: Any = None,
                stop: Callable[[TailCounts, int], bool] | None = None) -> TailCounts:
    """Fresh counts (phase 2) of the candidate's family: ``n1`` runs on D1, up to ``n2`` on D2,
    each chunk reduced to its counts where it runs.

    D2 is sampled in up to two stages (``n1`` runs, then up to ``n2``; the second adds new
    runs from its own seed stream) and ``stop(counts, looks)`` is asked after the first:
    the caller stops when its test at level α/``looks(n1, n2)`` decides, which keeps the
    union bound over looks valid and makes evident violations cheap. Ctrl-C keeps
    the chunks done so far (``interrupted``; counts are over the runs actually drawn)."""
    reduce = functools.partial(_count_reduce, cand.family)
    total_looks = looks(n1, n2)

    def draw(x, n, index):
        red = map_reduce(mech, x, int(n), reduce, args=cand.args,
                         seed=_stream(seed, 12, index), executor=executor, progress=progress)
        if red.value is None:
            raise KeyboardInterrupt
        return np.asarray(red.value, dtype=np.int64), int(red.n), bool(red.interrupted)

    c1, m1, stopped = draw(cand.x1, n1, 0)
    if stopped:
        raise KeyboardInterrupt
    c2 = np.zeros_like(c1)
    m2, target, look = 0, min(int(n1), int(n2)), 0
    while True:
        add, got, stopped = draw(cand.x2, target - m2, 1 + look)
        c2, m2, look = c2 + add, m2 + got, look + 1
        counts = TailCounts(cand, c1, m1, c2, m2, stopped)
        if stopped or m2 >= int(n2) or (stop is not None and stop(counts, total_looks)):
            counts.notes.append(f"{look} of {total_looks} look(s) at D2's sample")
            counts.looks = total_looks
            return counts
        target = int(n2)


def projected(counts: TailCounts, n2: int) -> TailCounts:
    """The counts D2 would show after ``n2`` runs if its hit rate so far held, three
    standard deviations in a violation's favour (fewer hits): the futility check of
    :func:`count_fresh`'s callers. Any stopping rule that only stops *without* rejecting
    keeps a test valid, and the union bound over looks keeps certified bounds valid at
    whichever look the run stops, so this projection needs no guarantee, only sense."""
    m2 = max(int(counts.n2), 1)
    n = max(int(n2), m2)
    lam = np.asarray(counts.c2, dtype=float) * (n / m2)
    c2 = np.floor(np.maximum(0.0, lam - 3 * np.sqrt(lam)))
    return TailCounts(counts.candidate, counts.c1, counts.n1, c2.astype(np.int64), n)


def sample_sizes(epsilon: float, delta: float, n_final: int, n_max: int) -> tuple[int, int]:
    """Fresh sample sizes for an (ε, δ) test: D1 sees about 50/δ runs (so an event of
    probability a few δ is counted to ~15%), D2 about 50·e^ε/δ (so e^ε·P[M(D2) ∈ E] is
    bounded to the scale of δ even when D2 never lands in E); at least ``n_final``, at most
    ``n_max`` each."""
    if delta <= 0:
        return int(n_final), int(n_final)
    a = int(min(max(n_final, math.ceil(50 / delta)), n_max))
    b = int(min(max(a, math.ceil(50 * math.exp(min(epsilon, 50.0)) / delta)), n_max))
    return a, b


__all__ = ["Candidate", "Family", "Statistic", "TailCounts", "count_fresh", "extreme_pairs",
           "fit_statistic", "looks",
           "make_family", "projected", "sample_sizes", "select", "tail_levels"]
