"""A small embedded probabilistic language compiled to BDDs, and weighted model counting.

This is the "bottom path" of Fig. 1 of Oakley, Holtzen & Oprea (WMC paper): a program
written like pseudocode is compiled into a weighted Boolean formula (Sec. II-C, Def. 3)
held as a binary decision diagram (``dd.cudd``), and probabilities are weighted model counts
(Eq. (4)) computed on that diagram.

The language (a program is ``fn(p, x, **args)``; ``p`` is a :class:`Builder`):

* ``p.flip(q)`` -- a Boolean that is true with probability ``q`` (a fresh weighted variable);
* ``p.discrete([p0, ..., pk], values=None)`` -- an integer equal to ``values[i]`` (default
  ``i``) with probability ``p_i`` (encoded as a chain of flips with conditional weights);
* ``p.geometric(alpha, low, high)`` -- two-sided geometric noise censored onto
  ``[low, high]`` (so ``p.clip(x + p.geometric(a, -k, k), 0, k)`` is the truncated
  geometric mechanism);
* bounded integers (:class:`Int`, two's-complement bit vectors whose width follows their
  static range, so ``+``/``-`` never overflow), comparisons ``< <= > >= == !=`` giving
  :class:`Bit`, Booleans ``& | ^ ~``, ``p.ite(c, a, b)``, ``p.clip``, ``p.min``/``p.max``;
* the program returns an integer, a Bit, or a tuple of them (the output). Python loops and
  Python ``if`` on ordinary (non-random) values simply unroll at compile time; a Python
  ``if`` on a random Bit is an error that says to use ``p.ite``.

The input ``x`` is either *symbolic* (a list of :class:`Int` over ``[low, high]`` made of
unweighted BDD variables: compile once, condition per input by restriction) or *fixed*
(plain Python ints, one compilation per input).

Compilation (:func:`compile_program`) conjoins ``y_j <-> out_j`` for fresh output variables
``y_j`` (the WBF of Def. 3), placing each ``y_j`` just below the deepest variable its bit
depends on. :class:`Compiled` then answers

* :meth:`Compiled.probs` -- ``Pr(A(x) = y)`` for a batch of assignments ``(x, y)`` in one
  vectorized bottom-up pass over the diagram (float log-space, or exact scaled integers);
* :meth:`Compiled.distribution` -- the full output distribution of one input from one
  weighted model count over the restricted diagram (a sparse, distribution-valued WMC).

CUDD uses complemented edges: ``u.low``/``u.high`` are the children of the *regular*
node and ignore ``u.negated``. Both counts carry the complement parity along edges; a
count that forgot it would not sum to 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.errors import InputError, MechanismError, NoiseError, PrivetError, UnsupportedError
from ..core.neighbors import Neighbors, all_differ
from ..core.noise import Dist, Distribution, as_fraction

try:  # dd with CUDD is an optional dependency (privet[exact])
    import dd.cudd as _cudd
except ImportError:  # pragma: no cover - exercised only without dd
    _cudd = None


def _require_dd() -> None:
    if _cudd is None:  # pragma: no cover
        raise UnsupportedError(
            "the BDD backend needs the 'dd' package with CUDD (pip install 'privet[exact]')."
        )


# ------------------------------------------------------------------------------------------
# Values of the language
# ------------------------------------------------------------------------------------------

class Bit:
    """A random Boolean: a BDD node of the builder."""

    __slots__ = ("b", "node")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, builder: Builder, node: Any):
        self.b = builder
        self.node = node

    def _other(self, o: Any) -> Any:
        if isinstance(o, Bit):
            return o.node
        if isinstance(o, (bool, np.bool_)) or (isinstance(o, (int, np.integer)) and o in (0, 1)):
            return self.b.bdd.true if o else self.b.bdd.false
        raise MechanismError(f"cannot combine a random Boolean with {o!r}.")

    def __and__(self, o):
        return Bit(self.b, self.node & self._other(o))

    __rand__ = __and__

    def __or__(self, o):
        return Bit(self.b, self.node | self._other(o))

    __ror__ = __or__

    def __xor__(self, o):
        return Bit(self.b, self.b.bdd.apply('xor', self.node, self._other(o)))

    __rxor__ = __xor__

    def __invert__(self):
        return Bit(self.b, ~self.node)

    def __eq__(self, o):  # type: ignore[override]
        return ~(self ^ o)

    def __ne__(self, o):  # type: ignore[override]
        return self ^ o

    def __bool__(self):
        raise MechanismError(
            "a random Boolean cannot drive a Python 'if', 'and', 'or' or 'not'; use "
            "p.ite(cond, a, b), '&', '|' and '~' inside BDD programs."
        )

    def as_int(self) -> Int:
        """0/1 as a bounded integer."""
        return Int(self.b, [self.node, self.b.bdd.false], 0, 1)


def _width(lo: int, hi: int) -> int:
    """Two's-complement width that holds every integer of ``[lo, hi]``."""
    w = 1
    while not (-(1 << (w - 1)) <= lo and hi <= (1 << (w - 1)) - 1):
        w += 1
    return w


