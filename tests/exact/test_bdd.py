"""The BDD language, its compiler and weighted model counting (privet.exact.bdd)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from privet.core.errors import MechanismError
from privet.exact import programs
from privet.exact.bdd import program


def _brute(fn, x, draws):
    """Reference distribution: enumerate every joint outcome of a list of discrete draws."""
    out: dict = {}
    for combo in itertools.product(*[list(enumerate(p)) for p in draws]):
        w = Fraction(1)
        for _, q in combo:
            w *= q
        y = fn(x, [v for v, _ in combo])
        out[y] = out.get(y, Fraction(0)) + w
    return {k: v for k, v in out.items() if v}


@pytest.mark.parametrize("x", [(0, 3), (2, 1), (3, 3)])
def test_integer_arithmetic_and_comparisons_match_python(x):
    probs_a = [Fraction(1, 6), Fraction(1, 2), Fraction(1, 3)]      # values -1, 0, 2
    vals_a = [-1, 0, 2]
    probs_b = [Fraction(1, 4), Fraction(3, 4)]                      # values 0, 3

    @program(length=2, low=0, high=3)
    def prog(p, x):
        a = p.discrete(probs_a, vals_a)
        b = p.discrete(probs_b, [0, 3])
        s = x[0] + a - b
        return (s, p.ite(s < x[1], 1, 0), p.ite(s == x[1], 1, 0), p.clip(s, 0, 2),
                p.max(a, x[1] - b))

    def ref(x, v):
        a, b = vals_a[v[0]], [0, 3][v[1]]
        s = x[0] + a - b
        return (s, int(s < x[1]), int(s == x[1]), min(max(s, 0), 2), max(a, x[1] - b))

    want = _brute(ref, x, [probs_a, probs_b])
    for symbolic in (True, False):
        c = prog.compile(exact=True, x=None if symbolic else x)
        got = c.distribution(x).as_dict()
        assert got == want
        # the batched evaluator gives the same numbers for every output, zeros included
        ys = np.asarray(list(want) + [(9, 0, 0, 0, 0)])
        lp, sc = c.probs(np.asarray([x] * len(ys)), ys)
        assert [Fraction(int(s), c.denominator) for s in sc] == list(want.values()) + [0]


def test_wmc_totals_one_despite_complemented_edges():
    # a program whose diagram certainly uses complemented edges (xor chains)
    @program(length=4, low=0, high=1)
    def parity(p, x):
        acc = p.flip(Fraction(1, 3))
        for xi in x:
            acc = acc ^ (p.flip(Fraction(1, 5)) ^ (xi == 1))
        return acc.as_int()

    c = parity.compile(exact=True)
    g = c.graph()
    assert g.lo_neg.any() or g.root_neg  # complemented edges are present
    for x in itertools.product((0, 1), repeat=4):
        d = c.distribution(x)
        assert d.total() == 1
        assert len(d.probs) == 2
    cf = parity.compile(exact=False)
    lp, _ = cf.probs(np.zeros((2, 4), dtype=int), np.array([[0], [1]]))
    assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-12)


def test_randomized_response_bdd_matches_formula_and_is_linear():
    n, lam = 6, Fraction(1, 5)
    c = programs.randomized_response(n, lam).compile(exact=True)
    x = (1, 0, 1, 1, 0, 0)
    d = c.distribution(x).as_dict()
    assert len(d) == 2**n
    for y, p in d.items():
        k = sum(a != b for a, b in zip(x, y))
        assert p == lam**k * (1 - lam) ** (n - k)
    # size grows linearly in n (Table II: the model stays tiny)
    sizes = [programs.randomized_response(m).compile().size for m in (4, 8, 16)]
    assert sizes[2] - sizes[1] == 2 * (sizes[1] - sizes[0])


def test_log_space_keeps_tiny_probabilities():
    n = 800
    c = programs.randomized_response(n, 0.2).compile()
    lp, _ = c.probs(np.ones((1, n), dtype=int), np.zeros((1, n), dtype=int))
    assert lp[0] == pytest.approx(n * np.log(0.2), rel=1e-12)


def test_python_if_on_random_value_is_a_clear_error():
    @program(length=1)
    def bad(p, x):
        if p.flip(0.5):
            return 1
        return 0

    with pytest.raises(MechanismError, match="p.ite"):
        bad.compile()
