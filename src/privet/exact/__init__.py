"""privet.exact: tight epsilon, (epsilon, delta) and (alpha, beta)-accuracy by exact inference.

Implements Oakley, Holtzen & Oprea, *Synthesizing Tight Privacy and Accuracy Bounds via
Weighted Model Counting*: INFERENCE (Algorithm 1) by enumeration of finite discrete noise
or by weighted model counting on a BDD, ExactDP (Algorithm 2) and ExactAcc (Algorithm 3)
over exhaustive or restricted inference/privacy/accuracy sets (Sec. IV; the randomized
response sets of Sec. V are in :mod:`privet.exact.sets`).

Public API (``privet.exact`` is the function :func:`exact`; the others are its attributes
and importable from this package)::

    exact(target, *, inputs=None, pairs=None, outputs=None, backend="auto",
          fractions=False, args=None, cap=..., input_cap=..., progress=False) -> ExactBound
    accuracy(target, alpha, *, inputs=None, truth=None, top_k=5, backend="auto",
             fractions=False, args=None, cap=..., input_cap=..., progress=False)
        -> AccuracyBound
    delta_for(target, epsilon, *, inputs=None, pairs=None, backend="auto", fractions=False,
              args=None, cap=..., input_cap=..., progress=False) -> ExactBound

``target`` is a native privet Mechanism with finite discrete noise or a BDD-language
:class:`~privet.exact.bdd.Program`. A mechanism runs on Enumerate ("enumerate") or is
compiled to a BDD by the Compile interpreter (:mod:`privet.exact.compile`): "bdd" compiles
once with a symbolic input, "bdd-fixed" once per input; an output that is a sum of
independent parts is convolved instead ("counting", :mod:`privet.exact.counting`). "auto"
(the default) picks by estimated cost (:func:`privet.exact.backend.choose_backend`) and
``details["backend_choice"]`` says why. ``distributions(mech, inputs)`` gives the exact
output distribution of every input from one compilation. ``pairs`` is ``None``
(exhaustive: every neighbor pair of the input grid x every output), a list of ``(x, x')``
pairs (every output), a privacy set of ``(x, x', y)`` triples (Def. 4), or ``"rr"`` for the
randomized-response set of Eqs. (7)-(8).

Verdicts: an exact bound is "verified" only for the input domain it enumerated.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.errors import (
    GridTooLargeError,
    InputError,
    ParameterError,
    PrivetError,
    advice,
    check_epsilon,
)
from ..core.mechanism import Mechanism
from ..core.noise import DEFAULT_ENUMERATION_CAP
from ..core.results import AccuracyBound, ExactBound
from ..core.safe import power_count
from ..core.text import fmt_vec
from . import programs, sets
from .algorithms import (
    DEFAULT_INPUT_CAP,
    Target,
    check_domain_size,
    check_two_lengths,
    exact_acc,
    exact_dp_dense,
    exact_dp_triples,
    grid_axes,
    hockey_stick_dense,
    inference_dense,
    input_grid,
    is_add_remove,
    make_target,
    neighbor_pairs,
    require_discrete_noise,
    row,
)
from .backend import choose_backend
from .bdd import Compiled, Program, compile_program, program
from .compile import CompileError, as_program, compile_mechanism, distributions

# Bytes per (input, output) probability during exhaustive inference, measured on randomized
# response (n = 10, 11, 12: 2^n inputs x 2^n outputs): about 230 B per entry with floats and
# 330-400 B with Fractions (per-input dicts, then the dense table); the BDD backend keeps only
# the dense float and integer tables.
MEMORY_PER_ENTRY = {"float": 256, "fraction": 400, "bdd": 24}


def check_memory(t: Target, n_inputs: int, probe: tuple, limit: int | None = None) -> float:
    """Estimated bytes of inference over ``n_inputs`` inputs, refused in one sentence above
    ``limit`` (default :func:`privet.execution.memory_limit`, half the physical memory).

    The outputs per input are measured on one input (``probe``, whose distribution is kept
    for the run) or read off the compiled BDD; the bytes per entry are
    :data:`MEMORY_PER_ENTRY`."""
    if t.backend == "bdd" and t.compiled is not None:
        k, per = t.compiled.output_count, MEMORY_PER_ENTRY["bdd"]
    else:
        k = max(1, len(t.distribution(probe)))
        per = MEMORY_PER_ENTRY["fraction" if t.exact else "float"]
    return _within(t.name, n_inputs, k, per, limit)


def done_pairs(table: Any, I: np.ndarray, J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs whose inputs were both inferred: all of them, unless Ctrl-C cut inference
    short (``table.interrupted``); KeyboardInterrupt again when no pair is complete."""
    if not table.interrupted:
        return I, J
    keep = (I < len(table.xs)) & (J < len(table.xs))
    if not keep.any():
        raise KeyboardInterrupt
    return I[keep], J[keep]


