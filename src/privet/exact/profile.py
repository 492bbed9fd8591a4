"""The exact privacy profile of a discrete mechanism: δ(ε) at every ε, tight Rényi and zCDP.

From the inference table of Algorithm 1 of the WMC paper (Oakley, Holtzen, Oprea), every
neighbor pair (x, x') gives two exact output distributions P and Q, and

* δ(ε) = max over pairs of Σ_y max(0, P(y) − e^ε Q(y)) (the hockey-stick divergence). Per
  pair, outputs are sorted by their log-ratio ln P(y)/Q(y) once; then
  δ(ε) = A(ε) − e^ε B(ε) with A, B the sums of P and Q over the outputs whose ratio exceeds
  e^ε (prefix sums), so a whole grid of ε costs one sort and one search per pair;
* D_α = max over pairs of 1/(α−1) ln Σ_y P(y)^α Q(y)^(1−α) at the orders asked for
  (infinite when some y has P(y) > 0 = Q(y)); ρ = sup_α D_α/α is the tight zCDP parameter
  (Bun & Steinke 2016, Def. 1.1), found on a grid of orders from 1 (the KL limit) to 10⁴
  and refined around the best one (None when the supports differ, so no ρ is finite);
* :func:`profile` also checks the mechanism's claim exactly: an (ε, δ) claim against
  δ(ε) (with Fractions when the table is exact; e^ε is then rounded *down* to a rational,
  so "verified" is never said of a δ that is too small), a zCDP claim against ρ.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..core.claims import as_claimed
from ..core.errors import ParameterError, advice
from ..core.mechanism import Mechanism
from ..core.noise import DEFAULT_ENUMERATION_CAP
from ..core.results import ExactProfile
from .algorithms import (
    DEFAULT_INPUT_CAP,
    hockey_stick_dense,
    make_target,
    row,
)

ORDERS = (1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)
DEFAULT_EPSILONS = tuple(np.round(np.linspace(0.0, 3.0, 31), 10).tolist())


def pair_profiles(P: np.ndarray, Q: np.ndarray, epsilons: np.ndarray) -> np.ndarray:
    """δ_pair(ε) for one pair of distributions (rows of P and Q: outputs) at every ε."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.where(P > 0, np.log(P) - np.log(Q), -np.inf)
    order = np.argsort(-lr, kind="stable")
    lr_s, p_s, q_s = lr[order], P[order], Q[order]
    a = np.r_[0.0, np.cumsum(p_s)]
    b = np.r_[0.0, np.cumsum(q_s)]
    # outputs with log-ratio > ε are the first m of the sorted list
    m = np.searchsorted(-lr_s, -np.asarray(epsilons), side="left")
    with np.errstate(invalid="ignore", over="ignore"):
        d = a[m] - np.exp(epsilons) * b[m]
    return np.clip(np.nan_to_num(d, nan=0.0), 0.0, 1.0)


def renyi(P: np.ndarray, Q: np.ndarray, orders: np.ndarray, negligible: float = 0.0
          ) -> np.ndarray:
    """D_α(P‖Q) at every order α > 1 (inf when P puts more than ``negligible`` mass where
    Q is 0: with truncated noise, outputs beyond the truncation are left out); α = 1 gives
    the KL divergence."""
    supp = P > 0
    outside = supp & (Q <= 0)
    if P[outside].sum() > negligible:
        return np.full(len(orders), np.inf)
    supp &= Q > 0
    lp, lq = np.log(P[supp]), np.log(Q[supp])
    out = []
    for a in orders:
        if a == 1.0:
            out.append(float(np.sum(P[supp] * (lp - lq))))
            continue
        terms = a * lp + (1 - a) * lq
        mx = terms.max()
        out.append(float((mx + math.log(np.exp(terms - mx).sum())) / (a - 1)))
    return np.asarray(out)


