"""privet.search and privet.detect on mechanisms that can only be sampled (classifier
attacks), and the attack family on white boxes whose random boxes fail."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privet
from privet.core.errors import InputError, UnsupportedError
from privet.mechanisms import dpsniper as d

SMALL = {"n_cap": 4096, "n_select": 1 << 15, "n_confirm": 1 << 18, "iterations": 2}


def test_black_box_certifies_the_geometric_above_its_claim():
    """GeoSample (true eps ln 1.125 = 0.1178, claimed 0.1): every output's ratio is 1.125, so
    events of probability about 1/2 certify; with 2^18 fresh pairs the union bound's margin is
    about 1.645 (sqrt(0.47/0.53) + sqrt(0.53/0.47)) / sqrt(2^18) = 0.0066, so the bound lies
    in (0.1, 0.1178] unless the selection picks a far worse event."""
    b = privet.search(d.vectorized("dpsniper.truncated_geometric"), seed=3, **SMALL)
    assert b.method == "attack (black box)" and b.confidence == 0.9
    assert 0.1 < b.value <= d.truncated_geometric.true_epsilon
    assert b.violates and b.details["verdict"].startswith("violation certified")
    assert b.witness.event_spec["kind"] == "threshold"
    assert b.details["trace"] and b.details["n_confirm"] == 1 << 18


def test_black_box_bound_is_not_capped_where_an_output_is_impossible():
    """Noisy max releasing the value with exponential noise: values below max(a') never
    occur under a'; the bound grows with the fresh sample (here > 5, far above DP-Sniper's
    ln(1/c) cap of 4.6)."""
    b = privet.search(d.vectorized("dpsniper.report_noisy_max4"), seed=1, **SMALL)
    assert b.details["unbounded"] and b.value > 5
    assert b.witness.counts[1] == 0


def test_start_is_a_candidate_and_slsqp_is_refused_for_black_boxes():
    box = d.vectorized("dpsniper.laplace")
    with pytest.raises(UnsupportedError, match="method='slsqp' needs correlated sampling"):
        privet.search(box, method="slsqp")
    b = privet.search(box, seed=2, start=([9.0], [10.0], None), **SMALL)
    assert any(r["pattern"] == "start" for r in b.details["trace"])


def test_a_relation_that_leaves_the_domain_is_one_sentence():
    box = privet.from_vectorized(lambda a, n: a[0] + np.random.laplace(size=n), epsilon=1,
                                 domain=privet.Domain(length=1, low=0, high=0))
    with pytest.raises(InputError, match="no pair of neighboring inputs"):
        privet.search(box, **SMALL)


def test_detect_flags_randomized_response_bits_and_passes_a_private_histogram():
    """One-time RAPPOR claims 0.1 but each differing Bloom bit costs 0.1 (8 bits differ for
    some neighbors): a weighted count of bits, which StatDP's families cannot express, has a
    ratio far above e^0.1. The noisy histogram, private over the reals, is not flagged at
    this seed by the real-number features; in doubles it is porous (its counts are integers
    plus NumPy's Laplace, Mironov's case), and the float-exact features flag that."""
    rr = privet.detect(d.vectorized("dpsniper.one_time_rappor"), seed=0, n_select=5_000,
                       n_final=10_000)
    assert rr.p_value < 0.01 and rr.counterexample.details["family"] == "classifier attack"
    ok = privet.detect(d.vectorized("dpsniper.noisy_hist1"), seed=0, n_select=5_000,
                       n_final=10_000, float_features="off")
    assert ok.p_value >= 0.01 and "Bonferroni" in ok.details["selected"].details["families"]
    porous = privet.detect(d.vectorized("dpsniper.noisy_hist1"), seed=0, n_select=5_000,
                           n_final=10_000)
    assert porous.p_value < 0.01 and "(ω[" in porous.counterexample.event


def test_white_box_vector_outputs_get_the_attack_family():
    """LaplaceParallel (20 outputs): DP-Finder's random boxes see no sample on either side
    (skipped 0/0); the classifier family's sum event certifies a positive bound."""
    b = privet.search(d.laplace_parallel, seed=0, iterations=1, n_confirm=1 << 18,
                      n_cap=1 << 12, n_select=1 << 16, models=("logistic", "stats"))
    statuses = [r["status"] for r in b.details["trace"]]
    assert "classifier attack" in statuses and b.value > 0.01
    assert not math.isinf(b.value)


