"""Float-exact events and their statistical relaxations, for detect and search.

* :class:`Unreachable` -- "the output is a double that ``M(D1)`` cannot produce", decided
  exactly per output by :mod:`privet.floats.reach`. Its probability under D1 is 0, so any
  output of D2 in it witnesses ε = ∞; ``detect.test_event`` and ``search.confirm`` count it
  like any other event.
* Feature views (:func:`view`) for black boxes, whose sampler cannot be inverted: the
  mechanism's outputs mapped to one integer per output, on which detect's and search's own
  event spaces (values, intervals) then work:

  - ``trailing_zeros``: the output's position on its ulp grid (how many low significand
    bits are zero). ``x + noise`` rounds to the grid of the larger of the two, so near 0
    the outputs of ``x = 1`` sit on a coarser grid than those of ``x = 0`` (Mironov, CCS
    2012, Sec. 3);
  - ``granularity``: the exponent of the output's lowest set bit (the coarsest power-of-two
    lattice it lies on);
  - ``low_bits``: the ``k`` least significant mantissa bits;
  - ``residue``: the output's residue against a lattice ``Λ`` (0 on the lattice, else one
    of ``bins`` bins), e.g. the grid an input-dependent rounding leaves the outputs on.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from ..core import bits
from ..core.errors import ParameterError
from ..core.events import Event
from ..core.mechanism import Mechanism, Output
from .reach import UNREACHABLE, additive

FEATURES = ("trailing_zeros", "granularity", "low_bits", "residue")


@dataclasses.dataclass(frozen=True, eq=False)
class Unreachable(Event):
    """Outputs that ``mechanism`` on ``d1`` provably cannot produce (exact inversion of its
    declared sampler; undecided outputs count as outside the event)."""

    kind: ClassVar[str] = "unreachable"
    mechanism: Mechanism
    d1: tuple
    args: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "_inverse", additive(self.mechanism, self.d1, self.args))

    def contains(self, outputs):
        out = np.asarray(outputs, dtype=np.float64)
        ys = out.reshape(len(out), -1)
        keys = np.ascontiguousarray(ys).view(np.int64)
        if keys.shape[1] == 1:
            uniq, inv = np.unique(keys[:, 0], return_inverse=True)
            rows = uniq.view(np.float64)
        else:
            uniq, inv = np.unique(keys, axis=0, return_inverse=True)
            rows = uniq.view(np.float64)
        status = self._inverse.check(rows).status
        return (status == UNREACHABLE)[inv.ravel()]

    def describe(self):
        d1 = ", ".join(f"{v:g}" for v in self.d1)
        return f"ω is a double that M([{d1}]) cannot output (exact)"

    def spec(self):
        return {"kind": "unreachable", "text": self.describe(), "d1": list(self.d1)}


class _FeatureRunner:
    """Picklable: the wrapped runner's outputs mapped through a feature."""

    def __init__(self, fn: Any, feature: str, params: dict):
        self.fn, self.feature, self.params = fn, feature, dict(params)

    def __call__(self, noise, x, **kw):
        return feature_codes(self.fn(noise, x, **kw), self.feature, **self.params)


def feature_codes(outputs, feature: str, *, k: int = 4, lattice: float = 1.0,
                  bins: int = 8) -> np.ndarray:
    """One integer per output entry (see the module docstring)."""
    out = np.asarray(outputs, dtype=np.float64)
    if feature == "trailing_zeros":
        return bits.trailing_zeros(out)
    if feature == "granularity":
        return np.clip(bits.granularity(out), -1100, 1100)
    if feature == "low_bits":
        return bits.low_bits(out, k)
    if feature == "residue":
        return bits.lattice_residue(out, lattice, bins)
    raise ParameterError(f"unknown float feature {feature!r}; use one of {', '.join(FEATURES)}.")


def view(mechanism: Mechanism, feature: str = "trailing_zeros", **params: Any) -> Mechanism:
    """``mechanism`` seen through a float feature: the same inputs, arguments and claim, its
    outputs replaced by integer feature codes (post-processing, so the claimed ε still
    applies). The view can only be sampled; detect and search test it as a black box.

    ``params``: ``k`` (low_bits, default 4), ``lattice`` and ``bins`` (residue, default
    1.0 and 8)."""
    if feature not in FEATURES:
        raise ParameterError(f"unknown float feature {feature!r}; use one of "
                             f"{', '.join(FEATURES)}.")
    feature_codes(np.zeros(1), feature, **params)  # bad parameters fail here, in one sentence
    label = feature + "".join(f",{k}={v:g}" for k, v in sorted(params.items()))
    categories = None
    if feature == "low_bits":
        categories = tuple(range(1 << int(params.get("k", 4))))
    elif feature == "residue":
        categories = tuple(range(int(params.get("bins", 8)) + 1))
    width = mechanism.output.length
    output = (Output.categorical(categories, length=width) if categories is not None
              and len(categories) <= 48 else Output.numeric(length=width, integer=True))
    return mechanism.replace(fn=_FeatureRunner(mechanism.fn, feature, params),
                             name=f"{mechanism.name}|{label}", kind="vectorized"
                             if mechanism.kind == "native" else mechanism.kind,
                             output=output, true_epsilon=None)


__all__ = ["FEATURES", "Unreachable", "feature_codes", "view"]
