"""Mechanisms whose randomness is not fresh (a generator seeded inside, answers cached
between calls) are refused: their samples would repeat the same draws."""

import math

import numpy as np
import pytest

import privet
from privet.core.errors import MechanismError
from privet.core.randomness import PROBE_ROWS, VARYING_ROWS, _varies, check_noise_only


def test_two_fresh_runs_that_vary_agree_by_chance_below_the_stated_rate():
    # two independent runs of n rows over two values (probabilities p and 1 - p) agree row
    # for row with at least VARYING_ROWS rows of the rarer value with this probability
    def agree(n, p):
        q = 1 - p
        return sum(math.comb(n, k) * (p * p) ** (n - k) * (q * q) ** k
                   for k in range(VARYING_ROWS, n + 1))
    worst = max(agree(PROBE_ROWS // 4, p) for p in np.linspace(0.5, 0.999, 500))
    assert worst < 4e-5  # the rates _varies states
    assert max(agree(PROBE_ROWS, p) for p in np.linspace(0.5, 0.999, 500)) < 7e-8


def test_varying_means_rows_unlike_the_commonest():
    assert not _varies(np.zeros(64))                    # no randomness: every sample alike
    a = np.zeros(64)
    a[:VARYING_ROWS - 1] = 1
    assert not _varies(a)
    a[:VARYING_ROWS] = 1
    assert _varies(a) and _varies(np.arange(32.0).reshape(16, 2))


def _cached_box():
    cache, rng = {}, np.random.default_rng(7)

    def m(a, n):
        key = float(np.asarray(a).ravel()[0])
        if key not in cache or len(cache[key]) < n:
            cache[key] = key + rng.laplace(0, 1, max(n, 1 << 12))
        return cache[key][:n].copy()
    return privet.from_vectorized(m, epsilon=1.0, domain=privet.Domain(length=1, low=0,
                                                                       high=10, integer=True))


def test_a_box_that_caches_its_answers_is_refused_before_it_is_certified():
    # it used to be certified eps >= 8.5 (true 1): the cached answers counted as fresh
    for run in (lambda m: privet.search(m, seed=1, seconds=3),
                lambda m: privet.detect(m, seed=1, n_select=2000, n_final=2000)):
        with pytest.raises(MechanismError, match="same varying outputs for two different "
                                                 "seeds .* not fresh"):
            run(_cached_box())


def test_fresh_and_deterministic_mechanisms_pass():
    def fresh(a, n):
        return np.asarray(a, float)[0] + np.random.default_rng().laplace(0, 1, n)

    def constant(a, n):
        return np.full(n, float(np.asarray(a).ravel()[0]))
    for f in (fresh, constant):
        check_noise_only(privet.from_vectorized(f, epsilon=1.0,
                                                domain=privet.Domain(length=1)))

    @privet.mechanism(epsilon=1.0)
    def seeded_inside(noise, x):
        u = noise.uniform(0, 1, shape=x.shape)
        return x + (np.random.default_rng(42).random(u.shape) < 0.25)
    with pytest.raises(MechanismError, match="randomness from privet's noise object"):
        check_noise_only(seeded_inside)


def test_a_box_the_seed_does_not_replay_is_run_and_says_so():
    """A mechanism drawing from ``np.random.default_rng()`` without a seed (the modern NumPy
    idiom) gives fresh samples, so it is tested, but the run's seed cannot replay it: the
    result says so, where a box on the generator privet passes (or NumPy's global one, which
    privet seeds) gets no such note."""
    from privet.core.randomness import UNSEEDED
    from privet.report.detect import render

    def unseeded(a, n):
        return np.asarray(a, float)[0] + np.random.default_rng().laplace(0, 1, n)

    def on_rng(a, n, rng):
        return np.asarray(a, float)[0] + rng.laplace(0, 1, n)

    def on_global(a, n):
        return np.asarray(a, float)[0] + np.random.laplace(0, 1, n)
    dom = privet.Domain(length=1, low=0, high=10)
    box = privet.from_vectorized(unseeded, epsilon=1.0, domain=dom)
    assert check_noise_only(box) == [UNSEEDED.format(name="unseeded")]
    for f in (on_rng, on_global):
        assert check_noise_only(privet.from_vectorized(f, epsilon=1.0, domain=dom)) == []
    r = privet.detect(box, seed=1, n_select=2000, n_final=2000, inputs=[([0.0], [1.0])],
                      executor="inprocess")
    assert r.details["notes"][0] == UNSEEDED.format(name="unseeded")
    from rich.console import Console

    con = Console(width=200, record=True)
    con.print(render(r))
    assert "the seed does not replay 'unseeded'" in con.export_text()
    from privet.report.html import to_html

    assert "<p class='note'>note: the seed does not replay" in to_html(r)
