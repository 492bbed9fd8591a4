"""Assertions for users' own test suites (pytest or plain ``assert``).

```python
from privet.testing import assert_no_violation_found, assert_exact_epsilon_at_most

def test_my_mechanism_keeps_its_claim():
    assert_no_violation_found(my_mechanism, seed=0)
```

Statistical assertions are honest about what they show: passing
:func:`assert_no_violation_found` means the StatDP test found no violation at level
``alpha``, not that the mechanism is private. :func:`assert_exact_epsilon_at_most` is a
proof, for the input domain exact inference checked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.mechanism import as_mechanism


def assert_no_violation_found(mechanism: Any, epsilon: float | None = None, *,
                              alpha: float = 0.05, **detect_kwargs: Any):
    """Fail when ``privet.detect`` rejects ε-DP at level ``alpha``; returns the result."""
    from .detect import detect

    res = detect(as_mechanism(mechanism), epsilon, alpha=alpha, **detect_kwargs)
    if res.p_value < alpha:
        cx = res.counterexample
        where = f": D1={list(cx.d1)}, D2={list(cx.d2)}, event {cx.event}" if cx else ""
        raise AssertionError(f"{res.mechanism}: {res.verdict} at test ε = "
                             f"{res.test_epsilon:g}{where}")
    return res


def assert_violation_found(mechanism: Any, epsilon: float | None = None, *,
                           alpha: float = 0.01, **detect_kwargs: Any):
    """Fail unless ``privet.detect`` rejects ε-DP at level ``alpha`` (a known-bad mechanism)."""
    from .detect import detect

    res = detect(as_mechanism(mechanism), epsilon, alpha=alpha, **detect_kwargs)
    if not res.p_value < alpha:
        raise AssertionError(f"{res.mechanism}: expected a violation at test ε = "
                             f"{res.test_epsilon:g}, but p = {res.p_value:.3g} ≥ {alpha}")
    return res


def assert_exact_epsilon_at_most(mechanism: Any, epsilon: float, **exact_kwargs: Any):
    """Fail when the exact ε of a discrete mechanism exceeds ``epsilon``; returns the bound."""
    from .exact import exact

    res = exact(as_mechanism(mechanism), **exact_kwargs)
    if res.epsilon > epsilon + 1e-12:
        raise AssertionError(f"{res.mechanism}: exact ε = {res.epsilon:.6g} > {epsilon:g}, "
                             f"worst case {res.witness}")
    return res


def assert_same_distribution(first: Any, second: Any, x: Any, n: int = 20_000, *,
                             alpha: float = 1e-3, seed: int = 0) -> float:
    """Fail when two mechanisms' discrete outputs on ``x`` differ (chi-square, level
    ``alpha``); returns the p-value. Useful to check a port against a reference."""
    from scipy.stats import chi2_contingency

    a = as_mechanism(first).sample(x, n, seed=seed)
    b = as_mechanism(second).sample(x, n, seed=seed + 1)
    rows_a = np.asarray(a).reshape(len(a), -1)
    rows_b = np.asarray(b).reshape(len(b), -1)
    values, inverse = np.unique(np.vstack([rows_a, rows_b]), axis=0, return_inverse=True)
    inverse = inverse.ravel()
    table = np.vstack([np.bincount(inverse[: len(a)], minlength=len(values)),
                       np.bincount(inverse[len(a):], minlength=len(values))])
    if len(values) == 1:
        return 1.0
    _, p, _, _ = chi2_contingency(table)
    if p < alpha:
        raise AssertionError(f"outputs differ on {list(np.ravel(x))}: chi-square p = {p:.3g}")
    return float(p)
