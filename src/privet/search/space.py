"""The search space of DP-Finder: random triples (x, x', Phi) and the neighbor relation as
optimization variables and constraints (Sec. 5.2 and 6.1).

A :class:`Space` turns a neighbor relation into a vector ``z`` of free variables with box
bounds and linear inequality constraints (SLSQP expresses ``(x, x') in Neigh`` as-is):

* ``all_differ(D)``: ``z = (x, x')``, constraints ``D - (x_i - x'_i) >= 0`` and
  ``D + (x_i - x'_i) >= 0`` (the paper's Neigh_{<=1});
* ``one_differs(D)``: ``z = (x, t)``, ``x' = x`` except ``x'_j = x_j + t``, ``|t| <= D``;
* ``add_remove``: ``z = x``, ``x'`` is x minus entry j (and the search may swap the roles);
* ``replace_one``: ``z = (x, v)``, ``x' = x`` except ``x'_j = v``;
* ``custom``: ``z = (x, x')`` with no constraint; only derivative-free search applies and
  candidates that are not neighbors are rejected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..attacks.inputs import default_length as input_length
from ..core.events import Event, Singleton
from ..core.mechanism import Mechanism
from ..core.noise import Sampler

__all__ = ["PointBox", "Space", "random_event", "random_input", "random_neighbor"]


@dataclass(frozen=True, eq=True)
class PointBox(Event):
    """Every coordinate in the closed ``[low_i, high_i]`` (DP-Finder's box Phi; a coordinate
    with ``low == high`` must equal it, which also covers sentinel values)."""

    kind: ClassVar[str] = "point_box"
    lows: tuple
    highs: tuple

    def contains(self, outputs):
        out = np.asarray(outputs, dtype=float)
        rows = out.reshape(out.shape[0], -1) if out.ndim > 1 else out.reshape(-1, 1)
        lo = np.asarray(self.lows, dtype=float)
        hi = np.asarray(self.highs, dtype=float)
        return np.all((rows >= lo) & (rows <= hi), axis=1)

    def describe(self):
        parts = []
        for i, (a, b) in enumerate(zip(self.lows, self.highs)):
            name = f"ω[{i}]" if len(self.lows) > 1 else "ω"
            parts.append(f"{name} = {a:.4g}" if a == b else f"{name} ∈ [{a:.4g}, {b:.4g}]")
        return " and ".join(parts)


def _unit_range(mech: Mechanism, input_range: tuple[float, float] | None) -> tuple[float, float]:
    d = mech.domain
    lo = d.low if math.isfinite(d.low) else None
    hi = d.high if math.isfinite(d.high) else None
    if input_range is not None:
        a, b = float(input_range[0]), float(input_range[1])
        return max(a, d.low), min(b, d.high)
    if lo is not None and hi is not None:
        return lo, hi
    if lo is not None:
        return lo, lo + 20.0
    if hi is not None:
        return hi - 20.0, hi
    return -10.0, 10.0


def default_length(mech: Mechanism, length: int | None) -> int:
    """Array size of random inputs: the domain's when fixed, else ``length`` (default 4)."""
    return input_length(mech, length, fallback=4)


def random_input(mech: Mechanism, rng: np.random.Generator, length: int,
                 input_range: tuple[float, float] | None = None) -> np.ndarray:
    lo, hi = _unit_range(mech, input_range)
    x = rng.uniform(lo, hi, size=length)
    return np.round(x) if mech.domain.integer else x


