"""Assertions for users' own test suites (pytest or plain ``assert``).

```python
import privet
from privet.testing import assert_dp, assert_not_dp

def test_my_mechanism_keeps_its_claim():
    assert_dp(my_mechanism, epsilon=0.5)          # seed 0: the same verdict on every run

def test_the_broken_variant_is_caught():
    assert_not_dp(my_broken_mechanism, epsilon=0.5)
```

What a pass means, and how often it is wrong:

- :func:`assert_dp` runs StatDP's test (``privet.detect``) at test ε = ``epsilon``. It
  fails when the test rejects ε-DP at level ``alpha`` (default 0.05). The event is chosen
  on one sample and tested on fresh samples, with an exact one-sided test drawn in growing
  batches that stops once decisive; an α-spending function keeps its level under that
  early stopping (:mod:`privet.stats.sequential`). So a mechanism that really is ε-DP
  fails with probability at most ``alpha``, taken over seeds.
  Measured with ``benchmarks/testing_error_rates.py`` (α = 0.05, 20k/100k samples): with
  the fixed-size test, 0 to 0.030 over 200 seeds on four ε-DP library mechanisms; with the
  sequential test, 0 to 0.025 over 40 seeds (``--quick``); power 1.000 on four broken ones
  with both.
  With a fixed ``seed`` (the default is 0), the verdict is deterministic. Lower ``alpha``
  for fewer false alarms. Passing means "no violation found", not "private". With
  ``method="exact"`` a discrete mechanism is instead proved ε-DP by exact inference, with
  no error rate, for the domain that exact inference checked.
- :func:`assert_not_dp` passes when a violation is found at level ``alpha`` (default
  0.01). Its false-pass rate on an ε-DP mechanism is at most ``alpha``.
  ``method="exact"`` asks for an exact ε above the claim instead.

A failure message carries the counterexample: D1, D2, the non-private arguments, the
event, the counts on both sides, the p-value, and the seed that replays it. pytest shows
the line of your test that failed, not privet's own frames (``__tracebackhide__``).

With pytest, privet also installs a plugin (:mod:`privet.pytest_plugin`): the fixture
``privet_check`` (a :class:`Checker`: ``privet_check.assert_dp(mech, epsilon=0.5)``),
the option ``--privet-seed N`` that seeds every check of the run, and a summary of the
checks at the end of the run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.errors import ParameterError
from .core.mechanism import Mechanism, as_mechanism
from .core.results import Counterexample
from .core.seeds import SeedLike, as_seed
from .core.text import fmt_num, fmt_p, fmt_vec
from .stats.counts import two_sample_counts


def _describe(cx: Counterexample | None) -> str:
    if cx is None:
        return ""
    parts = [f"D1={fmt_vec(cx.d1)}", f"D2={fmt_vec(cx.d2)}"]
    if cx.args:
        parts.append(f"args={cx.args}")
    parts.append(f"event {cx.event}")
    if cx.counts is not None and cx.n is not None:
        parts.append(f"counts {cx.counts[0]}/{cx.n[0]} vs {cx.counts[1]}/{cx.n[1]}")
    if cx.p_value is not None:
        parts.append(fmt_p(cx.p_value))
    if cx.probabilities is not None:
        parts.append(f"probabilities {cx.probabilities[0]} vs {cx.probabilities[1]}")
    if cx.seed is not None:
        parts.append(f"seed {cx.seed}")
    return "; counterexample: " + ", ".join(parts)


def _prepare(mechanism: Any, epsilon: float | None, method: str) -> tuple[Any, float]:
    """The mechanism (run as it is: ``epsilon`` is the ε tested, not a new noise scale,
    except for a bare callable, which has no claim of its own) and the ε to test."""
    __tracebackhide__ = True
    if method not in ("detect", "exact"):
        raise ParameterError(f"method must be 'detect' or 'exact', got {method!r}.")
    mech = as_mechanism(mechanism) if isinstance(mechanism, Mechanism) else \
        as_mechanism(mechanism, epsilon=epsilon)
    eps = epsilon if epsilon is not None else mech.epsilon
    if eps is None and mech.claim is None:
        raise ParameterError(f"{mech.name} claims no ε: pass the ε to test (epsilon=...).")
    return mech, None if eps is None else float(eps)   # None: a zCDP claim, tested whole


def _what(res: Any) -> str:
    """What was tested, for messages: ``0.5-DP`` or ``(ε, δ) = (1, 1e-05)``."""
    return f"{res.claim}" if getattr(res, "test_delta", None) else \
        f"{fmt_num(res.test_epsilon)}-DP"


def assert_dp(mechanism: Any, epsilon: float | None = None, *, alpha: float = 0.05,
              seed: SeedLike = 0, method: str = "detect", **kwargs: Any):
    """Fail when ``mechanism`` is shown not to be ``epsilon``-DP; returns the result.

    ``epsilon`` defaults to the mechanism's claimed ε; an (ε, δ) or zCDP claim is tested as
    such (``delta=`` sets the test δ). ``method="detect"`` (default): the StatDP test (the
    approximate-DP test for δ > 0) at level ``alpha`` (false-failure rate at most ``alpha``
    over seeds; deterministic for a fixed ``seed``). ``method="exact"``: tight ε by exact
    inference (discrete noise only), which must be at most ``epsilon`` (an (ε, δ) or zCDP
    claim: checked on the exact privacy profile). Extra keyword arguments go to
    ``privet.detect`` (``n_final``, ``inputs``, ``args``, ...) or ``privet.exact``.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not privet's
    mech, eps = _prepare(mechanism, epsilon, method)
    claim = mech.claim
    if method == "exact" and claim is not None and claim.kind != "pure" and epsilon is None:
        from .exact import profile

        res = profile(mech, **kwargs)      # an (ε, δ) or zCDP claim, checked exactly
        if res.verified is False:
            raise AssertionError(f"{res.mechanism}: {res.check}")
        return res
    if method == "exact":
        return assert_exact_epsilon_at_most(mech, eps, **kwargs)
    from .detect import detect

    res = detect(mech, eps, alpha=alpha, seed=seed, **kwargs)
    if res.violation:
        raise AssertionError(f"{res.mechanism} is not {_what(res)}: "
                             f"{res.verdict} at level {fmt_num(alpha)}"
                             f"{_describe(res.counterexample)}")
    return res


