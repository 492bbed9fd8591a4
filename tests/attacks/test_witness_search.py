"""The witness search's input pairs, its selection race and its pace (issue 13): step pairs
at every split, the race's challengers, the sizes a time budget gives."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from privet.attacks.inputs import move, pattern_pairs, splits
from privet.attacks.witness import Budget, Candidate, _Finalist, _next_round, _Pace, _Screened
from privet.core.events import Event, Interval
from privet.mechanisms import dpsniper as d


def _split(a: np.ndarray, b: np.ndarray) -> int | None:
    """k when (a, b) is a step pair: the first k entries move down by 1, the rest up."""
    diff = b - a
    k = int(np.sum(diff < 0))
    ok = np.all(diff[:k] == -1) and np.all(diff[k:] == 1) and 0 < k < len(a)
    return k if ok else None


def test_patterns_hold_a_step_pair_at_every_split_within_the_domain():
    """SVT's largest ratios come from x = 1^k 0^(n-k) against 0^k 1^(n-k) (the first k
    answers down, the others up) at its own k: every split of a length-10 input is among
    the candidates, each also stretched towards the domain's ends, all inside [-10, 10]."""
    mech = d.vectorized("dpsniper.svt2")
    pairs = pattern_pairs(mech, 10)
    plain = {_split(a, b) for a, b, label in pairs if label.startswith(("step", "x shape"))
             and "stretched" not in label}
    assert plain == set(range(1, 10))
    assert all(np.all(np.abs(v) <= 10) for a, b, _ in pairs for v in (a, b))
    assert splits(100)[:3] == [1, 3, 7] and splits(100)[-1] == 99 and len(splits(100)) == 9


def test_the_local_search_shifts_a_step_pairs_split():
    """Started at the split 5 (StatDP's x shape), the local moves reach the splits 4 and 6
    (a move shifts one run boundary by one place with probability 1/8 per try: 200 moves
    miss one side with probability about (1 - 1/8)^200 < 1e-11)."""
    mech = d.vectorized("dpsniper.svt2")
    a, b = np.r_[np.ones(5), np.zeros(5)], np.r_[np.zeros(5), np.ones(5)]
    rng = np.random.default_rng(0)
    reached = set()
    for _ in range(200):
        got = move(mech, a, b, rng)
        if got is not None:
            reached.add(_split(got[0], got[1]))
    assert {4, 6} <= reached


def _finalist(value: float, spread: float, n: int) -> _Finalist:
    item = _Screened(value, spread, np.zeros(1), np.ones(1), "test")
    fin = _Finalist(item, [], [], np.random.SeedSequence(0), n=n, spread=spread)
    fin.best = Candidate(np.zeros(1), np.ones(1), Event(), value, (1.0, 1.0, 1.0), n)
    return fin


def test_the_race_keeps_a_challenger_whose_upper_value_reaches_the_leaders():
    """Leader 0.10 (spread 0.001: fine) on 2^20 pairs; a challenger at 0.09 whose spread 0.01
    puts its upper value 0.09 + 2 x 0.01 above the leader doubles, even though an earlier
    round left it behind; one whose spread is fine but who has fewer samples than the leader
    (0.098 + 2 x 0.004 >= 0.10) catches up; a clear loser (0.05 + 2 x 0.01) stops; and
    out of time (70 s of a 100 s budget gone, past the race's 65%), only a leader whose
    lead may be luck (spread above a tenth of its value) goes on, with its strongest
    challenger -- and none past 80% of the budget (the fresh sample's time)."""
    budget = Budget(n_fit=1 << 18, n_select=1 << 22)
    leader = _finalist(0.10, 0.001, 1 << 20)
    coarse = _finalist(0.09, 0.01, 1 << 18)
    behind = _finalist(0.098, 0.004, 1 << 19)
    loser = _finalist(0.05, 0.01, 1 << 18)
    go = _next_round([loser, coarse, leader, behind], budget, time.perf_counter(), 1e9)
    assert set(map(id, go)) == {id(coarse), id(behind)}
    lucky = _finalist(0.10, 0.05, 1 << 20)
    late = Budget(n_fit=1 << 18, n_select=1 << 22, seconds=100.0)
    go = _next_round([coarse, lucky, behind, loser], late, time.perf_counter() - 70.0, 1e12)
    assert [id(f) for f in go] == [id(lucky), id(coarse)]
    assert _next_round([coarse, leader], late, time.perf_counter() - 70.0, 1e12) == []
    assert _next_round([coarse, lucky], late, time.perf_counter() - 90.0, 1e12) == []


