"""Algorithm 1 of FAIER with z3, the parametric check, and a sound branch-and-bound fallback.

Two encodings decide "Pr(w | pi) <= c Pr(w | tau) for every length-k sequence w":

- :func:`algorithm1` is the paper's Algorithm 1: observation variables w_0..w_{k-1}, the
  forward recursion (Eqs. 2-3) as terms where SELECT(w, Omega, o(s, .)) is an if-then-else
  chain, and GT(sum alpha, c * sum beta). Unknown parameters are z3 reals with their
  domain constraints; symbolic HMM rows add "row sums to 1, entries >= 0" side constraints.
  The normalizers Pr(s_i | theta) are cleared (multiplied across), never divided.
  The forward terms are built once per initial state and shared across pairs; pairs
  related by a declared and exactly verified symmetry of the model are checked once per
  orbit (:mod:`.symmetry`); fixed-parameter queries use a short rational lower bound of
  e^epsilon first (:func:`factor_ladder`).
- :func:`parametric_check` is for a numeric HMM with unknown parameters only in the prior
  (Examples 3-6): every length-k sequence is enumerated with exact per-state probabilities
  g_d(w), and each (pair, sequence) becomes one polynomial query
  Z_j * sum_d w_i(d) g_d(w) > c * Z_i * sum_d w_j(d) g_d(w) over the parameters, sent to
  z3's nonlinear real arithmetic (nlsat, ``SolverFor("QF_NRA")``).

A SAT answer is re-checked by exact evaluation (Fractions) before it is reported; an
irrational e^epsilon is replaced by a rational lower bound for UNSAT (sound) and the SAT
model is re-checked against the true value. When z3 gives up, :func:`branch_and_bound`
proves the inequality over the parameter box with outward-rounded interval arithmetic, or
finds a rational counterexample point; otherwise the verdict is "unknown", never a guess.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np

from ..core.errors import SolverError
from .expr import Expr, Interval, NotPolynomial, Poly, to_poly
from .hmm import HMM, Param, enumerate_sequences, forward_exact
from .scenario import Budget, Scenario

try:  # z3 is a dependency of privet, but keep the import error readable
    import z3
except ImportError:  # pragma: no cover
    z3 = None


def check_solver(s: Any) -> Any:
    """``s.check()``, stoppable with Ctrl-C: z3 runs in a thread (its C call releases the
    interpreter) while this one waits, and Ctrl-C interrupts z3 and raises
    KeyboardInterrupt here. z3's own Ctrl-C handling is turned off: it took the signal,
    answered "unknown" for the query at hand, and the run went on to the next one."""
    import threading

    z3.set_param("ctrl_c", False)
    got: dict = {}

    def run() -> None:
        try:
            got["result"] = s.check()
        except BaseException as err:  # handed to the waiting thread
            got["error"] = err

    worker = threading.Thread(target=run, name="z3 check", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        # z3's context is not thread-safe: the query must be over before this thread goes
        # on (an interrupt sent before z3 entered the query is lost, so it is sent again)
        while worker.is_alive():
            s.ctx.interrupt()
            try:
                worker.join(0.1)
            except KeyboardInterrupt:
                continue
        raise
    if "error" in got:
        raise got["error"]
    return got["result"]


def _need_z3() -> None:
    if z3 is None:  # pragma: no cover
        raise SolverError("privet.pufferfish needs z3-solver (pip install z3-solver).")


def rv(q: Any) -> Any:
    """An exact z3 real for a Fraction (or int)."""
    q = Fraction(q)
    return z3.RealVal(f"{q.numerator}/{q.denominator}") if q.denominator != 1 else \
        z3.RealVal(q.numerator)


def to_z3(value: Any, env: Mapping[str, Any]) -> Any:
    """An HMM/prior entry as a z3 term over the parameter variables ``env``."""
    if isinstance(value, Expr):
        return value.evaluate(env, rv)
    if z3.is_expr(value):
        return value
    return rv(value)


def param_vars(params: Mapping[str, Param]) -> tuple[dict, list]:
    """z3 reals for the parameters and their domain constraints."""
    env = {n: z3.Real(n) for n in params}
    cons = []
    for n, p in params.items():
        if p.closed:
            cons += [env[n] >= rv(p.low), env[n] <= rv(p.high)]
        else:
            cons += [env[n] > rv(p.low), env[n] < rv(p.high)]
    return env, cons


def model_value(model: Any, var: Any) -> Fraction:
    """A rational value of ``var`` in ``model`` (algebraic numbers are approximated)."""
    v = model.eval(var, model_completion=True)
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_algebraic_value(v):
        a = v.approx(30)
        return Fraction(a.numerator_as_long(), a.denominator_as_long())
    return Fraction(str(v))  # pragma: no cover


@dataclass
class SmtOutcome:
    status: str  # verified | violated | unknown
    k: int
    sequence: tuple | None = None
    pair: tuple | None = None
    values: dict = field(default_factory=dict)
    probabilities: tuple | None = None
    solver: str = ""
    message: str = ""
    queries: int = 0
    details: dict = field(default_factory=dict)


def _solve(constraints: list, timeout: float, nonlinear: bool) -> tuple[str, Any, str]:
    """Run z3 (nlsat for nonlinear queries); returns (sat|unsat|unknown, model, solver)."""
    ms = max(1, int(timeout * 1000))
    if nonlinear:
        s = z3.SolverFor("QF_NRA")
        name = "z3 nlsat (QF_NRA)"
    else:
        s = z3.Solver()
        name = "z3"
    t0 = time.perf_counter()
    s.set("timeout", ms)
    s.add(*constraints)
    r = check_solver(s)
    if r == z3.sat:
        return "sat", s.model(), name
    if r == z3.unsat:
        return "unsat", None, name
    left = timeout - (time.perf_counter() - t0)
    if not nonlinear or left < 0.1:
        return "unknown", None, name
    s2 = z3.Solver()  # the default strategy sometimes settles what nlsat alone does not
    s2.set("timeout", max(1, int(left * 1000)))  # in the same time, not twice it
    s2.add(*constraints)
    r = check_solver(s2)
    if r == z3.sat:
        return "sat", s2.model(), "z3"
    if r == z3.unsat:
        return "unsat", None, "z3"
    return "unknown", None, name


# -- the parametric check (numeric HMM, symbolic prior) ---------------------------------------

def _support(sc: Scenario, names: list) -> list[int]:
    return sorted({s for n in names for s in sc.initial[n]})


def per_state_table(sc: Scenario, k: int) -> tuple[list[int], np.ndarray, dict]:
    """Sequences of length k possible from some support state, with exact g_d(w).

    g_d(w) = Pr(w | start in d) is computed on the lumped HMM (:func:`~.hmm.lump`), where
    states that behave alike share one forward pass.
    """
    from .hmm import lump

    names = sorted({n for p in sc.pairs for n in p})
    support = _support(sc, names)
    h, block = lump(sc.hmm)
    blocks = sorted({block[d] for d in support})
    inits = np.zeros((len(blocks), h.n_states))
    inits[np.arange(len(blocks)), blocks] = 1.0
    seqs = [s for chunk, _ in enumerate_sequences(h, inits, k) for s in chunk]
    g: dict[tuple, dict[int, Fraction]] = {}
    for seq in seqs:
        t = tuple(int(o) for o in seq)
        per_block = {b: forward_exact(h, {b: Fraction(1)}, t, encoded=True) for b in blocks}
        g[t] = {d: per_block[block[d]] for d in support if per_block[block[d]]}
    return support, np.array(seqs), g


def parametric_check(sc: Scenario, eps: Budget, k: int, timeout: float = 30.0,
                     bnb_boxes: int = 4000, query_timeout: float = 5.0) -> SmtOutcome:
    """Decide the scenario at length k when only the prior has unknown parameters.

    Per (pair, sequence): the cleared-denominator polynomial query goes to z3 (nlsat) with
    ``query_timeout``; if z3 gives up, Bernstein branch-and-bound over the parameter box
    (:func:`bernstein_bnb`) or, for non-polynomial priors, interval branch-and-bound.
    """
    _need_z3()
    t0 = time.perf_counter()
    env, dom = param_vars(sc.parameters)
    names = list(sc.parameters)
    c_lo = eps.bounds()[0]
    _, seqs, g = per_state_table(sc, k)
    weights = {n: {s: to_z3(v, env) for s, v in w.items()} for n, w in sc.initial.items()}
    try:
        polys = {n: {s: to_poly(v, names) for s, v in w.items()} for n, w in sc.initial.items()}
    except NotPolynomial:
        polys = None
    Z = {n: z3.Sum(list(w.values())) if w else rv(0) for n, w in weights.items()}
    solvers: set[str] = set()
    queries = 0
    unknown: list = []
    out_of_time = False
    for seq, gd in g.items():
        if not gd:
            continue
        for a, b in sc.pairs:
            if not any(d in weights[a] for d in gd):
                continue  # Pr(w | a) = 0 cannot exceed anything
            if time.perf_counter() - t0 >= timeout:
                # the length's time is used up: the queries left are undecided, not tried
                # longer (each used to get a floor of 0.2 s and an unbounded branch-and-bound)
                out_of_time = True
                break
            queries += 1
            F = None
            if polys is not None:  # F = c Z_a N_b - Z_b N_a; a violation is F < 0
                za = sum(polys[a].values(), Poly.const(len(names), 0))
                zb = sum(polys[b].values(), Poly.const(len(names), 0))
                na = sum((polys[a][d] * v for d, v in gd.items() if d in polys[a]),
                         Poly.const(len(names), 0))
                nb = sum((polys[b][d] * v for d, v in gd.items() if d in polys[b]),
                         Poly.const(len(names), 0))
                F = za * nb * c_lo - zb * na
                cons = dom + [Z[a] > 0, Z[b] > 0, poly_to_z3(F, env, names) < 0]
            else:
                Na = [weights[a][d] * rv(v) for d, v in gd.items() if d in weights[a]]
                Nb = [weights[b][d] * rv(v) for d, v in gd.items() if d in weights[b]]
                lhs = Z[b] * z3.Sum(Na)
                rhs = rv(c_lo) * Z[a] * (z3.Sum(Nb) if Nb else rv(0))
                cons = dom + [Z[a] > 0, Z[b] > 0, lhs > rhs]
            remaining = max(0.05, min(query_timeout, timeout - (time.perf_counter() - t0)))
            status, model, solver = _solve(cons, remaining, nonlinear=bool(env))
            solvers.add(solver)
            if status == "sat":
                vals = {n: model_value(model, v) for n, v in env.items()}
                found = _recheck(sc, eps, a, b, seq, vals)
                if found is not None:
                    return SmtOutcome("violated", k, sc.hmm.decode(seq), (a, b), vals, found,
                                      solver, queries=queries)
                unknown.append((a, b, seq, "z3 model did not survive the exact re-check"))
            elif status == "unknown":
                if F is not None:
                    res = bernstein_bnb(sc, eps, a, b, seq, F, max_boxes=bnb_boxes,
                                        deadline=t0 + timeout)
                    how = "Bernstein branch-and-bound"
                else:
                    res = branch_and_bound(sc, eps, a, b, seq, gd, max_boxes=bnb_boxes)
                    how = "interval branch-and-bound"
                solvers.add(how)
                if res[0] == "violated":
                    return SmtOutcome("violated", k, sc.hmm.decode(seq), (a, b), res[1], res[2],
                                      how, queries=queries)
                if res[0] == "unknown":
                    unknown.append((a, b, seq, "solver timeout; branch-and-bound inconclusive"))
        if out_of_time:
            break
    path = " + ".join(sorted(solvers)) or "exact enumeration"
    if out_of_time:
        where = f" ({len(unknown)} more undecided)" if unknown else ""
        return SmtOutcome("unknown", k, solver=path, queries=queries,
                          message=f"solver time of {timeout:g} s used up after {queries} "
                                  f"(pair, sequence) queries{where}; raise the timeout")
    if unknown:
        a, b, seq, why = unknown[0]
        return SmtOutcome("unknown", k, sc.hmm.decode(seq), (a, b), solver=path,
                          message=f"{len(unknown)} (pair, sequence) queries undecided ({why})",
                          queries=queries)
    return SmtOutcome("verified", k, solver=path, queries=queries)


def poly_to_z3(F: Poly, env: Mapping, names: list) -> Any:
    """A polynomial as a z3 sum of monomials."""
    terms = []
    for e, c in F.terms.items():
        t = rv(c)
        for nm, k in zip(names, e):
            for _ in range(k):
                t = t * env[nm]
        terms.append(t)
    return z3.Sum(terms) if terms else rv(0)


def _dense(F: Poly) -> np.ndarray:
    A = np.empty(tuple(d + 1 for d in F.degrees()) or (1,), dtype=object)
    A.fill(Fraction(0))
    for e, c in F.terms.items():
        A[e] = c
    return A


def bernstein_coefficients(A: np.ndarray, box: list) -> np.ndarray:
    """Bernstein coefficients of the power-basis tensor ``A`` over ``box`` [(lo, hi), ...].

    Per axis: substitute x = lo + (hi - lo) t, then change to the Bernstein basis of the
    axis degree (b_j = sum_{i<=j} C(j,i)/C(d,i) c_i). Their minimum bounds the polynomial
    from below on the box, and corner coefficients equal its corner values.
    """
    for axis, (lo, hi) in enumerate(box):
        d = A.shape[axis] - 1
        w = hi - lo
        M = np.empty((d + 1, d + 1), dtype=object)
        for j in range(d + 1):
            for e in range(d + 1):
                M[j, e] = comb(e, j) * lo ** (e - j) * w ** j if e >= j else Fraction(0)
        Bm = np.empty((d + 1, d + 1), dtype=object)
        for j in range(d + 1):
            for i in range(d + 1):
                Bm[j, i] = Fraction(comb(j, i), comb(d, i)) if i <= j else Fraction(0)
        T = Bm.dot(M)
        A = np.moveaxis(np.tensordot(T, A, axes=([1], [axis])), 0, axis)
    return A


def bernstein_bnb(sc: Scenario, eps: Budget, a: str, b: str, seq: tuple, F: Poly,
                  max_boxes: int = 4000, deadline: float | None = None
                  ) -> tuple[str, dict, tuple | None]:
    """Prove F >= 0 on the parameter box by Bernstein bounds and subdivision (sound, exact).

    A box is proved when all its Bernstein coefficients are >= 0 (exact Fractions, so zeros
    on the boundary of the domain are fine). An undecided box's midpoint is re-checked
    exactly as a counterexample candidate, then the box is halved along its widest side.
    """
    names = list(sc.parameters)
    A = _dense(F)
    stack = [[(p.low, p.high) for p in sc.parameters.values()]]
    boxes = 0
    while stack:
        box = stack.pop()
        boxes += 1
        if boxes > max_boxes or (deadline is not None and time.perf_counter() > deadline):
            return "unknown", {}, None  # out of boxes or of the length's time
        coef = bernstein_coefficients(A, box)
        if min(coef.flat) >= 0:
            continue
        mid = {n: (lo + hi) / 2 for n, (lo, hi) in zip(names, box)}
        if F([mid[n] for n in names]) < 0:
            found = _recheck(sc, eps, a, b, seq, mid)
            if found is not None:
                return "violated", mid, found
        i = max(range(len(box)), key=lambda j: box[j][1] - box[j][0])
        lo, hi = box[i]
        m = (lo + hi) / 2
        stack.append(box[:i] + [(lo, m)] + box[i + 1:])
        stack.append(box[:i] + [(m, hi)] + box[i + 1:])
    return "verified", {}, None


def _recheck(sc: Scenario, eps: Budget, a: str, b: str, seq: tuple, vals: dict
             ) -> tuple | None:
    """Exact (Fraction) probabilities if the point really violates the bound, else None."""
    for name, p in sc.parameters.items():
        if name in vals and not p.contains(vals[name]):
            return None
    try:
        p1 = sc.probability(a, seq, vals, encoded=True)
        p2 = sc.probability(b, seq, vals, encoded=True)
    except Exception:
        return None
    return (p1, p2) if eps.exceeded(p1, p2) else None


def branch_and_bound(sc: Scenario, eps: Budget, a: str, b: str, seq: tuple,
                     gd: Mapping[int, Fraction], max_boxes: int = 4000
                     ) -> tuple[str, dict, tuple | None]:
    """Prove Z_a N_b c - Z_b N_a >= 0 over the parameter box, or find a violating point.

    Interval enclosures (outward rounding) over closed sub-boxes of the domain: a box whose
    lower bound is >= 0 is proved; the midpoint of an undecided box is evaluated exactly and
    returned when it violates; otherwise the box is split along its widest side. Returns
    ("verified" | "violated" | "unknown", parameter values, exact probabilities).
    """
    c_lo = eps.bounds()[0]
    names = list(sc.parameters)
    wa = sc.initial[a]
    wb = sc.initial[b]

    def enclose(box: dict) -> Interval:
        env = {n: Interval(float(lo), float(hi)) for n, (lo, hi) in box.items()}
        ev = {}

        def w(v: Any) -> Interval:
            key = id(v)
            if key not in ev:
                ev[key] = v.evaluate(env, Interval.of) if isinstance(v, Expr) else \
                    Interval.of(v)
            return ev[key]

        za = sum((w(v) for v in wa.values()), Interval(0.0))
        zb = sum((w(v) for v in wb.values()), Interval(0.0))
        na = sum((w(wa[d]) * Interval.of(x) for d, x in gd.items() if d in wa), Interval(0.0))
        nb = sum((w(wb[d]) * Interval.of(x) for d, x in gd.items() if d in wb), Interval(0.0))
        return za * nb * Interval.of(c_lo) - zb * na

    stack = [{n: (p.low, p.high) for n, p in sc.parameters.items()}]
    boxes = 0
    while stack:
        box = stack.pop()
        boxes += 1
        if boxes > max_boxes:
            return "unknown", {}, None
        if enclose(box).lo >= 0:
            continue
        mid = {n: (lo + hi) / 2 for n, (lo, hi) in box.items()}
        found = _recheck(sc, eps, a, b, seq, mid)
        if found is not None:
            return "violated", mid, found
        widest = max(names, key=lambda n: box[n][1] - box[n][0])
        lo, hi = box[widest]
        m = (lo + hi) / 2
        stack.append({**box, widest: (lo, m)})
        stack.append({**box, widest: (m, hi)})
    return "verified", {}, None


# -- Algorithm 1: symbolic observation sequences ----------------------------------------------

def _select(w: Any, row: Mapping[int, Any], env: Mapping, scale: Any, as_int: bool) -> Any:
    """SELECT(w, Omega, o(s, .)) * scale as an if-then-else chain (0 outside the row)."""
    term = rv(0)
    for o, v in sorted(row.items(), reverse=True):
        val = to_z3(v, env)
        target = z3.IntVal(o) if as_int else rv(o)
        term = z3.If(w == target, val * scale, term)
    return term


def algorithm1_terms(h: HMM, weights: Mapping[int, Any], ws: list, env: Mapping,
                     as_int: bool, aux: list, tag: str) -> Any:
    """sum_s alpha_{k-1}(s) for the symbolic sequence ``ws`` (Eqs. 2-3 with SELECT).

    Each alpha_t(s) is a fresh real constrained equal to its recursion term (appended to
    ``aux``), so the query stays linear in size; states unreachable at step t are skipped.
    """
    alpha: dict[int, Any] = {}
    for s, wgt in weights.items():
        v = z3.Real(f"{tag}_0_{s}")
        aux.append(v == _select(ws[0], h.emission[s], env, to_z3(wgt, env), as_int))
        alpha[s] = v
    for t in range(1, len(ws)):
        incoming: dict[int, list] = {}
        for s, a in alpha.items():
            for s2, p in h.transition[s].items():
                incoming.setdefault(s2, []).append(a * to_z3(p, env))
        alpha = {}
        for s2, terms in incoming.items():
            v = z3.Real(f"{tag}_{t}_{s2}")
            aux.append(v == _select(ws[t], h.emission[s2], env, z3.Sum(terms), as_int))
            alpha[s2] = v
    return z3.Sum(list(alpha.values())) if alpha else rv(0)


def _linear_solver(timeout: float) -> Any:
    """A solver for the fixed-parameter (linear) queries of Algorithm 1.

    Simplification, elimination of the alpha definitions (solve-eqs) and of the SELECT
    if-then-elses before the SMT core: a complete decision procedure for these quantifier-free
    linear integer/real queries, several times faster than the default portfolio here.
    """
    tactic = z3.Then("simplify", "solve-eqs", "elim-term-ite", "smt")
    return z3.TryFor(tactic, max(1, int(timeout * 1000))).solver()


def factor_ladder(eps: Budget, short_digits: int = 6) -> list[Fraction]:
    """Rational lower bounds c <= e^epsilon to try, shortest first.

    Any c <= e^epsilon is sound for UNSAT: Pr(w | a) <= c Pr(w | b) implies the bound with
    e^epsilon. A short c (``short_digits`` significant digits) keeps the simplex's rationals
    small, which makes z3 about ten times faster on noisy max; a SAT model found with it is
    re-checked exactly against e^epsilon, and if it fails (its ratio lies in (c, e^epsilon])
    the query is repeated with the 40-digit bound. A rational e^epsilon (``ln(2)``) is used
    as is.
    """
    if eps.factor is not None:
        return [eps.factor]
    short, full = eps.bounds(short_digits)[0], eps.bounds()[0]
    return [short, full] if short < full else [full]


def algorithm1(sc: Scenario, eps: Budget, k: int, timeout: float = 60.0,
               pairs: list | None = None, symmetry: str = "auto") -> SmtOutcome:
    """Algorithm 1 (PufferfishCheck) for every pair of the scenario at length k.

    The HMM is lumped first (:func:`~.hmm.lump`: states with the same rows merged, which
    keeps every sequence probability). The forward terms sum_s alpha_{k-1}(s) of Eqs. 2-3
    over the symbolic sequence w_0..w_{k-1} are built once per initial state (secret or data
    set) and shared by every pair that uses it; each pair is one GT query. SAT models are
    re-checked exactly on the original scenario.

    ``symmetry="auto"`` (when ``pairs`` is not given): if the scenario declares symmetries
    (``Scenario.symmetries``), they are verified exactly and one pair per orbit is checked
    (:mod:`.symmetry`, where the soundness argument is); ``"none"`` checks every pair. The
    outcome's ``details['symmetry']`` records what was used.
    """
    from .hmm import lump
    from .symmetry import reduce_pairs

    _need_z3()
    if symmetry not in ("auto", "none"):
        raise SolverError(f"symmetry must be 'auto' or 'none', got {symmetry!r}.")
    t0 = time.perf_counter()
    details: dict = {}
    todo = list(pairs) if pairs is not None else list(sc.pairs)
    if pairs is None and symmetry == "auto" and sc.symmetries:
        red = reduce_pairs(sc.hmm, sc.initial, sc.pairs, sc.symmetries)
        todo = red.pairs
        details["symmetry"] = {**red.details(), "seconds": time.perf_counter() - t0}
    h, block = lump(sc.hmm)  # exact: fewer states, same sequence probabilities
    env, dom = param_vars(sc.parameters)
    nonlinear = bool(env)

    def lumped(weights: Mapping[int, Any]) -> dict[int, Any]:
        out: dict[int, list] = {}
        for st, v in weights.items():
            out.setdefault(block[st], []).append(to_z3(v, env))
        return {b: (t[0] if len(t) == 1 else z3.Sum(t)) for b, t in out.items()}

    as_int = not nonlinear
    m = len(h.observations)
    ws = [z3.Int(f"w{t}") if as_int else z3.Real(f"w{t}") for t in range(k)]
    wdom = []
    for w in ws:  # w_t in Omega
        if as_int:
            wdom += [w >= 0, w < m]
        else:
            wdom.append(z3.Or([w == rv(o) for o in range(m)]))
    side = []
    if h.symbolic:  # symbolic rows: distributions as side constraints
        for rows in (h.transition, h.emission):
            for row in rows:
                if any(isinstance(v, Expr) for v in row.values()):
                    side.append(z3.Sum([to_z3(v, env) for v in row.values()]) == 1)
                    side += [to_z3(v, env) >= 0 for v in row.values() if isinstance(v, Expr)]
    terms: dict[str, tuple] = {}

    def forward_terms(name: str) -> tuple:
        """(Z_name, sum alpha_{k-1}, alpha definitions) for one initial state, built once."""
        if name not in terms:
            aux: list = []
            z = z3.Sum([to_z3(v, env) for v in sc.initial[name].values()])
            tot = algorithm1_terms(h, lumped(sc.initial[name]), ws, env, as_int, aux,
                                   f"s{len(terms)}")
            terms[name] = (z, tot, aux)
        return terms[name]

    ladder = [eps.bounds()[0]] if nonlinear else factor_ladder(eps)
    solvers: set[str] = set()
    queries = 0
    undecided = []
    t_solve = 0.0
    for a, b in todo:
        za, sa, aux_a = forward_terms(a)
        zb, sb, aux_b = forward_terms(b)
        base = dom + wdom + side + aux_a + (aux_b if b != a else []) + [za > 0, zb > 0]
        why = ""
        for c in ladder:
            remaining = timeout - (time.perf_counter() - t0)
            if remaining <= 0:  # the length's time is used up: undecided, not tried longer
                why = "solver time used up"
                break
            gt = zb * sa > rv(c) * za * sb  # GT with the normalizers cleared
            queries += 1
            ts = time.perf_counter()
            if nonlinear:
                status, model, solver = _solve(base + [gt], remaining, True)
            else:
                s = _linear_solver(remaining)
                s.add(*base, gt)
                r = check_solver(s)
                status = "sat" if r == z3.sat else "unsat" if r == z3.unsat else "unknown"
                model = s.model() if r == z3.sat else None
                solver = "z3 (simplify, solve-eqs, smt)"
            t_solve += time.perf_counter() - ts
            solvers.add(solver)
            if status == "unsat":
                why = ""
                break
            if status == "sat":
                seq = tuple(int(model_value(model, w)) for w in ws)
                vals = {n: model_value(model, v) for n, v in env.items()}
                found = _recheck(sc, eps, a, b, seq, vals)
                if found is not None:
                    details["solve_seconds"] = t_solve
                    return SmtOutcome("violated", k, h.decode(seq), (a, b), vals, found,
                                      solver, queries=queries, details=details)
                why = "model failed the exact re-check"
            else:
                why = "solver gave up or timed out"
        if why:
            undecided.append((a, b, why))
    path = " + ".join(sorted(solvers))
    details.update({"pairs_checked": len(todo), "initial_states": len(terms),
                    "solve_seconds": t_solve})
    if undecided:
        a, b, why = undecided[0]
        return SmtOutcome("unknown", k, None, (a, b), solver=path,
                          message=f"{len(undecided)} pair(s) undecided ({why})",
                          queries=queries, details=details)
    return SmtOutcome("verified", k, solver=path, queries=queries, details=details)