def random_neighbor(mech: Mechanism, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random neighbor of ``x`` under the mechanism's relation (clipped to the domain)."""
    nb = mech.neighbors
    d = mech.domain
    delta = nb.delta
    if nb.kind == "add_remove":
        return np.delete(x, rng.integers(len(x)))
    x2 = x.astype(float).copy()
    if d.integer and nb.kind in ("all_differ", "one_differs"):
        step = max(int(math.floor(delta)), 1)
        moves = rng.integers(-step, step + 1, size=len(x))
        if nb.kind == "one_differs":
            keep = rng.integers(len(x))
            moves = np.where(np.arange(len(x)) == keep, moves, 0)
        if not np.any(moves):  # a neighbor that differs
            moves[rng.integers(len(x)) if nb.kind == "all_differ" else keep] = \
                rng.choice([-1, 1]) * rng.integers(1, step + 1)
        x2 = np.clip(x2 + moves, d.low, d.high)
        if np.array_equal(x2, x):  # clipped back onto x at a bound: move the other way
            x2 = np.clip(x - moves, d.low, d.high)
        return x2
    if nb.kind == "all_differ":
        x2 = x2 + rng.uniform(-delta, delta, size=len(x))
    elif nb.kind == "one_differs":
        x2[rng.integers(len(x))] += rng.uniform(-delta, delta)
    elif nb.kind == "replace_one":
        lo, hi = _unit_range(mech, None)
        x2[rng.integers(len(x))] = rng.uniform(lo, hi)
    else:  # custom: no neighbor of an arbitrary x can be made (search draws whole pairs)
        raise ValueError("a custom relation's pairs come from the relation, not from "
                          "random_neighbor.")
    x2 = np.clip(x2, d.low, d.high)
    return np.round(x2) if d.integer else x2


def is_discrete(mech: Mechanism, rows: np.ndarray) -> bool:
    if mech.output.kind == "categorical" or mech.output.integer:
        return True
    finite = rows[np.isfinite(rows)]
    return bool(np.all(finite == np.round(finite)))


def random_event(mech: Mechanism, x: np.ndarray, rng: np.random.Generator,
                 args=None, box_width: float = 3.0, probe: int = 1000) -> Event:
    """A random Phi (Sec. 6.2): for discrete outputs a singleton {y}, y drawn uniformly from
    the distinct outputs of ``probe`` runs of M(x) (the paper draws uniformly from all
    possible outputs; restricting to observed ones avoids events of probability ~0); for
    continuous outputs a box of half-width ``box_width`` around one sampled output (infinite
    sentinel coordinates must match exactly)."""
    out = np.asarray(mech.run(Sampler(rng, probe), x, args, check_input=False), dtype=float)
    rows = out.reshape(out.shape[0], -1) if out.ndim > 1 else out.reshape(-1, 1)
    if is_discrete(mech, rows):
        uniq = np.unique(rows, axis=0)
        y = uniq[rng.integers(len(uniq))]
        return Singleton(tuple(float(v) for v in y))
    y = rows[rng.integers(len(rows))]
    lows = tuple(float(v - box_width) if math.isfinite(v) else float(v) for v in y)
    highs = tuple(float(v + box_width) if math.isfinite(v) else float(v) for v in y)
    return PointBox(lows, highs)


@dataclass
class Space:
    """Optimization variables for a pair (x, x') under a neighbor relation.

    ``unpack(z) -> (x, x')``; ``pack(x, x')``; ``bounds`` per variable; ``A z + b >= 0`` are
    the linear constraints; ``project(z)`` maps any z back into the relation (used by the
    derivative-free search).
    """

    kind: str
    k: int
    delta: float
    j: int
    lo: float
    hi: float
    integer: bool

    @staticmethod
    def of(mech: Mechanism, x: np.ndarray, x2: np.ndarray,
           bounds: tuple[float, float] | None = None) -> Space:
        nb = mech.neighbors
        d = mech.domain
        lo, hi = (bounds if bounds is not None else
                  (d.low if math.isfinite(d.low) else -100.0,
                   d.high if math.isfinite(d.high) else 100.0))
        lo = min(lo, float(np.min(np.r_[x, x2])))
        hi = max(hi, float(np.max(np.r_[x, x2])))
        j = 0
        if nb.kind == "add_remove":
            for i in range(len(x)):
                if np.allclose(np.delete(x, i), x2):
                    j = i
                    break
        elif nb.kind in ("one_differs", "replace_one"):
            diff = np.abs(np.asarray(x, float) - np.asarray(x2, float))
            j = int(np.argmax(diff))
        return Space(nb.kind, len(x), nb.delta, j, float(lo), float(hi), d.integer)

    def pack(self, x: np.ndarray, x2: np.ndarray) -> np.ndarray:
        x = np.asarray(x, float)
        x2 = np.asarray(x2, float)
        if self.kind == "add_remove":
            return x.copy()
        if self.kind == "one_differs":
            return np.r_[x, x2[self.j] - x[self.j]]
        if self.kind == "replace_one":
            return np.r_[x, x2[self.j]]
        return np.r_[x, x2]

    def unpack(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = np.asarray(z, float)
        k = self.k
        x = z[:k]
        if self.kind == "add_remove":
            return x, np.delete(x, self.j)
        if self.kind in ("one_differs", "replace_one"):
            x2 = x.copy()
            x2[self.j] = x[self.j] + z[k] if self.kind == "one_differs" else z[k]
            return x, x2
        return x, z[k:]

    @property
    def bounds(self) -> list[tuple[float, float]]:
        b = [(self.lo, self.hi)] * self.k
        if self.kind == "add_remove":
            return b
        if self.kind == "one_differs":
            return b + [(-self.delta, self.delta)]
        if self.kind == "replace_one":
            return b + [(self.lo, self.hi)]
        return b + [(self.lo, self.hi)] * self.k

    def linear_constraints(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(A, b)`` with ``A z + b >= 0`` (all_differ only)."""
        if self.kind != "all_differ":
            return None
        k = self.k
        eye = np.eye(k)
        a = np.vstack([np.hstack([-eye, eye]), np.hstack([eye, -eye])])
        b = np.full(2 * k, self.delta)
        return a, b

    def directions(self) -> list[np.ndarray]:
        """Moves for pattern search: every variable alone and, for all_differ, x_i and x'_i
        together (a move along a constraint's boundary)."""
        dim = len(self.bounds)
        eye = np.eye(dim)
        out = [eye[i] for i in range(dim)]
        if self.kind == "all_differ":
            out += [eye[i] + eye[self.k + i] for i in range(self.k)]
        return out

    def shift(self, z: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Move x and x' together by ``v`` (length k), keeping their difference: the pair
        stays neighbors. Returns the projected z."""
        z = np.asarray(z, float).copy()
        v = np.asarray(v, float)
        k = self.k
        z[:k] += v
        if self.kind == "all_differ":
            z[k:] += v
        elif self.kind == "replace_one":
            z[k] += v[self.j]
        return self.project(z)

    def project(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, float).copy()
        k = self.k
        z[:k] = np.clip(z[:k], self.lo, self.hi)
        if self.kind == "all_differ":
            z[k:] = z[:k] + np.clip(np.clip(z[k:], self.lo, self.hi) - z[:k], -self.delta,
                                    self.delta)
        elif self.kind == "one_differs":
            z[k] = np.clip(z[k], -self.delta, self.delta)
        elif self.kind == "replace_one":
            z[k] = np.clip(z[k], self.lo, self.hi)
        if self.integer:
            z = np.round(z)
            if self.kind == "all_differ":
                step = math.floor(self.delta)
                z[k:] = z[:k] + np.clip(z[k:] - z[:k], -step, step)
        return z
