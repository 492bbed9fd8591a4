"""The ``Trace`` interpreter and argument generation by MaxSMT (Sec. 4.4.2, Algorithm 4 of StatDP).

Under :class:`Trace` every noise draw returns its "noise-free" value (0, or the most likely
value of a finite distribution that does not contain 0, as the paper's symbolic executor
sets samples to 0) and records the draw. Arguments may be z3 terms: they are handed to the
mechanism as 0-d NumPy object arrays, so ordinary NumPy arithmetic builds z3 expressions,
and the ``"symbolic"`` :mod:`privet.ops` backend registered here turns comparisons into z3
Booleans and records each one (in call order) on the running trace. Running the same
mechanism on D1 and D2 gives two lists of branch conditions; :func:`maxsmt_pairs` finds
the arguments that satisfy as many diverging constraints ``c1 xor c2`` as possible (MaxSMT,
as in ArgumentGenerator of Algorithm 4), for all input pairs at once: the inputs of one
shape share one symbolic run, and the argument space's cells (the feasible truth
assignments of all the conditions) are enumerated once, so each pair's exact optimum is a
vectorized count. The cells come from one vectorized evaluation of the conditions on a grid
of argument values (exact where it matters: ties are detected), with z3 proving that no
other cell exists only when the grid cannot show it by itself.

Arguments that control the noise scale (``mech.noise_args``) are not symbolic: each is set
to the value of its range that gives the least noise, measured by running the mechanism under
:class:`Trace` and summing the recorded noise scales (first heuristic of Sec. 4.4.2).
"""

from __future__ import annotations

import collections
import contextvars
import functools
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import ops
from ..core.errors import PrivetError, UnsupportedError
from ..core.mechanism import Mechanism
from ..core.noise import Dist, Noise, Shape

_ACTIVE: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("privet_trace",
                                                                      default=None)


class Trace(Noise):
    """Zero noise, records draws and (with symbolic arguments) branch conditions."""

    semantics = "symbolic"

    def __init__(self) -> None:
        self.size = 1
        self.draws: list[tuple[Dist, Shape]] = []
        self.conditions: list[Any] = []
        self.bits: tuple | None = None  # z3's numerals 1 and 0 (see _indicator)

    def _draw(self, dist: Dist, shape: Shape) -> np.ndarray:
        self.draws.append((dist, shape))
        event = dist.event_shape
        if dist.kind in ("discrete",):
            values, probs = dist.support()
            vals = np.asarray(values)
            zero = [i for i, v in enumerate(vals) if np.all(np.asarray(v) == 0)]
            pick = zero[0] if zero else int(np.argmax([float(p) for p in probs]))
            return np.broadcast_to(vals[pick], (1, *shape, *event)).copy()
        if dist.kind == "uniform":
            lo, hi = float(dist.params["low"]), float(dist.params["high"])
            value = 0.0 if lo <= 0.0 < hi else (lo + hi) / 2.0
            return np.full((1, *shape), value)
        if dist.kind in ("bernoulli", "geometric"):
            lo, hi = dist.params.get("low"), dist.params.get("high")
            value = 0
            if lo is not None and value < lo:
                value = lo
            if hi is not None and value > hi:
                value = hi
            return np.full((1, *shape), value, dtype=np.int64)
        return np.zeros((1, *shape))

    def noise_scale(self) -> float:
        """Total noise scale of the recorded draws (scales / sigmas summed over entries)."""
        total = 0.0
        for dist, shape in self.draws:
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            p = dist.params
            if dist.kind in ("laplace", "exponential", "gaussian"):
                s = np.asarray(p["sigma" if dist.kind == "gaussian" else "scale"], float)
                total += float(np.sum(np.broadcast_to(s, shape)))
            elif dist.kind == "geometric":
                a = float(p["alpha"])
                total += count * (2 * a / (1 - a * a)) ** 0.5
            elif dist.kind == "uniform":
                total += count * (float(p["high"]) - float(p["low"]))
            elif dist.kind == "bernoulli":
                q = float(p["p"])
                total += count * q * (1 - q)
        return total


# -- the symbolic ops backend ----------------------------------------------------------------

def _z3():
    """z3, or one sentence: without it detect generates arguments on a grid instead."""
    try:
        import z3
    except ImportError:
        raise UnsupportedError("argument generation by MaxSMT needs z3-solver "
                               "(pip install 'privet[smt]').") from None
    return z3


def _is_symbolic(*xs: Any) -> bool:
    z3 = _z3()
    for x in xs:
        if isinstance(x, z3.ExprRef):
            return True
        if isinstance(x, np.ndarray) and x.dtype == object:
            if any(isinstance(v, z3.ExprRef) for v in x.ravel().tolist()):
                return True
    return False