def _within(name: str, n_inputs: float, k: int | None, per: int, limit: int | None) -> float:
    from ..execution import format_bytes, memory_limit

    limit = memory_limit() if limit is None else int(limit)
    need = float(n_inputs) * float(k or 1) * per
    if need > limit:
        many = f"{int(n_inputs):,}" if n_inputs < 1e18 else "more than 10^18"
        each = "at least one output" if k is None else f"about {int(k):,} outputs"
        raise GridTooLargeError(
            f"exact inference of {name!r} over {many} inputs x {each} each needs about "
            f"{format_bytes(need)} of memory, above the limit of {format_bytes(limit)}; check "
            "fewer inputs (inputs=/--inputs, pairs='rr'/--set rr, a shorter length) or raise "
            "the limit (max_memory=/--max-memory)."
        )
    return need


def _check_request(target: Any, length: Any, whole_domain: bool, input_cap: int,
                   max_memory: int | None, args: Mapping[str, Any] | None = None,
                   pairs_needed: bool = True) -> None:
    """Before any backend runs: ``length`` is a positive whole number, a mechanism's noise
    is discrete (said first: no domain or length helps otherwise), and a whole input domain
    within ``input_cap`` fits in memory at one output per input (a lower bound)."""
    if length is not None and (isinstance(length, bool) or not isinstance(length, int)
                               or length < 1):
        raise ParameterError(f"length must be a positive whole number, got {length!r}.")
    if isinstance(target, Mechanism):
        target.require("enumerate", "privet.exact")
        require_discrete_noise(target, length, args)
    if whole_domain and isinstance(target, (Mechanism, Program)):
        values, n = grid_axes(_length_only(target, length))
        count = power_count(len(values), n)
        if pairs_needed and is_add_remove(target):  # lengths n and n + 1
            check_two_lengths(target, len(values), n, input_cap)
            count += power_count(len(values), n + 1)
        else:
            check_domain_size(target.name, len(values), n, input_cap)
        _within(target.name, count, None, MEMORY_PER_ENTRY["bdd"], max_memory)


def _as_float(v: Any) -> float:
    return math.inf if v == math.inf else float(v)


FORM_DIGITS = 12  # a closed form ln(p/q) with longer p or q prints as a decimal


def closed_form(e_epsilon: Any) -> str:
    """``ln(p/q)`` for an exact e^epsilon (a Fraction of at most :data:`FORM_DIGITS` digits
    each side), else the float's log as text (a Fraction of a float parameter such as
    e^-1 is exact but unreadable: 100000000000000000/36787944117144233)."""
    if isinstance(e_epsilon, Fraction) and max(
            len(str(e_epsilon.numerator)), len(str(e_epsilon.denominator))) <= FORM_DIGITS:
        if e_epsilon.denominator == 1:
            return f"ln({e_epsilon.numerator})"
        return f"ln({e_epsilon.numerator}/{e_epsilon.denominator})"
    if e_epsilon == math.inf:
        return "inf"
    return f"ln({float(e_epsilon):.10g})"


GIVEN_SHOWN = 6  # given inputs listed by the domain text, at most


def _given(inputs: Any) -> bool:
    """The caller listed the inputs (not a built-in set by name, not the whole domain)."""
    return inputs is not None and not isinstance(inputs, str)


