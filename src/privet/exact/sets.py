"""Inference, privacy and accuracy sets (Sec. IV, Defs. 4-5), incl. randomized response (Sec. V).

A *privacy set* is a list of triples ``(x, x', y)`` whose likelihood ratios cover every
ratio of the mechanism (Def. 4); an *accuracy set* a list of inputs covering every accuracy
probability (Def. 5); an *inference set* the ``(x, y)`` pairs whose probabilities those need
(Algorithm 1). The randomized-response sets below are the ones the paper proves valid
(Theorems 5-8): they grow linearly (privacy) and quadratically (accuracy) in n instead of
as 4^n.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..core.errors import InputError


def norm_input(x: Any) -> tuple:
    """An input as a tuple of Python numbers (fast path for lists of ints)."""
    if isinstance(x, (list, tuple)) and (not x or np.ndim(x[0]) == 0):
        # scalars hash and compare like their Python values (numpy ints, 1.0 == 1)
        return x if isinstance(x, tuple) else tuple(x)
    return tuple(np.asarray(x).ravel().tolist())


def ones_zeros(i: int, n: int) -> list[int]:
    """The input 1^i 0^(n-i) of Sec. V."""
    return [1] * i + [0] * (n - i)


def rr_privacy_set(n: int) -> list[tuple[list[int], list[int], tuple[int, ...]]]:
    """C_RR of Eqs. (7)-(8): (1^i 0^(n-i), 1^(i+1) 0^(n-i-1), 0^n) for i < n and
    (1^i 0^(n-i), 1^(i-1) 0^(n-i+1), 0^n) for i >= 1; |C_RR| = 2n (Theorem 5)."""
    y = tuple([0] * n)
    up = [(ones_zeros(i, n), ones_zeros(i + 1, n), y) for i in range(n)]
    down = [(ones_zeros(i, n), ones_zeros(i - 1, n), y) for i in range(1, n + 1)]
    return up + down


def rr_inference_set(n: int) -> list[tuple[list[int], tuple[int, ...]]]:
    """I_RR of Eq. (9): (1^i 0^(n-i), 0^n) for i = 0..n (Theorem 6)."""
    y = tuple([0] * n)
    return [(ones_zeros(i, n), y) for i in range(n + 1)]


def rr_accuracy_set(n: int) -> list[list[int]]:
    """A_RRcount of Eq. (10): 1^i 0^(n-i) for i = 0..n (Theorem 7)."""
    return [ones_zeros(i, n) for i in range(n + 1)]


def rr_count_inference_set(n: int, alpha: int) -> list[tuple[list[int], int]]:
    """I_RRcount of Eq. (11): (1^i 0^(n-i), j) for j in [i - alpha, i + alpha] within 0..n.

    Eq. (11) ranges j over [i - alpha, i + alpha]; outputs outside 0..n have probability 0
    and are left out (they add nothing to the sums of Algorithm 3).
    """
    a = int(alpha)
    return [(ones_zeros(i, n), j) for i in range(n + 1)
            for j in range(max(0, i - a), min(n, i + a) + 1)]


def inference_set_of(privacy_set: Iterable[Sequence[Any]]) -> list[tuple[tuple, Any]]:
    """The smallest inference set Algorithm 2 needs for ``privacy_set`` (cf. Theorem 6)."""
    out: dict = {}
    for x, x2, y in privacy_set:
        key_y = norm_input(y if isinstance(y, (list, tuple)) else [y])
        out[(norm_input(x), key_y)] = None
        out[(norm_input(x2), key_y)] = None
    return list(out)


def covered_inputs(privacy_set: Iterable[Sequence[Any]]) -> set[tuple]:
    """Inputs that appear (as x or x') in a privacy set."""
    out = set()
    for t in privacy_set:
        out.add(norm_input(t[0]))
        out.add(norm_input(t[1]))
    return out


def check_covers(privacy_set: Sequence[Sequence[Any]], inputs: Iterable[Any]) -> None:
    """Raise :class:`InputError` when an input the user asks about is not in the set."""
    have = covered_inputs(privacy_set)
    for x in inputs:
        key = norm_input(x)
        if key not in have:
            raise InputError(
                f"the restricted privacy set does not cover input {list(key)}: add triples "
                "(x, x', y) with it, or drop inputs= to trust the set's own coverage proof."
            )


__all__ = [
    "check_covers", "covered_inputs", "inference_set_of", "norm_input", "ones_zeros",
    "rr_accuracy_set", "rr_count_inference_set", "rr_inference_set", "rr_privacy_set",
]
