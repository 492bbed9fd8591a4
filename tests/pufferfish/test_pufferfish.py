"""Tests for privet.pufferfish: Table 2 of FAIER, Sec. 6.3's closed form, Algorithm 4."""

from __future__ import annotations

import argparse
import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

import privet
from privet.core.errors import InputError
from privet.core.results import from_json, to_json
from privet.pufferfish import budget, check, models, pufferfish, scenario, smt
from privet.pufferfish.bound import lower_bound
from privet.pufferfish.hmm import forward, forward_exact, hmm

# -- Table 2 -------------------------------------------------------------------------------

def test_truncated_geometric_is_ln2_dp():
    v = pufferfish("ex2", "ln(2)")
    assert v.status == "verified" and v.k == 1
    assert v.details["max_ratio"] == 2  # tight: ln 2 is exact


def test_example3_violates_ln2_with_counterexample_and_holds_ln4():
    v = pufferfish("ex3", "ln(2)")
    assert v.status == "violated"
    assert v.counterexample in (("~0",), ("~2",))
    assert v.ratio == 4 and 0 < v.parameters["p"] < 1
    sc = scenario.example3()
    # the paper's counterexample 2~: Pr(2~ | c) = 2/3 > 2 * Pr(2~ | nc) = 2 * 1/6
    assert sc.probability("c", ["~2"], {"p": Fraction(1, 3)}) == Fraction(2, 3)
    assert sc.probability("nc", ["~2"], {"p": Fraction(1, 3)}) == Fraction(1, 6)
    assert pufferfish("ex3", "ln(4)").status == "verified"


def test_example4_holds_and_table1_values():
    sc = scenario.example4()
    p = Fraction(1, 3)
    # Table 1 of the paper
    assert sc.probability("with", ["~0"], {"p": p}) == (4 - 3 * p) / (12 - 6 * p)
    assert sc.probability("without", ["~1"], {"p": p}) == (-2 * p * p + 2 * p + 1) / 6
    assert sc.probability("with", ["~2"], {"p": p}) == 2 / (6 - 3 * p)
    assert pufferfish(sc, "ln(2)").status == "verified"
    # and it is tight: ln(1.9) fails for some p
    assert pufferfish(sc, "ln(19/10)").status == "violated"


def test_example5_holds():
    v = pufferfish("ex5", "ln(2)", query_timeout=0.5)
    assert v.status == "verified", v.message
    assert "branch-and-bound" in v.solver or "z3" in v.solver


def test_example6_violated_with_witness():
    v = pufferfish("ex6", "ln(2)")
    assert v.status == "violated" and v.k == 2
    p2 = v.parameters["p2"]
    assert 0 < p2 < 1
    sc = scenario.example6()
    p1, p2_prob = (sc.probability(n, v.counterexample, v.parameters) for n in v.pair)
    assert p1 > 2 * p2_prob and (p1, p2_prob) == v.probabilities
    # the paper's witness p2 = 1/2 also breaks ln 2
    fixed = sc.substitute({"p2": Fraction(1, 2)})
    assert check.check_fixed(fixed, budget("ln(2)"), 2).status == "violated"