def tighten(v: Int) -> Int:
    """``v`` with its exact range over all variable assignments, and no wider than that.

    The static ranges of arithmetic are interval bounds (``x + f - 2xf`` of bits gets
    [-2, 2]); the greatest and least values the bits can take are read off the BDD, one
    conjunction per bit from the most significant down, and the bits are truncated to the
    width of the tightened range (two's complement keeps every value in range).
    """
    bdd = v.b.bdd
    bits = v.bits
    w = len(bits)

    def extreme(maximize: bool) -> int:
        c = bdd.true
        sign = bits[-1]
        t = c & (~sign if maximize else sign)
        if t != bdd.false:
            c, neg = t, not maximize
        else:
            c, neg = c & (sign if maximize else ~sign), maximize
        value = -(1 << (w - 1)) if neg else 0
        for j in range(w - 2, -1, -1):
            t = c & (bits[j] if maximize else ~bits[j])
            if t != bdd.false:
                c = t
                value += (1 << j) if maximize else 0
            else:
                c = c & (~bits[j] if maximize else bits[j])
                value += 0 if maximize else (1 << j)
        return value

    lo, hi = max(v.lo, extreme(False)), min(v.hi, extreme(True))
    if lo > hi:          # only invalid input encodings reach the static range
        lo, hi = v.lo, v.hi
    return Int(v.b, v.extend(_width(lo, hi)), lo, hi)


@dataclass
class Coded:
    """An output value given as an integer code, with the codes that stand for sentinels
    (``{code: inf}`` for ABORTED, ``{code: -inf}`` for FALSE)."""

    value: Int
    decode: dict


class Int:
    """A random bounded integer: two's-complement bits (LSB first) and a static range."""

    __slots__ = ("b", "bits", "lo", "hi")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, builder: Builder, bits: list, lo: int, hi: int):
        self.b = builder
        self.bits = list(bits)
        self.lo = int(lo)
        self.hi = int(hi)

    @property
    def width(self) -> int:
        return len(self.bits)

    def extend(self, w: int) -> list:
        if w < len(self.bits):
            return self.bits[:w]
        return self.bits + [self.bits[-1]] * (w - len(self.bits))

    # -- arithmetic ----------------------------------------------------------------------
    def __add__(self, o):
        o = self.b.lift(o)
        lo, hi = self.lo + o.lo, self.hi + o.hi
        w = _width(lo, hi)
        return Int(self.b, self.b._adder(self.extend(w), o.extend(w), False), lo, hi)

    __radd__ = __add__

    def __sub__(self, o):
        o = self.b.lift(o)
        lo, hi = self.lo - o.hi, self.hi - o.lo
        w = max(_width(lo, hi), self.width, o.width) + 1
        bits = self.b._adder(self.extend(w), [~c for c in o.extend(w)], True)
        w2 = _width(lo, hi)
        return Int(self.b, bits[:w2], lo, hi)

    def __rsub__(self, o):
        return self.b.lift(o) - self

    def __neg__(self):
        return self.b.lift(0) - self

    # -- comparisons ---------------------------------------------------------------------
    def __lt__(self, o):
        o = self.b.lift(o)
        if self.hi < o.lo:
            return self.b.true
        if self.lo >= o.hi:
            return self.b.false
        d = self - o
        return Bit(self.b, d.bits[-1])

    def __gt__(self, o):
        return self.b.lift(o) < self

    def __le__(self, o):
        return ~(self.b.lift(o) < self)

    def __ge__(self, o):
        return ~(self < o)

    def __eq__(self, o):  # type: ignore[override]
        o = self.b.lift(o)
        if self.hi < o.lo or o.hi < self.lo:
            return self.b.false
        w = max(self.width, o.width)
        node = self.b.bdd.true
        for a, c in zip(self.extend(w), o.extend(w)):
            node = node & self.b.bdd.apply('equiv', a, c)
        return Bit(self.b, node)

    def __ne__(self, o):  # type: ignore[override]
        return ~(self == o)

    def __bool__(self):
        raise MechanismError(
            "a random integer cannot drive Python control flow; use p.ite(cond, a, b)."
        )


# ------------------------------------------------------------------------------------------
# The builder: the ``p`` handed to programs
# ------------------------------------------------------------------------------------------

