"""Adapters that turn mechanisms of real DP libraries into privet mechanisms (issue 8).

Two libraries are covered, both optional (``pip install privet[libs]``):

* **IBM diffprivlib** -- ``diffprivlib.laplace`` (``mechanisms.Laplace``),
  ``diffprivlib.geometric`` (``mechanisms.Geometric``), ``diffprivlib.exponential``
  (``mechanisms.Exponential``) and the composed query ``diffprivlib.mean`` (``tools.mean``
  with ``bounds``: clip, mean, truncated Laplace).
* **OpenDP** -- ``opendp.laplace`` (``make_laplace``), ``opendp.geometric``
  (``make_geometric``, the discrete Laplace), ``opendp.exponential`` (``make_noisy_max`` under
  ``max_divergence``: report-noisy-max with exponential noise, which has the output
  distribution of permute-and-flip), and the composed queries ``opendp.sum`` (clamp >> sum >>
  Laplace) and ``opendp.mean`` (sized bounded mean >> Laplace).

The Gaussian family (issue 15; (ε, δ) and zCDP claims):

* ``diffprivlib.gaussian`` (``mechanisms.Gaussian``, the classic σ, which the library
  refuses for ε > 1), ``diffprivlib.gaussian_analytic`` (``GaussianAnalytic``),
  ``diffprivlib.gaussian_discrete`` (``GaussianDiscrete``, integers);
* ``opendp.gaussian`` (``make_gaussian``: a ρ-zCDP claim, ρ = ``map(1)``) and
  ``opendp.gaussian_approx`` (the same measurement through ``make_zCDP_to_approxDP`` and
  ``make_fix_delta(1e-3)``: the (ε, δ) OpenDP itself derives);
* ``pydp.gaussian`` -- Google's differential-privacy library through its Python wrapper
  (package ``python-dp``): ``GaussianMechanism(epsilon, delta, sensitivity).add_noise``.

Misuses, each one argument away from a sound call:

* ``diffprivlib.mean_unbounded``: ``tools.mean`` *without* ``bounds`` (the library warns with
  ``PrivacyLeakWarning`` and takes the bounds from the data);
* ``diffprivlib.exponential_monotonic``: ``Exponential(monotonic=True)`` on utilities that
  move in opposite directions;
* ``opendp.mean_din1``: the sized mean's epsilon read off ``map(1)``, although changing one
  record of a sized dataset is symmetric distance 2;
* ``opendp.exponential_monotonic``: ``linf_distance(monotonic=True)`` on scores that move
  in opposite directions;
* ``diffprivlib.gaussian_histogram``: ``GaussianAnalytic(sensitivity=1)`` applied to each
  count of a two-bin histogram, while replacing a record moves both counts (L2 sensitivity
  sqrt(2));
* ``opendp.gaussian_rho_as_epsilon``: ``make_gaussian``'s ``map(1)`` (a zCDP ρ) read as a
  pure ε, as one would for ``make_laplace``.

Each adapter carries the claimed epsilon exactly as the library states it (diffprivlib: its
``epsilon`` parameter; OpenDP: ``measurement.map(d_in)``), the neighbor relation the
library's guarantee is about (absolute distance ``d_in`` = every answer differs by at most
Delta; ``symmetric_distance`` with ``d_in = 1`` = add or remove one record, ``d_in = 2`` on a
sized domain = replace one record; ``linf_distance`` = every score differs by at most Delta),
the input domain, ``source`` with the library version, and ``true_epsilon`` when it is known.

The adapters are black boxes: the libraries draw their own noise, so they support sampling
only (``privet.detect`` and the black-box mode of ``privet.search``; no Replay, Enumerate or
tracing). Sampling speed:

* diffprivlib's ``randomise`` takes one scalar per call. The runners are picklable and build
  the library objects inside the worker (``kind="blackbox"``: the process-pool executor
  spreads chunks over the cores). Each chunk seeds a ``numpy.random.RandomState`` from the
  chunk's generator and passes it as ``random_state``, so diffprivlib runs replay by seed.
* OpenDP's ``make_laplace`` and ``make_geometric`` over a ``vector_domain`` add
  *independent* noise to every element (their documented vector form), so a batch of ``n``
  samples of a scalar query is one call on a vector of ``n`` copies (``kind="vectorized"``).
  The noisy max and the composed queries return one output per call and are sampled per
  call (``kind="blackbox"``). OpenDP draws from the operating system's secure generator and
  cannot be seeded: OpenDP runs do not replay by seed.

The OpenDP adapters call ``opendp.prelude.enable_features("contrib")`` (a process-wide
switch of OpenDP) because every constructor used here is gated behind it.

Importing this module never imports the libraries; building an adapter without its library
raises :class:`~privet.core.errors.UnsupportedError` ("install privet[libs]").
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import UnsupportedError
from ..core.mechanism import Domain, Mechanism, Output
from ..core.neighbors import Neighbors, add_remove, all_differ, replace_one
from ..core.noise import Noise, Sampler
from ._common import INDEXED, index_categories

LIBRARIES = ("diffprivlib", "opendp")   # the libraries with Laplace-family adapters; plus pydp
_LABEL = {"diffprivlib": "IBM diffprivlib", "opendp": "OpenDP",
          "pydp": "Google differential-privacy (python-dp)"}
_DIST = {"pydp": "python-dp"}  # distribution names that differ from the import name


# -- importing the libraries ------------------------------------------------------------------

def _import(library: str) -> Any:
    """The library's module, or one sentence saying how to install it."""
    try:
        if library == "pydp":
            return importlib.import_module("pydp.algorithms.numerical_mechanisms")
        if library == "opendp":
            module = importlib.import_module("opendp.prelude")
            module.enable_features("contrib")
            return module
        return importlib.import_module(library)
    except Exception as err:  # ImportError, or a library broken by its own dependencies
        raise UnsupportedError(
            f"this adapter needs {_LABEL[library]}, which cannot be imported "
            f"({type(err).__name__}: {err}); install privet[libs]."
        ) from None


