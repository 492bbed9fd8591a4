"""Noise expressions and the finite grammar they are enumerated from (KOLAHAL Sec. IV.D).

An expression fills one hole of a sketch with a noise scale: either ⊥ (no noise) or a
product ``k * f1^p1 * f2^p2 ...`` of a coefficient and powers of *factors*, each a number
computed from the input and the non-private arguments. The default grammar is the one of
the paper's appendix,

    [1-4] x |q|^[0-2] x (1/ε)^[1-2]   or   ⊥

(|q| is the length of the query vector, the private input). Users extend it with their own
factors, for example ``Grammar.default().extend("N", powers=(0, 1))`` for an argument ``N``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import PrivetError


def _length(n: int, args: Mapping[str, Any]) -> float:
    return float(n)


def _inv_eps(n: int, args: Mapping[str, Any]) -> float:
    return 1.0 / float(args["epsilon"])


@dataclass(frozen=True)
class Factor:
    """A named quantity an expression may raise to a power: ``value(len(x), args)``."""

    name: str
    symbol: str
    value: Callable[[int, Mapping[str, Any]], float] = field(compare=False, repr=False)


LENGTH = Factor("length", "|q|", _length)
INV_EPSILON = Factor("inv_epsilon", "1/ε", _inv_eps)


def arg_factor(name: str, symbol: str | None = None) -> Factor:
    """A factor that reads the non-private argument ``name``."""

    def value(n: int, args: Mapping[str, Any]) -> float:
        if name not in args:
            raise PrivetError(f"the grammar uses argument {name!r}, which the sketch lacks.")
        return float(args[name])

    return Factor(name, symbol or name, value)


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Expr:
    """One noise expression: ``coef * prod(factor ** power)``; ``coef=None`` is ⊥ (no noise)."""

    coef: float | None
    terms: tuple[tuple[Factor, int], ...] = ()

    @property
    def bottom(self) -> bool:
        return self.coef is None

    def value(self, n: int, args: Mapping[str, Any]) -> float:
        """The concrete scale at input length ``n`` and arguments ``args`` (0.0 for ⊥)."""
        if self.coef is None:
            return 0.0
        v = float(self.coef)
        for f, p in self.terms:
            if p:
                v *= f.value(n, args) ** p
        return v

    def describe(self) -> str:
        if self.coef is None:
            return "⊥"
        num = [] if self.coef == 1 else [_num(self.coef)]
        den = []
        for f, p in self.terms:
            if p == 0:
                continue
            if f.symbol.startswith("1/"):
                base = f.symbol[2:]
                den.append(base + (str(p).translate(_SUPERSCRIPT) if p != 1 else ""))
            else:
                num.append(f.symbol + (str(p).translate(_SUPERSCRIPT) if p != 1 else ""))
        top = "·".join(num) or "1"
        return top + ("/" + "·".join(den) if den else "")

    def key(self) -> tuple:
        """A hashable, JSON-friendly identity: ``(coef, ((factor, power), ...))``."""
        return (self.coef, tuple((f.name, p) for f, p in self.terms if p))

    def __str__(self) -> str:
        return self.describe()


BOTTOM = Expr(None)


def _num(c: float) -> str:
    return str(int(c)) if float(c).is_integer() else f"{c:g}"


@dataclass(frozen=True)
class Grammar:
    """A finite grammar of noise expressions: coefficients x factor powers, or ⊥.

    ``factors`` pairs each :class:`Factor` with the powers it may take. ``bottom`` allows ⊥.
    """

    coefficients: tuple[float, ...] = (1, 2, 3, 4)
    factors: tuple[tuple[Factor, tuple[int, ...]], ...] = (
        (LENGTH, (0, 1, 2)),
        (INV_EPSILON, (1, 2)),
    )
    bottom: bool = True

    @staticmethod
    def default() -> Grammar:
        """The paper's grammar: [1-4] x |q|^[0-2] x (1/ε)^[1-2] or ⊥."""
        return Grammar()

    def extend(self, name: str, powers: Sequence[int] = (0, 1), symbol: str | None = None,
               value: Callable[[int, Mapping[str, Any]], float] | None = None) -> Grammar:
        """A grammar with one more factor (an argument ``name`` unless ``value`` is given)."""
        factor = Factor(name, symbol or name, value) if value else arg_factor(name, symbol)
        return Grammar(self.coefficients, (*self.factors, (factor, tuple(powers))), self.bottom)

    def expressions(self) -> list[Expr]:
        """Every expression of the grammar (⊥ first when allowed)."""
        out = [BOTTOM] if self.bottom else []
        names = [f for f, _ in self.factors]
        for coef in self.coefficients:
            for powers in itertools.product(*(p for _, p in self.factors)):
                out.append(Expr(coef, tuple(zip(names, powers))))
        return out

    def vectors(self, holes: int) -> Iterator[tuple[Expr, ...]]:
        """Every vector of expressions for ``holes`` holes."""
        return itertools.product(self.expressions(), repeat=holes)

    def size(self, holes: int) -> int:
        return len(self.expressions()) ** holes

    def describe(self) -> str:
        coefs = self.coefficients
        parts = [f"[{_num(min(coefs))}-{_num(max(coefs))}]" if len(coefs) > 1 else _num(coefs[0])]
        for f, powers in self.factors:
            parts.append(f"({f.symbol})^[{min(powers)}-{max(powers)}]")
        return " × ".join(parts) + (" or ⊥" if self.bottom else "")


def parse_expr(text: str, grammar: Grammar | None = None) -> Expr:
    """The grammar expression whose description is ``text`` (e.g. ``"2/ε"``, ``"⊥"``)."""
    g = grammar or Grammar.default()
    norm = text.replace(" ", "").replace("*", "·").replace("eps", "ε").replace("^2", "²")
    if norm in ("⊥", "bot", "none", "None"):
        return BOTTOM
    for e in g.expressions():
        if e.describe() == norm:
            return e
    raise PrivetError(f"{text!r} is not an expression of the grammar {g.describe()}.")


def same_value(a: Expr, b: Expr, n: int, args: Mapping[str, Any]) -> bool:
    return math.isclose(a.value(n, args), b.value(n, args), rel_tol=1e-12, abs_tol=1e-12)