class Builder:
    """Creates variables and values for one compilation (see the module docstring)."""

    def __init__(self, exact: bool = False):
        _require_dd()
        self.bdd = _cudd.BDD()
        self.bdd.configure(reordering=False)
        self.exact = exact
        self.weights: dict[str, tuple[Fraction, float]] = {}   # noise var -> P(true)
        self.kind: dict[str, str] = {}                         # var -> noise|input|output
        self.order: list[str] = []                             # creation order
        self._count = 0
        self.true = Bit(self, self.bdd.true)
        self.false = Bit(self, self.bdd.false)

    def _var(self, prefix: str, kind: str) -> tuple[str, Any]:
        name = f"{prefix}{self._count}"
        self._count += 1
        self.bdd.declare(name)
        self.kind[name] = kind
        self.order.append(name)
        return name, self.bdd.var(name)

    # -- constants and lifting -------------------------------------------------------------
    def const(self, v: int) -> Int:
        """The constant integer ``v``."""
        if isinstance(v, Int):
            return v
        if isinstance(v, float) and not float(v).is_integer():
            raise MechanismError(f"BDD programs compute with integers, got {v!r}.")
        v = int(v)
        w = _width(v, v)
        bits = [self.bdd.true if (v >> i) & 1 else self.bdd.false for i in range(w)]
        return Int(self, bits, v, v)

    def lift(self, v: Any) -> Int:
        if isinstance(v, Int):
            return v
        if isinstance(v, Bit) or hasattr(v, "as_int"):
            return v.as_int()
        if isinstance(v, (bool, np.bool_)):
            return self.const(int(v))
        if isinstance(v, (int, np.integer, float, np.floating)):
            return self.const(v)
        raise MechanismError(f"BDD programs compute with integers and Booleans, got {v!r}.")

    def _adder(self, a: list, b: list, carry_in: bool) -> list:
        carry = self.bdd.true if carry_in else self.bdd.false
        out = []
        for x, y in zip(a, b):
            t = self.bdd.apply('xor', x, y)
            out.append(self.bdd.apply('xor', t, carry))
            carry = (x & y) | (carry & t)
        return out

    # -- random choices --------------------------------------------------------------------
    def _prob(self, q: Any, what: str) -> tuple[Fraction, float]:
        try:
            qf = as_fraction(q) if self.exact else None
            ff = float(q)
        except (TypeError, ValueError):
            raise NoiseError(f"{what} needs a probability, got {q!r}.") from None
        if not 0.0 <= ff <= 1.0:
            raise NoiseError(f"{what} needs a probability in [0, 1], got {q!r}.")
        return (qf if qf is not None else Fraction(0)), ff

    def flip(self, q: Any) -> Bit:
        """A fresh Boolean, true with probability ``q`` (a weighted variable, Sec. II-C)."""
        qf, ff = self._prob(q, "flip")
        exact_zero = qf == 0 if self.exact else ff == 0.0
        exact_one = qf == 1 if self.exact else ff == 1.0
        if exact_zero:
            return self.false
        if exact_one:
            return self.true
        name, node = self._var("n", "noise")
        self.weights[name] = (qf, ff)
        return Bit(self, node)

    def discrete(self, probs: Sequence[Any], values: Sequence[int] | None = None) -> Int:
        """An integer equal to ``values[i]`` with probability ``probs[i]``.

        Encoded as a chain of flips: flip ``i`` has the conditional probability
        ``p_i / (1 - p_0 - ... - p_{i-1})`` and the first true flip picks the value.
        """
        probs = list(probs)
        if not probs:
            raise NoiseError("discrete needs at least one probability.")
        vals = list(range(len(probs))) if values is None else [int(v) for v in values]
        if len(vals) != len(probs):
            raise NoiseError(f"discrete has {len(vals)} values but {len(probs)} probabilities.")
        if self.exact:
            ps: list[Any] = [as_fraction(q) for q in probs]
            total = sum(ps, Fraction(0))
            if total != 1:
                raise NoiseError(f"discrete probabilities sum to {total}, not 1.")
            rest: Any = Fraction(1)
        else:
            ps = [float(q) for q in probs]
            if any(q < 0 for q in ps) or not math.isclose(sum(ps), 1.0, abs_tol=1e-9):
                raise NoiseError("discrete probabilities must be non-negative and sum to 1.")
            rest = 1.0
        flips = []
        for i, q in enumerate(ps[:-1]):
            cond = q / rest if rest > 0 else 0
            if self.exact:
                cond = min(cond, Fraction(1))
            else:
                cond = min(max(cond, 0.0), 1.0)
            flips.append((self.flip(cond), vals[i]))
            rest = rest - q
        result = self.const(vals[-1])
        for f, v in reversed(flips):
            result = self.ite(f, v, result)
        return result

    def uniform(self, low: int, high: int) -> Int:
        """An integer uniform on ``low..high``."""
        k = int(high) - int(low) + 1
        return self.discrete([Fraction(1, k)] * k, list(range(int(low), int(high) + 1)))

    def geometric(self, alpha: Any, low: int, high: int) -> Int:
        """Two-sided geometric noise, P(z) ~ alpha^|z|, tails censored onto [low, high]."""
        values, probs = Dist("geometric", {"alpha": alpha, "low": int(low),
                                           "high": int(high)}).support(exact=self.exact)
        return self.discrete(probs, [int(v) for v in values])

    # -- control ---------------------------------------------------------------------------
    def ite(self, cond: Any, a: Any, b: Any) -> Any:
        """``a`` if ``cond`` else ``b`` (both branches are values, not code)."""
        if isinstance(cond, (bool, np.bool_)):
            return a if cond else b
        if not isinstance(cond, Bit):
            raise MechanismError(f"ite needs a Boolean condition, got {cond!r}.")
        if isinstance(a, Bit) and isinstance(b, Bit):
            return Bit(self, self.bdd.ite(cond.node, a.node, b.node))
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            return tuple(self.ite(cond, u, v) for u, v in zip(a, b))
        ia, ib = self.lift(a), self.lift(b)
        lo, hi = min(ia.lo, ib.lo), max(ia.hi, ib.hi)
        w = max(ia.width, ib.width, _width(lo, hi))
        bits = [self.bdd.ite(cond.node, u, v) for u, v in zip(ia.extend(w), ib.extend(w))]
        return Int(self, bits, lo, hi)

    def clip(self, v: Any, low: int, high: int) -> Int:
        """``v`` clipped to ``[low, high]``."""
        v = self.lift(v)
        out = self.ite(v < low, low, self.ite(v > high, high, v))
        out = self.lift(out)
        return Int(self, out.extend(_width(max(out.lo, low), min(out.hi, high))),
                   max(out.lo, low), min(out.hi, high))

    def max(self, a: Any, b: Any) -> Int:
        return self.ite(self.lift(a) < b, b, a)

    def min(self, a: Any, b: Any) -> Int:
        return self.ite(self.lift(a) < b, a, b)

    def any(self, bits: Sequence[Bit]) -> Bit:
        out = self.false
        for b in bits:
            out = out | b
        return out

    def all(self, bits: Sequence[Bit]) -> Bit:
        out = self.true
        for b in bits:
            out = out & b
        return out

    # -- symbolic inputs --------------------------------------------------------------------
    def input_int(self, low: int, high: int) -> tuple[Int, list[str]]:
        """A symbolic integer over ``[low, high]``: unweighted variables, restricted later."""
        span = int(high) - int(low)
        m = max(1, span.bit_length())
        names, bits = [], []
        for _ in range(m):
            name, node = self._var("x", "input")
            names.append(name)
            bits.append(node)
        u = Int(self, bits + [self.bdd.false], 0, (1 << m) - 1)
        u.hi = span  # only in-range values are ever assigned
        return (u + int(low) if low else u), names


