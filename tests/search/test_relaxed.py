"""The Relaxed(c) interpreter and the soft ops backend (Fig. 8 of DP-Finder)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privet
from privet import ops
from privet.core.events import Singleton
from privet.core.noise import Replay, Sampler
from privet.search import Relaxed, SoftOps, soft_contains
from privet.search.relaxed import uses_ops
from privet.search.space import PointBox

from . import mechs


def test_soft_rules_of_fig8():
    s = SoftOps(50.0)
    assert s.le(0.0, 0.1) == pytest.approx(1 / (1 + math.exp(-5.0)))
    assert s.ge(0.1, 0.0) == pytest.approx(1 / (1 + math.exp(-5.0)))
    assert s.eq(1.0, 1.01) == pytest.approx(math.exp(-(50 ** 2) * 0.01 ** 2))
    assert s.ne(1.0, 1.0) == pytest.approx(0.0)
    assert s.logical_and(0.5, 0.4) == pytest.approx(0.2)
    assert s.logical_or(0.5, 0.4) == pytest.approx(0.7)
    assert s.logical_not(0.3) == pytest.approx(0.7)
    assert s.where(0.25, 4.0, 0.0) == pytest.approx(1.0)


def test_soft_selections():
    s = SoftOps(50.0)
    x = np.array([[0.0, 5.0, 1.0], [2.0, 2.0, -9.0]])
    assert s.argmax(x) == pytest.approx([1.0, 0.5])
    assert s.max(x) == pytest.approx([5.0, 2.0])
    assert s.argmin(x) == pytest.approx([0.0, 2.0])
    # infinite sentinels stay hard
    assert s.where(np.array([0.9, 0.1]), np.array([-np.inf, 1.0]), 2.0).tolist() == \
        [-np.inf, pytest.approx(1.9)]


def test_relaxed_replays_the_tape_with_soft_semantics():
    rec = Replay(Sampler(0, 5000))
    x = np.array([0.0, 1.0, 2.0, 3.0])
    hard = mechs.above_threshold.run(rec, x)
    soft = mechs.above_threshold.run(Relaxed(50.0, Replay(rec.tape)), x)
    assert soft.shape == hard.shape
    assert np.all((soft >= 0) & (soft <= 1))
    # same noise: soft outputs round to the hard ones except within ~1/c of a threshold
    assert np.mean(np.round(soft) == hard) > 0.99
    sharp = mechs.above_threshold.run(Relaxed(1e6, Replay(rec.tape)), x)
    assert np.array_equal(np.round(sharp), hard)


def test_relaxed_with_other_c_registers_its_backend():
    noise = Relaxed(5.0, rng=1, size=10)
    assert noise.semantics != "soft"
    with ops.semantics(noise.semantics):
        assert ops.gt(1.0, 0.0) == pytest.approx(1 / (1 + math.exp(-5.0)))


def test_uses_ops_tells_ops_mechanisms_apart():
    x = np.zeros(4)
    assert uses_ops(lambda: mechs.noisy_max.run(Relaxed(rng=0, size=3), x))
    assert not uses_ops(lambda: mechs.noisy_max_numpy.run(Relaxed(rng=0, size=3), x))


def test_soft_contains_on_hard_outputs_is_the_indicator():
    out = np.array([[0, 1], [1, 1], [0, 0]], dtype=float)
    assert soft_contains(Singleton((0.0, 1.0)), out) == pytest.approx([1, 0, 0])
    box = PointBox((-0.5, 0.5), (0.5, 1.5))
    assert soft_contains(box, out) == pytest.approx([1, 0, 0], abs=1e-6)
    assert box.contains(out).tolist() == [True, False, False]
    pinned = PointBox((-np.inf, 0.0), (-np.inf, 1.0))
    assert pinned.contains(np.array([[-np.inf, 0.5], [0.0, 0.5]])).tolist() == [True, False]


def test_surrogate_is_smooth_where_the_estimate_is_a_staircase():
    from privet.search.estimate import hard_checks, record, soft_probability

    ev = Singleton((0.0, 0.0, 0.0, 0.0))
    n = 2000
    tape, _ = record(mechs.above_threshold, np.zeros(4), n, np.random.default_rng(2))
    grid = np.linspace(0.0, 0.04, 21)
    soft = [soft_probability(mechs.above_threshold, tape, n, np.full(4, g), ev) for g in grid]
    hard = [hard_checks(mechs.above_threshold, tape, n, np.full(4, g), ev).mean()
            for g in grid]
    # the soft curve moves at every step; the hard one only where a sample crosses
    assert np.count_nonzero(np.diff(soft)) == len(grid) - 1
    assert np.count_nonzero(np.diff(hard)) < len(grid) - 1
    assert privet.search is not None
