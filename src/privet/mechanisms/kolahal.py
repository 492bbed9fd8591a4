"""The KOLAHAL benchmarks: Roy, Hsu, Albarghouthi, *Learning Differentially Private
Mechanisms* (S&P 2021), Table I and Figs. 3 and 7-14, completed with their textbook noise.

Each sketch's noise locations ("holes") are keyword arguments ``eta`` / ``eta1`` /
``eta2`` / ``eta3``: ``None`` (the default) is the textbook completion the paper recovers,
``0`` is the paper's "no noise" (bottom), and a positive number is that Laplace (or
Exponential) scale. :data:`HOLES` lists them and :data:`TEXTBOOK` gives each textbook
completion as a coefficient k of k/eps (None for bottom), so :mod:`privet.synth` can search
them. They are deliberately not in ``noise_args``: those are arguments that detection may
set to their low-noise end, which for a hole would switch privacy off.

Defaults follow the paper's running example (Sec. III: eps = 0.5, T = 2). Outputs: Noisy
Max returns a 0-based index; AboveT returns the 1-based index of the first query above the
threshold, or 0 when there is none (Fig. 3a); SVT returns 1/0 padded with ABORTED.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..core import ops
from ..core.mechanism import Output, mechanism
from ..core.neighbors import all_differ, one_differs
from ._common import (
    INDEXED,
    QUERIES,
    first_index,
    halt_after,
    index_categories,
    pad_aborted,
    positive_int,
    row,
    scale,
)

EPSILON = 0.5
PAPER = "KOLAHAL (Roy, Hsu, Albarghouthi, S&P 2021)"
T_RANGE = (-1.0, 3.0)

HOLES: dict[str, tuple[str, ...]] = {
    "kolahal.sum": ("eta",),
    "kolahal.histogram": ("eta",),
    "kolahal.noisy_max1": ("eta",),
    "kolahal.noisy_max2": ("eta1", "eta2"),
    "kolahal.exp_noisy_max": ("eta1", "eta2"),
    "kolahal.smart_sum": ("eta1", "eta2"),
    "kolahal.svt": ("eta1", "eta2"),
    "kolahal.above_t1": ("eta1", "eta2"),
    "kolahal.above_t2": ("eta1", "eta2", "eta3"),
}

# Textbook completions as k in k/eps (SVT's query noise is 4N/eps: k multiplies N there);
# None is bottom (no noise).
TEXTBOOK: dict[str, dict[str, float | None]] = {
    "kolahal.sum": {"eta": 1.0},
    "kolahal.histogram": {"eta": 1.0},
    "kolahal.noisy_max1": {"eta": 2.0},
    "kolahal.noisy_max2": {"eta1": 2.0, "eta2": None},
    "kolahal.exp_noisy_max": {"eta1": 2.0, "eta2": None},
    "kolahal.smart_sum": {"eta1": 2.0, "eta2": 2.0},
    "kolahal.svt": {"eta1": 2.0, "eta2": 4.0},
    "kolahal.above_t1": {"eta1": 2.0, "eta2": 4.0},
    "kolahal.above_t2": {"eta1": 2.0, "eta2": 4.0, "eta3": None},
}


def _hole(name: str, value: Any, textbook: float | None) -> float | None:
    """The scale of a noise location: textbook when None, no noise when 0."""
    if value is None:
        return textbook
    if float(value) == 0:
        return None
    return scale(name, value)


def _lap(noise, eta: float | None, shape=()):
    return 0.0 if eta is None else noise.laplace(eta, shape)


def _exp(noise, eta: float | None, shape=()):
    return 0.0 if eta is None else noise.exponential(eta, shape)


@mechanism(name="kolahal.sum", epsilon=EPSILON, neighbors=one_differs(1), domain=QUERIES,
           output=Output.numeric(), true_epsilon=EPSILON, source=f"{PAPER}, Fig. 9")
def sum_(noise, q, *, epsilon, eta=None):
    """Sum: s = sum_i (a_i + Lap(eta)); textbook eta = 1/eps (one answer changes by 1)."""
    eta = _hole("eta", eta, 1.0 / epsilon)
    if eta is None:
        return np.broadcast_to(np.sum(q), (noise.size,)).astype(float)
    return (q + noise.laplace(eta, q.shape)).sum(axis=-1)


@mechanism(name="kolahal.histogram", epsilon=EPSILON, neighbors=one_differs(1),
           domain=QUERIES, output=Output.numeric(), true_epsilon=EPSILON,
           source=f"{PAPER}, Fig. 8")
def histogram(noise, q, *, epsilon, eta=None):
    """Histogram: every count plus Lap(eta); textbook eta = 1/eps."""
    eta = _hole("eta", eta, 1.0 / epsilon)
    return np.broadcast_to(q + _lap(noise, eta, q.shape), (noise.size, q.shape[0]))


@mechanism(name="kolahal.noisy_max1", epsilon=EPSILON, neighbors=all_differ(1),
           domain=INDEXED, output=Output.categorical(index_categories()),
           true_epsilon=EPSILON, source=f"{PAPER}, Fig. 7")
def noisy_max1(noise, q, *, epsilon, eta=None):
    """NoisyMax1: index of the largest a_i + Lap(eta); textbook eta = 2/eps."""
    eta = _hole("eta", eta, 2.0 / epsilon)
    noisy = np.broadcast_to(q + _lap(noise, eta, q.shape), (noise.size, q.shape[0]))
    return ops.argmax(noisy, axis=-1)


@mechanism(name="kolahal.noisy_max2", epsilon=EPSILON, neighbors=all_differ(1),
           domain=INDEXED, output=Output.categorical(index_categories()),
           true_epsilon=EPSILON, source=f"{PAPER}, Fig. 10")
def noisy_max2(noise, q, *, epsilon, eta1=None, eta2=None):
    """NoisyMax2: NoisyMax1 plus a second location on the answer; textbook (2/eps, bottom)."""
    eta1 = _hole("eta1", eta1, 2.0 / epsilon)
    eta2 = _hole("eta2", eta2, None)
    noisy = np.broadcast_to(q + _lap(noise, eta1, q.shape), (noise.size, q.shape[0]))
    idx = ops.argmax(noisy, axis=-1)
    return idx if eta2 is None else idx + noise.laplace(eta2)


@mechanism(name="kolahal.exp_noisy_max", epsilon=EPSILON, neighbors=all_differ(1),
           domain=INDEXED, output=Output.categorical(index_categories()),
           true_epsilon=EPSILON, source=f"{PAPER}, Fig. 11")
def exp_noisy_max(noise, q, *, epsilon, eta1=None, eta2=None):
    """ExpNoisyMax: Exponential noise; textbook (2/eps, bottom)."""
    eta1 = _hole("eta1", eta1, 2.0 / epsilon)
    eta2 = _hole("eta2", eta2, None)
    noisy = np.broadcast_to(q + _exp(noise, eta1, q.shape), (noise.size, q.shape[0]))
    idx = ops.argmax(noisy, axis=-1)
    return idx if eta2 is None else idx + noise.exponential(eta2)


@mechanism(name="kolahal.smart_sum", epsilon=EPSILON, neighbors=one_differs(1),
           domain=QUERIES, output=Output.numeric(), arg_ranges={"M": [1, 2, 3, 4, 5]},
           true_epsilon=EPSILON, source=f"{PAPER}, Fig. 14")
def smart_sum(noise, q, *, epsilon, M=2, eta1=None, eta2=None):
    """SmartSum (two-level counter): all running sums; textbook (2/eps, 2/eps).

    At every M-th entry the block sum gets Lap(eta1) and the running total restarts from
    the noisy block prefix; in between each entry gets Lap(eta2). The text copy's
    ``prepend(r, next)`` lost its indentation; we emit ``next`` after every entry, in input
    order (the order of a list of releases does not change its privacy).
    """
    M = positive_int("M", M)
    eta1 = _hole("eta1", eta1, 2.0 / epsilon)
    eta2 = _hole("eta2", eta2, 2.0 / epsilon)
    n = q.shape[0]
    blocks = sum(1 for i in range(1, n + 1) if i % M == 0)
    block_noise = _lap(noise, eta1, (blocks,))
    step_noise = _lap(noise, eta2, (n - blocks,))
    total = np.zeros(noise.size)
    current = np.zeros(noise.size)
    block = 0.0
    out = np.empty((noise.size, n))
    b = s = 0
    for i in range(1, n + 1):
        a = q[i - 1]
        block = block + a
        if i % M == 0:
            total = total + block + _col(block_noise, b)
            block = 0.0
            current = total
            b += 1
        else:
            current = current + a + _col(step_noise, s)
            s += 1
        out[:, i - 1] = current
    return out


def _col(draws: Any, j: int) -> Any:
    return draws[:, j] if isinstance(draws, np.ndarray) else draws


@mechanism(name="kolahal.svt", epsilon=EPSILON, neighbors=all_differ(1), domain=QUERIES,
           output=Output.categorical((0, 1), sentinels=("ABORTED",), variable=True),
           arg_ranges={"T": T_RANGE, "N": [1, 2, 3, 4, 5]}, noise_args=("N",),
           true_epsilon=EPSILON, source=f"{PAPER}, Fig. 13 (Lyu et al., Alg. 1)")
def svt(noise, q, *, epsilon, T=2.0, N=1, eta1=None, eta2=None):
    """SVT: 1 when a_i + Lap(eta2) > T + Lap(eta1), halting after N ones; textbook
    (2/eps, 4N/eps)."""
    N = positive_int("N", N)
    eta1 = _hole("eta1", eta1, 2.0 / epsilon)
    eta2 = _hole("eta2", eta2, 4.0 * N / epsilon)
    t = T + _lap(noise, eta1)
    a = np.broadcast_to(q + _lap(noise, eta2, q.shape), (noise.size, q.shape[0]))
    above = ops.gt(a, row(np.broadcast_to(t, (noise.size,))))
    return pad_aborted(above, halt_after(above, N))


def _above_t(noise, q, T, eta1, eta2, eta3):
    t = np.broadcast_to(T + _lap(noise, eta1), (noise.size,))
    a = np.broadcast_to(q + _lap(noise, eta2, q.shape), (noise.size, q.shape[0]))
    ans = first_index(ops.gt(a, row(t)), -1) + 1  # 1-based index, 0 when none
    return ans + _lap(noise, eta3) if eta3 is not None else ans


@mechanism(name="kolahal.above_t1", epsilon=EPSILON, neighbors=all_differ(1), domain=INDEXED,
           output=Output.categorical(index_categories(one_based_with_none=True)),
           arg_ranges={"T": T_RANGE}, true_epsilon=EPSILON, source=f"{PAPER}, Fig. 12")
def above_t1(noise, q, *, epsilon, T=2.0, eta1=None, eta2=None):
    """AboveT1: 1-based index of the first a_i + Lap(eta2) > T + Lap(eta1), 0 if none;
    textbook (2/eps, 4/eps)."""
    eta1 = _hole("eta1", eta1, 2.0 / epsilon)
    eta2 = _hole("eta2", eta2, 4.0 / epsilon)
    return _above_t(noise, q, T, eta1, eta2, None)


@mechanism(name="kolahal.above_t2", epsilon=EPSILON, neighbors=all_differ(1), domain=INDEXED,
           output=Output.categorical(index_categories(one_based_with_none=True)),
           arg_ranges={"T": T_RANGE}, true_epsilon=EPSILON, source=f"{PAPER}, Fig. 3")
def above_t2(noise, q, *, epsilon, T=2.0, eta1=None, eta2=None, eta3=None):
    """AboveT2: the sketch of Fig. 3b with a third location on the answer; textbook
    (2/eps, 4/eps, bottom) is Fig. 3c (the same mechanism as AboveT1)."""
    eta1 = _hole("eta1", eta1, 2.0 / epsilon)
    eta2 = _hole("eta2", eta2, 4.0 / epsilon)
    eta3 = _hole("eta3", eta3, None)
    return _above_t(noise, q, T, eta1, eta2, eta3)


MECHANISMS = (sum_, histogram, noisy_max1, noisy_max2, exp_noisy_max, smart_sum, svt,
              above_t1, above_t2)

PER_QUERY = frozenset({"kolahal.histogram", "kolahal.smart_sum", "kolahal.svt"})

EXAMPLES: dict[str, list[float]] = {m.name: [1.0, 1.0, 1.0, 1.0, 1.0] for m in MECHANISMS}
EXAMPLES["kolahal.above_t1"] = EXAMPLES["kolahal.above_t2"] = [2.0, 2.0, 0.0, 0.0, 0.0]


def _textbook(a: Mapping[str, Any], names: tuple[str, ...]) -> bool:
    return all(a.get(h) is None for h in names)


def _known(name: str) -> Callable[[float, int | None, Mapping[str, Any]], float | None]:
    holes = HOLES[name]
    return lambda e, n, a: e if _textbook(a, holes) else None


KNOWN: dict[str, Callable[[float, int | None, Mapping[str, Any]], float | None]] = {
    name: _known(name) for name in HOLES
}