def test_time_budget_stops_the_race_and_sizes_the_fresh_sample():
    """With a budget already spent, every stage takes its least sample: the screening after
    its two timed pairs (n_cap = 4096) 2^11 pairs, and the race stops short of n_select
    (2^19): only a leader whose standard error is above a tenth of its value doubles on
    (about 2 / (0.1 x 0.11)^2 = 16,500 outputs in an event of probability near 1/2, so
    about 2^15 pairs), with one challenger; the fresh sample is the least automatic size,
    2^22. A budget that is not a positive number of seconds is one sentence."""
    from privet.core.errors import ParameterError

    opts = {"n_cap": 4096, "n_select": 1 << 19, "iterations": 1, "finalists": 2}
    mech = d.vectorized("dpsniper.truncated_geometric")
    b = privet.search(mech, seed=2, seconds=1e-3, **opts)
    screens = [t["n"] for t in b.details["trace"] if t["stage"] != "select"]
    assert screens[:2] == [4096, 4096] and set(screens[2:]) == {1 << 11}
    rows = [t for t in b.details["trace"] if t["stage"] == "select"]
    assert rows and all(t["n"] < 1 << 19 for t in rows)
    assert b.details["n_confirm"] == 1 << 22 and b.details["time_budget"] == 1e-3
    assert b.details["pairs_per_second"] > 0
    with pytest.raises(ParameterError, match="seconds"):
        privet.search(mech, seed=2, seconds=0, **opts)


def test_the_time_left_sizes_a_fresh_sample_beyond_the_largest_plan():
    """Without a budget the fresh sample stops at 2^27 pairs; with one, a plan that reaches
    2^27 takes all the pairs the time left affords (rounded down to 2^20, at most 2^31),
    while a plan that is within half a percent of its limit at 2^22 stays there, and a
    time left below the plan shrinks it."""
    from privet.search.blackbox import confirm_size

    mech = d.vectorized("dpsniper.laplace")
    rare = (0.0, 40.0, 0.0)             # never seen under x': the bound grows with n
    common = (0.0, 400_000.0, 100_000.0)  # log 4 within a hair at the least size
    n = 1_000_000
    assert confirm_size(mech, None, rare, n) == 1 << 27
    assert confirm_size(mech, None, rare, n, afford=5.3e8) == 505 * (1 << 20)
    assert confirm_size(mech, None, rare, n, afford=1e12) == 1 << 31
    assert confirm_size(mech, None, common, n, afford=5.3e8) == 1 << 22
    assert confirm_size(mech, None, rare, n, afford=3e7) == 28 * (1 << 20)
    assert confirm_size(mech, None, afford=5.3e8) == 505 * (1 << 20)
    assert confirm_size(mech, 1000, rare, n, afford=5.3e8) == 1000


