"""INFERENCE, ExactDP and ExactAcc (Algorithms 1-3 of the WMC paper) and the hockey-stick delta.

A *target* is either a native privet :class:`~privet.core.mechanism.Mechanism` with finite
discrete noise (inference by the foundation's ``Enumerate`` interpreter, one enumeration per
input) or a BDD-language :class:`~privet.exact.bdd.Program` (inference by weighted model
counting on one compiled BDD, inputs conditioned per query).

Exhaustive sets are the default: every input of the domain grid, every ordered neighbor
pair (x, x'), every output y (Sec. III-B). Restricted privacy sets (Def. 4) are lists of
triples (x, x', y); restricted accuracy sets (Def. 5) are lists of inputs.

Exactness: with ``fractions=True`` every probability is exact (Fractions for Enumerate,
integers over one common denominator for the BDD). The maximum likelihood ratio is first
located with float logarithms of those exact values (correctly rounded, so every triple
whose exact ratio could be the maximum lies within a relative 1e-9 of the float maximum),
then decided exactly among those candidates (grouped by their exact value).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.claims import exp_below
from ..core.errors import (
    GridTooLargeError,
    InputError,
    NeighborError,
    NotEnumerableError,
    ParameterError,
    PrivetError,
    advice,
)
from ..core.mechanism import Mechanism
from ..core.neighbors import TOL, Neighbors
from ..core.noise import DEFAULT_ENUMERATION_CAP, Enumerate
from ..core.randomness import check_noise_only
from ..core.safe import power_count, power_text
from .bdd import Compiled, Program

LOG_TOL = 1e-9           # relative tolerance of the float screen before exact comparison
DEFAULT_INPUT_CAP = 1 << 16
PAIR_CHUNK_ENTRIES = 1 << 20
BDD_CHUNK_ENTRIES = 1 << 18
TABLE_CAP = 1 << 26        # dense |X| x |Y| entries of an exhaustive inference table


# ------------------------------------------------------------------------------------------
# Targets
# ------------------------------------------------------------------------------------------

@dataclass
class Target:
    """A mechanism or program with the backend that answers its inference queries."""

    obj: Mechanism | Program
    backend: str                    # enumerate | counting | bdd | bdd-fixed
    exact: bool
    args: dict
    cap: int
    compiled: Compiled | None = None
    length: int | None = None
    compile_seconds: float = 0.0
    solver_runs: int = 0
    choice: str = ""                # why this backend (auto: the cost comparison)
    counted: Any = None             # backend "counting": a privet.exact.counting.Counted
    _dists: dict = field(default_factory=dict)
    _enum: Enumerate | None = None

    @property
    def name(self) -> str:
        return self.obj.name

    @property
    def neighbors(self) -> Neighbors:
        return self.obj.neighbors

    @property
    def claimed_epsilon(self) -> float | None:
        return self.obj.epsilon

    def bdd_size(self) -> int | None:
        return None if self.compiled is None else self.compiled.size

    # -- one input's whole distribution ------------------------------------------------------
    def distribution(self, x: tuple) -> dict:
        """``{output key: probability}`` of input ``x`` (cached)."""
        if x in self._dists:
            return self._dists[x]
        if self.backend == "enumerate":
            mech = self.obj
            assert isinstance(mech, Mechanism)
            try:
                if self._enum is None:
                    self._enum = Enumerate(exact=self.exact, cap=self.cap)
                d = mech.distribution(np.asarray(x), self.args, exact=self.exact, cap=self.cap,
                                      grid=self._enum)
            except NotEnumerableError as err:
                raise NotEnumerableError(
                    f"exact inference needs finite discrete noise, but mechanism {mech.name!r} "
                    f"has {err}"
                ) from None
            except GridTooLargeError as err:
                raise err.with_prefix(f"mechanism {mech.name!r}: ") from None
        elif self.backend == "counting":
            d = self.counted.distribution(x)
        elif self.backend == "bdd-fixed":
            prog = self.obj
            assert isinstance(prog, Program)
            c = prog.compile(self.args, exact=self.exact, x=x)
            self.compiled = c
            d = c.distribution(x)
        else:
            assert self.compiled is not None
            d = self.compiled.distribution(x)
        self.solver_runs += 1
        out = d.as_dict()
        out = {(k if not isinstance(k, tuple) or len(k) != 1 else k[0]): v
               for k, v in out.items()}
        self._dists[x] = out
        return out


def _check_calibration(mech: Mechanism, args: Mapping[str, Any] | None) -> None:
    """One sentence when the mechanism's code needs an ε (its noise is calibrated to it) that
    neither its claim nor ``args`` gives (the compiler otherwise fails on the missing
    argument)."""
    import inspect

    if mech.epsilon is not None or "epsilon" in (args or {}) or "epsilon" in mech.args:
        return
    try:
        param = inspect.signature(mech.fn).parameters.get("epsilon")
    except (TypeError, ValueError):
        return
    if param is not None and param.default is inspect.Parameter.empty:
        raise ParameterError(
            f"mechanism {mech.name!r} claims no ε but its code takes one to calibrate its "
            "noise; declare it (@privet.mechanism(epsilon=...)) or "
            + advice("pass args={'epsilon': ...}", "give it a default in the file") + ".")


def make_target(obj: Any, backend: str = "auto", fractions: bool = False,
                args: Mapping[str, Any] | None = None,
                cap: int = DEFAULT_ENUMERATION_CAP, length: int | None = None,
                n_inputs: int | None = None) -> Target:
    """Resolve ``obj`` (Mechanism or Program) and ``backend`` into a :class:`Target`.

    A mechanism runs on Enumerate or, compiled by the Compile interpreter
    (:mod:`privet.exact.compile`), on the BDD backend; "auto" picks the cheaper for
    ``n_inputs`` inputs (:func:`privet.exact.backend.choose_backend`) and records why in
    ``Target.choice``.
    """
    if backend not in ("auto", "enumerate", "bdd", "bdd-fixed"):
        raise ParameterError(f"unknown backend {backend!r}; use auto, enumerate, bdd or "
                             "bdd-fixed.")
    if isinstance(obj, Program):
        if backend == "enumerate":
            backend = "bdd-fixed"
        elif backend == "auto":
            backend = "bdd"
        t = Target(obj, backend, fractions, dict(args or {}), cap, length=length)
        if backend == "bdd":
            start = time.perf_counter()
            t.compiled = obj.compile(args, exact=fractions)
            t.compile_seconds = time.perf_counter() - start
        return t
    if isinstance(obj, Mechanism):
        obj.require("enumerate", "privet.exact")
        _check_calibration(obj, args)
        check_noise_only(obj, None, args, length)
        resolved = obj.resolve_args(args) if args else dict(obj.args)
        if is_add_remove(obj):  # two input lengths: the BDD is compiled for one
            if backend in ("bdd", "bdd-fixed"):
                raise InputError(
                    f"the BDD backends compile {obj.name!r} for one input length, and its "
                    "add/remove neighbors compare two; use "
                    + advice("backend='enumerate' (or 'auto')", "--backend enumerate (or "
                             "auto)") + ".")
            return Target(obj, "enumerate", fractions, dict(resolved), cap, length=length,
                          choice="enumerate (add/remove neighbors: inputs of two lengths)")
        if backend != "enumerate":
            from .backend import choose_backend

            n = length if length is not None else obj.domain.length
            if isinstance(n, int):
                count = n_inputs if n_inputs is not None else _domain_count(obj, n)
                choice = choose_backend(obj, backend=backend, fractions=fractions, args=args,
                                        length=n, n_inputs=count, cap=cap)
                if choice.backend != "enumerate":
                    assert choice.program is not None
                    t = Target(choice.program, choice.backend, fractions, {}, cap,
                               compiled=choice.compiled, length=n,
                               compile_seconds=choice.compile_seconds, choice=choice.reason,
                               counted=choice.counted)
                    return t
                return Target(obj, "enumerate", fractions, dict(resolved), cap, length=length,
                              choice=choice.reason)
            if backend != "auto":
                raise InputError(f"the BDD backend needs the input length of {obj.name!r}: "
                                 "give " + advice("length=n", "--length N") + ".")
        return Target(obj, "enumerate", fractions, dict(resolved), cap, length=length,
                      choice="enumerate (asked for)" if backend == "enumerate" else "")
    raise PrivetError(f"privet.exact needs a privet mechanism or a BDD program, got {obj!r}.")


def _domain_count(mech: Mechanism, n: int) -> int:
    dom = mech.domain
    if not (dom.integer and math.isfinite(dom.low) and math.isfinite(dom.high)):
        return 1
    return int(dom.high - dom.low + 1) ** n


# ------------------------------------------------------------------------------------------
# Input domains and neighbor pairs
# ------------------------------------------------------------------------------------------

def require_discrete_noise(mech: Mechanism, length: int | None,
                            args: Mapping[str, Any] | None) -> None:
    """Say first when the noise is continuous: no input domain or length would help then
    (one probe run of the mechanism lists its draws, as the backend choice does)."""
    from .backend import grid_size

    dom = mech.domain
    n = length if isinstance(length, int) else (
        dom.length if isinstance(dom.length, int) else
        (dom.length[0] if isinstance(dom.length, tuple) else 1))
    try:
        grid_size(mech, max(int(n), 1), args)
    except NotEnumerableError as err:
        raise NotEnumerableError(
            f"mechanism {mech.name!r} draws noise that exact inference cannot enumerate "
            f"({str(err).rstrip('.')}): exact and pufferfish need discrete noise with "
            "finitely many outcomes; test it with "
            + advice("privet.detect or privet.search", "privet detect or privet search")
            + " instead.") from None
    except PrivetError:
        pass  # any other problem is reported where it arises, with its own sentence


ADD_REMOVE = ("add/remove neighbors compare inputs of two lengths, and a BDD program is "
              "compiled for one; check the mechanism written against the noise API (privet "
              "exact enumerates its lengths L and L + 1) or with privet search.")


def is_add_remove(target: Any) -> bool:
    """Whether ``target``'s neighbors add or remove one entry (inputs of two lengths)."""
    return getattr(getattr(target, "neighbors", None), "kind", None) == "add_remove"


