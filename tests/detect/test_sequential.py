"""The sequential final test (stats/sequential.py), Holm (stats/multiplicity.py), and how
detect uses them: level under optional stopping, early stops, fixed-sequence curves."""

import math

import numpy as np
import pytest

from privet.core.results import inconclusive_text
from privet.core.text import fmt_p, fmt_pvalue
from privet.detect import _curve_summary as curve_summary
from privet.detect import detect
from privet.mechanisms import get
from privet.stats.hypothesis import thinned_fisher_pvalue
from privet.stats.multiplicity import holm
from privet.stats.sequential import (
    ACCEPT,
    CONTINUE,
    FUTILITY,
    REJECT,
    Design,
    clearly_below,
    decide,
    first_rejections,
    log_fnch_cdf,
    schedule,
    sequential_step,
)


def test_schedule_and_spending():
    looks = schedule(500_000)
    assert looks[0] == 2_000 and looks[-1] == 500_000
    assert all(b > a for a, b in zip(looks, looks[1:]))
    assert schedule(1_500) == (1_500,)  # a budget below the first look: the fixed test
    d = Design(looks, 0.05)
    levels = [d.level(k) for k in range(len(looks))]
    assert all(lv > 0 for lv in levels)
    assert sum(levels) == pytest.approx(0.05)  # the union bound spends exactly alpha
    assert sum(d.weight(k) for k in range(len(looks))) == pytest.approx(1.0)
    # power spending alpha t^2: the last look keeps most of alpha
    assert levels[-1] > 0.9 * 0.05 and levels[0] < 1e-6
    with pytest.raises(ValueError):
        Design((10, 5), 0.05)


def _boundary_runs(reps: int, looks: tuple, p2: float, eps: float, seed: int):
    """Cumulative counts at each look under p1 = e^eps p2 exactly (the null's boundary)."""
    rng = np.random.default_rng(seed)
    sizes = np.diff((0,) + looks)
    c1 = np.cumsum(rng.binomial(sizes, math.exp(eps) * p2, size=(reps, len(looks))), axis=1)
    c2 = np.cumsum(rng.binomial(sizes, p2, size=(reps, len(looks))), axis=1)
    return c1, c2


def test_level_holds_under_optional_stopping_at_the_boundary():
    """Every run draws looks until a decision; at the boundary p1 = e^eps p2 the rejection
    rate must stay at most alpha. Rejections ~ Binomial(R, q) with q <= alpha, so with
    R = 2,000 the observed rate exceeds alpha + 3 sqrt(alpha (1 - alpha) / R) = 0.0646 with
    probability < 0.2% if the design is valid. The same bound holds for P(p <= 0.05), and
    P(p <= 0.01) <= 0.01 + 3 sqrt(0.01 * 0.99 / R) = 0.0167 checks the stage-wise p-value
    below alpha."""
    reps, eps, p2 = 2_000, 0.5, 0.2
    looks = (200, 400, 800, 1600, 3200)
    design = Design(looks, 0.05)
    c1, c2 = _boundary_runs(reps, looks, p2, eps, seed=12)
    p_looks = thinned_fisher_pvalue(c1, c2, np.array(looks), np.array(looks), eps)
    rejected, small = 0, 0
    for r in range(reps):
        previous = 1.0
        for k in range(len(looks)):
            step = decide(float(p_looks[r, k]), design, k, previous)
            previous = step.bonferroni
            if step.decision != CONTINUE:
                break
        rejected += step.decision == REJECT
        small += step.p_value <= 0.01
        assert (step.p_value <= 0.05) == (step.decision == REJECT)
    assert rejected / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert small / reps <= 0.01 + 3 * math.sqrt(0.01 * 0.99 / reps)


def test_a_clear_violation_stops_at_the_first_look_with_its_tiny_p_value():
    design = Design(schedule(500_000), 0.05)
    step = sequential_step(600, 100, 2_000, 2_000, 0.5, design=design, look=0)
    assert step.decision == REJECT and step.p_value < 1e-20
    # a clearly private event stops for futility; a boundary one goes on
    clear = sequential_step(100, 400, 2_000, 2_000, 0.5, design=design, look=0)
    assert clear.decision == ACCEPT and clear.futile and clear.p_value >= 0.05
    edge = sequential_step(330, 200, 2_000, 2_000, 0.5, design=design, look=0)
    assert edge.decision == CONTINUE
    with pytest.raises(ValueError, match="delta"):
        sequential_step(1, 1, 10, 10, 0.5, design=design, look=0, delta=0.1)