def test_the_pace_sizes_samples_from_the_measured_rate():
    """At 1 microsecond per pair, 10 samples within 1 second: 2^16 pairs each (2^17 would
    take 1.3 s); never below the least size; without a budget, the largest."""
    pace = _Pace(time.perf_counter(), 1.0, 1.0)
    pace.add(1.0, 1_000_000)
    assert pace.size(1 << 20, 1 << 10, 10) == 1 << 16
    assert pace.size(1 << 20, 1 << 18, 10) == 1 << 18
    assert pace.size(1 << 20, 1 << 10, 5, others=5e-6) == 1 << 16
    assert _Pace(time.perf_counter(), None, 1.0, prior=1.0).size(1 << 20, 1, 10) == 1 << 20
    assert math.isclose(pace.per_pair, 1e-6)


def test_a_clear_leader_ends_the_race_when_time_is_budgeted():
    """Leader 0.10 with spread 0.008 (above the fine spread, 5% of 0.10, so it would double;
    within a tenth of its value, so its lead is not a lucky few counts) against finalists
    whose upper values (0.06 + 2 x 0.005, 0.07 + 2 x 0.004) are below its lower value
    0.10 - 2 x 0.008 = 0.084: with a time budget the race ends (its time goes to the fresh
    sample); without one the leader doubles as before; a finalist whose upper value 0.08 +
    2 x 0.005 = 0.09 reaches the leader's lower value keeps the leader racing; and a coarse
    leader (spread 0.02, a fifth of its value) goes on even when clear (its lower value
    0.10 - 2 x 0.02 = 0.06 above 0.03 + 2 x 0.005)."""
    timed = Budget(n_fit=1 << 18, n_select=1 << 22, seconds=1000.0)
    untimed = Budget(n_fit=1 << 18, n_select=1 << 22)
    now = time.perf_counter()
    leader = _finalist(0.10, 0.008, 1 << 20)
    others = [_finalist(0.06, 0.005, 1 << 20), _finalist(0.07, 0.004, 1 << 20)]
    assert _next_round([leader, *others], timed, now, 1e9) == []
    assert [id(f) for f in _next_round([leader, *others], untimed, now, 1e9)] == [id(leader)]
    near = _finalist(0.08, 0.005, 1 << 20)
    assert [id(f) for f in _next_round([leader, near], timed, now, 1e9)] == [id(leader)]
    coarse = _finalist(0.10, 0.02, 1 << 20)
    far = _finalist(0.03, 0.005, 1 << 20)
    assert [id(f) for f in _next_round([coarse, far], timed, now, 1e9)] == [id(coarse)]


def _noisy_max_truth(cand: Candidate, size: int) -> float:
    """The certificate a fresh sample of ``size`` pairs projects for ``cand``'s event on
    DP-Sniper's noisy max releasing the value (Lap(20) on each of 5 entries), from the
    event's exact probabilities: the event is evaluated on a fine grid of outputs and the
    max's exact distribution summed over it."""
    from scipy.stats import laplace

    from privet.stats.bounds import projected

    w = np.linspace(-300.0, 300.0, 60_001)
    inside = cand.event.indicator(w.reshape(-1, 1)).astype(float)
    p1, p2 = (float(np.sum(np.diff(np.r_[0.0, np.prod(
        [laplace.cdf(w, loc=v, scale=20.0) for v in a], axis=0)]) * inside))
        for a in (cand.x, cand.x2))
    n = 1e12  # expected counts of a sample this large: the projection of the truth
    return float(projected(p1 * p2 * n, p1 * (1 - p2) * n, (1 - p1) * p2 * n, n, size,
                           0.9, "union", shrink=0.0))


