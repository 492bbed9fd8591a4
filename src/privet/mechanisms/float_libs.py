"""Floating-point audits of real DP libraries: their samplers and their bounded sums and means.

Kept apart from :mod:`privet.mechanisms.libs` (the ε audits): this module adds what the
float checks of :mod:`privet.floats` need.

* **Samplers** (black boxes, sampled only): ``diffprivlib.laplace`` (``Laplace``, four
  uniforms per value, Holohan and Braghin's sampler), ``diffprivlib.gaussian`` (``Gaussian``:
  two legacy polar-method normals averaged), ``opendp.laplace`` (``make_laplace``),
  ``opendp.gaussian`` (``make_gaussian``), and ``pydp.laplace`` / ``pydp.gaussian`` (PyDP,
  the Python API of Google's C++ library: ``LaplaceMechanism``, ``GaussianMechanism``).
  :func:`models` gives their reachability models:
  OpenDP documents an exact discrete distribution on the lattice ``2^k`` (``k`` the smallest
  granularity, 2^-1074, by default) rounded to the nearest double, under which every finite
  double is reachable from every input (:func:`privet.floats.reach.lattice_model`);
  diffprivlib's code returns ``value ± scale·noise`` in float64, whose addition gap is exact
  whatever the noise (:func:`privet.floats.reach.addition_model`).
* **Aggregates** (:func:`aggregates`): the noiseless statistic each library adds its noise
  to, computed by the library's own code where it exposes it, with the sensitivity the
  library calibrates to:

  - diffprivlib ``tools.sum(x, bounds=(L, U))``: ``clip_to_bounds`` then ``np.sum``
    (pairwise) in the array's dtype; sensitivity ``U - L`` (its ``LaplaceTruncated``);
    ``tools.mean``: ``np.mean``, sensitivity ``(U - L)/n``;
  - OpenDP ``make_sum`` / ``make_mean`` on a sized bounded vector domain (replace one
    record = symmetric distance 2): the transformation itself, sensitivity ``map(2)``,
    which OpenDP widens by its bound on the rounding error (Casacuberta et al.'s fix).

Importing this module imports neither library; a missing library raises
:class:`~privet.core.errors.UnsupportedError` when an adapter is built.
"""

from __future__ import annotations

import importlib.metadata
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import UnsupportedError
from ..core.mechanism import Domain, Mechanism, Output
from ..core.neighbors import all_differ
from ..core.noise import Noise
from . import libs


@dataclass(frozen=True)
class _GaussianRunner:
    """Picklable black box of a library's Gaussian mechanism on one value."""

    library: str
    name: str
    scale: float

    def __call__(self, noise: Noise, x: np.ndarray, **_: Any) -> np.ndarray:
        libs._need_sampler(noise, self.name)
        n = noise.size
        if self.library == "diffprivlib":
            dpl = libs._import("diffprivlib")
            mech = dpl.mechanisms.Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0,
                                           random_state=libs._random_state(noise))
            value = float(x[0])
            return np.fromiter((mech.randomise(value) for _ in range(n)), float, count=n)
        dp = libs._import("opendp")
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                                  dp.l2_distance(T=float), scale=self.scale)
        return np.asarray(meas([float(x[0])] * n), dtype=float)


@dataclass(frozen=True)
class _PyDPRunner:
    """Picklable black box of PyDP's (Google's DP library) numerical mechanisms, one call per
    sample; PyDP draws from its own secure generator and cannot be seeded."""

    what: str
    name: str

    def __call__(self, noise: Noise, x: np.ndarray, **_: Any) -> np.ndarray:
        libs._need_sampler(noise, self.name)
        nm = _pydp().algorithms.numerical_mechanisms
        mech = nm.LaplaceMechanism(epsilon=1.0, sensitivity=1.0) if self.what == "laplace" \
            else nm.GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0)
        value = float(x[0])
        return np.fromiter((mech.add_noise(value) for _ in range(noise.size)), float,
                           count=noise.size)


def _pydp() -> Any:
    try:
        import pydp
    except Exception as err:  # ImportError, or a broken native extension
        raise UnsupportedError(f"this adapter needs PyDP (python-dp), which cannot be "
                               f"imported ({type(err).__name__}: {err}); install "
                               "privet[libs].") from None
    return pydp


def pydp(what: str) -> Mechanism:
    """PyDP's ``LaplaceMechanism(epsilon=1, sensitivity=1)`` or ``GaussianMechanism(epsilon=1,
    delta=1e-5, sensitivity=1)`` on one value (Google's C++ library: noise on a
    power-of-two granularity), sampled only."""
    _pydp()
    version = importlib.metadata.version("python-dp")
    return Mechanism(
        fn=_PyDPRunner(what, f"pydp.{what}"), name=f"pydp.{what}", epsilon=1.0,
        delta=0.0 if what == "laplace" else 1e-5, neighbors=all_differ(1.0),
        domain=Domain(length=1), output=Output.numeric(), kind="blackbox",
        source=f"PyDP {version}", passes_epsilon=False,
        description=f"PyDP {what} mechanism (Google's differential privacy library)")


