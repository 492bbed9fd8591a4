"""Adapters of real DP libraries (IBM diffprivlib, OpenDP): build, sample, match the stated
noise distribution, fail cleanly without the libraries, and (slow) the example audits.

Margins. diffprivlib runs are seeded, so its checks are deterministic; a frequency estimated
from n samples is checked to within Z = 4.5 standard errors (sqrt(p (1 - p) / n)).

OpenDP cannot be seeded, so every OpenDP check is a fresh random draw and its margin is
derived to keep the chance that a correct adapter fails below 1e-9 per run:

* a count of n independent events of probability p is Binomial(n, p); ``_binomial_ok``
  accepts it inside the central region of that exact distribution that holds all but
  DELTA = 1e-10 of its mass (both tails, scipy's binomial CDF), so a correct adapter fails
  one check with probability at most 1e-10;
* the default run makes 9 such OpenDP checks (laplace 3, geometric 2, noisy max 1, composed
  queries 3), so by the union bound it fails with probability at most 9e-10 < 1e-9;
* the slow audits of the 5 sound OpenDP adapters run detect at alpha = 1e-10 (a valid
  p-value is below alpha with probability at most alpha), so together at most 5e-10.
"""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest

import privet
import privet.mechanisms as lib
from privet.core.errors import UnsupportedError
from privet.core.noise import Replay, Sampler
from privet.mechanisms import libs

Z = 4.5
DELTA = 1e-10   # per OpenDP check (see the module docstring)


def _close(freq: float, p: float, n: int) -> bool:
    return abs(freq - p) <= Z * math.sqrt(p * (1 - p) / n)


def _binomial_ok(hits: np.ndarray, p: float) -> bool:
    """``hits`` (booleans, independent with probability ``p`` under a correct adapter) fall
    in the central region of Binomial(n, p) of mass 1 - DELTA."""
    from scipy.stats import binom

    n, k = int(hits.size), int(np.count_nonzero(hits))
    return binom.cdf(k, n, p) > DELTA / 2 and binom.sf(k - 1, n, p) > DELTA / 2


def test_binomial_check_rejects_a_wrong_probability():
    rng = np.random.default_rng(0)
    fair = rng.random(20_000) < 0.5
    assert _binomial_ok(fair, 0.5) and not _binomial_ok(fair, 0.47)


def _need(library: str):
    pytest.importorskip(library)
    if not libs.available(library):
        pytest.skip(f"{library} is installed but does not import")


# -- without the libraries ----------------------------------------------------------------------

