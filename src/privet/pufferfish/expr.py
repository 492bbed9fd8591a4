"""Probabilities with unknown parameters: small arithmetic expressions over named parameters.

An entry of an HMM or a prior may be a number, a :class:`~fractions.Fraction` or a string
such as ``"2*p*(1-p)"``. Strings are parsed once (Python syntax restricted to ``+ - * /``,
integer powers, numbers and names) and then evaluated under three semantics through the
same operator overloading: exact rationals (a parameter valuation of Fractions), z3 terms
(parameters as z3 reals, Algorithm 1 of FAIER) and outward-rounded intervals (the sound
branch-and-bound of :mod:`privet.pufferfish.smt`).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..core.errors import ParameterError
from ..core.safe import check_expression, literal, parse_rational


@dataclass(frozen=True)
class Expr:
    """A parsed arithmetic expression over parameter names (see module docstring)."""

    text: str
    tree: ast.AST
    names: frozenset

    def __str__(self) -> str:
        return self.text

    def evaluate(self, env: Mapping[str, Any], const: Callable[[Fraction], Any] = lambda q: q
                 ) -> Any:
        """Value with names from ``env``; numeric literals pass through ``const``."""
        return _eval(self.tree, env, const)


def parse(text: str) -> Expr:
    """Parse ``text`` into an :class:`Expr`; :class:`ParameterError` on anything else.

    The syntax and its bounds (length, literal digits, total power) are those of
    :func:`privet.core.safe.check_expression`, so ``3**999999999`` is refused before any
    evaluation."""
    tree = check_expression(text, "expression")
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return Expr(str(text).strip(), tree, frozenset(names))


def _eval(node: ast.AST, env: Mapping[str, Any], const: Callable) -> Any:
    if isinstance(node, ast.Constant):
        return const(literal(node.value))
    if isinstance(node, ast.Name):
        try:
            return env[node.id]
        except KeyError:
            raise ParameterError(f"unknown parameter {node.id!r}; declare it under "
                                 "'parameters'.") from None
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, const)
        return -v if isinstance(node.op, ast.USub) else v
    a = _eval(node.left, env, const)
    if isinstance(node.op, ast.Pow):
        n = node.right.value
        out = const(Fraction(1))
        for _ in range(n):
            out = out * a
        return out
    b = _eval(node.right, env, const)
    if isinstance(node.op, ast.Div) and isinstance(b, Fraction) and b == 0:
        raise ParameterError("an expression divides by zero.")
    if isinstance(node.op, ast.Add):
        return a + b
    if isinstance(node.op, ast.Sub):
        return a - b
    if isinstance(node.op, ast.Mult):
        return a * b
    return a / b


def entry(value: Any) -> Fraction | Expr:
    """A probability entry as an exact Fraction, or an :class:`Expr` when it is symbolic."""
    if isinstance(value, Expr):
        return value if value.names else Fraction(value.evaluate({}))
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise ParameterError(f"{value!r} is not a probability.")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"{value!r} is not a probability.")
        return Fraction(str(value))  # decimal reading: 0.1 means 1/10
    if hasattr(value, "item") and not isinstance(value, str):  # NumPy scalars
        return entry(value.item())
    if isinstance(value, str):
        text = value.strip()
        try:
            return parse_rational(text)
        except ParameterError:
            pass
        e = parse(text)
        return e if e.names else Fraction(e.evaluate({}))
    raise ParameterError(f"{value!r} is not a number, Fraction or expression string.")


def is_symbolic(value: Any) -> bool:
    return isinstance(value, Expr)


def exact_value(value: Fraction | Expr, params: Mapping[str, Fraction] | None = None
                ) -> Fraction:
    """Exact value of an entry under a parameter valuation."""
    if isinstance(value, Expr):
        return Fraction(value.evaluate(params or {}))
    return Fraction(value)


# -- outward-rounded interval arithmetic (sound enclosure for branch-and-bound) -------------

def _down(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


class Interval:
    """A closed interval [lo, hi] of reals; every operation rounds outward, so it encloses."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float, hi: float | None = None):
        self.lo = float(lo)
        self.hi = float(lo if hi is None else hi)

    @staticmethod
    def of(q: Any) -> Interval:
        if isinstance(q, Interval):
            return q
        q = Fraction(q)
        f = float(q)
        lo = f if Fraction(f) <= q else _down(f)
        hi = f if Fraction(f) >= q else _up(f)
        return Interval(lo, hi)

    def __repr__(self) -> str:
        return f"[{self.lo!r}, {self.hi!r}]"

    def __add__(self, o: Any) -> Interval:
        o = Interval.of(o)
        return Interval(_down(self.lo + o.lo), _up(self.hi + o.hi))

    __radd__ = __add__

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __sub__(self, o: Any) -> Interval:
        return self + (-Interval.of(o))

    def __rsub__(self, o: Any) -> Interval:
        return Interval.of(o) + (-self)

    def __mul__(self, o: Any) -> Interval:
        o = Interval.of(o)
        ps = [self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi]
        ps = [0.0 if math.isnan(p) else p for p in ps]  # 0 * inf
        return Interval(_down(min(ps)), _up(max(ps)))

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> Interval:
        o = Interval.of(o)
        if o.lo <= 0 <= o.hi:
            return Interval(-math.inf, math.inf)
        return self * Interval(_down(1 / o.hi), _up(1 / o.lo))

    def __rtruediv__(self, o: Any) -> Interval:
        return Interval.of(o) / self