def test_the_race_winners_threshold_is_chosen_again_on_a_larger_sample():
    """Report noisy max releasing the value, (0^5) against (1^5): every event ω ≤ t with
    t ≤ 0 has the ratio e^0.25, larger t lower ones. Chosen on 2^14 selection pairs, the
    objective's shrink (2 standard errors) prefers a common event past the plateau; with a
    time budget leaving 2^24 pairs, the winner's score gets a refining sample of a quarter
    of them (2^21, the largest power of two within it) and the threshold chosen on it
    projects, from the event's exact probabilities, within two standard errors of the
    refined log-ratio (sqrt(2 / (2^21 / 32)), about 0.0055 each: 0.011) of the best
    threshold's projection, on every seed; on 2^14 pairs one seed is farther than that.
    Without a budget, when the time left affords less than REFINE_GAIN times the
    winner's sample, or when the winner's event was never seen under x' (its bound grows
    with the fresh sample), nothing is refined."""
    from privet.attacks.sampling import select_counts
    from privet.attacks.witness import CONTENDERS, REFINE_GAIN, _evaluate, _prepare, _refine
    from privet.search.blackbox import certificate_objective

    mech = d.vectorized("dpsniper.report_noisy_max3")
    x, x2, size = np.zeros(5), np.ones(5), 1 << 27
    objective = certificate_objective(size, 0.9, paired=False)
    objective.resized = lambda pairs: certificate_objective(int(pairs), 0.9, False)
    best = max(_noisy_max_truth(Candidate(x, x2, Interval(-math.inf, t), 0.0), size)
               for t in np.linspace(-2.0, 2.0, 21))
    margin = 2 * math.sqrt(2 / ((1 << 21) / 32))
    before, after = [], []
    for seed in range(3):
        budget = Budget(n_fit=1 << 14, n_select=1 << 14, seconds=1000.0, models=("stats",))
        ss = np.random.SeedSequence(seed)
        fin = _prepare(mech, _Screened(0.0, 0.0, x, x2, "test"), budget, {}, ss, False,
                       "inprocess", None, ("stats",), size=1 << 14)
        fin.counts, fin.n, _, _ = select_counts(
            mech, x, x2, [s for _, s in fin.fitted], [g for g, _ in fin.grids], 1 << 14,
            args={}, seed=ss.spawn(1)[0], executor="inprocess")
        _evaluate(fin, objective)
        before.append(_noisy_max_truth(fin.best, size))
        finals = [fin]
        now = time.perf_counter()
        assert not _refine(mech, finals, objective, Budget(), {}, False, "inprocess", False,
                           now, 1e9)
        assert not _refine(mech, finals, objective, budget, {}, False, "inprocess", False,
                           now, REFINE_GAIN * (1 << 15) / 1000.0)  # a quarter: 2^15
        assert finals == [fin]
        found = fin.best
        fin.best = Candidate(found.x, found.x2, found.event, found.value, (0.0, 9.0, 0.0), 9)
        assert not _refine(mech, finals, objective, budget, {}, False, "inprocess", False,
                           now, (1 << 24) / 1000.0)  # never seen under x': no refinement
        fin.best = found
        assert _refine(mech, finals, objective, budget, {}, False, "inprocess", False,
                       time.perf_counter(), (1 << 24) / 1000.0) == 1 << 21
        one = finals[0]
        assert one is not fin and one.fitted[0] is fin.fitted[fin.index]
        assert len(one.fitted) <= CONTENDERS and one.n == (1 << 14) + (1 << 21)
        assert one.refined == 1 << 21 and fin.refined == 0
        assert one.independent and fin.independent  # its table cells stay reorderable
        _evaluate(one, objective)
        after.append(_noisy_max_truth(one.best, size))
    assert all(v >= best - margin for v in after), (best, after)
    assert min(before) < best - margin, (best, before)


def test_the_scores_that_may_beat_the_race_winners_are_refined_with_it(monkeypatch):
    """Prefix sums of ten answers with Laplace(10) noise, (4^10) against (1^10), paired: the
    steps ω[j] - ω[j-1] are the noisy answers, and 'every step beyond x's median' (or, the
    other way, below x''s) has the ratio e^3 at probability 2^-10, where 'every step
    beyond the pooled median' has e^2.80 ((1 - e^-0.15 / 2) / (e^-0.15 / 2) per step) at
    0.0036. On 2^14 race pairs the shrink of two standard errors (the log-ratio's standard
    error is about 0.15 on the rarer event's few dozen counts) often prefers the pooled
    centers; the refining sample of 2^22 pairs tells them apart. Refined with the
    winner's score alone, the pooled count stays the choice on two of three seeds; refined
    with the scores that may beat it (:func:`_contenders`), the choice is a sided count
    on all three, and the winner's score stays first among them."""
    import privet.attacks.witness as w
    from privet.attacks.sampling import select_counts
    from privet.attacks.scores import Stat
    from privet.search.blackbox import certificate_objective

    mech = d.get_local("dpsniper.prefix_sum")
    x, x2 = np.full(10, 4.0), np.ones(10)
    objective = certificate_objective(1 << 27, 0.9, paired=True)
    objective.resized = lambda pairs: certificate_objective(int(pairs), 0.9, True)
    budget = Budget(n_fit=1 << 14, n_select=1 << 14, seconds=1000.0, models=("stats",))

    def raced(seed: int):
        ss = np.random.SeedSequence(seed)
        fin = w._prepare(mech, _Screened(0.0, 0.0, x, x2, "test"), budget, {}, ss, True,
                         "inprocess", None, ("stats",), size=1 << 14)
        fin.counts, fin.n, _, _ = select_counts(
            mech, x, x2, [s for _, s in fin.fitted], [g for g, _ in fin.grids], 1 << 14,
            args={}, seed=ss.spawn(1)[0], executor="inprocess", paired=True)
        w._evaluate(fin, objective)
        return fin

    def refined_centers(fin, race=None, size=1 << 22) -> str:
        finals = [fin]
        assert w._refine(mech, finals, objective, budget, {}, True, "inprocess", False,
                         time.perf_counter(), (1 << 25) / 1000.0, race=race) == size
        one = finals[0]
        assert one.fitted[0] is fin.fitted[fin.index] and len(one.fitted) <= w.CONTENDERS
        w._evaluate(one, objective)
        score = one.fitted[one.index][1]
        assert isinstance(score, Stat) and score.stat == "steps"
        return score.at

    fins = [raced(s) for s in (0, 1, 4)]
    assert all(refined_centers(f) != "pooled" for f in fins)
    # paced by its scores: the race drew 2^24 pairs per 1000 s, 1 s of its chunks' 4 s
    # drawing and 1 s of the 3 s scoring on the slowest score: one score is certified at
    # 2^25 per 1000 s (the rate given), three or more (as here) at the race's own 2^24,
    # whose quarter, less the time already spent, is within 2^21
    assert len(w._contenders(fins[0], objective)) >= 3
    refined_centers(fins[0], ((1 << 24) / 1000.0, np.array([1.0, 3.0, 1.0])), 1 << 21)
    monkeypatch.setattr(w, "CONTENDERS", 1)
    assert sum(refined_centers(f) == "pooled" for f in fins) >= 2