def test_module_imports_and_registry_work_without_the_libraries():
    code = (
        "import sys\n"
        "sys.modules['diffprivlib'] = None\n"
        "sys.modules['opendp'] = None\n"
        "sys.modules['opendp.prelude'] = None\n"
        "sys.modules['pydp'] = None\n"
        "import privet.mechanisms as m\n"
        "from privet.mechanisms import libs\n"
        "from privet.core.errors import UnsupportedError\n"
        "assert m.real_libraries() == {}, m.real_libraries()\n"
        "try:\n"
        "    m.get('opendp.laplace')\n"
        "except UnsupportedError as err:\n"
        "    print(err)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert "install privet[libs]" in res.stdout
    assert "OpenDP" in res.stdout


def test_missing_library_gives_one_sentence(monkeypatch):
    monkeypatch.setitem(sys.modules, "diffprivlib", None)
    libs.get.cache_clear()
    try:
        assert not libs.available("diffprivlib")
        with pytest.raises(UnsupportedError, match=r"install privet\[libs\]") as info:
            lib.get("diffprivlib.laplace")
        assert "\n" not in str(info.value)
        assert not any(n.startswith("diffprivlib.") for n in lib.real_libraries())
    finally:
        libs.get.cache_clear()


def test_adapters_stay_out_of_the_default_library():
    assert not any(name in lib.all() for name in libs.NAMES)
    assert set(libs.AUDITS) == set(libs.NAMES)
    assert {a.expect for a in libs.AUDITS.values()} == {"pass", "violation"}


# -- diffprivlib ---------------------------------------------------------------------------------

def test_diffprivlib_specs():
    _need("diffprivlib")
    version = libs.version("diffprivlib")
    for name in ("diffprivlib.laplace", "diffprivlib.geometric", "diffprivlib.exponential",
                 "diffprivlib.mean", "diffprivlib.mean_unbounded"):
        m = lib.get(name)
        assert m.name == name and m.epsilon == 1.0 and m.kind == "blackbox"
        assert m.source == f"IBM diffprivlib {version}"
        assert name in lib.real_libraries()
    assert lib.get("diffprivlib.laplace").neighbors.kind == "all_differ"
    assert lib.get("diffprivlib.mean").neighbors.kind == "replace_one"
    assert lib.get("diffprivlib.mean_unbounded").true_epsilon == math.inf
    # the library parameter follows the spec: epsilon is passed through
    m = libs.diffprivlib_laplace(epsilon=0.5, sensitivity=2.0)
    assert m.epsilon == 0.5 and m.neighbors.delta == 2.0


def test_diffprivlib_laplace_matches_its_noise_and_replays():
    _need("diffprivlib")
    m = lib.get("diffprivlib.laplace")
    n = 20_000
    out = m.sample([0.0], n, seed=7)
    assert out.shape == (n,) and out.dtype == float
    assert np.array_equal(out, m.sample([0.0], n, seed=7))  # seeded through the process pool
    # Laplace(1/eps) with eps = 1: P(X <= 0) = 1/2, P(|X| <= ln 2) = 1/2
    assert _close(np.mean(out <= 0), 0.5, n)
    assert _close(np.mean(np.abs(out) <= math.log(2)), 0.5, n)


def test_diffprivlib_geometric_matches_its_noise():
    _need("diffprivlib")
    m = lib.get("diffprivlib.geometric")
    n = 20_000
    out = m.sample([3], n, seed=1)
    assert out.shape == (n,) and np.issubdtype(out.dtype, np.integer)
    a = math.exp(-1.0)
    p0 = (1 - a) / (1 + a)
    assert _close(np.mean(out == 3), p0, n)
    assert _close(np.mean(out == 4), p0 * a, n)
    assert _close(np.mean(out == 1), p0 * a * a, n)


def test_diffprivlib_exponential_matches_its_weights():
    _need("diffprivlib")
    m = lib.get("diffprivlib.exponential")
    u = np.array([1.0, 2.0, 3.0, 2.0, 1.0])
    n = 20_000
    out = m.sample(u, n, seed=2)
    w = np.exp(1.0 * u / 2)  # exp(eps u / (2 sensitivity))
    for i, p in enumerate(w / w.sum()):
        assert _close(np.mean(out == i), p, n)
    mono = lib.get("diffprivlib.exponential_monotonic")
    assert mono.epsilon == 1.0 and mono.true_epsilon == 2.0
    out = mono.sample(u, n, seed=2)
    w = np.exp(1.0 * u)  # monotonic=True: exp(eps u / sensitivity)
    for i, p in enumerate(w / w.sum()):
        assert _close(np.mean(out == i), p, n)


def test_diffprivlib_mean_bounded_and_unbounded():
    _need("diffprivlib")
    n = 4_000
    out = lib.get("diffprivlib.mean").sample([0, 0, 0, 0, 0], n, seed=3)
    # truncated to [0, 10]: the mass below 0 lands on 0, P = 1/2
    assert out.min() >= 0.0 and out.max() <= 10.0
    assert _close(np.mean(out == 0.0), 0.5, n)
    leak = lib.get("diffprivlib.mean_unbounded").sample([1, 1, 1, 1, 1], 500, seed=3)
    assert np.all(leak == 1.0)  # constant data: the exact mean, no noise at all


def test_adapters_are_sampling_only():
    _need("diffprivlib")
    m = lib.get("diffprivlib.laplace")
    assert not m.supports("replay")
    with pytest.raises(UnsupportedError):
        m.run(Replay(Sampler(np.random.default_rng(0), 10)), [0.0])


def test_per_call_adapters_pickle_for_the_process_pool():
    _need("diffprivlib")
    from privet.execution import ProcessPool, get_executor

    m = lib.get("diffprivlib.exponential")
    copy = pickle.loads(pickle.dumps(m))
    assert copy.name == m.name and copy.epsilon == m.epsilon
    ex = get_executor(None, m, len)
    try:
        assert isinstance(ex, ProcessPool)
    finally:
        ex.close()


# -- OpenDP --------------------------------------------------------------------------------------

def test_opendp_specs():
    _need("opendp")
    version = libs.version("opendp")
    for name in ("opendp.laplace", "opendp.geometric", "opendp.exponential", "opendp.sum",
                 "opendp.mean"):
        m = lib.get(name)
        assert m.source == f"OpenDP {version}"
        assert m.epsilon == pytest.approx(1.0, abs=1e-6)  # map(d_in) of the defaults
        assert m.true_epsilon == pytest.approx(1.0)
    assert lib.get("opendp.laplace").kind == "vectorized"
    assert lib.get("opendp.sum").neighbors.kind == "add_remove"
    assert lib.get("opendp.mean").neighbors.kind == "replace_one"
    mono = lib.get("opendp.exponential_monotonic")
    assert mono.epsilon == pytest.approx(1.0) and mono.true_epsilon == pytest.approx(2.0)
    wrong = lib.get("opendp.mean_din1")
    assert wrong.epsilon < 1e-6 and wrong.true_epsilon == pytest.approx(1.0)
    # a measurement with another scale claims map(d_in) = d_in / scale
    assert libs.opendp_laplace(scale=4.0).epsilon == pytest.approx(0.25)


def test_opendp_laplace_and_geometric_match_their_noise():
    _need("opendp")
    n = 20_000
    out = lib.get("opendp.laplace").sample([0.0], n, seed=0)
    assert out.shape == (n,)
    assert _binomial_ok(out <= 0, 0.5)
    assert _binomial_ok(np.abs(out) <= math.log(2), 0.5)
    # one call on a vector of n copies: neighbouring entries must be independent, so both
    # of a disjoint pair are <= 0 with probability 1/4 (1/2 if the noise were repeated)
    pairs = (out <= 0).reshape(-1, 2)
    assert _binomial_ok(pairs.all(axis=1), 0.25)
    g = lib.get("opendp.geometric").sample([3], n, seed=0)
    a = math.exp(-1.0)
    p0 = (1 - a) / (1 + a)
    assert np.issubdtype(g.dtype, np.integer)
    assert _binomial_ok(g == 3, p0)
    assert _binomial_ok(g == 2, p0 * a)


def test_opendp_noisy_max_two_candidates():
    _need("opendp")
    n = 4_000
    out = lib.get("opendp.exponential").sample([0.0, 1.0], n, seed=0)
    # exponential noise of scale 2: P(1 + E1 > E0) = 1 - exp(-1/2) / 2
    assert set(np.unique(out)) <= {0, 1}
    assert _binomial_ok(out == 1, 1 - math.exp(-0.5) / 2)


def test_opendp_composed_queries_are_centered():
    _need("opendp")
    n = 4_000
    s = lib.get("opendp.sum").sample([1.0, 2.0, 30.0], n, seed=0)  # clamped: 1 + 2 + 10
    assert _binomial_ok(s <= 13.0, 0.5)
    m = lib.get("opendp.mean").sample([0, 0, 0, 0, 10], n, seed=0)  # mean 2, scale 2
    assert _binomial_ok(m <= 2.0, 0.5)
    assert _binomial_ok(np.abs(m - 2.0) <= 2 * math.log(2), 0.5)


# -- CLI -----------------------------------------------------------------------------------------

def test_cli_detect_on_library_names(capsys):
    _need("diffprivlib")
    from privet.cli import main

    code = main(["detect", "diffprivlib.laplace", "--n-select", "2000", "--n-final", "5000",
                 "--seed", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["mechanism"] == "diffprivlib.laplace"
    assert code == (1 if data["p_value"] < data["alpha"] else 0)
    code = main(["detect", "diffprivlib.mean_unbounded", "--n-select", "1000",
                 "--n-final", "1000", "--seed", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["p_value"] < 1e-6


# -- the audits (slow) ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", libs.NAMES)
def test_audit(name):
    """The README's findings: sound uses give no violation, the misuses give one.

    diffprivlib runs at a fixed seed. OpenDP cannot be seeded: a sound OpenDP adapter is
    tested at alpha = 1e-10, so a spurious violation has probability at most 1e-10 (5e-10
    over the five). An OpenDP misuse must give p < 1e-6: its final test compares counts of
    the README's event (opendp.exponential_monotonic: P = 0.203 vs 0.028; mean_din1: 0.75
    vs 0.37), Binomial(20,000, P) on each side, which lie within 12 standard errors of their
    means except with probability below 1e-28 (exact binomial tails); anywhere in that range
    the counts' conditional binomial test at the test epsilon gives p < 1e-24. (This assumes
    selection picks that event or one as strong; on 5,000 selection samples it leads the
    other candidates by far more than their sampling error.)
    """
    library = name.split(".")[0]
    _need(library)
    audit = libs.AUDITS[name]
    alpha = 0.05 if library == "diffprivlib" else DELTA
    # the claim over the reals: the libraries' float leaks are tests/floats' business
    res = privet.detect(lib.get(name), inputs=audit.inputs, n_select=5_000, n_final=20_000,
                        seed=0, alpha=alpha, max_candidates=1, float_features="off")
    if audit.expect == "violation":
        assert res.violation and res.p_value < 1e-6, res.verdict
        assert res.counterexample is not None
    else:
        assert not res.violation, res.verdict