def test_a_given_time_budget_sizes_a_white_box_fresh_sample():
    """A white box searched with ``seconds`` given: a probe of 2^20 pairs rounded up to
    whole rounds of chunks (in this process one round is one chunk of 250,000: 1,250,000
    pairs) timed at 0.5 s (a clock that says so; long enough: not doubled) leaves
    55 - 5.5 = 49.5 s at 2.5e6 pairs per second, so the fresh sample is 2.5e6 x 49.5
    rounded down to whole rounds (495 x 250,000); never below the plan, and at most 2^31.
    End to end, the timed search certifies on at least the planned sample, drawn after the probe."""
    from privet.core.events import from_spec
    from privet.search import _timed_size

    b0 = privet.search(d.laplace, seed=1, iterations=1, n_cap=1 << 12, n_select=1 << 15)
    best = {"x": b0.witness.d1, "x2": b0.witness.d2, "event": from_spec(b0.witness.event_spec)}
    opts = {"confidence": 0.9, "certify": "paired", "seconds": 55.0}
    ticks = iter([100.0, 100.5])
    got = _timed_size(d.laplace, best, {}, opts, 95.0, 1 << 22, np.random.SeedSequence(0),
                      None, clock=lambda: next(ticks))
    assert got == 495 * 250_000
    # a probe that ends within privet.execution.PROBE_SECONDS is doubled (2,500,000 pairs), and the
    # second one's pace sizes the sample: 0.2 s, then 0.8 s for twice the pairs leaves
    # 55 - (101.0 - 95.0) = 49 s at 3.125e6 pairs/s, 612 whole chunks of 250,000
    ticks = iter([100.0, 100.2, 100.2, 101.0])
    grown = _timed_size(d.laplace, best, {}, opts, 95.0, 1 << 22, np.random.SeedSequence(0),
                        None, clock=lambda: next(ticks))
    assert grown == 612 * 250_000
    # and never past TIMED_PROBE_MAX: 1.25e6 pairs in 0.125 s, 2.5e6 in 0.25 s, then stop
    # (5e6 > 2^22): 55 - 5.375 s left at 1e7 pairs/s, 1,985 chunks
    ticks = iter([100.0, 100.125, 100.125, 100.375])
    capped = _timed_size(d.laplace, best, {}, opts, 95.0, 1 << 22, np.random.SeedSequence(0),
                         None, clock=lambda: next(ticks))
    assert capped == 1985 * 250_000
    ticks = iter([100.0, 100.5])
    late = _timed_size(d.laplace, best, {}, opts, 40.0, 1 << 22, np.random.SeedSequence(0),
                       None, clock=lambda: next(ticks))
    assert late == 1 << 22  # the time is up: the planned sample
    timed = privet.search(d.laplace, seed=1, iterations=1, n_cap=1 << 12, n_select=1 << 15,
                          seconds=4)
    assert timed.details["n_confirm"] >= b0.details["n_confirm"]
    assert timed.value > 0 and timed.confidence == 0.9


def test_a_given_time_budget_runs_the_attack_on_few_outputs_too():
    """SVT1 (c = 1) has 11 distinct outputs, so by default DP-Finder's singletons stand in
    for the attack once they found a triple; with ``seconds`` given the attack runs too
    (DP-Finder's p_min of 0.01 keeps it from a True after nine FALSE answers, p = 0.0025 at
    the domain's ends), and ``attack=False`` still turns it off. End to end, the timed
    search's trace has the attack's record, judged at the planned paired sample."""
    from privet.search.blackbox import wants_attack

    best = {"estimate": 0.05}
    rng = np.random.default_rng(0)
    assert not wants_attack(d.svt1, {"attack": "auto", "timed": False}, {}, best, rng)
    assert wants_attack(d.svt1, {"attack": "auto", "timed": True}, {}, best, rng)
    assert not wants_attack(d.svt1, {"attack": False, "timed": True}, {}, best, rng)
    b = privet.search(d.svt1, seed=0, iterations=1, n_cap=1 << 11, n_select=1 << 14,
                      models=("table",), seconds=3)
    rows = [r for r in b.details["trace"] if r["status"] == "classifier attack"]
    assert len(rows) == 1 and b.confidence == 0.9