def test_the_odds_ratio_tail_is_fishers_noncentral_hypergeometric():
    from scipy import stats

    for n1, n2, t, w in [(2_000, 2_000, 12, 1.5), (8_000, 8_000, 54, 1.5), (50, 60, 40, 0.3),
                         (1_000, 1_000, 1_500, 1.5), (100, 50, 120, 2.0), (10, 10_000, 3, 1.0)]:
        for x in range(max(0, t - n2), min(n1, t) + 1, max(1, t // 7)):
            ref = stats.nchypergeom_fisher.logcdf(x, n1 + n2, n1, t, math.exp(w))
            ours = log_fnch_cdf(x, n1, n2, t, w)
            if ref < -700:  # SciPy's tail underflows there; ours is kept in logs
                assert ours < -650
                continue
            # an upper bound, exact to rounding
            assert ours >= ref - 1e-9 * max(1.0, abs(ref))
            assert ours == pytest.approx(ref, rel=1e-8, abs=1e-10)


def test_a_rare_clear_event_is_clear_early_and_a_violation_rarely_is():
    # counts of a rare event (p ~ 0.3%): the ratio is 1.45 against the null's e^1.5 = 4.5,
    # clear to the odds-ratio test though the two separate Clopper-Pearson intervals
    # (FUTILITY / 2 each) still overlap the boundary
    from scipy import special

    c1, c2, n, eps = 32, 22, 8_000, 1.5
    a = FUTILITY / 2
    up = special.betainccinv(c1 + 1, n - c1, a)
    lo = special.betaincinv(c2, n - c2 + 1, a)
    assert up > math.exp(eps) * lo and clearly_below(c1, c2, n, n, eps)
    # at the boundary p1 = e^eps p2 each of the two tests calls the event clear with
    # probability at most FUTILITY, so the rate is at most 2 FUTILITY: over 4,000 draws the
    # count has mean at most 8 and standard deviation at most 2.9; 8 + 4 sd = 19.3
    rng = np.random.default_rng(12)
    p2, eps, n, reps = 0.003, 0.5, 4_000, 4_000
    k1 = rng.binomial(n, math.exp(eps) * p2, reps)
    k2 = rng.binomial(n, p2, reps)
    clear = sum(clearly_below(int(x), int(y), n, n, eps) for x, y in zip(k1, k2))
    assert clear <= 19


def test_holm_by_hand():
    rejected, adjusted = holm([0.01, 0.04, 0.03, 0.005], 0.05)
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06 (stop), 0.04 x 1 -> 0.06
    assert rejected.tolist() == [True, False, False, True]
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([], 0.05)[0].size == 0


def test_fixed_sequence_over_increasing_test_epsilons():
    # the nulls are nested: rejections count only up to the first test eps not rejected
    assert first_rejections([0.001, 0.01, 0.2, 0.001], 0.05) == 2
    lb, verdict = curve_summary([0.3, 0.1, 0.2, 0.4], [0.2, 0.001, 0.01, 0.001], 0.05, 0.3)
    assert lb == 0.2 and verdict.startswith("no violation found at the claimed")
    lb, verdict = curve_summary([0.1, 0.2], [0.5, 0.001], 0.05, 0.2)
    assert lb is None and verdict == "no violation found"


def test_p_values_that_underflow_print_as_a_floor():
    assert fmt_pvalue(0.0) == "< 1e-300" and fmt_p(0.0) == "p < 1e-300"
    assert fmt_p(1e-320) == "p < 1e-300" and fmt_p(0.0472) == "p = 0.047"
    assert inconclusive_text(0.047, 36) == ("inconclusive: p = 0.047, not significant after "
                                            "correction for 36 tests")
    r = detect(get("statdp.isvt1").replace(epsilon=0.7), seed=1, n_select=2_000,
               n_final=20_000, sequential=False, max_candidates=1)
    assert r.violation and r.p_value < 1e-300  # counts like 7,000 vs 0
    assert r.verdict == "violation found (p < 1e-300)"


# -- detect, sequential against fixed ------------------------------------------------------

@pytest.mark.parametrize("name, eps0", [("statdp.noisy_max_v1b", 0.7), ("statdp.isvt1", 1.5),
                                        ("statdp.histogram_eps", 0.2)])
def test_a_clear_violation_stops_after_a_few_thousand_samples(name, eps0):
    mech = get(name).replace(epsilon=eps0)
    seq = detect(mech, seed=3, max_candidates=1)
    fixed = detect(mech, seed=3, max_candidates=1, sequential=False, n_select=20_000,
                   n_final=100_000)
    assert seq.violation and fixed.violation
    # the pilot (2,000 per input) selects; the final looks are 2,000, 4,000, ...
    assert seq.details["samples"] < 0.1 * fixed.details["samples"]
    assert seq.details["stopped"].startswith("rejected at look")
    cx = seq.counterexample
    assert cx.counts[0] / cx.n[0] > math.exp(eps0) * cx.counts[1] / cx.n[1]


def test_a_clear_pass_stops_for_futility():
    r = detect(get("statdp.histogram_eps").replace(epsilon=1.5), seed=4, max_candidates=1,
               n_final=100_000, n_select=20_000)  # 1/1.5-DP: clearly 1.5-DP
    assert not r.violation and r.verdict == "no violation found"
    assert "futility" in r.details["stopped"] and r.p_value > 0.05


def test_a_curve_claims_only_what_fixed_sequence_testing_allows():
    c = detect(get("statdp.histogram_eps").replace(epsilon=0.7), seed=8,
               test_epsilons=[0.5, 1.0, 2.0], n_select=20_000, n_final=50_000).curve
    assert c.p_values[0] < 0.05 and c.p_values[-1] > 0.05  # true epsilon 1/0.7 = 1.43
    assert c.lower_bound in (0.5, 1.0)
    assert c.details["lower_bound_rule"].startswith("fixed-sequence")


# -- how the selection grows ------------------------------------------------------------------

def test_the_leading_pairs_select_at_the_look_and_the_others_lag_behind():
    from privet.detect.engine import LAG, LEADERS, open_session

    s = open_session(get("statdp.noisy_max_v1b"), seed=0, n_select=20_000, n_final=100_000)
    try:
        last = len(s.design.looks) - 1
        assert s.grid[0] == 2_000 and s.grid[-1] == 20_000  # the last look selects as fixed
        assert all(a <= b for a, b in zip(s.grid, s.grid[1:]))
        sels = s.select(0.7)
        zero = np.zeros(len(s.sources), dtype=np.int64)
        look = 3
        lv = s._levels(sels, look, zero)
        lead = {p for sel in sels[:LEADERS] for p in (s.pairs[sel.pair].s1,
                                                      s.pairs[sel.pair].s2)}
        assert all(lv[i] == look for i in lead)
        assert all(lv[i] == look - LAG for i in range(len(s.sources)) if i not in lead)
        assert (s._levels(sels, look, lv + 1) >= lv + 1).all()  # never lower
        assert (s._levels(sels, last, zero) == last).all()  # every pair at the last look
    finally:
        s.executor.shutdown()


def test_a_pair_whose_sizes_did_not_change_keeps_its_selection():
    # a pair's selection depends on its two inputs' selection samples only: re-selecting
    # after some inputs grew gives what a session that never selected before gives
    from privet.detect.engine import open_session

    kw = {"seed": 3, "n_select": 20_000, "n_final": 100_000}
    mech = get("statdp.isvt1").replace(epsilon=0.5)
    a, b = open_session(mech, **kw), open_session(mech, **kw)
    try:
        zero = np.zeros(len(a.sources), dtype=np.int64)
        lv = a._levels(a.select(0.5, zero), 4, zero)
        sizes = {a.grid[v] for v in lv}
        assert sizes == {a.grid[0], a.grid[4]} and a.grid[4] > a.grid[0]  # the leaders grew
        scored = []
        inner = a._select_pairs
        a._select_pairs = lambda eps, todo, *rest: scored.append(todo.size) or inner(eps, todo,
                                                                                     *rest)
        got, fresh = a.select(0.5, lv), b.select(0.5, lv)
        assert 0 < scored[0] < len(a.pairs)  # only the pairs with a grown input are scored
        # the exact p-values are summed in vectorized blocks whose make-up depends on which
        # pairs are scored together: equal up to rounding
        assert [(x.pair, x.cand, x.direction, x.counts, x.n) for x in got] == \
            [(x.pair, x.cand, x.direction, x.counts, x.n) for x in fresh]
        assert [x.p_value for x in got] == pytest.approx([x.p_value for x in fresh], rel=1e-12)
        assert len(a._selected[0.5]) == len(a.pairs)
    finally:
        a.executor.shutdown()
        b.executor.shutdown()


def test_each_point_of_a_curve_selects_as_if_it_ran_alone():
    # the selection sizes of a point depend on its own selection samples only (not on where
    # an earlier point stopped, which depends on the final samples the points share)
    from privet.detect import pvalue_curve

    mech = get("statdp.noisy_max_v1b").replace(epsilon=0.2)
    kw = {"seed": 2, "n_select": 20_000, "n_final": 100_000}
    both = pvalue_curve(mech, [0.05, 0.15], **kw)
    alone = pvalue_curve(mech, [0.15], **kw)
    a, b = both.counterexamples[1], alone.counterexamples[0]
    assert (a.p_value, a.event, a.counts, a.n) == (b.p_value, b.event, b.counts, b.n)


def test_candidates_cost_at_most_the_samples_of_the_test():
    from privet.detect.engine import CANDIDATE_LAG

    r = detect(get("statdp.isvt2").replace(epsilon=0.2), seed=0, max_candidates=3)
    chosen = r.counterexample
    assert chosen is not None and len(r.candidates) > 1
    looks = schedule(500_000)
    at = looks.index(chosen.n[0])
    for c in r.candidates[1:]:
        assert looks[max(0, at - CANDIDATE_LAG)] <= c.n[0] <= chosen.n[0]


@pytest.mark.parametrize("name, eps0, futile", [("statdp.histogram_eps", 1.5, True),
                                                ("statdp.isvt1", 0.7, False)])
def test_a_futility_stop_is_checked_with_every_pair_at_full_selection(name, eps0, futile):
    from privet.detect.engine import open_session

    s = open_session(get(name).replace(epsilon=eps0), seed=0, n_select=20_000,
                     n_final=100_000)
    try:
        assert s._full_futile(eps0, 2) is futile
    finally:
        s.executor.shutdown()
