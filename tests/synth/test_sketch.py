"""Sketches: holes, ⊥, completion into runnable mechanisms, and bad input."""

import numpy as np
import pytest

import privet
from privet.core.errors import PrivetError
from privet.synth import BOTTOM, parse_expr, sketch, synth


@sketch(holes=("t", "q"), neighbors=privet.neighbors.all_differ(1), args={"T": 1.0})
def above(noise, q, *, epsilon, T=1.0):
    t = T + noise.hole("t")
    a = q + noise.hole("q", q.shape)
    return privet.ops.argmax(a > t[:, None], axis=-1)


def test_complete_gives_a_runnable_mechanism():
    mech = above.complete([parse_expr("2/ε"), parse_expr("4/ε")], epsilon=0.5)
    assert isinstance(mech, privet.Mechanism)
    assert mech.epsilon == 0.5 and "2/ε" in mech.name
    out = mech.sample(np.zeros(5), 1000, seed=1)
    assert out.shape == (1000,) and set(np.unique(out)) <= set(range(5))
    # the scale is evaluated at run time: under Replay the draws record scale 2/eps and 4/eps
    rp = privet.Replay(privet.Sampler(0, 3))
    mech.run(rp, np.zeros(5), {"epsilon": 0.25})
    scales = [d.params["scale"] for d, _, _ in rp.tape.entries]
    assert scales == [pytest.approx(8.0), pytest.approx(16.0)]


def test_bottom_hole_adds_no_noise():
    mech = above.complete([BOTTOM, BOTTOM])
    out = mech.sample(np.array([0.0, 2.0, 0.0]), 200, seed=0)
    assert np.all(out == 1)                  # deterministic argmax of [F, T, F]
    rp = privet.Replay(privet.Sampler(0, 3))
    mech.run(rp, np.zeros(3))
    assert len(rp.tape) == 0


def test_complete_from_strings_round_trips():
    m = above.complete_from(("3/ε", "⊥"))
    assert "3/ε, ⊥" in m.name


def test_sketch_without_holes_is_an_error():
    with pytest.raises(PrivetError, match="no holes"):
        @sketch(holes=())
        def nothing(noise, x, *, epsilon):
            return x.sum() + np.zeros(noise.size)


def test_sketch_that_never_uses_its_holes_is_an_error():
    @sketch(holes=("h",))
    def unused(noise, x, *, epsilon):
        return np.broadcast_to(x.sum(), (noise.size,)).astype(float)

    with pytest.raises(PrivetError, match="never draws noise at a hole"):
        synth(unused, tester="internal")


def test_unknown_hole_and_family_are_errors():
    with pytest.raises(PrivetError, match="no hole 'zz'"):
        above.hole_index("zz")
    with pytest.raises(PrivetError, match="unknown noise family"):
        @sketch(holes=("h",), family="cauchy")
        def bad(noise, x, *, epsilon):
            return x


def test_a_mechanism_is_not_a_sketch():
    @privet.mechanism(epsilon=1.0)
    def mech(noise, x, *, epsilon):
        return x.sum() + noise.laplace(1 / epsilon)

    with pytest.raises(PrivetError, match="not a sketch"):
        synth(mech)