def test_example6_prior_is_a_product_of_binomials():
    """Regression (issue 12): "3/10**2" evaluated to 3/100, so the known diseases' priors
    summed to 47/50, 22/25 and 4/5 and the ratio at p2 = 1/2 read 3.3465."""
    from privet.pufferfish.expr import exact_value, parse
    from privet.pufferfish.scenario import _binomial2, pufferfish_scenario

    for p in ("3/10", "4/10", "5/10"):
        q = Fraction(p)
        weights = {c: exact_value(parse(w), {}) for c, w in _binomial2(p).items()}
        assert weights == {0: (1 - q) ** 2, 1: 2 * q * (1 - q), 2: q ** 2}
        assert sum(weights.values()) == 1
    # brute force: the prior built by hand from Fractions, the same model and secrets
    sc = scenario.example6().substitute({"p2": Fraction(1, 2)})
    binom = [{0: Fraction(1, 2), 2: Fraction(1, 2)}] + [
        {0: (1 - q) ** 2, 1: 2 * q * (1 - q), 2: q ** 2}
        for q in (Fraction(1, 2), Fraction(3, 10), Fraction(4, 10), Fraction(5, 10))]
    import itertools

    prior = {}
    for combo in itertools.product(*[list(b.items()) for b in binom]):
        w = Fraction(1)
        for _, x in combo:
            w *= x
        prior["v=" + "".join(str(c) for c, _ in combo)] = w
    hand = pufferfish_scenario(sc.hmm, prior, {"ill": lambda t: t.startswith("v=2"),
                                               "healthy": lambda t: t.startswith("v=0")})
    obs = sc.hmm.observations
    worst = max(hand.probability("ill", w) / hand.probability("healthy", w)
                for w in itertools.product(obs, repeat=2)
                if hand.probability("healthy", w) > 0)
    o = check.check_fixed(sc, budget("ln(2)"), 2)
    assert o.max_ratio == worst and abs(float(worst) - 3.4266488) < 1e-6


def test_above_threshold_not_4ln2_dp():
    v = pufferfish("above_threshold", "4*ln(2)", k_max=15)
    assert v.status == "violated"
    assert v.ratio > 16 and v.k <= 15
    sc = scenario.above_threshold_dp()
    p1, p2 = (sc.probability(n, v.counterexample) for n in v.pair)
    assert p1 / p2 == v.ratio


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_above_threshold_closed_form(n):
    sc = scenario.above_threshold_dp()
    seq = models.above_threshold_sequence(n)
    r = sc.probability("D,t=2", seq) / sc.probability("D',t=2", seq)
    assert r == models.above_threshold_ratio(n)
    assert r > Fraction(16, 11) * 2**n


def test_above_threshold_ratio_grows_like_two_to_the_n():
    # the paper's (16/11) 2^n is a lower bound (it enlarges the denominator); the exact ratio
    # is (8/15 (2/3)^n + ...) / (4/15 (1/3)^n + ...) ~ 2 * 2^n, so unbounded either way
    for n in (10, 20, 40):
        r = models.above_threshold_ratio(n) / 2**n
        assert Fraction(16, 11) < r < 2
    assert abs(float(models.above_threshold_ratio(60) / 2**60) - 2) < 1e-9


# -- noisy max and Algorithm 4 ----------------------------------------------------------------

def test_noisy_max_exact_epsilon_and_algorithm4():
    sc = scenario.noisy_max_dp(5)
    o = check.check_fixed(sc, budget(1.373), 2)
    assert o.status == "verified" and o.max_ratio == Fraction(288, 73)
    assert set(o.max_witness[0]) == {"[1, 1, 1, 1, 1]", "[0, 2, 2, 2, 2]"}
    b = lower_bound(sc, 0.001, bracket=(1.34, 1.38))
    assert b.value == pytest.approx(1.372) and b.details["upper"] == pytest.approx(1.373)
    assert b.value < math.log(288 / 73) < b.details["upper"]
    # a wrong bracket is repaired by the verifier, never trusted
    b2 = lower_bound(sc, 0.001, bracket=(1.5, 1.6))
    assert b2.value == pytest.approx(1.372)


def test_bound_with_stub_bracket_callable():
    sc = scenario.noisy_max_dp(3)
    exact = check.check_fixed(sc, budget(5.0), 2).max_ratio
    b = lower_bound(sc, 0.01, bracket=lambda: (0.5, 2.5))
    assert b.value < math.log(exact) <= b.details["upper"]


def test_builder_from_library_mechanism_matches_fig2():
    mech = privet.mechanisms.get("faier.discrete_noisy_max")
    inputs = list(itertools.product(range(3), repeat=3))
    sc = scenario.mechanism_scenario(mech, inputs)
    ours = check.check_fixed(sc, budget(5.0), 2).max_ratio
    fig2 = check.check_fixed(scenario.noisy_max_dp(3), budget(5.0), 2).max_ratio
    assert ours == fig2


