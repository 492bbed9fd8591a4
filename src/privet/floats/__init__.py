"""``privet.floats``: the doubles a mechanism really outputs (a layer below the engines).

Every engine treats outputs as real numbers; real mechanisms run on IEEE doubles, where the
most damaging bugs of deployed DP libraries live (Mironov, CCS 2012; Jin, McMurtry,
Rubinstein, Ohrimenko, S&P 2022; Casacuberta, Shoemate, Vadhan, Wagaman, CCS 2022). This
layer decides those questions exactly where it can:

* :func:`porosity` -- outputs of ``M(D2)`` that ``M(D1)`` provably cannot produce: ε = ∞
  with a replayable witness (:class:`~privet.core.results.PorosityResult`);
* :func:`reachable` -- can ``M(D)`` output exactly these doubles? (exact inversion of the
  declared sampler, or a sighting in a seeded sample);
* :func:`sum_sensitivity` -- neighbouring datasets whose float sum moves by more than the
  declared sensitivity (:class:`~privet.core.results.SensitivityResult`);
* :class:`Unreachable` -- the exact event for ``detect.test_event``/``search.confirm``;
  :func:`view` -- a mechanism seen through a float feature (trailing zeros, granularity,
  low bits, lattice residue), the statistical relaxation for black boxes;
* :func:`timed` -- (optional) wall-clock time as part of the output.

``privet.implementation`` hands these findings to detect and search (the engines sit above
this layer); ``privet floats ...`` runs them from the command line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import bits
from .events import FEATURES, Unreachable, feature_codes, view
from .porosity import porosity
from .reach import (
    REACHABLE,
    UNDECIDED,
    UNREACHABLE,
    Verdicts,
    additive,
    noise_interval,
    sighting,
)
from .samplers import INVERSES, ziggurat_tables
from .summation import declared_default, sum_sensitivity
from .timing import timed


def reachable(mechanism: Any, x: Any, outputs: Any, *, args: dict | None = None,
              method: str = "auto", sight: int = 200_000, seed: int = 0,
              ulps: float = 4) -> Verdicts:
    """Whether ``mechanism`` on input ``x`` can output each of ``outputs`` exactly.

    ``method='exact'`` inverts the declared sampler (native mechanisms ``f(D) + noise``),
    ``'sighting'`` looks each output up among ``sight`` seeded outputs, ``'auto'`` tries
    exact first. Returns :class:`~privet.floats.reach.Verdicts`: ``status`` per output
    (``REACHABLE`` 1, ``UNREACHABLE`` 0, ``UNDECIDED`` -1), how each was decided, and the
    witness (generator words, or the sample position).
    """
    from ..core.errors import ParameterError, UnsupportedError
    from ..core.mechanism import as_mechanism

    mech = as_mechanism(mechanism)
    ys = np.asarray(outputs, dtype=np.float64)
    if ys.ndim == 0:
        ys = ys.reshape(1)
    if method not in ("auto", "exact", "sighting"):
        raise ParameterError(f"method must be 'auto', 'exact' or 'sighting', got {method!r}.")
    if method in ("auto", "exact"):
        try:
            return additive(mech, x, args).check(ys, ulps=ulps)
        except UnsupportedError:
            if method == "exact":
                raise
    return sighting(mech, mech.domain.check(x), ys, n=sight, seed=seed, args=args)


__all__ = ["FEATURES", "INVERSES", "REACHABLE", "UNDECIDED", "UNREACHABLE", "Unreachable",
           "Verdicts", "bits", "declared_default", "feature_codes", "noise_interval",
           "porosity", "reachable", "sum_sensitivity", "timed", "view", "ziggurat_tables"]