def available(library: str) -> bool:
    """True when ``library`` (``diffprivlib`` or ``opendp``) imports."""
    try:
        _import(library)
    except UnsupportedError:
        return False
    return True


def version(library: str) -> str:
    """The installed version of ``library`` (``diffprivlib`` or ``opendp``)."""
    try:
        return importlib.metadata.version(_DIST.get(library, library))
    except importlib.metadata.PackageNotFoundError:
        raise UnsupportedError(
            f"{_LABEL[library]} is not installed; install privet[libs]."
        ) from None


def _source(library: str) -> str:
    return f"{_LABEL[library]} {version(library)}"


def _need_sampler(noise: Noise, name: str) -> None:
    if not isinstance(noise, Sampler):
        raise UnsupportedError(
            f"mechanism {name!r} draws its noise inside a real library: it can only be "
            f"sampled, not run under {type(noise).__name__}."
        )


def _random_state(noise: Noise) -> np.random.RandomState:
    """A legacy RandomState seeded from the chunk's generator (diffprivlib's random_state)."""
    return np.random.RandomState(int(noise.rng.integers(0, 2**32 - 1)))


# -- diffprivlib --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _DiffprivlibRunner:
    """Picklable runner: builds the diffprivlib object in the worker, one call per sample."""

    what: str
    name: str
    sensitivity: float = 1.0
    bounds: tuple[float, float] | None = None
    monotonic: bool = False
    delta: float = 0.0

    def __call__(self, noise: Noise, x: np.ndarray, *, epsilon: float, **_: Any) -> np.ndarray:
        _need_sampler(noise, self.name)
        dpl = _import("diffprivlib")
        rs = _random_state(noise)
        n = noise.size
        if self.what == "laplace":
            mech = dpl.mechanisms.Laplace(epsilon=epsilon, delta=0.0,
                                          sensitivity=self.sensitivity, random_state=rs)
            value = float(x[0])
            return np.fromiter((mech.randomise(value) for _ in range(n)), float, count=n)
        if self.what == "geometric":
            mech = dpl.mechanisms.Geometric(epsilon=epsilon, sensitivity=int(self.sensitivity),
                                            random_state=rs)
            value = int(x[0])
            return np.fromiter((mech.randomise(value) for _ in range(n)), np.int64, count=n)
        if self.what == "exponential":
            mech = dpl.mechanisms.Exponential(epsilon=epsilon, sensitivity=self.sensitivity,
                                              utility=[float(u) for u in x],
                                              monotonic=self.monotonic, random_state=rs)
            return np.fromiter((mech.randomise() for _ in range(n)), np.int64, count=n)
        if self.what in ("gaussian", "gaussian_analytic"):
            cls = dpl.mechanisms.Gaussian if self.what == "gaussian" else \
                dpl.mechanisms.GaussianAnalytic
            mech = cls(epsilon=epsilon, delta=self.delta, sensitivity=self.sensitivity,
                       random_state=rs)
            if len(x) == 1:
                value = float(x[0])
                return np.fromiter((mech.randomise(value) for _ in range(n)), float, count=n)
            vals = [float(v) for v in x]   # one scalar mechanism per entry (a histogram)
            return np.array([[mech.randomise(v) for v in vals] for _ in range(n)])
        if self.what == "gaussian_discrete":
            mech = dpl.mechanisms.GaussianDiscrete(epsilon=epsilon, delta=self.delta,
                                                   sensitivity=int(self.sensitivity),
                                                   random_state=rs)
            value = int(x[0])
            return np.fromiter((mech.randomise(value) for _ in range(n)), np.int64, count=n)
        if self.what == "mean":
            data = np.asarray(x, dtype=float)
            bounds = tuple(self.bounds) if self.bounds is not None else None
            with warnings.catch_warnings():
                # without bounds the library warns (PrivacyLeakWarning) on every call; the
                # adapter's description says so once
                warnings.simplefilter("ignore")
                return np.fromiter(
                    (dpl.tools.mean(data, epsilon=epsilon, bounds=bounds, random_state=rs)
                     for _ in range(n)), float, count=n)
        raise UnsupportedError(f"unknown diffprivlib adapter {self.what!r}.")  # pragma: no cover