def test_a_refining_sample_of_several_scores_is_paced_by_their_scoring_time():
    """The race's chunks spent 1 s drawing and 3 s scoring, 1 s of it on the slowest score,
    at 100 pairs a second: a certificate (one score) draws and scores at 200 a second; a
    refining sample of two scores at 100 * 4 / 3; of five, no more than every score takes:
    the race's own 100."""
    from privet.attacks.witness import _certify_rate

    took = np.array([1.0, 3.0, 1.0])
    assert _certify_rate(100.0, took) == pytest.approx(200.0)
    assert _certify_rate(100.0, took, scores=2) == pytest.approx(400.0 / 3)
    assert _certify_rate(100.0, took, scores=5) == pytest.approx(100.0)
    assert _certify_rate(100.0, np.zeros(3), scores=2) == 100.0


def test_when_the_refined_leader_falls_behind_the_new_leader_is_refined_too():
    """Two finalists of report noisy max releasing the value: (0^5, 1^5), ratio e^0.25
    on its plateau, and (0^5, 0.5^5), ratio e^0.125 at most. The weaker one leads first (as
    a lucky selection value would make it); refined and judged again on its larger sample,
    it falls behind (its projection is at most 0.125, the other's about 0.24, more than
    three standard errors of either's log-ratio on 2^16 selection pairs), and the new
    leader gets a refining sample of its own: the leader that goes to the fresh sample is a
    refined one. With REFINES = 1 it would not be."""
    from privet.attacks.sampling import select_counts
    from privet.attacks.witness import _evaluate, _prepare, _refine_leaders
    from privet.search.blackbox import certificate_objective

    mech = d.vectorized("dpsniper.report_noisy_max3")
    objective = certificate_objective(1 << 24, 0.9, paired=False)
    objective.resized = lambda pairs: certificate_objective(int(pairs), 0.9, False)
    budget = Budget(n_fit=1 << 14, n_select=1 << 14, seconds=1000.0, models=("stats",))
    finals = []
    for seed, x2 in enumerate((np.full(5, 0.5), np.ones(5))):
        ss = np.random.SeedSequence(seed)
        fin = _prepare(mech, _Screened(0.0, 0.0, np.zeros(5), x2, "test"), budget, {}, ss,
                       False, "inprocess", None, ("stats",), size=1 << 14)
        fin.counts, fin.n, _, _ = select_counts(
            mech, fin.item.x, x2, [s for _, s in fin.fitted], [g for g, _ in fin.grids],
            1 << 16, args={}, seed=ss.spawn(1)[0], executor="inprocess")
        _evaluate(fin, objective)
        finals.append(fin)
    weak, strong = finals
    got = weak.best
    weak.best = Candidate(got.x, got.x2, got.event, 1.0, got.counts, got.n)  # leads
    total = _refine_leaders(mech, finals, objective, budget, {}, False, "inprocess", False,
                            time.perf_counter(), (1 << 23) / 1000.0)
    # the time left affords just under 2^23 pairs at ``rate`` (the rate is nominal: the
    # draws take seconds of the 1000): the first refining sample is a quarter of them, the
    # power of two below 2^21; the second an eighth, 2^19 (a quarter would give 2^20)
    assert [f.refined for f in finals] == [1 << 20, 1 << 19]
    assert total == sum(f.refined for f in finals)
    leader = max(finals, key=lambda f: f.best.value)
    assert leader.item.x2[0] == 1.0 and leader.refined


