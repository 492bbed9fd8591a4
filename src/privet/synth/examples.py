"""fixParams and selectExamples (KOLAHAL Sec. IV.B).

fixParams fixes the non-private arguments and ε to γ (the sketch's ``epsilon``, ``length``
and argument defaults; the varied settings of Ex_test come from ``Sketch.test_settings``).
selectExamples concretizes the sketch along a set Dir of directions in noise space (the
all-ones vector and the unit vectors, Sec. IV.B: "with n = 2 noise locations we choose
{<1,1>, <1,0>, <0,1>}"; a 0 entry is ⊥), line-searches each direction over a few scales,
tests every concretization at γ(ε) and keeps the counterexamples whose p-value lies in the
zone of confusion Conf = [0.05, 0.9] (appendix):

    Ex = {(d1, d2, E) | (<d1, d2, E>, p) = test(γ(M^c), γ(ε)), p ∈ Conf, c ∈ Dir}.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.events import Event, from_spec
from ..core.mechanism import Mechanism
from .quicktest import Witness, test_pairs
from .sketch import Sketch, _args

ZONE = (0.05, 0.9)
LINE = (0.5, 1.0, 2.0, 4.0, 8.0)   # multiples of 1/ε along each direction


@dataclass(frozen=True)
class Example:
    """A challenging example <d1, d2, E> at setting ``setting`` (index into the settings)."""

    setting: int
    d1: tuple
    d2: tuple
    event: Event
    p_value: float
    loss: float
    found_at: tuple          # the concrete scales whose test produced it
    source: str = "internal"

    def key(self) -> tuple:
        return (self.setting, self.d1, self.d2, self.event.describe())

    def describe(self) -> str:
        return f"d1={list(self.d1)}, d2={list(self.d2)}, E: {self.event.describe()}"


def fix_params(sketch: Sketch) -> list[dict[str, Any]]:
    """fixParams: γ first, then the varied settings used for Ex_test."""
    return sketch.test_settings()


def directions(n: int) -> list[tuple[float, ...]]:
    """Dir: the all-ones direction and the n unit directions (0 = ⊥)."""
    dirs = [tuple([1.0] * n)]
    if n > 1:
        for i in range(n):
            dirs.append(tuple(1.0 if j == i else 0.0 for j in range(n)))
    return dirs


def example_pairs(sketch: Sketch, setting: Mapping[str, Any]) -> list:
    """The neighbor relation's representative pairs (StatDP Table 1) at the setting's length,
    plus the patterns "one above rest below" and "one below rest above" with the odd entry
    moved last: the table puts it first, but for order-dependent sketches (SVT, AboveT) the
    worst case has the queries before the odd one pushed the other way."""
    from ..core.neighbors import InputPair

    # inside the sketch's domain (a pair privet makes must not be refused as the user's bad
    # input), with a replaced or added record moved across a bounded domain
    pairs = list(sketch.neighbors.pairs(lengths=(int(setting["length"]),),
                                        domain=sketch.domain))
    extra = []
    for p in pairs:
        if p.pattern.startswith(("one above rest below", "one below rest above")):
            extra.append(InputPair(p.d1[::-1].copy(), p.d2[::-1].copy(),
                                   p.pattern + " (reversed)"))
    return pairs + extra


Tester = Callable[[Mechanism, Mapping[str, Any], list, float, int], list[Witness]]


def internal_tester(n_select: int, n_final: int) -> Tester:
    def run(mech, args, pairs, epsilon, seed):
        return test_pairs(mech, args, pairs, epsilon, n_select=n_select, n_final=n_final,
                          seed=seed)
    return run


def detect_tester(n_select: int, n_final: int) -> Tester:
    """Use ``privet.detect`` and every (pair, event) candidate it tested."""
    from ..detect import detect  # imported lazily: detect is optional at import time

    def run(mech, args, pairs, epsilon, seed):
        inputs = [(np.asarray(p.d1), np.asarray(p.d2)) for p in pairs]
        res = detect(mech, epsilon, inputs=inputs, args=dict(args), n_select=n_select,
                     n_final=n_final, seed=seed, max_candidates=len(inputs))
        out = []
        for c in getattr(res, "candidates", ()) or ():
            if c.event_spec is None or c.p_value is None:
                continue
            try:
                ev = from_spec(c.event_spec)
            except Exception:
                continue
            counts = tuple(int(v) for v in (c.counts or (0, 0)))
            n = int((c.n or (n_final,))[0])
            out.append(Witness(np.asarray(c.d1, float), np.asarray(c.d2, float), ev, counts, n,
                               epsilon, float(c.p_value)))
        return out
    return run


def select_examples(sketch: Sketch, settings: Sequence[Mapping[str, Any]], index: int, *,
                    tester: Tester, seed: int = 0, zone: tuple[float, float] = ZONE,
                    line: Sequence[float] = LINE, max_examples: int = 24,
                    boundary_examples: int = 4) -> list[Example]:
    """selectExamples at setting ``index``: counterexamples with p in the zone of confusion.

    Extension of the paper's rule: along each direction, the ``boundary_examples`` strongest
    violations at the largest scale that still violates are kept too (``source`` is
    "boundary"). On a coarse line the tight point may fall between a clear violation and a
    clear pass, so the zone stays empty, while the last violation is exactly the example
    that separates private from non-private scales (e.g. SmartSum's two-coordinate events).
    When nothing is kept at all, the witnesses with p closest to the zone are used.
    """
    setting = settings[index]
    eps = float(setting["epsilon"])
    args = _args(setting)
    pairs = example_pairs(sketch, setting)
    found: dict[tuple, Example] = {}
    near: list[tuple[float, Example]] = []
    k = 0
    for direction in directions(sketch.n_holes):
        boundary: list[Example] = []
        for t in line:
            scales = tuple(t / eps * d for d in direction)
            mech = sketch.concrete(scales, epsilon=eps)
            k += 1
            violating: list[Example] = []
            for w in tester(mech, args, pairs, eps, seed * 1000 + index * 100 + k):
                ex = Example(index, tuple(np.asarray(w.d1).tolist()),
                             tuple(np.asarray(w.d2).tolist()), w.event, w.p_value,
                             w.loss, scales)
                if zone[0] <= w.p_value <= zone[1]:
                    found.setdefault(ex.key(), ex)
                else:
                    dist = zone[0] - w.p_value if w.p_value < zone[0] else w.p_value - zone[1]
                    near.append((dist, ex))
                    if w.p_value < zone[0]:
                        violating.append(ex)
            if violating:
                boundary = violating
        # the violations at the largest scale that still violates along this direction
        for ex in sorted(boundary, key=lambda e: -e.loss)[:boundary_examples]:
            found.setdefault(ex.key(), dataclasses.replace(ex, source="boundary"))
    out = sorted(found.values(), key=lambda e: -abs(e.loss))[:max_examples]
    if not out and near:
        near.sort(key=lambda t: t[0])
        seen: set = set()
        for _, ex in near:
            if ex.key() not in seen and math.isfinite(ex.loss):
                seen.add(ex.key())
                out.append(ex)
            if len(out) >= 4:
                break
    return out