class _LazyInputs(Sequence):
    """Symbolic input coordinates, declared on first use so the variable order follows the
    program (a good BDD order for loops over the input)."""

    def __init__(self, builder: Builder, n: int, low: int, high: int):
        self.b, self.n, self.low, self.high = builder, n, low, high
        self.values: list[Int | None] = [None] * n
        self.names: list[list[str] | None] = [None] * n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        if self.values[i] is None:
            self.values[i], self.names[i] = self.b.input_int(self.low, self.high)
        return self.values[i]

    def __iter__(self):
        return (self[i] for i in range(self.n))

    def finish(self) -> list[list[str]]:
        for i in range(self.n):
            self[i]
        return [list(ns) for ns in self.names]  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# Programs
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Program:
    """A BDD-language program ``fn(p, x, **args)`` with its input domain and spec.

    Inputs are integer lists of ``length`` entries in ``[low, high]``. ``truth`` is the
    target value V_x of (alpha, beta)-accuracy (Def. 2); ``neighbors`` the adjacency.
    """

    fn: Callable
    name: str
    length: int
    low: int = 0
    high: int = 1
    args: Mapping[str, Any] = field(default_factory=dict)
    neighbors: Neighbors = field(default_factory=all_differ)
    epsilon: float | None = None
    truth: Callable | None = None
    description: str = ""

    def replace(self, **changes) -> Program:
        import dataclasses

        return dataclasses.replace(self, **changes)

    def compile(self, args: Mapping[str, Any] | None = None, exact: bool = False,
                x: Sequence[int] | None = None) -> Compiled:
        """Compile once with symbolic inputs (``x=None``) or for the fixed input ``x``."""
        return compile_program(self, args=args, exact=exact, x=x)

    def distribution(self, x: Sequence[int], args: Mapping[str, Any] | None = None,
                     exact: bool = False) -> Distribution:
        """Exact output distribution on ``x`` (compiled for ``x``, one WMC)."""
        return self.compile(args, exact=exact, x=x).distribution(x)

    def check_input(self, x: Any) -> tuple[int, ...]:
        arr = np.asarray(x).ravel()
        if len(arr) != self.length:
            raise InputError(f"input has length {len(arr)}, but {self.name!r} takes "
                             f"length {self.length}.")
        if not np.all(arr == np.round(arr)) or arr.min() < self.low or arr.max() > self.high:
            raise InputError(f"input {arr.tolist()} must hold integers in "
                             f"[{self.low}, {self.high}].")
        return tuple(arr.astype(np.int64).tolist())


def program(fn: Callable | None = None, *, length: int, low: int = 0, high: int = 1,
            neighbors: Neighbors | None = None, epsilon: float | None = None,
            name: str | None = None, truth: Callable | None = None,
            args: Mapping[str, Any] | None = None) -> Any:
    """Decorate ``fn(p, x, **args)`` as a BDD-language :class:`Program`."""
    import inspect

    def wrap(f: Callable) -> Program:
        params = list(inspect.signature(f).parameters.values())
        defaults = {p.name: p.default for p in params[2:]
                    if p.default is not inspect.Parameter.empty}
        defaults.update(args or {})
        return Program(fn=f, name=name or f.__name__, length=int(length), low=int(low),
                       high=int(high), args=defaults, neighbors=neighbors or all_differ(),
                       epsilon=epsilon, truth=truth,
                       description=(inspect.getdoc(f) or "").split("\n")[0])

    return wrap(fn) if fn is not None else wrap


# ------------------------------------------------------------------------------------------
# Compilation
# ------------------------------------------------------------------------------------------

@dataclass
class _Component:
    names: list[str]      # y variables, LSB first
    lo: int
    hi: int
    signed: bool
    decode: dict = field(default_factory=dict)    # code -> sentinel (inf, -inf)
    encode: dict = field(default_factory=dict)    # sentinel -> code
    nodes: list = field(default_factory=list)     # the output bits' BDD nodes (y_j <-> node)


@dataclass
class _Graph:
    """A diagram exported to arrays, children before parents."""

    level: np.ndarray     # level of each node
    var: list[str]
    lo_idx: np.ndarray    # child index, -1 = the constant-true terminal
    lo_neg: np.ndarray
    hi_idx: np.ndarray
    hi_neg: np.ndarray
    root_idx: int
    root_neg: bool
    n_levels: int


