"""The mechanism spec, the ``@privet.mechanism`` decorator and adapters for foreign signatures.

A native mechanism is ``fn(noise, x, **args)``: vectorized NumPy code whose randomness comes
only from ``noise`` (see :mod:`privet.core.noise`), returning one output row per joint
sample, shape ``(noise.size,)`` or ``(noise.size, m)``. The spec around it carries the
claimed epsilon (and delta), the neighbor relation, the input domain, the non-private
arguments with their defaults (and ranges for argument search) and the output schema.

Foreign signatures are wrapped by :func:`from_statdp` (``f(prng, queries, epsilon, **kw)``,
one output per call), :func:`from_vectorized` (DP-Sniper's ``m(a, n_samples)``) and
:func:`from_blackbox` (any ``f(x) -> output``). They support sampling only.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import inspect
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from . import ops
from .claims import Claim
from .errors import (
    InputError,
    MechanismError,
    NoiseError,
    ParameterError,
    PrivetError,
    UnsupportedError,
    advice,
    check_epsilon,
)
from .neighbors import Neighbors, all_differ
from .noise import (
    DEFAULT_ENUMERATION_CAP,
    Distribution,
    Enumerate,
    Noise,
    Sampler,
    enumerate_outputs,
)
from .seeds import SeedLike

# Sentinel outputs for variable-length and mixed outputs (StatDP Sec. 4.3): an entry that is
# FALSE (a categorical answer among numeric ones) or ABORTED (padding after the mechanism
# stopped). Infinite codes keep them apart from every legal finite value.
# Mechanism.sample draws through privet.execution (chunked, seeded, Ctrl-C aware); the
# package (privet/__init__.py) registers its ``collect`` here, so that core never imports
# the layer above it.
SAMPLERS: dict[str, Callable[..., np.ndarray]] = {}


def _sampler() -> Callable[..., np.ndarray]:
    try:
        return SAMPLERS["collect"]
    except KeyError:  # pragma: no cover - privet/__init__.py always registers it
        raise RuntimeError("no sampler registered (import privet first).") from None


FALSE = -np.inf
ABORTED = np.inf
SENTINEL_CODES = {"FALSE": FALSE, "ABORTED": ABORTED}


@dataclass(frozen=True)
class Domain:
    """Input domain: length (None = any, int, or (min, max)), integer or float, bounds."""

    length: int | tuple[int, int] | None = None
    integer: bool = False
    low: float = -math.inf
    high: float = math.inf

    def __post_init__(self):
        object.__setattr__(self, "length", _domain_length(self.length))
        try:
            low, high = float(self.low), float(self.high)
        except (TypeError, ValueError):
            low = high = math.nan
        if math.isnan(low) or math.isnan(high):
            raise ParameterError(f"the domain's low={self.low!r} and high={self.high!r} must "
                                 "both be numbers; use -math.inf or math.inf for no bound.")
        if low > high:
            raise ParameterError(f"the domain's low={low:g} is above its high={high:g}; give "
                                 "low <= high.")
        if self.integer and math.isfinite(low) and math.isfinite(high) and \
                math.floor(high) < math.ceil(low):  # e.g. integers in [0.2, 0.7]
            raise ParameterError(
                f"the integer domain [{low:g}, {high:g}] holds no integer; give integer "
                "bounds (" + advice("low=0, high=10", "--domain int:0:10") + ") or a real "
                "domain.")

    def describe(self) -> str:
        kind = "integers" if self.integer else "reals"
        if isinstance(self.length, tuple):
            ln = f"length {self.length[0]}..{self.length[1]}"
        elif self.length is None:
            ln = "any length"
        else:
            ln = f"length {self.length}"
        return f"{kind} in [{self.low:g}, {self.high:g}], {ln}"

    def check(self, x: Any) -> np.ndarray:
        """The input as a 1-D array; :class:`InputError` when it is outside the domain."""
        try:
            arr = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"input {x!r} is not a list of numbers.") from None
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.ndim != 1:
            raise InputError(f"input must be a flat list of numbers, got shape {arr.shape}.")
        n = len(arr)
        if isinstance(self.length, tuple) and not self.length[0] <= n <= self.length[1]:
            raise InputError(
                f"input has length {n}, outside the domain's {self.length[0]}..{self.length[1]}."
            )
        if isinstance(self.length, int) and n != self.length:
            raise InputError(f"input has length {n}, but the domain needs length {self.length}.")
        if n:  # min and max are NaN when an entry is: they decide finiteness and range
            lo, hi = float(arr.min()), float(arr.max())
            if not (math.isfinite(lo) and math.isfinite(hi)):
                raise InputError("input contains NaN or infinity.")
            if lo < self.low or hi > self.high:
                raise InputError(
                    f"input {_fmt(arr)} is outside the domain [{self.low:g}, {self.high:g}]."
                )
        if self.integer:
            if not np.array_equal(arr, np.round(arr)):
                raise InputError(f"input {_fmt(arr)} must contain integers only.")
            return arr.astype(np.int64)
        return arr

    def to_dict(self) -> dict:
        return {"length": self.length, "integer": self.integer, "low": self.low,
                "high": self.high}

    def inputs(self, length: int | None = None, cap: int = 1 << 20) -> np.ndarray:
        """Every input of a finite integer domain, one per row (lexicographic order).

        ``length`` fixes an open length; InputError when the domain is not finite or has
        more than ``cap`` inputs."""
        n = length if length is not None else self.length
        if isinstance(n, tuple) or n is None or not self.integer or not (
                math.isfinite(self.low) and math.isfinite(self.high)):
            raise InputError(
                f"the domain ({self.describe()}) is not a finite set of integer lists; give "
                "an input length or the inputs themselves."
            )
        if isinstance(self.length, int) and n != self.length:
            raise InputError(f"the domain has length {self.length}, not {n}.")
        from .safe import power_count, power_text

        if not isinstance(n, (int, np.integer)) or n < 1:
            raise InputError(f"the input length must be a positive whole number, got {n!r}.")
        size = int(self.high) - int(self.low) + 1
        if power_count(size, n) > cap:
            raise InputError(f"the domain has {power_text(size, n)} inputs of length {n}, "
                             f"above the cap of {cap:,}.")
        values = np.arange(int(self.low), int(self.high) + 1)
        grids = np.meshgrid(*([values] * int(n)), indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)


def _domain_length(length: Any) -> int | tuple[int, int] | None:
    """A domain's ``length`` checked: None (any length), a whole number n >= 1 or a pair
    (min, max) with 0 <= min <= max (an empty input is legal in a range, for add/remove)."""
    def whole(v: Any) -> bool:
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

    if length is None:
        return None
    if whole(length):
        if length < 1:
            raise ParameterError(
                f"the domain's length={length!r} is below 1; give length=n with n >= 1 "
                "entries, length=(min, max) for a range, or length=None for any length.")
        return int(length)
    if isinstance(length, (tuple, list)) and len(length) == 2 and all(map(whole, length)):
        lo, hi = int(length[0]), int(length[1])
        if not 0 <= lo <= hi:
            raise ParameterError(
                f"the domain's length={tuple(length)!r} is not a range of lengths; give "
                "length=(min, max) with 0 <= min <= max.")
        return (lo, hi)
    raise ParameterError(
        f"the domain's length={length!r} is not a length; give length=n with n >= 1 "
        "entries, length=(min, max) for a range, or length=None for any length.")


@dataclass(frozen=True)
class Output:
    """Output schema.

    ``kind``: ``numeric``, ``categorical`` or ``mixed`` (categorical sentinels among numbers).
    ``length``: entries per output (None for one scalar per sample); with ``variable=True``
    the row is padded with ABORTED after the mechanism stops. ``categories`` lists the
    values of categorical outputs; ``sentinels`` names the sentinel codes that may appear
    ("FALSE", "ABORTED").
    """

    kind: str = "numeric"
    length: int | None = None
    integer: bool = False
    categories: tuple | None = None
    sentinels: tuple[str, ...] = ()
    variable: bool = False

    def __post_init__(self):
        if self.kind not in ("numeric", "categorical", "mixed"):
            raise PrivetError(f"unknown output kind {self.kind!r}.")
        for s in self.sentinels:
            if s not in SENTINEL_CODES:
                raise PrivetError(f"unknown sentinel {s!r}; use FALSE or ABORTED.")

    def describe(self) -> str:
        bits = [self.kind]
        if self.integer:
            bits.append("integer")
        if self.length:
            bits.append(("variable length up to " if self.variable else "length ") +
                        str(self.length))
        if self.categories is not None:
            bits.append("values " + ", ".join(str(c) for c in self.categories))
        if self.sentinels:
            bits.append("sentinels " + ", ".join(self.sentinels))
        return ", ".join(bits)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["categories"] = list(self.categories) if self.categories is not None else None
        d["sentinels"] = list(self.sentinels)
        return d

    @staticmethod
    def numeric(length: int | None = None, integer: bool = False,
                sentinels: Sequence[str] = (), variable: bool = False) -> Output:
        kind = "mixed" if "FALSE" in sentinels else "numeric"
        return Output(kind, length, integer, None, tuple(sentinels), variable)

    @staticmethod
    def categorical(categories: Sequence, length: int | None = None,
                    sentinels: Sequence[str] = (), variable: bool = False) -> Output:
        return Output("categorical", length, True, tuple(categories), tuple(sentinels), variable)


CLAIM_ARGS = ("epsilon", "delta", "rho")  # claim parameters a mechanism may take as keywords

SUPPORTS = {
    "native": frozenset({"sample", "replay", "enumerate", "ops"}),
    "statdp": frozenset({"sample"}),
    "vectorized": frozenset({"sample"}),
    "blackbox": frozenset({"sample"}),
}

CAPABILITY_WORDS = {
    "replay": "correlated sampling (Replay)",
    "enumerate": "exact enumeration of its noise",
    "ops": "tracing through privet.ops",
    "sample": "sampling",
}

# the spec keywords of the adapters (from_statdp, from_vectorized, from_blackbox), beyond
# the function, epsilon= and name=
ADAPTER_SPEC = ("delta", "rho", "neighbors", "domain", "output", "args", "arg_ranges",
                "noise_args", "true_epsilon", "true_delta", "true_profile", "source",
                "description")


def _check_spec_types(neighbors: Any, domain: Any) -> None:
    """One sentence when ``neighbors`` is not a neighbor relation or ``domain`` not a Domain."""
    if not isinstance(neighbors, Neighbors):
        raise PrivetError(
            f"neighbors={neighbors!r} is not a privet neighbor relation; give one of "
            "privet.neighbors.all_differ(), one_differs(), add_remove(), replace_one() or "
            "custom(predicate)."
        )
    if not isinstance(domain, Domain):
        raise PrivetError(
            f"domain={domain!r} is not a privet.Domain; give privet.Domain(length=..., "
            "integer=..., low=..., high=...)."
        )


def _check_keywords(given: Mapping[str, Any], accepted: Sequence[str], where: str) -> None:
    """One sentence naming the first keyword of ``given`` that ``where`` does not take."""
    for key in given:
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise PrivetError(
                f"unknown argument {key!r} to {where}; {hint}it takes "
                f"{', '.join(accepted)}."
            )


def _check_callable(f: Any, adapter: str, shape: str) -> None:
    """One sentence when the function to wrap is not callable."""
    if not callable(f):
        raise PrivetError(
            f"{adapter} wraps a function {shape}, but got {type(f).__name__} {f!r:.60}; "
            "pass the function itself."
        )


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A mechanism and its spec. Call :meth:`run` to execute it under a noise interpreter."""

    fn: Callable
    name: str
    epsilon: float | None = None
    delta: float = 0.0
    neighbors: Neighbors = field(default_factory=all_differ)
    domain: Domain = field(default_factory=Domain)
    args: Mapping[str, Any] = field(default_factory=dict)
    arg_ranges: Mapping[str, Any] = field(default_factory=dict)
    noise_args: tuple[str, ...] = ()
    output: Output = field(default_factory=Output)
    kind: str = "native"
    true_epsilon: float | None = None
    source: str = ""
    description: str = ""
    passes_epsilon: bool = True
    rho: float | None = None
    true_delta: float | None = None
    passes_delta: bool = False
    passes_rho: bool = False
    true_profile: Callable[[float], float] | None = None   # the true ε(δ), when known

    def __post_init__(self):
        claim = Claim.make(self.epsilon, self.delta, self.rho)  # one sentence when wrong
        # keep the checked numbers: a claim given as "1" or 1 is stored as the float 1.0
        object.__setattr__(self, "epsilon", None if claim is None else claim.epsilon)
        object.__setattr__(self, "delta", 0.0 if claim is None else claim.delta)
        object.__setattr__(self, "rho", None if claim is None else claim.rho)
        _check_spec_types(self.neighbors, self.domain)
        if self.kind not in SUPPORTS:
            raise PrivetError(f"unknown mechanism kind {self.kind!r}.")

    # -- spec helpers ----------------------------------------------------------------------
    @property
    def claim(self) -> Claim | None:
        """The privacy claim: pure ε, (ε, δ) or ρ-zCDP (None when the mechanism claims none)."""
        return Claim.make(self.epsilon, self.delta, self.rho)

    def describe_claim(self) -> str | None:
        """How reports show the claim (``ε = 0.5``, ``(ε, δ) = (1, 1e-05)``, ``ρ = 0.1 (zCDP)``)."""
        c = self.claim
        return None if c is None else c.describe()

    def supports(self, capability: str) -> bool:
        return capability in SUPPORTS[self.kind]

    @property
    def per_sample(self) -> bool:
        """Whether every output costs a call of its own (a black box, a StatDP-style
        function): sampling is slow, so the engines size their samples down."""
        return self.kind in ("statdp", "blackbox")

    def require(self, capability: str, engine: str) -> None:
        """Raise :class:`UnsupportedError` unless the mechanism supports ``capability``."""
        if not self.supports(capability):
            raise UnsupportedError(
                f"{engine} needs {CAPABILITY_WORDS[capability]}, which the {self.kind} "
                f"mechanism {self.name!r} cannot give; write it against privet's noise API."
            )

    def replace(self, **changes) -> Mechanism:
        """A copy with spec fields changed (for example ``epsilon=0.5``). A new claim
        replaces the old one: ``epsilon=`` on a zCDP mechanism drops its ρ, ``rho=`` drops
        its ε and δ."""
        if changes.get("epsilon") is not None and "rho" not in changes:
            changes["rho"] = None
        if changes.get("rho") is not None:
            changes.setdefault("epsilon", None)
            changes.setdefault("delta", 0.0)
        if {"epsilon", "delta", "rho"} & set(changes):   # the code may calibrate to the claim
            changes.setdefault("true_profile", None)
        return dataclasses.replace(self, **changes)

    def resolve_args(self, args: Mapping[str, Any] | None = None,
                     epsilon: float | None = None) -> dict[str, Any]:
        """Defaults, then ``args``; the mechanism's epsilon is passed as ``epsilon``."""
        merged = dict(self.args)
        if args:
            unknown = set(args) - set(self.args) - set(CLAIM_ARGS)
            if unknown and not self._accepts_kwargs():
                raise InputError(
                    f"mechanism {self.name!r} has no argument(s) {', '.join(sorted(unknown))}; "
                    f"it takes {', '.join(sorted(self.args)) or 'none'}."
                )
            merged.update(args)
        eps = epsilon if epsilon is not None else merged.get("epsilon", self.epsilon)
        if self.passes_epsilon and eps is not None:
            merged["epsilon"] = check_epsilon(eps)
        given = args or {}
        if self.passes_delta and "delta" not in given:   # the claim's δ, unless args set it
            merged["delta"] = float(self.delta)
        if self.passes_rho and self.rho is not None and "rho" not in given:
            merged["rho"] = float(self.rho)
        return merged

    def _accepts_kwargs(self) -> bool:
        try:
            params = inspect.signature(self.fn).parameters.values()
        except (TypeError, ValueError):  # pragma: no cover
            return True
        return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)

    def to_dict(self) -> dict:
        return {
            "name": self.name, "epsilon": self.epsilon, "delta": self.delta, "rho": self.rho,
            "claim": self.describe_claim(),
            "neighbors": self.neighbors.to_dict(), "domain": self.domain.to_dict(),
            "args": {k: _plain(v) for k, v in self.args.items()},
            "output": self.output.to_dict(), "kind": self.kind,
            "true_epsilon": self.true_epsilon, "true_delta": self.true_delta,
            "source": self.source,
        }

    # -- execution -------------------------------------------------------------------------
    def run(self, noise: Noise, x: Any, args: Mapping[str, Any] | None = None, *,
            check_input: bool = True) -> np.ndarray:
        """Outputs of the mechanism on ``x`` under ``noise``: one row per joint sample."""
        data = self.domain.check(x) if check_input else np.asarray(x)
        kwargs = self.resolve_args(args)
        if self.kind != "native" and not isinstance(noise, Sampler):
            self.require({"Replay": "replay", "Enumerate": "enumerate"}.get(
                type(noise).__name__, "ops"), f"the {type(noise).__name__} interpreter")
        try:
            with ops.semantics(getattr(noise, "semantics", "hard")):
                out = self.fn(noise, data, **kwargs)
        except (PrivetError, MemoryError):  # out of memory is the run's size, not a bug
            raise
        except Exception as err:  # a user mechanism failing is bad input, not a crash
            raise MechanismError(
                f"mechanism {self.name!r} raised {type(err).__name__}: {err} "
                f"(on input {_fmt(data)})."
            ) from err
        return validate_outputs(out, noise.size, self.name, numeric=noise.semantics == "hard")

    def sample(self, x: Any, n: int, args: Mapping[str, Any] | None = None,
               seed: SeedLike = None, chunk: int = 200_000) -> np.ndarray:
        """``n`` outputs on ``x``, drawn in chunks from seeds spawned off ``seed`` (an int,
        a numpy Generator or SeedSequence, or None)."""
        return _sampler()(self, x, n, args=args, seed=seed, chunk=chunk)

    def distribution(self, x: Any, args: Mapping[str, Any] | None = None, exact: bool = False,
                     cap: int = DEFAULT_ENUMERATION_CAP, grid: Enumerate | None = None
                     ) -> Distribution:
        """Exact output distribution on ``x`` by enumerating every joint noise outcome.

        Reusing one ``grid`` (``privet.Enumerate(exact, cap)``) across inputs builds the
        joint noise grid once."""
        self.require("enumerate", "exact enumeration")
        data = self.domain.check(x)
        resolved = self.resolve_args(args)
        return enumerate_outputs(lambda noise: self.run(noise, data, resolved, check_input=False),
                                 exact=exact, cap=cap, grid=grid)

    def __call__(self, noise: Noise, x: Any, **args) -> np.ndarray:
        return self.run(noise, x, args)

    def __reduce__(self):
        # pickle by reference when the mechanism is a module attribute (process pools)
        module = getattr(self.fn, "__module__", None)
        qual = getattr(self.fn, "__qualname__", "")
        try:
            target = functools.reduce(getattr, qual.split("."), importlib.import_module(module))
        except Exception:
            target = None
        if target is self:
            return (_load_attr, (module, qual))
        if isinstance(target, Mechanism) and target.fn is self.fn:
            changes = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                       if f.name != "fn"}
            return (_load_replaced, (module, qual, changes))
        return (_rebuild, ({f.name: getattr(self, f.name) for f in dataclasses.fields(self)},))


