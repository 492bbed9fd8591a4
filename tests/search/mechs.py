"""Small DP-Finder-style mechanisms for the search tests (the library has its own)."""

from __future__ import annotations

import numpy as np

import privet
from privet import ops
from privet.core.mechanism import Domain, Output

SCALE = 20.0


@privet.mechanism(epsilon=0.1, neighbors=privet.neighbors.all_differ(1.0),
                  output=Output.categorical((0, 1), length=4))
def above_threshold(noise, x, *, threshold=0.0):
    """AT of Fig. 2 of DP-Finder: Lap(20) on the threshold and on every entry."""
    rho = noise.laplace(SCALE)
    v = noise.laplace(SCALE, shape=len(x))
    return ops.where(ops.ge(x + v, threshold + rho[:, None]), 1.0, 0.0)


@privet.mechanism(epsilon=0.1, neighbors=privet.neighbors.all_differ(1.0),
                  output=Output.categorical((0, 1), length=4))
def at5(noise, x, *, threshold=0.0):
    """AT5: no noise on the entries -- not private for any epsilon."""
    rho = noise.laplace(SCALE)
    return ops.where(ops.ge(np.broadcast_to(x, (noise.size, len(x))), threshold + rho[:, None]),
                     1.0, 0.0)


@privet.mechanism(epsilon=0.1, neighbors=privet.neighbors.all_differ(1.0),
                  output=Output.categorical((0, 1, 2, 3)))
def noisy_max(noise, x):
    """noisyMax (Fig. 10b): index of the largest x_i + Lap(20)."""
    return ops.argmax(x + noise.laplace(SCALE, shape=len(x)), axis=-1)


@privet.mechanism(epsilon=0.1, neighbors=privet.neighbors.all_differ(1.0),
                  output=Output.categorical((0, 1, 2, 3)))
def noisy_max_numpy(noise, x):
    """noisyMax written with NumPy only (no privet.ops): derivative-free search."""
    return np.argmax(x + noise.laplace(SCALE, shape=len(x)), axis=-1)


@privet.mechanism(epsilon=0.1, neighbors=privet.neighbors.all_differ(1.0),
                  output=Output.categorical((0, 1)))
def leaky(noise, x):
    """Broken: Laplace noise of scale 1 for sensitivity 1 claimed as 0.1-DP (true eps 1)."""
    return ops.where(ops.gt(x[0] + noise.laplace(1.0), 0.0), 1.0, 0.0)


@privet.mechanism(epsilon=0.1, neighbors=privet.neighbors.add_remove(),
                  domain=Domain(length=(1, 10), low=-1, high=1))
def noisy_sum(noise, x):
    """sum: Lap(10) added to the sum of entries in [-1, 1]; neighbors add or remove one."""
    return np.sum(x) + noise.laplace(10.0)


@privet.mechanism(epsilon=0.5, neighbors=privet.neighbors.all_differ(1.0),
                  domain=Domain(length=1, integer=True, low=0, high=4),
                  output=Output.categorical((0, 1, 2, 3, 4)))
def geometric(noise, x):
    """Truncated geometric on {0..4}, alpha = e^-0.5: exactly 0.5-DP, and enumerable."""
    return np.clip(x[0] + noise.truncated_geometric(np.exp(-0.5), 4), 0, 4)


@privet.mechanism(epsilon=0.1, neighbors=privet.neighbors.all_differ(1.0))
def shape_shifter(noise, x):
    """The number of draws depends on the input (Lap(1) against the sum of two): not
    0.1-DP, the ratio of the two densities grows without bound in the tails."""
    k = 1 + int(x[0] > 0)
    return noise.laplace(1.0, shape=k).sum(axis=1)


EM_DOMAIN = Domain(length=3, integer=True, low=0, high=2)


@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1.0), domain=EM_DOMAIN,
                  output=Output.categorical((0, 1, 2)))
def exp_mech(noise, x, *, epsilon, half=True):
    """The exponential mechanism over three candidates of utilities x (sensitivity 1): its
    draw's probabilities depend on the input. ε-DP with ``half`` (weights e^{ε u / 2}), 2ε
    without."""
    w = np.exp((epsilon / 2 if half else epsilon) * np.asarray(x, float))
    return noise.discrete([0, 1, 2], w / w.sum())


@privet.mechanism(epsilon=float(np.log(3.0)), neighbors=privet.neighbors.all_differ(1.0),
                  domain=Domain(length=1, integer=True, low=0, high=1),
                  output=Output.categorical((0, 1)))
def hidden_coin(noise, x):
    """Randomized response whose coin comes from np.random, not from noise: invisible to
    privet's interpreters."""
    flip = (np.random.random(noise.size) < 0.25).astype(np.int64)
    return (np.asarray(x, np.int64)[0] + flip) % 2
