"""The Compile interpreter: noise-API mechanisms compiled to BDDs give Enumerate's numbers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import privet
from privet.exact import accuracy, exact, programs
from privet.exact.backend import choose_backend
from privet.exact.compile import CompileError, compile_mechanism
from privet.mechanisms import get

from ..search import mechs as search_mechs
from .test_exact import rr_count_mech, rr_mech

BITS3 = privet.Domain(length=3, integer=True, low=0, high=1)


@privet.mechanism(epsilon=math.log(3), neighbors=privet.neighbors.one_differs(1), domain=BITS3)
def rr_mod(noise, bits, *, epsilon):
    """The suite test's user file: (bits + flip) % 2."""
    return (bits + noise.bernoulli(0.25, shape=bits.shape)) % 2


@privet.mechanism(neighbors=privet.neighbors.all_differ(1),
                  domain=privet.Domain(length=3, integer=True, low=0, high=2))
def clipped_sum_max(noise, x):
    """Arithmetic, products, cumsum, argmax and a vector-valued discrete draw together."""
    z = noise.discrete([[0, 1], [1, 0], [2, 2]], [Fraction(1, 2), Fraction(1, 3),
                                                   Fraction(1, 6)])
    s = np.cumsum(np.clip(x + noise.geometric(0.5, x.shape, low=-1, high=1), 0, 2), axis=-1)
    return np.stack([privet.ops.argmax(s * 2 - x, axis=-1), z[:, 0] * z[:, 1] + s[:, -1] // 2],
                    axis=-1)


def _docs_rr():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs" / "examples" / "my_mechanisms.py"
    spec = importlib.util.spec_from_file_location("docs_my_mechanisms", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.randomized_response


CASES = [
    (get("wmc.randomized_response"), 3), (get("wmc.rr_count"), 4),
    (get("wmc.geometric_above_threshold"), 3), (get("faier.truncated_geometric"), 2),
    (get("faier.discrete_noisy_max"), 3), (get("faier.discrete_above_threshold"), 3),
    (rr_mech(3), 3), (rr_count_mech(4), 4), (rr_mod, 3), (_docs_rr(), 3),
    (search_mechs.geometric, 1), (clipped_sum_max, 3),
]


@pytest.mark.parametrize("mech,n", CASES, ids=[m.name for m, _ in CASES])
def test_compiled_epsilon_and_distributions_equal_enumeration(mech, n):
    """Exact equality of Fractions: the compiled BDD and Enumerate are two exact
    inference methods for the same mechanism function."""
    comp = exact(mech, length=n, backend="bdd", fractions=True)
    enum = exact(mech, length=n, backend="enumerate", fractions=True)
    assert comp.backend == "bdd" and enum.backend == "enumerate"
    assert comp.e_epsilon == enum.e_epsilon
    c = compile_mechanism(mech, exact=True, length=n)
    for x in mech.domain.inputs(n)[:: max(1, 3 ** n // 7)]:
        got = c.distribution(x).as_dict()
        want = {k: p for k, p in mech.distribution(x, exact=True).as_dict().items() if p}
        assert got == want


def test_sentinel_outputs_decode_to_aborted():
    c = compile_mechanism(get("faier.discrete_above_threshold"), exact=True, length=3)
    keys = c.distribution([1, 1, 2]).as_dict()
    assert (1.0, math.inf, math.inf) in keys and (0.0, 0.0, 0.0) in keys


def test_python_control_flow_on_the_input_compiles_once_per_input():
    @privet.mechanism(neighbors=privet.neighbors.one_differs(1), domain=BITS3)
    def branchy(noise, x):
        flips = noise.bernoulli(0.25, x.shape)
        return (x + flips) % 2 if x[0] == 1 else flips.sum(axis=-1)

    b = exact(branchy, backend="bdd", fractions=True)
    assert b.backend == "bdd-fixed"
    assert b.e_epsilon == exact(branchy, backend="enumerate", fractions=True).e_epsilon


def test_what_cannot_be_compiled_is_said_in_one_sentence():
    @privet.mechanism(neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=14, integer=True, low=0, high=1))
    def sorted_bits(noise, x):
        return np.sort(x + noise.bernoulli(0.5, x.shape), axis=-1)[:, :1]

    @privet.mechanism(neighbors=privet.neighbors.one_differs(1), domain=BITS3)
    def branch_on_noise(noise, x):
        return x[0] + (noise.bernoulli(0.5) if noise.bernoulli(0.5)[0] else 0)

    with pytest.raises(CompileError, match=r"np.sort has no meaning"):
        exact(sorted_bits, backend="bdd")
    with pytest.raises(CompileError, match=r"Python control flow .* on a random value"):
        exact(branch_on_noise, backend="bdd")
    # auto: the reason is kept and enumeration answers
    choice = choose_backend(sorted_bits, length=14, n_inputs=200)
    assert choice.backend == "enumerate"
    assert choice.reason.startswith("enumerate (cannot compile: np.sort")


def test_continuous_noise_cannot_be_compiled():
    with pytest.raises(CompileError, match="laplace.*continuous"):
        compile_mechanism(_laplace_mech(), length=2)


def _laplace_mech():
    @privet.mechanism(domain=privet.Domain(length=2, integer=True, low=0, high=1))
    def lap(noise, x):
        return x + noise.laplace(1.0, x.shape)

    return lap


def test_counting_backend_matches_the_bdd_and_is_chosen_for_sums():
    """RRcount as a sum of independent parts: the convolution's exact values equal the
    BDD program's (Table IV window, alpha = 3), and the whole distribution agrees."""
    m = get("wmc.rr_count")
    a = accuracy(m, 3, inputs="rr", length=30, fractions=True, top_k=4)
    b = accuracy(programs.rr_count(30), 3, inputs="rr", fractions=True, top_k=4)
    assert a.backend == "counting" and a.details["backend_choice"].startswith("counting (")
    assert [v for _, v in a.top_k] == [v for _, v in b.top_k]
    assert a.one_minus_beta == b.one_minus_beta
    from privet.exact.algorithms import make_target

    t = make_target(m, "auto", True, None, length=9, n_inputs=3)
    c = programs.rr_count(9).compile(exact=True)
    for x in ([0] * 9, [1, 0, 1, 1, 0, 0, 1, 0, 1]):
        want = {k[0] if isinstance(k, tuple) else k: p
                for k, p in c.distribution(x).as_dict().items()}
        assert t.distribution(tuple(x)) == want


@pytest.mark.parametrize("n", [300, pytest.param(1000, marks=pytest.mark.slow)])
def test_rrcount_accuracy_at_scale_is_exact(n):
    """The closed form at the worst input 0^n: P(at most alpha of n bits flip)."""
    m = get("wmc.rr_count")
    alpha, lam = 3, Fraction(1, 5)
    a = accuracy(m, alpha, inputs="rr", length=n, fractions=True, top_k=2)
    want = sum(math.comb(n, j) * lam**j * (1 - lam) ** (n - j) for j in range(alpha + 1))
    assert a.one_minus_beta == want
    assert {tuple(x) for x, _ in a.top_k} == {(0,) * n, (1,) * n}
