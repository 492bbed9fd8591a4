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
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .claims import as_claimed, exp_below
from .text import fmt_apart, fmt_num, fmt_p, fmt_pvalue, fmt_value, fmt_vec, pct, plain

_TYPES: dict[str, type] = {}


# How results render is privet.report's business: the package (privet/__init__.py) fills
# these in -- "html" (an object -> the notebook's HTML) and "rich" (an object -> a rich
# renderable) -- so that core never imports the layer above it.
RENDERERS: dict[str, Callable[[Any], Any]] = {}


def _renderer(kind: str) -> Callable[[Any], Any]:
    try:
        return RENDERERS[kind]
    except KeyError:  # pragma: no cover - privet/__init__.py always registers both
        raise RuntimeError(f"no {kind} renderer registered (import privet first).") from None


def _repr_html(self: Any) -> str:
    """Notebook display: the result's HTML report (``privet.report.html``)."""
    return _renderer("html")(self)


def result_type(cls: type) -> type:
    """Register a frozen dataclass for the JSON round-trip and give it ``_repr_html_``,
    a one-line ``repr`` of its named figures (``cls._shown``, as scipy.stats results print),
    ``summary()``, the full terminal table as text, and ``to_json()``, everything as JSON."""
    _TYPES[cls.__name__] = cls
    if "_repr_html_" not in cls.__dict__:
        cls._repr_html_ = _repr_html  # type: ignore[attr-defined]
    if "_shown" in cls.__dict__:
        cls.__repr__ = _short_repr  # type: ignore[method-assign]
    if "summary" not in cls.__dict__:
        cls.summary = _summary  # type: ignore[attr-defined]
    if "to_json" not in cls.__dict__:
        cls.to_json = _to_json  # type: ignore[attr-defined]
    return cls


def _short_repr(self: Any) -> str:
    """``DetectResult(verdict='violation found', p_value=3.0e-155, …)``: the figures a
    person looks at first, each printed as privet prints it (``to_json`` keeps the rest)."""
    parts = []
    for name, value in self._shown():
        if value is None:
            continue
        if name == "p_value":
            text = fmt_pvalue(value).replace("< ", "<")
        elif isinstance(value, bool):
            text = str(value)
        elif isinstance(value, str):
            text = repr(value)
        elif isinstance(value, (list, tuple)):
            text = _vec(value)
        else:
            text = fmt_num(value)
        parts.append(f"{name}={text}")
    return f"{type(self).__name__}({', '.join(parts)})"


def _summary(self: Any, width: int = 100) -> str:
    """The full terminal rendering (tables) as text, ``width`` columns wide."""
    import io

    from rich.console import Console

    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(_renderer("rich")(self))
    return console.export_text()


def _to_json(self: Any, indent: int | None = 2) -> str:
    """Every field of the result as JSON text (:func:`to_json`; :func:`from_json` reads it
    back)."""
    return to_json(self, indent=indent)


def _vec(v: Any) -> str:
    """A vector in full when short, runs counted (``[0×5, 2×5]``) when longer than 8."""
    return fmt_vec(v, short=len(v) > 8)


def _head(verdict: str) -> str:
    """The verdict's words without the figures that follow them (shown as fields)."""
    for stop in (" (", ": ", "; "):
        verdict = verdict.split(stop)[0]
    return verdict


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
    """Inverse of :func:`to_jsonable` for registered result types.

    Data read from a file is untrusted: an unknown ``__type__``, a field of the wrong type
    (checked against the dataclass annotation), a missing required field, a malformed
    ``__fraction__``/``__float__`` or a number beyond the range of a double raises
    :class:`~privet.core.errors.InputError` with one sentence.
    """
    if isinstance(data, dict):
        if "__fraction__" in data:
            return _fraction(data["__fraction__"])
        if "__float__" in data:
            return _special_float(data["__float__"])
        if "__type__" in data:
            return _result(data)
        return {k: from_jsonable(v) for k, v in data.items()}
    if isinstance(data, list):
        return [from_jsonable(x) for x in data]
    return data


def _result(data: dict) -> Any:
    from .errors import InputError

    name = data["__type__"]
    if not isinstance(name, str) or name not in _TYPES:
        raise InputError(f"unknown result type {str(name)[:40]!r}; privet saves "
                         f"{', '.join(sorted(_TYPES))}.")
    cls = _TYPES[name]
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            value = from_jsonable(data[f.name])
            if isinstance(value, list) and "tuple" in str(f.type):
                value = _tuplify(value)
            _check_field(name, f, value)
            kwargs[f.name] = value
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise InputError(f"the saved {name} lacks its {f.name!r} field.")
    return cls(**kwargs)


_CHECKED = {"Any", "None", "bool", "str", "dict", "tuple", "int", "float"}


