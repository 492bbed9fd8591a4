"""Argument generation (Sec. 4.4.2): least noise for noise args, MaxSMT for the others."""

import sys
from fractions import Fraction

import numpy as np

import privet
from privet import ops
from privet.detect.engine import generate_inputs
from privet.detect.trace import Trace, least_noise_args, maxsmt_args, run_trace
from privet.mechanisms import get

svt = get("statdp.svt")


def test_trace_returns_noise_free_values_and_records_draws():
    out, trace = run_trace(svt, np.ones(5), svt.resolve_args({"T": 0.5, "N": 1}))
    assert np.asarray(out).tolist() == [[1, np.inf, np.inf, np.inf, np.inf]]
    assert len(trace.draws) == 2
    assert trace.noise_scale() > 0


def test_noise_argument_takes_the_least_noisy_value():
    assert least_noise_args(svt, np.ones(5)) == {"N": 1}


def test_maxsmt_threshold_separates_the_two_inputs():
    plan = maxsmt_args(svt, np.ones(5), np.full(5, 2.0), {"N": 1})
    assert plan.path == "maxsmt"
    # every query diverges exactly when 1 < T <= 2; the margin step centres it
    assert 1.0 < plan.args["T"] < 2.0
    assert plan.satisfied >= 5


def test_library_svt_uses_maxsmt_path():
    planned, path, notes = generate_inputs(get("statdp.svt"))
    assert path == "maxsmt", notes
    assert all("T" in a and a.get("N", 1) == 1 for *_, a in planned)


@privet.mechanism(epsilon=1.0, args={"T": 0.0}, arg_ranges={"T": (-1.0, 3.0)},
                  output=privet.Output.categorical((0, 1), length=None))
def untraceable(noise, x, *, epsilon, T=0.0):
    """Compares with numpy directly (and calls float()), so it cannot be traced."""
    t = float(T)
    return (np.sum(x) + noise.laplace(1 / epsilon) > t).astype(np.int64)


def test_untraceable_mechanism_falls_back_to_a_grid():
    planned, path, notes = generate_inputs(untraceable)
    assert path == "grid"
    assert notes and "tracing failed" in notes[0]
    assert len({a["T"] for *_, a in planned}) >= 2


def test_symbolic_ops_backend_is_registered():
    with ops.semantics("symbolic"):
        assert ops.argmax(np.array([[1.0, 3.0, 2.0]])).tolist() == [1]
    assert Trace().semantics == "symbolic"


def _pairs(mech):
    from privet.detect.engine import _input_pairs

    return [(a, b) for a, b, _ in _input_pairs(mech, None)]


def test_shared_cell_enumeration_reaches_each_pairs_own_maxsmt_optimum(monkeypatch):
    """The cells path must find, for every pair, as many diverging branches as a separate
    z3 Optimize call (MAX_CELLS = 0 forces that path) -- both are exact MaxSMT optima."""
    tr = sys.modules["privet.detect.trace"]  # privet.detect is the function

    mech = get("statdp.isvt3")  # two symbolic arguments: T (Real) and N (Int)
    pairs = _pairs(mech)[::3]
    shared = tr.maxsmt_pairs(mech, pairs, {})
    monkeypatch.setattr(tr, "MAX_CELLS", 0)
    alone = tr.maxsmt_pairs(mech, pairs, {})
    assert [p.satisfied for p in shared] == [p.satisfied for p in alone]
    assert max(p.satisfied for p in shared) > 0
    # and the centred arguments keep that optimum: the pair's branches at those values
    import z3

    for (d1, d2), plan in zip(pairs, shared):
        at = [(z3.Real("T"), z3.RealVal(plan.args["T"])), (z3.Int("N"), z3.IntVal(plan.args["N"]))]
        c1, c2 = ([z3.simplify(z3.substitute(c, *at)) for c in tr.branch_conditions(mech, d, {})]
                  for d in (d1, d2))
        assert sum(z3.is_true(a) != z3.is_true(b) for a, b in zip(c1, c2)) == plan.satisfied


def test_one_symbolic_run_per_input_shape_gives_each_inputs_conditions():
    """Conditions instantiated from the shared run are equivalent to a concrete run's."""
    import z3

    tr = sys.modules["privet.detect.trace"]  # privet.detect is the function

    mech = get("statdp.svt")
    xs = [x for pair in _pairs(mech) for x in pair]
    shared = tr.input_conditions(mech, xs, {"N": 1})
    for x, conds in list(zip(xs, shared))[::7]:
        assert tr._same(z3, conds, tr.branch_conditions(mech, mech.domain.check(x), {"N": 1}))


@privet.mechanism(epsilon=1.0, args={"T": 0.0}, arg_ranges={"T": (-1.0, 3.0)},
                  output=privet.Output.categorical((0, 1), length=None))
def branches_on_input(noise, x, *, epsilon, T=0.0):
    """Branches in Python on a concrete input value: traceable per input, not shared."""
    shift = 1.0 if float(x[0]) > 0.5 else 0.0
    return ops.where(ops.ge(x + shift + noise.laplace(1 / epsilon, x.shape), T), 1, 0)


def test_mechanism_branching_on_the_input_is_traced_input_by_input():
    import z3

    tr = sys.modules["privet.detect.trace"]  # privet.detect is the function

    xs = [np.zeros(5), np.ones(5), np.full(5, 2.0)]
    conds = tr.input_conditions(branches_on_input, xs, {})
    for x, c in zip(xs, conds):
        assert tr._same(z3, c, tr.branch_conditions(branches_on_input, x, {}))
    planned, path, _ = generate_inputs(branches_on_input)
    assert path == "maxsmt"


