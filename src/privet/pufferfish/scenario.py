"""Pufferfish scenarios: secrets, discriminative pairs, priors with unknown parameters.

A scenario is what Definition 2 of FAIER quantifies over, made concrete on an HMM: named
initial information states (one per secret, obtained by conditioning the prior theta on the
secret, Examples 3-6) and the discriminative secret pairs to compare. Differential privacy
is the special case where the initial states are point masses on data sets and the pairs
are neighbors (Theorem 6.1 of Kifer and Machanavajjhala; Example 2).

Initial states are kept unnormalized (theta restricted to the secret); the normalizer
Pr(secret | theta) is divided out by exact evaluation, or multiplied across by the SMT
encoding (clearing denominators).

Spec files (YAML or JSON) describe the same objects for ``privet pufferfish SPEC``; see
:func:`from_spec`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Context, Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..core.errors import InputError, ParameterError
from ..core.neighbors import Neighbors
from . import models
from .expr import Expr, entry, exact_value
from .hmm import HMM, Param, forward_exact, hmm, make_params, sample_values

# -- privacy budgets -------------------------------------------------------------------------

_LOG = re.compile(r"ln|log")


@dataclass(frozen=True)
class Budget:
    """A privacy budget epsilon; ``factor`` = e^epsilon when that is rational (``ln 2``)."""

    text: str
    epsilon: float
    factor: Fraction | None = None

    def bounds(self, digits: int = 40) -> tuple[Fraction, Fraction]:
        """Rationals lo < e^epsilon < hi (exact factor: both equal it)."""
        if self.factor is not None:
            return self.factor, self.factor
        ctx = Context(prec=digits)
        d = ctx.exp(Decimal(self.epsilon))  # correctly rounded
        return Fraction(ctx.next_minus(d)), Fraction(ctx.next_plus(d))

    def exceeded(self, p1: Fraction, p2: Fraction) -> bool:
        """Exactly: p1 > e^epsilon * p2."""
        if self.factor is not None:
            return p1 > self.factor * p2
        if p2 == 0:
            return p1 > 0
        for digits in (40, 80, 160, 320):
            lo, hi = self.bounds(digits)
            if p1 >= hi * p2:
                return True
            if p1 <= lo * p2:
                return False
        raise ParameterError("cannot decide the comparison with e^epsilon.")  # pragma: no cover

    def to_dict(self) -> dict:
        return {"text": self.text, "epsilon": self.epsilon,
                "e_epsilon": None if self.factor is None else str(self.factor)}


def budget(value: Any) -> Budget:
    """Parse ``0.7``, ``"ln(2)"``, ``"4*ln(2)"``, ``"4 ln 2"``, ``"ln(288/73)"`` or a Budget
    (bounded: :func:`privet.core.safe.parse_epsilon`)."""
    import math

    from ..core.safe import parse_epsilon

    if isinstance(value, Budget):
        return value
    read = parse_epsilon(value)
    if isinstance(value, str) and _LOG.search(value):
        return Budget(read.text, read.value, read.factor)
    eps = read.value
    # A float such as math.log(2) stands for ln 2: it is 2e-17 below it, and checking the
    # float literally would call the ln 2-DP geometric mechanism a violation. When e^eps is
    # within 1e-12 (relative) of a rational with a small denominator, use that rational
    # exactly -- the same reading as privet's floats-as-the-decimal-they-print rule.
    near = Fraction(math.exp(eps)).limit_denominator(10_000)
    if near > 1 and abs(float(near) - math.exp(eps)) <= 1e-12 * float(near):
        return Budget(f"ln({near})", eps, near)
    return Budget(f"{eps:g}", eps, None)


# -- scenarios ---------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Scenario:
    """An HMM with named initial information states and the pairs to compare.

    ``initial[name]`` maps state indices to unnormalized weights (theta restricted to the
    secret); ``pairs`` are ordered (s_i, s_j): Pr(w | s_i) <= e^eps Pr(w | s_j) is checked.
    ``k`` is the default observation length to check up to.
    """

    hmm: HMM
    initial: Mapping[str, Mapping[int, Any]]
    pairs: tuple
    parameters: Mapping[str, Param] = field(default_factory=dict)
    name: str = ""
    kind: str = "pufferfish"
    k: int = 1
    description: str = ""
    epsilon: Any = None  # default budget of a spec
    # declared symmetries (symmetry.Automorphism generators); verified before any use
    symmetries: tuple = ()

    @property
    def symbolic(self) -> bool:
        return self.hmm.symbolic or any(isinstance(v, Expr) for w in self.initial.values()
                                        for v in w.values())

    def substitute(self, values: Mapping[str, Fraction]) -> Scenario:
        """The scenario with exact parameter values (a single theta)."""
        vals = {k: Fraction(v) for k, v in values.items()}
        h = self.hmm.substitute(vals) if self.hmm.symbolic else self.hmm
        init = {n: {s: exact_value(v, vals) for s, v in w.items()}
                for n, w in self.initial.items()}
        return replace(self, hmm=h, initial=init, parameters={})

    def distribution(self, name: str, values: Mapping[str, Fraction] | None = None
                     ) -> dict[int, Fraction]:
        """The normalized initial information state of ``name`` (exact)."""
        w = {s: exact_value(v, values) for s, v in self._init(name).items()}
        total = sum(w.values(), Fraction(0))
        if total <= 0:
            raise InputError(f"the prior gives the secret {name!r} probability 0 here.")
        return {s: v / total for s, v in w.items() if v}

    def probability(self, name: str, sequence: Sequence, values: Mapping | None = None,
                    encoded: bool = False) -> Fraction:
        """Pr(sequence | secret ``name``, theta) exactly."""
        vals = {k: Fraction(v) for k, v in (values or {}).items()}
        return forward_exact(self.hmm, self.distribution(name, vals), sequence,
                             params=vals if self.hmm.symbolic else None, encoded=encoded)

    def _init(self, name: str) -> Mapping[int, Any]:
        try:
            return self.initial[name]
        except KeyError:
            raise InputError(f"{name!r} is not a secret (or data set) of this scenario; it has "
                             f"{', '.join(list(self.initial)[:10])}.") from None

    def describe(self) -> str:
        params = ", ".join(p.describe() for p in self.parameters.values())
        return (f"{self.name}: {self.kind}, {len(self.initial)} initial states, "
                f"{len(self.pairs)} pairs" + (f", {params}" if params else ""))


def _state_set(h: HMM, secret: Any, name: str) -> Callable[[int], bool]:
    if callable(secret):
        return lambda i: bool(secret(h.states[i]))
    if isinstance(secret, (str, int)):
        secret = [secret]
    idx = {h.state_index(s) for s in secret}
    return lambda i: i in idx


def condition(h: HMM, prior: Mapping[Any, Any], secret: Any, name: str = "secret"
              ) -> dict[int, Any]:
    """theta restricted to the states where ``secret`` holds (unnormalized conditioning).

    ``prior`` maps state labels to weights (numbers or expressions); ``secret`` is a
    collection of state labels or a predicate on labels.
    """
    holds = _state_set(h, secret, name)
    out = {}
    for label, w in prior.items():
        i = h.state_index(label)
        v = entry(w)
        if holds(i) and not (isinstance(v, Fraction) and v == 0):
            out[i] = v
    return out


def _check_positive(h: HMM, name: str, weights: Mapping[int, Any],
                    params: Mapping[str, Param]) -> None:
    """Definition 2 needs Pr(s | theta) != 0: refuse a secret the prior rules out."""
    if not weights:
        raise InputError(f"the prior gives the secret {name!r} probability 0; Pufferfish "
                         "privacy compares only secrets with positive probability.")
    if any(isinstance(v, Fraction) and v < 0 for v in weights.values()):
        raise InputError(f"the prior gives a negative weight under the secret {name!r}.")
    for _, vals in sample_values(weights.values(), params, "the prior", seed=7):
        if sum(vals, Fraction(0)) > 0:
            return
    raise InputError(f"the prior gives the secret {name!r} probability 0; Pufferfish privacy "
                     "compares only secrets with positive probability.")


def pufferfish_scenario(h: HMM, prior: Mapping[Any, Any], secrets: Mapping[str, Any],
                        pairs: Iterable[Sequence[str]] | None = None, *,
                        parameters: Mapping[str, Any] | None = None, k: int = 1,
                        name: str = "scenario", description: str = "",
                        epsilon: Any = None) -> Scenario:
    """A Pufferfish scenario: initial states pi_s = theta conditioned on each secret s.

    ``pairs`` defaults to every ordered pair of distinct secrets (both directions, as
    Eqs. (4) and (5)). Parameters of the prior are declared in ``parameters``.
    """
    params = dict(h.parameters)
    params.update(make_params(parameters))
    init = {}
    for s, pred in secrets.items():
        init[str(s)] = condition(h, prior, pred, str(s))
        _check_positive(h, str(s), init[str(s)], params)
    if pairs is None:
        pairs = [(a, b) for a in init for b in init if a != b]
    pairs = tuple((str(a), str(b)) for a, b in pairs)
    for a, b in pairs:
        for s in (a, b):
            if s not in init:
                raise InputError(f"the secret pair ({a}, {b}) names {s!r}, which is not a "
                                 "secret.")
    return Scenario(h, init, pairs, params, name, "pufferfish", int(k), description, epsilon)


def dp_scenario(h: HMM, inputs: Mapping[Any, Any], pairs: Iterable[Sequence] | Neighbors,
                *, k: int = 2, name: str = "dp", description: str = "",
                epsilon: Any = None) -> Scenario:
    """Differential privacy as Pufferfish: point masses on data sets, neighbors as pairs.

    ``inputs`` maps a data set (any hashable, e.g. a tuple) to its initial state label;
    ``pairs`` is a list of neighboring data-set pairs or a privet neighbor relation (then
    every ordered pair of distinct neighbors among ``inputs`` is compared).
    """
    init = {}
    keys = {}
    for x, label in inputs.items():
        key = _input_key(x)
        keys[x] = key
        init[key] = {h.state_index(label): Fraction(1)}
    if isinstance(pairs, Neighbors):
        plist = neighbor_pairs(list(inputs), pairs)
    else:
        plist = [tuple(p) for p in pairs]
    out = []
    for a, b in plist:
        ka = keys.get(a, _input_key(a))
        kb = keys.get(b, _input_key(b))
        for kx in (ka, kb):
            if kx not in init:
                raise InputError(f"the pair names data set {kx}, which has no initial state.")
        out.append((ka, kb))
    return Scenario(h, init, tuple(out), dict(h.parameters), name, "dp", int(k), description,
                    epsilon)


def _input_key(x: Any) -> str:
    if isinstance(x, (tuple, list)):
        return "[" + ", ".join(_input_key(v) for v in x) + "]"
    if isinstance(x, float) and x == int(x):
        return str(int(x))
    return str(x)


def neighbor_pairs(inputs: Sequence, neighbors: Neighbors) -> list[tuple]:
    """Every ordered pair of distinct neighbors among ``inputs`` (vectorized where possible)."""
    import numpy as np

    if neighbors.kind in ("all_differ", "one_differs", "replace_one"):
        lens = {len(x) if isinstance(x, (tuple, list)) else 1 for x in inputs}
        if len(lens) == 1:
            X = np.array([np.ravel(np.asarray(x, dtype=float)) for x in inputs])
            out = []
            for i in range(len(X)):
                diff = np.abs(X - X[i])
                if neighbors.kind == "all_differ":
                    ok = (diff <= neighbors.delta + 1e-9).all(1)
                else:
                    changed = (diff > 1e-9).sum(1)
                    ok = changed <= 1
                    if neighbors.kind == "one_differs":
                        ok &= (diff <= neighbors.delta + 1e-9).all(1)
                ok[i] = False
                out.extend((inputs[i], inputs[j]) for j in np.flatnonzero(ok))
            return out
    return [(a, b) for a, b in itertools.permutations(inputs, 2)
            if neighbors.are_neighbors(a, b)]


def mechanism_scenario(mech: Any, inputs: Sequence | None = None,
                       args: Mapping[str, Any] | None = None, k: int = 2) -> Scenario:
    """DP of a discrete privet mechanism: its HMM (:func:`models.from_mechanism`) with point
    masses on the inputs and the mechanism's neighbor relation as the pairs."""
    h, labels = models.from_mechanism(mech, inputs, args)
    return dp_scenario(h, labels, mech.neighbors, k=k, name=f"{mech.name}, DP",
                       epsilon=mech.epsilon)