def _obj(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x.astype(object) if x.dtype != object else x
    out = np.empty((), dtype=object)
    out[()] = x
    return out


def _py(v: Any) -> Any:
    """A plain Python number for NumPy scalars, so z3 can coerce it."""
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def _to_bool(v: Any):
    z3 = _z3()
    v = _py(v)
    if isinstance(v, z3.BoolRef):
        return v
    if isinstance(v, z3.ExprRef):
        return v != 0
    return z3.BoolVal(bool(v))


def _to_num(v: Any):
    z3 = _z3()
    v = _py(v)
    if isinstance(v, z3.BoolRef):
        return _indicator(z3, v)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and not math.isfinite(v):
        # sentinels (FALSE/ABORTED) have no z3 value; a far-away stand-in keeps the order
        return _BIG if v > 0 else -_BIG
    return v


_BIG = 1e12


def _indicator(z3, b):
    """``z3.If(b, 1, 0)``: the same term, built without z3.If's coercions of 1 and 0 (two
    new numerals per call), from the numerals kept by the running :class:`Trace`."""
    trace = _ACTIVE.get()
    if trace is None:
        return z3.If(b, 1, 0)
    if trace.bits is None or trace.bits[0].ctx is not b.ctx:
        trace.bits = (z3.IntVal(1, b.ctx), z3.IntVal(0, b.ctx))
    one, zero = trace.bits
    return z3.ArithRef(z3.Z3_mk_ite(b.ctx.ref(), b.as_ast(), one.as_ast(), zero.as_ast()),
                       b.ctx)


def _elementwise(fn, *xs: Any) -> np.ndarray:
    arrays = np.broadcast_arrays(*(_obj(x) for x in xs))
    out = np.empty(arrays[0].shape, dtype=object)
    flat = [a.ravel() for a in arrays]
    res = out.ravel()
    for i in range(res.size):
        res[i] = fn(*(_py(a[i]) for a in flat))
    return res.reshape(arrays[0].shape)


class SymbolicOps(ops.HardOps):
    """``privet.ops`` over z3 terms: comparisons become recorded z3 Booleans."""

    name = "symbolic"

    def _compare(self, a, b, fn, hard):
        if not _is_symbolic(a, b):
            return hard(a, b)
        z3 = _z3()

        def cmp(x, y):
            c = fn(_to_num(x), _to_num(y))
            if not isinstance(c, z3.BoolRef):
                c = z3.BoolVal(bool(c))
            return z3.simplify(c)

        out = _elementwise(cmp, a, b)
        trace = _ACTIVE.get()
        if trace is not None:
            trace.conditions.extend(out.ravel().tolist())
        return out

    def lt(self, a, b):
        return self._compare(a, b, lambda x, y: x < y, np.less)

    def le(self, a, b):
        return self._compare(a, b, lambda x, y: x <= y, np.less_equal)

    def gt(self, a, b):
        return self._compare(a, b, lambda x, y: x > y, np.greater)

    def ge(self, a, b):
        return self._compare(a, b, lambda x, y: x >= y, np.greater_equal)

    def eq(self, a, b):
        return self._compare(a, b, lambda x, y: x == y, np.equal)

    def ne(self, a, b):
        return self._compare(a, b, lambda x, y: x != y, np.not_equal)

    def where(self, cond, a, b):
        if not _is_symbolic(cond, a, b):
            return np.where(cond, a, b)
        z3 = _z3()
        return _elementwise(lambda c, x, y: z3.If(_to_bool(c), _to_num(x), _to_num(y)),
                            cond, a, b)

    def logical_and(self, a, b):
        if not _is_symbolic(a, b):
            return np.logical_and(a, b)
        z3 = _z3()
        return _elementwise(lambda x, y: z3.And(_to_bool(x), _to_bool(y)), a, b)

    def logical_or(self, a, b):
        if not _is_symbolic(a, b):
            return np.logical_or(a, b)
        z3 = _z3()
        return _elementwise(lambda x, y: z3.Or(_to_bool(x), _to_bool(y)), a, b)

    def logical_not(self, a):
        if not _is_symbolic(a):
            return np.logical_not(a)
        z3 = _z3()
        return _elementwise(lambda x: z3.Not(_to_bool(x)), a)

    def cumsum(self, x, axis=-1):
        if not _is_symbolic(x):
            return np.cumsum(x, axis=axis)
        return np.cumsum(_elementwise(_to_num, x), axis=axis)

    def _reduce(self, x, axis, pick_first):
        if not _is_symbolic(x):
            return None
        z3 = _z3()
        arr = np.moveaxis(_obj(x), axis, -1)
        out_val = np.empty(arr.shape[:-1], dtype=object)
        out_idx = np.empty(arr.shape[:-1], dtype=object)
        for pos in np.ndindex(arr.shape[:-1]):
            row = [_to_num(v) for v in arr[pos]]
            best, idx = row[0], 0
            for j, v in enumerate(row[1:], start=1):
                better = pick_first(v, best)
                better = better if isinstance(better, z3.BoolRef) else z3.BoolVal(bool(better))
                trace = _ACTIVE.get()
                if trace is not None:
                    trace.conditions.append(z3.simplify(better))
                best = z3.If(better, v, best)
                idx = z3.If(better, j, idx)
            out_val[pos] = best
            out_idx[pos] = idx
        return out_val, out_idx

    def argmax(self, x, axis=-1):
        r = self._reduce(x, axis, lambda v, b: v > b)
        return np.argmax(x, axis=axis) if r is None else r[1]

    def argmin(self, x, axis=-1):
        r = self._reduce(x, axis, lambda v, b: v < b)
        return np.argmin(x, axis=axis) if r is None else r[1]

    def max(self, x, axis=-1):
        r = self._reduce(x, axis, lambda v, b: v > b)
        return np.max(x, axis=axis) if r is None else r[0]

    def min(self, x, axis=-1):
        r = self._reduce(x, axis, lambda v, b: v < b)
        return np.min(x, axis=axis) if r is None else r[0]


ops.register("symbolic", SymbolicOps())


# -- running under Trace ---------------------------------------------------------------------

def run_trace(mech: Mechanism, x: Any, args: Mapping[str, Any]) -> tuple[Any, Trace]:
    """Run ``mech`` on ``x`` under a fresh :class:`Trace`; returns (output, trace)."""
    trace = Trace()
    token = _ACTIVE.set(trace)
    try:
        with ops.semantics("symbolic"):
            out = mech.fn(trace, np.asarray(x), **dict(args))
    finally:
        _ACTIVE.reset(token)
    return out, trace


def zero_noise_output(mech: Mechanism, x: Any, args: Mapping[str, Any]) -> np.ndarray | None:
    """The output of ``mech`` on ``x`` with every noise draw at its noise-free value.

    This is the reference ω0 of the Hamming-distance events (Sec. 4.3 case 1). Returns None
    for mechanisms that cannot be run under Trace (black boxes): callers use the mode.
    """
    if not mech.supports("ops"):
        return None
    try:
        out, _ = run_trace(mech, mech.domain.check(x), mech.resolve_args(args))
        arr = np.asarray(out, dtype=float)
    except Exception:
        return None
    if arr.ndim == 0 or arr.shape[0] != 1:
        return None
    return arr[0]


# -- argument generation -----------------------------------------------------------------------

@dataclass
class ArgPlan:
    """Arguments for one input pair and how they were found."""

    args: dict
    path: str  # "maxsmt" | "grid" | "given" | "defaults"
    satisfied: int = 0
    constraints: int = 0
    notes: list = field(default_factory=list)


def _range_values(spec: Any, default: Any, k: int = 3) -> list:
    """Candidate values of an argument range: a list of values, or (low, high) -> k points."""
    if isinstance(spec, (list, np.ndarray)) or (isinstance(spec, tuple) and len(spec) != 2):
        return list(spec)
    if isinstance(spec, tuple) and len(spec) == 2:
        lo, hi = spec
        integer = isinstance(default, (int, np.integer)) and not isinstance(default, bool) \
            and isinstance(lo, (int, np.integer)) and isinstance(hi, (int, np.integer))
        pts = np.linspace(float(lo), float(hi), k)
        vals = sorted({int(round(v)) for v in pts}) if integer else [float(v) for v in pts]
        return vals
    return [default]


def _numeric_arg(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


def least_noise_args(mech: Mechanism, x: Any) -> dict:
    """Values of ``mech.noise_args`` that minimize the recorded noise scale (Sec. 4.4.2)."""
    chosen: dict = {}
    base = dict(mech.args)
    for name in mech.noise_args:
        default = base.get(name)
        candidates = _range_values(mech.arg_ranges.get(name, [default]), default, k=5)
        best, best_scale = default, math.inf
        for value in candidates:
            trial = dict(base, **chosen, **{name: value})
            try:
                _, trace = run_trace(mech, mech.domain.check(x), mech.resolve_args(trial))
                scale = trace.noise_scale()
            except Exception:
                continue
            if scale < best_scale - 1e-12:
                best, best_scale = value, scale
        if best is not None:
            chosen[name] = best
    return chosen


def symbolic_arg_names(mech: Mechanism) -> list[str]:
    """Arguments solved by MaxSMT: numeric, not noise-controlling, not epsilon."""
    return [k for k, v in mech.args.items()
            if k not in mech.noise_args and k != "epsilon" and _numeric_arg(v)]


def _symbolic_setup(mech: Mechanism, fixed: Mapping[str, Any]) -> tuple[dict, dict, list]:
    """(base args, z3 variables, hard range constraints) of :func:`maxsmt_args`."""
    z3 = _z3()
    names = symbolic_arg_names(mech)
    base = mech.resolve_args(dict(fixed))
    syms: dict[str, Any] = {}
    hard = []
    for name in names:
        default = mech.args[name]
        var = z3.Int(name) if isinstance(default, (int, np.integer)) else z3.Real(name)
        syms[name] = var
        spec = mech.arg_ranges.get(name)
        if isinstance(spec, tuple) and len(spec) == 2:
            hard += [var >= spec[0], var <= spec[1]]
        elif isinstance(spec, (list, np.ndarray)) and len(spec):
            hard.append(z3.Or(*[var == v for v in list(spec)]))
    return base, syms, hard


def branch_conditions(mech: Mechanism, x: Any, fixed: Mapping[str, Any],
                      setup: tuple | None = None) -> list:
    """The z3 branch conditions of ``mech`` on ``x`` with the symbolic arguments of
    :func:`maxsmt_pairs` (one symbolic run)."""
    z3 = _z3()
    base, syms, _ = setup or _symbolic_setup(mech, fixed)
    sym_args = dict(base)
    for name, var in syms.items():
        sym_args[name] = _obj(var)
    try:
        _, trace = run_trace(mech, mech.domain.check(x), sym_args)
    except Exception as err:
        raise PrivetError(
            f"mechanism {mech.name!r} cannot be traced with symbolic arguments "
            f"({type(err).__name__}: {err})."
        ) from err
    return [c for c in trace.conditions if isinstance(c, z3.BoolRef)]


def input_conditions(mech: Mechanism, xs: Sequence[Any], fixed: Mapping[str, Any],
                     setup: tuple | None = None) -> list[list]:
    """:func:`branch_conditions` of every input in ``xs``, each distinct input traced once.

    The inputs of one shape share one symbolic run where they can: the mechanism runs once
    with z3 variables for the input entries as well as for the arguments, and each input's
    conditions are that run's conditions on the arguments with the input's values
    substituted (one z3 call per input instead of a run through NumPy object arrays). The
    shared run is used only if, on the shape's first input, its conditions are equivalent
    one by one to those of the concrete run (z3 proves it); otherwise (a mechanism that
    branches on the input in Python, or records its conditions differently) every input
    gets its own concrete run. ``setup`` is :func:`_symbolic_setup`'s answer, when known.
    """
    z3 = _z3()
    setup = setup or _symbolic_setup(mech, fixed)
    key = lambda x: (x.tobytes(), x.shape, x.dtype.str)  # noqa: E731
    validated: dict = {}  # inputs repeat across pairs: each distinct one checked once
    checked = []
    for x in xs:
        try:
            k = key(np.asarray(x))
        except (TypeError, ValueError):  # not an array: the domain's check says why
            k = None
        if k is None or k not in validated:
            validated[k] = mech.domain.check(x)
        checked.append(validated[k])
    groups: dict = {}
    for x in checked:
        groups.setdefault((x.shape, x.dtype.kind), {}).setdefault(key(x), x)
    out: dict = {}
    for (shape, kind), members in groups.items():
        items = list(members.items())
        concrete = branch_conditions(mech, items[0][1], fixed, setup)  # raises if untraceable
        shared = _shared_conditions(mech, shape, kind, fixed, setup) if len(items) > 1 else None
        if shared is not None and not _same(z3, shared(items[0][1]), concrete):
            shared = None
        out[items[0][0]] = shared(items[0][1]) if shared is not None else concrete
        for k, x in items[1:]:
            out[k] = shared(x) if shared is not None else branch_conditions(mech, x, fixed,
                                                                            setup)
    return [out[key(x)] for x in checked]


def _same(z3, a: list, b: list) -> bool:
    """Whether two lists of conditions are equivalent entry by entry, for every value of
    the arguments (equal once simplified, or one solver call: no assignment makes any pair
    differ). Constant entries
    are left out: a branch that is constant on every input adds the same amount to every
    assignment's MaxSMT score, so it changes no choice."""
    a, b = ([c for c in x if not (z3.is_true(c) or z3.is_false(c))] for x in (a, b))
    if len(a) != len(b):
        return False
    if not a:
        return True
    # equal terms after one simplification that orients every comparison the same way (z3
    # terms are hash-consed: one comparison of ids) are equivalent; otherwise z3 decides
    if z3.simplify(_pack(z3, "__same", a), arith_lhs=True).eq(
            z3.simplify(_pack(z3, "__same", b), arith_lhs=True)):
        return True
    solver = z3.Solver()
    solver.set("timeout", 2000)
    solver.add(z3.Or([x != y for x, y in zip(a, b)]))
    return solver.check() == z3.unsat


def _pack(z3, name: str, terms: Sequence):
    """``z3.Function(name, Bool, ..., Bool)(*terms)`` for Boolean ``terms`` (at least one):
    one application of an uninterpreted function to all of them, which z3 simplifies or
    evaluates in one call; built without the Python API's cast of every argument."""
    ctx, n = terms[0].ctx, len(terms)
    boolean = z3.BoolSort(ctx)
    domain = (z3.Sort * n)(*[boolean.ast] * n)
    decl = z3.FuncDeclRef(z3.Z3_mk_func_decl(ctx.ref(), z3.to_symbol(name, ctx), n, domain,
                                             boolean.ast), ctx)
    args = (z3.Ast * n)(*[t.as_ast() for t in terms])
    return z3.BoolRef(z3.Z3_mk_app(ctx.ref(), decl.ast, n, args), ctx)


def _shared_conditions(mech: Mechanism, shape: tuple, kind: str, fixed: Mapping[str, Any],
                       setup: tuple | None = None):
    """One symbolic run over symbolic inputs of ``shape``: a function from a concrete input
    to its conditions on the arguments, or None when the mechanism cannot run that way."""
    z3 = _z3()
    if kind not in "iuf":
        return None
    base, syms, _ = setup or _symbolic_setup(mech, fixed)
    make, value = (z3.Int, lambda v: z3.IntVal(int(v))) if kind in "iu" else \
        (z3.Real, lambda v: z3.RealVal(float(v)))
    entries = [make(f"__x{i}") for i in range(int(np.prod(shape, dtype=np.int64)))]
    x = np.empty(len(entries), dtype=object)
    x[:] = entries
    sym_args = dict(base)
    for name, var in syms.items():
        sym_args[name] = _obj(var)
    try:
        _, trace = run_trace(mech, x.reshape(shape), sym_args)
    except Exception:
        return None
    scan = _Scan(z3, set(syms))  # each variable is named after its argument
    conds = [c for c in trace.conditions if isinstance(c, z3.BoolRef) and scan.mentions(c)]
    if not conds:
        return None
    pack = _pack(z3, "__conds", conds)
    # z3.substitute checks the sorts of every pair through the Python API: the entries are
    # fixed and the values repeat, so the substitution arrays are built from kept terms
    ctx = pack.ctx
    sources = (z3.Ast * len(entries))(*[e.as_ast() for e in entries])
    values: dict = {}
    # the inputs share most of their conditions: one wrapper per distinct term
    wrapped: dict[int, Any] = {}
    walk = _Walk(z3)

    def instantiate(v: np.ndarray) -> list:
        vals = np.asarray(v).ravel().tolist()
        for a in vals:
            if a not in values:
                values[a] = value(a)
        targets = (z3.Ast * len(vals))(*[values[a].as_ast() for a in vals])
        ref = ctx.ref()
        sub = z3.Z3_substitute(ref, pack.as_ast(), len(vals), sources, targets)
        simple = z3.simplify(z3.ExprRef(sub, ctx))  # referenced while its children are read
        out = []
        for i in range(len(conds)):
            arg = walk.app_arg(ref, simple.as_ast(), i)
            key = walk.ast_id(ref, arg)
            if key not in wrapped:
                # a Boolean (an argument of __conds): wrapped without z3's sort dispatch
                wrapped[key] = z3.BoolRef(arg, ctx)
            out.append(wrapped[key])
        return out

    return instantiate


def _unchecked(core, name: str):
    """The ctypes function behind z3's wrapper ``core.<name>``, without the error check
    (a second foreign call) that the wrapper makes after each call; the wrapper itself when
    z3 does not expose it. Only for queries on live ASTs, which cannot fail."""
    wrapper = getattr(core, name)
    return getattr((wrapper.__defaults__ or (None,))[-1], "f", wrapper)


class _Walk:
    """Post-order walks over raw z3 ASTs through the C API: the Python API would build (and
    reference-count) a wrapper object per visited node, and printing a term to read its
    text is slower still."""

    def __init__(self, z3):
        self.z3 = z3
        (self.ast_id, self.ast_kind, self.to_app, self.num_args, self.app_arg,
         self.app_decl, self.decl_kind) = (
            _unchecked(z3.z3core, f"Z3_{f}") for f in (
                "get_ast_id", "get_ast_kind", "to_app", "get_app_num_args", "get_app_arg",
                "get_app_decl", "get_decl_kind"))

    def nodes(self, term, done: Mapping[int, Any]):
        """The nodes under ``term`` whose ids are not in ``done``, each once and after its
        children: ``(ast, id, decl kind, decl, child ids)``, with decl kind None (and the
        AST kind for decl) for a node that is not an application. The caller enters every
        node it is given in ``done`` before it asks for the next."""
        ctx = term.ctx.ref()
        app_ast = self.z3.Z3_APP_AST
        top = term.as_ast()
        stack: list = [(top, self.ast_id(ctx, top), None)]
        while stack:
            a, aid, kids = stack.pop()
            if kids is not None:
                decl = self.app_decl(ctx, kids[0])
                yield a, aid, self.decl_kind(ctx, decl), decl, kids[1]
                continue
            if aid in done:
                continue
            kind = self.ast_kind(ctx, a)
            if kind != app_ast:
                yield a, aid, None, kind, ()
                continue
            app = self.to_app(ctx, a)
            args = [self.app_arg(ctx, app, i) for i in range(self.num_args(ctx, app))]
            ids = [self.ast_id(ctx, c) for c in args]
            stack.append((a, aid, (app, ids)))
            stack.extend((c, i, None) for c, i in zip(args, ids) if i not in done)

    def root(self, term) -> int:
        return self.ast_id(term.ctx.ref(), term.as_ast())


class _Scan:
    """Which z3 terms contain an if-then-else, or a constant of a given name set: one
    :class:`_Walk`, memoized by AST id across every term scanned (the conditions of one
    mechanism share most of their subterms)."""

    ITE, NAMED = 1, 2

    def __init__(self, z3, names: set = frozenset()):
        self.z3, self.names, self.memo = z3, names, {}
        self.walk = _Walk(z3)

    def flags(self, term) -> int:
        z3, memo = self.z3, self.memo
        core = z3.z3core
        ctx = term.ctx.ref()
        for _, aid, kind, decl, kids in self.walk.nodes(term, memo):
            f = self.ITE if kind == z3.Z3_OP_ITE else 0
            if kind == z3.Z3_OP_UNINTERPRETED and not kids and self.names and \
                    core.Z3_get_symbol_string(ctx, core.Z3_get_decl_name(ctx, decl)) in self.names:
                f |= self.NAMED
            for c in kids:
                f |= memo[c]
            memo[aid] = f  # quantifiers and bound variables (no children) do not occur here
        return memo[self.walk.root(term)]

    def has_ite(self, term) -> bool:
        return bool(self.flags(term) & self.ITE)

    def mentions(self, term) -> bool:
        return bool(self.flags(term) & self.NAMED)


class _Points:
    """The Boolean terms of :func:`_cells` evaluated at many points of the argument space at
    once: the term DAG is read once through the C API (one instruction per distinct node),
    then run over NumPy float columns, one column entry per point -- a vectorized model
    evaluation, in place of one z3 ``check`` per cell.

    Floats are exact here only away from ties: every arithmetic node carries a bound on the
    magnitudes its value was computed from, and a comparison of Reals whose two sides lie
    within ``TOL`` of that bound of each other is unreliable at that point (its truth may
    differ from the float answer), so is every comparison of Ints beyond 2**52; the nodes
    above it inherit that. A *direct* comparison, an argument against a numeral that a
    double holds exactly, is exact. Terms with an operator outside linear (or polynomial)
    arithmetic, if-then-else and Boolean connectives, or with a constant that is not an
    argument, are not evaluated (``ok`` is False).

    Recorded for :func:`_evaluated_cells`: the arguments each root depends on (``deps``)
    and those of them that occur under it other than in a direct comparison (``indirect``),
    as bit masks (``bit``); and whether an if-then-else lies under it (``ite``).
    """

    TOL = 1e-9
    _ARITH = ("ADD", "SUB", "MUL", "UMINUS", "TO_REAL", "ITE")
    _CMP = ("LE", "GE", "LT", "GT", "EQ")
    _SIGN = {"LE": lambda d: d <= 0, "GE": lambda d: d >= 0, "LT": lambda d: d < 0,
             "GT": lambda d: d > 0, "EQ": lambda d: d == 0}
    _BOOL = ("AND", "OR", "NOT", "XOR", "IMPLIES", "IFF", "TRUE", "FALSE")

    def __init__(self, z3, syms: Mapping[str, Any], roots: Sequence):
        core = z3.z3core
        self.ok = bool(roots)
        self.program: list[tuple] = []  # (op, children slots, is_int); slot i = program[i]
        self.numerals: set = set()
        self.roots: list[int] = []
        # sets of arguments as bit masks: argument i is bit i of ``syms``'s order
        self.bit = {name: 1 << i for i, name in enumerate(syms)}
        self.deps: list[int] = []  # by root
        self.indirect: list[int] = []  # by root
        self.ite: list[bool] = []  # by root: whether an if-then-else lies below
        if not self.ok:
            return
        ctx = roots[0].ctx.ref()
        op = {getattr(z3, f"Z3_OP_{k}"): k for k in (*self._ARITH, *self._CMP, *self._BOOL)}
        ints = {name: var.is_int() for name, var in syms.items()}
        program = self.program
        slot: dict[int, int] = {}
        deps: list[int] = []  # by slot: the arguments below
        indirect: list[int] = []  # by slot: those met other than in a direct comparison
        ites: list[bool] = []  # by slot
        walk = _Walk(z3)
        for root in roots:
            for a, aid, kind, decl, kids in walk.nodes(root, slot):
                if kind is None and decl == z3.Z3_NUMERAL_AST:
                    try:
                        value = Fraction(core.Z3_get_numeral_string(ctx, a))
                    except ValueError:  # not a rational (an algebraic number)
                        self.ok = False
                        return
                    self.numerals.add(value)
                    is_int = core.Z3_get_sort_kind(ctx, core.Z3_get_sort(ctx, a)) \
                        == z3.Z3_INT_SORT
                    slot[aid] = self._emit(("const", float(value), Fraction(float(value)) ==
                                            value), (), is_int)
                    deps.append(0)
                    indirect.append(0)
                    ites.append(False)
                    continue
                if kind == z3.Z3_OP_UNINTERPRETED and not kids:
                    name = core.Z3_get_symbol_string(ctx, core.Z3_get_decl_name(ctx, decl))
                    if name not in syms:
                        self.ok = False
                        return
                    slot[aid] = self._emit(("var", name), (), ints[name])
                    deps.append(self.bit[name])
                    indirect.append(0)
                    ites.append(False)
                    continue
                if kind not in op:
                    self.ok = False
                    return
                kids = tuple(slot[i] for i in kids)
                name = op[kind]
                sorts = {program[i][2] for i in kids}
                is_int = None  # a Boolean
                direct = False
                if name in self._CMP:
                    if None in sorts:  # = between Booleans
                        name = "IFF"
                    else:
                        ops = sorted(program[i][0][0] for i in kids)
                        exact = [program[i][0][2] for i in kids if program[i][0][0] == "const"]
                        direct = ops == ["const", "var"] and exact[0]
                        name += " exact" if direct else " int" if sorts == {True} else ""
                elif name == "ITE":
                    is_int = program[kids[1]][2]
                elif name in self._ARITH:
                    is_int = name != "TO_REAL" and sorts == {True}
                slot[aid] = self._emit((name,), kids, is_int)
                below = under = 0
                for i in kids:
                    below |= deps[i]
                    under |= indirect[i]
                    if not direct and program[i][0][0] == "var":
                        under |= deps[i]  # right under something else than a direct comparison
                deps.append(below)
                indirect.append(under)
                ites.append(name == "ITE" or any(ites[i] for i in kids))
            top = slot[walk.root(root)]
            self.roots.append(top)
            self.deps.append(deps[top])
            self.indirect.append(indirect[top])
            self.ite.append(ites[top])

    def _emit(self, op: tuple, kids: tuple, is_int: bool) -> int:
        self.program.append((op, kids, is_int))
        return len(self.program) - 1

    def run(self, columns: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(truth of each root at each point, points x roots; whether it is unreliable)."""
        n = len(next(iter(columns.values())))
        val: list = []
        mag: list = []  # a bound on the magnitudes behind each arithmetic value
        bad: list = []  # unreliable (None: nowhere)
        for (op, kids, _) in self.program:
            k = op[0]
            x = [val[i] for i in kids]
            m = [mag[i] for i in kids]
            below = [bad[i] for i in kids if bad[i] is not None]
            u = np.logical_or.reduce(below) if len(below) > 1 else below[0] if below else None
            v = b = None
            if k == "const":
                v, b = np.full(n, op[1]), np.full(n, abs(op[1]))
            elif k == "var":
                v = columns[op[1]]
                b = np.abs(v)
            elif k == "ADD":
                v, b = sum(x[1:], x[0]), sum(m[1:], m[0])
            elif k == "SUB":
                v, b = x[0] - sum(x[2:], x[1]), sum(m[1:], m[0])
            elif k == "MUL":
                v, b = x[0], m[0]
                for y, my in zip(x[1:], m[1:]):
                    v, b = v * y, b * my
            elif k == "UMINUS":
                v, b = -x[0], m[0]
            elif k == "TO_REAL":
                v, b = x[0], m[0]
            elif k == "ITE":
                v = np.where(x[0], x[1], x[2])
                if m[1] is not None:
                    b = np.where(x[0], m[1], m[2])
            elif k.split()[0] in self._CMP:
                d = x[0] - x[1]  # a double difference is 0 only between equal doubles
                if k.endswith(" int"):  # integers are exact in a double below 2**52
                    tie = (m[0] + m[1]) >= 2.0 ** 52
                elif not k.endswith(" exact"):
                    tie = np.abs(d) <= self.TOL * (m[0] + m[1])
                else:
                    tie = None
                u = tie if u is None else u if tie is None else u | tie
                v = self._SIGN[k.split()[0]](d)
            elif k == "IFF":
                v = x[0] == x[1]
            elif k == "AND":
                v = np.logical_and.reduce(x) if x else np.ones(n, dtype=bool)
            elif k == "OR":
                v = np.logical_or.reduce(x) if x else np.zeros(n, dtype=bool)
            elif k == "NOT":
                v = ~x[0]
            elif k == "XOR":
                v = x[0] != x[1]
            elif k == "IMPLIES":
                v = ~x[0] | x[1]
            elif k == "TRUE":
                v = np.ones(n, dtype=bool)
            elif k == "FALSE":
                v = np.zeros(n, dtype=bool)
            val.append(v)
            mag.append(b)
            bad.append(u)
        unsure = np.zeros((n, len(self.roots)), dtype=bool)
        for j, i in enumerate(self.roots):
            if bad[i] is not None:
                unsure[:, j] = bad[i]
        return np.stack([val[i] for i in self.roots], axis=1), unsure


# more feasible truth assignments than this and the shared enumeration gives way to one
# Optimize call per problem
MAX_CELLS = 512


def maxsmt_args(mech: Mechanism, d1: Any, d2: Any, fixed: Mapping[str, Any],
                timeout_ms: int = 5000) -> ArgPlan:
    """Arguments that make M(D1) and M(D2) diverge on as many branches as possible (one pair
    of :func:`maxsmt_pairs`)."""
    return maxsmt_pairs(mech, [(d1, d2)], fixed, timeout_ms)[0]


def maxsmt_pairs(mech: Mechanism, pairs: Sequence[tuple[Any, Any]], fixed: Mapping[str, Any],
                 timeout_ms: int = 5000) -> list[ArgPlan]:
    """ArgumentGenerator of Algorithm 4 (StatDP) for every input pair: one :class:`ArgPlan`
    per ``(d1, d2)``.

    Each argument in :func:`symbolic_arg_names` becomes a z3 variable (Int when its default
    is an int, else Real), bounded by ``mech.arg_ranges`` when given. The mechanism runs
    under :class:`Trace` on D1 and on D2; branch i gives the soft constraint
    ``c1_i xor c2_i``, and the arguments satisfy as many as possible (MaxSMT). After that,
    a second ``Optimize`` call keeps the truth values of the pair's branches and maximizes
    the margin of every recorded comparison, so the arguments sit in the middle of their
    feasible region rather than on a tie (with zero noise a tie is an accident of the
    trace, not of the mechanism). Raises :class:`PrivetError` when the mechanism cannot be
    traced.

    The problems of all pairs are solved together. The objective of a pair depends only on
    the truth values of its branch conditions, so the feasible truth assignments of all
    the conditions of all pairs (the cells of the argument space the conditions cut out)
    are enumerated once (:func:`_cells`: the terms evaluated with NumPy on a grid of the
    arguments, then a z3 ``Solver`` with a blocking clause per cell unless the grid
    provably meets them all); each pair's
    MaxSMT optimum is then the best cell by a vectorized count of diverging branches --
    the exact optimum, as every feasible assignment is a cell. Ties go to the first cell
    in the lexicographic order of its truth values (deterministic), and the centering
    keeps the truth value of every condition of the cell (of all inputs), so pairs with
    the same best cell share it. With more than :data:`MAX_CELLS` cells (or a solver
    timeout) each pair gets its own ``Optimize`` call instead, centered on its own
    conditions. Pairs that pose the same problem (the same multiset of branch pairs
    ``{c1_i, c2_i}``: a pair and its swap, often a pattern and its mirror image) share the
    solution.
    Each input is traced once, whatever the number of pairs it belongs to.
    """
    z3 = _z3()
    setup = _symbolic_setup(mech, fixed)
    _, syms, hard = setup
    if not syms:
        return [ArgPlan(dict(fixed), "defaults") for _ in pairs]
    conds = input_conditions(mech, [x for pair in pairs for x in pair], fixed, setup)
    traced = []
    for c1, c2 in zip(conds[::2], conds[1::2]):
        if len(c1) != len(c2) or not c1:
            raise PrivetError(
                f"tracing {mech.name!r} gave {len(c1)} and {len(c2)} branch conditions on D1 "
                "and D2; argument generation needs the same branches on both."
            )
        traced.append((c1, c2))
    # the distinct conditions (z3 terms are hash-consed: equal ids are equal terms), as
    # indices into ``terms``; an input of several pairs has one list of conditions
    atom: dict[int, int] = {}
    terms: list = []
    index: dict[int, list] = {}
    ast_id = _Walk(z3).ast_id
    for cs in conds:
        if id(cs) not in index:
            ids = [ast_id(c.ctx.ref(), c.as_ast()) for c in cs]
            for i, c in zip(ids, cs):
                if atom.setdefault(i, len(terms)) == len(terms):
                    terms.append(c)
            index[id(cs)] = [atom[i] for i in ids]
    points = _Points(z3, syms, [*hard, *terms])
    cells = _cells(z3, syms, hard, terms, timeout_ms, points)
    if points.ok:  # which terms hold an if-then-else: read off the evaluator's walk
        ite = points.ite[len(hard):]
    else:
        scan = _Scan(z3)
        ite = [scan.has_ite(t) for t in terms]
    solved: dict = {}
    centered: dict = {}
    margins: dict = {}
    plans = []
    for c1, c2 in traced:
        i1, i2 = index[id(c1)], index[id(c2)]
        # c1 xor c2 is symmetric: a pair and its swap pose the same problem
        problem = tuple(sorted(collections.Counter(
            (a, b) if a <= b else (b, a) for a, b in zip(i1, i2)).items()))
        if problem not in solved:
            truth, satisfied, witness = _maxsmt(z3, syms, hard, terms, i1, i2, cells,
                                                timeout_ms, mech.name)
            key = tuple(sorted(truth.items()))
            if key not in centered:
                centered[key] = _center(z3, syms, hard, terms, ite, key, timeout_ms, margins)
            values = centered[key] or witness
            args = dict(fixed)
            for name, val in values.items():
                args[name] = _z3_number(val, mech.args[name])
            solved[problem] = ArgPlan(args, "maxsmt", satisfied=satisfied,
                                      constraints=len(i1))
        plans.append(solved[problem])
    return plans


def _cells(z3, syms, hard, terms, timeout_ms, points: _Points | None = None):
    """The feasible truth assignments of ``terms`` under ``hard``: (a boolean matrix, one
    row per cell in lexicographic order, and a witness assignment of the arguments per
    cell), or None when there are more than :data:`MAX_CELLS` or z3 cannot tell.

    The cells met at the points of :func:`_grid` come first (:func:`_evaluated_cells`, no
    solver call). Unless those are provably all, a z3 ``Solver`` with a blocking clause per
    cell found proves that there is no other, or finds the next one (one ``check`` and one
    blocking clause per cell)."""
    found, complete = _evaluated_cells(z3, syms, hard, terms, points)
    if len(found) > MAX_CELLS:
        return None
    rows = [row for row, _ in found]
    witnesses = [witness for _, witness in found]
    if not complete and _solve_cells(z3, syms, hard, terms, timeout_ms, rows,
                                     witnesses) is None:
        return None
    order = sorted(range(len(rows)), key=rows.__getitem__)
    matrix = np.array([rows[i] for i in order], dtype=bool).reshape(len(rows), len(terms))
    return matrix, [witnesses[i] for i in order]


def _solve_cells(z3, syms, hard, terms, timeout_ms, rows: list, witnesses: list):
    """The cells of :func:`_cells` not in ``rows``, appended with their witnesses to
    ``rows`` and ``witnesses``; None when there are more than :data:`MAX_CELLS` or z3 cannot
    tell."""
    # the incremental core from the first check: z3's default solver would first try a
    # one-shot tactic, which can take a hundred times longer to prove the last check unsat
    solver = z3.SimpleSolver()
    solver.set("timeout", int(timeout_ms))
    solver.add(*hard)
    ctx = solver.ctx.ref()
    # blocking clauses built from the literals directly
    negations = [z3.Not(t) for t in terms]  # referenced until the end: their ASTs live
    literals = [(n.as_ast(), t.as_ast()) for n, t in zip(negations, terms)]

    def block(row: tuple) -> None:
        lits = (z3.Ast * len(terms))(*[literals[j][0 if b else 1] for j, b in enumerate(row)])
        solver.add(z3.BoolRef(z3.Z3_mk_or(ctx, len(terms), lits), solver.ctx))

    for row in rows:
        block(row)
    pack = None
    while True:
        result = solver.check()
        if result == z3.unsat:
            return rows
        if result != z3.sat or len(rows) >= MAX_CELLS:
            return None
        model = solver.model()
        witness = {n: model.eval(v, model_completion=True) for n, v in syms.items()}
        # every term evaluated in one call: the arguments of an uninterpreted application,
        # read back from its s-expression
        if pack is None:
            pack = _pack(z3, "__cells", terms)
        values = z3.simplify(z3.substitute(pack, *[(v, witness[n]) for n, v in syms.items()]))
        words = values.sexpr().replace("(", " ").replace(")", " ").split()[1:]
        if len(words) != len(terms) or not set(words) <= {"true", "false"}:
            return None  # a condition that the arguments alone do not decide
        row = tuple(w == "true" for w in words)
        rows.append(row)
        witnesses.append(witness)
        block(row)


# more points than this and :func:`_cells` leaves the enumeration to the solver alone
MAX_POINTS = 4096


def _grid(syms: Mapping[str, Any], numerals: set) -> tuple[dict, dict, dict] | None:
    """Points of the argument space likely to meet every cell (the product of one axis per
    argument): for a Real argument every numeral of the terms, the midpoints between
    consecutive ones and one point beyond each end; for an Int argument every integer from
    one below the least numeral to one above the greatest (a ``range``; or, when that range
    is long, the integers next to each numeral). Returns (float columns, exact values) by
    argument name and the axes, or None with more than :data:`MAX_POINTS` points."""
    marks = sorted(numerals) or [Fraction(0)]
    axes: dict = {}
    for name, var in syms.items():
        if var.is_int():
            lo, hi = math.floor(marks[0]) - 1, math.ceil(marks[-1]) + 1
            axes[name] = range(lo, hi + 1) if hi - lo <= 64 else sorted(
                {math.floor(v) + d for v in marks for d in (-1, 0, 1, 2)})
        else:
            mids = [(a + b) / 2 for a, b in zip(marks, marks[1:])]
            # the floats evaluated are the points: their exact values are the witnesses
            axes[name] = sorted({Fraction(float(v))
                                 for v in (*marks, *mids, marks[0] - 1, marks[-1] + 1)})
    if math.prod(len(a) for a in axes.values()) > MAX_POINTS:
        return None
    grids = np.meshgrid(*[np.arange(len(a)) for a in axes.values()], indexing="ij")
    index = {name: g.ravel() for name, g in zip(axes, grids)}
    exact = {name: np.asarray(list(a), dtype=object)[index[name]] for name, a in axes.items()}
    columns = {name: exact[name].astype(float) for name in axes}
    return columns, exact, axes


def _evaluated_cells(z3, syms, hard, terms, points: _Points | None = None
                     ) -> tuple[list[tuple[tuple, dict]], bool]:
    """The cells met at the reliable points of :func:`_grid` inside ``hard``: (truth row,
    witness assignment of exact numbers) each, in lexicographic order of the rows ([] when
    the terms cannot be evaluated so: :class:`_Points`); and whether these are all the
    cells.

    They are when every argument is either *direct* (it occurs only in direct comparisons:
    the terms and ``hard`` then depend on it only through which interval between, or which
    one of, the numerals holds it, and the grid has a point in each), or an Int confined by
    ``hard`` to the grid's range of integers (constraints on it alone, made of direct
    comparisons, false at both ends of the range: so beyond them too), and no point's cell
    is unreliable. Any feasible point then shares its cell with the grid point that takes
    the same interval of each direct argument and the same value of the others."""
    points = points or _Points(z3, syms, [*hard, *terms])
    grid = _grid(syms, points.numerals) if points.ok else None
    if grid is None:
        return [], False
    columns, exact, axes = grid
    truth, unsure = points.run(columns)
    h = len(hard)
    inside = truth[:, :h].all(axis=1)
    sure = ~unsure[:, :h].any(axis=1)  # whether the point is feasible is known
    keep = np.flatnonzero(inside & sure & ~unsure[:, h:].any(axis=1))
    found = []
    if keep.size:
        rows, first = np.unique(truth[keep, h:], axis=0, return_index=True)
        for row, i in zip(rows.tolist(), keep[first].tolist()):
            found.append((tuple(row), {name: exact[name][i] for name in syms}))
    complete = bool(sure.all()) and keep.size == np.count_nonzero(inside)
    indirect = functools.reduce(operator.or_, points.indirect, 0)
    marks = len(points.numerals) or 1
    for name, var in syms.items():
        axis, bit = axes[name], points.bit[name]
        if not complete:
            break
        if not indirect & bit:
            # a Real axis must keep a point strictly between consecutive numerals
            complete = var.is_int() or len(axis) == 2 * marks + 1
            continue
        own = [j for j in range(h) if points.deps[j] == bit and not points.indirect[j] & bit]
        ends = np.isin(columns[name], [axis[0], axis[-1]])
        complete = var.is_int() and isinstance(axis, range) and bool(own) and \
            not truth[np.ix_(ends, own)].all(axis=1).any()
    return found, complete


def _maxsmt(z3, syms, hard, terms, i1, i2, cells, timeout_ms, name):
    """One pair's MaxSMT: (truth value of each of its conditions, by index into ``terms``;
    branches satisfied; a witness assignment of the arguments)."""
    used = sorted(set(i1) | set(i2))
    if cells is not None:
        matrix, witnesses = cells
        if not witnesses:
            raise PrivetError(f"z3 found no arguments for {name!r} (the argument ranges "
                              "admit no value).")
        score = np.count_nonzero(matrix[:, i1] != matrix[:, i2], axis=1)
        best = int(np.argmax(score))  # the first of the ties, in lexicographic order
        # the whole cell: pairs with the same best cell share its centering
        return dict(enumerate(matrix[best].tolist())), int(score[best]), witnesses[best]
    opt = z3.Optimize()
    opt.set("timeout", int(timeout_ms))
    for h in hard:
        opt.add(h)
    diverge = [z3.Xor(terms[a], terms[b]) for a, b in zip(i1, i2)]
    for d in diverge:
        opt.add_soft(d, 1)
    if opt.check() != z3.sat:
        raise PrivetError(f"z3 found no arguments for {name!r} (result: unknown).")
    model = opt.model()
    satisfied = sum(bool(z3.is_true(model.eval(d, model_completion=True))) for d in diverge)
    truth = {j: bool(z3.is_true(model.eval(terms[j], model_completion=True))) for j in used}
    return truth, satisfied, {n: model.eval(v, model_completion=True) for n, v in syms.items()}


def _center(z3, syms, hard, terms: Sequence, ite: Sequence[bool], truths: Sequence[tuple],
            timeout_ms, margins: dict) -> dict | None:
    """Maximize the slack of every recorded comparison, keeping its truth value: ``truths``
    holds (index into ``terms``, truth value) pairs; ``ite[j]`` tells whether ``terms[j]``
    holds an if-then-else."""
    slack = z3.Real("__slack")
    opt = z3.Optimize()
    opt.set("timeout", int(timeout_ms))
    for h in hard:
        opt.add(h)
    opt.add(slack >= 0, slack <= 1e6)
    used = False
    ctx, handle = opt.ctx.ref(), opt.optimize
    for j, truth in truths:
        key = (j, truth)
        if key not in margins:  # a condition's margin atom is the same in every pair
            c = terms[j]
            atom = None if ite[j] else _margin_atom(z3, c, slack, truth)
            margins[key] = (atom is not None,
                            atom if atom is not None else c if truth else z3.Not(c))
        margin, constraint = margins[key]
        # what Optimize.add does for a Boolean term, without its sort checks
        z3.Z3_optimize_assert(ctx, handle, constraint.as_ast())
        used |= margin
    if not used:
        return None
    opt.maximize(slack)
    if opt.check() != z3.sat:
        return None
    m = opt.model()
    return {name: m.eval(var, model_completion=True) for name, var in syms.items()}


def _margin_atom(z3, c, slack, truth):
    """``lhs - rhs >= slack`` (or ``<= -slack``) for a comparison atom or its negation (z3's
    simplifier writes ``a > b`` as ``Not(a <= b)``); None otherwise, and for a comparison
    of if-then-else terms (a count of other branches, say): its difference jumps with those
    branches, so it measures no distance in the arguments and would only cap the slack (the
    caller leaves those out)."""
    if z3.is_not(c):
        return _margin_atom(z3, c.arg(0), slack, not truth)
    if not z3.is_app(c) or c.num_args() != 2:
        return None
    k = c.decl().kind()
    lhs, rhs = c.arg(0), c.arg(1)
    if not (z3.is_arith(lhs) and z3.is_arith(rhs)):
        return None
    diff = z3.ToReal(lhs) - z3.ToReal(rhs) if (lhs.is_int() and rhs.is_int()) else lhs - rhs
    if k in (z3.Z3_OP_GE, z3.Z3_OP_GT):
        return diff >= slack if truth else diff <= -slack
    if k in (z3.Z3_OP_LE, z3.Z3_OP_LT):
        return diff <= -slack if truth else diff >= slack
    return None


def _z3_number(val: Any, default: Any) -> Any:
    z3 = _z3()
    if isinstance(val, (int, Fraction)):  # a witness of :func:`_evaluated_cells`
        val = z3.RealVal(val) if isinstance(val, Fraction) else z3.IntVal(val)
    if z3.is_int_value(val):
        return int(val.as_long())
    if z3.is_rational_value(val):
        f = float(val.numerator_as_long()) / float(val.denominator_as_long())
        return int(round(f)) if isinstance(default, (int, np.integer)) else f
    if z3.is_algebraic_value(val):
        return float(val.approx(12).as_fraction())
    return default


def grid_args(mech: Mechanism, fixed: Mapping[str, Any], max_points: int = 9) -> list[dict]:
    """A small grid over ``mech.arg_ranges`` of the non-noise arguments (fallback path)."""
    names = [n for n in symbolic_arg_names(mech) if n in mech.arg_ranges]
    grid: list[dict] = [dict(fixed)]
    if not names:
        return grid
    per = max(2, int(round(max_points ** (1.0 / len(names)))))
    for name in names:
        vals = _range_values(mech.arg_ranges[name], mech.args[name], k=per)
        grid = [dict(g, **{name: v}) for g in grid for v in vals]
    return grid[:max_points] if len(grid) > max_points else grid


def describe_args(args: Mapping[str, Any], keys: Sequence[str] | None = None) -> str:
    keys = list(keys) if keys is not None else [k for k in args if k != "epsilon"]
    return ", ".join(f"{k}={args[k]:g}" if _numeric_arg(args[k]) else f"{k}={args[k]!r}"
                     for k in keys if k in args)


__all__ = ["ArgPlan", "SymbolicOps", "Trace", "describe_args", "grid_args",
           "least_noise_args", "maxsmt_args", "maxsmt_pairs", "run_trace", "symbolic_arg_names",
           "zero_noise_output"]
