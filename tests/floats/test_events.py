"""Feature views for black boxes and the exact event, through detect."""

from __future__ import annotations

import numpy as np
import pytest

import privet
import privet.mechanisms as lib
from privet import floats
from privet.core.errors import ParameterError


def test_feature_codes():
    v = np.array([1.0, 1.5, 3 * 2.0 ** -60])
    assert floats.feature_codes(v, "trailing_zeros").tolist() == [52, 51, 51]
    assert floats.feature_codes(v, "granularity").tolist() == [0, -1, -60]
    assert floats.feature_codes(v, "low_bits", k=2).tolist() == [0, 0, 0]
    assert floats.feature_codes(np.array([0.5, 0.75]), "residue", lattice=0.5, bins=4
                                ).tolist() == [0, 3]


def test_the_granularity_view_catches_the_textbook_laplace_as_a_black_box():
    # near 0, x = 1 + noise lies on the 2^-53 grid, x = 0 + noise below it (Mironov)
    view = floats.view(lib.get("floats.laplace"), "granularity")
    assert not view.supports("replay")  # the view is sampled only
    res = privet.detect(view, inputs=[([0.0], [1.0]), ([1.0], [0.0])], n_select=10_000,
                        n_final=20_000, seed=0)
    assert res.counterexample is not None and res.p_value < 1e-6


def test_the_unreachable_event_is_empty_under_d1():
    mech = lib.get("floats.laplace")
    event = floats.Unreachable(mech, (0.0,))
    out0 = mech.sample([0.0], 2000, seed=1)
    out1 = mech.sample([1.0], 2000, seed=1)
    assert event.occurrences(out0) == 0 and event.occurrences(out1) > 1000
    assert "cannot output" in event.describe() and event.spec()["kind"] == "unreachable"


def test_unknown_features_are_one_sentence():
    with pytest.raises(ParameterError):
        floats.view(lib.get("floats.laplace"), "mantissa")


def test_timed_black_boxes_append_their_duration():
    # structure only: timings depend on the machine, so no test asserts on their values
    mech = floats.timed(lambda x, rng=None: float(x[0]) + rng.laplace(), epsilon=1.0)
    out = mech.sample([0.0], 5, seed=0)
    assert out.shape == (5, 2) and np.all(out[:, 1] >= 0) and np.all(out[:, 1] % 1 == 0)
    alone = floats.timed(lambda x, rng=None: 0.0, with_output=False).sample([0.0], 3, seed=0)
    assert alone.shape == (3,)