def test_an_infinite_estimate_on_few_samples_does_not_hide_the_attack(monkeypatch):
    """DP-Finder's estimate is infinite when its 2,000 samples never show the event under
    x' -- for a far tail of Laplace noise, which the fresh sample does show under x': such
    a triple used to win over the attack unconditionally and certify about 0. It now
    competes by its projected certificate, and the attack's event certifies Laplace's
    shift (true eps 0.1; its bound lies above 0.05 by far more than its margin)."""
    import importlib

    from privet.core.events import Interval

    S = importlib.import_module("privet.search")

    def lucky(mech, rng, args, opts, start=None, optimize=True):
        return {"x": np.array([0.0]), "x2": np.array([1.0]), "event": Interval(200.0, np.inf),
                "start_estimate": None, "n": 2000, "estimate": math.inf, "p": (5e-4, 0.0),
                "optimizer": "stub", "evaluations": 1, "surrogate": None,
                "status": "candidate infinity (p^(x') = 0)", "seconds": 0.0}

    monkeypatch.setattr(S, "_iteration", lucky)
    b = privet.search(d.laplace, seed=0, iterations=1, n_cap=1 << 12, n_select=1 << 16,
                      n_confirm=1 << 20)
    assert b.witness.event != "ω ∈ (200, ∞]" and b.value > 0.05


def test_dpfinder_iterations_keep_to_their_share_of_a_given_time_budget():
    """With ``seconds`` given, DP-Finder's iterations start only within
    ``DPFINDER_SHARE`` of it (counted from the search's start): at 55 s, one that would
    start after 6 s does not, one at 5 s does; never without a given budget, nor with
    ``attack=False`` (DP-Finder is then the whole search). End to end, a budget of 1 ms is
    spent after the first iteration: the attack family and the fresh sample still run, the
    search is not marked interrupted, and the trace says how many iterations were planned;
    with ``attack=False`` every iteration runs."""
    import time

    from rich.console import Console

    from privet.report.search import render
    from privet.search import DPFINDER_SHARE, _share_spent

    now = time.perf_counter()
    timed = {"timed": True, "seconds": 55.0, "attack": "auto"}
    assert DPFINDER_SHARE * 55.0 < 6.0
    assert _share_spent(timed, now - 6.0)
    assert DPFINDER_SHARE * 55.0 > 5.0
    assert not _share_spent(timed, now - 5.0)
    assert not _share_spent({**timed, "timed": False}, now - 1e3)
    assert not _share_spent({**timed, "attack": False}, now - 1e3)
    opts = {"n_cap": 1 << 12, "n_select": 1 << 15, "seconds": 1e-3}
    cut = privet.search(d.laplace, seed=1, iterations=3, **opts)
    assert cut.details["iterations"] == 1 and cut.details["iterations_planned"] == 3
    assert not cut.details["interrupted"] and cut.value > 0
    assert any(r["status"] == "classifier attack" for r in cut.details["trace"])
    console = Console(record=True, width=160)
    console.print(render(cut))
    assert "1 of 3 iterations (their share of the time budget" in console.export_text()
    whole = privet.search(d.laplace, seed=1, iterations=3, attack=False, **opts)
    assert whole.details["iterations"] == 3 and "iterations_planned" not in whole.details