def test_a_finalist_judged_on_its_selection_sample_displaces_a_refined_one_only_clearly():
    """No finalist refined: the largest value leads. Once one is refined (0.10, spread
    0.001), a finalist at 0.11 whose spread 0.01 puts its lower value 0.11 - 2 x 0.01
    below 0.10 does not displace it (its lead may be luck); one at 0.13 (lower 0.11) does,
    and of two refined ones the one of the larger shrunk value leads, whatever their
    unshrunk values (the noisier one's may be luck)."""
    from privet.attacks.witness import _leader

    refined, near, far = (_finalist(0.10, 0.001, 1 << 22), _finalist(0.11, 0.01, 1 << 18),
                          _finalist(0.13, 0.01, 1 << 18))
    assert _leader([refined, near]) is near
    assert _leader([]) is None
    refined.refined, refined.lower = 1 << 21, 0.098
    assert _leader([near, refined]) is refined
    assert _leader([near, refined, far]) is far
    other = _finalist(0.105, 0.001, 1 << 22)
    other.refined, other.lower = 1 << 20, 0.099
    assert _leader([refined, near, other]) is other
    other.lower = 0.095  # larger unshrunk, smaller shrunk: the first refined one leads
    assert _leader([refined, near, other]) is refined


def test_on_outputs_of_few_values_the_screening_chooses_a_rare_output_its_shrink_hides():
    """One entry taking 0, 1 or 2, a screening half of 16,384 pairs: output 2 is rare (110
    against 82: ln 1.34 = 0.29, standard error 0.15), {ω >= 1} common (6,553 against 6,234:
    0.05, standard error 0.018). Moved two standard errors towards no violation, the common
    event projects the most (0.01), and the screening would judge it; chosen by the
    projection without the shrink (the table's events, ``raw_tables`` as ``privet.search``
    sets it), the rare output (0.29 less the fresh sample's margin). A continuous entry
    (the same outputs plus a little noise: the histogram and the statistics, thousands of
    thresholds) keeps the objective's own shrink, and so does a table of more outputs than
    REORDER_CELLS (many rare outputs: a lucky one would win)."""
    from privet.attacks.witness import (
        REORDER_CELLS,
        _event,
        _fit_scores,
        _score_events,
        _screen_objective,
    )
    from privet.search.blackbox import budget_for, certificate_objective

    n, rng = 1 << 14, np.random.default_rng(0)

    def outputs(twos: int, ones: int) -> np.ndarray:  # in random order (independent draws)
        return rng.permutation(np.r_[np.full(twos, 2.0), np.full(ones, 1.0),
                                     np.zeros(n - twos - ones)])

    o1, o2 = outputs(110, 6553 - 110), outputs(82, 6234 - 82)
    objective = certificate_objective(1 << 24, 0.9, paired=False)
    scores = _fit_scores(o1, o2, None, 0)
    assert [m for m, _ in scores] == ["table"]
    raw = budget_for(d.vectorized("dpsniper.svt1"), {}, 10)
    assert raw.raw_tables and not Budget().raw_tables
    ones, twos = np.array([1.0]), np.array([2.0])
    picked = {}
    for budget in (raw, Budget()):
        choose = _screen_objective(objective, scores, budget)
        value, orient, _, sc, ch = max(_score_events(scores, o1, o2, choose),
                                       key=lambda r: r[0])
        picked[budget.raw_tables] = (value, _event(sc, orient, ch, 0))
    value, rare = picked[True]
    assert rare.contains(twos)[0] and not rare.contains(ones)[0] and value > 0.2
    value, common = picked[False]
    # its projection is below its log-ratio, 0.05
    assert common.contains(twos)[0] and common.contains(ones)[0] and value < 0.05
    noisy = rng.normal(0.0, 0.01, size=(2, n))
    continuous = _fit_scores(o1 + noisy[0], o2 + noisy[1], None, 0)
    assert "table" not in [m for m, _ in continuous]
    assert _screen_objective(objective, continuous, raw) is objective
    # a table of more outputs than REORDER_CELLS (100 values, each seen about 160 times)
    many = _fit_scores(rng.integers(0, 100, n).astype(float),
                       rng.integers(0, 100, n).astype(float), None, 0)
    assert [m for m, _ in many] == ["table"] and len(many[0][1].rows) > REORDER_CELLS
    assert _screen_objective(objective, many, raw) is objective