# -- forward algorithm and SMT ----------------------------------------------------------------

def test_float_forward_matches_exact():
    sc = scenario.above_threshold_dp()
    h = sc.hmm
    rng = np.random.default_rng(3)
    init = np.zeros(h.n_states)
    init[h.state_index("A:t=1")] = 1
    seqs = [models.above_threshold_sequence(n) for n in (1, 4, 60)]
    for s in seqs:
        exact = forward_exact(h, {"A:t=1": 1}, s)
        logp = forward(h, init, [s])[0]
        assert math.isclose(logp, math.log(exact.numerator) - math.log(exact.denominator),
                            rel_tol=1e-9)
    noise = rng.integers(0, len(h.observations), size=(4, 5))
    assert np.all(np.isneginf(forward(h, init, noise, encoded=True)) |
                  np.isfinite(forward(h, init, noise, encoded=True)))


def test_lumping_keeps_probabilities():
    from privet.pufferfish.hmm import lump

    sc = scenario.noisy_max_dp(3)
    h2, block = lump(sc.hmm)
    assert h2.n_states < sc.hmm.n_states
    d = sc.hmm.state_index("v=021")
    for seq in (["_", "1"], ["_", "2"], ["_", "3", "end"]):
        assert forward_exact(h2, {block[d]: 1}, seq) == forward_exact(sc.hmm, {d: 1}, seq)


def test_algorithm1_smt_path():
    assert pufferfish("ex2", "ln(2)", method="smt").status == "verified"
    v = pufferfish("ex3", "ln(2)", method="smt")
    assert v.status == "violated" and v.ratio == 4 and "z3" in v.solver
    assert pufferfish("ex4", "ln(2)", method="smt").status in ("verified", "unknown")


@pytest.mark.slow
def test_algorithm1_above_threshold():
    o = smt.algorithm1(scenario.above_threshold_dp(), budget("4*ln(2)"), 7)
    assert o.status == "verified"  # the ratio reaches only 8 at length 7
    v = pufferfish("above_threshold", "4*ln(2)", k_min=11, k_max=11, method="smt")
    assert v.status == "violated" and v.ratio > 16


def test_irrational_epsilon_is_decided_exactly():
    # e^(ln 2 - 1e-9) is just below 2: the ratio-2 sequences violate it
    v = pufferfish("ex2", math.log(2) - 1e-9)
    assert v.status == "violated" and v.ratio == 2
    assert pufferfish("ex2", math.log(2) + 1e-9).status == "verified"


def test_float_ln2_is_read_as_ln2():
    # math.log(2) is 2e-17 below ln 2; it stands for ln 2, as the geometric mechanism claims
    v = pufferfish("ex2", math.log(2))
    assert v.status == "verified" and v.epsilon_text == "ln(2)"


# -- bad input --------------------------------------------------------------------------------

def test_non_stochastic_matrix():
    with pytest.raises(InputError, match="not stochastic"):
        hmm(["a", "b"], ["x"], [[Fraction(1, 2), Fraction(1, 3)], [0, 1]], [[1], [1]])


def test_observation_outside_omega():
    sc = scenario.example2()
    with pytest.raises(InputError, match="not in the observation set"):
        sc.probability("[0]" if "[0]" in sc.initial else "0", ["~7"])


def test_prior_with_zero_probability_secret():
    h = models.truncated_geometric()
    with pytest.raises(InputError, match="probability 0"):
        scenario.pufferfish_scenario(h, {"0": "1-p", "2": "p"}, {"c": ["1"], "nc": ["0"]},
                                     parameters={"p": (0, 1)})


# -- spec files, JSON, CLI ---------------------------------------------------------------------