def _load_attr(module: str, qual: str) -> Any:
    return functools.reduce(getattr, qual.split("."), importlib.import_module(module))


def _load_replaced(module: str, qual: str, changes: dict) -> Mechanism:
    return dataclasses.replace(_load_attr(module, qual), **changes)


def _rebuild(fields: dict) -> Mechanism:
    return Mechanism(**fields)


def validate_outputs(out: Any, size: int, name: str, numeric: bool = True) -> np.ndarray:
    """Check a batch of outputs: an array with ``size`` rows, numeric, without NaN."""
    if isinstance(out, (list, tuple)):
        kind = type(out).__name__
        try:
            arr = np.asarray(out)
        except ValueError:
            raise MechanismError(
                f"mechanism {name!r} returned a ragged {kind}; pad variable-length outputs "
                "with privet.ABORTED."
            ) from None
        if arr.ndim and arr.shape[0] != size and len(out) and all(
                isinstance(v, np.ndarray) and v.ndim and v.shape[0] == size for v in out):
            # parts of one output, each with the batch axis: (a, b) for a batch of n
            raise MechanismError(
                f"mechanism {name!r} returned a {kind} of {len(out)} arrays with one row per "
                "sample each; return one array with one row per sample (np.stack(parts, "
                "axis=-1) or np.concatenate along the last axis).")
        out = arr
    if not isinstance(out, np.ndarray):
        raise MechanismError(
            f"mechanism {name!r} returned {type(out).__name__}, not an array with one row per "
            "sample."
        )
    if out.ndim == 0 or out.shape[0] != size:
        got = "a scalar" if out.ndim == 0 else f"{out.shape[0]} rows"
        raise MechanismError(
            f"mechanism {name!r} returned {got} for a batch of {size}; every draw has a leading "
            "batch axis and the output needs one row per sample."
        )
    if not numeric:
        return out
    if out.dtype == bool:
        out = out.astype(np.int64)
    if not (np.issubdtype(out.dtype, np.number)):
        raise MechanismError(
            f"mechanism {name!r} returned {out.dtype} outputs; encode them as numbers "
            "(categories as integers)."
        )
    if np.issubdtype(out.dtype, np.floating) and np.isnan(out).any():
        raise MechanismError(
            f"mechanism {name!r} returned NaN; return a number for every output (a flag "
            "value such as -1, or privet.ABORTED, where there is no answer)."
        )
    return out