def gaussian(library: str) -> Mechanism:
    """The library's Gaussian mechanism on one value (σ of diffprivlib's ``Gaussian`` at
    ε = 1, δ = 1e-5, Δ = 1; OpenDP ``make_gaussian`` with the same σ), sampled only."""
    libs._import(library)
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5))
    return Mechanism(
        fn=_GaussianRunner(library, f"{library}.gaussian", sigma), name=f"{library}.gaussian",
        epsilon=1.0, delta=1e-5, neighbors=all_differ(1.0), domain=Domain(length=1),
        output=Output.numeric(), kind="vectorized" if library == "opendp" else "blackbox",
        source=libs._source(library), passes_epsilon=False,
        description=f"{library} Gaussian mechanism (sigma = {sigma:.4g})")


def samplers() -> dict[str, Mechanism]:
    """The Laplace and Gaussian samplers of the installed libraries, name -> Mechanism."""
    out: dict[str, Mechanism] = {}
    for library in libs.LIBRARIES:
        if not libs.available(library):
            continue
        out[f"{library}.laplace"] = libs.get(f"{library}.laplace")
        out[f"{library}.gaussian"] = gaussian(library)
    try:
        out["pydp.laplace"], out["pydp.gaussian"] = pydp("laplace"), pydp("gaussian")
    except UnsupportedError:
        pass
    return out


def models() -> dict[str, Callable]:
    """Reachability models of the library samplers: OpenDP's documented lattice samplers
    (every double reachable), and diffprivlib's code, which returns ``value - scale * noise``
    (``Laplace``) or ``value + noise * scale`` (``Gaussian``) in float64 -- the addition gap
    then decides exactly which outputs one value can never produce."""
    from ..floats.reach import addition_model, lattice_model

    return {"opendp.laplace": lattice_model(-1074, "OpenDP's make_laplace"),
            "opendp.gaussian": lattice_model(-1074, "OpenDP's make_gaussian"),
            "diffprivlib.laplace": addition_model(label="diffprivlib's Laplace.randomise"),
            "diffprivlib.gaussian": addition_model(label="diffprivlib's Gaussian.randomise")}


@dataclass(frozen=True)
class Aggregate:
    """A library's noiseless statistic with the sensitivity it declares for ``length``."""

    name: str
    library: str
    function: Callable[[np.ndarray], float]
    bounds: tuple[float, float]
    declared: float
    neighbors: str
    dtype: Any
    length: int
    description: str

    @property
    def source(self) -> str:
        return libs._source(self.library)


def _diffprivlib_sum(bounds, dtype, mean: bool) -> Callable[[np.ndarray], float]:
    dpl = libs._import("diffprivlib")

    def f(x: np.ndarray) -> float:
        arr = dpl.validation.clip_to_bounds(np.ravel(np.asarray(x, dtype=dtype)), bounds)
        return float(np.mean(arr) if mean else np.sum(arr))  # what tools.sum/mean reduce

    return f


def _opendp_transform(kind: str, bounds, length: int, dtype: str):
    dp = libs._import("opendp")
    domain = dp.vector_domain(dp.atom_domain(bounds=tuple(float(b) for b in bounds), T=dtype),
                              size=int(length))
    make = dp.t.make_sum if kind == "sum" else dp.t.make_mean
    return make(domain, dp.symmetric_distance())


def aggregates(length: int = 1024, bounds: tuple[float, float] = (0.0, 1.0)
               ) -> dict[str, Aggregate]:
    """The bounded sums and means of the installed libraries for datasets of ``length``
    records within ``bounds`` (replace one record), name -> :class:`Aggregate`."""
    lo, hi = (float(b) for b in bounds)
    out: dict[str, Aggregate] = {}
    if libs.available("diffprivlib"):
        for dtype, tag in ((np.float64, ""), (np.float32, "_f32")):
            out[f"diffprivlib.sum{tag}"] = Aggregate(
                f"diffprivlib.sum{tag}", "diffprivlib", _diffprivlib_sum((lo, hi), dtype, False),
                (lo, hi), hi - lo, "replace_one", dtype, length,
                f"tools.sum(x, bounds=({lo:g}, {hi:g})) on {np.dtype(dtype).name} data")
        out["diffprivlib.mean"] = Aggregate(
            "diffprivlib.mean", "diffprivlib", _diffprivlib_sum((lo, hi), np.float64, True),
            (lo, hi), (hi - lo) / length, "replace_one", np.float64, length,
            f"tools.mean(x, bounds=({lo:g}, {hi:g}))")
    if libs.available("opendp"):
        for kind, dtype, tag in (("sum", "f64", ""), ("sum", "f32", "_f32"),
                                 ("mean", "f64", "")):
            t = _opendp_transform(kind, (lo, hi), length, dtype)
            np_dtype = np.float32 if dtype == "f32" else np.float64

            def f(x, t=t, np_dtype=np_dtype) -> float:
                return float(t([float(v) for v in np.asarray(x, dtype=np_dtype)]))

            out[f"opendp.{kind}{tag}"] = Aggregate(
                f"opendp.{kind}{tag}", "opendp", f, (lo, hi), float(t.map(2)), "replace_one",
                np_dtype, length,
                f"make_{kind} on a sized ({length}) bounded {dtype} domain; sensitivity map(2)")
    return out


__all__ = ["Aggregate", "aggregates", "gaussian", "models", "pydp", "samplers"]