def _domain_text(target: Target, xs: np.ndarray | None, restricted: str | None,
                 given: bool = False) -> str:
    """What a verdict covers: the restricted set, else the inputs checked (``given``: the
    caller's own inputs, listed, not the whole domain they lie in), with the relation."""
    obj = target.obj
    if restricted:
        return restricted
    if given and xs is not None:
        shown = ", ".join(fmt_vec(x) for x in xs[:GIVEN_SHOWN])
        more = f", ... ({len(xs):,} in all)" if len(xs) > GIVEN_SHOWN else ""
        return (f"the given input{'' if len(xs) == 1 else 's'} {shown}{more} only; "
                f"neighbors: {target.neighbors.describe()}")
    if isinstance(obj, Program):
        whole = f"all {obj.length}-lists of integers in [{obj.low}, {obj.high}]"
    else:
        whole = obj.domain.describe()
        if target.length is not None:
            two = xs is not None and len(xs) and len(row(xs[0])) != len(row(xs[-1]))
            whole += (f", checked at lengths {target.length} and {target.length + 1}" if two
                      else f", checked at length {target.length}")
    n = 0 if xs is None else len(xs)
    return f"{n:,} inputs ({whole}); neighbors: {target.neighbors.describe()}"


def _target_n(target: Any) -> int:
    obj = target.obj
    if isinstance(obj, Program):
        return obj.length
    if target.length is not None:
        return target.length
    if isinstance(obj.domain.length, int):
        return obj.domain.length
    raise InputError("the randomized-response sets need the input length: give "
                     + advice("length=n", "--length N") + ".")


class _length_only:
    """What the built-in sets need to know about a target before its backend is chosen."""

    def __init__(self, obj: Any, length: int | None):
        self.obj, self.length = obj, length


def _count_inputs(inputs: Sequence | None, pairs: Sequence | None) -> int | None:
    """How many distinct inputs a call will run inference on (None: the whole domain)."""
    if pairs is not None:
        return len({_norm(x) for pr in pairs for x in pr[:2]})
    if inputs is not None:
        return len(inputs)
    return None


BUILTIN_SETS = {
    ("rr", "privacy"): (sets.rr_privacy_set, "randomized-response privacy set C_RR (Eqs. 7-8)"),
    ("rr", "accuracy"): (sets.rr_accuracy_set,
                         "randomized-response accuracy set A_RRcount (Eq. 10)"),
}


def _builtin_set(name: str, t: Target, kind: str, max_memory: int | None = None
                 ) -> tuple[list, str]:
    """A built-in restricted set by name (Sec. V) for the target's input length."""
    from ..execution import format_bytes, memory_limit

    if (name, kind) not in BUILTIN_SETS:
        raise ParameterError(f"unknown built-in set {name!r}; the built-in one is 'rr'.")
    build, label = BUILTIN_SETS[(name, kind)]
    n = _target_n(t)
    need = 40.0 * n * n  # 2n triples of two n-lists (privacy) or n + 1 n-lists (accuracy)
    limit = memory_limit() if max_memory is None else int(max_memory)
    if need > limit:
        raise GridTooLargeError(
            f"the randomized-response set at length {n:,} needs about {format_bytes(need)} "
            f"of memory, above the limit of {format_bytes(limit)}; give a shorter length.")
    return build(n), label


def _norm(x: Any) -> tuple:
    return sets.norm_input(x)


