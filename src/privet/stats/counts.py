"""Frequencies of the distinct output rows of two samples (pure NumPy, no loops)."""

from __future__ import annotations

import numpy as np

from ..core.noise import row_codes


def two_sample_counts(a: np.ndarray, b: np.ndarray, codes: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values, counts_a, counts_b)``: every distinct row of ``a`` or ``b`` (one sample per
    leading index, any trailing shape) with how often each sample shows it (rows in the
    order of their integer codes, :func:`privet.core.noise.row_codes`; ``codes``: those of
    the stacked rows, when the caller has them already)."""
    ra = np.asarray(a).reshape(len(a), -1)
    rb = np.asarray(b).reshape(len(b), -1)
    pooled = np.vstack([ra, rb])
    codes = row_codes(pooled) if codes is None else codes
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    values = pooled[first]
    inverse = inverse.ravel()
    return (values, np.bincount(inverse[:len(ra)], minlength=len(values)),
            np.bincount(inverse[len(ra):], minlength=len(values)))


def column_ks(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The two-sample Kolmogorov-Smirnov distance of each column of ``a`` and ``b`` (rows are
    samples; any finite or infinite values, which sort to the ends and count like any other;
    NaN sorts last). One sort of the pooled columns, no loop over columns."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or not len(a) or not len(b):
        raise ValueError("column_ks needs two non-empty 2-D samples of the same width.")
    pooled = np.hstack([a.T, b.T])  # one contiguous row per column
    order = np.argsort(pooled, axis=1, kind="stable")
    sorted_vals = np.take_along_axis(pooled, order, axis=1)
    # each sample's empirical CDF along the sorted pooled values; ties count once, at the
    # last of their run (where both CDFs are read)
    # (in whole units of 1/(len(a) len(b)), so equal CDFs differ by exactly 0)
    step = np.where(order < len(a), len(b), -len(a))
    gap = np.abs(np.cumsum(step, axis=1)) / (len(a) * len(b))
    last = np.ones_like(sorted_vals, dtype=bool)
    with np.errstate(invalid="ignore"):
        last[:, :-1] = sorted_vals[:, 1:] != sorted_vals[:, :-1]
    return np.where(last, gap, 0.0).max(axis=1)


def most_separating(samples: list[tuple[np.ndarray, np.ndarray]], keep: int, rows: int
                    ) -> np.ndarray:
    """The ``keep`` columns whose values differ most between the two samples of some pair
    in ``samples`` (2-D arrays of one width): the largest :func:`column_ks` over the pairs,
    each read on its first ``rows`` rows; the most separating first (ties by column)."""
    score = None
    for a, b in samples:
        ks = np.nan_to_num(column_ks(a[:rows], b[:rows]))
        score = ks if score is None else np.maximum(score, ks)
    if score is None:
        raise ValueError("most_separating needs at least one pair of samples.")
    return np.argsort(-score, kind="stable")[:keep]
