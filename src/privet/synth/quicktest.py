"""A small StatDP-style tester that synth uses for its many cheap checks.

For each input pair it samples the mechanism on both inputs, picks the event with the
strongest evidence against ε-DP on a *selection* sample, and tests that event on a fresh
*final* sample (the two-phase design of StatDP Sec. 4). Candidate events are one-sided
intervals per output coordinate (or equalities for categorical coordinates), conjunctions
of two of them on different coordinates (so a violation spread over two releases, as in
SmartSum, is visible), and the most frequent whole output rows of discrete vector outputs.

The test of an event is the conditional binomial test: given N = c1 + c2, under
H0: p1 <= e^ε p2 (and Poisson counts) c1 is at most Binomial(N, e^ε / (1 + e^ε)), so
p = P[Bin(N, e^ε/(1+e^ε)) >= c1]. This is the Poisson form of StatDP's thinned Fisher test;
privet.detect is the full tester and is used for the final verification when present.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sstats

from ..core.events import And, Equals, Event, Interval, Singleton
from ..core.mechanism import Mechanism
from ..core.noise import Sampler

LEVELS = (0.01, 0.05, 0.15, 0.3, 0.5, 0.7, 0.85, 0.95, 0.99)
MAX_CATEGORIES = 16
MIN_COUNT = 10


@dataclass
class Witness:
    """One tested (pair, event): counts on a final sample and the p-value at ``epsilon``."""

    d1: np.ndarray
    d2: np.ndarray
    event: Event
    counts: tuple[int, int]
    n: int
    epsilon: float
    p_value: float
    pattern: str = ""

    @property
    def loss(self) -> float:
        """Estimated log privacy loss log(P1[E]/P2[E]) (half-count smoothing)."""
        return math.log((self.counts[0] + 0.5) / (self.counts[1] + 0.5))


def p_value(c1, c2, epsilon: float) -> np.ndarray:
    """Conditional binomial p-value of H0: P1[E] <= e^ε P2[E] given counts c1, c2."""
    c1 = np.asarray(c1, dtype=float)
    c2 = np.asarray(c2, dtype=float)
    p0 = 1.0 / (1.0 + math.exp(-epsilon))
    n = c1 + c2
    return np.where(n > 0, sstats.binom.sf(c1 - 1, n, p0), 1.0)


def _z(c1: np.ndarray, c2: np.ndarray, epsilon: float) -> np.ndarray:
    p0 = 1.0 / (1.0 + math.exp(-epsilon))
    n = c1 + c2
    z = (c1 - n * p0) / np.sqrt(np.maximum(n * p0 * (1 - p0), 1e-12))
    return np.where(n >= MIN_COUNT, z, -np.inf)


def _rows(out: np.ndarray) -> np.ndarray:
    a = np.asarray(out, dtype=float)
    return a.reshape(a.shape[0], -1)


def event_basis(o1: np.ndarray, o2: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    """Single-coordinate candidate events (and whole rows of discrete vector outputs) as
    descriptors with their indicator matrices on ``o1`` and ``o2``."""
    r1, r2 = _rows(o1), _rows(o2)
    k = r1.shape[1]
    descs: list = []
    cols1: list[np.ndarray] = []
    cols2: list[np.ndarray] = []
    discrete = True
    for j in range(k):
        pooled = np.concatenate([r1[:, j], r2[:, j]])
        uniq = np.unique(pooled)
        if len(uniq) <= MAX_CATEGORIES:
            for v in uniq:
                descs.append(("eq", j, float(v)))
                cols1.append(r1[:, j] == v)
                cols2.append(r2[:, j] == v)
            continue
        discrete = False
        finite = pooled[np.isfinite(pooled)]
        for v in uniq[~np.isfinite(uniq)]:
            descs.append(("eq", j, float(v)))
            cols1.append(r1[:, j] == v)
            cols2.append(r2[:, j] == v)
        for t in np.unique(np.quantile(finite, LEVELS)):
            descs.append(("gt", j, float(t)))
            cols1.append((r1[:, j] > t) & np.isfinite(r1[:, j]))
            cols2.append((r2[:, j] > t) & np.isfinite(r2[:, j]))
            descs.append(("le", j, float(t)))
            cols1.append(r1[:, j] <= t)
            cols2.append(r2[:, j] <= t)
    if k > 1 and discrete:
        both = np.concatenate([r1, r2])
        keys = _row_keys(both)
        uk, first, counts = np.unique(keys, return_index=True, return_counts=True)
        k1, k2 = keys[: len(r1)], keys[len(r1):]
        for i in np.argsort(-counts)[:30]:
            descs.append(("row", tuple(float(v) for v in both[first[i]])))
            cols1.append(k1 == uk[i])
            cols2.append(k2 == uk[i])
    i1 = np.column_stack(cols1) if cols1 else np.zeros((r1.shape[0], 0), bool)
    i2 = np.column_stack(cols2) if cols2 else np.zeros((r2.shape[0], 0), bool)
    return descs, i1, i2


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """One sortable key per row of a discrete matrix (per-column codes packed into bytes;
    much faster than ``np.unique(axis=0)``)."""
    codes = np.empty(rows.shape, dtype=np.uint8)
    for j in range(rows.shape[1]):
        codes[:, j] = np.unique(rows[:, j], return_inverse=True)[1].ravel()
    codes = np.ascontiguousarray(codes)
    return codes.view(np.dtype((np.void, rows.shape[1]))).ravel()


def best_event(o1: np.ndarray, o2: np.ndarray, epsilon: float, top: int = 8,
               penalty: float = 1.0) -> tuple[Event, bool, float] | None:
    """The event with the strongest evidence that P[o1 ∈ E] > e^ε P[o2 ∈ E] (or reversed).

    Single-coordinate events first; conjunctions of two of the ``top`` single events on
    different coordinates are taken only when their z-score beats the best single event by
    ``penalty`` (a conjunction must pay for the extra freedom). Returns (event, swapped, z).
    """
    descs, i1, i2 = event_basis(o1, o2)
    if not descs:
        return None
    c1, c2 = i1.sum(axis=0), i2.sum(axis=0)
    best: tuple[float, Event, bool] | None = None
    for swapped, (a, b, ia, ib) in enumerate(((c1, c2, i1, i2), (c2, c1, i2, i1))):
        z = _z(a.astype(float), b.astype(float), epsilon)
        j = int(np.argmax(z))
        if best is None or z[j] > best[0]:
            best = (float(z[j]), make_event(descs, j), bool(swapped))
        cand = [int(i) for i in np.argsort(-z)[:top] if np.isfinite(z[i]) and z[i] > 0
                and descs[i][0] != "row"]
        if len(cand) < 2:
            continue
        xa, xb = ia[:, cand].astype(np.float32), ib[:, cand].astype(np.float32)
        ca, cb = xa.T @ xa, xb.T @ xb
        z2 = _z(ca.astype(float), cb.astype(float), epsilon)
        for u in range(len(cand)):
            for v in range(len(cand)):
                if v <= u or descs[cand[u]][1] == descs[cand[v]][1]:
                    z2[u, v] = -np.inf
                else:
                    continue
        u, v = np.unravel_index(int(np.argmax(z2)), z2.shape)
        if np.isfinite(z2[u, v]) and z2[u, v] > best[0] + penalty:
            ev = And((make_event(descs, cand[u]), make_event(descs, cand[v])))
            best = (float(z2[u, v]) - penalty, ev, bool(swapped))
    assert best is not None
    return best[1], best[2], best[0]


def make_event(descs: list, i: int) -> Event:
    """The core :class:`Event` for descriptor ``i``."""
    d = descs[i]
    if d[0] == "eq":
        return Equals(d[2], "coord", d[1])
    if d[0] == "gt":
        return Interval(d[2], math.inf, "coord", d[1])
    if d[0] == "le":
        return Interval(-math.inf, d[2], "coord", d[1])
    if d[0] == "row":
        return Singleton(d[1])
    return And((make_event(descs, d[1]), make_event(descs, d[2])))


def sample(mech: Mechanism, x: np.ndarray, args: Mapping[str, Any], n: int,
           rng: np.random.Generator) -> np.ndarray:
    return mech.run(Sampler(rng, n), x, args, check_input=False)


def test_pairs(mech: Mechanism, args: Mapping[str, Any], pairs: Iterable, epsilon: float,
               n_select: int = 20_000, n_final: int = 40_000, seed: int = 0
               ) -> list[Witness]:
    """For every pair, the best event on a selection sample and its p-value on a final one."""
    out: list[Witness] = []
    ss = np.random.SeedSequence(seed)
    for pair in pairs:
        r = [np.random.default_rng(s) for s in ss.spawn(4)]
        d1, d2 = np.asarray(pair.d1, float), np.asarray(pair.d2, float)
        o1 = sample(mech, d1, args, n_select, r[0])
        o2 = sample(mech, d2, args, n_select, r[1])
        found = best_event(o1, o2, epsilon)
        if found is None:
            continue
        event, swap, _ = found
        if swap:
            d1, d2 = d2, d1
        f1 = int(np.count_nonzero(event.contains(sample(mech, d1, args, n_final, r[2]))))
        f2 = int(np.count_nonzero(event.contains(sample(mech, d2, args, n_final, r[3]))))
        out.append(Witness(d1, d2, event, (f1, f2), n_final, epsilon,
                           float(p_value(f1, f2, epsilon)), getattr(pair, "pattern", "")))
    return out