def diffprivlib_laplace(epsilon: float = 1.0, sensitivity: float = 1.0) -> Mechanism:
    """``diffprivlib.mechanisms.Laplace(epsilon, sensitivity).randomise(x[0])``.

    epsilon-DP for inputs that differ by at most ``sensitivity`` (the library's definition of
    sensitivity): privet's ``all_differ(sensitivity)`` on one-entry inputs.
    """
    _import("diffprivlib")
    name = "diffprivlib.laplace"
    return Mechanism(
        fn=_DiffprivlibRunner("laplace", name, float(sensitivity)), name=name,
        epsilon=float(epsilon), neighbors=all_differ(float(sensitivity)), domain=Domain(length=1),
        output=Output.numeric(), kind="blackbox", true_epsilon=float(epsilon),
        source=_source("diffprivlib"),
        description=f"diffprivlib Laplace(epsilon={epsilon:g}, sensitivity={sensitivity:g})"
                    ".randomise(x)",
    )


def diffprivlib_geometric(epsilon: float = 1.0, sensitivity: int = 1) -> Mechanism:
    """``diffprivlib.mechanisms.Geometric(epsilon, sensitivity).randomise(x[0])`` on integers.

    The two-sided geometric mechanism, P(Z = k) proportional to exp(-epsilon |k| /
    sensitivity): epsilon-DP for integer inputs that differ by at most ``sensitivity``.
    """
    _import("diffprivlib")
    name = "diffprivlib.geometric"
    return Mechanism(
        fn=_DiffprivlibRunner("geometric", name, float(int(sensitivity))), name=name,
        epsilon=float(epsilon), neighbors=all_differ(float(int(sensitivity))),
        domain=Domain(length=1, integer=True), output=Output.numeric(integer=True),
        kind="blackbox", true_epsilon=float(epsilon), source=_source("diffprivlib"),
        description=f"diffprivlib Geometric(epsilon={epsilon:g}, sensitivity={sensitivity})"
                    ".randomise(x)",
    )


def diffprivlib_exponential(epsilon: float = 1.0, sensitivity: float = 1.0,
                            monotonic: bool = False) -> Mechanism:
    """``diffprivlib.mechanisms.Exponential(epsilon, sensitivity, utility=x).randomise()``.

    McSherry-Talwar: candidate i with probability proportional to exp(epsilon u_i / (2
    sensitivity)); epsilon-DP when every utility changes by at most ``sensitivity``
    (privet's ``all_differ(sensitivity)`` on the utility vector). The output is the index.

    ``monotonic=True`` (the misuse ``diffprivlib.exponential_monotonic``) drops the factor 2,
    which the library allows when adding an individual can only raise every utility; on
    utilities that move in opposite directions (counts by category when one record changes)
    the mechanism is then only 2 epsilon-DP.
    """
    _import("diffprivlib")
    name = "diffprivlib.exponential_monotonic" if monotonic else "diffprivlib.exponential"
    return Mechanism(
        fn=_DiffprivlibRunner("exponential", name, float(sensitivity), monotonic=monotonic),
        name=name, epsilon=float(epsilon), neighbors=all_differ(float(sensitivity)),
        domain=INDEXED, output=Output.categorical(index_categories()), kind="blackbox",
        true_epsilon=float(epsilon) * (2.0 if monotonic else 1.0),
        source=_source("diffprivlib"),
        description=f"diffprivlib Exponential(epsilon={epsilon:g}, sensitivity="
                    f"{sensitivity:g}, utility=x{', monotonic=True' if monotonic else ''})"
                    ".randomise()",
    )


def diffprivlib_mean(epsilon: float = 1.0, bounds: tuple[float, float] | None = (0.0, 10.0)
                     ) -> Mechanism:
    """``diffprivlib.tools.mean(x, epsilon, bounds)``: a composed query.

    With ``bounds = (L, U)`` the library clips the data to the bounds, takes the mean and
    adds Laplace noise of sensitivity (U - L) / n, truncated to [L, U]: epsilon-DP when one
    record is replaced (n is public). With ``bounds=None`` (the misuse
    ``diffprivlib.mean_unbounded``) the library warns with ``PrivacyLeakWarning`` and takes
    the bounds from the data itself; the claimed epsilon is still the ``epsilon`` passed,
    but the noise scale then depends on the data and no epsilon holds (``true_epsilon`` =
    inf: on constant data the output is the exact mean, with probability 1).
    """
    _import("diffprivlib")
    if bounds is None:
        name = "diffprivlib.mean_unbounded"
        desc = (f"diffprivlib tools.mean(x, epsilon={epsilon:g}) without bounds "
                "(PrivacyLeakWarning: bounds taken from the data)")
        true_eps = math.inf
        domain = Domain(length=(1, 1000))
    else:
        lo, hi = float(bounds[0]), float(bounds[1])
        bounds = (lo, hi)
        name = "diffprivlib.mean"
        desc = f"diffprivlib tools.mean(x, epsilon={epsilon:g}, bounds=({lo:g}, {hi:g}))"
        true_eps = float(epsilon)
        domain = Domain(length=(1, 1000))  # any reals: the library clips to the bounds
    return Mechanism(
        fn=_DiffprivlibRunner("mean", name, 1.0, bounds), name=name, epsilon=float(epsilon),
        neighbors=replace_one(), domain=domain, output=Output.numeric(), kind="blackbox",
        true_epsilon=true_eps, source=_source("diffprivlib"), description=desc,
    )


