"""Argument generation (Sec. 4.4.2): least noise for noise args, MaxSMT for the others."""

import numpy as np

import privet
from privet import ops
from privet.detect.engine import generate_inputs
from privet.detect.trace import Trace, least_noise_args, maxsmt_args, run_trace
from privet.mechanisms import get

svt = get("statdp.svt")


def test_trace_returns_noise_free_values_and_records_draws():
    out, trace = run_trace(svt, np.ones(5), svt.resolve_args({"T": 0.5, "N": 1}))
    assert np.asarray(out).tolist() == [[1, np.inf, np.inf, np.inf, np.inf]]
    assert len(trace.draws) == 2
    assert trace.noise_scale() > 0


def test_noise_argument_takes_the_least_noisy_value():
    assert least_noise_args(svt, np.ones(5)) == {"N": 1}


def test_maxsmt_threshold_separates_the_two_inputs():
    plan = maxsmt_args(svt, np.ones(5), np.full(5, 2.0), {"N": 1})
    assert plan.path == "maxsmt"
    # every query diverges exactly when 1 < T <= 2; the margin step centres it
    assert 1.0 < plan.args["T"] < 2.0
    assert plan.satisfied >= 5


def test_library_svt_uses_maxsmt_path():
    planned, path, notes = generate_inputs(get("statdp.svt"))
    assert path == "maxsmt", notes
    assert all("T" in a and a.get("N", 1) == 1 for *_, a in planned)


@privet.mechanism(epsilon=1.0, args={"T": 0.0}, arg_ranges={"T": (-1.0, 3.0)},
                  output=privet.Output.categorical((0, 1), length=None))
def untraceable(noise, x, *, epsilon, T=0.0):
    """Compares with numpy directly (and calls float()), so it cannot be traced."""
    t = float(T)
    return (np.sum(x) + noise.laplace(1 / epsilon) > t).astype(np.int64)


def test_untraceable_mechanism_falls_back_to_a_grid():
    planned, path, notes = generate_inputs(untraceable)
    assert path == "grid"
    assert notes and "tracing failed" in notes[0]
    assert len({a["T"] for *_, a in planned}) >= 2


def test_symbolic_ops_backend_is_registered():
    with ops.semantics("symbolic"):
        assert ops.argmax(np.array([[1.0, 3.0, 2.0]])).tolist() == [1]
    assert Trace().semantics == "symbolic"
