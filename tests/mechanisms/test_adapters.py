"""Foreign signatures wrapped around library mechanisms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency

import privet
import privet.mechanisms as lib
from privet.core.errors import UnsupportedError
from privet.core.noise import Replay, Sampler


def statdp_noisy_max(prng, queries, epsilon):
    """StatDP's own calling convention (one output per call, NumPy generator)."""
    noisy = np.asarray(queries, dtype=float) + prng.laplace(scale=2.0 / epsilon,
                                                            size=len(queries))
    return int(np.argmax(noisy))


def sniper_noisy_max(a, n_samples, rng):
    """DP-Sniper's vectorized convention m(a, n_samples)."""
    a = np.asarray(a, dtype=float)
    return np.argmax(a + rng.laplace(scale=2.0 / 0.7, size=(n_samples, len(a))), axis=1)


def test_statdp_adapter_has_the_native_distribution():
    """Two-sample chi-square test of the wrapped StatDP function against the library's
    NoisyMax at fixed seeds. Under the null (same distribution) p is uniform, so
    'p > 1e-3' fails by chance with probability 1e-3 -- and these seeds are fixed."""
    native = lib.get("statdp.noisy_max_v1a")
    wrapped = privet.from_statdp(statdp_noisy_max, epsilon=native.epsilon,
                                 neighbors=native.neighbors, domain=native.domain,
                                 output=native.output)
    x = [1.0, 2.0, 0.0, 1.0, 3.0]
    n = 6000
    a = np.bincount(native.sample(x, n, seed=1), minlength=5)
    b = np.bincount(wrapped.sample(x, n, seed=2).astype(int), minlength=5)
    _, p, _, _ = chi2_contingency(np.vstack([a, b]))
    assert p > 1e-3
    # and the test has power: a different epsilon is rejected
    other = np.bincount(native.replace(epsilon=3.0).sample(x, n, seed=3), minlength=5)
    _, p_other, _, _ = chi2_contingency(np.vstack([a, other]))
    assert p_other < 1e-6
    with pytest.raises(UnsupportedError):
        wrapped.run(Replay(Sampler(0, 3)), x)


def test_vectorized_and_blackbox_adapters_wrap_and_run():
    v = privet.from_vectorized(sniper_noisy_max, epsilon=0.7, name="sniper_noisy_max")
    out = v.sample([1.0, 1.0, 5.0], 4000, seed=1)
    assert out.shape == (4000,) and set(np.unique(out)) <= {0, 1, 2}
    assert np.mean(out == 2) > 0.6  # the large query wins most of the time
    assert np.array_equal(out, v.sample([1.0, 1.0, 5.0], 4000, seed=1))

    svt = lib.get("statdp.svt")

    def box(x, rng):  # any callable, e.g. another library's SVT, one output per call
        return svt.run(Sampler(rng, 1), x)[0]

    b = privet.from_blackbox(box, epsilon=svt.epsilon, name="svt_box")
    rows = b.sample([1.0, 1.0, 1.0, 5.0], 500, seed=4, chunk=500)
    assert rows.shape == (500, 4)
    assert set(np.unique(rows)) <= {0.0, 1.0, privet.ABORTED}
    with pytest.raises(UnsupportedError):
        b.require("enumerate", "privet.exact")