def diffprivlib_gaussian(epsilon: float = 0.5, delta: float = 1e-3, sensitivity: float = 1.0,
                         analytic: bool = False) -> Mechanism:
    """``diffprivlib.mechanisms.Gaussian`` (classic σ; the library refuses ε > 1) or, with
    ``analytic=True``, ``GaussianAnalytic`` (Balle & Wang's σ), ``.randomise(x[0])``:
    (ε, δ)-DP for inputs that differ by at most ``sensitivity``."""
    from ..stats.profiles import analytic_sigma, classic_sigma, gaussian_delta, gaussian_epsilon

    _import("diffprivlib")
    what = "gaussian_analytic" if analytic else "gaussian"
    sigma = analytic_sigma(epsilon, delta, sensitivity) if analytic else \
        classic_sigma(epsilon, delta, sensitivity)
    mu = float(sensitivity) / sigma
    return Mechanism(
        fn=_DiffprivlibRunner(what, f"diffprivlib.{what}", float(sensitivity),
                              delta=float(delta)),
        name=f"diffprivlib.{what}", epsilon=float(epsilon), delta=float(delta),
        neighbors=all_differ(float(sensitivity)), domain=Domain(length=1),
        output=Output.numeric(), kind="blackbox", true_epsilon=gaussian_epsilon(delta, mu),
        true_delta=gaussian_delta(epsilon, mu), source=_source("diffprivlib"),
        description=f"diffprivlib {'GaussianAnalytic' if analytic else 'Gaussian'}("
                    f"epsilon={epsilon:g}, delta={delta:g}, sensitivity={sensitivity:g})"
                    ".randomise(x)")


def diffprivlib_gaussian_histogram(epsilon: float = 1.0, delta: float = 1e-3) -> Mechanism:
    """The misuse ``diffprivlib.gaussian_histogram``: ``GaussianAnalytic(epsilon, delta,
    sensitivity=1)`` on each count of a two-bin histogram. Replacing one record takes one
    from a bin and adds one to the other, so both counts move (``all_differ(1)`` on two
    counts: L2 sensitivity sqrt(2)); the claim holds only for sensitivity 1."""
    from ..stats.profiles import analytic_sigma, gaussian_delta, gaussian_epsilon

    _import("diffprivlib")
    name = "diffprivlib.gaussian_histogram"
    mu = math.sqrt(2) / analytic_sigma(epsilon, delta, 1.0)
    return Mechanism(
        fn=_DiffprivlibRunner("gaussian_analytic", name, 1.0, delta=float(delta)), name=name,
        epsilon=float(epsilon), delta=float(delta), neighbors=all_differ(1.0),
        domain=Domain(length=2, integer=True, low=0), output=Output.numeric(length=2),
        kind="blackbox", true_epsilon=gaussian_epsilon(delta, mu),
        true_delta=gaussian_delta(epsilon, mu), source=_source("diffprivlib"),
        description=f"diffprivlib GaussianAnalytic(epsilon={epsilon:g}, delta={delta:g}, "
                    "sensitivity=1) on each count of a 2-bin histogram (replace one record)")


def diffprivlib_gaussian_discrete(epsilon: float = 1.0, delta: float = 1e-3) -> Mechanism:
    """``diffprivlib.mechanisms.GaussianDiscrete(epsilon, delta, sensitivity=1)
    .randomise(x[0])`` on integers: the discrete Gaussian of Canonne, Kamath, Steinke."""
    from ..stats.profiles import discrete_gaussian_delta

    dpl = _import("diffprivlib")
    name = "diffprivlib.gaussian_discrete"
    scale = dpl.mechanisms.GaussianDiscrete(epsilon=epsilon, delta=delta, sensitivity=1)._scale
    return Mechanism(
        fn=_DiffprivlibRunner("gaussian_discrete", name, 1.0, delta=float(delta)), name=name,
        epsilon=float(epsilon), delta=float(delta), neighbors=all_differ(1.0),
        domain=Domain(length=1, integer=True), output=Output.numeric(integer=True),
        kind="blackbox", true_delta=discrete_gaussian_delta(epsilon, scale * scale),
        source=_source("diffprivlib"),
        description=f"diffprivlib GaussianDiscrete(epsilon={epsilon:g}, delta={delta:g}, "
                    "sensitivity=1).randomise(x)")


# -- Google's library through python-dp --------------------------------------------------------

