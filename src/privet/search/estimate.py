"""Correlated estimates of eps(x, x', Phi) (Sec. 4.1 of DP-Finder, Eqs. (5)-(6)).

``M(x)`` and ``M(x')`` are run on the *same* noise: the first run records a tape through
:class:`~privet.core.noise.Replay`, the second replays it, so ``check^i(x)`` and
``check^i(x')`` share their random choices and their estimates are strongly correlated,
which the M-CLT interval of Sec. 4.5 turns into far fewer samples. That interval is a
normal approximation (its measured coverage is below nominal, see
:mod:`privet.stats.intervals`): it only decides when an estimate has enough samples; every
bound privet reports is certified on a fresh sample with Clopper-Pearson bounds instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.events import Event
from ..core.mechanism import Mechanism
from ..core.noise import Replay, Sampler, Tape
from ..stats.intervals import EpsInterval, Moments, eps_interval, moments
from .relaxed import DEFAULT_C, Relaxed, soft_contains

__all__ = ["Estimate", "adaptive_estimate", "correlated_estimate", "hard_checks", "record",
           "soft_probability"]

N_START = 2000
TARGET_DIAMETER = 4e-3
N_CAP = 1 << 17


@dataclass
class Estimate:
    """The estimate of one triple: moments, the interval, and the tape it was drawn from."""

    moments: Moments
    interval: EpsInterval
    tape: Tape

    @property
    def epsilon(self) -> float:
        return self.moments.epsilon

    @property
    def n(self) -> int:
        return self.moments.n


def record(mech: Mechanism, x: np.ndarray, n: int, rng: np.random.Generator,
           args: Mapping[str, Any] | None = None) -> tuple[Tape, np.ndarray]:
    """Run ``M(x)`` on n fresh samples and keep the tape of its draws (a replay draws
    afresh what the tape cannot give it: :class:`~privet.core.noise.Replay`)."""
    rep = Replay(Sampler(rng, n), fresh=True)
    out = mech.run(rep, x, args, check_input=False)
    return rep.tape, out


def _replay(tape: Tape, n: int) -> Replay:
    rep = Replay(tape)
    rep.size = n
    return rep


def hard_checks(mech: Mechanism, tape: Tape, n: int, x: np.ndarray, event: Event,
                args: Mapping[str, Any] | None = None,
                rng: np.random.Generator | None = None) -> np.ndarray:
    """``check^i(x)`` for every recorded sample i: the event's indicator on M(x) under the
    tape (a randomized boundary's coins from ``rng``)."""
    out = mech.run(_replay(tape, n), x, args, check_input=False)
    return event.indicator(out, rng)


def soft_probability(mech: Mechanism, tape: Tape, n: int, x: np.ndarray, event: Event,
                     args: Mapping[str, Any] | None = None, c: float = DEFAULT_C) -> float:
    """``mean_i dcheck^i(x)``: the smooth surrogate of Pr[M(x) in Phi] (Sec. 5.1, Eq. (11))."""
    out = mech.run(Relaxed(c, _replay(tape, n)), x, args, check_input=False)
    return float(np.mean(soft_contains(event, out, c)))


def correlated_estimate(mech: Mechanism, x, x2, event: Event, n: int,
                        rng: np.random.Generator | int | None = None,
                        args: Mapping[str, Any] | None = None, method: str = "mclt",
                        confidence: float = 0.9) -> Estimate:
    """eps^(x, x', Phi) of Eq. (6) from n correlated samples, with its interval."""
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    xa = np.asarray(x, dtype=float)
    xb = np.asarray(x2, dtype=float)
    tape, out1 = record(mech, mech.domain.check(xa), n, rng, args)
    s1 = event.contains(out1)
    s2 = hard_checks(mech, tape, n, mech.domain.check(xb), event, args)
    m = moments(s1, s2)
    return Estimate(m, eps_interval(m, method, confidence), tape)


def adaptive_estimate(mech: Mechanism, x, x2, event: Event, rng: np.random.Generator,
                      args: Mapping[str, Any] | None = None, method: str = "mclt",
                      confidence: float = 0.9, target: float = TARGET_DIAMETER,
                      n_start: int = N_START, n_cap: int = N_CAP) -> Estimate:
    """Sec. 6.1 of DP-Finder: start at ``n_start`` samples and double until the interval's
    diameter is below ``target`` (default 4e-3, i.e. Delta_eps <= 2e-3) or n reaches
    ``n_cap``. Each round draws a fresh tape. When either probability is estimated as 0
    the estimate is returned at once: 0/0 is skipped by the search, p' = 0 < p is kept as a
    candidate infinity (Sec. 5.2, edge cases)."""
    n = int(n_start)
    while True:
        est = correlated_estimate(mech, x, x2, event, n, rng, args, method, confidence)
        m = est.moments
        if m.p1 == 0 or m.p2 == 0:  # 0/0 (skipped) or +-inf (a candidate): no width to shrink
            return est
        if est.interval.diameter < target or n >= n_cap:
            return est
        n = min(2 * n, int(n_cap))