def _check_field(cls_name: str, f: dataclasses.Field, value: Any) -> None:
    """``value`` matches the annotation of ``f`` (its top level: numbers, text, tuples...)."""
    from numbers import Real

    from .errors import InputError

    kinds = [k.strip() for k in str(f.type).split("|")]
    if any(k not in _CHECKED and k not in _TYPES for k in kinds):
        return  # an annotation this check does not know: leave it to the renderers
    for k in kinds:
        if k == "Any" or (k == "None" and value is None) or (
                k == "bool" and isinstance(value, bool)) or (
                k == "str" and isinstance(value, str)) or (
                k == "dict" and isinstance(value, dict)) or (
                k == "tuple" and isinstance(value, tuple)) or (
                k == "int" and isinstance(value, int) and not isinstance(value, bool)) or (
                k == "float" and isinstance(value, Real) and not isinstance(value, bool)) or (
                k in _TYPES and isinstance(value, _TYPES[k])):
            return
    shown = type(value).__name__ if not isinstance(value, (str, int, float)) else repr(value)
    raise InputError(f"the saved {cls_name}'s field {f.name!r} must be {' or '.join(kinds)}, "
                     f"not {shown[:40]}.")


def _fraction(text: Any) -> Fraction:
    """``"p/q"`` as written by :func:`to_jsonable`, within the range of a double."""
    import re

    from .errors import InputError

    m = re.fullmatch(r"(-?\d{1,4300})/(\d{1,4300})", text) if isinstance(text, str) else None
    if not m or int(m.group(2)) == 0:
        raise InputError(f"malformed fraction {str(text)[:40]!r}; privet writes them as "
                         "'p/q' with q > 0.")
    q = Fraction(int(m.group(1)), int(m.group(2)))
    if abs(q.numerator).bit_length() - q.denominator.bit_length() > 1024:
        raise InputError(f"the fraction {str(text)[:40]!r}... is beyond the range of a double.")
    return q


def _special_float(text: Any) -> float:
    from .errors import InputError

    if text not in ("nan", "inf", "-inf"):
        raise InputError(f"malformed number {str(text)[:40]!r}; privet writes 'nan', 'inf' "
                         "or '-inf' here.")
    return float(text)


def _tuplify(v: Any) -> Any:
    return tuple(_tuplify(x) for x in v) if isinstance(v, list) else v


def is_result(obj: Any) -> bool:
    """True for an instance of a registered result type (see :func:`result_type`)."""
    return _TYPES.get(type(obj).__name__) is type(obj)


def interrupted(result: Any) -> bool:
    """True when Ctrl-C cut ``result`` short: the one convention every result type follows
    (``details["interrupted"]``, or the ``interrupted`` field of a SuiteResult); a list is
    interrupted when any item is. Renderers (terminal, HTML, JSON) and exit codes read it."""
    if isinstance(result, (list, tuple)) and not dataclasses.is_dataclass(result):
        return any(interrupted(r) for r in result)
    if isinstance(result, dict):  # the JSON of privet sample
        return result.get("interrupted") is True
    if getattr(result, "interrupted", False) is True:
        return True
    details = getattr(result, "details", None)
    return isinstance(details, dict) and details.get("interrupted") is True


def mark_interrupted(result: Any) -> Any:
    """A copy of ``result`` marked as cut short by Ctrl-C (see :func:`interrupted`)."""
    if interrupted(result):
        return result
    if any(f.name == "interrupted" for f in dataclasses.fields(result)):
        return dataclasses.replace(result, interrupted=True)
    return dataclasses.replace(result, details={**result.details, "interrupted": True})


def to_json(result: Any, indent: int | None = 2) -> str:
    return json.dumps(to_jsonable(result), indent=indent, ensure_ascii=False)


def from_json(text: str) -> Any:
    return from_jsonable(json.loads(text))


# --------------------------------------------------------------------------------------------
# The words of verdicts: one table, read by the terminal, HTML and JSON renderers and the
# reports' "How to read" legend (STYLE.md). Every verdict an engine returns begins with one
# of these words; what follows them is the evidence, written by the functions below.
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VerdictWords:
    """A verdict's words, its tone (``bad``: a violation, ``good``: a proof, ``neutral``:
    nothing found, ``warn``: nothing claimed) and what it means, for the legend."""

    words: str
    tone: str
    meaning: str