def mechanism(
    fn: Callable | None = None,
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    neighbors: Neighbors | None = None,
    domain: Domain | None = None,
    args: Mapping[str, Any] | None = None,
    arg_ranges: Mapping[str, Any] | None = None,
    noise_args: Sequence[str] = (),
    output: Output | None = None,
    name: str | None = None,
    true_epsilon: float | None = None,
    source: str = "",
    rho: float | None = None,
    true_delta: float | None = None,
    true_profile: Callable[[float], float] | None = None,
    **unknown: Any,
) -> Any:
    """Decorate ``fn(noise, x, **args)`` as a privet :class:`Mechanism`.

    Non-private arguments take their defaults from ``args`` or, failing that, from the
    keyword defaults of ``fn``. The claim is ``epsilon=`` (pure ε-DP), ``epsilon=, delta=``
    ((ε, δ)-DP) or ``rho=`` (ρ-zCDP, see :class:`privet.core.claims.Claim`); each is passed
    to ``fn`` as the keyword of the same name when ``fn`` takes one.
    """
    _check_keywords(unknown, MECHANISM_KEYWORDS, "@privet.mechanism")
    claim = Claim.make(epsilon, delta, rho)  # a wrong claim fails here, in one sentence
    if claim is not None:  # the checked numbers ("1" is 1.0), as the Mechanism keeps them
        epsilon, delta, rho = claim.epsilon, claim.delta, claim.rho
    neighbors = neighbors if neighbors is not None else all_differ()
    domain = domain if domain is not None else Domain()

    def wrap(f: Callable) -> Mechanism:
        if not callable(f):
            raise PrivetError("@privet.mechanism decorates a function fn(noise, x, **args).")
        sig = inspect.signature(f)
        params = list(sig.parameters.values())
        if len(params) < 2:
            raise PrivetError(
                f"mechanism {f.__name__!r} must take (noise, x, ...): the noise interpreter "
                "and the input."
            )
        defaults = {
            p.name: p.default for p in params[2:]
            if p.default is not inspect.Parameter.empty and p.name != "epsilon"
        }
        if args:
            defaults.update(args)
        missing = [p.name for p in params[2:]
                   if p.default is inspect.Parameter.empty and p.name not in CLAIM_ARGS
                   and p.name not in defaults
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if missing:
            raise PrivetError(
                f"mechanism {f.__name__!r} has the argument {missing[0]!r} with no default: "
                f"give it one (def {f.__name__}(noise, x, *, {missing[0]}=...)) or pass "
                f"args={{{missing[0]!r}: ...}} to @privet.mechanism."
            )
        eps_param = sig.parameters.get("epsilon")
        if rho is not None and eps_param is not None and \
                eps_param.default is inspect.Parameter.empty:
            raise PrivetError(
                f"mechanism {f.__name__!r} declares a zCDP claim (rho={rho:g}) but its code "
                "needs an epsilon, which a zCDP claim does not give: calibrate it from rho "
                f"(def {f.__name__}(noise, x, *, rho)) or declare epsilon=, delta= instead."
            )
        takes_eps = "epsilon" in sig.parameters or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        mech = Mechanism(
            fn=f, name=name or f.__name__, epsilon=epsilon, delta=delta, rho=rho,
            true_delta=true_delta, true_profile=true_profile,
            passes_delta="delta" in sig.parameters, passes_rho="rho" in sig.parameters,
            neighbors=neighbors, domain=domain, args=defaults,
            arg_ranges=dict(arg_ranges or {}), noise_args=tuple(noise_args),
            output=output or Output(), true_epsilon=true_epsilon, source=source,
            description=(inspect.getdoc(f) or "").split("\n")[0], passes_epsilon=takes_eps,
        )
        return mech

    if fn is not None:
        return wrap(fn)
    return wrap


# the keywords @privet.mechanism takes (named in the sentence on an unknown one)
MECHANISM_KEYWORDS = tuple(
    p.name for p in inspect.signature(mechanism).parameters.values()
    if p.kind is inspect.Parameter.KEYWORD_ONLY)


# -- adapters ------------------------------------------------------------------------------

def _spec_kwargs(kw: dict, adapter: str) -> dict:
    """The spec keywords of ``adapter`` with their defaults; one sentence on an unknown one."""
    _check_keywords(kw, ("epsilon", "name") + ADAPTER_SPEC, adapter)
    kw = dict(kw)
    kw.setdefault("neighbors", all_differ())
    kw.setdefault("domain", Domain())
    kw.setdefault("output", Output())
    return kw


def _streams(rng: np.random.Generator, n: int, global_state: bool):
    """One random stream per call of a per-sample black box, drawn from ``rng``: a
    generator whose state is set afresh before each call (a random 128-bit state) or, with
    ``global_state``, NumPy's legacy and Python's global generators seeded afresh -- both
    before the first call, then each one the first call drew from (a black box that draws
    from neither has nothing to seed). So the i-th calls of two runs given generators of
    the same seed draw the same numbers, however many the calls before them drew (a black
    box whose draws depend on its input stays aligned), and the calls of one run are
    independent of each other; the first k calls of a run are those of a run of k.
    NumPy's legacy generator takes 32-bit seeds (longer ones cost eight times as long), so
    two of n calls share a stream with probability about n / 2^32 each (2^21 calls: 0.05%
    of them): as good as independent for a certificate, not exactly so."""
    # the increment first, then the states: a run's first k outputs are those of a run of k
    inc = int(rng.integers(0, 2**63))
    words = rng.integers(0, 2**63, size=(n, 2), dtype=np.int64).tolist()
    if global_state:
        uses_np = uses_py = True
        for i, (hi, lo) in enumerate(words):
            if uses_np:
                np.random.seed(hi & 0xFFFFFFFF)
            if uses_py:
                random.seed(lo)
            if i == 0:
                state = np.random.get_state()
                np_before, np_pos, py_before = state[1].copy(), state[2], random.getstate()
            yield None
            if i == 0:
                np_after = np.random.get_state()
                uses_np = np_after[2] != np_pos or not np.array_equal(np_after[1], np_before)
                uses_py = random.getstate() != py_before
        return
    bitgen = np.random.PCG64(inc)
    gen = np.random.Generator(bitgen)
    state = bitgen.state
    for hi, lo in words:
        state["state"]["state"] = (hi << 64) | lo
        state["has_uint32"], state["uinteger"] = 0, 0
        bitgen.state = state
        yield gen


def _complex(name: str) -> str:
    return (f"mechanism {name!r} returned complex numbers, which privet would have to cut to "
            "their real parts; return the real and imaginary parts as two entries.")


def _numbers(out: Any, name: str) -> np.ndarray:
    """One call's output as floats, or one sentence naming what came back instead."""
    if out is None:
        raise MechanismError(f"mechanism {name!r} returned None; return a number (or a list, "
                             "tuple or array of numbers) from every call.")
    if isinstance(out, (str, bytes)) or (isinstance(out, (list, tuple)) and any(
            isinstance(v, (str, bytes)) for v in out)):
        # NumPy reads "3.14" as a number: a box that prints its answer into text would be
        # analysed as if it returned numbers
        raise MechanismError(
            f"mechanism {name!r} returned text ({out!r:.60}); return a number, a bool, or a "
            "list, tuple or array of them (categories as integer codes).")
    try:
        if np.iscomplexobj(out):
            raise MechanismError(_complex(name))
        return np.asarray(out, dtype=float)
    except (TypeError, ValueError):
        what = f"a {type(out).__name__}" if not isinstance(out, (list, tuple)) else \
            f"a {type(out).__name__} holding {', '.join(sorted({type(v).__name__ for v in out}))}"
        nested = isinstance(out, (list, tuple)) and any(
            isinstance(v, (list, tuple, np.ndarray)) for v in out)
        raise MechanismError(
            f"mechanism {name!r} returned {what} ({out!r:.60}), which privet cannot read as "
            "numbers; return a number, a bool, or a list, tuple or array of them ("
            + ("flatten the nested parts into one list, " if nested else "")
            + "a dict's values as a list in a fixed order, categories as integer codes)."
        ) from None


def _per_sample(call: Callable[[np.random.Generator | None], Any], noise: Noise, name: str,
                global_state: bool = False) -> np.ndarray:
    """``noise.size`` outputs of a per-sample black box, one ``call`` each, each with its own
    random stream (:func:`_streams`). The runners give every call a copy of the input: a
    box that changed its input in place (zeroing it after use) fed its later calls another
    input, and a mechanism of infinite ε read "no violation found"."""
    if not isinstance(noise, Sampler):
        raise UnsupportedError(
            f"mechanism {name!r} is a black box: it can only be sampled, not run under "
            f"{type(noise).__name__}."
        )
    rows, ndims = [], set()
    for gen in _streams(noise.rng, noise.size, global_state):
        got = _numbers(call(gen), name)
        ndims.add(got.ndim)
        rows.append(got.ravel())
    if len(ndims) > 1:
        raise MechanismError(
            f"mechanism {name!r} returned a scalar in one call and an array in another; "
            "return the same kind of output every call (a list padded with privet.ABORTED "
            "for variable-length outputs)."
        )
    width = max((len(r) for r in rows), default=1)
    if any(len(r) != width for r in rows):
        padded = np.full((len(rows), width), ABORTED)
        for i, r in enumerate(rows):
            padded[i, : len(r)] = r
        return padded
    out = np.vstack(rows) if rows else np.empty((0, width))
    return out[:, 0] if width == 1 else out


class _StatDPRunner:
    """Picklable runner for a StatDP-style function (process pools need it)."""

    streams = True  # every call draws from a stream of its own (:func:`_streams`)

    def __init__(self, f: Callable, name: str):
        self.f, self.name = f, name

    def __call__(self, noise: Noise, x: np.ndarray, *, epsilon: float | None = None,
                 **kw: Any) -> np.ndarray:
        if epsilon is None:  # a spec replaced without one (rho=, epsilon=None): not f's fault
            raise ParameterError(
                f"the StatDP-style function {self.name!r} takes its epsilon, but the "
                "mechanism claims none; give the claimed epsilon (from_statdp(f, epsilon=...) "
                "or mechanism.replace(epsilon=...)).")
        return _per_sample(lambda rng: self.f(rng, x.copy(), epsilon, **kw), noise, self.name)


class _VectorizedRunner:
    """Picklable runner for a DP-Sniper-style ``m(a, n_samples)``."""

    def __init__(self, m: Callable, name: str):
        self.m, self.name = m, name
        try:
            self.takes_rng = "rng" in inspect.signature(m).parameters
        except (TypeError, ValueError):  # pragma: no cover
            self.takes_rng = False

    def __call__(self, noise: Noise, x: np.ndarray, **kw: Any) -> np.ndarray:
        if not isinstance(noise, Sampler):
            raise UnsupportedError(
                f"mechanism {self.name!r} is vectorized but opaque: it can only be sampled."
            )
        if self.takes_rng:
            return self._rows(self.m(x.copy(), noise.size, rng=noise.rng), noise.size)
        seed = int(noise.rng.integers(0, 2**32 - 1))
        np.random.seed(seed)
        random.seed(seed)
        return self._rows(self.m(x.copy(), noise.size), noise.size)

    def _rows(self, out: Any, n: int) -> np.ndarray:
        """``out`` as an array, refused in the vectorized convention's words when it is not
        one output per sample (the noise API's "leading batch axis" means nothing here)."""
        if out is None or np.ndim(out) == 0 or len(out) != n:
            got = ("None" if out is None else f"{type(out).__name__} {out!r:.40}"
                   if np.ndim(out) == 0 else f"{len(out)} outputs")
            raise MechanismError(
                f"{self.name}(a, n_samples) must return n_samples outputs (one per sample, "
                f"here {n}), but it returned {got}.")
        if np.iscomplexobj(out):
            raise MechanismError(_complex(self.name))
        return np.asarray(out)


class _BlackBoxRunner:
    """Picklable runner for a black box ``f(x) -> output``."""

    streams = True  # every call draws from a stream of its own (:func:`_streams`)

    def __init__(self, f: Callable, name: str):
        self.f, self.name = f, name
        try:
            self.takes_rng = "rng" in inspect.signature(f).parameters
        except (TypeError, ValueError):  # pragma: no cover
            self.takes_rng = False

    def __call__(self, noise: Noise, x: np.ndarray, **kw: Any) -> np.ndarray:
        if self.takes_rng:
            return _per_sample(lambda rng: self.f(x.copy(), rng=rng, **kw), noise, self.name)
        return _per_sample(lambda rng: self.f(x.copy(), **kw), noise, self.name,
                           global_state=True)


def from_statdp(f: Callable, epsilon: float, name: str | None = None, **spec) -> Mechanism:
    """Wrap a StatDP-style ``f(prng, queries, epsilon, **kw)`` returning one output per call.

    ``epsilon`` is the claimed epsilon, the one ``f`` is called with (required: the test ε
    of :func:`privet.detect` does not replace it). ``prng`` is a NumPy ``Generator``, a
    stream of its own for every call (so the i-th calls of two runs given the same seed draw
    the same numbers). Variable-length outputs (lists) are padded with ABORTED. The wrapped
    mechanism can only be sampled (one Python call per sample; the process-pool executor
    spreads the calls over the cores).
    """
    _check_callable(f, "from_statdp", "f(prng, queries, epsilon, **kw)")
    nm = name or getattr(f, "__name__", "statdp_mechanism")
    if epsilon is None:
        raise ParameterError(
            f"from_statdp needs the claimed epsilon of {nm!r}, since a StatDP-style function "
            "takes its epsilon as an argument; give epsilon=... (the test ε of detect does not "
            "replace it)."
        )
    spec = _spec_kwargs(spec, "from_statdp")
    spec["args"] = dict(spec.get("args") or {})
    return Mechanism(fn=_StatDPRunner(f, nm), name=nm, epsilon=epsilon, kind="statdp", **spec)


def from_vectorized(m: Callable, epsilon: float | None = None, name: str | None = None,
                    **spec) -> Mechanism:
    """Wrap a DP-Sniper-style vectorized ``m(a, n_samples)`` (optionally taking ``rng=``).

    When ``m`` takes no generator, NumPy's legacy global generator and Python's ``random``
    are seeded from the chunk's seed before each call, so runs stay reproducible (and the
    runs of two inputs can share their seeds: common random numbers).
    """
    _check_callable(m, "from_vectorized", "m(a, n_samples)")
    nm = name or getattr(m, "__name__", "vectorized_mechanism")
    return Mechanism(fn=_VectorizedRunner(m, nm), name=nm, epsilon=epsilon, kind="vectorized",
                     passes_epsilon=False, **_spec_kwargs(spec, "from_vectorized"))


def _check_blackbox_signature(f: Callable, name: str, args: Mapping[str, Any]) -> None:
    """One sentence when ``f`` cannot be called as ``f(x, **args)``."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):  # builtins and C callables: nothing to check
        return
    extra = dict(args)
    if "rng" in sig.parameters:
        extra["rng"] = None
    try:
        sig.bind(np.zeros(1), **extra)
    except TypeError:
        raise MechanismError(
            f"{name!r} takes {sig}, but privet calls a black-box mechanism as {name}(x) with "
            f"one input; write it as {name}(x), or as @privet.mechanism "
            f"def {name}(noise, x, *, epsilon) to use privet's noise API."
        ) from None


def from_blackbox(f: Callable, epsilon: float | None = None, name: str | None = None,
                  **spec) -> Mechanism:
    """Wrap any callable ``f(x) -> output`` (for example a DP library's function).

    Randomness is ``f``'s own; if ``f`` takes ``rng=``, privet passes a generator, a
    stream of its own for every call; otherwise NumPy's legacy global generator and
    Python's ``random`` are seeded afresh before every call (so runs are reproducible and
    the runs of two inputs can share their seeds: common random numbers). The
    claim is ``epsilon=``, ``epsilon=, delta=`` or ``rho=`` as for :func:`mechanism`.
    """
    _check_callable(f, "from_blackbox", "f(x)")
    nm = name or getattr(f, "__name__", "blackbox_mechanism")
    spec = _spec_kwargs(spec, "from_blackbox")
    _check_blackbox_signature(f, nm, spec.get("args") or {})
    return Mechanism(fn=_BlackBoxRunner(f, nm), name=nm, epsilon=epsilon, kind="blackbox",
                     passes_epsilon=False, **spec)


def as_mechanism(obj: Any, epsilon: float | None = None) -> Mechanism:
    """``obj`` if it is a Mechanism, else a black-box wrapper around the callable."""
    if isinstance(obj, Mechanism):
        return obj if epsilon is None else obj.replace(epsilon=epsilon)
    if callable(obj):
        return from_blackbox(obj, epsilon=epsilon)
    raise PrivetError(f"{obj!r} is not a mechanism or a callable.")


def _plain(v: Any) -> Any:
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _fmt(x: Any) -> str:
    return np.array2string(np.asarray(x), separator=", ", threshold=12, max_line_width=200)


__all__ = [
    "ABORTED", "FALSE", "Domain", "Mechanism", "NoiseError", "Output", "as_mechanism",
    "from_blackbox", "from_statdp", "from_vectorized", "mechanism", "validate_outputs",
]