# -- the paper's scenarios (Table 2) ---------------------------------------------------------

def example2() -> Scenario:
    """Example 2: the truncated 1/2-geometric mechanism as ln(2)-DP (neighbors |f - f'| = 1)."""
    h = models.truncated_geometric()
    inputs = {i: str(i) for i in range(3)}
    pairs = [(a, b) for a in range(3) for b in range(3) if abs(a - b) == 1]
    return dp_scenario(h, inputs, pairs, k=1, name="Ex. 2: truncated geometric, DP",
                       epsilon="ln(2)",
                       description="counting query over two entries; neighbors change the "
                                   "count by 1")


def example3() -> Scenario:
    """Example 3: a contagious disease, so the count is 0 or 2 (theta_p(0,0)=1-p, (1,1)=p)."""
    h = models.truncated_geometric()
    prior = {"0": "1 - p", "2": "p"}
    secrets = {"c": ["1", "2"], "nc": ["0", "1"]}  # John has / has not the disease
    return pufferfish_scenario(
        h, prior, secrets, parameters={"p": (0, 1)}, k=1, epsilon="ln(2)",
        name="Ex. 3: truncated geometric, contagious disease",
        description="data set (John, family member); either both or none are ill")


def example4() -> Scenario:
    """Example 4: independent disease with probability p; John's record present or absent.

    As in the paper, "with John's record" (who is ill) conditions the count on being >= 1,
    and "without" keeps the prior ((1-p)^2, 2p(1-p), p^2).
    """
    h = models.truncated_geometric()
    prior = {"0": "(1-p)**2", "1": "2*p*(1-p)", "2": "p**2"}
    secrets = {"with": ["1", "2"], "without": ["0", "1", "2"]}
    return pufferfish_scenario(h, prior, secrets, parameters={"p": (0, 1)}, k=1,
                               epsilon="ln(2)",
                               name="Ex. 4: truncated geometric, independent disease")