VERDICTS: tuple[VerdictWords, ...] = (
    VerdictWords("violation found", "bad",
                 "a statistical counterexample: inputs D1, D2 and an output event E with "
                 "P[M(D1) ∈ E] > e^ε · P[M(D2) ∈ E] at the test ε, tested on fresh samples; "
                 "the p-value says how unlikely the counts are if the claim held"),
    VerdictWords("violation certified", "bad",
                 "ε ≥ L holds with the stated confidence (a certified lower bound from "
                 "correlated sampling), and L is above the claimed ε"),
    VerdictWords("violation (exact)", "bad",
                 "exact inference or the SMT check found the counterexample with its exact "
                 "probabilities: the claim fails on the checked domain, with certainty"),
    VerdictWords("no violation found", "neutral",
                 "the tests found no significant counterexample; this is not a proof of "
                 "privacy"),
    VerdictWords("inconclusive", "neutral",
                 "the evidence neither rejects nor supports the claim at the chosen level"),
    VerdictWords("verified", "good",
                 "only from exact inference or an SMT solver, and only for the domain "
                 "(inputs, lengths, parameters) that was checked"),
    VerdictWords("unknown", "warn", "a solver gave up; nothing is claimed"),
    VerdictWords("interrupted", "warn",
                 "Ctrl-C stopped the run: what finished is shown, nothing is called verified"),
    VerdictWords("error", "warn", "the engine could not run on this mechanism (the reason "
                                  "follows)"),
)


def verdict_words(text: str) -> VerdictWords | None:
    """The table entry a verdict begins with (None for a text that is not a verdict)."""
    low = str(text).strip().lower()
    for v in sorted(VERDICTS, key=lambda v: -len(v.words)):
        if low.startswith(v.words):
            return v
    return None


def verdict_tone(text: str) -> str:
    """``bad`` / ``good`` / ``neutral`` / ``warn`` for a verdict (``neutral`` if unknown)."""
    v = verdict_words(text)
    return v.tone if v is not None else "neutral"


def say_found(p: float) -> str:
    return f"violation found ({fmt_p(p)})"


def say_certified(value: float, confidence: float) -> str:
    return f"violation certified: ε ≥ {fmt_num(value)} ({pct(confidence)} confidence)"


def say_exact_violation(epsilon: float, claimed: float) -> str:
    got, want = fmt_apart(epsilon, claimed)  # digits enough to show ε above the claim
    return f"violation (exact): exact ε = {got} > claimed {want}"


def say_verified(claimed: float, where: str) -> str:
    return f"verified ε ≤ {fmt_num(claimed)} {where}"


