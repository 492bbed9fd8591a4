"""``seed=`` as scientific Python takes it: an int, a ``numpy.random.Generator``, a
``numpy.random.SeedSequence``, or None.

Every public entry point turns its ``seed`` into one int with :func:`as_seed` and records
that int in its result, so any run -- also one started with ``seed=None`` or with a
Generator -- replays exactly with ``seed=result.seed``. Engines derive their streams from
that int with :class:`numpy.random.SeedSequence` (on any executor).
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import ParameterError

SeedLike = int | np.random.Generator | np.random.SeedSequence | None


def as_seed(seed: SeedLike) -> int:
    """The int that replays a run seeded with ``seed``.

    * an int >= 0 is itself (so integer seeds give the numbers they always gave);
    * None draws fresh OS entropy (a 128-bit int);
    * a Generator gives the next draw of it (the run consumes the Generator, as NumPy and
      SciPy functions do);
    * a SeedSequence gives its entropy, or, when it is a spawned child, a 128-bit int
      generated from it.
    """
    if seed is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(seed, np.random.SeedSequence):
        if not seed.spawn_key and isinstance(seed.entropy, int):
            return int(seed.entropy)
        words = seed.generate_state(4, dtype=np.uint32)
        return sum(int(w) << (32 * i) for i, w in enumerate(words))
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63))
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and int(seed) >= 0:
        return int(seed)
    raise ParameterError(
        f"seed must be a non-negative integer, a numpy.random.Generator, a "
        f"numpy.random.SeedSequence or None, got {seed!r}.")


def seed_sequence(seed: SeedLike) -> np.random.SeedSequence:
    """A SeedSequence for ``seed`` (a SeedSequence is used as it is, with its spawn key)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(as_seed(seed))


__all__ = ["SeedLike", "as_seed", "seed_sequence"]
