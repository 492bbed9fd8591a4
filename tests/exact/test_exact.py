"""ExactDP, ExactAcc and (epsilon, delta) of privet.exact (WMC paper, Secs. III-V)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from fractions import Fraction

import numpy as np
import pytest

import privet
from privet.core.errors import GridTooLargeError, InputError, NotEnumerableError
from privet.core.neighbors import one_differs
from privet.core.results import from_json, to_json
from privet.exact import accuracy, delta_for, exact, programs, sets
from privet.exact.compile import compile_mechanism

LAM = Fraction(1, 5)


def rr_mech(n: int, lam=0.2):
    """Native randomized response (Algorithm 4) with Bernoulli flips."""

    @privet.mechanism(neighbors=one_differs(1), name=f"rr{n}",
                      domain=privet.Domain(length=n, integer=True, low=0, high=1))
    def rr(noise, x, lam=lam):
        f = noise.bernoulli(lam, shape=x.shape)
        return np.where(f == 1, 1 - x, x)

    return rr


def rr_count_mech(n: int, lam=0.2):
    @privet.mechanism(neighbors=one_differs(1), name=f"rrcount{n}",
                      domain=privet.Domain(length=n, integer=True, low=0, high=1))
    def rrc(noise, x, lam=lam):
        f = noise.bernoulli(lam, shape=x.shape)
        return np.where(f == 1, 1 - x, x).sum(axis=-1)

    return rrc


# -- Section IV: RR^2 ----------------------------------------------------------------------

SECTION_IV_SET = [([0, 0], [1, 0], [0, 0]), ([1, 0], [0, 0], [0, 0]),
                  ([1, 0], [1, 1], [0, 0]), ([1, 1], [1, 0], [0, 0])]


@pytest.mark.parametrize("target", [rr_mech(2), programs.randomized_response(2)],
                         ids=["enumerate", "bdd"])
def test_rr2_tight_epsilon_and_worst_case(target):
    b = exact(target, pairs=SECTION_IV_SET, fractions=True)
    assert b.e_epsilon == 4
    assert b.witness == ([0, 0], [1, 0], [0, 0])
    assert b.details["probabilities"] == (Fraction(16, 25), Fraction(4, 25))
    assert b.details["closed_form"] == "ln(4)"
    full = exact(target, fractions=True)           # exhaustive: same tight bound
    assert full.e_epsilon == 4
    x, x2, y = full.witness
    assert sum(a != c for a, c in zip(x, x2)) == 1


def test_rrcount2_accuracy_is_096():
    for target in (rr_count_mech(2), programs.rr_count(2)):
        a = accuracy(target, 1, fractions=True)
        assert a.one_minus_beta == Fraction(24, 25)
        # the paper prints acc = [0,1]; the minimum is at the all-equal inputs
        assert list(a.worst_input) in ([0, 0], [1, 1])
        assert a.top_k[-1][1] == 1


@pytest.mark.parametrize("backend_target,inputs", [
    (programs.rr_count(8), None), (programs.rr_count(8), "rr"),
    (rr_count_mech(8), "rr"),
])
def test_table_iv(backend_target, inputs):
    a = accuracy(backend_target, 3, inputs=inputs, fractions=True, top_k=4)
    vals = [v for _, v in a.top_k]
    assert vals[:2] == [Fraction("0.9437184")] * 2
    assert vals[2:] == [Fraction("0.9723904")] * 2
    assert {tuple(x) for x, _ in a.top_k[:2]} == {(0,) * 8, (1,) * 8}
    assert all(sum(x) in (1, 7) for x, _ in a.top_k[2:])
    # closed form: P(at most 3 of 8 bits flip)
    want = sum(math.comb(8, j) * LAM**j * (1 - LAM) ** (8 - j) for j in range(4))
    assert a.one_minus_beta == want


# -- ExactDP agreement: exhaustive vs restricted, Enumerate vs BDD ------------------------

def _agree(n: int, lam):
    lam_f = Fraction(repr(lam)) if isinstance(lam, float) else Fraction(lam)
    want = (1 - lam_f) / lam_f
    results = [
        exact(rr_mech(n, lam), fractions=True),
        exact(rr_mech(n, lam), pairs="rr", fractions=True),
        exact(programs.randomized_response(n, lam), fractions=True),
        exact(programs.randomized_response(n, lam), pairs="rr", fractions=True),
    ]
    for r in results:
        assert r.e_epsilon == want
        x, x2, y = r.witness
        p, p2 = r.details["probabilities"]
        assert p / p2 == want
    # the inference tables themselves agree input by input
    c = programs.randomized_response(n, lam).compile(exact=True)
    m = rr_mech(n, lam)
    for x in ([0] * n, [1] * n, [i % 2 for i in range(n)]):
        got = c.distribution(x).as_dict()
        ref = m.distribution(x, exact=True).as_dict()
        assert {k if isinstance(k, tuple) else (k,): v for k, v in got.items()} == ref


@pytest.mark.parametrize("n", range(1, 7))
def test_rr_agreement_small(n):
    _agree(n, 0.2)


def test_rr_agreement_other_lambda():
    _agree(4, Fraction(3, 10))


@pytest.mark.slow
@pytest.mark.parametrize("n", range(7, 11))
def test_rr_agreement_large(n):
    _agree(n, 0.2)


def test_float_and_fraction_modes_agree():
    f = exact(programs.randomized_response(5), pairs="rr")
    q = exact(programs.randomized_response(5), pairs="rr", fractions=True)
    assert f.e_epsilon == pytest.approx(float(q.e_epsilon), rel=1e-12)


def test_rr_sets_sizes():
    assert len(sets.rr_privacy_set(7)) == 14                    # |C_RR| = 2n
    assert len(sets.rr_inference_set(7)) == 8                   # n + 1
    assert sets.inference_set_of(sets.rr_privacy_set(3)) == [
        ((0, 0, 0), (0, 0, 0)), ((1, 0, 0), (0, 0, 0)), ((1, 1, 0), (0, 0, 0)),
        ((1, 1, 1), (0, 0, 0))]


def test_large_restricted_rr_is_exact():
    b = exact(programs.randomized_response(200), pairs="rr", fractions=True)
    assert b.e_epsilon == 4
    assert b.details["bdd_size"] < 10 * 200


# -- discrete noisy max (FAIER) -----------------------------------------------------------

def _check_dnm(b):
    assert b.e_epsilon == Fraction(288, 73)
    assert b.details["closed_form"] == "ln(288/73)"
    assert math.floor(b.epsilon * 1000) / 1000 == 1.372
    p, p2 = b.details["probabilities"]
    assert p / p2 == Fraction(288, 73)


def test_discrete_noisy_max_bdd():
    _check_dnm(exact(programs.discrete_noisy_max(5, 2, Fraction(1, 2)), fractions=True))


def test_library_discrete_noisy_max_compiles_and_auto_picks_the_bdd():
    mech = privet.mechanisms.get("faier.discrete_noisy_max")
    _check_dnm(exact(mech, length=5, backend="bdd", fractions=True))
    auto = exact(mech, length=5, fractions=True)
    _check_dnm(auto)
    assert auto.backend == "bdd"
    assert auto.details["backend_choice"].startswith("bdd (")


@pytest.mark.slow
def test_library_discrete_noisy_max_enumerate():
    mech = privet.mechanisms.get("faier.discrete_noisy_max")
    _check_dnm(exact(mech, length=5, fractions=True))


def test_geometric_above_threshold_backends_agree():
    mech = privet.mechanisms.get("wmc.geometric_above_threshold")
    a = exact(mech, length=3, fractions=True)
    b = exact(mech, length=3, backend="bdd", fractions=True)
    assert a.e_epsilon == b.e_epsilon
    c = compile_mechanism(mech, exact=True, length=3)
    for x in ([0, 1, 2], [2, 2, 0]):
        got = c.distribution(x).as_dict()
        ref = mech.distribution(np.array(x), exact=True).as_dict()
        assert got == ref


# -- (epsilon, delta) ---------------------------------------------------------------------

@pytest.mark.parametrize("target", [rr_mech(3), programs.randomized_response(3)],
                         ids=["enumerate", "bdd"])
def test_delta_for_rr(target):
    eps = 0.5
    d = delta_for(target, eps)
    want = 0.8 - math.exp(eps) * 0.2          # one differing bit; the others cancel
    assert d.delta == pytest.approx(want, abs=1e-12)
    assert sum(a != b for a, b in zip(d.witness[0], d.witness[1])) == 1
    assert delta_for(target, math.log(4) + 1e-9).delta == pytest.approx(0.0, abs=1e-12)
    dx = delta_for(target, eps, fractions=True)
    assert float(dx.delta) == pytest.approx(want, abs=1e-12)


# -- bad input: one clear error each -----------------------------------------------------

def test_continuous_noise_is_named():
    @privet.mechanism(domain=privet.Domain(length=2, integer=True, low=0, high=1))
    def lap(noise, x):
        return np.round(x.sum() + noise.laplace(1.0))

    with pytest.raises(NotEnumerableError, match=r"draw #1.*laplace"):
        exact(lap)


def test_grid_over_cap_suggests_bdd():
    with pytest.raises(GridTooLargeError, match="BDD"):
        exact(rr_mech(12), cap=1000, backend="enumerate")
    # auto never picks an enumeration above the cap: the compiled BDD answers instead
    b = exact(rr_mech(8), cap=100, fractions=True)
    assert b.backend == "bdd" and b.e_epsilon == 4


def test_restricted_set_must_cover_asked_inputs():
    with pytest.raises(InputError, match=r"does not cover input \[0, 1, 1\]"):
        exact(programs.randomized_response(3), pairs="rr", inputs=[[0, 1, 1]])
    # an input the set does contain is fine
    b = exact(programs.randomized_response(3), pairs="rr", inputs=[[1, 1, 0]])
    assert b.e_epsilon == pytest.approx(4)


def test_open_length_needs_length():
    with pytest.raises(InputError, match="length"):
        exact(privet.mechanisms.get("wmc.randomized_response"))


# -- results and CLI ----------------------------------------------------------------------

def test_results_round_trip_json():
    b = exact(programs.randomized_response(3), fractions=True)
    back = from_json(to_json(b))
    assert back.e_epsilon == b.e_epsilon and back.mechanism == b.mechanism
    a = accuracy(programs.rr_count(3), 1, fractions=True)
    back = from_json(to_json(a))
    assert back.one_minus_beta == a.one_minus_beta


def test_cli(capsys):
    from privet.report.exact import add_cli

    ap = argparse.ArgumentParser()
    add_cli(ap.add_subparsers())
    args = ap.parse_args(["exact", "wmc.randomized_response", "--length", "3", "--fractions",
                          "--json"])
    assert args.run(args) == 0                 # exact epsilon = claimed ln 4
    data = json.loads(capsys.readouterr().out)
    assert data["e_epsilon"] == {"__fraction__": "4/1"}
    args = ap.parse_args(["exact", "faier.discrete_noisy_max", "--length", "5",
                          "--backend", "bdd", "--fractions"])
    assert args.run(args) == 1                 # exceeds the claimed ln 2
    assert "288/73" in capsys.readouterr().out


# -- other interfaces --------------------------------------------------------------------

def test_fixed_input_backend_and_pair_and_output_restrictions():
    prog = programs.geometric_above_threshold(3, 2, 1, Fraction(1, 2))
    sym = exact(prog, fractions=True)
    fixed = exact(prog, backend="enumerate", fractions=True)     # one compilation per input
    assert fixed.backend == "bdd-fixed" and fixed.e_epsilon == sym.e_epsilon
    x, x2, y = sym.witness
    # the worst pair alone, every output: same bound
    assert exact(prog, pairs=[(x, x2)], fractions=True).e_epsilon == sym.e_epsilon
    # the worst output alone: same bound; an output that is never worst: smaller
    assert exact(prog, outputs=[y], fractions=True).e_epsilon == sym.e_epsilon
    other = exact(prog, outputs=[0], fractions=True)
    assert other.e_epsilon <= sym.e_epsilon and other.witness[2] == 0


def test_restricted_pairs_must_be_neighbors():
    from privet.core.errors import NeighborError

    with pytest.raises(NeighborError):
        exact(programs.randomized_response(3), pairs=[([0, 0, 0], [1, 1, 0], [0, 0, 0])])


def test_privet_exact_is_the_function_after_submodule_import():
    import privet.exact.bdd  # noqa: F401

    assert privet.exact(programs.randomized_response(2), fractions=True).e_epsilon == 4
    assert privet.exact is exact and sys.modules["privet.exact"].accuracy is accuracy


def test_exhaustive_table_cap_points_to_restricted_sets():
    with pytest.raises(GridTooLargeError, match="restricted"):
        exact(programs.randomized_response(14))


def test_bdd_noisy_max_matches_library_enumeration():
    mech = privet.mechanisms.get("faier.discrete_noisy_max")
    c = programs.discrete_noisy_max(5, 2, 0.5).compile(exact=True)
    grid = privet.Enumerate(exact=True)
    for x in ((0, 2, 2, 2, 2), (1, 1, 1, 1, 1), (2, 0, 1, 2, 0)):
        enumerated = mech.distribution(x, exact=True, grid=grid).as_dict()
        assert c.distribution(x).as_dict() == {k: p for k, p in enumerated.items() if p}