@dataclass(frozen=True)
class _PyDPRunner:
    """Picklable runner: ``GaussianMechanism(epsilon, delta, sensitivity).add_noise``, one
    call per sample; the library draws from its own secure generator (no seeding)."""

    name: str
    epsilon: float
    delta: float
    sensitivity: float

    def __call__(self, noise: Noise, x: np.ndarray, **_: Any) -> np.ndarray:
        _need_sampler(noise, self.name)
        nm = importlib.import_module("pydp.algorithms.numerical_mechanisms")
        mech = nm.GaussianMechanism(epsilon=self.epsilon, delta=self.delta,
                                    sensitivity=self.sensitivity)
        value = float(x[0])
        return np.fromiter((mech.add_noise(value) for _ in range(noise.size)), float,
                           count=noise.size)


def pydp_gaussian(epsilon: float = 1.0, delta: float = 1e-3, sensitivity: float = 1.0
                  ) -> Mechanism:
    """Google's ``GaussianMechanism(epsilon, delta, sensitivity).add_noise(x[0])`` (python-dp):
    analytic calibration (its σ rounds Balle & Wang's up)."""
    from ..stats.profiles import gaussian_delta, gaussian_epsilon

    _import("pydp")
    nm = importlib.import_module("pydp.algorithms.numerical_mechanisms")
    sigma = nm.GaussianMechanism(epsilon=epsilon, delta=delta, sensitivity=sensitivity).std
    mu = float(sensitivity) / float(sigma)
    name = "pydp.gaussian"
    return Mechanism(
        fn=_PyDPRunner(name, float(epsilon), float(delta), float(sensitivity)), name=name,
        epsilon=float(epsilon), delta=float(delta), neighbors=all_differ(float(sensitivity)),
        domain=Domain(length=1), output=Output.numeric(), kind="blackbox",
        true_epsilon=gaussian_epsilon(delta, mu), true_delta=gaussian_delta(epsilon, mu),
        source=_source("pydp"), passes_epsilon=False,
        description=f"python-dp GaussianMechanism(epsilon={epsilon:g}, delta={delta:g}, "
                    f"sensitivity={sensitivity:g}).add_noise(x)")


# -- OpenDP -------------------------------------------------------------------------------------

def _params(**kw: Any) -> tuple:
    return tuple(sorted(kw.items()))


@functools.lru_cache(maxsize=64)
def _opendp_measurement(what: str, params: tuple, batch: bool = False) -> Any:
    """Build (once per process) the OpenDP measurement ``what`` with ``params``.

    ``batch=True`` gives the vector form of a scalar measurement (independent noise per
    element) used to draw a whole batch in one call.
    """
    dp = _import("opendp")
    p = dict(params)
    if what in ("laplace", "geometric"):
        t = float if what == "laplace" else int
        atom = dp.atom_domain(T=t, nan=False) if t is float else dp.atom_domain(T=t)
        if batch:
            space = dp.vector_domain(atom), dp.l1_distance(T=t)
        else:
            space = atom, dp.absolute_distance(T=t)
        make = dp.m.make_laplace if what == "laplace" else dp.m.make_geometric
        return make(*space, scale=float(p["scale"]))
    if what == "gaussian":
        atom = dp.atom_domain(T=float, nan=False)
        if batch:
            space = dp.vector_domain(atom), dp.l2_distance(T=float)
        else:
            space = atom, dp.absolute_distance(T=float)
        return dp.m.make_gaussian(*space, scale=float(p["scale"]))
    if what == "noisy_max":
        space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                 dp.linf_distance(T=float, monotonic=bool(p.get("monotonic", False))))
        return dp.m.make_noisy_max(*space, dp.max_divergence(), scale=float(p["scale"]))
    if what == "sum":
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
        return (space >> dp.t.then_clamp(tuple(p["bounds"])) >> dp.t.then_sum()
                >> dp.m.then_laplace(scale=float(p["scale"])))
    if what == "mean":
        space = (dp.vector_domain(dp.atom_domain(bounds=tuple(p["bounds"]), nan=False),
                                  size=int(p["size"])), dp.symmetric_distance())
        return space >> dp.t.then_mean() >> dp.m.then_laplace(scale=float(p["scale"]))
    raise UnsupportedError(f"unknown OpenDP adapter {what!r}.")  # pragma: no cover


@dataclass(frozen=True)
class _OpenDPRunner:
    """Picklable runner: builds the OpenDP measurement in the worker (cached per process).

    Scalar Laplace/geometric: one call on a vector of ``noise.size`` copies (independent
    noise per element). Others: one call per sample. OpenDP cannot be seeded.
    """

    what: str
    name: str
    params: tuple

    def __call__(self, noise: Noise, x: np.ndarray, **_: Any) -> np.ndarray:
        _need_sampler(noise, self.name)
        n = noise.size
        if self.what == "gaussian":   # per call: the vector form has no speed advantage
            meas = _opendp_measurement(self.what, self.params)
            v = float(x[0])
            return np.fromiter((meas(v) for _ in range(n)), float, count=n)
        if self.what in ("laplace", "geometric"):
            meas = _opendp_measurement(self.what, self.params, batch=True)
            if self.what == "laplace":
                return np.asarray(meas([float(x[0])] * n), dtype=float)
            return np.asarray(meas([int(x[0])] * n), dtype=np.int64)
        meas = _opendp_measurement(self.what, self.params)
        data = [float(v) for v in np.asarray(x).ravel()]
        dtype = np.int64 if self.what == "noisy_max" else float
        return np.fromiter((meas(data) for _ in range(n)), dtype, count=n)