EX4_YAML = """
name: example 4 from a file
model: {builtin: truncated_geometric, alpha: 1/2, n: 2}
parameters: {p: [0, 1]}
prior: {"0": "(1-p)**2", "1": "2*p*(1-p)", "2": "p**2"}
secrets: {with: ["1", "2"], without: ["0", "1", "2"]}
epsilon: ln(2)
"""


def test_spec_file_and_json_round_trip(tmp_path):
    f = tmp_path / "ex4.yaml"
    f.write_text(EX4_YAML)
    v = pufferfish(str(f))
    assert v.status == "verified" and v.scenario == "example 4 from a file"
    back = from_json(to_json(v))
    assert back.status == v.status and back.k == v.k
    spec = {"model": {"states": ["a", "b"], "observations": ["x", "y"],
                      "transition": {"a": {"a": 1}, "b": {"b": 1}},
                      "emission": {"a": {"x": "3/4", "y": "1/4"}, "b": {"x": "1/4", "y": "3/4"}}},
            "dp": {"inputs": {"0": "a", "1": "b"}, "pairs": [["0", "1"], ["1", "0"]]},
            "k": 2}
    assert pufferfish(spec, "ln(9)").status == "verified"
    w = pufferfish(spec, "ln(8)")
    assert w.status == "violated" and w.ratio == 9 and w.k == 2


def test_cli_json_exit_codes(capsys):
    from privet.report.pufferfish import add_cli, run_cli

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    add_cli(sub)
    args = parser.parse_args(["pufferfish", "ex3", "--epsilon", "ln(2)", "--json"])
    assert run_cli(args) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "violated"
    args = parser.parse_args(["pufferfish", "ex2"])
    assert run_cli(args) == 0


ONE_SECRET = {"model": {"builtin": "truncated_geometric"},
              "prior": {"0": "1/2", "1": "1/4", "2": "1/4"},
              "secrets": {"only": ["0", "1", "2"]}}


@pytest.mark.parametrize("spec", [ONE_SECRET, {**ONE_SECRET, "secrets": {"a": ["0"], "b": ["1"]},
                                               "pairs": []}])
def test_a_scenario_with_nothing_to_compare_is_not_verified(spec, tmp_path, capsys):
    """Regression (issue 12): one secret, or pairs: [], read "verified ... for every
    observation sequence" after comparing nothing, exit 0."""
    from privet.cli import main
    from privet.core.errors import NothingToCheckError

    with pytest.raises(NothingToCheckError, match="nothing to check"):
        pufferfish(spec, "ln(2)")
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    for extra in ([], ["--bound"]):
        assert main(["pufferfish", str(path), "--epsilon", "ln(2)", *extra]) == 2
        err = capsys.readouterr().err
        assert "nothing to check" in err and "verified" not in err


def test_algorithm4_brackets_on_the_inputs_it_verifies():
    """Regression (issue 12): with inputs of length 3 the bracket came from detect's default
    lengths 5 and 10 and read (1.3, 1.6) beside the exact epsilon 1.232."""
    from privet.pufferfish.bound import bracket_inputs

    mech = privet.mechanisms.get("faier.discrete_noisy_max")
    inputs = list(itertools.product(range(3), repeat=3))
    pairs = bracket_inputs(mech, inputs)
    assert pairs and all(len(a) == len(b) == 3 for a, b in pairs)
    b = lower_bound(mech, 0.01, inputs=inputs,
                    detect_options={"n_select": 5_000, "n_final": 20_000, "seed": 0,
                                    "test_epsilons": [0.6, 0.9, 1.2, 1.5, 1.8]})
    lo, hi = b.details["bracket"]
    assert b.details["bracket_source"] == "privet.detect p-value curve"
    assert lo is not None and lo <= b.value and b.details["bracket_corrected"] == []


