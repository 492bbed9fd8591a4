"""The 11 StatDP benchmark algorithms (Algorithms 5-15 of Ding et al.), written natively.

A fallback for the detect tests and benchmark while ``privet.mechanisms`` is not there (or
to cross-check it). SVT outputs: 1 = True, 0 = False, ABORTED after the N-th True; iSVT4
outputs the noisy answer instead of True and FALSE for False.
"""

from __future__ import annotations

import numpy as np

import privet
from privet import ops
from privet.core.mechanism import ABORTED, FALSE, Output

ALL = privet.neighbors.all_differ(1.0)
ONE = privet.neighbors.one_differs(1.0)
INDEX = Output("categorical", None, True, None)
SVT_OUT = Output.categorical((0, 1), sentinels=("ABORTED",), variable=True)
MIXED = Output.numeric(sentinels=("FALSE", "ABORTED"), variable=True)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=INDEX, true_epsilon=0.7)
def noisy_max_v1a(noise, q, *, epsilon):
    """Algorithm 5: argmax of Lap(2/eps) noisy answers (correct)."""
    return ops.argmax(q + noise.laplace(2 / epsilon, q.shape), axis=-1)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=Output.numeric())
def noisy_max_v1b(noise, q, *, epsilon):
    """Algorithm 7: max value of Lap(2/eps) noisy answers (incorrect)."""
    return ops.max(q + noise.laplace(2 / epsilon, q.shape), axis=-1)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=INDEX, true_epsilon=0.7)
def noisy_max_v2a(noise, q, *, epsilon):
    """Algorithm 6: argmax of Exp(2/eps) noisy answers (correct)."""
    return ops.argmax(q + noise.exponential(2 / epsilon, q.shape), axis=-1)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=Output.numeric())
def noisy_max_v2b(noise, q, *, epsilon):
    """Algorithm 8: max value of Exp(2/eps) noisy answers (incorrect)."""
    return ops.max(q + noise.exponential(2 / epsilon, q.shape), axis=-1)


@privet.mechanism(epsilon=0.7, neighbors=ONE, output=Output.numeric(), true_epsilon=0.7)
def histogram(noise, q, *, epsilon):
    """Algorithm 9: Lap(1/eps) added to every bin (correct)."""
    return q + noise.laplace(1 / epsilon, q.shape)


@privet.mechanism(epsilon=0.7, neighbors=ONE, output=Output.numeric())
def histogram_eps(noise, q, *, epsilon):
    """Algorithm 10: Lap(eps) added to every bin (incorrect: 1/eps-DP)."""
    return q + noise.laplace(epsilon, q.shape)


def _svt_core(noise, q, epsilon, T, N, t_scale, q_scale, bounded=True, value=False):
    t_noisy = T + noise.laplace(t_scale, ())
    noisy = q + (noise.laplace(q_scale, q.shape) if q_scale else 0.0 * q)
    above = ops.ge(noisy, t_noisy[:, None] if np.ndim(t_noisy) else t_noisy)
    hits = ops.where(above, 1, 0)
    if bounded:
        before = ops.cumsum(hits, axis=-1) - hits
        alive = ops.lt(before, N)
    else:
        alive = np.ones(np.shape(hits), dtype=bool)
    shown = ops.where(above, noisy, FALSE) if value else hits
    return ops.where(alive, shown, ABORTED)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=SVT_OUT, args={"T": 1.0, "N": 1},
                  arg_ranges={"T": (-5.0, 10.0), "N": (1, 5)}, noise_args=("N",),
                  true_epsilon=0.7)
def svt(noise, q, *, epsilon, T=1.0, N=1):
    """Algorithm 11: SVT of Lyu et al. (correct)."""
    return _svt_core(noise, q, epsilon, T, N, 2 / epsilon, 2 * N / epsilon)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=SVT_OUT, args={"T": 1.0},
                  arg_ranges={"T": (-5.0, 10.0)})
def isvt1(noise, q, *, epsilon, T=1.0):
    """Algorithm 12: no query noise, no bound on Trues (not private)."""
    return _svt_core(noise, q, epsilon, T, 0, 1 / epsilon, 0, bounded=False)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=SVT_OUT, args={"T": 1.0},
                  arg_ranges={"T": (-5.0, 10.0)})
def isvt2(noise, q, *, epsilon, T=1.0):
    """Algorithm 14: no bound on Trues (not private)."""
    return _svt_core(noise, q, epsilon, T, 0, 2 / epsilon, 2 / epsilon, bounded=False)


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=SVT_OUT, args={"T": 1.0, "N": 1},
                  arg_ranges={"T": (-5.0, 10.0), "N": (1, 5)}, noise_args=("N",))
def isvt3(noise, q, *, epsilon, T=1.0, N=1):
    """Algorithm 13: query noise does not scale with N ((1+6N)/4 eps)."""
    return _svt_core(noise, q, epsilon, T, N, 4 / epsilon, 4 / (3 * epsilon))


@privet.mechanism(epsilon=0.7, neighbors=ALL, output=MIXED, args={"T": 1.0, "N": 1},
                  arg_ranges={"T": (-5.0, 10.0), "N": (1, 5)}, noise_args=("N",))
def isvt4(noise, q, *, epsilon, T=1.0, N=1):
    """Algorithm 15: outputs the noisy answer when above the threshold (not private)."""
    return _svt_core(noise, q, epsilon, T, N, 2 / epsilon, 2 * N / epsilon, value=True)


MECHANISMS = {
    "statdp.noisy_max_v1a": noisy_max_v1a, "statdp.noisy_max_v1b": noisy_max_v1b,
    "statdp.noisy_max_v2a": noisy_max_v2a, "statdp.noisy_max_v2b": noisy_max_v2b,
    "statdp.histogram": histogram, "statdp.histogram_eps": histogram_eps,
    "statdp.svt": svt, "statdp.isvt1": isvt1, "statdp.isvt2": isvt2, "statdp.isvt3": isvt3,
    "statdp.isvt4": isvt4,
}
CORRECT = {"statdp.noisy_max_v1a", "statdp.noisy_max_v2a", "statdp.histogram", "statdp.svt"}


def get(name: str):
    """The library mechanism when it exists, else the fallback here."""
    try:
        from privet import mechanisms

        return mechanisms.get(name)
    except Exception:
        return MECHANISMS[name]