def _rho(P_rows: np.ndarray, Q_rows: np.ndarray, negligible: float = 0.0) -> float | None:
    """sup over α of max over pairs D_α/α on a log grid of orders, refined once."""
    def worst(orders: np.ndarray) -> np.ndarray:
        vals = np.full(len(orders), -np.inf)
        for P, Q in zip(P_rows, Q_rows):
            vals = np.maximum(vals, renyi(P, Q, orders, negligible))
        return vals

    grid = np.r_[1.0, np.geomspace(1.0 + 1e-3, 1e4, 120)]
    vals = worst(grid)
    if not np.all(np.isfinite(vals)):
        return None
    ratio = vals / grid
    i = int(np.argmax(ratio))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    fine = np.linspace(lo, hi, 41)
    return float(max(ratio.max(), np.max(worst(fine) / fine)))


def profile(target: Any, *, epsilons: Sequence[float] | None = None,
            inputs: Iterable | None = None, pairs: Sequence | None = None,
            orders: Sequence[float] = ORDERS, backend: str = "auto", fractions: bool = False,
            args: Mapping[str, Any] | None = None, cap: int = DEFAULT_ENUMERATION_CAP,
            input_cap: int = DEFAULT_INPUT_CAP, length: int | None = None,
            progress: bool = False, max_memory: int | None = None) -> ExactProfile:
    """The exact privacy profile of ``target`` over its checked domain (see module doc).

    ``epsilons``: where δ(ε) is evaluated (default 0, 0.1, ..., 3, plus the claim's ε).
    ``inputs``/``pairs``/``backend``/``fractions``/``length``/``max_memory`` as in
    :func:`privet.exact.exact`. Ctrl-C keeps the inputs inferred so far: the profile is then
    a lower bound over the pairs among them, marked interrupted and never "verified".
    """
    from . import _check_request, _domain_text, _pair_table

    start = time.perf_counter()
    for what, values, low in (("epsilons", epsilons, 0.0), ("orders", orders, 1.0)):
        for v in values if values is not None else ():
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer,
                                                         np.floating)) \
                    or not low <= float(v) < math.inf:
                raise ParameterError(f"{what} must be finite numbers >= {low:g}, got {v!r}.")
    _check_request(target, length, inputs is None and pairs is None, input_cap, max_memory,
                   args)
    # the mechanism itself: on the BDD backend t.obj is the compiled program, which has
    # neither the claim (it went unchecked) nor the noise to read a truncation note from
    note = _tail_note(target) if isinstance(target, Mechanism) else None
    forced = None
    if note and backend != "enumerate":
        # truncated discrete Gaussian tails: the diagram's table put the last outputs on one
        # side only and every divergence came out ∞; enumeration keeps them comparable
        backend, forced = "enumerate", ("enumerated: the BDD backend's truncated discrete "
                                        "Gaussian tails gave infinite divergences")
    t = make_target(target, backend, fractions, args, cap, length)
    xs, table, I, J = _pair_table(t, inputs, pairs, input_cap, max_memory, progress)
    mech = target if isinstance(target, Mechanism) else t.obj
    claim = getattr(mech, "claim", None)
    eps = sorted(set(DEFAULT_EPSILONS if epsilons is None else map(float, epsilons)) |
                 ({float(claim.epsilon)} if claim is not None and claim.epsilon else set()))
    eps_arr = np.asarray(eps, dtype=float)
    P_all = np.exp(table.logp)
    best = np.full(len(eps_arr), -1.0)
    arg = np.zeros(len(eps_arr), dtype=np.int64)
    keep = I != J
    I, J = I[keep], J[keep]
    for k, (i, j) in enumerate(zip(I, J)):
        d = pair_profiles(P_all[i], P_all[j], eps_arr)
        better = d > best
        best = np.where(better, d, best)
        arg = np.where(better, k, arg)
    note = note if isinstance(target, Mechanism) else _tail_note(mech)
    # truncated tails decide D_α of large orders (N_Z(0, 14): 1.774 at α = 50 for the true
    # 50/28 = 1.786): orders above TRUNCATED_ORDERS are left out, and the note says so
    kept = [float(a) for a in orders if a >= 1 and (not note or a <= TRUNCATED_ORDERS)]
    if note and len(kept) < sum(1 for a in orders if a >= 1):
        note += f"; Rényi orders above {TRUNCATED_ORDERS:g} are left out (the tails decide them)"
    orders_arr = np.asarray(sorted(kept), dtype=float)
    negligible = 1e-30 if note else 0.0   # truncated discrete Gaussian tails (< 1e-36)
    div = np.full(len(orders_arr), -np.inf)
    for i, j in zip(I, J):
        div = np.maximum(div, renyi(P_all[i], P_all[j], orders_arr, negligible))
    rho = _rho(P_all[I], P_all[J], negligible)
    verified, check = _check(claim, table, I, J, eps_arr, best, rho)
    if table.interrupted:
        verified, check = None, "interrupted: a lower bound from the inputs inferred so far"
    witnesses = tuple((list(row(table.xs[I[a]])), list(row(table.xs[J[a]]))) for a in arg)
    return ExactProfile(
        mechanism=t.name, epsilons=tuple(eps), deltas=tuple(float(v) for v in best),
        witnesses=witnesses, domain=_domain_text(t, xs, None),
        renyi={f"{a:g}": float(v) for a, v in zip(orders_arr, div)}, rho=rho,
        claim=claim.describe() if claim is not None else None, verified=verified,
        check=check, backend=t.backend, seconds=time.perf_counter() - start,
        details={"pairs": int(len(I)), "inputs": int(len(table.xs)), "outputs": len(table.ys),
                 "tail_note": note, **({"interrupted": True} if table.interrupted else {}),
                 **({"backend_note": forced} if forced else {})},
    )


