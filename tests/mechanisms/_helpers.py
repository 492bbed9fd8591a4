"""Shared helpers for the benchmark-library tests."""

from __future__ import annotations

import numpy as np

import privet.mechanisms as lib


def neighbor_of(name: str) -> np.ndarray:
    """A neighbor of the mechanism's example input, inside its domain."""
    mech = lib.get(name)
    x = lib.example_input(name)
    kind = mech.neighbors.kind
    if kind == "add_remove":
        return np.r_[x, 0.5]
    x2 = x.copy()
    lo, hi = mech.domain.low, mech.domain.high
    step = 1.0 if x2[0] + 1 <= hi else -1.0
    if kind == "all_differ":
        # move every entry by one step inside the domain (an 'x shape' style change)
        for i in range(len(x2)):
            s = step if i % 2 == 0 else -step
            if not lo <= x2[i] + s <= hi:
                s = -s
            x2[i] = x2[i] + s
    else:
        x2[0] += step
    assert mech.neighbors.are_neighbors(x, x2)
    return x2


def output_keys(outputs: np.ndarray) -> tuple[list, np.ndarray]:
    """Unique output rows as Python keys (scalars or tuples) and their counts."""
    out = np.asarray(outputs)
    flat = out.reshape(len(out), -1) if out.ndim > 1 else out.reshape(-1, 1)
    uniq, counts = np.unique(flat, axis=0, return_counts=True)
    if out.ndim == 1:
        return [u[0].item() for u in uniq], counts
    return [tuple(u.tolist()) for u in uniq], counts
