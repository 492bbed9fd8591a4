"""seed= takes an int, a numpy Generator, a SeedSequence or None, everywhere (issue 16)."""

import numpy as np
import pytest

import privet
from privet import mechanisms
from privet.core.errors import ParameterError
from privet.core.seeds import as_seed


def test_every_kind_of_seed_becomes_one_replayable_int():
    assert as_seed(7) == 7 and as_seed(np.int64(7)) == 7
    assert as_seed(np.random.SeedSequence(7)) == 7
    fresh = as_seed(None)
    assert isinstance(fresh, int) and fresh != as_seed(None)
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    assert as_seed(g1) == as_seed(g2) and as_seed(g1) != as_seed(np.random.default_rng(3))
    child = np.random.SeedSequence(7).spawn(1)[0]
    assert as_seed(child) == as_seed(child) != 7
    for bad in (-1, 1.5, "7", True):
        with pytest.raises(ParameterError, match="seed must be"):
            as_seed(bad)


def test_sampling_takes_a_generator_and_a_seed_sequence():
    m = mechanisms.get("statdp.noisy_max_v1a")
    x = [1, 1, 1, 1, 2]
    a = m.sample(x, 1000, seed=np.random.default_rng(5))
    b = m.sample(x, 1000, seed=np.random.default_rng(5))
    assert np.array_equal(a, b)
    c = m.sample(x, 1000, seed=np.random.SeedSequence(11))
    assert np.array_equal(c, m.sample(x, 1000, seed=11))


def test_a_run_without_a_seed_records_the_seed_that_replays_it():
    m = mechanisms.get("statdp.noisy_max_v1b")
    first = privet.detect(m, n_select=2_000, n_final=4_000, seed=None)
    assert isinstance(first.seed, int)
    again = privet.detect(m, n_select=2_000, n_final=4_000, seed=first.seed)
    assert (again.p_value, again.counterexample) == (first.p_value, first.counterexample)
    gen = privet.detect(m, n_select=2_000, n_final=4_000, seed=np.random.default_rng(1))
    assert isinstance(gen.seed, int)