def _binomial2(p: str) -> dict[int, str]:
    return {0: f"(1-({p}))**2", 1: f"2*({p})*(1-({p}))", 2: f"({p})**2"}


def count_prior(factors: Sequence[Mapping[int, Any]], prefix: str = "v=") -> dict[str, str]:
    """A product prior over count vectors: state ``prefix + digits`` gets the product."""
    prior = {}
    for combo in itertools.product(*[list(f.items()) for f in factors]):
        label = prefix + "".join(str(c) for c, _ in combo)
        prior[label] = "*".join(f"({w})" for _, w in combo)
    return prior


def example5() -> Scenario:
    """Example 5: noisy max over 3 diseases, independent with unknown p_A, p_B, p_C.

    Secret: whether John has disease A. Following the paper's conditioning, "not A"
    conditions the count of A on <= 1 and "A" on >= 1.
    """
    h = models.discrete_noisy_max(3)
    prior = count_prior([_binomial2("pA"), _binomial2("pB"), _binomial2("pC")])
    secrets = {"notA": lambda s: s.startswith("v=") and s[2] in "01",
               "A": lambda s: s.startswith("v=") and s[2] in "12"}
    return pufferfish_scenario(h, prior, secrets,
                               parameters={"pA": (0, 1), "pB": (0, 1), "pC": (0, 1)}, k=2,
                               epsilon="ln(2)",
                               name="Ex. 5: discrete noisy max, independent diseases")


