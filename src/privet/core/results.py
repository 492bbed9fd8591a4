"""Result types shared by the engines; every one is a frozen dataclass that round-trips JSON.

``to_json(result)`` / ``from_json(text)`` handle every class decorated with
:func:`result_type` (numbers, Fractions, infinities, NumPy arrays and nested results).
Verdict words are honest: statistical results say "violation found" or "no violation
found"; only exact and SMT results may say "verified", and only for what they checked.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

_TYPES: dict[str, type] = {}


def result_type(cls: type) -> type:
    """Register a frozen dataclass for the JSON round-trip."""
    _TYPES[cls.__name__] = cls
    return cls


def to_jsonable(obj: Any) -> Any:
    """Plain JSON data for ``obj`` (dataclasses tagged with their type)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        d = {"__type__": type(obj).__name__}
        for f in dataclasses.fields(obj):
            d[f.name] = to_jsonable(getattr(obj, f.name))
        return d
    if isinstance(obj, Fraction):
        return {"__fraction__": f"{obj.numerator}/{obj.denominator}"}
    if isinstance(obj, np.ndarray):
        return [to_jsonable(x) for x in obj.tolist()]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if math.isnan(f):
            return {"__float__": "nan"}
        if math.isinf(f):
            return {"__float__": "inf" if f > 0 else "-inf"}
        return f
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (str, int, bool)) or obj is None:
        return obj
    if hasattr(obj, "spec"):
        return to_jsonable(obj.spec())
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return str(obj)


def from_jsonable(data: Any) -> Any:
    """Inverse of :func:`to_jsonable` for registered result types."""
    if isinstance(data, dict):
        if "__fraction__" in data:
            return Fraction(data["__fraction__"])
        if "__float__" in data:
            return float(data["__float__"])
        if "__type__" in data:
            cls = _TYPES[data["__type__"]]
            kwargs = {}
            for f in dataclasses.fields(cls):
                if f.name in data:
                    value = from_jsonable(data[f.name])
                    if isinstance(value, list) and "tuple" in str(f.type):
                        value = _tuplify(value)
                    kwargs[f.name] = value
            return cls(**kwargs)
        return {k: from_jsonable(v) for k, v in data.items()}
    if isinstance(data, list):
        return [from_jsonable(x) for x in data]
    return data


def _tuplify(v: Any) -> Any:
    return tuple(_tuplify(x) for x in v) if isinstance(v, list) else v


def to_json(result: Any, indent: int | None = 2) -> str:
    return json.dumps(to_jsonable(result), indent=indent, ensure_ascii=False)


def from_json(text: str) -> Any:
    return from_jsonable(json.loads(text))


# --------------------------------------------------------------------------------------------
# Common results
# --------------------------------------------------------------------------------------------

@result_type
@dataclass(frozen=True)
class Counterexample:
    """A witness that a mechanism violates its claimed epsilon.

    ``counts``/``n`` are the event counts and sample sizes on D1 and D2 for a statistical
    witness; ``probabilities`` the exact event probabilities for an exact one.
    ``epsilon_witnessed`` is the epsilon the witness proves (a lower bound, holding with
    ``confidence`` or exactly when ``exact``).
    """

    mechanism: str
    d1: tuple
    d2: tuple
    args: dict
    event: str
    event_spec: dict | None = None
    counts: tuple | None = None
    n: tuple | None = None
    probabilities: tuple | None = None
    p_value: float | None = None
    test_epsilon: float | None = None
    epsilon_witnessed: float | None = None
    confidence: float | None = None
    exact: bool = False
    seed: int | None = None
    details: dict = field(default_factory=dict)


@result_type
@dataclass(frozen=True)
class PValueCurve:
    """p-values over a range of test epsilons (StatDP Figs. 1-4) and their summary.

    ``lower_bound`` is the largest test epsilon rejected at level ``alpha`` (a statistical
    lower bound on the true epsilon), or None when none was rejected.
    """

    mechanism: str
    claimed_epsilon: float | None
    test_epsilons: tuple
    p_values: tuple
    alpha: float = 0.05
    lower_bound: float | None = None
    counterexamples: tuple = ()
    verdict: str = ""
    seed: int | None = None
    seconds: float | None = None
    details: dict = field(default_factory=dict)


@result_type
@dataclass(frozen=True)
class Bound:
    """A lower bound on epsilon: "epsilon >= value with confidence ``confidence``".

    ``exact`` is True when the bound was computed by exact inference (confidence 1).
    ``witness`` holds x, x', the event and the estimated or exact probabilities.
    """

    mechanism: str
    value: float
    confidence: float
    method: str
    exact: bool = False
    witness: Counterexample | None = None
    claimed_epsilon: float | None = None
    seed: int | None = None
    seconds: float | None = None
    details: dict = field(default_factory=dict)

    @property
    def violates(self) -> bool:
        return self.claimed_epsilon is not None and self.value > self.claimed_epsilon


@result_type
@dataclass(frozen=True)
class ExactBound:
    """The tight epsilon of a discrete mechanism over a checked input domain.

    ``e_epsilon`` is exact (a Fraction) when computed with Fractions; ``epsilon`` is its
    natural log. ``witness`` is the worst-case triple (x, x', y); ``domain`` says what was
    checked, so "verified" is said only for it.
    """

    mechanism: str
    epsilon: float
    e_epsilon: Any
    witness: tuple
    domain: str
    delta: Any = None
    claimed_epsilon: float | None = None
    backend: str = "enumerate"
    seconds: float | None = None
    details: dict = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        """True when the claimed epsilon holds on the checked domain."""
        return self.claimed_epsilon is not None and self.epsilon <= self.claimed_epsilon + 1e-12


@result_type
@dataclass(frozen=True)
class AccuracyBound:
    """Tight (alpha, beta)-accuracy: P(|M(x) - f(x)| <= alpha) >= 1 - beta over the inputs."""

    mechanism: str
    alpha: float
    one_minus_beta: Any
    worst_input: tuple
    top_k: tuple = ()
    domain: str = ""
    backend: str = "enumerate"
    seconds: float | None = None
    details: dict = field(default_factory=dict)


@result_type
@dataclass(frozen=True)
class SuiteRow:
    """One line of ``privet suite``: an engine's verdict on a library mechanism."""

    mechanism: str
    engine: str
    claimed_epsilon: float | None
    true_epsilon: float | None
    verdict: str
    figure: float | None = None
    seconds: float | None = None
    details: dict = field(default_factory=dict)