def test_a_tables_cells_are_reordered_on_the_selection_counts_of_independent_samples():
    """Three outputs: 2 has ratio 4 (p = 0.02 against 0.005), 1 ratio 2 (0.10 against
    0.05), 0 the rest. A table fitted as if 1 were the stronger (its fit sample misordered
    them) only offers {1}, {1, 2} and everything; reordered on 2^16 selection pairs (output 2
    then shows about 1300 times under x and 330 under x', a log-ratio standard error near
    0.06 against ln 4 - ln 2 = 0.69 between the two) its best event is output 2 alone. The
    reordered counts are those of the new table's own events on the same draws, and samples
    of the paired kind are left in the fitted order."""
    from privet.attacks.scores import Table
    from privet.attacks.threshold import at_least, tails
    from privet.attacks.witness import _evaluate, _reordered
    from privet.search.blackbox import certificate_objective

    rng = np.random.default_rng(7)
    n = 1 << 16
    o1 = rng.choice(3, size=n, p=[0.88, 0.10, 0.02]).astype(float)
    o2 = rng.choice(3, size=n, p=[0.945, 0.05, 0.005]).astype(float)
    fitted = Table(((0.0,), (1.0,), (2.0,)), (-0.1, 0.9, 0.6))  # 1 above 2: misordered
    grid = np.array([-0.1, 0.6, 0.9])
    arr = tails(fitted(o1), fitted(o2), grid)
    table, new, arr2, _ = _reordered(fitted, grid, arr, n)
    assert table.values[2] > table.values[1] > table.values[0]
    s1, s2 = table(o1), table(o2)
    for side in (0, 1):  # upper tails {s >= t}, then lower ones {s <= t}, as tails() gives
        k1 = at_least(s1, new) if side == 0 else n - at_least(s1, np.nextafter(new, np.inf))
        k2 = at_least(s2, new) if side == 0 else n - at_least(s2, np.nextafter(new, np.inf))
        got = arr2[side]
        k1, k2 = (k1, k2) if side == 0 else (k1[::-1], k2[::-1])
        assert np.allclose(got[0] + got[1], k1) and np.allclose(got[0] + got[2], k2)
    objective = certificate_objective(1 << 24, 0.9, paired=False)
    picks = {}
    for independent in (True, False):
        fin = _Finalist(_Screened(0.0, 0.0, np.zeros(1), np.ones(1), "test"),
                        [("table", fitted)], [(grid, True)], np.random.SeedSequence(0),
                        counts=[arr], n=n, independent=independent)
        _evaluate(fin, objective)
        picks[independent] = fin.best
    best = picks[True]
    assert best.model == "table (cells reordered)"
    assert np.array_equal(best.event.contains(np.array([0.0, 1.0, 2.0])), [False, False, True])
    # reordered: ln 4 = 1.39 less the shrink (2 standard errors, 0.12) and the fresh sample's
    # margin; fitted order: {1, 2}, ln(0.12 / 0.055) = 0.78 less 0.04. The gap, about 0.42,
    # has a standard error near 0.06 (output 2's counts): 0.3 is two of them below it
    assert best.value > picks[False].value + 0.3 and picks[False].model == "table"
    # cross-fitted on two halves of the same draws: the chosen half's reordered table (its
    # cells valued on that half's counts) carries the event, output 2 alone
    h = n // 2
    crossed = _Finalist(_Screened(0.0, 0.0, np.zeros(1), np.ones(1), "test"),
                        [("table", fitted)], [(grid, True)], np.random.SeedSequence(0),
                        independent=True)
    halves = [([tails(fitted(o1[:h]), fitted(o2[:h]), grid)], h),
              ([tails(fitted(o1[h:]), fitted(o2[h:]), grid)], n - h)]
    crossed.absorb(halves)
    _evaluate(crossed, objective)
    assert crossed.best.model == "table (cells reordered)"
    own = [_reordered(fitted, grid, c[0], m)[0].values for c, m in halves]
    assert crossed.best.event.score.values in own  # not the whole sample's table
    assert np.array_equal(crossed.best.event.contains(np.array([0.0, 1.0, 2.0])),
                          [False, False, True])