def _pair_grid(t: Target, pairs: Sequence, input_cap: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The inputs of given (x, x') pairs (each pair checked against the neighbor relation)
    and the row indices I, J of x and x' in that grid."""
    uniq = list(dict.fromkeys(_norm(x) for pr in pairs for x in pr[:2]))
    xs = input_grid(t, uniq, input_cap)
    pos = {x: i for i, x in enumerate(uniq)}
    for a, b, *_ in pairs:
        t.neighbors.check(a, b)
    I = np.asarray([pos[_norm(pr[0])] for pr in pairs], dtype=np.int64)
    J = np.asarray([pos[_norm(pr[1])] for pr in pairs], dtype=np.int64)
    return xs, I, J


def _grid_and_pairs(t: Target, inputs: Any, pairs: Sequence | None, input_cap: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The checked inputs and the row indices I, J of the pairs to compare: the given
    pairs, or every neighboring pair of the input grid."""
    if pairs is not None:
        return _pair_grid(t, list(pairs), input_cap)
    xs = input_grid(t, inputs, input_cap, both_lengths=is_add_remove(t))
    I, J = neighbor_pairs(t.neighbors, xs)
    return xs, I, J


def _pair_table(t: Target, inputs: Any, pairs: Sequence | None, input_cap: int,
                max_memory: int | None, progress: bool
                ) -> tuple[np.ndarray, Any, np.ndarray, np.ndarray]:
    """The checked inputs, inference over them (memory checked first) and the neighboring
    pairs whose both inputs were inferred (fewer after Ctrl-C)."""
    xs, I, J = _grid_and_pairs(t, inputs, pairs, input_cap)
    if len(I) == 0:
        raise PrivetError("no two checked inputs are neighbors.")
    check_memory(t, len(xs), row(xs[0]), max_memory)
    table = inference_dense(t, xs, progress)
    I, J = done_pairs(table, I, J)
    return xs, table, I, J


def exact(target: Any, *, inputs: Iterable | None = None, pairs: Any = None,
          outputs: Sequence[Any] | None = None, backend: str = "auto",
          fractions: bool = False, args: Mapping[str, Any] | None = None,
          cap: int = DEFAULT_ENUMERATION_CAP, input_cap: int = DEFAULT_INPUT_CAP,
          length: int | None = None, progress: bool = False,
          max_memory: int | None = None) -> ExactBound:
    """The tight e^epsilon of ``target``: max over (x, x', y) of Pr[A(x)=y] / Pr[A(x')=y].

    ExactDP (Algorithm 2) over the privacy set chosen by ``pairs`` (see module doc);
    ``outputs`` restricts the outputs of an exhaustive/pair run. With ``fractions=True``
    e^epsilon is an exact Fraction and ``details['closed_form']`` reads ``ln(p/q)``.
    Before inference starts, the memory it needs is estimated (:func:`check_memory`) and a
    run above ``max_memory`` bytes (default half the machine's memory) is refused.
    """
    start = time.perf_counter()
    _check_request(target, length, inputs is None and pairs is None, input_cap, max_memory,
                   args)
    restricted = None
    details: dict[str, Any] = {}
    xs = None
    if isinstance(pairs, str):
        pairs, restricted = _builtin_set(pairs, _length_only(target, length), "privacy",
                                         max_memory)
    if pairs is not None:
        pairs = list(pairs)
        if not pairs:
            raise InputError("the privacy set is empty.")
    if inputs is not None and not isinstance(inputs, str):
        inputs = list(inputs)
    t = make_target(target, backend, fractions, args, cap, length,
                    n_inputs=_count_inputs(inputs, pairs))
    details["backend_choice"] = t.choice
    if pairs is not None and len(pairs[0]) == 3:
        if inputs is not None:
            sets.check_covers(pairs, inputs)
        distinct = list(dict.fromkeys(_norm(v) for tr in pairs for v in tr[:2]))
        for x in distinct:
            _check_in_domain(t, x)
        if t.backend != "bdd":  # per-input distributions (the BDD answers point queries)
            check_memory(t, len(distinct), distinct[0], max_memory)
        inf_start = time.perf_counter()
        res = exact_dp_triples(t, pairs)
        details["inference_seconds"] = time.perf_counter() - inf_start
        table = None
        restricted = restricted or f"restricted privacy set of {len(pairs)} triples"
        details["set"] = restricted
    else:
        if pairs is not None:
            if inputs is not None:
                sets.check_covers([(a, b, None) for a, b in pairs], inputs)
            restricted = (f"{len(pairs)} given input pair{'' if len(pairs) == 1 else 's'} "
                          "x every output")
        xs, I, J = _grid_and_pairs(t, inputs, pairs, input_cap)
        check_memory(t, len(xs), row(xs[0]), max_memory)
        inf_start = time.perf_counter()
        table = inference_dense(t, xs, progress)
        details["inference_seconds"] = time.perf_counter() - inf_start
        if outputs is not None:
            table = _restrict_outputs(table, outputs)
        I, J = done_pairs(table, I, J)
        syn = time.perf_counter()
        res = exact_dp_dense(table, I, J, progress)
        details["synthesis_seconds"] = time.perf_counter() - syn
        details["set"] = restricted or "exhaustive"
        details["inputs"] = len(table.xs)  # fewer than xs when Ctrl-C cut inference short
        details["outputs"] = len(table.ys)
    e = res.e_epsilon
    eps = math.inf if e == math.inf else math.log(e)
    if res.interrupted:
        details["interrupted"] = True
        restricted = (restricted or "exhaustive") + \
            " -- INTERRUPTED: a lower bound from the triples checked so far"
        xs = None if xs is None else xs
    details.update({
        "triples": res.triples, "pairs": res.pairs, "probabilities": res.probabilities,
        "closed_form": closed_form(e), "solver_runs": t.solver_runs,
    })
    dists = witness_distributions(t, table, res.witness)
    if dists is not None:
        details["distributions"] = dists
    if t.compiled is not None:
        details["bdd_size"] = t.compiled.size
        details["compile_seconds"] = t.compile_seconds
        details["noise_variables"] = t.compiled.n_noise
    return ExactBound(
        mechanism=t.name, epsilon=eps, e_epsilon=e, witness=_witness(res.witness),
        domain=_domain_text(t, xs, restricted, given=_given(inputs)),
        claimed_epsilon=t.claimed_epsilon,
        backend=t.backend, seconds=time.perf_counter() - start, details=details,
    )


DIST_ROWS = 50
DIST_MAX_LENGTH = 12   # restricted sets: whole distributions only for short inputs


def _prob_text(v: Any) -> Any:
    return f"{v.numerator}/{v.denominator}" if isinstance(v, Fraction) else float(v)


def witness_distributions(t: Target, table: Any, witness: tuple,
                          rows: int = DIST_ROWS) -> dict | None:
    """The output distributions of the witness inputs x and x' (for reports).

    ``{"rows": [[y, P(x)=y, P(x')=y], ...], "witness_output": y, "support": [n1, n2],
    "exact": bool, "shown_mass": [m1, m2]}``: the union of the ``rows`` most likely outputs
    of each side (plus the witness output), sorted by P(x)=y then P(x')=y, descending;
    probabilities are "p/q" strings when exact, floats otherwise. From the inference table of
    Algorithm 1 when the run built one, else by inference on the two inputs (short inputs
    only); None when neither is available.
    """
    x, x2, y = witness
    try:
        if table is not None:
            pos = {tuple(r): i for i, r in enumerate(np.asarray(table.xs).tolist())}
            i, j = pos.get(tuple(np.asarray(x).tolist())), pos.get(tuple(np.asarray(x2).tolist()))
            if i is None or j is None:
                return None
            nz = np.flatnonzero(np.isfinite(table.logp[i]) | np.isfinite(table.logp[j]))
            p1 = {table.ys[k]: table.value(i, k) for k in nz.tolist()}
            p2 = {table.ys[k]: table.value(j, k) for k in nz.tolist()}
        else:
            if len(x) > DIST_MAX_LENGTH:
                return None
            d1, d2 = t.distribution(_norm(x)), t.distribution(_norm(x2))
            keys = list(dict.fromkeys([*d1, *d2]))
            p1 = {k: d1.get(k, 0) for k in keys}
            p2 = {k: d2.get(k, 0) for k in keys}
    except PrivetError:
        return None
    from .algorithms import _key

    wy = _key(y) if y is not None else None
    top1 = sorted(p1, key=lambda k: -float(p1[k]))[:rows]
    top2 = sorted(p2, key=lambda k: -float(p2[k]))[:rows]
    keep = list(dict.fromkeys(top1 + top2 + ([wy] if wy in p1 else [])))
    keep.sort(key=lambda k: (-float(p1[k]), -float(p2[k])))
    plain = [list(k) if isinstance(k, tuple) else k for k in keep]
    return {
        "rows": [[pk, _prob_text(p1[k]), _prob_text(p2[k])] for pk, k in zip(plain, keep)],
        "witness_output": list(wy) if isinstance(wy, tuple) else wy,
        "support": [sum(1 for v in p1.values() if v > 0), sum(1 for v in p2.values() if v > 0)],
        "shown_mass": [float(sum(p1[k] for k in keep)), float(sum(p2[k] for k in keep))],
        "exact": bool(t.exact),
    }


def _witness(w: tuple) -> tuple:
    x, x2, y = w
    y = list(y) if isinstance(y, tuple) else y
    return (list(x), list(x2), y)


def _check_in_domain(t: Target, x: Any) -> None:
    from .algorithms import _check_input

    _check_input(t, _norm(x))


def _restrict_outputs(table, outputs):
    from .algorithms import Table, _key

    keys = [_key(y) for y in outputs]
    col = {k: j for j, k in enumerate(table.ys)}
    missing = [k for k in keys if k not in col]
    idx = [col[k] for k in keys if k in col]
    if not idx:
        raise InputError(f"none of the outputs {keys[:5]} is ever produced on these inputs.")
    ex = None if table.exact is None else table.exact[:, idx]
    del missing
    return Table(table.xs, [table.ys[j] for j in idx], table.logp[:, idx], ex,
                 table.denominator, table.seconds)


def accuracy(target: Any, alpha: float, *, inputs: Iterable | str | None = None,
             truth: Callable | None = None, top_k: int = 5, backend: str = "auto",
             fractions: bool = False, args: Mapping[str, Any] | None = None,
             cap: int = DEFAULT_ENUMERATION_CAP, input_cap: int = DEFAULT_INPUT_CAP,
             length: int | None = None, progress: bool = False,
             max_memory: int | None = None) -> AccuracyBound:
    """Tight (alpha, beta)-accuracy (Def. 2) by ExactAcc (Algorithm 3).

    1 - beta = min over the accuracy set of Pr(|A(x) - V_x| <= alpha) (distance: max over
    output coordinates). ``inputs`` is the accuracy set (default: the whole input grid;
    ``"rr"``: A_RRcount of Eq. (10)). ``truth(x)`` gives V_x; by default the program's
    ``truth``, else the counting query ``sum(x)`` of Sec. V-D. ``top_k`` worst inputs are
    returned sorted (Table IV).
    """
    start = time.perf_counter()
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)) \
            or not 0 <= alpha < math.inf:
        raise ParameterError(f"alpha must be a finite number >= 0, got {alpha!r}.")
    _check_request(target, length, inputs is None, input_cap, max_memory, args,
                   pairs_needed=False)  # accuracy is per input: one length
    label = None
    if isinstance(inputs, str):
        inputs, label = _builtin_set(inputs, _length_only(target, length), "accuracy",
                                     max_memory)
    elif inputs is not None:
        inputs = list(inputs)
    t = make_target(target, backend, fractions, args, cap, length,
                    n_inputs=_count_inputs(inputs, None))
    xs = input_grid(t, inputs, input_cap)
    if t.backend != "bdd":  # per-input distributions (the BDD answers point queries)
        check_memory(t, len(xs), row(xs[0]), max_memory)
    if truth is not None:
        f_text = "the truth= given"
    elif getattr(t.obj, "truth", None) is not None:
        truth, f_text = t.obj.truth, "the program's truth"
    else:
        _counting_only(target, xs[0], args)
        truth, f_text = (lambda x: int(np.sum(x))), "sum(x), the counting query"
    res = exact_acc(t, float(alpha), xs, truth, keep=max(1, int(top_k)))
    details: dict[str, Any] = {"truth": f_text, "inference_size": res.inference_size,
                               "solver_runs": t.solver_runs, "inputs": len(xs),
                               "backend_choice": t.choice}
    if t.compiled is not None:
        details["bdd_size"] = t.compiled.size
        details["compile_seconds"] = t.compile_seconds
    return AccuracyBound(
        mechanism=t.name, alpha=float(alpha), one_minus_beta=res.one_minus_beta,
        worst_input=tuple(res.worst), top_k=tuple((tuple(x), v) for x, v in
                                                  res.ranked[:max(1, int(top_k))]),
        domain=label or _domain_text(t, xs, None, given=_given(inputs)),
        backend=t.backend,
        seconds=time.perf_counter() - start, details=details,
    )


def _counting_only(target: Any, x: Any, args: Mapping[str, Any] | None) -> None:
    """One sentence when the default f(x) = sum(x), one number, would be compared with
    outputs of several entries (a histogram's accuracy read 0: every bin against the sum)."""
    if not isinstance(target, Mechanism):
        return
    from ..core.noise import Sampler

    try:
        out = np.asarray(target.run(Sampler(0, 1), x, args, check_input=False))
    except PrivetError:
        return
    width = int(np.prod(out.shape[1:])) if out.ndim > 1 else 1
    if width > 1:
        raise ParameterError(
            f"accuracy compares each output with f(x), by default the counting query sum(x), "
            f"one number, but {target.name!r} returns {width} entries per output; "
            + advice("give truth=lambda x: ... with one value per entry",
                     "call privet.exact.accuracy(..., truth=...) from Python")
            + ".")


def delta_for(target: Any, epsilon: float, *, inputs: Iterable | None = None,
              pairs: Sequence | None = None, backend: str = "auto", fractions: bool = False,
              args: Mapping[str, Any] | None = None, cap: int = DEFAULT_ENUMERATION_CAP,
              input_cap: int = DEFAULT_INPUT_CAP, length: int | None = None,
              progress: bool = False, max_memory: int | None = None) -> ExactBound:
    """Smallest delta for which ``target`` is (epsilon, delta)-DP on the checked domain.

    delta = max over neighbor pairs of the hockey-stick divergence
    sum_y max(0, P_x(y) - e^epsilon P_x'(y)); the witness is (x, x', None).
    """
    start = time.perf_counter()
    check_epsilon(epsilon)
    _check_request(target, length, inputs is None and pairs is None, input_cap, max_memory,
                   args)
    pairs = None if pairs is None else list(pairs)
    inputs = None if inputs is None else list(inputs)
    t = make_target(target, backend, fractions, args, cap, length,
                    n_inputs=_count_inputs(inputs, pairs))
    xs, table, I, J = _pair_table(t, inputs, pairs, input_cap, max_memory, progress)
    d, i, j = hockey_stick_dense(table, I, J, float(epsilon))
    details: dict[str, Any] = {"pairs": len(I), "inputs": len(table.xs),
                               "backend_choice": t.choice}
    if table.interrupted:
        details["interrupted"] = True  # a lower bound on delta, from the inputs done
    if t.compiled is not None:
        details["bdd_size"] = t.compiled.size
    return ExactBound(
        mechanism=t.name, epsilon=float(epsilon), e_epsilon=math.exp(epsilon),
        witness=(list(row(table.xs[i])), list(row(table.xs[j])), None),
        domain=_domain_text(t, xs, None, given=_given(inputs)), delta=d,
        claimed_epsilon=t.claimed_epsilon,
        backend=t.backend, seconds=time.perf_counter() - start, details=details,
    )


from .profile import profile  # noqa: E402 - the approximate-DP profile (issue 15)

# ``privet.exact`` is the function: hang the rest of the API on it.
exact.accuracy = accuracy            # type: ignore[attr-defined]
exact.delta_for = delta_for          # type: ignore[attr-defined]
exact.profile = profile              # type: ignore[attr-defined]
exact.program = program              # type: ignore[attr-defined]
exact.programs = programs            # type: ignore[attr-defined]
exact.sets = sets                    # type: ignore[attr-defined]
exact.closed_form = closed_form      # type: ignore[attr-defined]
exact.distributions = distributions  # type: ignore[attr-defined]
exact.choose_backend = choose_backend  # type: ignore[attr-defined]

__all__ = [
    "CompileError", "Compiled", "Program", "accuracy", "as_program", "choose_backend",
    "closed_form", "compile_mechanism", "compile_program", "delta_for", "distributions",
    "exact", "profile", "program", "programs", "sets",
]
