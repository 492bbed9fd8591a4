"""Float-exact feature maps of the classifier attacks (attacks.features.BitView, scores.Bits):
the codes, their events, when they apply, and detect/search on a black-box float Laplace.

Why the black-box float Laplace ``x + Lap(1)`` must fail at every claimed ε, with D1 = [0],
D2 = [1] (Mironov, CCS 2012, Sec. 3): every output of D2 is a multiple of 2^-53. If
|V| >= 1/2, V is a multiple of 2^-53 (its ulp is at least 2^-53), so is 1 + V, which is
then exact or rounds to a coarser grid; if |V| < 1/2, 1 + V lies in (1/2, 3/2) and rounds
to the 2^-53 grid. So P[granularity(M(D2)) < -53] = 0 exactly. Under D1 the output is V
itself: V in [1/4, 1/2) has ulp 2^-54 and is an odd multiple of it about half the time,
and finer V are finer still, so P[granularity(M(D1)) < -53] is about P[|V| < 1/2] minus a
small share, 1 - e^-1/2 = 0.39 at most (the benchmark measures 0.27).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import privet
from privet.attacks import Threshold
from privet.attacks.features import (
    BitView,
    bit_views,
    check_bit_features,
    fractional_doubles,
    input_lattice,
)
from privet.attacks.scores import Bits, Table
from privet.core.errors import ParameterError
from privet.core.events import from_spec
from privet.core.neighbors import all_differ


def float_laplace(a, n, rng=None):
    """The textbook float Laplace as a user writes it: no privet noise API."""
    return float(a[0]) + rng.laplace(0.0, 1.0, size=n)


def integer_laplace(a, n, rng=None):
    """A discrete mechanism: x + two-sided geometric (integers, as doubles)."""
    return float(a[0]) + (rng.geometric(1 - math.exp(-1.0), n)
                          - rng.geometric(1 - math.exp(-1.0), n)).astype(float)


def box(fn, epsilon=1.0, integer=False):
    return privet.from_vectorized(fn, epsilon=epsilon, neighbors=all_differ(1),
                                  domain=privet.Domain(length=1, low=-10, high=10,
                                                       integer=integer))


def test_codes_read_the_bits_and_keep_sentinels():
    v = np.array([0.375, 1.0 + 2.0**-52, 2.0**-1074, 0.0, np.inf, -0.75])
    g = BitView("granularity").codes(v).ravel()
    # 0.375 = 3·2^-3; 1 + 2^-52 = odd·2^-52; the smallest subnormal 2^-1074; 0.0 lies on every
    # lattice (the cap); infinities stay themselves (privet's ABORTED is a flag, not a code)
    assert g.tolist() == [-3.0, -52.0, -1074.0, 1100.0, np.inf, -2.0]
    assert BitView("trailing_zeros").codes(np.array([1.0, 1.5, 0.75 + 2.0**-53])).ravel()\
        .tolist() == [52.0, 51.0, 0.0]
    assert BitView("low_bits", k=2).codes(np.array([1.0 + 3 * 2.0**-52])).ravel().tolist() \
        == [3.0]
    r = BitView("residue", lattice=0.5, bins=4).codes(np.array([1.0, 0.625, 0.875])).ravel()
    assert r.tolist() == [0.0, 2.0, 4.0]
    two = BitView("granularity").codes(np.array([[0.5, 3.0], [0.25, 1.0]]))
    assert two.tolist() == [[-1.0, 0.0], [-2.0, 0.0]]


def test_views_apply_to_fractional_doubles_only_and_check_their_names():
    frac, ints = np.array([0.5, 2.0]), np.array([1.0, -3.0])
    assert fractional_doubles(frac) and not fractional_doubles(ints)
    assert not fractional_doubles(np.array([1, 2]))  # integer dtype
    assert bit_views("auto", ints, ints, [0.0], [1.0]) == ()
    views = bit_views("auto", frac, ints, [0.0], [1.0])
    assert [v.feature for v in views] == ["granularity", "low_bits", "residue"]
    assert [v.feature for v in bit_views("trailing_zeros,residue", ints, ints, [0.5], [1.0])] \
        == ["trailing_zeros", "residue"]
    assert bit_views("off", frac, frac, [0.0], [1.0]) == ()
    assert input_lattice([0.0], [1.0]) == 1.0 and input_lattice([0.5, 3.0], [1.5, 3.0]) == 0.5
    assert input_lattice([0.0], [0.0]) == 1.0 and input_lattice([4.0], [8.0]) == 4.0
    with pytest.raises(ParameterError, match="granularity"):
        check_bit_features("mantissa")


def test_a_score_on_a_view_is_an_event_that_serializes_and_describes_itself():
    view = BitView("granularity")
    table = Table(((-54.0,), (-55.0,), (-52.0,)), (5.0, 4.0, -1.0))
    event = Threshold(Bits(view, table), 3.0, 1.0)
    assert event.describe() == "granularity(ω) ∈ {-54, -55}"
    out = np.array([0.375 + 2.0**-54, 0.125 + 2.0**-55, 1.0 + 2.0**-52, 0.5])
    assert event.contains(out).tolist() == [True, True, False, False]
    back = from_spec(event.spec())
    assert back.contains(out).tolist() == event.contains(out).tolist()
    assert back.describe() == event.describe()
    neg = Threshold(Bits(view, table).negated(), -3.0, 0.0)
    assert neg.contains(out).tolist() == [False, False, True, True]
    assert neg.describe() == "granularity(ω) ∉ {-54, -55}"  # scores below 3: the rest


def test_detect_finds_the_porous_black_box_only_with_the_float_features():
    mech = box(float_laplace)
    kw = dict(inputs=[([0.0], [1.0])], n_select=4_000, n_final=20_000, seed=3,
              sequential=False)
    # the event is (nearly) impossible under D2: about 5,400 of 20,000 against at most a few
    # dozen (p-values below 1e-300 still rank, so a union of granularities seen a few times
    # under D2 and far more under D1 can beat the impossible ones alone), where a 1-DP
    # mechanism would give at least e^-1 x 5,400, about 2,000 (sd ~45)
    res = privet.detect(mech, **kw)
    cx = res.counterexample
    assert res.violation and cx is not None
    assert cx.counts[0] > 2_000 and cx.counts[1] < 0.01 * cx.counts[0]
    assert "(ω" in cx.event and cx.details["family"] == "classifier attack"
    assert "in floating point" in res.verdict and "--float-features off" in res.verdict
    # the same budget on the real-number features alone: the mechanism is 1-DP over the reals
    off = privet.detect(mech, float_features="off", **kw)
    assert not off.violation


def test_no_float_feature_is_used_on_a_discrete_black_box():
    # integer inputs and outputs: "auto" gives no view, and the forced views cannot invent a
    # violation of a mechanism that is 1-DP exactly (each view is post-processing of the
    # exact value); the final test's level bounds a false alarm by alpha = 0.05 per call.
    # (Fractional inputs would be another matter: fl(5.681 + 2) need not be the double
    # fl(6.681 + 1), so the outputs of neighbours can differ in their last bits.)
    mech = box(integer_laplace, integer=True)
    for which in ("auto", "all"):
        res = privet.detect(mech, inputs=[([0.0], [1.0])], n_select=4_000, n_final=20_000,
                            seed=4, sequential=False, float_features=which)
        assert not res.violation, which


def test_search_certifies_a_finite_bound_above_the_claim():
    mech = box(float_laplace)
    b = privet.search(mech, seed=5, iterations=2, n_confirm=1 << 16, n_cap=1 << 12,
                      n_select=1 << 14, finalists=2)
    # with k1 about 0.27·2^16 = 17,700 and k2 = 0 of 2^16, Clopper-Pearson at 90% gives
    # P1 >= 0.26 and P2 <= -ln(0.05)/2^16 = 4.6e-5: a bound near ln(5,600) = 8.6, far above 2
    assert math.isfinite(b.value) and b.value > 2.0
    assert b.violates and b.confidence == 0.9
    assert "(ω" in b.witness.event and "in floating point" in b.details["verdict"]


def test_the_command_line_names_the_flag_of_an_unknown_feature(capsys):
    from privet.cli import main

    assert main(["detect", "floats.laplace", "--float-features", "mantissa"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--float-features" in err and "granularity" in err and err.count("\n") == 0
