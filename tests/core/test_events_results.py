"""Events on batches; results round-trip JSON."""

import math
from fractions import Fraction

import numpy as np

import privet
from privet.core import events as ev
from privet.core.results import Bound, Counterexample, ExactBound, from_json, to_json


def test_events_evaluate_whole_batches():
    out = np.array([[1.0, 0.0, privet.ABORTED], [1.0, 1.0, 1.0], [0.0, privet.ABORTED,
                                                                   privet.ABORTED]])
    assert ev.Count(1.0, 2).contains(out).tolist() == [False, False, False]
    assert ev.Count(1.0, 3).contains(out).tolist() == [False, True, False]
    assert ev.Equals(2.0, stat="length").contains(out).tolist() == [True, False, False]
    assert ev.Hamming((1, 1, 1), 0).contains(out).tolist() == [False, True, False]
    box = ev.Box((0.5, -1.0), (1.5, 0.5))
    assert box.contains(out[:, :2]).tolist() == [True, False, False]
    both = ev.Count(1.0, 1) & ev.Equals(1.0, coord=0)
    assert both.contains(out).tolist() == [True, False, False]
    assert "count(1) = 1" in both.describe()


def test_event_spec_round_trip():
    for e in [ev.Interval(-np.inf, 2.0, "max", None), ev.Count(privet.FALSE, 9),
              ev.And((ev.Count(privet.FALSE, 9), ev.Interval(0.0, 1.0, "coord", 9)))]:
        again = ev.from_spec(e.spec())
        assert again == e
    assert "FALSE" in ev.Count(privet.FALSE, 9).describe()


def test_results_round_trip_json():
    cx = Counterexample("m", (1.0, 1.0), (2.0, 1.0), {"T": 1}, "ω[0] ∈ (0, 1]",
                        counts=(100, 10), n=(1000, 1000), p_value=1e-5, seed=3)
    b = Bound("m", math.inf, 0.9, "exact", exact=True, witness=cx)
    e = ExactBound("rr", math.log(4), Fraction(4), ((0, 0), (1, 0), (0, 0)), "n=2")
    for r in (cx, b, e):
        assert from_json(to_json(r)) == r


def test_occurrences_works_for_every_event_kind():
    out = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    assert ev.Count(1.0, 2).occurrences(out) == 1
    assert ev.count_all([ev.Count(0.0, 2), ev.Equals(1.0)], out).tolist() == [1, 2]
