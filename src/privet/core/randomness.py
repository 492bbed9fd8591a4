"""Whether a mechanism draws all of its randomness from privet's noise object, and
returns what it declares.

Every interpreter of a mechanism written against the noise API (exact enumeration, the BDD
compiler, Replay's correlated samples) sees only the draws the mechanism asks ``noise``
for. Randomness taken anywhere else (``np.random``, ``random``, a generator of its own) is
invisible to them: enumeration then sees a deterministic function and reports an "exact"
ε of ∞ for randomized response, and a replayed neighbor does not share that noise.
:func:`check_noise_only` runs the mechanism twice on one input with the same seed; a
mechanism whose randomness all comes from ``noise`` gives the same outputs both times.
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
                     length: int | None = None) -> None:
    """Raise :class:`MechanismError` when a mechanism written against the noise API gives
    different outputs on ``x`` (default :func:`probe_input`) for the same noise draws: it
    draws randomness outside ``noise``; then check its outputs against its declared schema
    (:func:`check_declared_output`). Black boxes (which bring their own randomness by
    design), mechanisms that fail on the probe (the engine reports that itself) and
    inputs outside the domain pass unchecked."""
    if getattr(mech, "kind", None) != "native":
        return
    try:
        data = probe_input(mech, length) if x is None else mech.domain.check(x)
    except PrivetError:
        return
    if data is None:
        return
    try:
        runs = [mech.run(Sampler(np.random.default_rng(PROBE_SEED), PROBE_ROWS), data, args,
                         check_input=False) for _ in range(2)]
    except PrivetError:
        return
    a, b = (np.asarray(r) for r in runs)
    # floats within round-off count as the same: a threaded BLAS may sum in another order
    # from run to run, while randomness taken elsewhere changes outputs wholesale
    same = a.shape == b.shape and (
        bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)) if a.dtype.kind in "fc"
        else np.array_equal(a, b))
    if same:
        check_declared_output(mech, a, data)
    else:
        raise MechanismError(
            f"mechanism {mech.name!r} gave different outputs for the same noise draws (on "
            f"input {data.tolist()}), so it draws randomness outside privet's noise object "
            "(np.random, random or a generator of its own), which privet cannot see; draw it "
            "from noise (noise.uniform, noise.laplace, ...), or test a version without the "
            "noise argument as a black box (privet.from_blackbox, privet.from_vectorized).")


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
