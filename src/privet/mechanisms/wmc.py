"""The WMC benchmarks: Oakley, Holtzen, Oprea, *Synthesizing Tight Privacy and Accuracy
Bounds via Weighted Model Counting*.

Randomized response on n bits (Algorithm 4, Sec. V), its counting version RRcount
(Sec. III), and the truncated geometric above threshold (Algorithm 5, Appendix A). All
noise is finite (Bernoulli flips, truncated geometric), so :meth:`Mechanism.distribution`
enumerates them exactly; give probabilities as floats that print as the rational you mean
(``lam=0.2`` is read as exactly 1/5 by exact enumeration) so the specs stay JSON-friendly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..core import ops
from ..core.errors import ParameterError
from ..core.mechanism import Domain, Output, mechanism
from ..core.neighbors import all_differ, one_differs
from ._common import clip, first_index, positive_int, row

PAPER = "WMC (Oakley, Holtzen, Oprea)"
LAM = 0.2
BITS = Domain(integer=True, low=0, high=1)
# Geometric above threshold: lists of length up to MAX_LIST of integers in {0..K}.
K = 2
MAX_LIST = 8


def _probability(name: str, p: Any, open_half: bool = False) -> float:
    try:
        v = float(p)
    except (TypeError, ValueError):
        v = math.nan
    ok = 0 < v < 0.5 if open_half else 0 < v < 1
    if not ok:
        want = "0 < {} < 1/2" if open_half else "0 < {} < 1"
        raise ParameterError(f"argument {name} must satisfy {want.format(name)}, got {p!r}.")
    return v


def _rr(noise, x, lam):
    flips = noise.bernoulli(lam, x.shape)
    return x + flips - 2 * x * flips  # x XOR flip


@mechanism(name="wmc.randomized_response", epsilon=math.log((1 - LAM) / LAM),
           neighbors=one_differs(1), domain=BITS, output=Output.categorical((0, 1)),
           true_epsilon=math.log((1 - LAM) / LAM), source=f"{PAPER}, Algorithm 4")
def randomized_response(noise, x, *, lam=LAM):
    """Randomized response: each bit is flipped with probability lam; e^eps = (1-lam)/lam."""
    _probability("lam", lam, open_half=True)
    return _rr(noise, x, lam)


@mechanism(name="wmc.rr_count", epsilon=math.log((1 - LAM) / LAM), neighbors=one_differs(1),
           domain=BITS, output=Output.numeric(integer=True),
           true_epsilon=math.log((1 - LAM) / LAM), source=f"{PAPER}, Sec. III (RRcount)")
def rr_count(noise, x, *, lam=LAM):
    """RRcount: the number of ones among the randomized-response bits."""
    _probability("lam", lam, open_half=True)
    return _rr(noise, x, lam).sum(axis=-1)


@mechanism(name="wmc.geometric_above_threshold", epsilon=3 * math.log(2),
           neighbors=all_differ(1),
           domain=Domain(length=(1, MAX_LIST), integer=True, low=0, high=K),
           output=Output.categorical(range(MAX_LIST + 1)),
           arg_ranges={"T": list(range(K + 1))}, true_epsilon=math.inf,
           source=f"{PAPER}, Algorithm 5 (Appendix A)")
def geometric_above_threshold(noise, x, *, T=1, k=K, lam1=0.5, lam2=0.5):
    """Truncated geometric above threshold: the 0-based index of the first entry with
    x_i + Geom(lam2) >= T + Geom(lam1), or len(x) when there is none.

    Threshold and entries pass through the truncated geometric mechanism on {0..k}
    (Balcer and Vadhan), i.e. ``clip(v + Z, 0, k)``; lam1 and lam2 are the geometric
    parameters alpha = e^-eps' (the paper sets lam1 = lam2). We compare with >= as
    Algorithm 5 does (the Dice program of Fig. 5 uses >). The claimed epsilon is the
    classical above-threshold bound eps_T + 2 eps_q = ln 2 + 2 ln 2 for lam = 1/2; the
    truncated version leaks more as the list grows (FAIER Sec. 6.3 shows the same for
    its discrete above threshold), hence ``true_epsilon`` = inf over unbounded lists.
    """
    k = positive_int("k", k)
    _probability("lam1", lam1)
    _probability("lam2", lam2)
    t_noisy = clip(T + noise.truncated_geometric(lam1, k), 0, k)
    x_noisy = clip(x + noise.truncated_geometric(lam2, k, x.shape), 0, k)
    return first_index(ops.ge(x_noisy, row(t_noisy)), x.shape[-1])


MECHANISMS = (randomized_response, rr_count, geometric_above_threshold)

PER_QUERY = frozenset({"wmc.randomized_response"})

EXAMPLES: dict[str, list[float]] = {
    "wmc.randomized_response": [0, 1, 0, 1],
    "wmc.rr_count": [0, 1, 1, 0, 1, 0, 0, 1],
    "wmc.geometric_above_threshold": [2, 0, 1, 2],
}


def _rr_eps(e: float, n: int | None, a: Mapping[str, Any]) -> float:
    lam = float(a.get("lam", LAM))
    return math.log((1 - lam) / lam)


KNOWN: dict[str, Callable[[float, int | None, Mapping[str, Any]], float | None]] = {
    "wmc.randomized_response": _rr_eps,
    "wmc.rr_count": _rr_eps,
    "wmc.geometric_above_threshold": lambda e, n, a: math.inf if n is None else None,
}