def _tail_note(mech: Any) -> str | None:
    from ..core.noise import DGAUSS_TAIL

    try:
        from ..core.noise import _Probe

        probe = _Probe()
        mech.run(probe, mech.domain.inputs(1)[0] if mech.domain.integer else [0.0],
                 check_input=False)
    except Exception:  # noqa: BLE001 - a note only
        return None
    if any(d.kind == "discrete_gaussian" for d, _ in probe.draws):
        return (f"discrete Gaussian noise enumerated where its tails carry more than "
                f"{DGAUSS_TAIL:.1e}; δ is exact up to that mass")
    return None


TRUNCATED_ORDERS = 20  # the largest Rényi order shown for noise with truncated tails
ROUND_OFF = 1e-12  # a float δ this close above the claim is round-off, not a violation


def _check(claim, table, I, J, eps_arr, best, rho) -> tuple[bool | None, str]:
    if claim is None:
        return None, "no claim to check"
    if claim.kind == "zcdp":
        if rho is None:
            return False, (f"violation (exact): the output supports differ, so no ρ is "
                           f"finite; claimed {claim.describe()}")
        ok = rho <= float(claim.rho) * (1 + 1e-9)
        return ok, (f"{'verified' if ok else 'violation (exact)'}: tight ρ = {rho:.6g} "
                    f"{'≤' if ok else '>'} claimed {claim.rho:g} on the checked domain")
    e0, d0 = float(claim.epsilon), float(claim.delta)
    if table.exact is not None:
        # e^ε rounded down (δ is not too small), the claim's ε given its own rounding
        # (epsilon=math.log(2) means ln 2), as ExactBound.verified does
        d, _, _ = hockey_stick_dense(table, I, J, as_claimed(e0))
        d_exact = Fraction(d) if not isinstance(d, Fraction) else d
        ok = d_exact <= Fraction(d0)
        shown = f"{float(d_exact):.6g} (exact rational)"
    else:
        d = float(best[int(np.argmin(np.abs(eps_arr - e0)))])
        ok = d <= d0 * (1 + 1e-12) + 1e-300
        shown = f"{d:.12g}"
        if not ok and d <= d0 + ROUND_OFF:
            # P1 = e^ε P2 in exact arithmetic leaves 1e-16 in floats: a tight pure claim
            # read as violated (δ(ln 2) = 1.1e-16 > 0 for randomized response)
            return None, (f"inconclusive in floating point: δ({e0:g}) = {shown} exceeds the "
                          f"claimed {d0:g} by less than round-off ({ROUND_OFF:g}); "
                          + advice("rerun with fractions=True", "rerun with --fractions")
                          + " for the exact answer")
    word = "verified" if ok else "violation (exact)"
    return ok, (f"{word}: δ({e0:g}) = {shown} {'≤' if ok else '>'} claimed {d0:g} "
                "on the checked domain")


__all__ = ["DEFAULT_EPSILONS", "ORDERS", "pair_profiles", "profile", "renyi"]
