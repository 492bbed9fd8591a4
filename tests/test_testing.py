"""privet.testing assertions behave on a correct and a broken mechanism."""

import numpy as np
import pytest

import privet
from privet import ops
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
