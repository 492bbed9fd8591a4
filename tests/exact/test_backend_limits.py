"""The "auto" backend's trial compile has a time limit: a mechanism beyond both backends is
refused in one sentence instead of compiling for many minutes."""

import numpy as np
import pytest

import privet
from privet.core.errors import GridTooLargeError
from privet.exact import backend


@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1),
                  domain=privet.Domain(length=6, integer=True, low=0, high=3))
def disc6(noise, x):
    d = noise.discrete(list(range(100)), shape=x.shape)  # 100^6 joint outcomes
    return privet.ops.argmax(x * 50 + d, axis=-1)


def test_beyond_both_backends_is_refused_once_the_trial_compile_runs_out(monkeypatch):
    monkeypatch.setattr(backend, "TRIAL_SECONDS", 0.5)
    with pytest.raises(GridTooLargeError, match="beyond both backends: enumeration needs "
                       "1,000,000,000,000 joint noise outcomes .* did not finish in 0.5 s"):
        privet.exact(disc6)


def test_a_compile_out_of_time_falls_back_to_enumeration_when_that_fits(monkeypatch):
    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1),
                      domain=privet.Domain(length=2, integer=True, low=0, high=3))
    def disc2(noise, x):
        d = noise.discrete(list(range(100)), shape=x.shape)  # 10^4 outcomes: enumerable
        return privet.ops.argmax(x * 50 + d, axis=-1)

    def slow(*a, **k):
        raise backend.TrialTimeout
    monkeypatch.setattr(backend, "_choose", slow)
    b = privet.exact(disc2)
    assert b.backend == "enumerate" and "did not finish" in b.details["backend_choice"]
    assert b.epsilon == np.inf  # x = 0 vs 2 moves an entry by 100: some argmax impossible


def test_add_remove_mechanisms_are_sent_to_the_engines_that_check_them():
    # "give the length" led to "give pairs=", which led to "all inputs must have the same
    # length": three sentences and no way through
    from privet.core.errors import NeighborError

    @privet.mechanism(epsilon=0.5, neighbors=privet.neighbors.add_remove(),
                      domain=privet.Domain(length=(0, 4), integer=True, low=0, high=1))
    def count(noise, x):
        return np.sum(x, axis=-1) + noise.geometric(0.5, low=-3, high=3)

    for call in (lambda: privet.exact(count), lambda: privet.exact(count, length=2),
                 lambda: privet.exact(count, inputs=[[1, 1], [1, 1, 1]])):
        with pytest.raises(NeighborError, match="compares inputs of one length only; check "
                                                "the mechanism with privet search"):
            call()
