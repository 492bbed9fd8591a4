"""Float-sum sensitivity: pairs that move the float sum by more than the declared bound."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import privet.mechanisms as lib
from privet import floats
from privet.core.errors import ParameterError
from privet.core.results import SensitivityResult, from_json, to_json
from privet.implementation import sensitivity
from privet.mechanisms.floats import sequential_sum


def _seq64(x):
    return sequential_sum(np.clip(x, 0.0, 1.0), np.float64)


def test_two_float64_records_already_exceed_the_declared_sensitivity():
    # [1, s] with s just above half an ulp of 1 rounds up to 1 + 2^-52, [0, s] is s: the
    # exact difference is 1 + 2^-52 - s > 1 (a float subtraction would round it to 1)
    res = floats.sum_sensitivity(_seq64, bounds=(0, 1), length=2)
    assert res.exceeds and res.excess > 0
    exact = abs(Fraction(_seq64(np.array(res.d1))) - Fraction(_seq64(np.array(res.d2))))
    assert exact > 1 and float(exact - 1) == res.excess


def test_float32_accumulation_doubles_the_sensitivity():
    agg = lib.floats.aggregate(lib.get("floats.clamped_sum_f32"))
    res = floats.sum_sensitivity(agg, bounds=(0, 1), length=8192, dtype=np.float32,
                                 batched=True, iterations=50)
    assert res.exceeds and res.ratio >= 1.9
    assert float(agg(np.array(res.d1))) == res.f1 and float(agg(np.array(res.d2))) == res.f2
    assert sum(a != b for a, b in zip(res.d1, res.d2)) == 1  # replace one record
    assert isinstance(from_json(to_json(res)), SensitivityResult)


def test_int32_wraparound_is_found():
    agg = lib.floats.aggregate(lib.get("floats.int32_sum"))
    res = floats.sum_sensitivity(agg, bounds=(0, 2 ** 30), length=8, dtype=np.int64,
                                 batched=True, iterations=20)
    assert res.exceeds and res.difference >= 2 * 2 ** 30


def test_an_exact_aggregate_never_exceeds():
    # integer records summed in int64: the sum of a neighbour moves by at most U - L = 10
    def exact_sum(x):
        return int(np.sum(np.clip(np.round(x), 0, 10).astype(np.int64)))

    res = floats.sum_sensitivity(exact_sum, bounds=(0, 10), length=64, dtype=np.int64,
                                 iterations=50)
    assert not res.exceeds and res.verdict.startswith("no pair above")


def test_detect_and_search_certify_the_float32_violation():
    res = sensitivity(lib.get("floats.clamped_sum_f32"), length=8192, n_select=20_000,
                      n_final=50_000, iterations=20, seed=0)
    assert res.exceeds and res.detect.counterexample is not None
    assert res.bound.value > res.claimed_epsilon and res.violation


def test_bad_bounds_get_one_sentence():
    with pytest.raises(ParameterError):
        floats.sum_sensitivity(_seq64, bounds=(1, 0), length=4)
    with pytest.raises(ParameterError):
        floats.sum_sensitivity(_seq64, bounds=(0, 1), length=4, neighbors="swap")
