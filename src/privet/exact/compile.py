"""The Compile interpreter: a noise-API mechanism becomes a BDD (the WMC paper's bottom path).

The same mechanism function that ``Sampler``, ``Replay`` and ``Enumerate`` run is run once
more under :class:`Compile`, a noise interpreter whose draws are *symbolic bounded
integers*: every scalar draw of finite discrete noise (Bernoulli, censored geometric,
discrete, permutation) is a two's-complement bit vector of BDD nodes over fresh weighted
variables (:class:`privet.exact.bdd.Builder`, Sec. II-C and Def. 3 of Oakley, Holtzen &
Oprea). The arrays the mechanism computes with are :class:`Sym` arrays: NumPy duck arrays
whose elements are such integers (or Booleans), so NumPy arithmetic (``+ - *``, ``//`` and
``%`` by powers of two, ``abs``), comparisons, ``np.where``, ``np.clip``, ``np.sum``,
``np.cumsum``, ``np.maximum``, indexing, broadcasting and reshaping, and the
:mod:`privet.ops` primitives (``argmax``, ``max``, ``where``, ``cumsum``, ...) all act on
them. The input is symbolic too (one compilation for every input, conditioned per input
by restriction) or fixed (one compilation per input, which also allows Python control flow
on the input).

:func:`as_program` turns a :class:`~privet.core.mechanism.Mechanism` into a
:class:`~privet.exact.bdd.Program`, so everything the BDD backend does (weighted model
counting with complemented edges, batched evaluation, restriction) applies unchanged;
:func:`compile_mechanism` compiles it, and :func:`distributions` gives the exact output
distribution per input (the hook privacy profiles use).

When compilation is not possible (continuous noise, a non-integer value, Python control
flow on a random value, a NumPy function without a symbolic meaning) a
:class:`CompileError` says why in one sentence and the exact engine falls back to
Enumerate.

Sums of independent parts (a ``sum`` over draws whose noise variables are disjoint, as in
RRcount, Sec. V-D) are kept as :class:`SumOf` until something else needs their bits: an
output that is such a sum has the distribution of a convolution, which
:mod:`privet.exact.counting` computes in polynomial time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partialmethod
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from ..core import ops
from ..core.errors import (
    InputError,
    MechanismError,
    NoiseError,
    PrivetError,
    UnsupportedError,
)
from ..core.mechanism import Mechanism
from ..core.noise import Dist, Noise, Shape
from .bdd import Bit, Builder, Coded, Int, Program, _LazyInputs, _width


class CompileError(UnsupportedError):
    """The mechanism cannot be compiled to a BDD (the message says why, in one sentence)."""


# ------------------------------------------------------------------------------------------
# Elements: constants, Int, Bit, and three lazy/compound kinds
# ------------------------------------------------------------------------------------------

class _Lazy:
    """A noise or input coordinate whose variables are declared on first use, so the BDD
    variable order follows the order in which the mechanism combines its values."""

    __slots__ = ("make", "value")

    def __init__(self, make: Callable[[], Any]):
        self.make = make
        self.value = None

    def get(self) -> Any:
        if self.value is None:
            self.value = self.make()
        return self.value


class Ext:
    """An integer that may also be a sentinel (+inf = ABORTED, -inf = FALSE)."""

    __slots__ = ("fin", "pos", "neg")

    def __init__(self, fin: Any, pos: Any, neg: Any):
        self.fin, self.pos, self.neg = fin, pos, neg

    def __bool__(self):
        raise CompileError(_CONTROL)


class SumOf:
    """A sum of parts kept unexpanded (its bits are built only when something needs them)."""

    __slots__ = ("k", "parts", "_int")

    def __init__(self, k: Kernels, parts: list):
        self.k = k
        self.parts = parts
        self._int: Int | None = None

    def as_int(self) -> Int:
        return self.k.materialize(self)

    def __bool__(self):
        raise CompileError(_CONTROL)


_CONTROL = ("Python control flow ('if', 'and', 'or', 'while', bool()) on a random value "
            "cannot be compiled; write it with privet.ops.where or np.where")


def _const(a: Any) -> bool:
    return isinstance(a, (bool, int, float))


class Kernels:
    """Element operations of one compilation (they create BDD nodes in ``b``)."""

    def __init__(self, b: Builder):
        self.b = b

    # -- coercions ---------------------------------------------------------------------------
    def force(self, a: Any) -> Any:
        if isinstance(a, _Lazy):
            return a.get()
        if isinstance(a, np.generic):
            return a.item()
        return a

    def int_const(self, a: Any) -> int:
        if isinstance(a, float):
            if not a.is_integer():
                raise CompileError(
                    f"the value {a!r} is not an integer: the Compile interpreter computes with "
                    "bounded integers")
            return int(a)
        return int(a)

    def lift(self, a: Any) -> Int:
        a = self.force(a)
        if isinstance(a, Int):
            return a
        if isinstance(a, Bit):
            return a.as_int()
        if isinstance(a, SumOf):
            return self.materialize(a)
        if isinstance(a, Ext):
            raise CompileError("arithmetic or comparison on a sentinel output (ABORTED or "
                               "FALSE) cannot be compiled")
        if _const(a):
            return self.b.const(self.int_const(a))
        raise CompileError(f"the Compile interpreter cannot compute with {type(a).__name__} "
                           "values")

    def bit(self, a: Any) -> Any:
        """A Bit, or a Python bool for constants."""
        a = self.force(a)
        if isinstance(a, Bit):
            return a
        if _const(a):
            return bool(a)
        return self.ne(a, 0)

    def node(self, c: Any) -> Bit:
        return c if isinstance(c, Bit) else (self.b.true if c else self.b.false)

    def materialize(self, s: SumOf) -> Int:
        """The bits of a sum: a balanced tree of adders (shallow carries)."""
        if s._int is None:
            vals = [self.lift(p) for p in s.parts]
            while len(vals) > 1:
                nxt = [vals[i] + vals[i + 1] for i in range(0, len(vals) - 1, 2)]
                if len(vals) % 2:
                    nxt.append(vals[-1])
                vals = nxt
            s._int = vals[0] if vals else self.b.const(0)
        return s._int

    # -- arithmetic ----------------------------------------------------------------------------
    def add(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return a + c
        return self.lift(a) + self.lift(c)

    def sub(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return a - c
        return self.lift(a) - self.lift(c)

    def neg(self, a: Any) -> Any:
        a = self.force(a)
        return -a if _const(a) else -self.lift(a)

    def pos(self, a: Any) -> Any:
        return self.force(a)

    def absolute(self, a: Any) -> Any:
        a = self.force(a)
        if _const(a):
            return abs(a)
        v = self.lift(a)
        return self.b.ite(v < 0, -v, v)

    def mul(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return a * c
        if _const(a):
            a, c = c, a
        if _const(c):
            return self._mul_const(self.lift(a), self.int_const(c))
        x, y = self.lift(a), self.lift(c)
        if x.hi - x.lo < y.hi - y.lo:
            x, y = y, x
        # y = y.lo + u with u unsigned: x * y = x * y.lo + sum_j u_j * (x << j)
        u = y - y.lo
        out: Any = self._mul_const(x, y.lo)
        for j, bj in enumerate(u.bits[:max(1, (u.hi).bit_length())]):
            term = self.b.ite(Bit(self.b, bj), _shl(x, j), 0)
            out = out + term
        return out

    def _mul_const(self, x: Int, c: int) -> Any:
        if c == 0:
            return 0
        if c < 0:
            return -self._mul_const(x, -c)
        out = None
        for j in range(c.bit_length()):
            if (c >> j) & 1:
                out = _shl(x, j) if out is None else out + _shl(x, j)
        return out

    def square(self, a: Any) -> Any:
        return self.mul(a, a)

    def floordiv(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return a // c
        k = self._pow2(c, "//")
        v = self.lift(a)
        bits = v.extend(max(v.width, k + 1))[k:]
        return Int(self.b, bits, v.lo >> k, v.hi >> k)

    def mod(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return a % c
        k = self._pow2(c, "%")
        v = self.lift(a)
        if k == 0:
            return 0
        bits = v.extend(max(v.width, k))[:k] + [self.b.bdd.false]
        if v.lo >= 0 and v.hi < (1 << k):
            return v
        return Int(self.b, bits, 0, (1 << k) - 1)

    def _pow2(self, c: Any, op: str) -> int:
        if not _const(c) or float(c) <= 0 or not float(c).is_integer() or \
                int(c) & (int(c) - 1):
            raise CompileError(f"'{op}' is compiled only by a positive constant power of two, "
                               f"not by {c!r}")
        return int(c).bit_length() - 1

    def true_divide(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return a / c
        raise CompileError("division '/' of a random value cannot be compiled (the values "
                           "must stay integers; use // by a power of two)")

    # -- comparisons ---------------------------------------------------------------------------
    _SWAP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}

    def compare(self, op: str, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return _PY_CMP[op](a, c)
        if _const(a):
            return self.compare(self._SWAP[op], c, a)
        if isinstance(c, float) and not c.is_integer():
            # an integer against a non-integer constant (inf included)
            if op in ("lt", "le"):
                c = math.floor(c) if math.isfinite(c) else c
                if c == math.inf:
                    return True
                if c == -math.inf:
                    return False
                return self.lift(a) <= c
            if op in ("gt", "ge"):
                c = math.ceil(c) if math.isfinite(c) else c
                if c == -math.inf:
                    return True
                if c == math.inf:
                    return False
                return self.lift(a) >= c
            return op == "ne"
        if isinstance(a, Bit) and isinstance(c, Bit) and op in ("eq", "ne"):
            return (a == c) if op == "eq" else (a != c)
        x = self.lift(a)
        y = self.lift(c)
        return {"lt": x.__lt__, "le": x.__le__, "gt": x.__gt__, "ge": x.__ge__,
                "eq": x.__eq__, "ne": x.__ne__}[op](y)

    lt = partialmethod(compare, "lt")
    le = partialmethod(compare, "le")
    gt = partialmethod(compare, "gt")
    ge = partialmethod(compare, "ge")
    eq = partialmethod(compare, "eq")
    ne = partialmethod(compare, "ne")

    # -- Booleans ------------------------------------------------------------------------------
    def land(self, a: Any, c: Any) -> Any:
        x, y = self.bit(a), self.bit(c)
        if isinstance(x, bool) and isinstance(y, bool):
            return x and y
        return self.node(x) & self.node(y)

    def lor(self, a: Any, c: Any) -> Any:
        x, y = self.bit(a), self.bit(c)
        if isinstance(x, bool) and isinstance(y, bool):
            return x or y
        return self.node(x) | self.node(y)

    def lxor(self, a: Any, c: Any) -> Any:
        x, y = self.bit(a), self.bit(c)
        if isinstance(x, bool) and isinstance(y, bool):
            return x != y
        return self.node(x) ^ self.node(y)

    def lnot(self, a: Any) -> Any:
        x = self.bit(a)
        return (not x) if isinstance(x, bool) else ~x

    def _bitwise(self, name: str) -> Callable:
        def f(a: Any, c: Any) -> Any:
            a, c = self.force(a), self.force(c)
            if _const(a) and _const(c):
                return {"and": a & c, "or": a | c, "xor": a ^ c}[name]
            if all(isinstance(v, (Bit, bool)) for v in (a, c)):
                return {"and": self.land, "or": self.lor, "xor": self.lxor}[name](a, c)
            raise CompileError(f"bitwise '{name}' of random integers cannot be compiled "
                               "(only of Booleans)")
        return f

    def invert(self, a: Any) -> Any:
        a = self.force(a)
        if isinstance(a, (Bit, bool)):
            return self.lnot(a)
        if _const(a):
            return ~a
        raise CompileError("bitwise '~' of a random integer cannot be compiled")

    # -- selection -----------------------------------------------------------------------------
    def where(self, cond: Any, a: Any, c: Any) -> Any:
        cb = self.bit(cond)
        a, c = self.force(a), self.force(c)
        if isinstance(cb, bool):
            return a if cb else c
        if _sentinel(a) or _sentinel(c):
            ea, ec = self._ext(a), self._ext(c)
            return Ext(self.where(cb, ea.fin, ec.fin), self._bit_ite(cb, ea.pos, ec.pos),
                       self._bit_ite(cb, ea.neg, ec.neg))
        if isinstance(a, (Bit, bool)) and isinstance(c, (Bit, bool)):
            return self._bit_ite(cb, a, c)
        if _const(a) and _const(c) and a == c:
            return a
        return self.b.ite(cb, self.lift(a), self.lift(c))

    def _bit_ite(self, cb: Bit, a: Any, c: Any) -> Any:
        if isinstance(a, bool) and isinstance(c, bool) and a == c:
            return a
        return Bit(self.b, self.b.bdd.ite(cb.node, self.node(a).node, self.node(c).node))

    def _ext(self, a: Any) -> Ext:
        if isinstance(a, Ext):
            return a
        if isinstance(a, float) and math.isinf(a):
            return Ext(0, a > 0, a < 0)
        return Ext(a, False, False)

    def maximum(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return max(a, c)
        return self.where(self.lt(a, c), c, a)

    def minimum(self, a: Any, c: Any) -> Any:
        a, c = self.force(a), self.force(c)
        if _const(a) and _const(c):
            return min(a, c)
        return self.where(self.lt(c, a), c, a)

    def clip(self, a: Any, lo: Any, hi: Any) -> Any:
        out = a
        if lo is not None:
            out = self.maximum(out, lo)
        if hi is not None:
            out = self.minimum(out, hi)
        out = self.force(out)
        if isinstance(out, Int) and lo is not None and hi is not None and \
                _const(lo) and _const(hi):
            lo_i, hi_i = max(out.lo, math.ceil(lo)), min(out.hi, math.floor(hi))
            if lo_i <= hi_i:
                out = Int(self.b, out.extend(_width(lo_i, hi_i)), lo_i, hi_i)
        return out

    def sum_list(self, vals: list) -> Any:
        """The sum of ``vals``: a constant, one value, or a :class:`SumOf` of the random parts."""
        vals = [self.force(v) for v in vals]
        const = sum((self.int_const(v) if isinstance(v, float) else v)
                    for v in vals if _const(v))
        parts: list = []
        for v in vals:
            if _const(v):
                continue
            if isinstance(v, SumOf):
                parts.extend(v.parts)
            elif isinstance(v, Ext):
                self.lift(v)        # raises: a sentinel cannot be added
            else:
                parts.append(v)
        if const:
            parts.append(const)
        if not parts:
            return const
        if len(parts) == 1:
            return parts[0]
        return SumOf(self, parts)


def _sentinel(a: Any) -> bool:
    return isinstance(a, Ext) or (isinstance(a, float) and math.isinf(a))


def _shl(x: Int, j: int) -> Int:
    if j == 0:
        return x
    return Int(x.b, [x.b.bdd.false] * j + list(x.bits), x.lo << j, x.hi << j)


_PY_CMP = {"lt": lambda a, c: a < c, "le": lambda a, c: a <= c, "gt": lambda a, c: a > c,
           "ge": lambda a, c: a >= c, "eq": lambda a, c: a == c, "ne": lambda a, c: a != c}


# ------------------------------------------------------------------------------------------
# Sym: the arrays of the Compile interpreter
# ------------------------------------------------------------------------------------------

def _obj(a: Any) -> Any:
    """The object array behind a Sym (other values unchanged)."""
    return a.a if isinstance(a, Sym) else a


def _find_kernels(values: Sequence[Any]) -> Kernels | None:
    for v in values:
        if isinstance(v, Sym):
            return v.k
        if isinstance(v, (list, tuple)):
            k = _find_kernels(v)
            if k is not None:
                return k
    return None


def _wrap(k: Kernels, res: Any) -> Any:
    """A Sym for arrays holding random values, a plain NumPy value for constants."""
    if not isinstance(res, np.ndarray):
        z = np.empty((), dtype=object)
        z[()] = res
        res = z
    if res.dtype != object:
        return res
    flat = res.ravel().tolist()
    if all(_const(v) for v in flat):
        return np.asarray(flat).reshape(res.shape) if flat else np.zeros(res.shape)
    return Sym(k, res)


def _unwrap_all(x: Any) -> Any:
    if isinstance(x, Sym):
        return x.a
    if isinstance(x, list):
        return [_unwrap_all(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_unwrap_all(v) for v in x)
    return x


def _axis_apply(arr: np.ndarray, axis: int | None, f: Callable[[list], Any],
                keepdims: bool = False) -> np.ndarray:
    """``f`` of every 1-D lane of ``arr`` along ``axis`` (None: the whole array)."""
    if axis is None:
        out = np.empty((), dtype=object)
        out[()] = f(arr.ravel().tolist())
        return out.reshape((1,) * arr.ndim) if keepdims else out
    ax = axis % arr.ndim
    moved = np.moveaxis(arr, ax, -1)
    lead = moved.shape[:-1]
    out = np.empty(lead, dtype=object)
    for idx in np.ndindex(*lead) if lead else [()]:
        out[idx] = f(moved[idx].tolist())
    return np.expand_dims(out, ax) if keepdims else out


class Sym(NDArrayOperatorsMixin):
    """An array of symbolic bounded integers and Booleans (NumPy's operators act on it)."""

    __array_priority__ = 1000

    def __init__(self, k: Kernels, a: np.ndarray):
        self.k = k
        self.a = a

    # -- array attributes ----------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self.a.shape

    @property
    def ndim(self) -> int:
        return self.a.ndim

    @property
    def size(self) -> int:
        return self.a.size

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(object)

    @property
    def T(self) -> Sym:
        return Sym(self.k, self.a.T)

    def __len__(self) -> int:
        return len(self.a)

    def __iter__(self):
        for i in range(len(self.a)):
            yield self[i]

    def __repr__(self) -> str:
        return f"Sym(shape={self.shape})"

    def __bool__(self):
        raise CompileError(_CONTROL)

    def __array__(self, dtype=None, copy=None):
        raise CompileError(
            "a random value was converted to a plain NumPy array (for example stored into an "
            "array made with np.zeros/np.empty, or passed to np.asarray), which cannot be "
            "compiled; build arrays from the random values instead (np.stack, np.where)")

    def __getitem__(self, key: Any) -> Any:
        key = _unwrap_all(key)
        if isinstance(key, np.ndarray) and key.dtype == object:
            raise CompileError("indexing with a random index cannot be compiled; use "
                               "privet.ops.where")
        return _wrap(self.k, self.a[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self.a = self.a.copy() if not self.a.flags.writeable else self.a
        self.a[_unwrap_all(key)] = _unwrap_all(value)

    # -- NumPy protocols -------------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        k = self.k
        if kwargs.get("out") is not None:
            raise CompileError(f"np.{ufunc.__name__}(..., out=...) cannot be compiled")
        name = ufunc.__name__
        args = [_obj(i) for i in inputs]
        if method == "__call__":
            f = _UFUNCS.get(name)
            if f is None:
                raise CompileError(f"np.{name} has no meaning on random integers")
            res = np.frompyfunc(f(k), ufunc.nin, 1)(*args)
            return _wrap(k, res)
        if method == "reduce":
            axis = kwargs.get("axis", 0)
            keep = bool(kwargs.get("keepdims", False))
            red = _REDUCE.get(name)
            if red is None:
                raise CompileError(f"np.{name}.reduce cannot be compiled")
            return _wrap(k, _axis_apply(np.asarray(args[0], dtype=object), axis,
                                        red(k), keep))
        if method == "accumulate" and name == "add":
            return k_cumsum(k, args[0], kwargs.get("axis", 0))
        raise CompileError(f"np.{name}.{method} cannot be compiled")

    def __array_function__(self, func, types, args, kwargs):
        k = self.k
        f = _FUNCTIONS.get(func.__name__)
        if f is not None:
            return f(k, *args, **kwargs)
        if func.__name__ in _STRUCTURAL:
            res = func(*_unwrap_all(list(args)), **{kk: _unwrap_all(v)
                                                    for kk, v in kwargs.items()})
            if isinstance(res, (list, tuple)):
                return type(res)(_wrap(k, r) if isinstance(r, np.ndarray) else r for r in res)
            return _wrap(k, res) if isinstance(res, np.ndarray) else res
        raise CompileError(f"np.{func.__name__} has no meaning on random integers in the "
                           "Compile interpreter")

    # -- methods ----------------------------------------------------------------------------------
    def sum(self, axis=None, keepdims=False, **kw):
        return k_sum(self.k, self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis=None, **kw):
        return k_cumsum(self.k, self, axis)

    def max(self, axis=None, keepdims=False, **kw):
        return k_reduce(self.k, self, axis, "maximum", keepdims)

    def min(self, axis=None, keepdims=False, **kw):
        return k_reduce(self.k, self, axis, "minimum", keepdims)

    def any(self, axis=None, keepdims=False, **kw):
        return k_reduce(self.k, self, axis, "logical_or", keepdims)

    def all(self, axis=None, keepdims=False, **kw):
        return k_reduce(self.k, self, axis, "logical_and", keepdims)

    def argmax(self, axis=None, **kw):
        return k_argext(self.k, self, axis, "gt")

    def argmin(self, axis=None, **kw):
        return k_argext(self.k, self, axis, "lt")

    def clip(self, a_min=None, a_max=None, **kw):
        return k_clip(self.k, self, a_min, a_max)

    def astype(self, dtype, **kw):
        k = self.k
        if np.dtype(dtype) == np.dtype(bool):
            f = k.bit
        else:
            def f(v):
                v = k.force(v)
                if isinstance(v, (Bit, bool)):
                    return k.lift(v) if isinstance(v, Bit) else int(v)
                return v
        return _wrap(k, np.frompyfunc(f, 1, 1)(self.a))

    def reshape(self, *shape, **kw):
        return Sym(self.k, self.a.reshape(*shape, **kw))

    def ravel(self, *a, **kw):
        return Sym(self.k, self.a.ravel())

    flatten = ravel

    def copy(self, *a, **kw):
        return Sym(self.k, self.a.copy())

    def transpose(self, *axes):
        return Sym(self.k, self.a.transpose(*axes))

    def squeeze(self, axis=None):
        return Sym(self.k, self.a.squeeze(axis))

    def tolist(self):
        raise CompileError("a random array was turned into a Python list (tolist), which "
                           "cannot be compiled")


def _u(name: str) -> Callable[[Kernels], Callable]:
    return lambda k: getattr(k, name)


_UFUNCS: dict[str, Callable[[Kernels], Callable]] = {
    "add": _u("add"), "subtract": _u("sub"), "multiply": _u("mul"), "negative": _u("neg"),
    "positive": _u("pos"), "absolute": _u("absolute"), "square": _u("square"),
    "floor_divide": _u("floordiv"), "remainder": _u("mod"), "true_divide": _u("true_divide"),
    "less": _u("lt"), "less_equal": _u("le"), "greater": _u("gt"),
    "greater_equal": _u("ge"), "equal": _u("eq"), "not_equal": _u("ne"),
    "logical_and": _u("land"), "logical_or": _u("lor"), "logical_xor": _u("lxor"),
    "logical_not": _u("lnot"), "maximum": _u("maximum"), "minimum": _u("minimum"),
    "fmax": _u("maximum"), "fmin": _u("minimum"), "invert": _u("invert"),
    "bitwise_and": lambda k: k._bitwise("and"), "bitwise_or": lambda k: k._bitwise("or"),
    "bitwise_xor": lambda k: k._bitwise("xor"),
    "clip": lambda k: k.clip,
}


def _fold(op: str) -> Callable[[Kernels], Callable[[list], Any]]:
    def make(k: Kernels) -> Callable[[list], Any]:
        f = getattr(k, op)

        def run(vals: list) -> Any:
            if not vals:
                raise CompileError(f"a {op} over an empty axis cannot be compiled")
            out = vals[0]
            for v in vals[1:]:
                out = f(out, v)
            return k.force(out)
        return run
    return make


_REDUCE: dict[str, Callable[[Kernels], Callable[[list], Any]]] = {
    "add": lambda k: k.sum_list, "multiply": _fold("mul"), "maximum": _fold("maximum"),
    "minimum": _fold("minimum"), "logical_or": _fold("lor"), "logical_and": _fold("land"),
    "fmax": _fold("maximum"), "fmin": _fold("minimum"),
}


def _as_obj(x: Any) -> np.ndarray:
    if isinstance(x, Sym):
        return x.a
    arr = np.asarray(x)
    return arr.astype(object) if arr.dtype != object else arr


def k_sum(k: Kernels, a: Any, axis=None, keepdims=False, **kw) -> Any:
    return _wrap(k, _axis_apply(_as_obj(a), axis, k.sum_list, keepdims))


def k_reduce(k: Kernels, a: Any, axis, op: str, keepdims=False) -> Any:
    return _wrap(k, _axis_apply(_as_obj(a), axis, _REDUCE[op](k), keepdims))


def k_cumsum(k: Kernels, a: Any, axis=None, **kw) -> Any:
    arr = _as_obj(a)
    if axis is None:
        arr, axis = arr.ravel(), 0
    moved = np.moveaxis(arr, axis, -1).copy()
    for idx in np.ndindex(*moved.shape[:-1]) if moved.ndim > 1 else [()]:
        lane = moved[idx]
        acc: Any = 0
        for j in range(lane.shape[-1]):
            acc = k.add(acc, lane[j])
            lane[j] = acc
    return _wrap(k, np.moveaxis(moved, -1, axis))


def k_argext(k: Kernels, a: Any, axis, op: str) -> Any:
    """Index of the first largest (``gt``) or smallest (``lt``) entry, as NumPy breaks ties."""

    def lane(vals: list) -> Any:
        vals = [k.force(v) for v in vals]
        best, idx = vals[0], 0
        for i, v in enumerate(vals[1:], 1):
            better = k.compare(op, v, best)
            idx = k.where(better, i, idx)
            best = k.where(better, v, best)
        return idx

    arr = _as_obj(a)
    if axis is None:
        arr, axis = arr.ravel(), 0
    return _wrap(k, _axis_apply(arr, axis, lane))


def k_clip(k: Kernels, a: Any, a_min=None, a_max=None, **kw) -> Any:
    lo = _as_obj(a_min) if a_min is not None else None
    hi = _as_obj(a_max) if a_max is not None else None
    f = np.frompyfunc(lambda v, x, y: k.clip(v, x, y), 3, 1)
    return _wrap(k, f(_as_obj(a), lo if lo is not None else None,
                      hi if hi is not None else None))


def k_where(k: Kernels, cond: Any, a: Any = None, c: Any = None) -> Any:
    if a is None or c is None:
        raise CompileError("np.where with one argument (the indices) cannot be compiled")
    f = np.frompyfunc(k.where, 3, 1)
    return _wrap(k, f(_as_obj(cond), _as_obj(a), _as_obj(c)))


def _ufunc_fn(name: str) -> Callable:
    def run(k: Kernels, *args, **kw):
        f = _UFUNCS[name](k)
        return _wrap(k, np.frompyfunc(f, len(args), 1)(*[_as_obj(x) for x in args]))
    return run


def _identity(k: Kernels, a: Any, *args, **kw) -> Any:
    return a


def _count_nonzero(k: Kernels, a: Any, axis=None, **kw) -> Any:
    bits = np.frompyfunc(lambda v: k.where(k.bit(v), 1, 0), 1, 1)(_as_obj(a))
    return k_sum(k, bits, axis=axis)


_FUNCTIONS: dict[str, Callable] = {
    "sum": k_sum, "cumsum": k_cumsum, "clip": k_clip, "where": k_where,
    "max": lambda k, a, axis=None, keepdims=False, **kw: k_reduce(k, a, axis, "maximum",
                                                                  keepdims),
    "amax": lambda k, a, axis=None, keepdims=False, **kw: k_reduce(k, a, axis, "maximum",
                                                                   keepdims),
    "min": lambda k, a, axis=None, keepdims=False, **kw: k_reduce(k, a, axis, "minimum",
                                                                  keepdims),
    "amin": lambda k, a, axis=None, keepdims=False, **kw: k_reduce(k, a, axis, "minimum",
                                                                   keepdims),
    "any": lambda k, a, axis=None, keepdims=False, **kw: k_reduce(k, a, axis, "logical_or",
                                                                  keepdims),
    "all": lambda k, a, axis=None, keepdims=False, **kw: k_reduce(k, a, axis, "logical_and",
                                                                  keepdims),
    "argmax": lambda k, a, axis=None, **kw: k_argext(k, a, axis, "gt"),
    "argmin": lambda k, a, axis=None, **kw: k_argext(k, a, axis, "lt"),
    "count_nonzero": _count_nonzero,
    "round": _identity, "around": _identity, "rint": _identity, "floor": _identity,
    "ceil": _identity, "trunc": _identity, "fix": _identity,
    "maximum": _ufunc_fn("maximum"), "minimum": _ufunc_fn("minimum"),
    "abs": _ufunc_fn("absolute"), "absolute": _ufunc_fn("absolute"),
    "logical_and": _ufunc_fn("logical_and"), "logical_or": _ufunc_fn("logical_or"),
    "logical_not": _ufunc_fn("logical_not"),
}

_STRUCTURAL = {
    "broadcast_to", "reshape", "concatenate", "stack", "hstack", "vstack", "column_stack",
    "atleast_1d", "atleast_2d", "atleast_3d", "squeeze", "expand_dims", "transpose",
    "moveaxis", "swapaxes", "flip", "fliplr", "flipud", "take", "tile", "repeat", "ravel",
    "copy", "shape", "ndim", "size", "broadcast_arrays", "roll", "diagonal", "split",
    "array_split", "delete", "insert", "append", "take_along_axis", "result_type",
}


# ------------------------------------------------------------------------------------------
# The ops backend and the noise interpreter
# ------------------------------------------------------------------------------------------

class CompileOps:
    """:mod:`privet.ops` on Sym arrays (NumPy's meaning when no argument is random)."""

    name = "compile"

    def __init__(self):
        self.hard = ops.HardOps()

    def _k(self, *args) -> Kernels | None:
        return _find_kernels(args)

    def argmax(self, x, axis=-1):
        k = self._k(x)
        return self.hard.argmax(x, axis) if k is None else k_argext(k, x, axis, "gt")

    def argmin(self, x, axis=-1):
        k = self._k(x)
        return self.hard.argmin(x, axis) if k is None else k_argext(k, x, axis, "lt")

    def max(self, x, axis=-1):
        k = self._k(x)
        return self.hard.max(x, axis) if k is None else k_reduce(k, x, axis, "maximum")

    def min(self, x, axis=-1):
        k = self._k(x)
        return self.hard.min(x, axis) if k is None else k_reduce(k, x, axis, "minimum")

    def where(self, cond, a, b):
        k = self._k(cond, a, b)
        return self.hard.where(cond, a, b) if k is None else k_where(k, cond, a, b)

    def cumsum(self, x, axis=-1):
        k = self._k(x)
        return self.hard.cumsum(x, axis) if k is None else k_cumsum(k, x, axis)

    def _binary(name: str):  # noqa: N805 - a method factory
        def f(self, a, b):
            k = self._k(a, b)
            if k is None:
                return getattr(self.hard, name)(a, b)
            return _ufunc_fn(_OPS_UFUNC[name])(k, a, b)
        return f

    lt = _binary("lt")
    le = _binary("le")
    gt = _binary("gt")
    ge = _binary("ge")
    eq = _binary("eq")
    ne = _binary("ne")
    logical_and = _binary("logical_and")
    logical_or = _binary("logical_or")

    def logical_not(self, a):
        k = self._k(a)
        return self.hard.logical_not(a) if k is None else _ufunc_fn("logical_not")(k, a)


_OPS_UFUNC = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
              "eq": "equal", "ne": "not_equal", "logical_and": "logical_and",
              "logical_or": "logical_or"}

ops.register("compile", CompileOps())


class Compile(Noise):
    """Noise whose draws are symbolic bounded integers of the builder ``b`` (batch size 1).

    Scalar draws of a finite discrete distribution become ``b.discrete(probs, values)`` (a
    chain of weighted flips), declared lazily at first use; vector-valued discrete draws
    share one symbolic index; a permutation is built by Fisher-Yates from independent
    uniform choices (uniform over the m! permutations, as the sampler's argsort).
    """

    semantics = "compile"

    def __init__(self, b: Builder):
        self.b = b
        self.k = Kernels(b)
        self.size = 1

    def _draw(self, dist: Dist, shape: Shape) -> Any:
        b = self.b
        if not dist.is_finite:
            why = "continuous" if not dist.is_discrete else "unbounded (give low and high)"
            raise CompileError(f"the noise {dist.describe()} is {why}, so it has no finite "
                               "BDD encoding")
        if dist.kind == "permutation":
            return Sym(self.k, self._permutation(int(dist.params["m"])).reshape(1, -1))
        values, probs = dist.support(exact=b.exact)
        values = np.asarray(values)
        vals = values.reshape(len(values), -1)
        if not np.all(vals == np.round(vals)):
            raise CompileError(f"the noise {dist.describe()} takes non-integer values")
        vals = vals.astype(np.int64)
        n = int(np.prod(shape, dtype=np.int64))
        ev = values.shape[1:]
        m = int(np.prod(ev, dtype=np.int64)) if ev else 1
        out = np.empty((n, m), dtype=object)
        cols = [vals[:, j].tolist() for j in range(m)]
        for i in range(n):
            if not ev:
                out[i, 0] = _Lazy(lambda: b.discrete(probs, cols[0]))
                continue
            index = _Lazy(lambda: b.discrete(probs, list(range(len(vals)))))
            for j in range(m):
                out[i, j] = _Lazy(lambda col=cols[j], index=index:
                                  _lookup(self.k, index.get(), col))
        return Sym(self.k, out.reshape((1, *shape, *ev)))

    def _permutation(self, m: int) -> np.ndarray:
        k = self.k
        perm: list[Any] = list(range(m))
        for i in range(m - 1):
            d = self.b.uniform(0, m - 1 - i)
            new = list(perm)
            picked: Any = perm[i]
            for j in range(i + 1, m):
                take = d == (j - i)
                picked = k.where(take, perm[j], picked)
                new[j] = k.where(take, perm[i], perm[j])
            new[i] = picked
            perm = new
        out = np.empty(m, dtype=object)
        for j, v in enumerate(perm):
            out[j] = v
        return out


def _lookup(k: Kernels, index: Int, table: list[int]) -> Any:
    out: Any = table[-1]
    for i in range(len(table) - 2, -1, -1):
        out = k.where(index == i, table[i], out)
    return out


# ------------------------------------------------------------------------------------------
# Mechanisms as BDD-language programs
# ------------------------------------------------------------------------------------------

def _input_domain(mech: Mechanism, length: int | None) -> tuple[int, int, int]:
    dom = mech.domain
    n = length if length is not None else dom.length
    if isinstance(dom.length, tuple) and isinstance(n, int) and not (
            dom.length[0] <= n <= dom.length[1]):
        raise InputError(f"length {n} is outside the domain's {dom.length[0]}..{dom.length[1]}.")
    if not (dom.integer and isinstance(n, int) and math.isfinite(dom.low)
            and math.isfinite(dom.high)):
        raise CompileError(
            f"the input domain of {mech.name!r} ({dom.describe()}) is not a finite set of "
            "integer lists of one length; give length=n or an integer Domain")
    return int(n), int(dom.low), int(dom.high)


def outputs_of(k: Kernels, out: Any) -> list:
    """The flat output values of one run (batch size 1): Int, Bit, constants, Coded, SumOf."""
    arr = out.a if isinstance(out, Sym) else np.asarray(out)
    if arr.ndim == 0 or arr.shape[0] != 1:
        got = "a scalar" if arr.ndim == 0 else f"{arr.shape[0]} rows"
        raise MechanismError(f"the mechanism returned {got} for a batch of 1; the output "
                             "needs one row per sample.")
    flat = []
    for v in np.asarray(arr[0], dtype=object).ravel().tolist():
        v = k.force(v)
        if _sentinel(v):
            v = _code(k, k._ext(v))
        flat.append(v)
    return flat


def _code(k: Kernels, e: Ext) -> Coded:
    """A sentinel-capable value as one integer: the finite part, hi+1 for +inf, lo-1 for -inf."""
    from .bdd import tighten

    fin = tighten(k.lift(e.fin))
    pos = k.node(k.bit(e.pos))
    neg = k.node(k.bit(e.neg))
    b = k.b
    decode: dict[int, float] = {}
    v: Any = fin
    if neg.node != b.bdd.false:
        v = b.ite(neg, fin.lo - 1, v)
        decode[fin.lo - 1] = -math.inf
    if pos.node != b.bdd.false:
        v = b.ite(pos, fin.hi + 1, v)
        decode[fin.hi + 1] = math.inf
    return Coded(k.lift(v), decode)


def as_program(mech: Mechanism, args: Mapping[str, Any] | None = None,
               length: int | None = None) -> Program:
    """The BDD-language program that runs ``mech`` under the :class:`Compile` interpreter.

    The program's input is the mechanism's integer domain at ``length``; compiled with a
    symbolic input it holds every input at once, compiled for a fixed input it runs the
    mechanism on a plain NumPy array (so Python control flow on the input is allowed).
    """
    mech.require("enumerate", "the Compile interpreter")
    n, low, high = _input_domain(mech, length)
    resolved = mech.resolve_args(args)

    def run(p: Builder, x: Any) -> list:
        noise = Compile(p)
        if isinstance(x, _LazyInputs):
            arr = np.empty(n, dtype=object)
            for i in range(n):
                arr[i] = _Lazy(lambda i=i: x[i])
            data: Any = Sym(noise.k, arr)
        else:
            data = np.asarray(x, dtype=np.int64)
        try:
            with ops.semantics("compile"):
                out = mech.fn(noise, data, **resolved)
            return outputs_of(noise.k, out)
        except (CompileError, NoiseError):
            raise
        except PrivetError as err:
            raise CompileError(str(err).rstrip(".")) from err
        except RecursionError:
            raise CompileError("the computation is too deep to compile") from None
        except Exception as err:
            raise CompileError(f"{type(err).__name__} while compiling: {err}") from err

    return Program(fn=run, name=mech.name, length=n, low=low, high=high, args={},
                   neighbors=mech.neighbors, epsilon=mech.epsilon, truth=None,
                   description=mech.description)


def compile_mechanism(mech: Mechanism, args: Mapping[str, Any] | None = None,
                      exact: bool = False, length: int | None = None,
                      x: Sequence[int] | None = None):
    """Compile ``mech`` (symbolic input when ``x`` is None, else for the input ``x``)."""
    return as_program(mech, args, length).compile(exact=exact, x=x)


def distributions(mech: Mechanism, inputs: Sequence[Sequence[int]], *,
                  args: Mapping[str, Any] | None = None, exact: bool = True) -> list:
    """The exact output distribution (a :class:`~privet.core.noise.Distribution`) of every
    input, from one compilation with a symbolic input (one per input when that fails)."""
    rows = [tuple(int(v) for v in np.asarray(x).ravel()) for x in inputs]
    if not rows:
        return []
    try:
        c = compile_mechanism(mech, args, exact, len(rows[0]))
        return [c.distribution(r) for r in rows]
    except CompileError:
        prog = as_program(mech, args, len(rows[0]))
        return [prog.compile(exact=exact, x=r).distribution(r) for r in rows]


__all__ = ["Compile", "CompileError", "CompileOps", "Ext", "Kernels", "SumOf", "Sym",
           "as_program", "compile_mechanism", "distributions", "outputs_of"]