@privet.mechanism(epsilon=1.0, args={"T": 0.0}, arg_ranges={"T": (-1.0, 3.0)},
                  output=privet.Output.categorical((0, 1), length=None))
def strictly_above(noise, x, *, epsilon, T=0.0):
    """A strict comparison: z3 writes x > T as Not(x <= T)."""
    return ops.where(ops.gt(x + noise.laplace(1 / epsilon, x.shape), T), 1, 0)


def test_negated_comparisons_are_centred_too():
    # the branches diverge for 1 <= T < 2; the centre is 1.5, not a boundary or a tie
    plan = maxsmt_args(strictly_above, np.ones(5), np.full(5, 2.0), {})
    assert plan.args["T"] == 1.5


def test_term_scan_finds_if_then_else_and_named_constants():
    import z3

    from privet.detect.trace import _Scan

    t, n = z3.Real("T"), z3.Int("N")
    x = z3.Real("__x0")
    shared = z3.If(t <= 1, 1, 0)
    plain, with_ite, inputs_only = x + t >= 1, z3.ToReal(n) <= 0.5 + shared, x >= 2
    scan = _Scan(z3, {"T", "N"})
    assert [scan.has_ite(c) for c in (plain, with_ite, inputs_only)] == [False, True, False]
    assert [scan.mentions(c) for c in (plain, with_ite, inputs_only)] == [True, True, False]
    assert not _Scan(z3, {"Q"}).mentions(with_ite)


def _solver_cells(tr, monkeypatch, *problem):
    with monkeypatch.context() as m:
        m.setattr(tr, "_evaluated_cells", lambda *a: ([], False))
        return tr._cells(*problem, 5000)


def _witnessed(z3, syms, terms, cells):
    """Whether every witness of ``cells`` lies in its cell."""
    for row, w in zip(*cells):
        at = [(v, z3.RealVal(w[k]) if isinstance(w[k], Fraction) else
               z3.IntVal(w[k]) if isinstance(w[k], int) else w[k]) for k, v in syms.items()]
        if [z3.is_true(z3.simplify(z3.substitute(c, *at))) for c in terms] != row.tolist():
            return False
    return True


def test_cells_met_on_the_grid_are_completed_by_the_solver(monkeypatch):
    """T in arithmetic: the grid meets the cells of open regions, a cell that exists only
    on a tie (2T = 2) is unreliable in floats and must come from the solver; an operator
    the evaluator does not know (division by a variable) leaves everything to the solver.
    Either way the cells are those of the solver alone."""
    import z3

    tr = sys.modules["privet.detect.trace"]  # privet.detect is the function

    t, n = z3.Real("T"), z3.Int("N")
    syms = {"T": t, "N": n}
    hard = [t >= -1, t <= 3, z3.Or([n == k for k in range(1, 4)])]
    terms = [t + t <= 2, t + t >= 2, n * t > 2, z3.ToReal(z3.If(t > 0, n, 0)) + t >= 2.5]
    found, complete = tr._evaluated_cells(z3, syms, hard, terms)
    cells = tr._cells(z3, syms, hard, terms, 5000)
    assert cells[0].tolist() == _solver_cells(tr, monkeypatch, z3, syms, hard, terms)[0].tolist()
    tie = [True, True]  # 2T <= 2 and 2T >= 2: only T = 1
    assert any(r[:2].tolist() == tie for r in cells[0])
    assert not complete and 0 < len(found) < len(cells[0])
    assert all(list(r[:2]) != tie for r, _ in found)
    assert _witnessed(z3, syms, terms, cells)
    divided = [*terms, t / (z3.ToReal(n) + 1) >= 0.5]
    assert tr._evaluated_cells(z3, syms, hard, divided) == ([], False)
    assert tr._cells(z3, syms, hard, divided, 5000)[0].tolist() == \
        _solver_cells(tr, monkeypatch, z3, syms, hard, divided)[0].tolist()


def test_grid_cells_are_complete_without_the_solver_only_when_provably_so(monkeypatch):
    """T only in direct comparisons with numerals and N confined by its range: the grid
    meets every cell (the tie T = 1 included, as such comparisons are exact), and no solver
    call is needed. Without the range, N (in arithmetic) could leave the grid: the solver
    must prove that there is no other cell."""
    import z3

    tr = sys.modules["privet.detect.trace"]  # privet.detect is the function

    t, n = z3.Real("T"), z3.Int("N")
    syms = {"T": t, "N": n}
    terms = [t <= 1, t >= 1, z3.If(t > 0, n, 0) + n >= 5, n == 2]
    for hard, closed in (([t >= -1, t <= 3, z3.Or([n == k for k in range(1, 4)])], True),
                         ([t >= -1, t <= 3, n >= 1], False)):
        found, complete = tr._evaluated_cells(z3, syms, hard, terms)
        cells = tr._cells(z3, syms, hard, terms, 5000)
        alone = _solver_cells(tr, monkeypatch, z3, syms, hard, terms)
        assert cells[0].tolist() == alone[0].tolist()
        assert complete == closed and (len(found) == len(cells[0]) or not closed)
        assert any(list(r[:2]) == [True, True] for r, _ in found)
        assert _witnessed(z3, syms, terms, cells)