def row(x: Any) -> tuple:
    """One input as a tuple: a row of a 2-D grid, or a tuple of a grid of two lengths."""
    return tuple(np.asarray(x).tolist())


def _rows(rows: Sequence[tuple]) -> np.ndarray:
    """Inputs as a grid: a 2-D array when they share a length, else a 1-D object array of
    tuples (add/remove neighbors: lengths L and L + 1)."""
    if len({len(r) for r in rows}) <= 1:
        return np.asarray(rows)
    out = np.empty(len(rows), dtype=object)
    for i, r in enumerate(rows):  # one by one: NumPy would read equal tuples as a 2-D array
        out[i] = tuple(r)
    return out


def check_domain_size(name: str, values: int, length: int, input_cap: int) -> None:
    """Raise :class:`GridTooLargeError` when a whole domain of ``values`` per entry at
    ``length`` has more than ``input_cap`` inputs (every backend refuses it: before any
    compile, which on [0, 10^9] ran for minutes first)."""
    if power_count(values, length) > input_cap:
        raise GridTooLargeError(
            f"the input domain of {name!r} has {power_text(values, length)} "
            f"inputs, above the cap of {input_cap:,}; "
            + advice("restrict it with inputs=/pairs= (e.g. the symmetry sets of "
                     "privet.exact.sets) or raise input_cap",
                     "check a shorter length (--length N), given inputs (--inputs) or the "
                     "randomized-response set (--set rr)") + "."
        )


