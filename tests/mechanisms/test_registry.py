"""The registry and every library mechanism's spec."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privet
import privet.mechanisms as lib
from privet.core.errors import ParameterError, PrivetError
from privet.core.mechanism import ABORTED, FALSE, Mechanism
from privet.core.neighbors import Neighbors

from ._helpers import neighbor_of

EXPECTED = {
    "statdp": ["noisy_max_v1a", "noisy_max_v1b", "noisy_max_v2a", "noisy_max_v2b", "histogram",
               "histogram_eps", "svt", "isvt1", "isvt2", "isvt3", "isvt4"],
    "dpfinder": ["above_threshold", "at1", "at2", "at3", "at4", "at5", "noisy_max", "exp_mech",
                 "sum"],
    "kolahal": ["sum", "histogram", "noisy_max1", "noisy_max2", "exp_noisy_max", "smart_sum",
                "svt", "above_t1", "above_t2"],
    "wmc": ["randomized_response", "rr_count", "geometric_above_threshold"],
    "faier": ["truncated_geometric", "discrete_noisy_max", "discrete_above_threshold"],
    "gaussian": ["classic", "classic_eps2", "classic_eps10", "analytic", "discrete", "zcdp",
                 "noisy_max", "svt", "dpsgd", "dpsgd_noclip", "mean_sens", "wrong_neighbors"],
}
NAMES = [f"{p}.{m}" for p, ms in EXPECTED.items() for m in ms]


def test_registry_lists_every_mechanism_in_a_stable_order():
    assert lib.names() == NAMES
    assert list(lib.all()) == NAMES
    assert all(isinstance(m, Mechanism) for m in lib.all().values())
    for paper, ms in EXPECTED.items():
        assert list(lib.by_paper(paper)) == [f"{paper}.{m}" for m in ms]
    assert privet.mechanisms.get("statdp.svt") is lib.all()["statdp.svt"]


def test_get_accepts_unique_bare_names_and_rejects_unknown_ones():
    assert lib.get("isvt4").name == "statdp.isvt4"
    assert lib.get("StatDP.SVT").name == "statdp.svt"
    with pytest.raises(PrivetError, match="ambiguous"):
        lib.get("svt")
    with pytest.raises(PrivetError, match="statdp.svt"):
        lib.get("statdp.svtt")
    with pytest.raises(PrivetError, match="no library mechanism"):
        lib.get("nothing.like.this")
    with pytest.raises(PrivetError, match="unknown paper"):
        lib.by_paper("nosuchpaper")


@pytest.mark.parametrize("name", NAMES)
def test_spec_is_sane_and_matches_a_sample(name):
    m = lib.get(name)
    assert m.name == name and m.kind == "native"
    assert m.claim is not None   # every library mechanism states what it promises
    assert m.epsilon is None and m.rho > 0 or 0 < m.epsilon < math.inf
    assert m.source and m.description
    assert isinstance(m.neighbors, Neighbors)
    assert set(m.arg_ranges) <= set(m.args) and set(m.noise_args) <= set(m.args)
    assert m.true_epsilon is None or m.true_epsilon >= 0
    x = lib.example_input(name)
    m.domain.check(x)
    neighbor_of(name)  # the example has a neighbor inside the domain

    out = m.sample(x, 2000, seed=11)
    if lib.per_query(m):
        assert out.shape == (2000, len(x))
    elif m.output.length is not None:
        assert out.shape == (2000, m.output.length)
    else:
        assert out.shape == (2000,)
    if m.output.length is not None:
        assert out.shape[1:] == (m.output.length,)

    vals = np.asarray(out, dtype=float)
    finite = vals[np.isfinite(vals)]
    if m.output.categories is not None:
        assert set(np.unique(finite)) <= set(m.output.categories)
    if m.output.integer:
        assert np.all(finite == np.round(finite))
    if "ABORTED" not in m.output.sentinels:
        assert not np.any(vals == ABORTED)
    if "FALSE" not in m.output.sentinels:
        assert not np.any(vals == FALSE)
    if m.output.variable:
        # ABORTED is padding: once a row is aborted it stays aborted
        aborted = vals == ABORTED
        assert np.all(aborted[:, 1:] >= aborted[:, :-1])
        assert aborted.any()  # the example input makes the mechanism stop early sometimes
    assert m.output.describe()


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("statdp.")])
@pytest.mark.parametrize("eps", [0.2, 0.7, 1.5])
def test_statdp_mechanisms_run_at_the_papers_epsilons(name, eps):
    m = lib.get(name).replace(epsilon=eps)
    out = m.sample(lib.example_input(name), 500, seed=3)
    assert len(out) == 500
    assert m.resolve_args()["epsilon"] == eps


def test_known_epsilon_follows_epsilon_length_and_arguments():
    for name, m in lib.all().items():
        if name == "faier.discrete_noisy_max":  # stated for 5 queries, as in the papers
            assert lib.known_epsilon(m, length=5) == pytest.approx(m.true_epsilon)
            continue
        known = lib.known_epsilon(m)
        assert (known is None) == (m.true_epsilon is None), name
        if known is not None:
            assert known == pytest.approx(m.true_epsilon), name
    assert lib.known_epsilon("statdp.histogram_eps", epsilon=0.2) == pytest.approx(5.0)
    assert lib.known_epsilon(lib.get("statdp.histogram").replace(epsilon=1.5)) == 1.5
    assert lib.known_epsilon("statdp.noisy_max_v1b", epsilon=0.7, length=5) == pytest.approx(1.75)
    assert lib.known_epsilon("statdp.isvt3", args={"N": 2}) == pytest.approx(13 / 4 * 0.7)
    assert lib.known_epsilon("dpfinder.at4") == pytest.approx(0.175)
    assert lib.known_epsilon("wmc.randomized_response", args={"lam": 0.25}) == \
        pytest.approx(math.log(3))
    assert lib.known_epsilon("kolahal.sum", args={"eta": 0.1}) is None  # not textbook


def test_paper_values_of_true_epsilon():
    te = {n: m.true_epsilon for n, m in lib.all().items()}
    assert te["dpfinder.above_threshold"] == pytest.approx(0.45)
    assert te["dpfinder.at1"] == te["dpfinder.at2"] == pytest.approx(0.1)
    assert te["dpfinder.at3"] == pytest.approx(0.2)
    assert te["dpfinder.at4"] == pytest.approx(0.175)
    assert te["dpfinder.at5"] == math.inf
    assert te["dpfinder.noisy_max"] == te["dpfinder.exp_mech"] == pytest.approx(0.1)
    assert te["statdp.isvt3"] == pytest.approx(1.225)
    assert te["faier.discrete_noisy_max"] == pytest.approx(math.log(288 / 73))
    assert te["wmc.randomized_response"] == pytest.approx(math.log(4))


def test_bad_arguments_get_one_sentence():
    with pytest.raises(ParameterError, match="N must be a positive integer"):
        lib.get("statdp.svt").sample([1.0, 2.0], 10, args={"N": 0})
    with pytest.raises(ParameterError, match="lam"):
        lib.get("wmc.randomized_response").sample([0, 1], 10, args={"lam": 0.7})
    with pytest.raises(ParameterError, match="alpha"):
        lib.get("faier.truncated_geometric").sample([1], 10, args={"alpha": 1.5})
    with pytest.raises(ParameterError, match="eta"):
        lib.get("kolahal.sum").sample([1.0], 10, args={"eta": -1})
    with pytest.raises(PrivetError, match="outside the domain"):
        lib.get("wmc.randomized_response").sample([0, 2], 10)


def test_kolahal_holes_default_to_the_textbook_completion():
    m = lib.get("kolahal.noisy_max2")
    x = [1.0, 1.0, 3.0]
    a = m.sample(x, 1000, seed=5)
    b = m.sample(x, 1000, seed=5, args={"eta1": 2 / m.epsilon, "eta2": 0})
    assert np.array_equal(a, b)
    noisy = m.sample(x, 1000, seed=5, args={"eta2": 1.0})
    assert not np.all(noisy == np.round(noisy))  # a third of the answer is now noise
    assert set(lib.kolahal.HOLES) == set(lib.by_paper("kolahal"))
    assert all(set(v) == set(lib.kolahal.HOLES[k]) for k, v in lib.kolahal.TEXTBOOK.items())


def test_library_mechanisms_pickle_by_reference():
    """Process pools ship mechanisms to workers: library ones travel as a module path."""
    import pickle

    for name, m in lib.all().items():
        assert pickle.loads(pickle.dumps(m)) is m, name
        changed = pickle.loads(pickle.dumps(m.replace(epsilon=0.3)))
        assert changed.epsilon == 0.3 and changed.fn is m.fn
