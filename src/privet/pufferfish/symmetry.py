"""Symmetry reduction of the pairs to check: one secret pair per orbit, soundly.

Many models are equivariant under a group acting on states and observations: discrete noisy
max (Fig. 2 of FAIER) with uniform tie-breaking satisfies P[M(pi x) = pi(i)] = P[M(x) = i]
for every permutation pi of the queries. Such a symmetry is *declared* by the model builder
(:func:`privet.pufferfish.models.noisy_max_symmetries`) as generators, and *verified* here
before any use, by exact comparison of every HMM entry -- a wrong declaration is never
trusted, it only costs the reduction.

Soundness. Let g = (phi, psi) be a permutation phi of the states and psi of Omega with

    p(phi s, phi s') = p(s, s')   and   o(phi s, psi w) = o(s, w)   for all s, s', w.

By induction over the forward recursion (Eqs. 2-3 of FAIER), alpha_t under the initial
weights pi o phi^-1 and the sequence psi(w) at state phi(s) equals alpha_t under pi and w at
s, so Pr(psi(w) | phi . pi) = Pr(w | pi) for every sequence w. If g also maps every secret's
initial weights onto another secret's (pi_{g(i)} = phi . pi_i, the normalizers included)
and maps the set of secret pairs onto itself, then "Pr(w | pi_i) <= c Pr(w | pi_j) for all
w" is equivalent to the same statement for (g(i), g(j)), since psi is a bijection of the
length-k sequences. The same then holds for the group the generators generate, so checking
one pair per orbit decides every pair; a counterexample of a representative is a real
counterexample (it is re-checked exactly anyway).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .hmm import HMM


@dataclass(frozen=True)
class Automorphism:
    """A candidate symmetry: ``states[s]`` is phi(s), ``observations[o]`` is psi(o)."""

    states: tuple
    observations: tuple
    label: str = ""


def is_hmm_automorphism(h: HMM, g: Automorphism) -> bool:
    """Exactly: p(phi s, phi s') = p(s, s') and o(phi s, psi w) = o(s, w) for all entries."""
    n, m = h.n_states, len(h.observations)
    if sorted(g.states) != list(range(n)) or sorted(g.observations) != list(range(m)):
        return False
    phi, psi = g.states, g.observations
    for s in range(n):
        t = phi[s]
        emis = h.emission[s]
        if len(h.emission[t]) != len(emis) or \
                any(h.emission[t].get(psi[o]) != v for o, v in emis.items()):
            return False
        trans = h.transition[s]
        if len(h.transition[t]) != len(trans) or \
                any(h.transition[t].get(phi[s2]) != v for s2, v in trans.items()):
            return False
    return True


def _weights_key(weights: Mapping[int, Any]) -> frozenset:
    return frozenset(weights.items())


def secret_map(initial: Mapping[str, Mapping[int, Any]], g: Automorphism) -> dict | None:
    """name -> name with pi_{g(name)} = phi . pi_name exactly, or None if some has no image."""
    index: dict = {}
    for name, w in initial.items():
        index.setdefault(_weights_key(w), name)
    out = {}
    for name, w in initial.items():
        image = index.get(_weights_key({g.states[s]: v for s, v in w.items()}))
        if image is None:
            return None
        out[name] = image
    return out


@dataclass
class Reduction:
    """The outcome of :func:`reduce_pairs`: representatives and what was checked."""

    pairs: list  # one representative pair per orbit
    total: int  # number of pairs before reduction
    generators: int  # generators that passed every check
    rejected: list  # labels of declared generators that failed a check (not used)

    def details(self) -> dict:
        return {"method": "orbits under verified HMM automorphisms", "pairs": self.total,
                "orbits": len(self.pairs), "generators": self.generators,
                "rejected_generators": list(self.rejected)}


def reduce_pairs(h: HMM, initial: Mapping[str, Mapping[int, Any]], pairs: Sequence[tuple],
                 generators: Sequence[Automorphism]) -> Reduction:
    """One pair per orbit of ``pairs`` under the declared generators that pass every check.

    A generator is used only if it is an automorphism of ``h`` (:func:`is_hmm_automorphism`),
    maps each secret's initial weights to another secret's (:func:`secret_map`) and maps the
    pair set onto itself; the others are listed in ``rejected``. Orbits are the connected
    components of "pair -> its image" (union-find), the first pair of each in input order
    its representative.
    """
    pairs = [tuple(p) for p in pairs]
    pos = {p: i for i, p in enumerate(pairs)}
    maps, rejected = [], []
    for g in generators:
        ok = is_hmm_automorphism(h, g)
        smap = secret_map(initial, g) if ok else None
        if smap is not None and all((smap[a], smap[b]) in pos for a, b in pairs):
            maps.append(smap)
        else:
            rejected.append(g.label or "generator")
    parent = list(range(len(pairs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for smap in maps:
        for i, (a, b) in enumerate(pairs):
            r1, r2 = find(i), find(pos[(smap[a], smap[b])])
            if r1 != r2:
                parent[max(r1, r2)] = min(r1, r2)
    reps = [p for i, p in enumerate(pairs) if find(i) == i]
    return Reduction(reps, len(pairs), len(maps), rejected)


def coordinate_permutation_generators(n: int) -> list[tuple[int, ...]]:
    """Generators of the symmetric group S_n: a transposition and an n-cycle."""
    if n < 2:
        return []
    gens = [tuple([1, 0] + list(range(2, n)))]
    if n > 2:
        gens.append(tuple(list(range(1, n)) + [0]))
    return gens
