"""(Optional, experimental) wall-clock time as part of a mechanism's output.

Jin, McMurtry, Rubinstein, Ohrimenko (S&P 2022, Sec. 5) show that discrete samplers with
data-dependent loops (a geometric drawn by repeated Bernoulli trials, rejection loops whose
number of rounds depends on the value drawn) leak through their running time: an observer
who sees the output *and* how long it took learns more than the output alone. :func:`timed`
wraps a black box so that each call is timed and the elapsed time, in units of
``unit_ns`` nanoseconds, becomes an output coordinate; ``privet.detect`` then tests the
joint output like any other.

This is clearly marked optional: timings depend on the machine, its load and the
interpreter, so a verdict on them is only as good as the conditions it was measured in,
and privet never replays one by seed (the noise replays; the clock does not).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.mechanism import Mechanism, Output, from_blackbox


class _Timed:
    """Picklable: calls ``f(x, rng=rng)`` and returns ``[output, elapsed units]``."""

    def __init__(self, f: Callable, unit_ns: int, with_output: bool):
        self.f, self.unit_ns, self.with_output = f, int(unit_ns), with_output

    def __call__(self, x, rng=None):
        t0 = time.perf_counter_ns()
        out = self.f(x, rng=rng)
        elapsed = (time.perf_counter_ns() - t0) // self.unit_ns
        if not self.with_output:
            return [float(elapsed)]
        return [*np.asarray(out, dtype=float).ravel().tolist(), float(elapsed)]


def timed(f: Callable, *, epsilon: float | None = None, unit_ns: int = 1_000,
          with_output: bool = True, name: str | None = None, **spec: Any) -> Mechanism:
    """A black-box mechanism whose output is ``[f(x, rng=rng)..., time]`` (or the time
    alone): ``time`` is the call's wall-clock duration in units of ``unit_ns`` ns (default
    microseconds). ``f`` takes the input and a NumPy generator ``rng``; ``spec`` is passed
    to :func:`privet.from_blackbox` (neighbors, domain, ...)."""
    nm = name or f"timed({getattr(f, '__name__', 'mechanism')})"
    mech = from_blackbox(_Timed(f, unit_ns, with_output), epsilon=epsilon, name=nm, **spec)
    return mech.replace(output=Output.numeric(length=None), description=(
        "wall-clock time (experimental: depends on the machine and its load)"))


__all__ = ["timed"]
