"""The paper's hand-built HMMs, and a builder from discrete privet mechanisms.

- :func:`truncated_geometric`: Fig. 1c of FAIER, the truncated alpha-geometric mechanism on
  a counting query with range {0..n}.
- :func:`discrete_noisy_max`: Fig. 2 / Algorithm 2, noisy max over ``n`` queries with range
  {0, 1, 2}, truncated 1/2-geometric noise and a uniformly random index among ties.
- :func:`discrete_above_threshold`: Fig. 3 / Algorithm 3, two copies of the model (one per
  neighboring data set) that stay synchronized through the observed query-answer pairs.
- :func:`from_mechanism`: any discrete privet Mechanism over a finite input domain, through
  ``Mechanism.distribution`` (exact enumeration of its noise).

Every model ends in an absorbing ``end`` state that emits ``end``, so each observation
sequence length is meaningful ("verified up to length k" covers all shorter runs).
Observation labels are ASCII: ``_`` is the paper's "nothing observed" (a square cup),
``bot``/``top`` are its falsum/verum.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.errors import InputError, UnsupportedError
from ..core.mechanism import Mechanism
from ..core.noise import Enumerate
from .hmm import HMM, hmm

START = "_"
END = "end"


def truncated_geometric_row(value: int, alpha: Fraction, n: int) -> list[Fraction]:
    """Output distribution of the truncated alpha-geometric mechanism on ``value`` (Sec. 4.1).

    Pr[Z = z] is alpha^f/(1+alpha) at the lower end, (1-alpha)/(1+alpha) alpha^|z| inside
    and alpha^(n-f)/(1+alpha) at the upper end.
    """
    alpha = Fraction(alpha)
    row = []
    for out in range(n + 1):
        z = out - value
        if out == 0 or out == n:
            row.append(alpha ** abs(z) / (1 + alpha) if n > 0 else Fraction(1))
        else:
            row.append((1 - alpha) / (1 + alpha) * alpha ** abs(z))
    return row


def truncated_geometric(alpha: Any = Fraction(1, 2), n: int = 2) -> HMM:
    """Fig. 1c: states 0..n (query answers), observations ``~0``..``~n`` (noisy answers)."""
    alpha = Fraction(alpha)
    states = [str(i) for i in range(n + 1)] + [END]
    obs = [f"~{i}" for i in range(n + 1)] + [END]
    trans = {s: {END: 1} for s in states}
    emis = {str(i): {f"~{j}": p for j, p in enumerate(truncated_geometric_row(i, alpha, n))}
            for i in range(n + 1)}
    emis[END] = {END: 1}
    return hmm(states, obs, trans, emis, name=f"truncated {alpha}-geometric (Fig. 1c)")


def _argmax_probs(noisy: tuple[int, ...]) -> dict[int, Fraction]:
    top = max(noisy)
    winners = [i for i, v in enumerate(noisy) if v == top]
    return {i: Fraction(1, len(winners)) for i in winners}


def discrete_noisy_max(n: int = 3, alpha: Any = Fraction(1, 2), values: int = 3) -> HMM:
    """Fig. 2 / Algorithm 2: discrete noisy max over ``n`` queries with range {0..values-1}.

    States ``v=<answers>`` (the data set's query answers, emit ``_``) move to ``n=<noisy>``
    with the product of truncated geometric probabilities; a noisy state emits the 1-based
    index of its maximum (uniform among ties, as Algorithm 2's reservoir choice) and moves to
    ``end``.
    """
    if n < 1:
        raise InputError("discrete noisy max needs at least one query.")
    top = values - 1
    rows = [truncated_geometric_row(v, Fraction(alpha), top) for v in range(values)]
    vecs = list(itertools.product(range(values), repeat=n))
    label = "".join
    ins = ["v=" + label(map(str, v)) for v in vecs]
    outs = ["n=" + label(map(str, v)) for v in vecs]
    states = ins + outs + [END]
    obs = [START] + [str(i + 1) for i in range(n)] + [END]
    trans: dict = {}
    emis: dict = {}
    for v, s in zip(vecs, ins):
        row = {}
        for w, t in zip(vecs, outs):
            p = Fraction(1)
            for a, b in zip(v, w):
                p *= rows[a][b]
            row[t] = p
        trans[s] = row
        emis[s] = {START: 1}
    for w, t in zip(vecs, outs):
        trans[t] = {END: 1}
        emis[t] = {str(i + 1): p for i, p in _argmax_probs(w).items()}
    trans[END] = {END: 1}
    emis[END] = {END: 1}
    return hmm(states, obs, trans, emis, name=f"discrete noisy max, {n} queries (Fig. 2)")


def noisy_max_symmetries(h: HMM, n: int) -> list:
    """Declared symmetries of :func:`discrete_noisy_max`: permuting the ``n`` queries.

    Noisy max with uniform tie-breaking is equivariant, P[M(pi x) = pi(i)] = P[M(x) = i], so
    each coordinate permutation pi maps ``v=x`` to ``v=pi x``, ``n=y`` to ``n=pi y`` and the
    observation ``i`` to ``pi(i)``. Returns :class:`~.symmetry.Automorphism` generators of
    S_n (a transposition and an n-cycle); they are a claim that
    :func:`~.symmetry.reduce_pairs` verifies entry by entry before using it.
    """
    from .symmetry import Automorphism, coordinate_permutation_generators

    out = []
    for perm in coordinate_permutation_generators(n):
        def move(label: str, perm: tuple = perm) -> str:
            if label[:2] in ("v=", "n=") and len(label) == n + 2:
                digits = [""] * n
                for i, ch in enumerate(label[2:]):
                    digits[perm[i]] = ch
                return label[:2] + "".join(digits)
            return label

        def move_obs(label: str, perm: tuple = perm) -> str:
            return str(perm[int(label) - 1] + 1) if label.isdigit() else label

        try:
            states = tuple(h.state_index(move(s)) for s in h.states)
            obs = tuple(h.obs_index(move_obs(o)) for o in h.observations)
        except InputError:
            continue  # not the Fig. 2 layout: declare nothing
        out.append(Automorphism(states, obs, f"queries permuted by {perm}"))
    return out


NOISY_MAX_INPUT = "v="


def noisy_max_inputs(n: int, values: int = 3) -> dict[tuple, str]:
    """Input vector -> initial state label of :func:`discrete_noisy_max`."""
    return {v: "v=" + "".join(map(str, v)) for v in itertools.product(range(values), repeat=n)}


# Emission weights of the answer-pair observations "ab" (answer a on D, b on D'). Both copies
# must weight a pair equally, so the matrix is doubly stochastic on the neighbor band |a-b|<=1.
PAIR_WEIGHTS = {
    (0, 0): Fraction(1, 2), (0, 1): Fraction(1, 2),
    (1, 0): Fraction(1, 2), (1, 1): Fraction(1, 4), (1, 2): Fraction(1, 4),
    (2, 1): Fraction(1, 4), (2, 2): Fraction(3, 4),
}


def discrete_above_threshold() -> HMM:
    """Fig. 3 / Algorithm 3: discrete above threshold, two synchronized copies.

    Copy ``A`` runs on data set D, copy ``B`` on its neighbor D'. States per copy:
    ``X:t=i`` (public threshold i, emits ``_``), ``X:a t~=i r=j`` (noisy threshold i, query
    answer j; emits the answer pair ``jk`` in copy A, ``kj`` in copy B), ``X:n t~=i r~=j``
    (noisy answer j; emits ``bot`` if j < i and draws the next answer uniformly, else
    ``top`` and halts). Thresholds use the truncated 1/4-geometric mechanism, answers the
    1/2-geometric one (Algorithm 3). The pair weights are doubly stochastic (PAIR_WEIGHTS),
    so both copies give each observed answer pair the same weight and the probability ratio
    of a sequence is exactly the DP ratio of the two runs on those answers. (The paper's
    figure is not legible in our copy; this is our construction of the same idea.)
    """
    thr = [truncated_geometric_row(t, Fraction(1, 4), 2) for t in range(3)]
    ans = [truncated_geometric_row(r, Fraction(1, 2), 2) for r in range(3)]
    pairs = [f"{a}{b}" for a, b in PAIR_WEIGHTS]
    obs = [START] + pairs + ["bot", "top", END]
    states, trans, emis = [], {}, {}
    third = Fraction(1, 3)
    for copy in ("A", "B"):
        for t in range(3):
            s = f"{copy}:t={t}"
            states.append(s)
            emis[s] = {START: 1}
            trans[s] = {f"{copy}:a t~={i} r={j}": thr[t][i] * third
                        for i in range(3) for j in range(3)}
        for i in range(3):
            for j in range(3):
                s = f"{copy}:a t~={i} r={j}"
                states.append(s)
                if copy == "A":
                    emis[s] = {f"{j}{k}": w for (a, k), w in PAIR_WEIGHTS.items() if a == j}
                else:
                    emis[s] = {f"{k}{j}": w for (k, b), w in PAIR_WEIGHTS.items() if b == j}
                trans[s] = {f"{copy}:n t~={i} r~={r}": ans[j][r] for r in range(3)}
        for i in range(3):
            for r in range(3):
                s = f"{copy}:n t~={i} r~={r}"
                states.append(s)
                if r < i:
                    emis[s] = {"bot": 1}
                    trans[s] = {f"{copy}:a t~={i} r={j}": third for j in range(3)}
                else:
                    emis[s] = {"top": 1}
                    trans[s] = {END: 1}
    states.append(END)
    emis[END] = {END: 1}
    trans[END] = {END: 1}
    return hmm(states, obs, trans, emis, name="discrete above threshold (Fig. 3)")


def above_threshold_ratio(n: int) -> Fraction:
    """The paper's closed form (Sec. 6.3) for Pr(bot^n top | D, t=2) / Pr(bot^n top | D', t=2).

    D answers 1 to the first n queries and 2 to query n+1; D' answers 2, then 1.
    """
    third, sixth = Fraction(1, 3), Fraction(1, 6)
    num = Fraction(3, 20) * third**n * Fraction(5, 6) + Fraction(4, 5) * (2 * third)**n * \
        Fraction(2, 3)
    den = Fraction(3, 20) * sixth**n * Fraction(2, 3) + Fraction(4, 5) * third**n * third
    return num / den


def above_threshold_sequence(n: int) -> list[str]:
    """The observation sequence of Sec. 6.3 in :func:`discrete_above_threshold`'s labels."""
    return [START] + ["12", "bot"] * n + ["21", "top"]


# -- from a privet mechanism ---------------------------------------------------------------

def finite_inputs(mech: Mechanism, inputs: Sequence | None = None, limit: int = 20_000
                  ) -> list[tuple]:
    """The inputs to model: given, or every vector of the mechanism's finite integer domain."""
    if inputs is not None:
        return [tuple(mech.domain.check(x).tolist()) for x in inputs]
    d = mech.domain
    if not (d.integer and np.isfinite(d.low) and np.isfinite(d.high) and isinstance(d.length,
                                                                                     int)):
        raise InputError(
            f"mechanism {mech.name!r} has the domain {d.describe()}; an HMM needs a finite "
            "domain (integer entries, finite low/high, fixed length) or an explicit list of "
            "inputs."
        )
    from ..core.safe import power_count, power_text

    size = int(d.high - d.low + 1)
    if power_count(size, d.length) > limit:
        raise InputError(f"the domain of {mech.name!r} has {power_text(size, d.length)} "
                         f"inputs, above the limit of {limit:,}; pass the inputs to model.")
    vals = range(int(d.low), int(d.high) + 1)
    return [tuple(v) for v in itertools.product(vals, repeat=d.length)]


def from_mechanism(mech: Mechanism, inputs: Sequence | None = None,
                   args: Mapping[str, Any] | None = None) -> tuple[HMM, dict[tuple, str]]:
    """An HMM for a discrete mechanism: input states emit ``_``, then the output is observed.

    Each input x is a state ``x=[...]`` that moves to output state ``y=...`` with the exact
    probability Pr(M(x) = y) from ``Mechanism.distribution(x, exact=True)``; output states
    emit their output and move to ``end``. Returns the HMM and input -> state label.
    """
    mech.require("enumerate", "privet.pufferfish")
    xs = finite_inputs(mech, inputs)
    grid = Enumerate(exact=True)  # one joint noise grid for every input
    dists = {x: mech.distribution(list(x), args=args, exact=True, grid=grid).as_dict()
             for x in xs}
    outputs = sorted({y for d in dists.values() for y in d}, key=lambda y: (str(type(y)), y))
    out_label = {y: _out_label(y) for y in outputs}
    in_label = {x: "x=" + _out_label(x) for x in xs}
    states = list(in_label.values()) + [f"y={out_label[y]}" for y in outputs] + [END]
    obs = [START] + [out_label[y] for y in outputs] + [END]
    if len(set(obs)) != len(obs):
        raise UnsupportedError(f"outputs of {mech.name!r} do not have distinct labels.")
    trans: dict = {}
    emis: dict = {}
    for x in xs:
        trans[in_label[x]] = {f"y={out_label[y]}": p for y, p in dists[x].items() if p}
        emis[in_label[x]] = {START: 1}
    for y in outputs:
        trans[f"y={out_label[y]}"] = {END: 1}
        emis[f"y={out_label[y]}"] = {out_label[y]: 1}
    trans[END] = {END: 1}
    emis[END] = {END: 1}
    return hmm(states, obs, trans, emis, name=f"{mech.name} (from its exact distribution)"), \
        in_label


def _out_label(y: Any) -> str:
    if isinstance(y, tuple):
        return "[" + ", ".join(_out_label(v) for v in y) + "]"
    if isinstance(y, float) and np.isfinite(y) and y == int(y):
        return str(int(y))
    return str(y)
