"""The witness search's input pairs, its selection race and its pace (issue 13): step pairs
at every split, the race's challengers, the sizes a time budget gives."""

from __future__ import annotations

import math
import time

import numpy as np

from privet.attacks.inputs import move, pattern_pairs, splits
from privet.attacks.witness import Budget, Candidate, _Finalist, _next_round, _Pace, _Screened
from privet.core.events import Event
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
