"""The tail walk after SLSQP, the projected certificate that drives it, and the contrast
event that starts half of the search's iterations (privet.search, DP-Finder Sec. 5)."""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats

from privet.core.events import Singleton
from privet.search import _contrast_event, _projector
from privet.search.estimate import hard_checks, record
from privet.search.optimize import tail_walk
from privet.search.space import Space

from . import mechs


def _p_argmax(x, i: int, scale: float = mechs.SCALE) -> float:
    """P[argmax_j (x_j + Lap(scale)) = i] by 1-D integration over the winner's noisy value."""
    x = np.asarray(x, dtype=float)

    def density(t):
        others = np.prod([stats.laplace.cdf(t - x[j], scale=scale)
                          for j in range(len(x)) if j != i])
        return stats.laplace.pdf(t - x[i], scale=scale) * others

    cuts = [-np.inf, *sorted(set(x.tolist())), np.inf]
    return sum(integrate.quad(density, a, b, limit=200)[0] for a, b in zip(cuts, cuts[1:]))


def _true_eps(x, x2, i: int) -> float:
    return math.log(_p_argmax(x, i) / _p_argmax(x2, i))


def test_shift_keeps_the_pair_neighbors():
    space = Space.of(mechs.noisy_max, np.zeros(4), np.array([-1.0, 1, 1, 1]))
    z = space.pack(np.zeros(4), np.array([-1.0, 1, 1, 1]))
    moved = space.shift(z, np.array([-5.0, 2, 3, 4]))
    x, x2 = space.unpack(moved)
    np.testing.assert_allclose(x2 - x, [-1.0, 1, 1, 1])
    np.testing.assert_allclose(x, [-5.0, 2, 3, 4])


def test_tail_walk_moves_noisy_max_toward_its_true_epsilon():
    # noisyMax with Lap(20): at x = 0, x' = (-1, 1, 1, 1) and Phi = {0} the exact violation
    # is 0.0887; it approaches 0.1 only as P[Phi | x] shrinks (0.096 at P ~ 0.16, 0.0985 at
    # P ~ 0.1): the walk must get past that, staying neighbors and above p_min
    mech = mechs.noisy_max
    x0, x20 = np.zeros(4), np.array([-1.0, 1, 1, 1])
    event = Singleton((0.0,))
    space = Space.of(mech, x0, x20)
    n = 1 << 16
    tape, _ = record(mech, x0, n, np.random.default_rng(3))
    score = _projector({"n_confirm": None, "confidence": 0.9})
    z, value, _ = tail_walk(mech, space, space.pack(x0, x20), event, tape, n, score,
                            p_min=1e-2, accept=mech.neighbors.are_neighbors)
    x, x2 = space.unpack(z)
    assert mech.neighbors.are_neighbors(x, x2)
    assert np.mean(hard_checks(mech, tape, n, x, event)) >= 1e-2
    start = _true_eps(x0, x20, 0)
    assert abs(start - 0.0887) < 1e-3
    assert _true_eps(x, x2, 0) > 0.096 > start
    assert value > 0.09  # the projected certificate at the walk's end


def test_projected_certificate_is_zero_without_a_gap_and_grows_with_it():
    score = _projector({"n_confirm": None, "confidence": 0.9})
    n = 100_000
    # identical indicators: no evidence of a gap, only the upper bound on the reverse one
    assert score(5_000, 0, 0, n) <= 0.0
    small = score(5_000, 300, 0, n)
    large = score(5_000, 600, 0, n)
    assert 0 < small < math.log(5_300 / 5_000)  # a lower bound, below the plug-in ratio
    assert small < large < math.log(5_600 / 5_000)


def test_contrast_event_finds_an_impossible_output_of_at5():
    # x orders entries 0 and 1 one way, x' the other way: the output (0, 1, 0, 1) [entry 1
    # above the noisy threshold, entry 0 below] happens under x only, (1, 0, 0, 1) under x'
    # only; the contrast event must be one of those, never all-0 / all-1
    mech = mechs.at5
    x = np.array([0.0, 0.6, -5.0, 5.0])
    x2 = np.array([1.0, -0.4, -5.0, 5.0])
    event = _contrast_event(mech, x, x2, np.random.default_rng(0), None)
    assert isinstance(event, Singleton)
    assert event.value in ((0.0, 1.0, 0.0, 1.0), (1.0, 0.0, 0.0, 1.0))
