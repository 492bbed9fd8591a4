"""Exact inference for outputs that are sums of independent parts, by convolution.

When a compiled mechanism's single output is ``c + t_1 + ... + t_m`` (a :class:`~privet.
exact.compile.SumOf`) whose parts draw on pairwise disjoint noise variables and each read at
most one input coordinate, the parts are independent given the input, so the output's
distribution is the convolution of theirs: with generating functions,
``P(y | x) = [z^y] z^c prod_i G_i(z; x_i)``. Parts with the same conditional table (RRcount:
every bit is one of two) are grouped, so an input needs one power per kind and value of its
coordinate, and products of a few polynomials: polynomial in the input length, where the
bit-level BDD of the sum (RRcount, Sec. V-D of the WMC paper) grows quadratically and its
weighted model count runs in Python per node.

Probabilities are exact (integer polynomials over one common denominator; ``python-flint``
multiplies them when installed, Python integers otherwise). Accuracy windows
(:meth:`Counted.window_masses`) are screened in floating point (non-negative terms only, so
the relative error is tiny) and the inputs whose mass could be among the smallest are then
computed exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.noise import Distribution
from .bdd import Builder, Int, Program, _LazyInputs
from .compile import SumOf

try:  # python-flint: fast exact polynomial arithmetic (optional)
    import flint as _flint
except ImportError:  # pragma: no cover - the pure-Python fallback is tested directly
    _flint = None

MAX_PART_NOISE = 16       # noise variables of one part (its table is enumerated)
SCREEN_TOL = 1e-9         # relative tolerance of the float screen


class NotCountable(Exception):
    """The output is not a sum of independent parts (the reason is the message)."""


def _poly_mul(a: list[int], b: list[int]) -> list[int]:
    """Exact product of integer polynomials (coefficient lists, lowest degree first)."""
    if _flint is not None:
        p = _flint.fmpz_poly(a) * _flint.fmpz_poly(b)
        return [int(c) for c in p.coeffs()] or [0]
    # Kronecker substitution: one big-integer product
    bits = max(max(a).bit_length(), 1) + max(max(b).bit_length(), 1) + \
        max(1, min(len(a), len(b)).bit_length()) + 1
    pack = lambda cs: sum(c << (bits * i) for i, c in enumerate(cs))  # noqa: E731
    prod = pack(a) * pack(b)
    mask = (1 << bits) - 1
    return [(prod >> (bits * i)) & mask for i in range(len(a) + len(b) - 1)]


def _poly_pow(a: list[int], e: int) -> list[int]:
    if _flint is not None:
        return [int(c) for c in (_flint.fmpz_poly(a) ** e).coeffs()] or [0]
    out, base = [1], a
    while e:
        if e & 1:
            out = _poly_mul(out, base)
        e >>= 1
        if e:
            base = _poly_mul(base, base)
    return out


class Counted:
    """A compiled sum of independent parts: exact distributions per input by convolution."""

    def __init__(self, prog: Program, args: Mapping[str, Any] | None = None,
                 exact: bool = False):
        b = Builder(exact=True)
        inputs = _LazyInputs(b, prog.length, prog.low, prog.high)
        out = prog.fn(b, inputs, **dict(prog.args, **(args or {})))
        if not isinstance(out, (list, tuple)) or len(out) != 1 or not isinstance(out[0],
                                                                                 SumOf):
            raise NotCountable("the output is not one sum")
        self.prog, self.exact, self.name = prog, exact, prog.name
        self.length, self.low, self.high = prog.length, prog.low, prog.high
        names = inputs.finish()
        owner = {nm: i for i, ns in enumerate(names) for nm in ns}
        bdd = b.bdd
        const = 0
        seen: set[str] = set()
        kinds: dict[tuple, int] = {}
        self.kinds: list[tuple] = []          # per kind: tuple over input values of tables
        self.uses: list[tuple[int, int]] = []  # per part: (kind, input coordinate or -1)
        for part in out[0].parts:
            if isinstance(part, (bool, int)):
                const += int(part)
                continue
            v = b.lift(part)
            supp: set[str] = set()
            for node in v.bits:
                supp |= set(bdd.support(node))
            noise = sorted(s for s in supp if s in b.weights)
            coords = sorted({owner[s] for s in supp if s in owner})
            if len(coords) > 1:
                raise NotCountable("a part reads more than one input coordinate")
            if seen & set(noise):
                raise NotCountable("two parts share noise")
            if len(noise) > MAX_PART_NOISE:
                raise NotCountable("a part draws on too many noise variables")
            seen |= set(noise)
            coord = coords[0] if coords else -1
            tables = tuple(self._table(b, v, noise, names[coord] if coord >= 0 else [], u)
                           for u in (range(prog.high - prog.low + 1) if coord >= 0 else [0]))
            kind = kinds.setdefault(tables, len(kinds))
            if kind == len(self.kinds):
                self.kinds.append(tables)
            self.uses.append((kind, coord))
        if len(self.uses) < 2:
            raise NotCountable("fewer than two random parts")
        self.const = const
        self.n_parts = len(self.uses)
        self.size = len(self.kinds)
        self._pow: dict[tuple, tuple[list[int], int, int]] = {}
        self._fpow: dict[tuple, tuple[np.ndarray, int]] = {}

    @staticmethod
    def _table(b: Builder, v: Int, noise: list[str], in_names: list[str], u: int
               ) -> tuple:
        """The part's distribution with its input coordinate at ``low + u``: a tuple of
        (value, numerator) over a common denominator, plus that denominator."""
        bdd = b.bdd
        fixed = {nm: bool((u >> j) & 1) for j, nm in enumerate(in_names)}
        dist: dict[int, Fraction] = {}
        for bits in itertools.product((False, True), repeat=len(noise)):
            assign = dict(fixed, **dict(zip(noise, bits)))
            w = Fraction(1)
            for nm, bit in zip(noise, bits):
                q = b.weights[nm][0]
                w *= q if bit else 1 - q
            if w == 0:
                continue
            val = 0
            for j, node in enumerate(v.bits):
                r = bdd.let(assign, node) if assign else node
                if r == bdd.true:
                    val += (1 << j) if j < len(v.bits) - 1 else -(1 << j)
                elif r != bdd.false:
                    raise NotCountable("a part depends on a variable outside its support")
            dist[val] = dist.get(val, Fraction(0)) + w
        den = math.lcm(*(p.denominator for p in dist.values()))
        lo = min(dist)
        coeffs = [0] * (max(dist) - lo + 1)
        for val, p in dist.items():
            coeffs[val - lo] = int(p * den)
        return (lo, tuple(coeffs), den)

    # -- per input ----------------------------------------------------------------------------
    def _counts(self, x: Sequence[int]) -> dict[tuple[int, int], int]:
        counts: dict[tuple[int, int], int] = {}
        for kind, coord in self.uses:
            u = int(x[coord]) - self.low if coord >= 0 else 0
            counts[(kind, u)] = counts.get((kind, u), 0) + 1
        return counts

    def _power(self, key: tuple[int, int], c: int) -> tuple[list[int], int, int]:
        """(coefficients, lowest value, denominator) of a kind's table to the power c."""
        hit = self._pow.get((key, c))
        if hit is not None:
            return hit
        lo, coeffs, den = self.kinds[key[0]][key[1]]
        below = max((k for (kk, k) in self._pow if kk == key and k < c), default=0)
        base = self._pow[(key, below)] if below else ([1], 0, 1)
        step = _poly_pow(list(coeffs), c - below)
        res = (_poly_mul(base[0], step), base[1] + lo * (c - below), base[2] * den ** (c - below))
        self._pow[(key, c)] = res
        return res

    def _exact_poly(self, x: Sequence[int]) -> tuple[list[int], int, int]:
        coeffs, lo, den = [1], self.const, 1
        for key, c in sorted(self._counts(x).items()):
            p, plo, pden = self._power(key, c)
            coeffs, lo, den = _poly_mul(coeffs, p), lo + plo, den * pden
        return coeffs, lo, den

    def distribution(self, x: Sequence[int]) -> Distribution:
        coeffs, lo, den = self._exact_poly(x)
        ys = [lo + i for i, c in enumerate(coeffs) if c]
        if self.exact:
            probs = tuple(Fraction(c, den) for c in coeffs if c)
        else:
            probs = tuple(_ratio_float(c, den) for c in coeffs if c)
        return Distribution(np.asarray(ys, dtype=np.int64), probs, grid_size=self.n_parts)

    # -- accuracy windows ----------------------------------------------------------------------
    def _float_power(self, key: tuple[int, int], c: int) -> tuple[np.ndarray, int]:
        hit = self._fpow.get((key, c))
        if hit is not None:
            return hit
        lo, coeffs, den = self.kinds[key[0]][key[1]]
        p = np.asarray(coeffs, dtype=float) / den
        below = max((k for (kk, k) in self._fpow if kk == key and k < c), default=0)
        out, olo = self._fpow[(key, below)] if below else (np.ones(1), 0)
        e, base = c - below, p
        while e:
            if e & 1:
                out = np.convolve(out, base)
            e >>= 1
            if e:
                base = np.convolve(base, base)
        res = (out, olo + lo * (c - below))
        self._fpow[(key, c)] = res
        return res

    def _float_mass(self, x: Sequence[int], ylo: float, yhi: float) -> float:
        polys = [self._float_power(key, c) for key, c in sorted(self._counts(x).items())]
        f, lo = np.ones(1), self.const
        for p, plo in polys[:-1]:
            f, lo = np.convolve(f, p), lo + plo
        g, glo = polys[-1]
        total = 0.0
        for y in range(math.ceil(ylo), math.floor(yhi) + 1):
            # coefficient of z^(y - lo - glo) in f * g
            t = y - lo - glo
            i0, i1 = max(0, t - len(g) + 1), min(len(f) - 1, t)
            if i0 <= i1:
                total += float(np.dot(f[i0:i1 + 1], g[t - i1:t - i0 + 1][::-1]))
        return total

    def window_masses(self, xs: Sequence[Sequence[int]], windows: Sequence[tuple],
                      keep: int) -> list[tuple[int, Any]]:
        """(index, P(y in window)) of the ``keep`` inputs with the smallest mass, ascending,
        exact when this target is exact (every input whose float mass could rank among them
        is recomputed exactly)."""
        masses = np.array([self._float_mass(x, lo, hi) for x, (lo, hi) in zip(xs, windows)])
        order = np.argsort(masses, kind="stable")
        kth = masses[order[min(keep, len(order)) - 1]]
        if kth < 1e-250:
            cands = order
        else:
            cands = order[masses[order] <= kth * (1 + SCREEN_TOL) + 1e-300]
        out = []
        for i in cands.tolist():
            coeffs, lo, den = self._exact_poly(xs[i])
            wl, wh = windows[i]
            num = sum(c for j, c in enumerate(coeffs) if wl <= lo + j <= wh)
            val = Fraction(num, den) if self.exact else _ratio_float(num, den)
            out.append((i, val))
        out.sort(key=lambda t: (t[1], t[0]))
        return out[:max(keep, 1)] if len(out) > keep else out


def _ratio_float(num: int, den: int) -> float:
    if num == 0:
        return 0.0
    return math.exp(math.log(num) - math.log(den))


def try_counted(prog: Program, args: Mapping[str, Any] | None = None,
                exact: bool = False) -> tuple[Counted | None, str]:
    """A :class:`Counted` for ``prog`` when its output is a sum of independent parts, else
    (None, why not)."""
    from ..core.errors import NotEnumerableError
    from .compile import CompileError

    try:
        return Counted(prog, args, exact), ""
    except (NotCountable, CompileError, NotEnumerableError) as err:
        # the counting path works in exact rationals: noise of irrational probabilities
        # (the discrete Gaussian) goes to the other backends instead of ending the run
        return None, str(err)


__all__ = ["Counted", "NotCountable", "try_counted"]
