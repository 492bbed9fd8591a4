"""Porosity: certified ε = ∞ with a witness that replays, and none for the sound mechanisms."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privet.mechanisms as lib
from privet import floats
from privet.core.errors import NeighborError, ParameterError
from privet.core.results import PorosityResult, from_json, to_json
from privet.floats.reach import additive, lattice_model
from privet.implementation import certify_porosity


@pytest.mark.parametrize("epsilon", [1.0, 0.1])
def test_textbook_laplace_is_certified_infinite_with_a_replayable_witness(epsilon):
    mech = lib.get("floats.laplace").replace(epsilon=epsilon)
    res = floats.porosity(mech, [0.0], [1.0], n=500, seed=5)
    assert res.verdict == "violation (exact): ε = ∞" and res.epsilon == math.inf
    w = res.witness
    replay = mech.sample(list(w.d2), w.n, seed=w.seed).ravel()[w.index]
    assert replay.hex() == w.value_hex  # the seed reproduces the double bit for bit
    # the witness is exact: D1 cannot output it (checked again), D2's words produce it
    assert floats.reachable(mech, list(w.d1), [w.value]).status[0] == floats.UNREACHABLE
    inv = additive(mech, list(w.d2))
    words = tuple(tuple(int(x, 16) for x in part.split()) for part in w.words.split("|"))
    assert inv.run_tape(inv.tape_of(words))[0] == w.value
    worst = max(d["unreachable"] / d["checked"] for d in res.directions)
    assert res.delta_lower is not None and 0 < res.delta_lower < worst
    assert w.explanation.startswith("floats.laplace on the input")


def test_porosity_results_round_trip_json():
    res = floats.porosity(lib.get("floats.laplace"), [0.0], [1.0], n=200, seed=1, first=True)
    back = from_json(to_json(res))
    assert isinstance(back, PorosityResult) and back == res


def test_the_sound_mechanisms_show_no_porosity():
    for name, x1, x2 in (("floats.snapping", [0.0], [1.0]), ("floats.geometric", [0], [1])):
        res = floats.porosity(lib.get(name), x1, x2, n=1000, seed=2)
        assert res.unreachable == 0 and res.witness is None
        assert res.verdict.startswith("no violation found: no porosity")
        assert res.reachable > 0.99 * res.checked  # sightings prove nearly all of them


def test_a_documented_lattice_model_reaches_every_double():
    res = floats.porosity(lib.get("floats.laplace"), [0.0], [1.0], n=300, seed=3,
                          model=lattice_model(-1074, "a test model"))
    assert res.unreachable == 0 and res.reachable == res.checked


def test_certification_by_detect_and_search_counts_zero_under_d1():
    res = floats.porosity(lib.get("floats.laplace"), [0.0], [1.0], n=200, seed=4, first=True)
    cert = certify_porosity(lib.get("floats.laplace"), res, n=4000, seed=0)
    cx, bound = cert.detect, cert.bound
    assert cx.counts[1] == 0 and cx.counts[0] > 0 and cx.p_value < 1e-6
    assert bound.witness.counts[1] == 0 and bound.details["unbounded"]
    assert bound.value > lib.get("floats.laplace").epsilon


def test_bad_requests_get_one_sentence():
    mech = lib.get("floats.laplace")
    with pytest.raises(ParameterError):
        floats.porosity(mech, [0.0], [1.0], method="guess")
    with pytest.raises(NeighborError):
        floats.porosity(mech, [0.0], [5.0])
    with pytest.raises(ParameterError):
        floats.porosity(mech, [0.0], [1.0], n=0)
    assert np.isfinite(mech.sample([0.0], 3, seed=0)).all()


def test_results_render_in_the_terminal_and_in_html():
    from privet.report import render_any
    from privet.report.html import to_html

    res = floats.porosity(lib.get("floats.laplace"), [0.0], [1.0], n=200, seed=1, first=True)
    sens = floats.sum_sensitivity(lambda x: float(np.sum(np.clip(x, 0, 1))), bounds=(0, 1),
                                  length=2, iterations=5)
    for r in (res, sens):
        page = to_html(r)
        assert r.verdict.split(":")[0] in page and "https://" not in page
        assert render_any(r) is not None
    assert res.witness.value_hex in to_html(res)


def test_a_run_that_decides_nothing_is_inconclusive_not_a_pass():
    # a textbook Laplace on noise.uniform: every output undecided, and the verdict read
    # "no violation found: no porosity among 4,000 outputs checked (4,000 undecided)"
    import privet

    @privet.mechanism(domain=privet.Domain(length=1), epsilon=1.0,
                      neighbors=privet.neighbors.all_differ(1))
    def my_lap(noise, x, *, epsilon):
        u = noise.uniform(-0.5, 0.5, x.shape)
        return x - np.sign(u) * np.log(1 - 2 * np.abs(u)) / epsilon

    r = floats.porosity(my_lap, [0.0], [1.0], n=500, seed=1)
    assert r.checked > 0 and r.undecided == r.checked and r.witness is None
    assert r.verdict.startswith("inconclusive: none of the")