def input_grid(target: Target, inputs: Iterable | None = None,
               input_cap: int = DEFAULT_INPUT_CAP, both_lengths: bool = False) -> np.ndarray:
    """The inputs to enumerate: the user's list, or the mechanism's whole integer domain at
    its length L (``both_lengths``: at L and at L + 1, for add/remove neighbors; a 1-D
    object array of tuples, L's inputs first)."""
    if inputs is not None:
        rows = [tuple(np.asarray(x).ravel().tolist()) for x in inputs]
        if not rows:
            raise InputError("the list of inputs is empty.")
        if len({len(r) for r in rows}) != 1 and not is_add_remove(target):
            raise InputError("all inputs must have the same length.")
        for r in rows:
            _check_input(target, r)
        return _rows(rows)
    values, length = grid_axes(target)
    lengths = (length, length + 1) if both_lengths else (length,)
    if both_lengths:
        check_two_lengths(target.obj, len(values), length, input_cap)
    else:
        check_domain_size(target.obj.name, len(values), length, input_cap)
    grids = []
    for n in lengths:
        # every vector over ``values``, last coordinate fastest (itertools.product's order)
        idx = np.indices((len(values),) * n, dtype=np.int64).reshape(n, -1).T
        grids.append((idx + values.start).reshape(-1, n))
    if not both_lengths:
        return grids[0]
    return _rows([tuple(r) for g in grids for r in g.tolist()])


def check_two_lengths(obj: Any, values: int, length: int, input_cap: int) -> None:
    """Add/remove neighbors on a whole domain: length L + 1 is in the domain's range, and
    the inputs of lengths L and L + 1 together are at most ``input_cap``."""
    _check_length(obj, length + 1, "add/remove neighbors compare length L with L + 1: ")
    count = power_count(values, length) + power_count(values, length + 1)
    if count > input_cap:
        check_domain_size(obj.name, values, length + 1, input_cap)  # the longer alone
        raise GridTooLargeError(
            f"the input domain of {obj.name!r} has {int(count):,} inputs of lengths {length} "
            f"and {length + 1} together (add/remove neighbors compare the two), above the "
            f"cap of {input_cap:,}; " + advice("check a shorter length (length=n) or raise "
                                               "input_cap", "check a shorter length "
                                               "(--length N)") + ".")


def _check_length(obj: Any, length: int, why: str = "") -> None:
    """A length outside the domain's range, in one sentence."""
    dom = getattr(obj, "domain", None)
    span = getattr(dom, "length", None)
    if isinstance(span, tuple) and not span[0] <= length <= span[1]:
        raise InputError(f"{why}length {length} is outside the domain's "
                         f"{span[0]}..{span[1]}.")
    if isinstance(span, int) and span != length:
        raise InputError(f"{why}the domain of {obj.name!r} fixes the length at {span}; "
                         "add/remove neighbors need a range of lengths "
                         "(Domain(length=(low, high))).")


def grid_axes(target: Target) -> tuple[range, int]:
    """The values of one input coordinate and the input length of the whole domain grid."""
    obj = target.obj
    if isinstance(obj, Program) and is_add_remove(obj):
        raise NeighborError(ADD_REMOVE)
    if isinstance(obj, Program):
        length, values = obj.length, range(obj.low, obj.high + 1)
    else:
        dom = obj.domain
        length = target.length if target.length is not None else dom.length
        if isinstance(dom.length, tuple) and isinstance(length, int):
            _check_length(obj, length)
        if not (dom.integer and math.isfinite(dom.low) and math.isfinite(dom.high)):
            raise InputError(
                f"mechanism {obj.name!r} takes {dom.describe()}, which cannot be enumerated: "
                "exact inference checks every input of a finite integer domain; "
                + advice("give inputs=[...], or declare an integer Domain(low=.., high=..)",
                         "give --inputs '0,1;1,1', or declare an integer Domain(low=.., "
                         "high=..) in the mechanism's file") + ".")
        if not isinstance(length, int):
            lo, hi = dom.length if isinstance(dom.length, tuple) else (1, None)
            raise InputError(
                f"mechanism {obj.name!r} takes inputs of any length "
                f"{lo}..{hi if hi is not None else '∞'}: give the length to check, "
                + advice("length=n", "--length N") + ".")
        values = range(int(dom.low), int(dom.high) + 1)
    if not isinstance(length, int) or length < 1:
        raise InputError(f"the input length must be a positive whole number, got {length!r}.")
    return values, length