def _opendp_mech(what: str, name: str, params: tuple, d_in: Any, neighbors: Neighbors,
                 domain: Domain, output: Output, kind: str, description: str,
                 true_epsilon: float | None, **claim: Any) -> Mechanism:
    meas = _opendp_measurement(what, params)
    if not claim:
        claim = {"epsilon": float(meas.map(d_in))}
    return Mechanism(
        fn=_OpenDPRunner(what, name, params), name=name, neighbors=neighbors,
        domain=domain, output=output, kind=kind, true_epsilon=true_epsilon,
        source=_source("opendp"), description=description, passes_epsilon=False, **claim,
    )


def opendp_gaussian(scale: float = 2.0, claim: str = "zcdp", delta: float = 1e-3
                    ) -> Mechanism:
    """``make_gaussian(atom_domain(T=float), absolute_distance(T=float), scale)``.

    ``claim="zcdp"`` (``opendp.gaussian``): the claim OpenDP makes, ρ = ``map(1)`` =
    1/(2 scale²) zCDP. ``"approx"`` (``opendp.gaussian_approx``): the (ε, δ) OpenDP derives
    with ``make_fix_delta(make_zCDP_to_approxDP(m), delta).map(1)``. ``"rho_as_epsilon"``
    (the misuse ``opendp.gaussian_rho_as_epsilon``): ``map(1)`` read as a pure ε."""
    from ..stats.profiles import gaussian_epsilon

    dp = _import("opendp")
    params = _params(scale=float(scale))
    meas = _opendp_measurement("gaussian", params)
    rho = float(meas.map(1.0))
    mu = 1.0 / float(scale)
    if claim == "zcdp":
        name, kw = "opendp.gaussian", {"rho": rho}
        what = f"rho = map(1) = {rho:g} (zCDP)"
    elif claim == "approx":
        e, d = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), float(delta)).map(1.0)
        name, kw = "opendp.gaussian_approx", {"epsilon": float(e), "delta": float(d)}
        what = f"(ε, δ) = make_fix_delta(make_zCDP_to_approxDP(m), {delta:g}).map(1)"
    else:
        name, kw = "opendp.gaussian_rho_as_epsilon", {"epsilon": rho}
        what = f"map(1) = {rho:g} read as a pure ε"
    true = gaussian_epsilon(kw.get("delta", 1e-5) or 1e-5, mu) if claim != "rho_as_epsilon" \
        else math.inf
    return _opendp_mech("gaussian", name, params, 1.0, all_differ(1.0), Domain(length=1),
                        Output.numeric(), "blackbox",
                        f"OpenDP make_gaussian(float, scale={scale:g}); {what}", true, **kw)


def opendp_laplace(scale: float = 1.0, sensitivity: float = 1.0) -> Mechanism:
    """``make_laplace(atom_domain(T=float), absolute_distance(T=float), scale)``.

    Claimed epsilon = ``map(sensitivity)`` (= sensitivity / scale); the relation is absolute
    distance at most ``sensitivity`` on one-entry inputs.
    """
    params = _params(scale=float(scale))
    eps = float(sensitivity) / float(scale)
    return _opendp_mech(
        "laplace", "opendp.laplace", params, float(sensitivity), all_differ(float(sensitivity)),
        Domain(length=1), Output.numeric(), "vectorized",
        f"OpenDP make_laplace(float, scale={scale:g}); epsilon = map({sensitivity:g})", eps)


def opendp_geometric(scale: float = 1.0, sensitivity: int = 1) -> Mechanism:
    """``make_geometric(atom_domain(T=int), absolute_distance(T=int), scale)``.

    The discrete Laplace (two-sided geometric, P(Z = k) proportional to exp(-|k| / scale));
    claimed epsilon = ``map(sensitivity)``.
    """
    params = _params(scale=float(scale))
    eps = float(int(sensitivity)) / float(scale)
    return _opendp_mech(
        "geometric", "opendp.geometric", params, int(sensitivity),
        all_differ(float(int(sensitivity))), Domain(length=1, integer=True),
        Output.numeric(integer=True), "vectorized",
        f"OpenDP make_geometric(int, scale={scale:g}); epsilon = map({int(sensitivity)})", eps)


def opendp_noisy_max(scale: float = 2.0, sensitivity: float = 1.0,
                     monotonic: bool = False) -> Mechanism:
    """``make_noisy_max(vector_domain(float), linf_distance(float), max_divergence(), scale)``.

    Report-noisy-max with exponential noise of ``scale`` (OpenDP's exponential-mechanism-style
    selection under pure DP); claimed epsilon = ``map(sensitivity)`` (= 2 sensitivity / scale
    for the non-monotonic metric). The relation: every score differs by at most
    ``sensitivity``. The output is the selected index.

    ``monotonic=True`` (the misuse ``opendp.exponential_monotonic``, built with ``scale=1``)
    declares ``linf_distance(monotonic=True)``: the map halves (sensitivity / scale), which
    holds only if all scores move in the same direction; on scores that move in opposite
    directions the true epsilon is twice the claim.
    """
    params = _params(scale=float(scale), monotonic=bool(monotonic))
    name = "opendp.exponential_monotonic" if monotonic else "opendp.exponential"
    return _opendp_mech(
        "noisy_max", name, params, float(sensitivity),
        all_differ(float(sensitivity)), INDEXED, Output.categorical(index_categories()),
        "blackbox",
        f"OpenDP make_noisy_max(linf{'(monotonic=True)' if monotonic else ''}, "
        f"max_divergence, scale={scale:g}); epsilon = map({sensitivity:g})",
        2 * float(sensitivity) / float(scale))