def example6() -> Scenario:
    """Example 6: 5 diseases, two family members; disease 1 contagious (counts 0 or 2).

    p_3, p_4, p_5 = 3/10, 4/10, 5/10 are known, p_2 is unknown. The weight of disease 1's
    count cancels in the conditioning on the secret (John has disease 1 iff its count is 2),
    so it is fixed at 1/2. Counts of the other diseases are binomial(2, p_k) (the paper's
    example state weight omits the factor 2 of a count of 1; we keep it).
    """
    h = models.discrete_noisy_max(5)
    factors = [{0: "1/2", 2: "1/2"}, _binomial2("p2"), _binomial2("3/10"), _binomial2("4/10"),
               _binomial2("5/10")]
    prior = count_prior(factors)
    secrets = {"ill": lambda s: s.startswith("v=2"), "healthy": lambda s: s.startswith("v=0")}
    return pufferfish_scenario(h, prior, secrets, parameters={"p2": (0, 1)}, k=2,
                               epsilon="ln(2)",
                               name="Ex. 6: discrete noisy max, contagious disease 1")


def noisy_max_dp(n: int = 5) -> Scenario:
    """Discrete noisy max (Fig. 2 model) under DP: answers in {0,1,2}^n, each differing by 1."""
    from ..core.neighbors import all_differ

    h = models.discrete_noisy_max(n)
    sc = dp_scenario(h, models.noisy_max_inputs(n), all_differ(1), k=2,
                     name=f"discrete noisy max, {n} queries, DP")
    return replace(sc, symmetries=tuple(models.noisy_max_symmetries(h, n)))