def test_a_small_tables_rare_output_is_chosen_without_the_shrink_and_judged_held_out():
    """One entry taking 0, 1 or 2, 10,000 independent pairs per half, the same counts in
    both halves: output 2 is rare with a large ratio (30 against 15, ln 2), {ω >= 1}
    common with a small one (3,300 against 3,000, 0.095). Moved two standard errors towards
    no violation, output 2 projects below 0 (19 against 23) and the common event 0.02, so a
    choice with the objective's shrink takes the common event in each half. A small table
    on independent samples also chooses without the shrink (output 2, ln 2), and its pick,
    judged on the other half with one standard error (25 against 19: 0.25), beats the
    common one judged with two (0.02): the finalist's event is output 2 alone, valued by
    the held-out half without the shrink (ln 2 less the fresh sample's margin). The same
    counts as a continuous family (a statistic's thresholds), or a table on paired
    samples, keep the shrink and the common event."""
    from privet.attacks.scores import Stat, Table
    from privet.attacks.threshold import tails
    from privet.attacks.witness import _evaluate
    from privet.search.blackbox import certificate_objective

    rng = np.random.default_rng(0)

    def outputs(twos: int, ones: int, n: int = 10_000) -> np.ndarray:  # in random order
        return rng.permutation(np.r_[np.full(twos, 2.0), np.full(ones, 1.0),
                                     np.zeros(n - twos - ones)])

    o1, o2 = outputs(30, 3270), outputs(15, 2985)
    table, stat = Table(((0.0,), (1.0,), (2.0,)), (-0.1, 0.1, 0.7)), Stat("entry", 0)
    objective = certificate_objective(1 << 24, 0.9, paired=False)
    ones, twos = np.array([1.0]), np.array([2.0])
    picked = {}
    for label, model, score, independent in (("table", "table", table, True),
                                             ("stat", "stats", stat, True),
                                             ("paired", "table", table, False)):
        grid = np.unique(np.r_[score(o1), score(o2)])
        half = tails(score(o1), score(o2), grid)
        fin = _Finalist(_Screened(0.0, 0.0, np.zeros(1), np.ones(1), "test"),
                        [(model, score)], [(grid, True)], np.random.SeedSequence(0),
                        independent=independent)
        fin.absorb([([half], 10_000), ([half.copy()], 10_000)])
        _evaluate(fin, objective)
        picked[label] = fin.best
    rare = picked["table"]
    assert rare.event.contains(twos)[0] and not rare.event.contains(ones)[0]
    assert math.log(2) > rare.value > 0.6
    assert rare.counts[1] - rare.counts[2] == pytest.approx(30)  # both halves: 60 against 30
    for label in ("stat", "paired"):
        common = picked[label]
        assert common.event.contains(twos)[0] and common.event.contains(ones)[0]
        assert 0.0 < common.value < 0.1


def test_a_finalists_event_is_judged_on_the_half_of_its_sample_that_did_not_choose_it():
    """One entry taking 0, 1 or 2, 10,000 independent pairs per half. Output 2 is rare and,
    in half A, lucky (220 against 50, ratio e^1.48; 120 against 110 in half B); {ω >= 1} is
    common (3,220 against 2,765 in A, 3,120 against 2,836 in B). On the whole sample the
    rare event wins (340 against 160: projected 0.50 after the shrink of two standard
    errors, against 0.08 for the common one) and its value is that luck. Cross-fitted, A
    chooses the rare event and B judges it (ln(120/110) = 0.09, below 0 once shrunk), B
    chooses the common one and A judges it (0.09 shrunk): the common event is the
    finalist's, valued by A's counts without the shrink (0.15), and its counts are both
    halves'."""
    from privet.attacks.scores import Stat
    from privet.attacks.threshold import oriented, tails
    from privet.attacks.witness import _evaluate
    from privet.search.blackbox import certificate_objective

    rng = np.random.default_rng(0)

    def outputs(twos: int, ones: int, n: int = 10_000) -> np.ndarray:  # in random order
        return rng.permutation(np.r_[np.full(twos, 2.0), np.full(ones, 1.0),
                                     np.zeros(n - twos - ones)])

    score, grid = Stat("entry", 0), np.array([0.0, 1.0, 2.0])
    half_a = tails(score(outputs(220, 3000)), score(outputs(50, 2715)), grid)
    half_b = tails(score(outputs(120, 3000)), score(outputs(110, 2726)), grid)
    objective = certificate_objective(1 << 24, 0.9, paired=False)
    item = _Screened(0.0, 0.0, np.zeros(1), np.ones(1), "test")
    whole = _Finalist(item, [("stats", score)], [(grid, False)], np.random.SeedSequence(0),
                      counts=[half_a + half_b], n=20_000, independent=True)
    crossed = _Finalist(item, [("stats", score)], [(grid, False)], np.random.SeedSequence(0),
                        independent=True)
    crossed.absorb([([half_a], 10_000), ([half_b], 10_000)])
    assert crossed.n == 20_000 and np.array_equal(crossed.counts[0], half_a + half_b)
    # detect's race (crossfit off: its final test draws its own sample) judges in-sample
    inside = _Finalist(item, [("stats", score)], [(grid, False)], np.random.SeedSequence(0),
                       independent=True, crossfit=False)
    inside.absorb([([half_a], 10_000), ([half_b], 10_000)])
    for fin in (whole, crossed, inside):
        _evaluate(fin, objective)
    assert inside.best.value == whole.best.value and inside.best.counts == whole.best.counts
    ones, twos = np.array([1.0]), np.array([2.0])
    lucky, common = whole.best, crossed.best
    assert lucky.event.contains(twos)[0] and not lucky.event.contains(ones)[0]
    assert common.event.contains(twos)[0] and common.event.contains(ones)[0]
    at = [tuple(float(c[1]) for c in oriented(h, grid, 0)[1]) for h in (half_a, half_b)]
    assert common.counts == tuple(a + b for a, b in zip(*at))  # {ω >= 1} on both halves
    honest = float(objective(*(np.array([c]) for c in at[0]), 10_000, shrink=0.0)[0])
    assert common.value == pytest.approx(honest)  # A's counts judge B's choice
    assert lucky.value > 0.4 > 0.2 > common.value > 0.1