def test_one_pool_serves_the_witness_search_the_probe_and_the_certificate(monkeypatch):
    """An executor given by name is made once for the whole black-box search: a probe on a
    pool of its own timed the pool's start and came out low. The probe draws whole rounds
    of chunks over the pool's workers, starting at most from a quarter of the least fresh
    sample (less when the race's pace says that takes more than a second)."""
    import privet.execution as ex
    from privet.search import blackbox

    made, probed = [], []

    class Pool(ex.InProcess):  # stands in for the process pool, in this process
        workers = 3

        def __init__(self):
            made.append(self)

    real_certify = blackbox.certify

    def certify(mech, x, x2, event, n, **kw):
        probed.append(n)
        return real_certify(mech, x, x2, event, n, **kw)

    monkeypatch.setattr(ex, "ProcessPool", Pool)
    monkeypatch.setattr(blackbox, "certify", certify)
    mech = d.vectorized("dpsniper.truncated_geometric")
    b = privet.search(mech, seed=2, seconds=1e-3, executor="processes", n_cap=4096,
                      n_select=1 << 15, iterations=1, finalists=2)
    assert len(made) == 1 and b.value > 0
    chunk = ex.chunk_for(mech, ex.DEFAULT_CHUNK)
    quarter = ex.whole_rounds(blackbox.FAST["n_confirm_min"] // 4, chunk, made[0])
    assert probed[0] % (3 * chunk) == 0 and 3 * chunk <= probed[0] <= quarter


def test_a_timed_white_box_gets_the_black_box_witness_search(monkeypatch):
    """With ``seconds`` given, the white box's attack family runs the black box's witness
    search (its finalists, screening of few-valued outputs without the shrink, and stage
    shares of coupled runs) on paired samples; without it, the white box's smaller one. The
    winning family is named in the details."""
    from privet.search import blackbox as bb

    seen = []

    def capture(mech, objective, *, budget, **kw):
        seen.append((budget, kw.get("couple")))
        return None, [], False

    monkeypatch.setattr(bb, "search_witness", capture)
    mech = d.laplace
    opts = {"iterations": 1, "n_confirm": 1 << 12, "n_cap": 1 << 10, "n_select": 1 << 12}
    timed = privet.search(mech, seed=0, seconds=5.0, attack=True, **opts)
    plain = privet.search(mech, seed=0, attack=True, **opts)
    (tb, tc), (pb, _) = seen
    black = bb.budget_for(d.vectorized("dpsniper.laplace"), {"n_cap": 1 << 10,
                          "n_select": 1 << 12}, 1)
    assert (tb.finalists, tb.raw_tables, tb.stages) == (black.finalists, True,
                                                        bb.COUPLED_STAGES)
    assert tb.seconds is not None and tb.seconds <= 5.0 and not tc
    assert (pb.finalists, pb.raw_tables, pb.stages) == (bb.WHITE.finalists, False, 1.0)
    assert pb.seconds == bb.SECONDS
    for b in (timed, plain):
        assert b.value > 0 and b.details["winner"] == b.details["trace"][0]["optimizer"]


def test_a_timed_probe_doubles_until_it_has_run_long_enough():
    """privet.execution.timed_probe: whole rounds of chunks (two workers, chunks of 1,000:
    2,500 pairs round up to 4,000), doubled while a probe ends within PROBE_SECONDS and
    the next stays within the largest size; its pace is that of the last probe; a run that
    says its sample tells nothing (False: exact, or Ctrl-C) gives None."""
    from privet.execution import PROBE_SECONDS, timed_probe

    class Two:
        workers = 2

    sizes = []

    def run(k):
        sizes.append(k)
        return True

    ticks = iter([0.0, 0.1, 0.1, 0.3, 0.3, 0.3 + PROBE_SECONDS])
    got = timed_probe(run, 2500, 1 << 20, 1000, Two(), clock=lambda: next(ticks))
    assert sizes == [4000, 8000, 16000]
    assert got == (16000, pytest.approx(PROBE_SECONDS), pytest.approx(0.3 + PROBE_SECONDS))
    sizes.clear()
    ticks = iter([0.0, 0.1, 0.1, 0.2])
    assert timed_probe(run, 2500, 8000, 1000, Two(), clock=lambda: next(ticks)) == (
        8000, pytest.approx(0.1), pytest.approx(0.2))  # 16,000 would pass the largest
    assert sizes == [4000, 8000]
    ticks = iter([0.0, 1.0])
    assert timed_probe(lambda k: False, 2500, 8000, 1000, Two(),
                       clock=lambda: next(ticks)) is None


def _slow_response(x, rng=None):
    """Randomized response on the first bit at e^2 : 1, a millisecond a call (a per-sample
    black box as slow as a DP library's function behind a service call)."""
    import time

    time.sleep(1e-3)
    rng = rng or np.random.default_rng()
    keep = rng.random() < math.exp(2) / (1 + math.exp(2))
    return int(x[0]) if keep else 1 - int(x[0])


def test_a_slow_black_box_is_squeezed_into_its_time_budget():
    """At a millisecond a call, screening every candidate on 2^11 pairs alone takes minutes
    against a 3 s budget: the search keeps two finalists and a few candidates, screens them
    on at least 512 pairs each, and sizes its fresh sample to the time left (well below the
    least automatic size, 2^17, which alone took more than two minutes), and says so. The
    box's epsilon is 2 against a claim of 0.5: the events {1} and {0} have ratio e^2 and
    probability near 0.88 / 0.12, so even a few thousand fresh pairs certify far above 0.5
    (the union bound's margin at 2,000 pairs is below 0.3)."""
    from privet.report.search import squeeze_text

    box = privet.from_blackbox(_slow_response, epsilon=0.5,
                               domain=privet.Domain(length=2, low=0, high=1, integer=True))
    b = privet.search(box, seed=1, seconds=3.0, progress=False)
    sq = b.details["squeezed"]
    assert sq and sq["n_train"] >= 512 and sq["pairs"] < sq["of"]
    assert sq["seconds_per_pair"] > 2e-3 * 0.9  # two calls of a millisecond each, at least
    screened = [t for t in b.details["trace"] if t["stage"] in ("screen", "local search")]
    assert len(screened) <= sq["pairs"] + 2 and all(t["n"] == sq["n_train"] for t in screened)
    assert 1 << 10 <= b.details["n_confirm"] < 1 << 17
    assert b.violates and 0.5 < b.value <= 2.0
    assert "ms a call" in squeeze_text(sq, 3.0)


def test_a_fast_black_box_is_not_squeezed():
    """The squeeze times 16 pairs and changes nothing when the least work fits the time."""
    from privet.attacks.witness import Budget, _squeeze

    box = privet.from_blackbox(lambda x, rng: float(x[0] + rng.laplace()), epsilon=1.0,
                               domain=privet.Domain(length=1, low=0, high=3))
    cands = [(np.array([0.0]), np.array([1.0]), "one"), (np.array([1.0]), np.array([2.0]),
                                                          "random")]
    budget = Budget(n_train=4096, n_fit=1 << 14, seconds=55.0)
    trace: list = []
    got = _squeeze(box, cands, budget, None, np.random.SeedSequence(0), False, trace)
    assert got == (cands, budget) and trace == []


def test_the_time_left_sizes_a_slow_box_below_the_least_size():
    """A per-sample box whose least automatic fresh sample (2^17 pairs) would take more than
    five seconds at its pace gets the pairs its time left affords, at least five seconds'
    worth (and at least 2^10); a box fast enough for the least size keeps it."""
    from privet.search.blackbox import SMALLEST, confirm_size, shortest

    box = privet.from_blackbox(lambda x, rng: float(x[0] + rng.laplace()), epsilon=1.0,
                               domain=privet.Domain(length=1, low=0, high=3))
    rare = (0.0, 40.0, 0.0)
    assert shortest(box, 1e6) == 1 << 17 and shortest(box, 0.0) == 1 << 17
    assert shortest(box, 500.0) == 2500 and shortest(box, 10.0) == SMALLEST
    assert confirm_size(box, None, rare, 10_000, afford=5000.0, least=2500) == 5000
    assert confirm_size(box, None, rare, 10_000, afford=10.0, least=2500) == 2500
    assert confirm_size(box, None, rare, 10_000, afford=10.0) == 1 << 17
    assert confirm_size(box, None, rare, 10_000) == 1 << 21


def _clip_after_noise(a, n_samples, rng=None):
    """A sum over records in [0, 10] with Lap(1) noise, clipped to [0, 5] after the noise:
    replacing a record 0 by 10 moves the sum by 10, so its epsilon is 10."""
    rng = rng or np.random.default_rng()
    return np.clip(np.sum(a) + rng.laplace(0.0, 1.0, n_samples), 0.0, 5.0)


def test_replace_one_candidates_move_a_record_across_a_bounded_domain():
    """Under replace-one the attack's candidates include the changed record moved from the
    domain's bottom to its top (the unit patterns move the sum by 1 and certify at most
    about 1, below the claim; the pair across the domain certifies far above it)."""
    from privet.attacks.inputs import pattern_pairs

    box = privet.from_vectorized(_clip_after_noise, epsilon=1.0,
                                 neighbors=privet.neighbors.replace_one(),
                                 domain=privet.Domain(length=5, low=0, high=10))
    across = [(a, b) for a, b, label in pattern_pairs(box, 5) if "across" in label]
    assert across and all(sorted({*a, *b}) == [0.0, 1.0, 10.0] for a, b in across)
    b = privet.search(box, seed=1, float_features="off", **SMALL)
    assert b.violates and 5 < b.value <= 10.5
    assert sorted(np.abs(np.subtract(b.witness.d1, b.witness.d2)))[-1] == 10


def _wide_histogram(a, n_samples, rng=None):
    """A histogram of 300 counts, each with Lap(1) noise: 1-DP under one_differs(1)."""
    rng = rng or np.random.default_rng()
    a = np.asarray(a, float)
    return a[None, :] + rng.laplace(0.0, 1.0, (n_samples, a.size))


def test_wide_outputs_fit_on_their_separating_entries_and_certify():
    """A 300-entry histogram (true epsilon 1) claimed 0.25-DP: the classifiers are fitted
    on the 32 entries whose values separate the two samples most, which include the one
    count that differs, so a one-sided event on it certifies above the claim (its ratio is
    e^1 far in the tail; at thousands of fresh pairs the margin is well below 0.75)."""
    box = privet.from_vectorized(_wide_histogram, epsilon=0.25,
                                 neighbors=privet.neighbors.one_differs(1),
                                 domain=privet.Domain(length=300, low=0, high=10,
                                                      integer=True))
    b = privet.search(box, seed=2, seconds=8.0, float_features="off", progress=False)
    assert b.violates and 0.25 < b.value <= 1.0
    j = int(np.flatnonzero(np.asarray(b.witness.d1) != np.asarray(b.witness.d2))[0])
    assert f"ω[{j}]" in b.witness.event  # the event reads the entry the inputs differ in


def test_wide_samples_are_cut_to_their_memory_and_least_rows():
    """Screening and fitting samples of outputs 10,000 entries wide hold 256 MiB of each
    input (3,355 rows), not 2^15 rows (2.6 GB, with copies past 24 GiB); narrow outputs keep
    their sizes."""
    from privet.attacks.witness import LEAST_ROWS, SAMPLE_BYTES, Budget, _within_memory

    budget = Budget(n_train=1 << 15, n_fit=1 << 18)
    cut = _within_memory(budget, 10_000)
    assert cut.n_train == cut.n_fit == SAMPLE_BYTES // 80_000 == 3355
    assert _within_memory(budget, 20) == budget and _within_memory(budget, None) == budget
    assert _within_memory(budget, 10**8).n_train == LEAST_ROWS


def test_a_probed_vectorized_box_too_slow_for_the_least_size_gets_five_seconds():
    """The least fresh sample of a vectorized box (2^22 pairs) holds unless the certificate's
    own probe says it takes more than five seconds (a wide histogram drew it in minutes);
    the race's pace, which comes out low, never shrinks it."""
    from privet.search.blackbox import shortest

    box = privet.from_vectorized(_wide_histogram, epsilon=1.0,
                                 domain=privet.Domain(length=300, low=0, high=10))
    assert shortest(box, 1e4) == 1 << 22  # the race's pace
    assert shortest(box, 1e4, probed=True) == 50_000
    assert shortest(box, 1e7, probed=True) == 1 << 22