def above_threshold_dp() -> Scenario:
    """Discrete above threshold (Fig. 3 model) under DP: threshold t public, both copies."""
    h = models.discrete_above_threshold()
    init = {}
    pairs = []
    for t in range(3):
        init[f"D,t={t}"] = {h.state_index(f"A:t={t}"): Fraction(1)}
        init[f"D',t={t}"] = {h.state_index(f"B:t={t}"): Fraction(1)}
        pairs += [(f"D,t={t}", f"D',t={t}"), (f"D',t={t}", f"D,t={t}")]
    return Scenario(h, init, tuple(pairs), {}, "discrete above threshold, DP", "dp", 15,
                    "query answers in {0,1,2}; D and D' answer each query within 1",
                    "4*ln(2)")


EXAMPLES: dict[str, Callable[[], Scenario]] = {
    "ex2": example2, "ex3": example3, "ex4": example4, "ex5": example5, "ex6": example6,
    "noisy_max": noisy_max_dp, "above_threshold": above_threshold_dp,
}

BUILTIN_MODELS: dict[str, Callable[..., HMM]] = {
    "truncated_geometric": models.truncated_geometric,
    "noisy_max": models.discrete_noisy_max,
    "above_threshold": models.discrete_above_threshold,
}


# -- spec files --------------------------------------------------------------------------------

MAX_K = 200                     # observation lengths of a spec or --k-max
MAX_MODEL_ENTRIES = 2_000_000   # transition + emission entries of a built-in model

SPEC_KEYS = ("example", "model", "parameters", "prior", "secrets", "pairs", "dp", "name", "k",
             "epsilon", "mechanism", "inputs", "args", "description")


def _count_arg(low: int, high: int) -> Callable[[Any, str], int]:
    def check(v: Any, where: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
            raise InputError(f"{where} must be a whole number from {low:,} to {high:,}, "
                             f"got {_shown(v)}.")
        return v
    return check


def _probability_arg(v: Any, where: str) -> Fraction:
    from ..core.safe import parse_rational

    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise InputError(f"{where} must be a number between 0 and 1, got {_shown(v)}.")
    try:
        q = parse_rational(str(v), where)
    except ParameterError:
        raise InputError(f"{where} must be a number between 0 and 1, got {_shown(v)}.") \
            from None
    if not 0 < q < 1:
        raise InputError(f"{where} must be strictly between 0 and 1, got {_shown(v)}.")
    return q


# built-in models: their arguments (checked and converted) and their number of entries
BUILTIN_ARGS: dict[str, dict[str, Callable[[Any, str], Any]]] = {
    "truncated_geometric": {"alpha": _probability_arg, "n": _count_arg(1, 10**6)},
    "noisy_max": {"n": _count_arg(1, 64), "alpha": _probability_arg,
                  "values": _count_arg(1, 10**6)},
    "above_threshold": {},
}
BUILTIN_ENTRIES: dict[str, Callable[[dict], float]] = {
    "truncated_geometric": lambda a: float(a.get("n", 2) + 2) ** 2,
    "noisy_max": lambda a: 2.0 * float(a.get("values", 3)) ** (2 * a.get("n", 3)),
    "above_threshold": lambda a: 0.0,
}


def _shown(v: Any) -> str:
    text = repr(v) if isinstance(v, (str, int, float, bool)) or v is None else \
        f"a {type(v).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def load_spec(source: str | Path | Mapping, *, allow_code: bool = False) -> Scenario:
    """A scenario from a YAML/JSON file (path) or an already-parsed mapping.

    Keys: ``example`` (a built-in: ex2..ex6, noisy_max, above_threshold), or ``model``
    (``{builtin: name, ...args}`` or ``{states, observations, transition, emission}``),
    ``parameters`` (``{p: [0, 1]}``, open intervals), and either ``prior`` + ``secrets``
    (+ ``pairs``) for Pufferfish, or ``dp: {inputs: {name: state}, pairs: [[a, b], ...]}``.
    Optional: ``name``, ``k`` (1..:data:`MAX_K`), ``epsilon`` (e.g. ``ln(2)``),
    ``mechanism`` (a library mechanism name, checked for DP through
    :func:`models.from_mechanism`).

    A spec is data: reading it never runs code. ``mechanism: FILE.py:NAME`` or
    ``MODULE:NAME`` would import and run that code, so it is refused unless
    ``allow_code=True`` (the CLI's ``--allow-code``). Files are read with the bounds of
    :mod:`privet.core.safe` (size, nesting, YAML aliases, numbers, expressions).
    """
    from ..core.safe import MAX_SPEC_BYTES, load_json, load_yaml, read_text

    if isinstance(source, Mapping):
        spec = dict(source)
    else:
        path = Path(source)
        text = read_text(path, "spec file", MAX_SPEC_BYTES)
        what = f"spec file {str(path)!r}"
        spec = load_json(text, what) if path.suffix.lower() == ".json" else \
            load_yaml(text, what)
    if not isinstance(spec, Mapping):
        raise InputError("a pufferfish spec must be a mapping of keys (model, prior, ...).")
    return from_spec(spec, allow_code=allow_code)


def from_spec(spec: Mapping, *, allow_code: bool = False) -> Scenario:
    """See :func:`load_spec`. The spec's shape is checked first (each key's type and
    bounds); anything else malformed while building the scenario is one sentence too."""
    _check_spec(spec, allow_code)
    try:
        return _build(spec)
    except (InputError, ParameterError):
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError,
            OverflowError, RecursionError) as err:
        from ..core.loading import one_line as _oneline

        raise InputError(f"the spec is malformed: {_oneline(err)}") from None


