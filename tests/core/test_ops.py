"""The NumPy semantics of privet.ops: the short-axis reduction gives NumPy's values."""

import numpy as np
import pytest

from privet.core.ops import SHORT_AXIS, HardOps

HARD = HardOps()


@pytest.mark.parametrize(
    "shape", [(5000, 5), (4096, 1 + SHORT_AXIS), (300, 7, 3), (3, 4), (4100, 2)])
@pytest.mark.parametrize("dtype", [float, np.int64, bool, np.float32])
def test_max_and_min_are_numpys_on_every_axis(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    x = (rng.laplace(0.0, 3.0, shape) * 4).astype(dtype)
    for axis in range(-1, len(shape)):
        for ours, numpys in ((HARD.max, np.max), (HARD.min, np.min)):
            got, want = ours(x, axis=axis), numpys(x, axis=axis)
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_nan_in_a_row_makes_its_maximum_and_minimum_nan():
    x = np.random.default_rng(3).random((5000, 5))
    x[7, 3] = np.nan
    for reduce in (HARD.max, HARD.min):
        out = reduce(x)
        assert np.isnan(out[7]) and not np.isnan(np.delete(out, 7)).any()


def test_an_empty_axis_is_refused_as_numpy_refuses_it():
    with pytest.raises(ValueError):
        HARD.max(np.zeros((5000, 0)))
