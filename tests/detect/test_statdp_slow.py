"""Slow reproductions: the full 11 x 3 StatDP grid and the type-I error (run in benchmarks)."""

import math

import pytest

from privet.detect import detect, pvalue_curve
from privet.mechanisms import get

NAMES = ["statdp.noisy_max_v1a", "statdp.noisy_max_v1b", "statdp.noisy_max_v2a",
         "statdp.noisy_max_v2b", "statdp.histogram", "statdp.histogram_eps", "statdp.svt",
         "statdp.isvt1", "statdp.isvt2", "statdp.isvt3", "statdp.isvt4"]
CORRECT = {"statdp.noisy_max_v1a", "statdp.noisy_max_v2a", "statdp.histogram", "statdp.svt"}


def true_epsilon(name, eps0):
    if name in CORRECT:
        return eps0
    if name == "statdp.histogram_eps":
        return 1 / eps0
    if name == "statdp.isvt3":
        return 7 / 4 * eps0
    return math.inf


@pytest.mark.slow
@pytest.mark.parametrize("eps0", [0.2, 0.7, 1.5])
@pytest.mark.parametrize("name", NAMES)
def test_statdp_grid(name, eps0):
    mech = get(name).replace(epsilon=eps0)
    true = true_epsilon(name, eps0)
    if name in CORRECT:
        pts = [0.7 * eps0, eps0, 1.25 * eps0, 1.5 * eps0]
        c = pvalue_curve(mech, pts, seed=100)
        assert all(p > 0.05 for p in c.p_values[1:]), c.p_values
        assert c.p_values[0] < 0.05, c.p_values  # the curve rises between 0.7 eps0 and eps0
    elif true <= eps0:  # Lap(eps0) histogram at eps0 = 1.5 is 1/1.5-DP: more private
        r = detect(mech, seed=100)
        assert r.p_value > 0.05
    else:
        r = detect(mech, seed=100)
        assert r.p_value < 0.01
        kind = r.counterexample.event_spec["kind"]
        if name.startswith("statdp.noisy_max") or name == "statdp.histogram_eps":
            assert kind in ("interval", "finite_interval", "equals")
        elif name == "statdp.isvt4":
            assert kind in ("and", "interval", "finite_interval", "count", "count_range",
                            "equals")
        else:
            assert kind in ("hamming", "hamming_range", "count", "count_range", "equals")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["statdp.noisy_max_v1a", "statdp.histogram", "statdp.svt"])
def test_type_one_error(name):
    runs, alpha = 200, 0.05
    mech = get(name).replace(epsilon=0.7)
    rejections = sum(detect(mech, seed=10_000 + s, n_select=20_000, n_final=100_000,
                            max_candidates=1).p_value < alpha for s in range(runs))
    assert rejections / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