def _check_spec(spec: Mapping, allow_code: bool) -> None:
    """Types and bounds of every key, before anything is built."""
    extra = [str(k) for k in spec if k not in SPEC_KEYS]
    if extra:
        raise InputError(f"unknown key(s) in the spec: {', '.join(sorted(extra))[:200]}; known: "
                         f"{', '.join(sorted(SPEC_KEYS))}.")

    def need(key: str, types: tuple, what: str) -> None:
        if key in spec and not isinstance(spec[key], types):
            raise InputError(f"the spec's {key!r} must be {what}, got {_shown(spec[key])}.")

    scalar = (str, int, float)
    for key in ("name", "description", "example", "mechanism"):
        need(key, scalar if key in ("name", "description") else (str,), "text")
    for key in ("model", "parameters", "prior", "secrets", "dp", "args"):
        need(key, (Mapping,), "a mapping of keys to values")
    for key in ("pairs", "inputs"):
        need(key, (list,), "a list")
    if "k" in spec:
        _count_arg(1, MAX_K)(spec["k"], "the spec's 'k' (the longest observation sequence)")
    if "epsilon" in spec:
        budget(spec["epsilon"])
    if "mechanism" in spec and ":" in spec["mechanism"] and not allow_code:
        raise InputError(
            f"the spec names code to run (mechanism: {_shown(spec['mechanism'])}), but a spec "
            "is data and privet runs only the target you name on the command line: give that "
            "mechanism as the target, or pass --allow-code (allow_code=True) to let this spec "
            "import and run it.")
    if "dp" in spec:
        dp = spec["dp"]
        if not isinstance(dp.get("inputs"), Mapping) or not isinstance(dp.get("pairs"), list):
            raise InputError("the spec's 'dp' needs 'inputs' (data set: state) and 'pairs' "
                             "(a list of [data set, data set]).")
        _check_pairs(dp["pairs"], "the spec's dp pairs")
    if "pairs" in spec:
        _check_pairs(spec["pairs"], "the spec's 'pairs'")
    model = spec.get("model")
    if isinstance(model, Mapping) and "builtin" in model:
        _builtin_args(model)
    elif isinstance(model, Mapping):
        for key in ("states", "observations"):
            if key in model and not isinstance(model[key], list):
                raise InputError(f"the model's {key!r} must be a list of labels.")
        for key in ("transition", "emission"):
            if key in model and not isinstance(model[key], (Mapping, list)):
                raise InputError(f"the model's {key!r} must be a matrix (list of rows) or a "
                                 "mapping of state: {label: probability}.")