def _export(bdd: Any, root: Any) -> _Graph:
    n_levels = len(bdd.vars)
    ids: dict[int, int] = {}
    level, var, lo_idx, lo_neg, hi_idx, hi_neg = [], [], [], [], [], []
    true_id = int(bdd.true) & ~1

    def key(f):
        return int(f) & ~1

    stack = [(root, False)]
    while stack:
        f, expanded = stack.pop()
        k = key(f)
        if k == true_id or k in ids:
            continue
        lo, hi = f.low, f.high
        if not expanded:
            stack.append((f, True))
            for c in (lo, hi):
                ck = key(c)
                if ck != true_id and ck not in ids:
                    stack.append((c, False))
            continue
        ids[k] = len(level)
        level.append(f.level)
        var.append(f.var)
        for c, idx_l, neg_l in ((lo, lo_idx, lo_neg), (hi, hi_idx, hi_neg)):
            ck = key(c)
            idx_l.append(-1 if ck == true_id else ids[ck])
            neg_l.append(bool(int(c) & 1))
    rk = key(root)
    return _Graph(np.asarray(level, dtype=np.int64), var,
                  np.asarray(lo_idx, dtype=np.int64), np.asarray(lo_neg, dtype=bool),
                  np.asarray(hi_idx, dtype=np.int64), np.asarray(hi_neg, dtype=bool),
                  -1 if rk == true_id else ids[rk], bool(int(root) & 1), n_levels)


def _flatten_output(out: Any) -> list:
    if isinstance(out, (list, tuple)):
        return list(out)
    if isinstance(out, np.ndarray):
        return out.ravel().tolist()
    return [out]


def compile_program(prog: Program, args: Mapping[str, Any] | None = None,
                    exact: bool = False, x: Sequence[int] | None = None,
                    sift: bool = True) -> Compiled:
    """Compile ``prog`` to the BDD of its WBF (Def. 3): symbolic inputs, or fixed ``x``."""
    _require_dd()
    b = Builder(exact=exact)
    kwargs = dict(prog.args)
    if args:
        unknown = set(args) - set(prog.args)
        if unknown:
            raise InputError(f"program {prog.name!r} has no argument(s) "
                             f"{', '.join(sorted(unknown))}.")
        kwargs.update(args)
    if x is None:
        inputs: Any = _LazyInputs(b, prog.length, prog.low, prog.high)
    else:
        inputs = list(prog.check_input(x))
    try:
        out = prog.fn(b, inputs, **kwargs)
    except PrivetError:
        raise
    except Exception as err:
        raise MechanismError(f"program {prog.name!r} raised {type(err).__name__}: {err}.") \
            from err
    input_names = inputs.finish() if x is None else []
    comps_vals, decodes = [], []
    for v in _flatten_output(out):
        decodes.append(v.decode if isinstance(v, Coded) else {})
        comps_vals.append(tighten(b.lift(v.value if isinstance(v, Coded) else v)))
    if not comps_vals:
        raise MechanismError(f"program {prog.name!r} returned no output.")
    # output variables, each inserted just below the deepest variable its bit depends on
    bdd = b.bdd
    comps: list[_Component] = []
    pairs = []
    for v, dec in zip(comps_vals, decodes):
        bits = list(v.bits)
        signed = v.lo < 0
        if not signed:
            bits = v.extend(max(1, v.hi.bit_length()))
        names, nodes = [], []
        for node in bits:
            nodes.append(node)
            supp = bdd.support(node)
            level = 1 + max((bdd.level_of_var(u) for u in supp), default=-1)
            name = f"y{b._count}"
            b._count += 1
            bdd.insert_var(name, level)
            b.kind[name] = "output"
            b.order.append(name)
            names.append(name)
            pairs.append((bdd.var(name), node))
        comps.append(_Component(names, v.lo, v.hi, signed, dict(dec),
                                {s: c for c, s in dec.items()}, nodes))
    # conjoin bottom-up (deepest output first): each step only walks the new term's levels
    phi = bdd.true
    for ynode, node in sorted(pairs, key=lambda pr: -pr[0].level):
        phi = bdd.apply('equiv', ynode, node) & phi
    if sift and phi.dag_size > 20 * max(1, len(bdd.vars)):
        _cudd.reorder(bdd)  # CUDD group sifting, only when the placement heuristic failed
    return Compiled(b, phi, input_names, prog.low, comps, fixed=None if x is None else
                    tuple(int(v) for v in inputs), name=prog.name)


