"""The fast paths of the attacks' counting and scoring give exactly what the direct
definitions give: threshold counts (three sorts), tables coded by equality, flag counts from
columns, feature matrices and histogram cells shared through a Batch, the objective judged
for many count sets at once."""

from __future__ import annotations

import numpy as np
import pytest

from privet.attacks import scores as scores_mod
from privet.attacks.features import Batch, columns_of, fit_features, rows_of
from privet.attacks.scores import Bins, Linear, Stat, Table
from privet.attacks.threshold import (
    at_least,
    best_agreed,
    best_of_counts,
    best_of_many,
    candidates,
    counts_at,
    tails,
)
from privet.execution.threads import single_threaded
from privet.search.blackbox import certificate_objective


def _direct_tails(s1, s2, ts):
    """The counts of {s >= t} and {s <= t} from their definitions (NaN reaches every t and
    lies below none, as a NaN sorts last)."""
    big1, big2 = np.where(np.isnan(s1), np.inf, s1), np.where(np.isnan(s2), np.inf, s2)
    up1, up2 = big1[:, None] >= ts, big2[:, None] >= ts
    lo1 = ~np.isnan(s1)[:, None] & (s1[:, None] <= ts)
    lo2 = ~np.isnan(s2)[:, None] & (s2[:, None] <= ts)
    def three(a, b):
        k11 = (a & b).sum(0)
        return [k11, a.sum(0) - k11, b.sum(0) - k11]
    up, lo = three(up1, up2), three(lo1, lo2)
    return np.array([up, [v[::-1] for v in lo]], dtype=float)


@pytest.mark.parametrize("kind", ["continuous", "discrete", "infinite", "nan"])
def test_tails_count_what_the_definitions_count(kind):
    rng = np.random.default_rng(3)
    n = 3000
    if kind == "continuous":
        s1, s2 = rng.laplace(size=n), rng.laplace(size=n) + 0.2
    elif kind == "discrete":
        s1, s2 = (rng.integers(0, 7, n).astype(float) for _ in range(2))
    elif kind == "infinite":
        s1, s2 = (rng.choice([-np.inf, 0.0, 1.0, np.inf], n) for _ in range(2))
    else:
        s1, s2 = rng.laplace(size=n), rng.laplace(size=n)
        s1[::5], s2[::7] = np.nan, np.nan
    ts, _ = candidates(np.r_[s1, s2])
    ts = ts[~np.isnan(ts)]
    np.testing.assert_array_equal(tails(s1, s2, ts), _direct_tails(s1, s2, ts))
    np.testing.assert_array_equal(at_least(s1, ts), _direct_tails(s1, s1, ts)[0, 0])
    k11, k10, k01 = counts_at(s1, s2, ts)
    np.testing.assert_array_equal(np.array([k11, k10, k01]), _direct_tails(s1, s2, ts)[0])


@pytest.mark.parametrize("width,values", [(1, 3), (4, 3), (10, 8), (6, 9)])
def test_table_coded_by_equality_scores_as_coded_by_entry(monkeypatch, width, values):
    rng = np.random.default_rng(width * 10 + values)
    pool = np.r_[-np.inf, np.inf, -0.0, np.arange(values - 3.0)]
    rows = rng.choice(pool, size=(40, width))
    scores = rng.normal(size=40)
    query = rng.choice(np.r_[pool, 0.5, np.nan], size=(5000, width))
    query[:200] = rows[rng.integers(0, 40, 200)]       # listed rows, unlisted ones, NaN
    fast = Table(tuple(map(tuple, rows.tolist())), tuple(scores.tolist()), -7.0)
    got = fast(query)                                   # codes made on first use
    monkeypatch.setattr(scores_mod, "FEW_VALUES", 0)    # every table coded entry by entry
    slow = Table(tuple(map(tuple, rows.tolist())), tuple(scores.tolist()), -7.0)
    want = slow(query)
    assert isinstance(fast._index[0], np.ndarray) == (len(np.unique(rows)) <= 8)
    assert not isinstance(slow._index[0], np.ndarray)
    np.testing.assert_array_equal(got, want)
    assert np.sum(got != -7.0) >= 200


def test_counts_and_medians_from_columns_match_the_row_definitions():
    rng = np.random.default_rng(5)
    rows = rng.laplace(size=(2000, 6))
    rows[rng.random((2000, 6)) < 0.2] = -1000.0
    rows[rng.random((2000, 6)) < 0.1] = np.inf
    count = Stat("count", value=-1000.0)
    above = Stat("above", flags=(-1000.0,), centers=tuple((j, 0.1 * j) for j in range(6)))
    np.testing.assert_array_equal(count(rows), np.sum(rows == -1000.0, axis=1))
    sub = rows - 0.1 * np.arange(6)
    want = (np.isfinite(rows) & (sub > 0) & (rows != -1000.0)).sum(axis=1)
    np.testing.assert_array_equal(above(rows), want)
    np.testing.assert_array_equal(columns_of(rows), rows.T)
    np.testing.assert_array_equal(count.negated()(Batch(rows)), -count(rows))