def _check_pairs(pairs: Any, where: str) -> None:
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2
                                              for p in pairs):
        raise InputError(f"{where} must be a list of pairs like [a, b].")


def _builtin_args(model: Mapping) -> dict:
    """The checked and converted arguments of a built-in model, refused when it would be
    larger than :data:`MAX_MODEL_ENTRIES`."""
    b = model["builtin"]
    if not isinstance(b, str) or b not in BUILTIN_MODELS:
        raise InputError(f"unknown builtin model {_shown(b)}; choose one of "
                         f"{', '.join(BUILTIN_MODELS)}.")
    schema = BUILTIN_ARGS[b]
    kwargs = {}
    for key, value in model.items():
        if key == "builtin":
            continue
        if key not in schema:
            known = ", ".join(schema) or "none"
            raise InputError(f"the builtin model {b!r} takes no argument {_shown(key)}; its "
                             f"arguments: {known}.")
        kwargs[key] = schema[key](value, f"the model's {key!r}")
    size = BUILTIN_ENTRIES[b](kwargs)
    if size > MAX_MODEL_ENTRIES:
        raise InputError(f"the builtin model {b!r} with {kwargs} has about {size:.3g} "
                         f"probabilities, above the limit of {MAX_MODEL_ENTRIES:,}; choose "
                         "smaller arguments.")
    return kwargs


def _build(spec: Mapping) -> Scenario:
    if "example" in spec:
        ex = str(spec["example"])
        if ex not in EXAMPLES:
            raise InputError(f"unknown example {ex!r}; choose one of {', '.join(EXAMPLES)}.")
        sc = EXAMPLES[ex]()
        changes = {k: spec[k] for k in ("k", "epsilon", "name") if k in spec}
        return replace(sc, **changes)
    if "mechanism" in spec:
        from ..mechanisms import load as load_mechanism

        mech = load_mechanism(str(spec["mechanism"]))
        sc = mechanism_scenario(mech, spec.get("inputs"), spec.get("args"),
                                k=int(spec.get("k", 2)))
        return replace(sc, name=str(spec.get("name", sc.name)),
                       epsilon=spec.get("epsilon", sc.epsilon))
    model = spec.get("model")
    if not isinstance(model, Mapping):
        raise InputError("the spec needs 'model' (builtin or states/observations/transition/"
                         "emission), 'example' or 'mechanism'.")
    params = spec.get("parameters") or {}
    if "builtin" in model:
        h = BUILTIN_MODELS[str(model["builtin"])](**_builtin_args(model))
    else:
        missing = [k for k in ("states", "observations", "transition", "emission")
                   if k not in model]
        if missing:
            raise InputError(f"the model lacks {', '.join(missing)}.")
        h = hmm([str(s) for s in model["states"]], [str(o) for o in model["observations"]],
                _str_keys(model["transition"]), _str_keys(model["emission"]),
                parameters=params, name=str(spec.get("name", "hmm")))
    name = str(spec.get("name", h.name))
    k = int(spec.get("k", 1))
    if "dp" in spec:
        dp = spec["dp"]
        inputs = {str(a): str(s) for a, s in dp["inputs"].items()}
        return dp_scenario(h, inputs, [(str(a), str(b)) for a, b in dp["pairs"]], k=k,
                           name=name, epsilon=spec.get("epsilon"))
    if "prior" not in spec or "secrets" not in spec:
        raise InputError("a Pufferfish spec needs 'prior' (state: weight) and 'secrets' "
                         "(name: [states]); a DP spec needs 'dp'.")
    prior = {str(s): w for s, w in spec["prior"].items()}
    secrets = {str(n): [str(s) for s in v] if isinstance(v, list) else str(v)
               for n, v in spec["secrets"].items()}
    pairs = spec.get("pairs")
    return pufferfish_scenario(h, prior, secrets, pairs, parameters=params, k=k, name=name,
                               description=str(spec.get("description", "")),
                               epsilon=spec.get("epsilon"))


def _str_keys(m: Any) -> Any:
    if isinstance(m, Mapping):
        return {str(k): _str_keys(v) if isinstance(v, Mapping) else v for k, v in m.items()}
    return m
