"""Whether a mechanism draws all of its randomness from privet's noise object, and
returns what it declares.

Every interpreter of a mechanism written against the noise API (exact enumeration, the BDD
compiler, Replay's correlated samples) sees only the draws the mechanism asks ``noise``
for. Randomness taken anywhere else (``np.random``, ``random``, a generator of its own) is
invisible to them: enumeration then sees a deterministic function and reports an "exact"
ε of ∞ for randomized response, and a replayed neighbor does not share that noise.
:func:`check_noise_only` runs the mechanism twice on one input with the same seed; a
mechanism whose randomness all comes from ``noise`` gives the same outputs both times. It
then runs it once with another seed: outputs that vary from sample to sample but repeat
exactly under a new seed come from a generator seeded inside the mechanism or from answers
cached between calls (black boxes included), which no engine may count as fresh draws.
The same probe's outputs are checked against the declared output schema
(:func:`check_declared_output`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import MechanismError, PrivetError
from .noise import Sampler

__all__ = ["check_declared_output", "check_noise_only", "probe_input"]

PROBE_ROWS = 64
PROBE_SEED = 20240611


def probe_input(mech: Any, length: int | None = None) -> np.ndarray | None:
    """An input of ``mech``'s domain to probe it on (the value in its bounds closest to 0,
    repeated ``length`` times or the domain's own length, else once); None when the domain
    gives none."""
    dom = mech.domain
    n = length if length is not None else dom.length
    if isinstance(n, tuple):
        n = n[0]
    n = 1 if n is None else int(n)
    if n < 1:
        return None
    value = min(max(0.0, dom.low), dom.high)
    if dom.integer:
        value = math.ceil(value) if value <= dom.high else value
    try:
        return dom.check(np.full(n, value))
    except PrivetError:
        return None


def check_noise_only(mech: Any, x: Any = None, args: Mapping[str, Any] | None = None,
                     length: int | None = None) -> list[str]:
    """Raise :class:`MechanismError` when a mechanism's randomness is not what the engines
    assume, on ``x`` (default :func:`probe_input`):

    * written against the noise API, it gives different outputs for the same noise draws:
      it draws randomness outside ``noise``;
    * of any kind, its outputs vary from sample to sample but come out the same for two
      different seeds: a generator seeded inside it, or answers cached between calls, so
      privet's "fresh" samples would repeat the same draws and a certificate read off them
      would count one draw many times (a cached Laplace count certified ε ≥ 8.5 when its
      true ε is 1) -- a mechanism without randomness (every sample alike) passes;

    then check its outputs against its declared schema (:func:`check_declared_output`).
    Mechanisms that fail on the probe (the engine reports that itself) and inputs outside
    the domain pass unchecked.

    Returns notes for the result: a mechanism not written against the noise API whose
    varying outputs differ between two runs with the same seed draws randomness privet
    does not seed (``np.random.default_rng()`` without a seed, a library's own generator).
    Its samples are fresh, so every result on them stands, but the run's seed does not
    replay it, and the note says so (:data:`UNSEEDED`)."""
    kind = getattr(mech, "kind", None)
    try:
        data = probe_input(mech, length) if x is None else mech.domain.check(x)
    except PrivetError:
        return []
    if data is None:
        return []
    rows = PROBE_ROWS if kind in ("native", "vectorized") else PROBE_ROWS // 4  # a call each
    # twice with one seed, then once with another (compared with the first)
    try:
        a, b, d = [np.asarray(mech.run(Sampler(np.random.default_rng(s), rows), data, args,
                                       check_input=False))
                   for s in (PROBE_SEED, PROBE_SEED, PROBE_SEED + 1)]
    except PrivetError:
        return []
    replayed = _same(a, b)
    if kind == "native" and not replayed:
        raise MechanismError(
            f"mechanism {mech.name!r} gave different outputs for the same noise draws "
            f"(on input {data.tolist()}), so it draws randomness outside privet's noise "
            "object (np.random, random or a generator of its own), which privet cannot "
            "see; draw it from noise (noise.uniform, noise.laplace, ...), or test a "
            "version without the noise argument as a black box (privet.from_blackbox, "
            "privet.from_vectorized).")
    if _varies(a) and _same(a, d):
        where = ("privet's noise object" if kind == "native" else
                 "the generator privet passes it, NumPy's global generator or one created "
                 "unseeded per call")
        raise MechanismError(
            f"mechanism {mech.name!r} returned the same varying outputs for two different "
            f"seeds (on input {data.tolist()}), so its randomness is not fresh (a generator "
            "seeded inside it, or answers cached between calls) and its samples would repeat "
            f"the same draws; draw its randomness from {where}.")
    check_declared_output(mech, a, data)
    # a black box the seed does not replay: its samples are fresh, the result says so
    return [] if replayed or not _varies(a) else [UNSEEDED.format(name=mech.name)]


UNSEEDED = ("the seed does not replay {name!r}: two runs with the same seed gave different "
            "outputs, so it draws randomness privet does not seed (np.random.default_rng() "
            "without a seed, a library's own generator); its samples are still fresh, so "
            "the result stands, but to replay it draw from the generator privet passes as "
            "rng= (or NumPy's global one)")


VARYING_ROWS = 4  # rows unlike the commonest row, for outputs that "vary" (see _varies)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    # floats within round-off count as the same: a threaded BLAS may sum in another order
    # from run to run, while randomness taken elsewhere changes outputs wholesale
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
    try:
        return bool(np.array_equal(a, b))
    except (TypeError, ValueError):
        return False


def _varies(a: np.ndarray) -> bool:
    """At least :data:`VARYING_ROWS` rows unlike the commonest one. Two fresh runs that vary
    so agree row for row by chance with probability at most 4e-5 at 16 rows (one call each
    for a per-sample black box; two values of probabilities 0.72 and 0.28 are the worst
    case) and 7e-8 at 64 rows."""
    if a.ndim == 0 or len(a) < 2 * VARYING_ROWS:
        return False
    try:
        rows = np.asarray(a, dtype=float).reshape(len(a), -1)
    except (TypeError, ValueError):
        return False
    _, counts = np.unique(rows, axis=0, return_counts=True)
    return len(a) - int(counts.max()) >= VARYING_ROWS


def check_declared_output(mech: Any, out: np.ndarray, x: Any = None) -> None:
    """Raise :class:`MechanismError` when outputs of ``mech`` contradict its declared
    categorical output: a value outside ``output.categories`` (sentinels aside; a row's
    length may follow the input's, so it is not checked). Exact inference and the events
    read the declaration, so a silent mismatch would be analysed as something else."""
    spec = getattr(mech, "output", None)
    if spec is None:
        return
    rows = np.asarray(out)
    if spec.categories is None or spec.kind != "categorical":
        return
    try:
        allowed = np.asarray([float(c) for c in spec.categories], dtype=float)
        values = rows.astype(float, copy=False).ravel()
    except (TypeError, ValueError):
        return
    bad = values[np.isfinite(values) & ~np.isin(values, allowed)]
    if bad.size:
        raise MechanismError(
            f"mechanism {mech.name!r} declares the output values "
            f"{', '.join(str(c) for c in spec.categories)} but returned {bad[0]:g} (on input "
            f"{np.asarray(x).tolist()}); return only declared values or declare output="
            "privet.Output.categorical(...) with every value it takes.")
