"""Bit-level views of IEEE-754 doubles, vectorized over NumPy arrays (shared vocabulary:
``privet.floats`` decides reachability with them, ``privet.attacks`` builds its float-exact
feature maps on them).

Every function takes and returns arrays (scalars are promoted) and never loops in Python.
The total order :func:`order_key` maps doubles to int64 so that ``a < b`` (as reals) iff
``order_key(a) < order_key(b)``, with ``-0.0`` and ``+0.0`` sharing the key 0; bisection
over doubles is then bisection over integers (:func:`from_order_key` inverts it).
"""

from __future__ import annotations

import numpy as np

SIGN = np.int64(-0x8000000000000000)
MANTISSA_BITS = 52
MANTISSA_MASK = np.int64((1 << MANTISSA_BITS) - 1)


def as_float(v) -> np.ndarray:
    return np.asarray(v, dtype=np.float64)


def to_hex(v: float) -> str:
    """The exact double, as C99 / Python hex (``float.fromhex`` reads it back)."""
    return float(v).hex()


def from_hex(text: str) -> float:
    return float.fromhex(text)


def order_key(v) -> np.ndarray:
    """int64 keys in the order of the reals: negative doubles get negated magnitudes."""
    bits = as_float(v).view(np.int64)
    return np.where(bits < 0, -(bits & ~SIGN), bits)


def from_order_key(k) -> np.ndarray:
    """The double of an :func:`order_key` (0 maps to +0.0)."""
    k = np.asarray(k, dtype=np.int64)
    bits = np.where(k < 0, (-k) | SIGN, k)
    return bits.view(np.float64)


def ulp(v) -> np.ndarray:
    """Distance from |v| to the next larger double."""
    return np.spacing(np.abs(as_float(v)))


def significand(v) -> np.ndarray:
    """The integer significand (53 bits with the hidden one for normal numbers)."""
    bits = as_float(v).view(np.int64) & ~SIGN
    frac = bits & MANTISSA_MASK
    normal = (bits >> MANTISSA_BITS) > 0
    return np.where(normal, frac | np.int64(1 << MANTISSA_BITS), frac)


def _lowest_bit_exponent(s: np.ndarray) -> np.ndarray:
    """``log2`` of the lowest set bit of non-negative int64s below 2^53 (-1023 for 0): the
    bit, a power of two, converts to a double exactly, whose exponent field is read off."""
    low = s & -s
    return (low.astype(np.float64).view(np.int64) >> MANTISSA_BITS) - 1023


def trailing_zeros(v, cap: int = 53) -> np.ndarray:
    """How many low-order bits of the significand are zero (the output's position on its
    ulp grid: ``k`` means the double is a multiple of ``2^k · ulp``); 0.0 gives ``cap``."""
    s = significand(v)
    return np.where(s == 0, cap, np.minimum(_lowest_bit_exponent(s), cap))


def low_bits(v, k: int) -> np.ndarray:
    """The ``k`` least significant bits of the stored mantissa, as an integer."""
    bits = as_float(v).view(np.int64)
    return bits & np.int64((1 << int(k)) - 1)


def granularity(v) -> np.ndarray:
    """``g`` such that the double is an odd multiple of ``2^g`` (the coarsest power-of-two
    lattice it lies on); 0.0 gives a large sentinel (it lies on every lattice). A double
    with biased exponent ``e`` is its 53-bit significand times ``2^(max(e, 1) - 1075)``."""
    b = as_float(v).view(np.int64) & ~SIGN
    e = b >> MANTISSA_BITS
    s = np.where(e > 0, (b & MANTISSA_MASK) | np.int64(1 << MANTISSA_BITS), b)
    g = np.maximum(e, 1) - 1075 + _lowest_bit_exponent(s)
    return np.where(b == 0, 1 << 20, g)


def lattice_residue(v, lattice: float, bins: int) -> np.ndarray:
    """The output's residue against the lattice ``lattice·Z``: 0 for a lattice point, else
    1..``bins`` for the equal bin of (0, 1) that ``(v mod lattice) / lattice`` falls in."""
    r = np.mod(as_float(v), float(lattice)) / float(lattice)
    return np.where(r == 0, 0, 1 + np.minimum((r * bins).astype(np.int64), bins - 1))


__all__ = ["as_float", "from_hex", "from_order_key", "granularity", "lattice_residue",
           "low_bits", "order_key", "significand", "to_hex", "trailing_zeros", "ulp"]
