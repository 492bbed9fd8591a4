"""privet.testing assertions behave on a correct and a broken mechanism."""

import numpy as np
import pytest

import privet
from privet import ops
from privet.core.errors import PrivetError
from privet.testing import assert_same_distribution


@privet.mechanism(epsilon=0.5)
def argmax_lap(noise, q, *, epsilon):
    return ops.argmax(q + noise.laplace(2 / epsilon, q.shape), axis=-1)


@privet.mechanism(epsilon=0.5)
def argmax_lap_again(noise, q, *, epsilon):
    return np.argmax(q + noise.laplace(2 / epsilon, q.shape), axis=-1)


@privet.mechanism(epsilon=0.5)
def argmin_lap(noise, q, *, epsilon):
    return ops.argmin(q + noise.laplace(2 / epsilon, q.shape), axis=-1)


def test_same_distribution_accepts_a_port_and_rejects_a_different_mechanism():
    x = [1.0, 3.0, 0.0, 2.0]
    assert assert_same_distribution(argmax_lap, argmax_lap_again, x) >= 1e-3
    with pytest.raises(AssertionError, match="outputs differ"):
        assert_same_distribution(argmax_lap, argmin_lap, x)


# ---- assert_dp / assert_not_dp on the library -------------------------------------------
from privet import mechanisms  # noqa: E402
from privet.testing import assert_dp, assert_not_dp  # noqa: E402

CORRECT = ["statdp.noisy_max_v1a", "statdp.histogram", "statdp.svt"]
BROKEN = ["statdp.noisy_max_v1b", "statdp.histogram_eps", "statdp.isvt1"]
SMALL = dict(n_select=20_000, n_final=100_000)


@pytest.mark.parametrize("name", CORRECT)
def test_assert_dp_passes_on_correct_library_mechanisms(name):
    # the claimed ε holds; at α = 0.01 the chance of a false failure for a fixed seed is 1%
    # per mechanism at most, and seed 0 is fixed, so this is deterministic
    res = assert_dp(mechanisms.get(name), alpha=0.01, **SMALL)
    assert res.p_value >= 0.01 and res.counterexample is None


@pytest.mark.parametrize("name", BROKEN)
def test_assert_dp_fails_with_the_counterexample_on_broken_mechanisms(name):
    with pytest.raises(AssertionError) as info:
        assert_dp(mechanisms.get(name), **SMALL)
    msg = str(info.value)
    assert "is not 0.7-DP" in msg and "D1=" in msg and "D2=" in msg and "event" in msg
    assert "seed 0" in msg
    res = assert_not_dp(mechanisms.get(name), **SMALL)
    assert res.counterexample is not None and res.p_value < 0.01


def test_assert_not_dp_fails_on_a_correct_mechanism():
    with pytest.raises(AssertionError, match="no violation found"):
        assert_not_dp(mechanisms.get("statdp.noisy_max_v1a"), **SMALL)


def test_assert_dp_is_deterministic_under_its_seed_and_tests_the_given_epsilon():
    m = mechanisms.get("statdp.noisy_max_v1a")  # runs at its claim 0.7 whatever is tested
    a = assert_dp(m, seed=3, **SMALL)
    b = assert_dp(m, seed=3, **SMALL)
    assert a.p_value == b.p_value and a.test_epsilon == 0.7
    # 0.7-DP is not 0.35-DP: testing half the claim must find the violation
    with pytest.raises(AssertionError, match="is not 0.35-DP"):
        assert_dp(m, epsilon=0.35, seed=3, **SMALL)


def test_exact_method_proves_or_refutes():
    assert_dp(mechanisms.get("faier.truncated_geometric"), method="exact", length=1)
    expected = r"exact ε = [0-9.]+ > 0.693147 on 27 inputs.*counterexample: D1="
    with pytest.raises(AssertionError, match=expected):
        assert_dp(mechanisms.get("faier.discrete_noisy_max"), method="exact", length=3)
    res = assert_not_dp(mechanisms.get("faier.discrete_noisy_max"), method="exact", length=3)
    assert res.epsilon > 0.6931


def test_bad_method_is_one_sentence():
    with pytest.raises(PrivetError, match="method must be"):
        assert_dp(argmax_lap, method="magic")


# sizes at which the violation (a noisy max returning the value: about 1.25-DP on five
# queries, claimed 0.5) is found with room to spare, so the test checks the plugin, not luck
PLUGIN_TEST = '''
import privet
from privet import ops
from privet.testing import assert_dp


@privet.mechanism(epsilon=0.5, neighbors=privet.neighbors.all_differ(1))
def noisy_max_value(noise, queries, *, epsilon):
    return ops.max(queries + noise.laplace(2 / epsilon, queries.shape), axis=-1)


def test_direct():
    assert_dp(noisy_max_value, n_select=5_000, n_final=20_000)


def test_fixture(privet_check):
    privet_check.assert_not_dp(noisy_max_value, n_select=5_000, n_final=20_000)
'''


def test_pytest_hides_privets_frames_and_the_plugin_seeds_and_summarizes(tmp_path):
    import subprocess
    import sys

    (tmp_path / "test_mine.py").write_text(PLUGIN_TEST)
    run = subprocess.run([sys.executable, "-m", "pytest", "test_mine.py", "-p",
                          "no:cacheprovider", "--privet-seed", "3", "-o", "addopts="],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    out = run.stdout
    assert run.returncode == 1, out                 # test_direct fails, test_fixture passes
    assert "1 failed, 1 passed" in out
    assert "privet: checks seeded with 3 (--privet-seed)" in out
    assert "is not 0.5-DP: violation found" in out and "D1=[" in out
    assert "privet/testing.py" not in out and "privet/detect" not in out  # caller's line only
    assert "assert_dp(noisy_max_value" in out
    assert "privet checks" in out and "test_fixture: assert_not_dp: violation found" in out
    assert "seed 3)" in out