class Compiled:
    """A compiled program: the BDD of its WBF and weighted model counts on it."""

    def __init__(self, builder: Builder, phi: Any, input_names: list[list[str]], low: int,
                 components: list[_Component], fixed: tuple | None, name: str):
        self.builder = builder
        self.bdd = builder.bdd
        self.phi = phi
        self.input_names = input_names
        self.low = int(low)
        self.components = components
        self.fixed = fixed
        self.name = name
        self.exact = builder.exact
        self._graph: _Graph | None = None
        self._blocks: list | None = None

    # -- independent blocks of outputs ----------------------------------------------------------
    def blocks(self) -> list[tuple[list[int], list[int], Compiled, int]]:
        """Groups of output components that share no noise variable, as sub-diagrams.

        Outputs whose bits draw on disjoint noise are independent given the input, so
        ``Pr(A(x) = y) = prod_B Pr(A_B(x) = y_B)``: each block is its own (small) WBF
        ``AND_{j in B} (y_j <-> out_j)``. Returns ``[(components, input coordinates,
        sub-diagram, denominator of the block's noise)]``; one block when nothing splits.
        """
        if self._blocks is not None:      # None stands for self (no reference cycle)
            return [(a, b, self if c is None else c, d) for a, b, c, d in self._blocks]
        bdd = self.bdd
        weights = self.builder.weights
        owner = {nm: i for i, ns in enumerate(self.input_names) for nm in ns}
        supports = []
        for comp in self.components:
            sup: set[str] = set()
            for node in comp.nodes:
                sup |= set(bdd.support(node))
            supports.append(sup)
        parent = list(range(len(self.components)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        first: dict[str, int] = {}
        for k, sup in enumerate(supports):
            for v in sup:
                if v in weights:
                    if v in first:
                        parent[find(k)] = find(first[v])
                    else:
                        first[v] = k
        groups: dict[int, list[int]] = {}
        for k in range(len(self.components)):
            groups.setdefault(find(k), []).append(k)
        out = []
        for comps in groups.values():
            sup = set().union(*(supports[k] for k in comps))
            coords = sorted({owner[v] for v in sup if v in owner})
            den = math.prod(weights[v][0].denominator for v in sup if v in weights)
            if len(groups) == 1:
                out.append((comps, coords, None, self.denominator))
                break
            terms = [(bdd.var(nm), node) for k in comps
                     for nm, node in zip(self.components[k].names, self.components[k].nodes)]
            phi = bdd.true
            for ynode, node in sorted(terms, key=lambda pr: -pr[0].level):
                phi = bdd.apply('equiv', ynode, node) & phi
            sub = Compiled(self.builder, phi, self.input_names, self.low,
                           [self.components[k] for k in comps], self.fixed, self.name)
            out.append((comps, coords, sub, den))
        self._blocks = out
        return self.blocks()

    # -- sizes -------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Nodes of the compiled diagram (inputs symbolic unless compiled for a fixed input)."""
        return int(self.phi.dag_size)

    def size_for(self, x: Sequence[int]) -> int:
        """Nodes of the diagram conditioned on input ``x``."""
        return int(self._restrict(x).dag_size)

    @property
    def n_noise(self) -> int:
        return len(self.builder.weights)

    def output_space(self) -> list[tuple]:
        """Every output tuple in the product of the components' static ranges."""
        import itertools

        return list(itertools.product(*[range(c.lo, c.hi + 1) for c in self.components]))

    @property
    def output_count(self) -> int:
        return math.prod(c.hi - c.lo + 1 for c in self.components)

    def decode(self, y: Sequence[int]) -> tuple:
        """An output code row as the mechanism's values (sentinel codes become +-inf)."""
        return tuple(c.decode.get(int(v), int(v)) for c, v in zip(self.components, y))

    def _encode(self, ys: np.ndarray) -> np.ndarray:
        """Output rows (sentinels as +-inf) as integer code rows."""
        if not any(c.encode for c in self.components):
            return np.asarray(ys, dtype=np.int64)
        ys = np.array(ys, dtype=float)
        for k, c in enumerate(self.components):
            for sentinel, code in c.encode.items():
                ys[:, k][ys[:, k] == sentinel] = code
        bad = ~np.isfinite(ys)
        ys[bad] = 0
        out = ys.astype(np.int64)
        out[bad.any(axis=1)] = [c.hi + 1 for c in self.components]  # never produced
        return out

    # -- conditioning --------------------------------------------------------------------------
    def _input_assignment(self, x: Sequence[int]) -> dict[str, bool]:
        if self.fixed is not None:
            if tuple(int(v) for v in x) != self.fixed:
                raise InputError(f"this diagram was compiled for input {list(self.fixed)}, "
                                 f"not {list(x)}.")
            return {}
        if len(x) != len(self.input_names):
            raise InputError(f"input has length {len(x)}, the program takes "
                             f"{len(self.input_names)}.")
        assign = {}
        for v, names in zip(x, self.input_names):
            u = int(v) - self.low
            for j, name in enumerate(names):
                assign[name] = bool((u >> j) & 1)
        return assign

    def _restrict(self, x: Sequence[int]) -> Any:
        assign = self._input_assignment(x)
        return self.bdd.let(assign, self.phi) if assign else self.phi

    # -- batched evaluation (Algorithm 1 on many (x, y) at once) -----------------------------
    def graph(self) -> _Graph:
        if self._graph is None:
            self._graph = _export(self.bdd, self.phi)
        return self._graph

    def _columns(self, xs: np.ndarray, ys: np.ndarray) -> dict[str, np.ndarray]:
        cols: dict[str, np.ndarray] = {}
        if self.fixed is None:
            u = xs - self.low
            for i, names in enumerate(self.input_names):
                for j, name in enumerate(names):
                    cols[name] = ((u[:, i] >> j) & 1).astype(bool)
        for k, comp in enumerate(self.components):
            v = ys[:, k]
            w = len(comp.names)
            enc = v & ((1 << w) - 1) if comp.signed else v
            for j, name in enumerate(comp.names):
                cols[name] = ((enc >> j) & 1).astype(bool)
        return cols

    def probs(self, xs: Any, ys: Any, exact: bool | None = None) -> tuple[np.ndarray, Any]:
        """``Pr(A(x_i) = y_i)`` for every row ``i``, in one pass over the diagram.

        Returns ``(logp, scaled)``: float log-probabilities (-inf for 0) and, when exact, the
        exact probabilities as integers over the common denominator :attr:`denominator`
        (``None`` otherwise). Float evaluation runs in log space, so tiny probabilities
        (lambda^n for n = 1000) do not underflow.
        """
        exact = self.exact if exact is None else exact
        if exact and not self.exact:
            raise PrivetError("compile with exact=True to get exact probabilities.")
        ys = np.asarray(ys)
        if ys.ndim == 1:
            ys = ys.reshape(-1, 1) if len(self.components) == 1 else ys.reshape(1, -1)
        ys = self._encode(ys)
        xs = np.asarray(xs, dtype=np.int64)
        if xs.ndim == 1:
            xs = np.broadcast_to(xs, (len(ys), len(xs)))
        ok = np.ones(len(ys), dtype=bool)
        for k, comp in enumerate(self.components):
            ok &= (ys[:, k] >= comp.lo) & (ys[:, k] <= comp.hi)
        cols = self._columns(xs, np.where(ok[:, None], ys, np.array(
            [c.lo for c in self.components])))
        g = self.graph()
        bdd = self.bdd
        if not exact:
            logp = self._eval_log(g, cols, len(ys), bdd)
            return np.where(ok, logp, -np.inf), None
        scaled = self._eval_scaled(g, cols, len(ys), bdd)
        scaled = np.where(ok, scaled, 0).astype(scaled.dtype)
        # correctly rounded logs of the exact values (the float screen of ExactDP)
        if scaled.dtype != object:
            with np.errstate(divide="ignore"):
                logp = np.log(scaled.astype(float)) - math.log(self.denominator)
        else:
            logd = math.log(self.denominator)
            logp = np.fromiter((math.log(int(v)) - logd if v else -math.inf for v in scaled),
                               dtype=float, count=len(scaled))
        return logp, scaled

    def _eval_log(self, g: _Graph, cols: dict, n: int, bdd: Any) -> np.ndarray:
        """log Pr for every row: both polarities of each node, so no "1 - W" cancellation.

        W(u) and W(~u) are carried separately (W(~u) at a node mixes the complemented
        children), which keeps tiny probabilities exact to rounding. Linear floats when no
        path weight can underflow, log space otherwise (lambda^n for n = 1000).
        """
        weights = self.builder.weights
        floor = sum(math.log(min(w[1], 1 - w[1])) for w in weights.values())
        use_log = floor < -600
        m = len(g.var)
        # which (node, polarity) values are needed, and how many parents still need them
        need = np.zeros((m, 2), dtype=bool)
        if g.root_idx >= 0:
            need[g.root_idx, int(g.root_neg)] = True
        refs = np.zeros((m, 2), dtype=np.int64)
        for i in range(m - 1, -1, -1):
            for pol in (0, 1):
                if not need[i, pol]:
                    continue
                for idx, neg in ((g.hi_idx[i], g.hi_neg[i]), (g.lo_idx[i], g.lo_neg[i])):
                    if idx >= 0:
                        need[idx, pol ^ int(neg)] = True
                        refs[idx, pol ^ int(neg)] += 1
        one = np.zeros(n) if use_log else np.ones(n)
        nil = np.full(n, -np.inf) if use_log else np.zeros(n)
        vals: dict[tuple[int, int], np.ndarray] = {}

        def child(idx, pol):
            if idx < 0:
                return one if pol == 0 else nil
            v = vals[(idx, pol)]
            refs[idx, pol] -= 1
            if refs[idx, pol] == 0:
                del vals[(idx, pol)]
            return v

        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            for i in range(m):
                v = g.var[i]
                w = weights.get(v)
                col = None if w is not None else cols.get(v)
                if w is None and col is None:
                    raise PrivetError(f"variable {v} is neither noise nor assigned.")
                for pol in (0, 1):
                    if not need[i, pol]:
                        continue
                    hi = child(g.hi_idx[i], pol ^ int(g.hi_neg[i]))
                    lo = child(g.lo_idx[i], pol ^ int(g.lo_neg[i]))
                    if w is not None:
                        p = w[1]
                        if use_log:
                            out = np.logaddexp(math.log(p) + hi, math.log1p(-p) + lo)
                        else:
                            out = p * hi + (1.0 - p) * lo
                    else:
                        out = np.where(col, hi, lo)
                    vals[(i, pol)] = out
            if g.root_idx < 0:
                res = one if not g.root_neg else nil
            else:
                res = vals[(g.root_idx, int(g.root_neg))]
            res = np.array(res, dtype=float)
            return res if use_log else np.log(res)

    @property
    def denominator(self) -> int:
        """Common denominator of exact probabilities: product of the noise denominators."""
        return math.prod(w[0].denominator for w in self.builder.weights.values())

    def _eval_scaled(self, g: _Graph, cols: dict, n: int, bdd: Any) -> np.ndarray:
        # S(u) = W(u) * D[level(u)], D[L] = product of the denominators of noise levels >= L.
        L = g.n_levels
        dens = [1] * (L + 1)
        for lev in range(L - 1, -1, -1):
            w = self.builder.weights.get(bdd.var_at_level(lev))
            dens[lev] = dens[lev + 1] * (w[0].denominator if w is not None else 1)
        big = dens[0] >= (1 << 62)
        dtype = object if big else np.int64
        vals: list[np.ndarray] = []
        one = np.ones(n, dtype=dtype)
        levels = g.level

        def child(idx, neg, parent_next):
            lev = L if idx < 0 else int(levels[idx])
            base = one if idx < 0 else vals[idx]
            if neg:
                base = dens[lev] - base
            factor = dens[parent_next] // dens[lev]
            return base * factor if factor != 1 else base

        for i in range(len(g.var)):
            v = g.var[i]
            nxt = int(levels[i]) + 1
            hi = child(g.hi_idx[i], g.hi_neg[i], nxt)
            lo = child(g.lo_idx[i], g.lo_neg[i], nxt)
            w = self.builder.weights.get(v)
            if w is not None:
                a, d = w[0].numerator, w[0].denominator
                vals.append(a * hi + (d - a) * lo)
            else:
                vals.append(np.where(cols[v], hi, lo))
        out = child(g.root_idx, g.root_neg, 0)
        return np.asarray(out, dtype=dtype)

    def prob(self, x: Sequence[int], y: Any) -> Any:
        """``Pr(A(x) = y)``: a float, or a Fraction when compiled exact."""
        yv = np.atleast_1d(np.asarray(y, dtype=np.int64))
        logp, scaled = self.probs(np.asarray(x)[None, :] if len(x) else np.zeros((1, 0)),
                                  yv[None, :])
        if scaled is not None:
            return Fraction(int(scaled[0]), self.denominator)
        return float(np.exp(logp[0]))

    # -- full distribution of one input from one WMC ------------------------------------------
    def distribution(self, x: Sequence[int] | None = None) -> Distribution:
        """The whole output distribution of input ``x``: one distribution-valued WMC.

        After conditioning on ``x`` only noise and output variables remain. Each node
        maps to ``{output bits below it: weight}``; a noise node mixes its children with
        weights ``q`` and ``1 - q`` (a skipped noise level contributes ``q + (1 - q) = 1``),
        an output node prefixes its bit, a skipped output level takes both values.
        """
        if x is None:
            if self.fixed is None:
                raise InputError("give the input x to condition the program on.")
            x = self.fixed
        g_root = self._restrict(x)
        bdd = self.bdd
        L = len(bdd.vars)
        ylev = sorted(bdd.level_of_var(n) for c in self.components for n in c.names)
        yset = set(ylev)
        exact = self.exact
        one_w: Any = Fraction(1) if exact else 1.0
        g = _export(bdd, g_root)
        memo: dict[tuple[int, bool], dict] = {}
        # y levels in [a, b): the ones a lifted key must gain
        import bisect

        def ylevels_between(a: int, b: int) -> list[int]:
            return ylev[bisect.bisect_left(ylev, a): bisect.bisect_left(ylev, b)]

        def lift(d: dict, from_lev: int, to_lev: int) -> dict:
            gap = ylevels_between(to_lev, from_lev)
            for _ in gap:
                d = {(bit,) + k: w for k, w in d.items() for bit in (0, 1)}
            return d

        def get(idx: int, neg: bool) -> tuple[dict, int]:
            if idx < 0:
                return ({(): one_w} if not neg else {}), L
            return memo[(idx, neg)], int(g.level[idx])

        for i in range(len(g.var)):
            v = g.var[i]
            lev = int(g.level[i])
            w = self.builder.weights.get(v)
            for neg in (False, True):
                dh, lh = get(g.hi_idx[i], bool(g.hi_neg[i]) ^ neg)
                dl, ll = get(g.lo_idx[i], bool(g.lo_neg[i]) ^ neg)
                dh = lift(dh, lh, lev + 1)
                dl = lift(dl, ll, lev + 1)
                if w is not None:
                    q = w[0] if exact else w[1]
                    out: dict = {}
                    for k, val in dh.items():
                        out[k] = val * q
                    for k, val in dl.items():
                        out[k] = out.get(k, 0) + val * (1 - q)
                elif lev in yset:
                    out = {(1,) + k: val for k, val in dh.items()}
                    out.update({(0,) + k: val for k, val in dl.items()})
                else:
                    raise PrivetError(f"variable {v} is still free after conditioning.")
                memo[(i, neg)] = out
        droot, lroot = get(g.root_idx, g.root_neg)
        droot = lift(droot, lroot, 0)
        # decode output bits (in level order) to component values
        pos = {lv: j for j, lv in enumerate(ylev)}
        comp_pos = [[pos[bdd.level_of_var(n)] for n in c.names] for c in self.components]
        rows, probs = [], []
        for key, val in droot.items():
            if val == 0:
                continue
            row = []
            for c, ps in zip(self.components, comp_pos):
                u = sum(key[p] << j for j, p in enumerate(ps))
                if c.signed and key[ps[-1]]:
                    u -= 1 << len(ps)
                row.append(c.decode.get(u, u))
            rows.append(row)
            probs.append(val)
        if not rows:
            raise PrivetError(f"program {self.name!r} has no output with positive probability.")
        coded = any(c.decode for c in self.components)
        arr = np.asarray(rows, dtype=float if coded else np.int64)
        order = np.lexsort(arr.T[::-1])
        arr = arr[order]
        probs = [probs[i] for i in order]
        outputs = arr[:, 0] if arr.shape[1] == 1 else arr
        return Distribution(outputs=outputs, probs=tuple(probs), grid_size=self.size)


def _log1mexp(a: np.ndarray) -> np.ndarray:
    """log(1 - exp(a)) for a <= 0, accurate near 0 and near -inf."""
    a = np.minimum(a, 0.0)
    return np.where(a > -0.6931471805599453, np.log(-np.expm1(a)), np.log1p(-np.exp(a)))


__all__ = ["Bit", "Builder", "Compiled", "Int", "Program", "compile_program", "program"]
