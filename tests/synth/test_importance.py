"""Importance weights: the closed form equals Dist.logpdf, and the weighted estimate matches
the exact probability within a margin derived from its standard error."""

import math

import numpy as np
import pytest

from privet.core.noise import Replay
from privet.synth import sketch
from privet.synth.importance import Importance, effective_sample_size, normalized_weights


@sketch(holes=("a", "b"), family=("laplace", "exponential"), length=3)
def two_holes(noise, x, *, epsilon):
    return x.sum() + noise.hole("a", x.shape).sum(axis=-1) + noise.hole("b")


@sketch(holes=("g",), family="geometric", geometric_bound=4, length=2)
def geo(noise, x, *, epsilon):
    return np.clip(x + noise.hole("g", x.shape), 0, 4)


def _presample(sk, scales_placeholder, m, seed):
    imp = Importance(np.random.default_rng(seed), m)
    out = sk.run(imp, np.ones(sk.length), sk.gamma(), scales_placeholder)
    return imp, out


def test_closed_form_weights_equal_dist_logpdf():
    imp, _ = _presample(two_holes, [4.0, 4.0], 500, 1)
    scales = np.array([[1.0, 2.0], [4.0, 4.0], [7.5, 0.3]])
    assert np.allclose(imp.log_weights(scales), imp.log_weights_generic(scales))
    # the proposal itself has weight 1
    assert np.allclose(imp.log_weights(np.array([[4.0, 4.0]])), 0.0)


def test_censored_geometric_weights_equal_dist_logpdf():
    imp, _ = _presample(geo, [4.0], 400, 2)
    scales = np.array([[0.5], [1.0], [4.0], [9.0]])
    assert np.allclose(imp.log_weights(scales), imp.log_weights_generic(scales))


@pytest.mark.parametrize("c", [1.5, 3.0, 6.0])
def test_weighted_tail_probability_matches_exact(c):
    """P(x + Lap(c) > t) from proposal-4 samples vs the closed form, within 5 standard errors."""

    @sketch(holes=("h",), length=1)
    def one(noise, x, *, epsilon):
        return x[0] + noise.hole("h")

    m, t = 200_000, 2.0
    imp, out = _presample(one, [4.0], m, 3)
    lw = imp.log_weights(np.array([[c]]))
    w = np.exp(lw[0])
    ind = (out > t).astype(float)
    est = np.mean(w * ind)
    exact = 0.5 * math.exp(-(t - 1.0) / c)       # x = 1
    se = np.std(w * ind) / math.sqrt(m)
    assert abs(est - exact) < 5 * se
    assert effective_sample_size(lw)[0] > 0.2 * m


def test_replay_shares_draws_and_weights():
    imp = Importance(np.random.default_rng(5), 1000)
    rp = Replay(imp)
    a = two_holes.run(rp, np.zeros(3), two_holes.gamma(), [4.0, 4.0])
    rp.rewind()
    b = two_holes.run(rp, np.ones(3), two_holes.gamma(), [4.0, 4.0])
    assert np.allclose(b - a, 3.0)            # same noise, input shifted by 3
    assert len(imp.draws) == 2                # only the recording run drew
    w = normalized_weights(imp.log_weights(np.array([[2.0, 1.0]])))
    assert w.shape == (1, 1000) and np.all(w <= 1.0)


def test_bottom_hole_draws_nothing():
    imp = Importance(np.random.default_rng(0), 10)
    out = two_holes.run(imp, np.ones(3), two_holes.gamma(), [4.0, 0.0])
    assert [d.hole for d in imp.draws] == [0]
    assert out.shape == (10,)
