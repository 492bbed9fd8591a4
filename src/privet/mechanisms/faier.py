"""The FAIER benchmarks: Liu, Wang, Zhang, *Verifying Pufferfish Privacy in Hidden Markov
Models* (VMCAI 2022).

The truncated alpha-geometric mechanism on counts {0..n} (Sec. 4.1, Fig. 1a for alpha = 1/2),
Discrete Noisy Max (Algorithm 2, with uniform tie-breaking) and Discrete Above Threshold
(Algorithm 3). All noise is finite, so :meth:`Mechanism.distribution` enumerates them
exactly; ``alpha=0.5`` and ``0.25`` are read as exactly 1/2 and 1/4.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from ..core import ops
from ..core.errors import ParameterError
from ..core.mechanism import Domain, Output, mechanism
from ..core.neighbors import all_differ, one_differs
from ._common import clip, halt_after, pad_aborted, positive_int, row

PAPER = "FAIER (Liu, Wang, Zhang, VMCAI 2022)"
RANGE = 2  # counting queries with range {0, 1, 2} (Sec. 6.2, 6.3)
COUNTS = Domain(integer=True, low=0, high=RANGE)
# Uniform tie-breaking draws a random permutation of the queries (m! outcomes), so noisy
# max accepts at most this many queries.
MAX_NOISY_MAX = 8
# ln(288/73): the exact epsilon of Discrete Noisy Max on 5 queries over {0, 1, 2} under
# all_differ(1) (FAIER Sec. 7.1 reports the lower bound 1.372).
NOISY_MAX_5_EPSILON = Fraction(288, 73)


def _alpha(name: str, a: Any) -> float:
    try:
        v = float(a)
    except (TypeError, ValueError):
        v = math.nan
    if not 0 < v < 1:
        raise ParameterError(f"argument {name} must satisfy 0 < {name} < 1, got {a!r}.")
    return v


@mechanism(name="faier.truncated_geometric", epsilon=math.log(2), neighbors=one_differs(1),
           domain=COUNTS, output=Output.categorical(range(RANGE + 1)),
           true_epsilon=math.log(2), source=f"{PAPER}, Sec. 4.1 and Fig. 1a")
def truncated_geometric(noise, x, *, alpha=0.5, n=RANGE):
    """Truncated alpha-geometric mechanism: clip(f(d) + Z, 0, n) per count; (-ln alpha)-DP."""
    _alpha("alpha", alpha)
    n = positive_int("n", n)
    return clip(x + noise.truncated_geometric(alpha, n, x.shape), 0, n)


@mechanism(name="faier.discrete_noisy_max", epsilon=math.log(2), neighbors=all_differ(1),
           domain=Domain(length=(1, MAX_NOISY_MAX), integer=True, low=0, high=RANGE),
           output=Output.categorical(range(MAX_NOISY_MAX)),
           true_epsilon=math.log(NOISY_MAX_5_EPSILON), source=f"{PAPER}, Algorithm 2")
def discrete_noisy_max(noise, v, *, alpha=0.5):
    """Discrete Noisy Max: 0-based index of the largest truncated alpha-geometric noisy count
    on {0, 1, 2}, ties broken uniformly at random.

    Algorithm 2 breaks ties by reservoir sampling (replace r by i with probability 1/c); a
    uniformly random permutation of the queries used as priorities picks the same uniform
    winner among the maxima, with draws that do not depend on the data (so Replay and
    Enumerate see it). The claimed epsilon is the paper's ln 2 (Table 2); the exact value
    on 5 queries is ln(288/73) ~ 1.3725 (``true_epsilon``; it depends on the length).
    """
    _alpha("alpha", alpha)
    m = v.shape[-1]
    noisy = clip(v + noise.truncated_geometric(alpha, RANGE, v.shape), 0, RANGE)
    priority = noise.permutation(m)
    return ops.argmax(noisy * m + priority, axis=-1)


@mechanism(name="faier.discrete_above_threshold", epsilon=4 * math.log(2),
           neighbors=all_differ(1), domain=COUNTS,
           output=Output.categorical((0, 1), sentinels=("ABORTED",), variable=True),
           arg_ranges={"t": list(range(RANGE + 1))}, true_epsilon=math.inf,
           source=f"{PAPER}, Algorithm 3")
def discrete_above_threshold(noise, r, *, t=2, alpha_t=0.25, alpha_q=0.5):
    """Discrete Above Threshold: bottom (0) while clip(r_i + Geom(alpha_q)) < clip(t +
    Geom(alpha_t)), then top (1) and halt (ABORTED after); if no query is above, all 0.

    With the 1/4- and 1/2-geometric noise the classical proof would give 4 ln 2 (the
    claimed epsilon); FAIER Sec. 6.3 shows the ratio of bottom^n top on neighbors grows
    as (16/11) 2^n, so no epsilon holds over unboundedly many queries.
    """
    _alpha("alpha_t", alpha_t)
    _alpha("alpha_q", alpha_q)
    t_noisy = clip(t + noise.truncated_geometric(alpha_t, RANGE), 0, RANGE)
    r_noisy = clip(r + noise.truncated_geometric(alpha_q, RANGE, r.shape), 0, RANGE)
    above = ops.ge(r_noisy, row(t_noisy))
    return pad_aborted(above, halt_after(above, 1))


MECHANISMS = (truncated_geometric, discrete_noisy_max, discrete_above_threshold)

PER_QUERY = frozenset({"faier.truncated_geometric", "faier.discrete_above_threshold"})

EXAMPLES: dict[str, list[float]] = {
    "faier.truncated_geometric": [1],
    "faier.discrete_noisy_max": [0, 1, 2, 1, 0],
    "faier.discrete_above_threshold": [1, 1, 1, 2],
}


def _dnm(e: float, n: int | None, a: Mapping[str, Any]) -> float | None:
    if n == 5 and float(a.get("alpha", 0.5)) == 0.5:
        return math.log(NOISY_MAX_5_EPSILON)
    return None


KNOWN: dict[str, Callable[[float, int | None, Mapping[str, Any]], float | None]] = {
    "faier.truncated_geometric": lambda e, n, a: -math.log(float(a.get("alpha", 0.5))),
    "faier.discrete_noisy_max": _dnm,
    "faier.discrete_above_threshold": lambda e, n, a: math.inf if n is None else None,
}
