"""Implementation attacks end to end: what :mod:`privet.floats` finds, certified by the engines.

:mod:`privet.floats` is a layer below the engines: it decides which doubles a mechanism can
output and searches float aggregations for neighbours that move too much. This module
(above the engines, like :mod:`privet.suite`) hands its findings to them:

* :func:`certify_porosity` -- the exact event "a double ``M(D1)`` cannot output" of a
  porosity witness, tested by ``detect.test_event`` (StatDP's hypothesis test, Algorithm 2)
  and confirmed by ``search.confirm`` (DP-Finder's certified confirmation): counts
  ``0`` under D1 and ``k > 0`` under D2;
* :func:`sensitivity` -- :func:`privet.floats.sum_sensitivity` on a clamped-sum mechanism,
  then ``detect`` on the pair it found (the StatDP test with the pair as its only input)
  and ``search.confirm`` of detect's event: "ε ≥ L with confidence 1 - α" on the very
  mechanism whose noise was calibrated to the declared sensitivity.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

import numpy as np

from . import floats
from .core.errors import PrivetError, UnsupportedError
from .core.events import from_spec
from .core.mechanism import Mechanism, as_mechanism
from .core.results import Bound, Counterexample, PorosityResult, SensitivityResult


def _bound(mech: Mechanism, d1, d2, event, conf: dict, confidence: float, seed,
           seconds: float) -> Bound:
    """DP-Finder's confirmation of one triple as a :class:`Bound`."""
    witness = Counterexample(
        mechanism=mech.name, d1=tuple(np.asarray(d1).tolist()),
        d2=tuple(np.asarray(d2).tolist()), args={}, event=event.describe(),
        event_spec=event.spec(), counts=conf.get("counts"),
        n=(conf["n"], conf["n"]) if conf.get("n") else None,
        probabilities=conf.get("probabilities"), epsilon_witnessed=conf["value"],
        confidence=confidence, exact=bool(conf["exact"]), seed=seed,
        details={"method": conf["method"], "unbounded": conf.get("unbounded", False)})
    return Bound(mechanism=mech.name, value=float(conf["value"]), confidence=confidence,
                 method=conf["method"], exact=bool(conf["exact"]), witness=witness,
                 claimed_epsilon=mech.epsilon, seed=seed, seconds=seconds,
                 details={"unbounded": conf.get("unbounded", False),
                          "confirmation": "search.confirm (DP-Finder's final step)"})


def certify_porosity(mechanism: Any, result: PorosityResult, *, n: int = 20_000,
                     confidence: float = 0.95, seed: int | None = 0) -> PorosityResult:
    """The porosity witness's exact event through detect and search: ``detect.test_event``
    on ``n`` fresh samples of each input, and ``search.confirm`` (independent samples,
    Clopper-Pearson) of the same event. Both count 0 under the input that cannot output the
    event's doubles (exactly 0: the event is decided by exact reachability). Returns
    ``result`` with ``detect`` (a Counterexample) and ``bound`` (a Bound) filled in; the
    witness must come from exact inversion (a native mechanism)."""
    from .detect import test_event
    from .search import confirm

    mech = as_mechanism(mechanism)
    w = result.witness
    if w is None:
        raise PrivetError("this porosity result has no witness to certify: it found no "
                          "output that one input cannot produce.")
    event = floats.Unreachable(mech, w.d1, dict(w.args))
    t0 = time.perf_counter()
    cx = test_event(mech, w.d2, w.d1, event, n=n, seed=seed, alpha=1 - confidence,
                    alternative="greater")  # the event is D1's hole: D2 favoured
    conf = confirm(mech, w.d2, w.d1, event, args=w.args or None, n=n, confidence=confidence,
                   seed=seed, certify="marginal")
    bound = _bound(mech, w.d2, w.d1, event, conf, confidence, seed, time.perf_counter() - t0)
    return dataclasses.replace(result, detect=cx, bound=bound)


def sensitivity(mechanism: Any, *, length: int, aggregate: Any = None,
                bounds: tuple[float, float] | None = None, declared: float | None = None,
                dtype: Any = None, certify: bool = True, n_select: int = 50_000,
                n_final: int = 200_000, confidence: float = 0.95, seed: int | None = 0,
                iterations: int = 400, progress: bool = False) -> SensitivityResult:
    """Search neighbouring datasets of at most ``length`` records whose float aggregate moves
    by more than the declared sensitivity, then certify the violation on ``mechanism``.

    For the library's clamped sums (``floats.clamped_sum``, ``floats.clamped_sum_f32``,
    ``floats.int32_sum``) the aggregate, the clamping bounds, the record type and the
    declared sensitivity (``U - L``, replace one record) come from the mechanism; for
    others give ``aggregate`` (a callable on one dataset, the statistic the noise is added
    to), ``bounds`` and ``declared``. With ``certify``, the pair goes to ``detect`` (the
    StatDP test, ``n_select``/``n_final`` samples) and, when detect finds an event, to
    ``search.confirm`` (a certified lower bound on ε at ``confidence``).
    """
    mech = as_mechanism(mechanism)
    from .mechanisms import floats as library

    batched = False
    if aggregate is None:
        if mech.name not in library.SUMS:
            raise UnsupportedError(
                f"privet does not know the aggregate of {mech.name!r}: pass aggregate= (the "
                "float statistic on one dataset), bounds= and declared=."
            )
        aggregate = library.aggregate(mech)
        batched = True
        bounds = bounds or (mech.args.get("lower", 0.0), mech.args.get("upper", 1.0))
        dtype = dtype or library.SUMS[mech.name]
    if bounds is None:
        raise PrivetError("give the clamping bounds (bounds=(L, U)).")
    kind = mech.neighbors.kind if mech.neighbors.kind in ("replace_one", "add_remove") \
        else "replace_one"
    res = floats.sum_sensitivity(aggregate, bounds=bounds, length=length, neighbors=kind,
                                 declared=declared, dtype=dtype or np.float64,
                                 batched=batched, iterations=iterations, seed=seed,
                                 name=f"{mech.name} (noiseless statistic)")
    res = dataclasses.replace(res, mechanism=mech.name, claimed_epsilon=mech.epsilon)
    if not (certify and res.exceeds):
        return res
    from .detect import detect
    from .search import confirm

    t0 = time.perf_counter()
    det = detect(mech, inputs=[(res.d1, res.d2)], n_select=n_select, n_final=n_final,
                 seed=seed, alpha=1 - confidence, progress=progress)
    bound = None
    cx = det.counterexample
    if cx is not None and cx.event_spec is not None:
        event = from_spec(cx.event_spec)
        conf = confirm(mech, cx.d1, cx.d2, event, n=n_final, confidence=confidence,
                       seed=seed, certify="marginal")
        bound = _bound(mech, cx.d1, cx.d2, event, conf, confidence, seed,
                       time.perf_counter() - t0)
    verdict = res.verdict
    if bound is not None and bound.violates:
        verdict += (f"; certified: ε ≥ {bound.value:.3g} > claimed {mech.epsilon:g} "
                    f"(confidence {confidence:.10g})")
    elif det.counterexample is not None:
        verdict += f"; detect: {det.verdict}"
    else:
        verdict += "; detect found no violation on this pair (the excess is too small " \
                   "for sampling to see)"
    return dataclasses.replace(
        res, verdict=verdict, detect=det, bound=bound,
        details={**res.details, "certify_seconds": time.perf_counter() - t0,
                 "pair_epsilon": None if mech.epsilon is None else
                 mech.epsilon * res.ratio if math.isfinite(res.ratio) else math.inf})


__all__ = ["certify_porosity", "sensitivity"]