def opendp_sum(bounds: tuple[float, float] = (0.0, 10.0), scale: float = 10.0) -> Mechanism:
    """clamp(bounds) >> sum >> Laplace(scale) over ``symmetric_distance``: a chained query.

    Claimed epsilon = ``map(1)``: adding or removing one record (privet's ``add_remove``).
    OpenDP's map includes a small allowance for floating-point rounding of the sum.
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    params = _params(bounds=(lo, hi), scale=float(scale))
    return _opendp_mech(
        "sum", "opendp.sum", params, 1, add_remove(), Domain(length=(0, 1000)),
        Output.numeric(), "blackbox",
        f"OpenDP clamp(({lo:g}, {hi:g})) >> sum >> laplace(scale={scale:g}); "
        "epsilon = map(1), add/remove one record", max(abs(lo), abs(hi)) / float(scale))


def opendp_mean(bounds: tuple[float, float] = (0.0, 10.0), size: int = 5, scale: float = 2.0,
                d_in: int = 2) -> Mechanism:
    """Sized bounded mean >> Laplace(scale) over ``symmetric_distance``: a chained query.

    The dataset has a public size, so the neighbors are "replace one record", which is
    symmetric distance 2: the correct claim is ``map(2)`` (``opendp.mean``). ``d_in=1``
    builds the misuse ``opendp.mean_din1``: ``map(1)`` is the epsilon of an impossible
    change on a sized domain and comes out near 0, yet a user who reads "one record" as
    ``d_in=1`` would claim it. ``true_epsilon`` is (U - L) / (size * scale) either way.
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    params = _params(bounds=(lo, hi), size=int(size), scale=float(scale))
    name = "opendp.mean" if int(d_in) == 2 else f"opendp.mean_din{int(d_in)}"
    return _opendp_mech(
        "mean", name, params, int(d_in), replace_one(),
        Domain(length=int(size), low=lo, high=hi), Output.numeric(), "blackbox",
        f"OpenDP sized mean(bounds=({lo:g}, {hi:g}), size={size}) >> laplace(scale={scale:g})"
        f"; epsilon = map({int(d_in)}), replace one record",
        (hi - lo) / (int(size) * float(scale)))


# -- registry -----------------------------------------------------------------------------------

_FACTORIES: dict[str, tuple[str, Callable[[], Mechanism]]] = {
    "diffprivlib.laplace": ("diffprivlib", diffprivlib_laplace),
    "diffprivlib.geometric": ("diffprivlib", diffprivlib_geometric),
    "diffprivlib.exponential": ("diffprivlib", diffprivlib_exponential),
    "diffprivlib.exponential_monotonic": ("diffprivlib",
                                          lambda: diffprivlib_exponential(monotonic=True)),
    "diffprivlib.mean": ("diffprivlib", diffprivlib_mean),
    "diffprivlib.mean_unbounded": ("diffprivlib", lambda: diffprivlib_mean(bounds=None)),
    "opendp.laplace": ("opendp", opendp_laplace),
    "opendp.geometric": ("opendp", opendp_geometric),
    "opendp.exponential": ("opendp", opendp_noisy_max),
    "opendp.exponential_monotonic": ("opendp",
                                     lambda: opendp_noisy_max(scale=1.0, monotonic=True)),
    "opendp.sum": ("opendp", opendp_sum),
    "opendp.mean": ("opendp", opendp_mean),
    "opendp.mean_din1": ("opendp", lambda: opendp_mean(d_in=1)),
    "diffprivlib.gaussian": ("diffprivlib", diffprivlib_gaussian),
    "diffprivlib.gaussian_analytic": ("diffprivlib",
                                      lambda: diffprivlib_gaussian(1.0, 1e-3, analytic=True)),
    "diffprivlib.gaussian_discrete": ("diffprivlib", diffprivlib_gaussian_discrete),
    "diffprivlib.gaussian_histogram": ("diffprivlib", diffprivlib_gaussian_histogram),
    "opendp.gaussian": ("opendp", opendp_gaussian),
    "opendp.gaussian_approx": ("opendp", lambda: opendp_gaussian(claim="approx")),
    "opendp.gaussian_rho_as_epsilon": ("opendp",
                                       lambda: opendp_gaussian(claim="rho_as_epsilon")),
    "pydp.gaussian": ("pydp", pydp_gaussian),
}

NAMES: tuple[str, ...] = tuple(_FACTORIES)