def test_a_batch_gives_every_score_the_values_of_its_plain_outputs():
    rng = np.random.default_rng(6)
    rows = np.c_[rng.laplace(size=(3000, 3)), rng.integers(0, 3, 3000)]
    rows[:300, 0] = -1000.0
    fmap = fit_features(rows)
    lin = Linear(fmap, tuple(rng.normal(size=fmap.size).tolist()), 0.3)
    edges = (tuple(np.quantile(rows[:, 1], [0.25, 0.5, 0.75]).tolist()),
             tuple(np.quantile(rows[:, 2], [0.5]).tolist()))
    bins = Bins((1, 2), edges, tuple(rng.normal(size=8).tolist()))
    batch = Batch(rows)
    for sc in (lin, bins, Stat("sum", flags=(-1000.0,)), Stat("entry", 2, sign=-1.0)):
        np.testing.assert_array_equal(sc(batch), sc(rows))
        np.testing.assert_array_equal(sc(batch), sc(batch))  # kept, not recomputed wrong
    assert fmap.transform(batch) is fmap.transform(batch)
    assert rows_of(batch) is batch.rows and len(batch) == 3000


def test_many_count_sets_judged_at_once_choose_as_one_at_a_time():
    rng = np.random.default_rng(8)
    objective = certificate_objective(1 << 20, 0.9, paired=False)
    items = []
    for k in range(5):
        s1 = rng.integers(0, 6 + k, 4000).astype(float)
        s2 = rng.integers(0, 6 + k, 4000).astype(float) - 0.3 * k
        ts, every = candidates(np.r_[s1, s2])
        items.append((ts, every, *counts_at(s1, s2, ts)))
    items.append((np.array([1.0]), False, np.zeros(1), np.zeros(1), np.zeros(1)))  # empty
    together = best_of_many(items, 4000, objective)
    alone = [best_of_counts(*it, 4000, objective) for it in items]
    assert together == alone and together[-1] is None
    assert sum(bool(it[1]) and len(it[0]) > 2 for it in items) == 5  # boundaries judged


def _log_ratio(n11, n10, n01, n, shrink=0.0):
    """A plain objective: the estimated ln(k1/k2) (no shrink, no projection)."""
    n11, n10, n01 = (np.asarray(v, float) for v in (n11, n10, n01))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.log((n11 + n10) / (n11 + n01))


def _cumulative(c1, c2):
    """Counts (n11, n10, n01) of the events {s >= t_j} from per-threshold counts of D1 and
    D2 at t_j (independent samples: n11 = 0)."""
    k1, k2 = (np.cumsum(np.asarray(c, float)[::-1])[::-1] for c in (c1, c2))
    return np.zeros_like(k1), k1, k2


def test_the_agreed_threshold_is_the_best_both_samples_support():
    """Sample A's counts make the rarest event look best (ln ratio 0.49 at t = 2, a lucky
    31 against 19); sample B shows that event at ln 1 = 0. The lesser of the two values is
    largest at t = 1 (ln 331/219 = 0.41 on A, ln 330/220 = 0.41 on B; at t = 0 both are
    below 0.14): that is the agreed choice, its counts are both samples' together and its
    value the lesser one."""
    ts = np.array([0.0, 1.0, 2.0])
    a = _cumulative([500, 300, 31], [520, 200, 19])
    b = _cumulative([510, 310, 20], [515, 200, 20])
    lone = best_of_counts(ts, False, *a, 2000, _log_ratio)
    assert lone.threshold == 2.0 and lone.value == pytest.approx(np.log(31 / 19))
    (got,) = best_agreed([(ts, False, *a)], [(ts, False, *b)], 2000, 2000, _log_ratio)
    va, vb = np.log(331 / 219), np.log(330 / 220)
    assert got.threshold == 1.0 and got.tie == 1.0
    assert got.value == pytest.approx(min(va, vb))
    assert got.counts == (0.0, 331.0 + 330.0, 219.0 + 220.0) and got.n == 4000
    # with every distinct score a candidate, the randomized boundaries are judged the same
    # way: a boundary counted on both samples, at the lesser of its two values
    (mixed,) = best_agreed([(ts, True, *a)], [(ts, True, *b)], 2000, 2000, _log_ratio)
    assert mixed.value >= got.value
    if mixed.tie < 1.0:
        j = int(np.searchsorted(ts, mixed.threshold))
        both = [np.array(x) + np.array(y) for x, y in zip(a, b)]
        want = [c[j + 1] + mixed.tie * (c[j] - c[j + 1]) for c in both]
        assert mixed.counts == pytest.approx(tuple(want))
    # a sample that supports nothing leaves no choice
    empty = (np.zeros(3), np.zeros(3), np.zeros(3))
    assert best_agreed([(ts, False, *empty)], [(ts, False, *empty)], 10, 10, _log_ratio) \
        == [None]


def test_single_threaded_restores_the_native_thread_counts():
    from threadpoolctl import threadpool_info

    before = [i["num_threads"] for i in threadpool_info()]
    with single_threaded():
        assert all(i["num_threads"] == 1 for i in threadpool_info())
    assert [i["num_threads"] for i in threadpool_info()] == before


def test_integer_outputs_give_the_same_columns_and_features_as_floats():
    rng = np.random.default_rng(4)
    ints = rng.integers(-3, 4, size=(5000, 7))
    cols = columns_of(ints)
    assert cols.dtype == float
    np.testing.assert_array_equal(cols, ints.T.astype(float))
    np.testing.assert_array_equal(columns_of(ints[:, :1]), ints[:, :1].T.astype(float))
    fmap = fit_features(ints.astype(float))
    np.testing.assert_array_equal(fmap.transform(ints), fmap.transform(ints.astype(float)))
    np.testing.assert_array_equal(columns_of(ints > 0), (ints > 0).T.astype(float))
