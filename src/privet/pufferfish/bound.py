"""Algorithm 4 of FAIER: a precise lower bound on epsilon from testing plus verification.

Step 1 brackets epsilon statistically with ``privet.detect``'s p-value curve on the inputs
the verifier checks (the neighbor patterns among the scenario's own inputs, at their
length: a bracket measured on longer inputs brackets a different epsilon). The left end is
the lower bound of the curve (fixed-sequence testing, family-wise error at most alpha), the
right end the smallest larger test epsilon whose p-value is (numerically) 1. Step 2
binary-searches the bracket on a grid of width ``precision`` with the exact check (or
Algorithm 1 through z3 when the scenario has unknown parameters or ``method="smt"``): a
violated epsilon moves the left end, a verified one the right end. The statistical bracket
is never trusted: both ends are re-checked and widened if the check disagrees (the result
says so), so the answer rests on the verifier alone.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..core.errors import ParameterError, PrivetError
from ..core.mechanism import Mechanism
from ..core.results import Bound
from .scenario import Scenario, budget, mechanism_scenario

Bracket = Callable[[], tuple[float | None, float | None]]


def detect_bracket(mechanism: Mechanism, test_epsilons: Sequence[float] | None = None, *,
                   inputs: Any = None, n_select: int = 20_000, n_final: int = 100_000,
                   alpha: float = 0.05, seed: int | None = 0) -> tuple[float | None,
                                                                      float | None, Any]:
    """(left, right, curve): StatDP's interval I of Algorithm 4 from ``pvalue_curve``."""
    from privet.detect import pvalue_curve

    grid = list(test_epsilons) if test_epsilons is not None else \
        [round(x, 10) for x in np.arange(0.1, 3.01, 0.1)]
    curve = pvalue_curve(mechanism, grid, inputs=inputs, n_select=n_select, n_final=n_final,
                         alpha=alpha, seed=seed)
    lo = curve.lower_bound
    hi = None
    for e, p in zip(curve.test_epsilons, curve.p_values):
        if (lo is None or e > lo) and p >= 1 - 1e-9:
            hi = float(e)
            break
    return (None if lo is None else float(lo)), hi, curve


def bracket_inputs(mech: Mechanism, inputs: Any = None) -> list | None:
    """The (D1, D2) pairs to bracket with: the mechanism's neighbor patterns at the length of
    the inputs the verifier checks (``inputs``, or the mechanism's whole finite domain),
    kept when both lie among those inputs; None when none does (the default patterns)."""
    from .models import finite_inputs

    try:
        xs = finite_inputs(mech, inputs)
    except PrivetError:
        return None
    have = {tuple(float(v) for v in x) for x in xs}
    lengths = tuple(sorted({len(x) for x in xs}))
    pairs = [(p.d1, p.d2) for p in mech.neighbors.pairs(lengths=lengths, domain=mech.domain)
             if tuple(p.d1.tolist()) in have and tuple(p.d2.tolist()) in have]
    return pairs or None


def lower_bound(target: Scenario | Mechanism, precision: float = 0.001, *,
                bracket: tuple[float | None, float | None] | Bracket | None = None,
                mechanism: Mechanism | None = None, method: str = "exact",
                k: int | None = None, inputs: Any = None, args: Mapping | None = None,
                detect_options: Mapping | None = None, timeout: float = 120.0,
                max_epsilon: float = 64.0) -> Bound:
    """Algorithm 4: the largest epsilon on a ``precision`` grid that the scenario violates.

    ``target``: a DP scenario, or a discrete Mechanism (its HMM via Enumerate over its
    finite domain or ``inputs``). ``bracket``: (left, right), a callable returning one, or
    None to bracket with ``privet.detect`` on ``mechanism`` (default: ``target`` when it is
    a Mechanism). ``method``: "exact" (exhaustive exact check) or "smt" (Algorithm 1).
    The result's ``value`` is violated (shown exactly) and ``details['upper']`` =
    value + precision is verified, both for observation length ``k``.
    """
    from . import check_pairs, pufferfish

    if not precision > 0:
        raise ParameterError(f"precision must be positive, got {precision}.")
    t0 = time.perf_counter()
    sc = target if isinstance(target, Scenario) else mechanism_scenario(target, inputs, args)
    check_pairs(sc)
    mech = mechanism if mechanism is not None else (target if isinstance(target, Mechanism)
                                                    else None)
    kk = int(k if k is not None else sc.k)
    checks: list[dict] = []
    source = "given"
    curve = None
    tb = time.perf_counter()
    if bracket is None:
        if mech is None:
            lo, hi, source = None, None, "none (doubling with the verifier)"
        else:
            try:
                opts = dict(detect_options or {})
                if "inputs" not in opts:
                    opts["inputs"] = bracket_inputs(mech, inputs)
                lo, hi, curve = detect_bracket(mech, **opts)
                source = "privet.detect p-value curve"
            except ImportError:
                lo, hi, source = None, None, "none (privet.detect unavailable)"
    elif callable(bracket):
        lo, hi = bracket()
        source = "callable"
    else:
        lo, hi = bracket
    bracket_seconds = time.perf_counter() - tb

    def violated(eps: float) -> bool:
        ts = time.perf_counter()
        v = pufferfish(sc, budget(eps), k_min=kk, k_max=kk, method=method, timeout=timeout)
        checks.append({"epsilon": eps, "status": v.status, "seconds": time.perf_counter() - ts,
                       "solver": v.solver})
        if v.status == "unknown":
            raise PrivetError(f"the {method} check could not decide epsilon = {eps:g} "
                              f"({v.message}); raise the timeout.")
        return v.violated

    p = precision
    lo_i = 0 if lo is None else max(0, math.floor(lo / p))
    hi_i = math.ceil((hi if hi is not None else max(2 * (lo or 0.5), 1.0)) / p)
    hi_i = max(hi_i, lo_i + 1)
    moved = []
    while lo_i > 0 and not violated(lo_i * p):  # the left end must be a real violation
        hi_i = lo_i
        lo_i //= 2
        moved.append("left")
    while violated(hi_i * p):  # the right end must really hold
        lo_i = hi_i
        hi_i *= 2
        moved.append("right")
        if hi_i * p > max_epsilon:
            raise PrivetError(f"epsilon = {hi_i * p / 2:g} is still violated; the scenario may "
                              "not be private for any epsilon (try a longer k to see it grow).")
    while hi_i - lo_i > 1:  # Algorithm 4, lines 3-10
        mid = (lo_i + hi_i) // 2
        if violated(mid * p):
            lo_i = mid
        else:
            hi_i = mid
    value = round(lo_i * p, 12)
    details = {"upper": round(hi_i * p, 12), "precision": p, "k": kk,
               "bracket": (lo, hi), "bracket_source": source,
               # which ends of the statistical bracket the verifier had to move
               "bracket_corrected": sorted(set(moved)),
               "bracket_seconds": bracket_seconds, "checks": checks, "method": method,
               "search_seconds": time.perf_counter() - t0 - bracket_seconds}
    if curve is not None:
        details["p_values"] = dict(zip(curve.test_epsilons, curve.p_values))
    name = mech.name if mech is not None else sc.name
    return Bound(mechanism=name, value=value, confidence=1.0,
                 method=f"Algorithm 4 (FAIER): bracket + {method} binary search",
                 exact=True, claimed_epsilon=None if mech is None else mech.epsilon,
                 seconds=time.perf_counter() - t0, details=details)
