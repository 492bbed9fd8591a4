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