@functools.cache
def get(name: str) -> Mechanism:
    """The adapter called ``name`` (one of :data:`NAMES`), built with its default parameters."""
    if name not in _FACTORIES:
        raise UnsupportedError(
            f"no real-library adapter named {name!r}; there are {', '.join(NAMES)}."
        )
    return _FACTORIES[name][1]()


def real_libraries() -> dict[str, Mechanism]:
    """Every adapter whose library is installed, name -> Mechanism (empty without them)."""
    return {name: get(name) for name, (lib, _) in _FACTORIES.items() if available(lib)}


@dataclass(frozen=True)
class Audit:
    """How the example audit of one adapter runs and what it is expected to find.

    ``inputs``: (D1, D2) pairs for ``privet.detect`` (None = the relation's Table 1
    patterns); ``expect``: ``"pass"`` (a sound use) or ``"violation"`` (a misuse);
    ``why``: one sentence for the README.
    """

    name: str
    expect: str
    inputs: tuple | None
    why: str


AUDITS: dict[str, Audit] = {a.name: a for a in (
    Audit("diffprivlib.laplace", "pass", None, "Laplace on one value, |x - x'| <= 1"),
    Audit("diffprivlib.geometric", "pass", None, "geometric on one integer, |x - x'| <= 1"),
    Audit("diffprivlib.exponential", "pass",
          (((1, 1, 1, 1, 1), (2, 0, 0, 0, 0)), ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2))),
          "utilities move by 1 in opposite directions (the worst case)"),
    Audit("diffprivlib.exponential_monotonic", "violation",
          (((1, 1, 1, 1, 1), (2, 0, 0, 0, 0)), ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2))),
          "monotonic=True although the utilities move in opposite directions"),
    Audit("diffprivlib.mean", "pass", (((0, 0, 0, 0, 0), (10, 0, 0, 0, 0)),),
          "bounds (0, 10), one record replaced from one bound to the other"),
    Audit("diffprivlib.mean_unbounded", "violation", (((1, 1, 1, 1, 1), (2, 1, 1, 1, 1)),),
          "tools.mean without bounds: the bounds come from the data"),
    Audit("opendp.laplace", "pass", None, "Laplace on one value, d_in = 1"),
    Audit("opendp.geometric", "pass", None, "discrete Laplace on one integer, d_in = 1"),
    Audit("opendp.exponential", "pass",
          (((1, 1, 1, 1, 1), (2, 0, 0, 0, 0)), ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2))),
          "scores move by 1 in opposite directions (the worst case)"),
    Audit("opendp.exponential_monotonic", "violation",
          (((1, 1, 1, 1, 1), (2, 0, 0, 0, 0)), ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2))),
          "linf_distance(monotonic=True) although the scores move in opposite directions"),
    Audit("opendp.sum", "pass", (((0, 0, 0, 0), (0, 0, 0, 0, 10)),),
          "clamp (0, 10) >> sum >> Laplace, one record of 10 added"),
    Audit("opendp.mean", "pass", (((0, 0, 0, 0, 0), (10, 0, 0, 0, 0)),),
          "sized mean, one record replaced from one bound to the other, epsilon = map(2)"),
    Audit("opendp.mean_din1", "violation", (((0, 0, 0, 0, 0), (10, 0, 0, 0, 0)),),
          "the same mean with epsilon read off map(1)"),
    Audit("diffprivlib.gaussian", "pass", ((((0,), (1,)),)), "classic σ at (0.5, 1e-3)"),
    Audit("diffprivlib.gaussian_analytic", "pass", ((((0,), (1,)),)),
          "analytic σ at (1, 1e-3)"),
    Audit("diffprivlib.gaussian_discrete", "pass", ((((0,), (1,)),)),
          "discrete Gaussian at (1, 1e-3), integers"),
    Audit("diffprivlib.gaussian_histogram", "violation", ((((5, 5), (6, 4)),)),
          "GaussianAnalytic(sensitivity=1) per count; replacing a record moves two counts"),
    Audit("opendp.gaussian", "pass", ((((0,), (1,)),)), "make_gaussian, ρ = map(1) zCDP"),
    Audit("opendp.gaussian_approx", "pass", ((((0,), (1,)),)),
          "make_gaussian through make_zCDP_to_approxDP, make_fix_delta(1e-3)"),
    Audit("opendp.gaussian_rho_as_epsilon", "violation", ((((0,), (1,)),)),
          "make_gaussian's map(1) (a zCDP ρ) read as a pure ε"),
    Audit("pydp.gaussian", "pass", ((((0,), (1,)),)), "GaussianMechanism at (1, 1e-3)"),
)}


__all__ = ["AUDITS", "Audit", "LIBRARIES", "NAMES", "available", "diffprivlib_exponential",
           "diffprivlib_gaussian", "diffprivlib_gaussian_discrete",
           "diffprivlib_gaussian_histogram", "diffprivlib_geometric", "diffprivlib_laplace",
           "diffprivlib_mean", "get", "opendp_gaussian", "opendp_geometric", "opendp_laplace",
           "opendp_mean", "opendp_noisy_max", "opendp_sum", "pydp_gaussian", "real_libraries",
           "version"]
