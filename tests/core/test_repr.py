"""Results print like scipy.stats results: a one-line repr of named figures, a sentence as
str, the full table from summary() (issue 16, item 4)."""

from fractions import Fraction

import pytest

import privet
from privet import mechanisms
from privet.core.results import (
    AccuracyBound,
    Bound,
    Counterexample,
    ExactBound,
    PufferfishVerdict,
    from_json,
    to_json,
)


@pytest.fixture(scope="module")
def det():
    return privet.detect(mechanisms.get("statdp.noisy_max_v1b"), n_select=5_000,
                         n_final=20_000, seed=1)


def test_detect_result_repr_is_one_short_line_of_named_figures(det):
    r = repr(det)
    assert "\n" not in r and len(r) < 200          # was 11,251 characters
    assert r.startswith("DetectResult(verdict='violation found', p_value=")
    assert "test_epsilon=0.7, D1=[1, 1, 1, 1, 1], D2=[2, 2, 2, 2, 2], E='" in r
    assert "ω[0] ≤" in r   # the event (which interval depends on the sequential selection)
    s = str(det)
    assert s.startswith("violation found: P[M(D1) ∈ E] = ") and f"seed {det.seed}" in s
    assert "counterexample" in det.summary() and "p-value" in det.summary()


def test_every_result_type_has_a_short_repr_and_a_sentence(det):
    cx = Counterexample("m", (1.0, 1.0), (2.0, 1.0), {}, "ω[0] ≤ 1", counts=(9, 1),
                        n=(10, 10), p_value=0.0)
    assert cx.d1 == (1, 1) and isinstance(cx.d1[0], int)   # integers stay integers
    assert repr(cx) == ("Counterexample(D1=[1, 1], D2=[2, 1], E='ω[0] ≤ 1', counts=[9, 1], "
                        "n=[10, 10], p_value=<1e-300)")
    objs = [
        cx, det.counterexample,
        Bound("m", 0.148, 0.9, "dpfinder", claimed_epsilon=0.1),
        ExactBound("m", 1.386, Fraction(4), ((0, 0), (0, 1), (0, 1)), "4 inputs",
                   claimed_epsilon=0.7),
        AccuracyBound("m", 1.0, Fraction(112, 125), (0, 0, 0)),
        PufferfishVerdict("ex3", "violated", 1, 0.693, "ln(2)", counterexample=("~0",),
                          pair=("nc", "c"), parameters={"p": Fraction(1, 2)}),
    ]
    for obj in objs:
        r, s = repr(obj), str(obj)
        assert "\n" not in r and len(r) < 200, r
        assert r.startswith(type(obj).__name__ + "(")
        assert s and "\n" not in s and "(" != s[0]
        assert repr(from_json(to_json(obj))) == r      # the repr survives the round trip
    assert str(objs[3]) == "m: violation (exact): exact ε = 1.386 > claimed 0.7"
    assert str(objs[5]) == ("ex3: violation (exact): observation sequence ~0 under secrets nc vs c "
                            "at p = 1/2")
    assert "verdict" in objs[3].summary()


def test_numbers_above_a_claim_print_with_the_digits_that_show_it():
    # "violation (exact): exact ε = 1.099 > claimed 1.099" read as a contradiction
    from privet.core.text import fmt_apart

    assert fmt_apart(1.000178, 1.0) == ("1.0002", "1")
    a, b = fmt_apart(1.0986123, 1.0986122887)
    assert a != b and float(a) > float(b)
    assert fmt_apart(0.5, 0.5) == ("0.5", "0.5")
    assert fmt_apart(2.5, 1) == ("2.5", "1")