def inconclusive_text(p: float, tests: int) -> str:
    """The verdict of a p-value below alpha that does not survive the correction for the
    run's other claims (issue 12): never red, never "no violation found" either."""
    return f"inconclusive: {fmt_p(p)}, not significant after correction for {tests} tests"


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
    ``confidence`` or exactly when ``exact``). ``seed`` is the seed of the fresh samples that
    counted it (not the run's seed). A witness favours D1: ``privet.detect.test_event(
    mechanism, d1, d2, privet.core.events.from_spec(event_spec), n=n[0], args=args,
    alternative="greater")`` tests the same event again on new samples (a replication: its
    streams are not the run's, so its counts differ from ``counts`` by sampling).
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

    def __post_init__(self) -> None:
        # inputs that are integers read as integers: (1, 1), not (1.0, 1.0)
        object.__setattr__(self, "d1", plain(tuple(self.d1)))
        object.__setattr__(self, "d2", plain(tuple(self.d2)))

    def _shown(self) -> list:
        return [("D1", self.d1), ("D2", self.d2), ("E", self.event),
                ("counts", self.counts), ("n", self.n),
                ("p_value", self.p_value), ("epsilon_witnessed", self.epsilon_witnessed)]

    def __str__(self) -> str:
        if self.counts is not None and self.n is not None:
            sides = f"{self.counts[0]:,} of {self.n[0]:,} vs {self.counts[1]:,} of {self.n[1]:,}"
        elif self.probabilities is not None:
            sides = f"P = {fmt_num(self.probabilities[0])} vs {fmt_num(self.probabilities[1])}"
        else:
            sides = ""
        tail = f" ({fmt_p(self.p_value)})" if self.p_value is not None else ""
        return (f"D1 = {_vec(self.d1)}, D2 = {_vec(self.d2)}, "
                f"E: {self.event}" + (f"; {sides}" if sides else "") + tail)


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
    claim: str | None = None

    def _shown(self) -> list:
        return [("mechanism", self.mechanism), ("test_epsilons", self.test_epsilons),
                ("lower_bound", self.lower_bound), ("alpha", self.alpha)]

    def __str__(self) -> str:
        if self.lower_bound is None:
            return (f"{self.mechanism}: no test ε rejected at α = {fmt_num(self.alpha)} "
                    f"(of {len(self.test_epsilons)})")
        return (f"{self.mechanism}: ε > {fmt_num(self.lower_bound)}, the largest test ε "
                f"rejected at α = {fmt_num(self.alpha)} (claimed ε = "
                f"{fmt_num(self.claimed_epsilon)})")


@result_type
@dataclass(frozen=True)
class Bound:
    """A lower bound on epsilon: "epsilon >= value with confidence ``confidence``".

    ``exact`` is True when the bound was computed by exact inference (confidence 1).
    ``witness`` holds D1, D2, the event and the estimated or exact probabilities.
    ``test_epsilon`` is the ε the bound was compared with (None: the claimed ε).
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
    test_epsilon: float | None = None
    claim: str | None = None

    @property
    def compared_with(self) -> float | None:
        """The ε the verdict is about: the test ε when one was given, else the claimed ε."""
        return self.test_epsilon if self.test_epsilon is not None else self.claimed_epsilon

    @property
    def lower_bound(self) -> float:
        """The bound L of "ε ≥ L" (the ``value`` field, under the name the repr shows)."""
        return self.value

    @property
    def violates(self) -> bool:
        return self.compared_with is not None and self.value > self.compared_with

    def _shown(self) -> list:
        # with no ε to compare with there is nothing to violate: the repr leaves it out
        violates = self.violates if self.compared_with is not None else None
        return [("mechanism", self.mechanism), ("lower_bound", self.value),
                ("confidence", "exact" if self.exact else self.confidence),
                ("claimed_epsilon", self.claimed_epsilon), ("violates", violates)]

    def describe(self) -> str:
        """The verdict, in the words of the table: the engine's own (``details["verdict"]``,
        which may add why a bound looks unbounded) or one built from the fields."""
        if self.details.get("verdict"):
            return str(self.details["verdict"])
        how = "exact" if self.exact else f"{pct(self.confidence)} confidence"
        bound = f"ε ≥ {fmt_num(self.value)} ({how})"
        if self.compared_with is None:
            return bound
        if not self.violates:
            which = "test" if self.test_epsilon is not None else "claimed"
            return (f"no violation found: {bound}, not above the {which} ε = "
                    f"{fmt_num(self.compared_with)}")
        return ("violation (exact): " if self.exact else "violation certified: ") + bound

    def __str__(self) -> str:
        return f"{self.mechanism}: {self.describe()}"


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
    claim: str | None = None

    @property
    def verified(self) -> bool:
        """True when the claimed epsilon holds on the checked domain. With an exact rational
        e^ε (``fractions=True``) the comparison is exact against e^claimed (to 40 digits),
        the claim given four ulps for its own rounding (``math.log(3)`` means ln 3): the float
        tolerance of 1e-12 called e^ε = 3 "verified" against a claim of ln 3 - 1e-12."""
        if self.claimed_epsilon is None:
            return False
        if isinstance(self.e_epsilon, Fraction) and math.isfinite(self.claimed_epsilon):
            return self.e_epsilon <= exp_below(as_claimed(self.claimed_epsilon))
        return self.epsilon <= self.claimed_epsilon + 1e-12

    def _where(self) -> str:
        """The inputs checked, as the verdict names them ("4 inputs (integers in [0, 3])")."""
        inputs = (self.domain or "").split(";")[0].strip()
        return inputs if inputs else "the checked domain"

    def describe(self) -> str:
        """The verdict, in the words every renderer uses."""
        eps = fmt_num(self.epsilon)
        where = self._where()
        if self.delta is not None:
            return f"δ = {fmt_num(self.delta)} at ε = {eps} (exact, on {where})"
        if self.details.get("interrupted"):
            return f"interrupted: exact ε ≥ {eps} from the triples checked (a lower bound)"
        if self.claimed_epsilon is None:
            return f"exact ε = {eps} on {where}"
        if self.verified:  # ε-DP implies every (ε, δ) and zCDP claim with the same ε
            return say_verified(self.claimed_epsilon, f"on {where} (exact ε = {eps})")
        if self.claim and "δ" in self.claim:  # above the ε, the δ may still cover it
            return (f"inconclusive: exact ε = {eps} > the ε of the claim {self.claim}; its δ "
                    "is checked by the privacy profile (privet exact --profile)")
        return say_exact_violation(self.epsilon, self.claimed_epsilon)

    def _shown(self) -> list:
        w = list(self.witness) + [None, None, None]
        return [("mechanism", self.mechanism), ("exact_epsilon", self.epsilon),
                ("delta", self.delta), ("claimed_epsilon", self.claimed_epsilon),
                ("verified", self.verified if self.delta is None else None),
                ("D1", w[0]), ("D2", w[1])]

    def __str__(self) -> str:
        return f"{self.mechanism}: {self.describe()}"


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

    def _shown(self) -> list:
        return [("mechanism", self.mechanism), ("alpha", self.alpha),
                ("one_minus_beta", self.one_minus_beta), ("worst_input", self.worst_input)]

    def __str__(self) -> str:
        return (f"{self.mechanism}: P[|M(x) − f(x)| ≤ {fmt_num(self.alpha)}] ≥ "
                f"{fmt_num(self.one_minus_beta)} on the checked domain (worst input "
                f"{_vec(self.worst_input)})")


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
    result: Any = None
    claim: str | None = None

    def _shown(self) -> list:
        return [("mechanism", self.mechanism), ("engine", self.engine),
                ("verdict", self.verdict), ("figure", self.figure)]

    def __str__(self) -> str:
        return f"{self.mechanism} · {self.engine}: {self.verdict}"


@result_type
@dataclass(frozen=True)
class SuiteLine:
    """One mechanism of ``privet suite``, every engine joined: the summary table's row.

    ``verdict`` is the strongest honest statement the engines support together (a violation
    found by any engine wins; "verified" only from exact/SMT, for ``exact_domain``).
    """

    mechanism: str
    claimed_epsilon: float | None
    true_epsilon: float | None
    verdict: str
    counterexample: str | None = None
    lower_bound: float | None = None
    confidence: float | None = None
    exact_epsilon: float | None = None
    exact_domain: str | None = None
    seconds: float = 0.0
    engines: tuple = ()
    claim: str | None = None

    def _shown(self) -> list:
        return [("mechanism", self.mechanism), ("verdict", self.verdict),
                ("counterexample", self.counterexample), ("lower_bound", self.lower_bound),
                ("exact_epsilon", self.exact_epsilon)]

    def __str__(self) -> str:
        return f"{self.mechanism}: {self.verdict}" + (
            f"; {self.counterexample}" if self.counterexample else "")


@result_type
@dataclass(frozen=True)
class SuiteResult:
    """A ``privet suite`` run: per-engine ``rows`` (with full results) and per-mechanism
    ``lines``. ``interrupted`` is True when Ctrl-C stopped it (what finished is kept).
    ``alpha`` bounds the probability that any line wrongly reads "violation" (Holm over
    ``tests`` statistical claims; exact and SMT results are proofs)."""

    rows: tuple
    lines: tuple
    engines: tuple
    quick: bool = False
    interrupted: bool = False
    seconds: float = 0.0
    seed: int | None = None
    alpha: float = 0.05      # family-wise error rate of the run's statistical claims (Holm)
    tests: int = 0           # how many statistical claims the correction covers

    def _shown(self) -> list:
        found = sum(ln.verdict.startswith("violation") for ln in self.lines)
        return [("mechanisms", len(self.lines)), ("violations", found),
                ("engines", ", ".join(self.engines)), ("seconds", self.seconds),
                ("interrupted", True if self.interrupted else None)]

    def __str__(self) -> str:
        return "\n".join(str(ln) for ln in self.lines)


# === approximate-DP results ===
@result_type
@dataclass(frozen=True)
class CertifiedProfile:
    """``privet.search`` on an (ε, δ) or zCDP claim: certified lower bounds on the privacy
    profile, all from one fresh sample over a family of events (simultaneous, confidence
    ``confidence``).

    ``delta_lower`` certifies "δ(``epsilon``) ≥ delta_lower", ``epsilon_lower`` certifies
    "ε(``delta``) ≥ epsilon_lower"; ``curve_delta``/``curve_epsilon`` is the certified lower
    curve ε_L(δ), ``claimed_curve`` the claim's ε(δ) at the same δ (inf where the claim
    promises nothing), ``known_curve`` the mechanism's true ε(δ) when the library knows it.
    ``violates`` is True when the certified curve rises above the claim's anywhere.
    """

    mechanism: str
    claim: str | None
    confidence: float
    epsilon: float | None
    delta_lower: float | None
    delta: float | None
    epsilon_lower: float | None
    curve_delta: tuple = ()
    curve_epsilon: tuple = ()
    claimed_curve: tuple = ()
    known_curve: tuple | None = None
    verdict: str = ""
    witness: Counterexample | None = None
    method: str = ""
    seed: int | None = None
    seconds: float | None = None
    details: dict = field(default_factory=dict)

    @property
    def violates(self) -> bool:
        return any(c > k + 1e-12 for c, k in zip(self.curve_epsilon, self.claimed_curve)) or \
            bool(self.details.get("delta_violation"))

    def _shown(self) -> list:
        return [("mechanism", self.mechanism), ("claim", self.claim),
                ("verdict", _head(self.verdict)), ("delta_lower", self.delta_lower),
                ("epsilon", self.epsilon), ("epsilon_lower", self.epsilon_lower),
                ("delta", self.delta), ("confidence", self.confidence)]

    def __str__(self) -> str:
        return f"{self.mechanism}: {self.verdict}"


@result_type
@dataclass(frozen=True)
class ExactProfile:
    """``privet.exact`` privacy profile: the tight δ(ε) of a discrete mechanism at every ε of
    ``epsilons`` over the checked domain, its tight Rényi divergences (``renyi``: order ->
    max over pairs of D_α, inf when supports differ) and zCDP ρ = sup_α D_α/α (None when
    infinite), and the exact check of the claim (``verified`` True/False, None when the
    claim is not checked)."""

    mechanism: str
    epsilons: tuple
    deltas: tuple
    witnesses: tuple
    domain: str
    renyi: dict = field(default_factory=dict)
    rho: float | None = None
    claim: str | None = None
    verified: bool | None = None
    check: str = ""
    backend: str = "enumerate"
    seconds: float | None = None
    details: dict = field(default_factory=dict)

    def _shown(self) -> list:
        return [("mechanism", self.mechanism), ("claim", self.claim),
                ("verified", self.verified), ("rho", self.rho),
                ("epsilons", self.epsilons), ("deltas", self.deltas)]

    def __str__(self) -> str:
        return f"{self.mechanism}: {self.check}"
# === end approximate-DP results ===


# === detect results ===
@result_type
@dataclass(frozen=True)
class DetectResult:
    """``privet.detect``: StatDP's test of one mechanism at one test epsilon.

    ``verdict`` is "violation found (p = ...)" or "no violation found"; ``p_value`` is the
    final test's (fresh samples) of the selected (D1, D2, args, event) -- the sequential
    p-value (:mod:`privet.stats.sequential`) when the test ran in looks, valid at every
    level; ``counterexample`` is that witness when the test rejects at ``alpha``, else None.
    ``details['samples']`` counts every output drawn (pilot, selection, final).
    ``candidates`` are the best events of the best-scoring input pairs, each with its own
    final-test p-value.
    ``curve`` holds the p-value curve when test epsilons were given; ``arg_path`` says how
    the arguments were found: "maxsmt", "grid", "given" or "defaults".
    """

    mechanism: str
    claimed_epsilon: float | None
    test_epsilon: float
    verdict: str
    p_value: float
    counterexample: Counterexample | None = None
    candidates: tuple = ()
    curve: PValueCurve | None = None
    arg_path: str = "defaults"
    seed: int | None = None
    seconds: float | None = None
    alpha: float = 0.05
    details: dict = field(default_factory=dict)
    claim: str | None = None
    test_delta: float | None = None

    @property
    def violation(self) -> bool:
        # the test's decision (a sequential test's, or a curve's fixed-sequence one), not
        # p < alpha: a point of a curve may have p < alpha and still not be claimed
        return self.counterexample is not None

    def _shown(self) -> list:
        cx = self.counterexample
        return [("verdict", _head(self.verdict)), ("p_value", self.p_value),
                ("test_epsilon", self.test_epsilon), ("D1", cx.d1 if cx else None),
                ("D2", cx.d2 if cx else None), ("E", cx.event if cx else None)]

    def __str__(self) -> str:
        cx = self.counterexample
        tail = f"({fmt_p(self.p_value)}, seed {self.seed})"
        if cx is None or not cx.counts or not cx.n:
            return f"{_head(self.verdict)} at test ε = {fmt_num(self.test_epsilon)} {tail}"
        p1, p2 = cx.counts[0] / cx.n[0], cx.counts[1] / cx.n[1]
        return (f"{_head(self.verdict)}: P[M(D1) ∈ E] = {fmt_num(p1, 3)} > "
                f"e^{fmt_num(self.test_epsilon)} · P[M(D2) ∈ E] = {fmt_num(p2, 3)} "
                f"with D1 = {_vec(cx.d1)}, D2 = {_vec(cx.d2)}, "
                f"E: {cx.event} {tail}")
# === end detect results ===


# === synth results ===
@result_type
@dataclass(frozen=True)
class Completion:
    """One completion of a sketch (KOLAHAL Sec. IV.D): an expression per hole and its evidence.

    ``passed`` is the final check: "no violation found" by the tester at the target ε, or
    "verified" by exact enumeration (discrete noise, over the checked pairs) -- never
    "private". ``tightness`` is the mean over settings of max |log L| / ε at the examples,
    ``magnitude`` the summed noise scale over the settings (the ranking keys).
    """

    exprs: tuple
    rank: int | None
    preliminary_rank: int
    passed: bool | None
    verdict: str
    method: str = ""
    p_value: float | None = None
    exact_epsilon: float | None = None
    violations: int = 0
    tightness: float = 0.0
    magnitude: float = 0.0
    scales: tuple = ()
    losses: dict = field(default_factory=dict)
    counterexample: Counterexample | None = None
    details: dict = field(default_factory=dict)

    def describe(self) -> str:
        return "(" + ", ".join(str(e) for e in self.exprs) + ")"

    def _shown(self) -> list:
        return [("exprs", self.describe()), ("rank", self.rank), ("verdict", self.verdict)]

    def __str__(self) -> str:
        return f"{self.describe()}: {self.verdict}"


@result_type
@dataclass(frozen=True)
class SynthResult:
    """The ranked completions of a sketch, with phase times and the noopt baseline.

    ``completions`` holds the checked candidates: those that passed, by final rank, then the
    rejected ones with the counterexample that rejected them. ``status`` is "found" or
    "no completion found". ``textbook_rank`` is the final rank of the first expected answer
    the sketch lists (None when it was not among the passing completions).
    """

    sketch: str
    holes: tuple
    families: tuple
    epsilon: float
    grammar: str
    status: str
    completions: tuple
    examples: tuple = ()
    region: dict = field(default_factory=dict)
    times: dict = field(default_factory=dict)
    n_candidates: int = 0
    grammar_size: int = 0
    textbook: tuple = ()
    textbook_rank: int | None = None
    textbook_preliminary_rank: int | None = None
    baseline: dict | None = None
    seed: int | None = None
    details: dict = field(default_factory=dict)

    def _shown(self) -> list:
        best = self.best
        return [("sketch", self.sketch), ("status", self.status),
                ("best", best.describe() if best else None),
                ("textbook_rank", self.textbook_rank), ("epsilon", self.epsilon)]

    def checked_at(self) -> str:
        """The settings the completions were tested at ("at length 4, ε ∈ {0.5, 1, 2}"):
        a statistical verdict holds for those only (a sparse vector's noise that passes at
        four queries may fail at eight)."""
        settings = self.details.get("settings") or []
        if not settings:
            return ""
        parts = []
        for key, word in (("length", "length"), ("epsilon", "ε")):
            vals = sorted({float(st[key]) for st in settings if key in st})
            if vals:
                shown = ", ".join(fmt_num(v) for v in vals)
                parts.append(f"{word} {shown}" if len(vals) == 1 else f"{word} ∈ {{{shown}}}")
        return "at " + ", ".join(parts) if parts else ""

    def __str__(self) -> str:
        best = self.best
        where = f" ({self.checked_at()})" if self.checked_at() else ""
        if best is None:
            return f"{self.sketch}: no completion found in {self.grammar}{where}"
        return f"{self.sketch}: best completion {best.describe()}, {best.verdict}{where}"

    @property
    def best(self) -> Completion | None:
        ok = [c for c in self.completions if c.passed]
        return ok[0] if ok else None

    def mechanisms(self) -> list:
        """The passing completions as runnable privet mechanisms (needs the sketch object)."""
        sk = getattr(self, "_sketch", None)
        if sk is None:
            from .errors import PrivetError

            raise PrivetError("this result was loaded from JSON; call "
                              "sketch.complete_from(completion.exprs) instead.")
        return [sk.complete_from(c.exprs) for c in self.completions if c.passed]
# === end synth results ===


# === pufferfish results ===
@result_type
@dataclass(frozen=True)
class PufferfishVerdict:
    """A Pufferfish (or DP) verdict on an HMM scenario (FAIER, Algorithm 1).

    ``status``: ``verified`` (no violating observation sequence of length <= ``k``, for
    every pair and every parameter value in the domain), ``violated`` (``counterexample``
    is a sequence whose exact probabilities ``probabilities`` under ``pair`` break
    e^epsilon, at ``parameters``), or ``unknown`` (the solver gave up; nothing is claimed).
    ``solver`` names the path that decided it; ``ratio`` is the exact probability ratio of
    the counterexample (or the largest ratio seen, when the exact path computed it).
    """

    scenario: str
    status: str
    k: int
    epsilon: float
    epsilon_text: str = ""
    counterexample: tuple | None = None
    pair: tuple | None = None
    parameters: dict = field(default_factory=dict)
    probabilities: tuple | None = None
    ratio: Any = None
    solver: str = ""
    seconds: float | None = None
    message: str = ""
    details: dict = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.status == "verified"

    def _shown(self) -> list:
        return [("scenario", self.scenario), ("status", self.status), ("k", self.k),
                ("epsilon", self.epsilon_text or self.epsilon),
                ("sequence", " ".join(fmt_value(o) for o in self.counterexample)
                 if self.counterexample is not None else None)]

    def __str__(self) -> str:
        return f"{self.scenario}: {self.describe()}"

    @property
    def violated(self) -> bool:
        return self.status == "violated"

    def describe(self) -> str:
        """The verdict as one sentence (no Python reprs: sequences and secrets by value)."""
        if self.status == "verified":
            return (f"verified: {self.epsilon_text}-Pufferfish privacy holds for every "
                    f"observation sequence of length ≤ {self.k}")
        if self.status == "violated":
            at = ", ".join(f"{k} = {fmt_num(v)}" for k, v in self.parameters.items())
            seq = " ".join(fmt_value(o) for o in (self.counterexample or ()))
            pair = " vs ".join(str(s) for s in (self.pair or ()))
            return (f"violation (exact): observation sequence {seq or '(empty)'} under "
                    f"secrets {pair}" + (f" at {at}" if at else ""))
        return f"unknown at length {self.k}: {self.message}"


# === end pufferfish results ===


# === floats results ===
@result_type
@dataclass(frozen=True)
class FloatWitness:
    """A double that ``M(D2)`` outputs and ``M(D1)`` provably cannot: ε = ∞ for this pair.

    ``mechanism.sample(d2, n, seed=seed)[index]`` replays ``value`` (its bits are
    ``value_hex``); ``words`` are the generator words under which ``M(D2)`` outputs it (the
    uniform is ``(word >> 11) / 2^53``); ``reason`` is ``addition gap`` (no double noise
    value gives it from D1) or ``sampler gap`` (the ``candidates`` words whose draw could,
    all evaluated exactly, do not); ``explanation`` says it in one paragraph.
    """

    d1: tuple
    d2: tuple
    value: Any
    value_hex: str
    reason: str
    explanation: str
    args: dict = field(default_factory=dict)
    seed: int | None = None
    n: int | None = None
    index: int | None = None
    words: str = ""
    uniform: float | None = None
    candidates: int = 0

    def _shown(self) -> list:
        return [("D1", self.d1), ("D2", self.d2), ("value", self.value_hex),
                ("reason", self.reason), ("seed", self.seed), ("index", self.index)]

    def __str__(self) -> str:
        return (f"M(D2) outputs {self.value_hex} and M(D1) cannot ({self.reason}); D1 = "
                f"{_vec(self.d1)}, D2 = {_vec(self.d2)}")


@result_type
@dataclass(frozen=True)
class PorosityResult:
    """``privet.floats.porosity``: which outputs of ``M(D2)`` ``M(D1)`` can produce, exactly.

    ``verdict`` is "violation (exact): ε = ∞" when some sampled output of one input
    is provably unreachable from the other (``witness``), else "no violation found: no
    porosity …". Counts
    are over sampled outputs (with multiplicity), both directions: ``reachable`` (a witness
    word or a sighting), ``unreachable`` (proved), ``undecided``. ``delta_lower`` is a
    Clopper-Pearson lower bound (at ``confidence``) on the probability that an output of
    one input is unreachable from the other: no (ε, δ) claim with a smaller δ can hold.
    ``assumptions`` states what the proofs rest on. ``detect`` and ``bound`` hold the
    engines' certification of the witness's exact event (``privet.implementation.
    certify_porosity``: ``detect.test_event`` and ``search.confirm``), when run.
    """

    mechanism: str
    claimed_epsilon: float | None
    verdict: str
    d1: tuple
    d2: tuple
    method: str
    checked: int
    reachable: int
    unreachable: int
    undecided: int
    epsilon: float | None = None
    witness: FloatWitness | None = None
    delta_lower: float | None = None
    confidence: float = 0.95
    assumptions: str = ""
    directions: tuple = ()
    detect: Any = None
    bound: Any = None
    seed: int | None = None
    seconds: float | None = None
    interrupted: bool = False
    details: dict = field(default_factory=dict)

    @property
    def violation(self) -> bool:
        return self.witness is not None

    def _shown(self) -> list:
        return [("mechanism", self.mechanism), ("verdict", _head(self.verdict)),
                ("checked", self.checked), ("unreachable", self.unreachable),
                ("undecided", self.undecided), ("D1", self.d1), ("D2", self.d2)]

    def __str__(self) -> str:
        return f"{self.mechanism}: {self.verdict}"


@result_type
@dataclass(frozen=True)
class SensitivityResult:
    """``privet.floats.sum_sensitivity``: the neighbouring datasets whose float aggregate
    differs most, against the sensitivity the noise is calibrated to.

    ``difference`` is ``|f(D1) - f(D2)|`` (``excess`` = difference - ``declared``, both
    computed exactly from the two doubles ``f1``, ``f2``); ``exceeds`` is True when the
    pair moves the aggregate by more than ``declared``. ``detect`` and ``bound`` hold the
    engines' certification of the resulting violation on the mechanism (None when not run):
    the StatDP test on this pair and DP-Finder's fresh-sample confirmation of its event.
    """

    aggregate: str
    verdict: str
    bounds: tuple
    neighbors: str
    length: int
    declared: float
    difference: float
    excess: float
    ratio: float
    exceeds: bool
    d1: tuple
    d2: tuple
    f1: float
    f2: float
    family: str = ""
    evaluated: int = 0
    mechanism: str | None = None
    claimed_epsilon: float | None = None
    detect: Any = None
    bound: Any = None
    seconds: float | None = None
    details: dict = field(default_factory=dict)

    @property
    def violation(self) -> bool:
        certified = (self.detect is not None and self.detect.counterexample is not None) or \
            (self.bound is not None and self.bound.violates)
        return bool(self.exceeds and certified)

    def _shown(self) -> list:
        return [("aggregate", self.aggregate), ("exceeds", self.exceeds),
                ("declared", self.declared), ("difference", self.difference),
                ("violation", self.violation)]

    def __str__(self) -> str:
        return f"{self.mechanism or self.aggregate}: {self.verdict}"
# === end floats results ===