def _check_input(target: Target, x: tuple) -> None:
    obj = target.obj
    if isinstance(obj, Program):
        obj.check_input(x)
    else:
        obj.domain.check(np.asarray(x))


def neighbor_pairs(neighbors: Neighbors, xs: np.ndarray, chunk: int = 256
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (i, j), i != j, of rows of ``xs`` that are neighbors (vectorized)."""
    n = len(xs)
    if neighbors.kind == "add_remove":
        return _add_remove_pairs(xs)
    X = np.asarray(xs, dtype=float)
    if neighbors.kind == "custom":
        if n * n > 4_000_000:
            raise GridTooLargeError(
                f"a custom neighbor relation needs {n * n:,} predicate calls; give pairs=."
            )
        I, J = [], []
        for i in range(n):
            for j in range(n):
                if i != j and neighbors.are_neighbors(X[i], X[j]):
                    I.append(i)
                    J.append(j)
        return np.asarray(I, dtype=np.int64), np.asarray(J, dtype=np.int64)
    fast = _integer_neighbor_pairs(neighbors, X)
    if fast is not None:
        return fast
    Is, Js = [], []
    for s in range(0, n, chunk):
        diff = np.abs(X[s:s + chunk, None, :] - X[None, :, :])
        changed = (diff > TOL).sum(axis=2)
        if neighbors.kind == "all_differ":
            ok = np.all(diff <= neighbors.delta + TOL, axis=2)
        elif neighbors.kind == "one_differs":
            ok = (changed <= 1) & np.all(diff <= neighbors.delta + TOL, axis=2)
        else:  # replace_one
            ok = changed <= 1
        ok &= changed > 0
        ii, jj = np.nonzero(ok)
        Is.append(ii + s)
        Js.append(jj)
    return np.concatenate(Is), np.concatenate(Js)


def _add_remove_pairs(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (i, j) of inputs where one is the other with one entry removed
    (both orders; a removal that gives the same shorter input counts once)."""
    rows = [row(x) for x in xs]
    pos = {r: i for i, r in enumerate(rows)}
    found = {(i, pos[r[:k] + r[k + 1:]]) for i, r in enumerate(rows) for k in range(len(r))
             if r[:k] + r[k + 1:] in pos}
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    longer, shorter = np.asarray(sorted(found), dtype=np.int64).T
    return np.concatenate([longer, shorter]), np.concatenate([shorter, longer])


def _integer_neighbor_pairs(neighbors: Neighbors, X: np.ndarray, budget: int = 60_000_000
                            ) -> tuple[np.ndarray, np.ndarray] | None:
    """Neighbor pairs of an integer grid by offsets and key lookup (None: not applicable).

    Each row gets a mixed-radix integer key; a candidate neighbor is the row plus an
    integer offset vector allowed by the relation, kept when its key is a row's key.
    """
    if X.size == 0 or not np.all(X == np.round(X)):
        return None
    Xi = X.astype(np.int64)
    n, m = Xi.shape
    lo, hi = Xi.min(axis=0), Xi.max(axis=0)
    span = hi - lo + 1
    if float(np.prod(span.astype(float))) > 2**62:
        return None
    stride = np.cumprod(np.r_[1, span[:-1]]).astype(np.int64)
    keys = (Xi - lo) @ stride
    order = np.argsort(keys)
    skeys = keys[order]
    D = int(math.floor(neighbors.delta + TOL))
    if neighbors.kind == "all_differ":
        if (2 * D + 1) ** m * n > budget:
            return None
        offs = np.array([o for o in itertools.product(range(-D, D + 1), repeat=m) if any(o)],
                        dtype=np.int64)
    else:
        rng = int(span.max()) - 1 if neighbors.kind == "replace_one" else D
        single = [(j, d) for j in range(m) for d in range(-rng, rng + 1) if d]
        if len(single) * n > budget:
            return None
        offs = np.zeros((len(single), m), dtype=np.int64)
        for r, (j, d) in enumerate(single):
            offs[r, j] = d
    if len(offs) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    Is, Js = [], []
    step = max(1, 4_000_000 // max(n * m, 1))
    for s in range(0, len(offs), step):
        off = offs[s:s + step]
        Y = Xi[:, None, :] + off[None, :, :]
        ok = np.all((Y >= lo) & (Y <= hi), axis=2)
        yk = (Y - lo) @ stride
        pos = np.searchsorted(skeys, yk)
        pos = np.minimum(pos, n - 1)
        found = ok & (skeys[pos] == yk)
        ii, oo = np.nonzero(found)
        Is.append(ii)
        Js.append(order[pos[ii, oo]])
    I = np.concatenate(Is)
    J = np.concatenate(Js)
    srt = np.lexsort((J, I))
    return I[srt], J[srt]


# ------------------------------------------------------------------------------------------
# INFERENCE (Algorithm 1)
# ------------------------------------------------------------------------------------------

@dataclass
class Table:
    """M of Algorithm 1 on a dense set X x Y: float log-probabilities and exact values.

    ``exact`` holds integers over ``denominator`` (BDD) or Fractions (denominator 1).
    """

    xs: np.ndarray
    ys: list
    logp: np.ndarray
    exact: np.ndarray | None
    denominator: int = 1
    seconds: float = 0.0
    interrupted: bool = False

    def value(self, i: int, k: int) -> Any:
        if self.exact is None:
            return float(np.exp(self.logp[i, k]))
        return _fr(self.exact[i, k]) / self.denominator


def _progress(enabled: bool, total: int, what: str):
    if not enabled:
        return contextlib.nullcontext(None)
    from rich.progress import Progress

    class _P:
        def __enter__(self):
            self.p = Progress(transient=True)
            self.p.__enter__()
            self.task = self.p.add_task(what, total=total)
            return self

        def __exit__(self, *a):
            return self.p.__exit__(*a)

        def advance(self, k=1):
            self.p.advance(self.task, k)

    return _P()


def _exact_log(v: Any) -> float:
    """log of a non-negative int or Fraction (no float underflow); -inf for 0."""
    if v == 0:
        return -math.inf
    if isinstance(v, Fraction):
        return math.log(v.numerator) - math.log(v.denominator)
    return math.log(int(v))


def _key(y: Any) -> Any:
    if isinstance(y, np.ndarray):
        y = y.tolist()
    if isinstance(y, (list, tuple)):
        return y[0] if len(y) == 1 else tuple(y)
    if isinstance(y, (np.integer, np.floating)):
        return y.item()
    return y


def inference_dense(target: Target, xs: np.ndarray, progress: bool = False) -> Table:
    """Algorithm 1 on the exhaustive inference set ``xs`` x (every output)."""
    start = time.perf_counter()
    if target.backend == "bdd" and len(target.compiled.blocks()) > 1:
        return _factored_table(target, xs, start)
    if target.backend == "bdd":
        c = target.compiled
        assert c is not None
        N, K = len(xs), c.output_count
        _check_table(N, K, target.name)
        ys = c.output_space()
        Y = np.asarray(ys, dtype=np.int64)
        logp = np.empty((N, K))
        ex = None
        if target.exact:
            ex = np.empty((N, K), dtype=object if c.denominator >= (1 << 62) else np.int64)
        rows = max(1, BDD_CHUNK_ENTRIES // max(K, 1))
        with _progress(progress, N, "inference (BDD)") as bar:
            for s in range(0, N, rows):
                xc = np.asarray(xs[s:s + rows], dtype=np.int64)
                XX = np.repeat(xc, K, axis=0)
                YY = np.tile(Y, (len(xc), 1))
                lp, sc = c.probs(XX, YY)
                logp[s:s + len(xc)] = lp.reshape(len(xc), K)
                if ex is not None:
                    ex[s:s + len(xc)] = np.asarray(sc).reshape(len(xc), K)
                if bar is not None:
                    bar.advance(len(xc))
        target.solver_runs += 1
        keys = [_key(c.decode(y)) for y in ys]
        if ex is not None:
            # the float screen is computed from the exact values (correctly rounded logs)
            logp = _logs_of_exact(ex) - math.log(c.denominator)
        return Table(np.asarray(xs), keys, logp, ex, c.denominator if ex is not None else 1,
                     time.perf_counter() - start)
    # each distribution becomes (output columns, values) as it arrives, so what is left after
    # the loop -- also after Ctrl-C -- is one vectorized assignment per input
    col: dict = {}
    rows: list[tuple[np.ndarray, Any]] = []
    interrupted = False
    with _progress(progress, len(xs), f"inference ({target.backend})") as bar:
        try:
            for x in xs:
                d = target.distribution(row(x))
                cols = np.fromiter((col.setdefault(k, len(col)) for k in d), dtype=np.int64,
                                   count=len(d))
                vals = list(d.values()) if target.exact else \
                    np.fromiter(d.values(), dtype=float, count=len(d))
                rows.append((cols, vals))
                if bar is not None:
                    bar.advance()
        except KeyboardInterrupt:  # keep the inputs done so far
            interrupted = True
            if not rows:
                raise
            xs = xs[:len(rows)]
    keys = sorted(col, key=_sort_key)
    order = np.empty(len(keys), dtype=np.int64)  # arrival column -> sorted column
    order[np.fromiter((col[k] for k in keys), dtype=np.int64, count=len(keys))] = \
        np.arange(len(keys))
    N, K = len(xs), len(keys)
    _check_table(N, K, target.name)
    logp = np.full((N, K), -np.inf)
    ex = np.full((N, K), Fraction(0), dtype=object) if target.exact else None
    for i, (cols, vals) in enumerate(rows):
        cols = order[cols]
        if ex is not None:
            ex[i, cols] = vals
            logp[i, cols] = [_exact_log(p) for p in vals]
        else:
            with np.errstate(divide="ignore"):
                logp[i, cols] = np.log(vals)
    return Table(np.asarray(xs), keys, logp, ex, 1, time.perf_counter() - start, interrupted)


def _factored_table(target: Target, xs: np.ndarray, start: float) -> Table:
    """Algorithm 1 over xs x every output when the outputs split into independent blocks
    (:meth:`~privet.exact.bdd.Compiled.blocks`): each block's table over its own inputs and
    outputs, then ``log P(y | x) = sum_B log P_B(y_B | x_B)`` (exact: the product of the
    blocks' numerators over the product of their denominators)."""
    c = target.compiled
    assert c is not None
    xs = np.asarray(xs, dtype=np.int64)
    N, K = len(xs), c.output_count
    _check_table(N, K, target.name)
    ys = c.output_space()
    Y = np.asarray(ys, dtype=np.int64).reshape(K, len(c.components))
    blocks = c.blocks()
    den_total = math.prod(d for *_, d in blocks)
    big = den_total >= (1 << 62)
    logp = np.zeros((N, K))
    ex = None
    if target.exact:
        ex = np.ones((N, K), dtype=object if big else np.int64)
    rows = max(1, (1 << 22) // max(K, 1))
    for comps, coords, sub, den in blocks:
        if coords:
            _, first, inv = np.unique(xs[:, coords], axis=0, return_index=True,
                                      return_inverse=True)
            inv = inv.ravel()
            rep = xs[first]
        else:
            rep, inv = xs[:1], np.zeros(N, dtype=np.int64)
        YB = np.asarray(sub.output_space(), dtype=np.int64).reshape(-1, len(comps))
        KB = len(YB)
        lp, sc = sub.probs(np.repeat(rep, KB, axis=0), np.tile(YB, (len(rep), 1)))
        TB = lp.reshape(len(rep), KB)
        kidx = np.zeros(K, dtype=np.int64)
        for k in comps:
            comp = c.components[k]
            kidx = kidx * (comp.hi - comp.lo + 1) + (Y[:, k] - comp.lo)
        EB = None
        if ex is not None:
            scale = sub.denominator // den
            EB = (np.asarray(sc, dtype=object) // scale).reshape(len(rep), KB)
            if not big:
                EB = EB.astype(np.int64)
        for s0 in range(0, N, rows):
            sl = slice(s0, s0 + rows)
            with np.errstate(invalid="ignore"):
                logp[sl] += TB[inv[sl]][:, kidx]
            if ex is not None:
                ex[sl] *= EB[inv[sl]][:, kidx]
    target.solver_runs += len(blocks)
    keys = [_key(c.decode(y)) for y in ys]
    if ex is not None:
        logp = _logs_of_exact(ex) - math.log(den_total)
    return Table(xs, keys, logp, ex, den_total if ex is not None else 1,
                 time.perf_counter() - start)


def _check_table(N: int, K: int, name: str) -> None:
    if N * K > TABLE_CAP:
        raise GridTooLargeError(
            f"the exhaustive inference set of {name!r} has {N:,} inputs x {K:,} outputs = "
            f"{N * K:,} probabilities, above the cap of {TABLE_CAP:,}; use a restricted "
            "privacy set (pairs='rr' or pairs=[...]) or fewer inputs."
        )


def _sort_key(k: Any) -> tuple:
    return (0, k) if not isinstance(k, tuple) else (1, k)


def _logs_of_exact(ex: np.ndarray) -> np.ndarray:
    if ex.dtype != object:
        with np.errstate(divide="ignore"):
            return np.log(ex.astype(float))
    return np.frompyfunc(_exact_log, 1, 1)(ex).astype(float)


def inference_points(target: Target, xs: Sequence[tuple], ys: Sequence[Any]
                     ) -> tuple[np.ndarray, list | None]:
    """Algorithm 1 on an explicit inference set {(x_i, y_i)}: log-probs and exact values."""
    if target.backend == "bdd":
        c = target.compiled
        assert c is not None
        Y = np.asarray([np.atleast_1d(np.asarray(y)).tolist() for y in ys], dtype=np.int64)
        X = np.asarray(xs, dtype=np.int64)
        lp, sc = c.probs(X, Y)
        target.solver_runs += 1
        if sc is None:
            return lp, None
        vals = [Fraction(int(v), c.denominator) for v in sc]
        return np.asarray([_exact_log(v) for v in vals]), vals
    lps, vals = [], []
    for x, y in zip(xs, ys):
        d = target.distribution(tuple(x))
        p = d.get(_key(y), Fraction(0) if target.exact else 0.0)
        vals.append(p)
        lps.append(_exact_log(p) if target.exact else (math.log(p) if p > 0 else -math.inf))
    return np.asarray(lps, dtype=float), (vals if target.exact else None)


# ------------------------------------------------------------------------------------------
# ExactDP (Algorithm 2)
# ------------------------------------------------------------------------------------------

@dataclass
class DPResult:
    e_epsilon: Any                  # float or Fraction (math.inf when unbounded)
    witness: tuple                  # (x, x', y)
    probabilities: tuple            # (P(x)=y, P(x')=y)
    triples: int
    pairs: int
    interrupted: bool = False


def _log_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log(P/P'): IEEE gives -inf - -inf = nan (0/0: skipped), x - -inf = inf, -inf - x = -inf."""
    with np.errstate(invalid="ignore"):
        return a - b


def _ratio(a: Any, b: Any) -> Any:
    if b == 0:
        return math.inf if a != 0 else None
    return _fr(a) / _fr(b)


def _fr(v: Any) -> Fraction:
    return Fraction(int(v)) if isinstance(v, (int, np.integer)) else Fraction(v)


def exact_dp_dense(table: Table, I: np.ndarray, J: np.ndarray, progress: bool = False
                   ) -> DPResult:
    """Algorithm 2 over the exhaustive privacy set: every pair (I[p], J[p]) x every output."""
    if len(I) == 0:
        raise NeighborError("no two inputs of the checked domain are neighbors.")
    K = table.logp.shape[1]
    step = max(1, PAIR_CHUNK_ENTRIES // max(K, 1))
    best_f = -np.inf
    best_exact: Any = None
    loc: tuple[int, int, int] | None = None     # (i, j, k)
    if table.exact is not None:
        # exact values -> small integer codes (equal values, equal codes)
        if table.exact.dtype != object:
            uvals, inv = np.unique(table.exact.ravel(), return_inverse=True)
        else:
            lookup: dict = {}
            inv = np.fromiter((lookup.setdefault(v, len(lookup))
                               for v in table.exact.ravel().tolist()), dtype=np.int64,
                              count=table.exact.size)
            uvals = np.empty(len(lookup), dtype=object)
            for v, c in lookup.items():
                uvals[c] = v
        codes = inv.reshape(table.exact.shape).astype(np.int64)
        n_codes = np.int64(len(uvals))
    if table.interrupted:
        keep = (I < len(table.xs)) & (J < len(table.xs))
        I, J = I[keep], J[keep]
    interrupted = table.interrupted
    done = 0
    with _progress(progress, len(I), "ExactDP") as bar, _interruptible() as stop:
        for s in range(0, len(I), step):
            if stop.requested:
                interrupted = True
                break
            done = min(len(I), s + step)
            ii, jj = I[s:s + step], J[s:s + step]
            R = _log_ratio(table.logp[ii], table.logp[jj])
            if bar is not None:
                bar.advance(len(ii))
            if np.all(np.isnan(R)):
                continue
            m = np.nanmax(R)
            if table.exact is None:
                if m > best_f:
                    best_f = m
                    p, k = np.unravel_index(np.nanargmax(R), R.shape)
                    loc = (int(ii[p]), int(jj[p]), int(k))
                continue
            if m < best_f - LOG_TOL:
                continue
            cand_p, cand_k = np.nonzero(R >= m - LOG_TOL)
            # group candidates by their exact (numerator, denominator) values via value codes
            keys = codes[ii[cand_p], cand_k] * n_codes + codes[jj[cand_p], cand_k]
            _, first = np.unique(keys, return_index=True)
            items = [(uvals[codes[ii[cand_p[f]], cand_k[f]]],
                      uvals[codes[jj[cand_p[f]], cand_k[f]]], int(f)) for f in first]
            for a, b, t in items:
                r = _ratio(a, b)
                if r is None:
                    continue
                if best_exact is None or r > best_exact:
                    best_exact = r
                    loc = (int(ii[cand_p[t]]), int(jj[cand_p[t]]), int(cand_k[t]))
            best_f = max(best_f, m)
    if loc is None:
        raise PrivetError("no output has positive probability on any checked pair.")
    i, j, k = loc
    if table.exact is None:
        e: Any = math.exp(best_f) if np.isfinite(best_f) else math.inf
    else:
        e = best_exact
    return DPResult(e, (_plain(table.xs[i]), _plain(table.xs[j]), table.ys[k]),
                    (table.value(i, k), table.value(j, k)), done * K, done, interrupted)


class _Stop:
    requested = False


@contextlib.contextmanager
def _interruptible():
    """Turn Ctrl-C into a flag the loop checks, so it stops keeping what it has."""
    import signal
    import threading

    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame):
        stop.requested = True

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, old)


def exact_dp_triples(target: Target, triples: Sequence[tuple]) -> DPResult:
    """Algorithm 2 over a restricted privacy set C of triples (x, x', y) (Def. 4)."""
    if not triples:
        raise InputError("the privacy set is empty.")
    from .sets import norm_input

    xs = [norm_input(t[0]) for t in triples]
    x2s = [norm_input(t[1]) for t in triples]
    ys = [_key(t[2]) for t in triples]
    for a, b in dict.fromkeys(zip(xs, x2s)):
        target.neighbors.check(a, b)
    # the inference set of Theorem 6: every (x, y) and (x', y) the triples need
    needed = list(dict.fromkeys(list(zip(xs, ys)) + list(zip(x2s, ys))))
    lp, vals = inference_points(target, [p[0] for p in needed], [p[1] for p in needed])
    pos = {p: i for i, p in enumerate(needed)}
    a = np.asarray([lp[pos[(x, y)]] for x, y in zip(xs, ys)])
    b = np.asarray([lp[pos[(x, y)]] for x, y in zip(x2s, ys)])
    R = _log_ratio(a, b)
    if np.all(np.isnan(R)):
        raise PrivetError("no output of the privacy set has positive probability.")
    m = np.nanmax(R)
    if vals is None:
        t = int(np.nanargmax(R))
        e: Any = math.exp(m) if np.isfinite(m) else math.inf
        pa, pb = math.exp(a[t]), math.exp(b[t])
    else:
        best, t = None, -1
        for c in np.nonzero(R >= m - LOG_TOL)[0]:
            r = _ratio(vals[pos[(xs[c], ys[c])]], vals[pos[(x2s[c], ys[c])]])
            if r is not None and (best is None or r > best):
                best, t = r, int(c)
        e = best
        pa, pb = vals[pos[(xs[t], ys[t])]], vals[pos[(x2s[t], ys[t])]]
    return DPResult(e, (list(xs[t]), list(x2s[t]), ys[t]), (pa, pb), len(triples),
                    len(set(zip(xs, x2s))))


# ------------------------------------------------------------------------------------------
# ExactAcc (Algorithm 3)
# ------------------------------------------------------------------------------------------

@dataclass
class AccResult:
    one_minus_beta: Any
    worst: list
    ranked: list                    # [(x, 1 - beta_x)] ascending
    inference_size: int


def _window(ys_all: Sequence[Any], v: Any, alpha: float) -> list:
    out = []
    for y in ys_all:
        d = np.max(np.abs(np.atleast_1d(np.asarray(y, dtype=float)) -
                          np.atleast_1d(np.asarray(v, dtype=float))))
        if d <= alpha + 1e-12:
            out.append(y)
    return out


def exact_acc(target: Target, alpha: float, inputs: np.ndarray, truth: Callable,
              keep: int = 5) -> AccResult:
    """Algorithm 3: min over the accuracy set of sum_{|y - V_x| <= alpha} Pr(A(x) = y).

    ``ranked`` lists every input, except on the counting backend, where it lists the
    ``keep`` worst (each exact; the others are only screened in floating point)."""
    if alpha < 0:
        raise ParameterError(f"alpha must be >= 0, got {alpha}.")
    xs = [tuple(np.asarray(x).ravel().tolist()) for x in inputs]
    zero: Any = Fraction(0) if target.exact else 0.0
    if target.backend == "counting":
        windows = []
        for x in xs:
            v = float(np.asarray(truth(np.asarray(x))).ravel()[0])
            windows.append((v - alpha - 1e-12, v + alpha + 1e-12))
        best = target.counted.window_masses(xs, windows, keep)
        ranked = [(list(xs[i]), val) for i, val in best]
        size = sum(math.floor(h) - math.ceil(lo) + 1 for lo, h in windows)
        target.solver_runs += len(xs)
        return AccResult(ranked[0][1], ranked[0][0], ranked, size)
    if target.backend == "bdd":
        c = target.compiled
        assert c is not None
        space = [_key(c.decode(y)) for y in c.output_space()]
        pts_x, pts_y, owner = [], [], []
        for i, x in enumerate(xs):
            for y in _window(space, truth(np.asarray(x)), alpha):   # Eq. (11) in general
                pts_x.append(x)
                pts_y.append(y)
                owner.append(i)
        sums = [zero] * len(xs)
        if pts_x:
            lp, vals = inference_points(target, pts_x, pts_y)
            for t, i in enumerate(owner):
                sums[i] = sums[i] + (vals[t] if vals is not None else math.exp(lp[t]))
        size = len(pts_x)
    else:
        sums, size = [], 0
        for x in xs:
            d = target.distribution(x)
            win = _window(list(d), truth(np.asarray(x)), alpha)
            size += len(win)
            sums.append(sum((d[y] for y in win), zero))
    order = sorted(range(len(xs)), key=lambda i: (sums[i], i))
    ranked = [(list(xs[i]), sums[i]) for i in order]
    return AccResult(ranked[0][1], ranked[0][0], ranked, size)


# ------------------------------------------------------------------------------------------
# (epsilon, delta): hockey-stick divergence
# ------------------------------------------------------------------------------------------

def hockey_stick_dense(table: Table, I: np.ndarray, J: np.ndarray, epsilon: float
                       ) -> tuple[Any, int, int]:
    """max over pairs of sum_y max(0, P_x(y) - e^eps P_x'(y)); exact when the table is.

    With exact probabilities e^eps is irrational, so the exact delta is taken with e^eps
    rounded down to a rational at 1e-15 (:func:`~privet.core.claims.exp_below`: an upper
    bound on the true delta by at most 1e-15 * sum P_x'(y) <= 1e-15).
    """
    e = math.exp(epsilon)
    P = np.exp(table.logp)
    K = P.shape[1]
    step = max(1, PAIR_CHUNK_ENTRIES // max(K, 1))
    best, bi = -1.0, 0
    for s in range(0, len(I), step):
        ii, jj = I[s:s + step], J[s:s + step]
        h = np.maximum(P[ii] - e * P[jj], 0.0).sum(axis=1)
        t = int(np.argmax(h))
        if h[t] > best:
            best, bi = float(h[t]), s + t
    if table.exact is None:
        return best, int(I[bi]), int(J[bi])
    ee = min(Fraction(e).limit_denominator(10**15), exp_below(epsilon))
    i, j = int(I[bi]), int(J[bi])
    # exact value at the float arg-max and at every pair within float error of it
    cands = [bi]
    for s in range(0, len(I), step):
        ii, jj = I[s:s + step], J[s:s + step]
        h = np.maximum(P[ii] - e * P[jj], 0.0).sum(axis=1)
        cands.extend((s + np.nonzero(h >= best - 1e-9)[0]).tolist())
    bestx: Any = None
    for c in dict.fromkeys(cands):
        a, b = int(I[c]), int(J[c])
        v = sum((max(Fraction(0), _fr(table.exact[a, k]) - ee * _fr(table.exact[b, k]))
                 for k in range(K)), Fraction(0)) / table.denominator
        if bestx is None or v > bestx:
            bestx, i, j = v, a, b
    return bestx, i, j


def _plain(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


__all__ = [
    "AccResult", "DPResult", "Table", "Target", "exact_acc", "exact_dp_dense",
    "exact_dp_triples", "hockey_stick_dense", "inference_dense", "inference_points",
    "input_grid", "make_target", "neighbor_pairs",
]
