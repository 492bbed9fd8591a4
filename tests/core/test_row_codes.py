"""row_codes: the fast path for columns with few values gives np.unique's ranks exactly."""

import numpy as np
import pytest

from privet.core.noise import PROBE_ROWS, row_codes


def reference(flat: np.ndarray) -> np.ndarray:
    codes = np.zeros(flat.shape[0], dtype=np.int64)
    for j in range(flat.shape[1]):
        _, col = np.unique(flat[:, j], return_inverse=True)
        codes = codes * (int(col.max()) + 1) + col.ravel()
    return codes


def test_few_values_match_the_sort():
    rng = np.random.default_rng(3)
    flat = rng.integers(-1, 2, size=(8 * PROBE_ROWS, 4)).astype(float)
    flat[:, 1] = -flat[:, 1] * 0.0  # -0.0 and 0.0 are one value
    assert np.array_equal(row_codes(flat), reference(flat))


def test_a_value_missing_from_the_probe_falls_back():
    rng = np.random.default_rng(4)
    flat = rng.integers(0, 3, size=(8 * PROBE_ROWS, 3)).astype(float)
    flat[-1, 0] = 7.0      # after the probed rows: the column needs the full sort
    flat[-2, 2] = np.nan
    got = row_codes(flat)
    assert np.array_equal(got, reference(flat))


def test_value_codes_are_equal_exactly_when_rows_are_and_do_not_depend_on_the_batch():
    from privet.core.noise import value_codes

    rng = np.random.default_rng(3)
    values = [-1.0, 0.0, 1.0]
    a = rng.choice([-1.0, 0.0, 1.0, 7.0], size=(500, 4))  # 7 is not among the values
    b = rng.choice([-1.0, 0.0, 1.0, 7.0], size=(300, 4))
    ca, cb = value_codes(a, values), value_codes(b, values)
    # each value's digit, 0 for any other: rows equal after mapping 7 -> "other"
    key = lambda r: tuple(values.index(v) + 1 if v in values else 0 for v in r)  # noqa: E731
    both = np.vstack([a, b])
    codes = np.r_[ca, cb]
    keys = [key(r) for r in both]
    for i in range(0, len(both), 37):
        for j in range(0, len(both), 41):
            assert (codes[i] == codes[j]) == (keys[i] == keys[j])
    assert codes.max() < 4 ** 4 and value_codes(np.full((1, 4), 7.0), values)[0] == 0


@pytest.mark.parametrize("width", [4, 25, 30])  # 4^25 < 2^52 <= 4^26: both ways of adding
def test_value_codes_are_the_rows_digits(width):
    from privet.core.noise import value_codes

    rng = np.random.default_rng(width)
    values = [-1.0, 0.0, 1.0]
    rows = rng.choice([-1.0, 0.0, 1.0, np.nan], size=(200, width))
    digits = np.select([rows == v for v in values], [1, 2, 3], 0).astype(object)
    want = [int(sum(int(d) * 4 ** (width - 1 - j) for j, d in enumerate(r))) for r in digits]
    assert value_codes(rows, values).tolist() == want