# -- exact multivariate polynomials (for clearing denominators and Bernstein bounds) ---------

class NotPolynomial(ValueError):
    """An expression divides by a parameter, so it is not a polynomial."""


class Poly:
    """A polynomial with Fraction coefficients: ``{exponent tuple: coefficient}``."""

    __slots__ = ("n", "terms")

    def __init__(self, n: int, terms: dict | None = None):
        self.n = n
        self.terms = {e: c for e, c in (terms or {}).items() if c}

    @staticmethod
    def const(n: int, c: Any) -> Poly:
        return Poly(n, {(0,) * n: Fraction(c)})

    @staticmethod
    def var(n: int, i: int) -> Poly:
        e = [0] * n
        e[i] = 1
        return Poly(n, {tuple(e): Fraction(1)})

    def _lift(self, o: Any) -> Poly:
        return o if isinstance(o, Poly) else Poly.const(self.n, o)

    def __add__(self, o: Any) -> Poly:
        o = self._lift(o)
        t = dict(self.terms)
        for e, c in o.terms.items():
            t[e] = t.get(e, Fraction(0)) + c
        return Poly(self.n, t)

    __radd__ = __add__

    def __neg__(self) -> Poly:
        return Poly(self.n, {e: -c for e, c in self.terms.items()})

    def __sub__(self, o: Any) -> Poly:
        return self + (-self._lift(o))

    def __rsub__(self, o: Any) -> Poly:
        return self._lift(o) - self

    def __mul__(self, o: Any) -> Poly:
        o = self._lift(o)
        t: dict = {}
        for e1, c1 in self.terms.items():
            for e2, c2 in o.terms.items():
                e = tuple(a + b for a, b in zip(e1, e2))
                t[e] = t.get(e, Fraction(0)) + c1 * c2
        return Poly(self.n, t)

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> Poly:
        o = self._lift(o)
        if set(o.terms) - {(0,) * self.n}:
            raise NotPolynomial("division by a parameter")
        c = o.terms.get((0,) * self.n)
        if not c:
            raise ZeroDivisionError("division by zero in an expression")
        return self * Poly.const(self.n, 1 / c)

    def degrees(self) -> tuple:
        return tuple(max((e[i] for e in self.terms), default=0) for i in range(self.n))

    def __call__(self, point: Any) -> Fraction:
        total = Fraction(0)
        for e, c in self.terms.items():
            v = c
            for x, k in zip(point, e):
                if k:
                    v *= Fraction(x) ** k
            total += v
        return total


def to_poly(value: Any, names: list) -> Poly:
    """An entry as a :class:`Poly` over ``names``; :class:`NotPolynomial` if it is not one."""
    n = len(names)
    if isinstance(value, Expr):
        env = {nm: Poly.var(n, i) for i, nm in enumerate(names)}
        out = value.evaluate(env, lambda q: Poly.const(n, q))
        return out if isinstance(out, Poly) else Poly.const(n, out)
    return Poly.const(n, value)