def assert_not_dp(mechanism: Any, epsilon: float | None = None, *, alpha: float = 0.01,
                  seed: SeedLike = 0, method: str = "detect", **kwargs: Any):
    """Fail unless ``mechanism`` is shown not to be ``epsilon``-DP; returns the result.

    ``method="detect"``: a violation must be found at level ``alpha`` (an ε-DP mechanism
    passes this assertion with probability at most ``alpha``). ``method="exact"``: the
    exact ε must exceed ``epsilon``.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not privet's
    mech, eps = _prepare(mechanism, epsilon, method)
    if method == "exact":
        from .exact import exact

        res = exact(mech, **kwargs)
        if res.epsilon <= eps + 1e-12:
            raise AssertionError(f"{res.mechanism}: expected exact ε > {fmt_num(eps)}, but "
                                 f"exact ε = {fmt_num(res.epsilon, 6)} on {res.domain}")
        return res
    from .detect import detect

    res = detect(mech, eps, alpha=alpha, seed=seed, **kwargs)
    if not res.violation:
        raise AssertionError(f"{res.mechanism}: expected a violation of "
                             f"{_what(res)}, but no violation found "
                             f"({fmt_p(res.p_value)} > α = {fmt_num(alpha)}, seed {res.seed})")
    return res


def assert_no_violation_found(mechanism: Any, epsilon: float | None = None, *,
                              alpha: float = 0.05, **detect_kwargs: Any):
    """:func:`assert_dp` with the StatDP test (the name says what a pass means)."""
    __tracebackhide__ = True  # pytest shows the caller's line, not privet's
    return assert_dp(mechanism, epsilon, alpha=alpha, method="detect", **detect_kwargs)


def assert_violation_found(mechanism: Any, epsilon: float | None = None, *,
                           alpha: float = 0.01, **detect_kwargs: Any):
    """:func:`assert_not_dp` with the StatDP test."""
    __tracebackhide__ = True  # pytest shows the caller's line, not privet's
    return assert_not_dp(mechanism, epsilon, alpha=alpha, method="detect", **detect_kwargs)


def assert_exact_epsilon_at_most(mechanism: Any, epsilon: float, **exact_kwargs: Any):
    """Fail when the exact ε of a discrete mechanism exceeds ``epsilon``; returns the bound."""
    __tracebackhide__ = True  # pytest shows the caller's line, not privet's
    from .exact import exact

    res = exact(as_mechanism(mechanism), **exact_kwargs)
    if res.epsilon > epsilon + 1e-12:
        x1, x2, y = (list(res.witness) + [None, None, None])[:3]
        raise AssertionError(f"{res.mechanism}: exact ε = {fmt_num(res.epsilon, 6)} > "
                             f"{fmt_num(epsilon, 6)} on {res.domain}; counterexample: "
                             f"D1={fmt_vec(x1)}, D2={fmt_vec(x2)}, output {fmt_vec(y)}")
    return res


def assert_same_distribution(first: Any, second: Any, x: Any, n: int = 20_000, *,
                             alpha: float = 1e-3, seed: SeedLike = 0) -> float:
    """Fail when two mechanisms' discrete outputs on ``x`` differ (chi-square, level
    ``alpha``); returns the p-value. Useful to check a port against a reference."""
    __tracebackhide__ = True  # pytest shows the caller's line, not privet's
    from scipy.stats import chi2_contingency

    seed = as_seed(seed)
    a = as_mechanism(first).sample(x, n, seed=seed)
    b = as_mechanism(second).sample(x, n, seed=seed + 1)
    values, count_a, count_b = two_sample_counts(a, b)
    table = np.vstack([count_a, count_b])
    if len(values) == 1:
        return 1.0
    _, p, _, _ = chi2_contingency(table)
    if p < alpha:
        raise AssertionError(f"outputs differ on {list(np.ravel(x))}: chi-square p = {p:.3g}")
    return float(p)


class Checker:
    """The assertions above with one seed for a whole test session: what the pytest fixture
    ``privet_check`` hands each test (``pytest --privet-seed N`` replays or varies every
    check at once). Each result is kept in ``results`` for the end-of-run summary."""

    def __init__(self, seed: SeedLike = 0) -> None:
        self.seed = seed
        self.results: list[tuple[str, Any]] = []

    def _run(self, check: Any, mechanism: Any, epsilon: float | None, kwargs: dict) -> Any:
        __tracebackhide__ = True
        kwargs.setdefault("seed", self.seed)
        if kwargs.get("method") == "exact":
            kwargs.pop("seed")  # exact inference draws nothing
        res = check(mechanism, epsilon, **kwargs)
        self.results.append((check.__name__, res))
        return res

    def assert_dp(self, mechanism: Any, epsilon: float | None = None, **kwargs: Any) -> Any:
        """:func:`assert_dp` with the session's seed."""
        __tracebackhide__ = True
        return self._run(assert_dp, mechanism, epsilon, kwargs)

    def assert_not_dp(self, mechanism: Any, epsilon: float | None = None,
                      **kwargs: Any) -> Any:
        """:func:`assert_not_dp` with the session's seed."""
        __tracebackhide__ = True
        return self._run(assert_not_dp, mechanism, epsilon, kwargs)