def test_a_refined_finalist_chooses_its_event_with_the_larger_agreed_shrink(monkeypatch):
    """A refined finalist's event is the one both halves support with each half's counts
    shrunk by SHRINK_AGREED (3) standard errors. The rare event {ω >= 2} shows 180 against
    100 in both halves of 10,000 pairs, the common {ω >= 1} 3,200 against 2,500. Projected
    at 2^20 fresh pairs, the rare one leads after a shrink of 2 (0.23 against 0.18) and the
    common one after a shrink of 3 (0.15 against 0.06): the shrink of 3 chooses it, and the
    objective's own shrink of 2 would choose the rare one."""
    import privet.attacks.witness as witness
    from privet.attacks.scores import Stat
    from privet.attacks.threshold import best_agreed, oriented, tails
    from privet.search.blackbox import certificate_objective

    rng = np.random.default_rng(1)

    def outputs(twos: int, ones: int, n: int = 10_000) -> np.ndarray:
        return rng.permutation(np.r_[np.full(twos, 2.0), np.full(ones, 1.0),
                                     np.zeros(n - twos - ones)])

    score, grid = Stat("entry", 0), np.array([0.0, 1.0, 2.0])
    objective = certificate_objective(1 << 20, 0.9, paired=False)
    item = _Screened(0.0, 0.0, np.zeros(1), np.ones(1), "test")

    def refined(every: bool):  # a refined finalist of two such halves, evaluated
        halves = [([tails(score(outputs(180, 3020)), score(outputs(100, 2400)), grid)], 10_000)
                  for _ in range(2)]
        fin = _Finalist(item, [("stats", score)], [(grid, every)], np.random.SeedSequence(0),
                        independent=True, refined=20_000)
        fin.absorb(halves)
        witness._evaluate(fin, objective)
        return fin, halves

    ones, twos = np.array([1.0]), np.array([2.0])
    chosen = {}
    for shrink in (witness.SHRINK_AGREED, 2.0):
        monkeypatch.setattr(witness, "SHRINK_AGREED", shrink)
        fin, _ = refined(False)
        chosen[shrink] = fin.best.event
        assert fin.best.counts[0] + fin.best.counts[1] in (6400.0, 360.0)  # both halves'
    assert chosen[3.0].contains(ones)[0] and chosen[3.0].contains(twos)[0]
    assert not chosen[2.0].contains(ones)[0] and chosen[2.0].contains(twos)[0]
    # a discrete score's events (every distinct score a threshold) keep the objective's
    # shrink, and the finalist's shrunk value is the agreed value at 2 either way
    monkeypatch.setattr(witness, "SHRINK_AGREED", 3.0)
    fin, halves = refined(True)
    its, held = ([(g, True, *c) for g, c in [oriented(h[0][0], grid, 0)]] for h in halves)
    (want,) = best_agreed(its, held, 10_000, 10_000, objective)
    assert fin.best.counts == want.counts and fin.lower == pytest.approx(want.value)


def test_the_screening_draws_ahead_on_a_process_pool_and_judges_the_pairs_as_in_process():
    """Without a time budget every sample size is fixed, so the pairs the screening draws
    ahead on a process pool (while this process fits the last pair's models) are the pairs
    it would draw one by one: the screening, the halving and the race see the same outputs,
    and the search ends on the same witness with the same counts."""
    from privet.attacks.witness import search_witness
    from privet.search.blackbox import certificate_objective

    box = d.vectorized("dpsniper.svt1")
    budget = Budget(n_train=1 << 10, n_fit=1 << 12, n_select=1 << 13, random_pairs=2,
                    iterations=2, finalists=2, models=("table", "logistic"), raw_tables=True)
    objective = certificate_objective(1 << 20, 0.9, paired=False)
    got = {}
    for executor in ("inprocess", "processes"):
        best, trace, stopped = search_witness(box, objective, budget=budget, seed=3,
                                              executor=executor)
        assert best is not None and not stopped
        screened = [(t["stage"], t["pattern"], t["n"], t["value"]) for t in trace
                    if t["stage"] != "select"]
        got[executor] = (screened, best.x.tolist(), best.x2.tolist(), best.counts)
    screened = got["inprocess"][0]
    assert {s for s, *_ in screened} >= {"screen", "local search", "rescreen"}
    assert got["processes"] == got["inprocess"]