@pytest.mark.slow
def test_algorithm4_with_detect_bracket_on_library_mechanism():
    mech = privet.mechanisms.get("faier.discrete_noisy_max")
    inputs = list(itertools.product(range(3), repeat=3))
    sc = scenario.mechanism_scenario(mech, inputs)
    exact = check.check_fixed(sc, budget(5.0), 2).max_ratio
    pairs = [(p.d1, p.d2) for p in mech.neighbors.pairs(lengths=(3,))]
    b = lower_bound(sc, 0.001, mechanism=mech,
                    detect_options={"inputs": pairs, "n_select": 5_000, "n_final": 20_000})
    assert b.value < math.log(exact) <= b.details["upper"]
    assert b.details["bracket_source"] == "privet.detect p-value curve"


def test_ctrl_c_stops_a_running_solver_query(monkeypatch):
    # z3 took the SIGINT itself, answered "unknown" for the query at hand and the run went
    # on (12 s after Ctrl-C, reported as "solver gave up"); now the query runs in a thread
    # this one waits on, and a KeyboardInterrupt while waiting interrupts z3 and ends the
    # query before it propagates (z3 is not thread-safe: a query left running crashes the
    # next one). The Ctrl-C is simulated on the wait itself, not sent as a signal, so that
    # the test cannot leave a query running in the test process.
    import threading

    import z3

    from privet.pufferfish import smt

    x, y = z3.Ints("x y")
    s = z3.Solver()
    s.set("timeout", 30_000)                      # bounded even if the interrupt were lost
    s.add(x > 1, y > 1, x * y == 1000000016000000063)  # (10^9 + 7)(10^9 + 9): minutes
    real_join, calls = threading.Thread.join, []

    def join(self, timeout=None):
        calls.append(timeout)
        if len(calls) == 3:   # Ctrl-C while the main thread waits for the query
            raise KeyboardInterrupt
        return real_join(self, timeout)

    monkeypatch.setattr(threading.Thread, "join", join)
    with pytest.raises(KeyboardInterrupt):
        smt.check_solver(s)
    monkeypatch.setattr(threading.Thread, "join", real_join)
    assert not any(t.name == "z3 check" and t.is_alive() for t in threading.enumerate())
    assert z3.get_param("ctrl_c") == "false"      # z3 no longer takes the signal itself


def test_a_length_beyond_the_cap_names_the_argument():
    from privet.core.errors import ParameterError

    with pytest.raises(ParameterError, match=r"give k_max=\.\.\. up to") as err:
        pufferfish("ex3", "ln(2)", k_max=10_000)
    assert "--k-max up to" in err.value.for_cli()


PARAMETRIC_CHAIN = {
    "name": "parametric chain",
    "model": {"states": ["s0", "s1", "s2", "s3"], "observations": ["lo", "mid", "hi"],
              "transition": [[0.5, 0.3, 0.1, 0.1], [0.2, 0.5, 0.2, 0.1],
                             [0.1, 0.2, 0.5, 0.2], [0.1, 0.1, 0.3, 0.5]],
              "emission": [[0.6, 0.3, 0.1], [0.3, 0.4, 0.3], [0.2, 0.4, 0.4],
                           [0.1, 0.3, 0.6]]},
    "parameters": {"p": [0, 1], "q": [0, 1]},
    "prior": {"s0": "(1-p)*(1-q)", "s1": "p*(1-q)", "s2": "(1-p)*q", "s3": "p*q"},
    "secrets": {"low": ["s0", "s1"], "high": ["s2", "s3"]},
}


def test_the_parametric_check_keeps_to_its_timeout_and_says_unknown():
    # each (pair, sequence) query had a floor of 0.2 s and branch-and-bound had no clock, so
    # "--timeout 1" ran 200 s at length 8 and said "verified"; now the length's time ends the
    # check, and the lengths not decided read "unknown"
    v = pufferfish(PARAMETRIC_CHAIN, "ln(30)", k_max=8, timeout=0.5)
    assert v.status == "unknown" and "time of 0.5 s used up" in v.message
    assert v.k < 8  # the first length out of time ends the run: nothing past it verified
