"""Sketches beyond KOLAHAL's nine, written from textbook mechanisms, for privet.synth.

Each is a :class:`privet.synth.Sketch` with the noise locations a textbook would fill and
the answer it gives (``textbook``), in the paper's grammar [1-4] x |q|^[0-2] x (1/ε)^[1-2].
γ is ε = 1 (and the length below); Ex_test varies ε to 0.5 and 2 (and the length where the
answer does not depend on it).

* ``coupled_pair`` -- (q1 + η1, q1 + q2 + η2), one entry changes by 1: q1 moves both
  releases, so 1/c1 + 1/c2 <= ε; the least noisy completion in the grammar is (2/ε, 2/ε).
* ``prefix_sums`` -- every prefix sum of q + η1 (post-processing of a noisy histogram) and
  the total plus η2: 1/c1 + 1/c2 <= ε, so (2/ε, 2/ε).
* ``two_level_histogram`` -- the bins plus η1 and the sums of bin pairs plus η2: one bin
  moves one fine and one coarse count, so (2/ε, 2/ε).
* ``histogram_with_total`` -- the bins plus η1 and the total plus η2: (2/ε, 2/ε).
* ``clamped_sum`` -- the Laplace mechanism on a sum of entries clamped to [0, 1]; one entry
  may change arbitrarily (replace one), the clamp bounds the sensitivity by 1: (1/ε).
* ``noisy_min`` -- report noisy min (the index of the smallest noisy count, every count
  moves by at most 1): (2/ε).
"""

from __future__ import annotations

import numpy as np

from ..core import ops
from ..core.mechanism import Domain, Output
from ..core.neighbors import all_differ, one_differs, replace_one
from ..synth.sketch import sketch
from ._common import INDEXED, QUERIES, index_categories

VARY_EPSILON = ({"epsilon": 0.5}, {"epsilon": 2.0})


def _b(noise, q: np.ndarray) -> np.ndarray:
    return np.broadcast_to(q, (noise.size, q.shape[0]))


@sketch(holes=("η1", "η2"), neighbors=one_differs(1), domain=Domain(length=2),
        output=Output.numeric(length=2), epsilon=1.0, length=2, settings=VARY_EPSILON,
        textbook=[("2/ε", "2/ε"), ("|q|/ε", "|q|/ε"), ("2/ε", "|q|/ε"), ("|q|/ε", "2/ε")],
        name="coupled_pair")
def coupled_pair(noise, q, *, epsilon):
    """(q1 + η1, q1 + q2 + η2): two releases coupled through q1."""
    return np.stack([q[0] + noise.hole("η1"), q[0] + q[1] + noise.hole("η2")], axis=-1)


@sketch(holes=("η1", "η2"), neighbors=one_differs(1), domain=QUERIES, output=Output.numeric(),
        epsilon=1.0, length=4, textbook=[("2/ε", "2/ε")], name="prefix_sums")
def prefix_sums(noise, q, *, epsilon):
    """Prefix sums of the noisy entries, and the noisy total."""
    noisy = np.cumsum(_b(noise, q) + noise.hole("η1", q.shape), axis=-1)
    total = q.sum() + noise.hole("η2")
    return np.concatenate([noisy, total[:, None]], axis=-1)


@sketch(holes=("η1", "η2"), neighbors=one_differs(1), domain=QUERIES, output=Output.numeric(),
        epsilon=1.0, length=4, settings=(*VARY_EPSILON, {"length": 8}),
        textbook=[("2/ε", "2/ε")], name="two_level_histogram")
def two_level_histogram(noise, q, *, epsilon):
    """Fine bins plus η1 and coarse bins (pairs of fine bins) plus η2."""
    fine = _b(noise, q) + noise.hole("η1", q.shape)
    pairs = q[0::2] + q[1::2]
    coarse = _b(noise, pairs) + noise.hole("η2", pairs.shape)
    return np.concatenate([fine, coarse], axis=-1)


@sketch(holes=("η1", "η2"), neighbors=one_differs(1), domain=QUERIES, output=Output.numeric(),
        epsilon=1.0, length=4, textbook=[("2/ε", "2/ε")], name="histogram_with_total")
def histogram_with_total(noise, q, *, epsilon):
    """Every bin plus η1, and the total plus η2."""
    bins = _b(noise, q) + noise.hole("η1", q.shape)
    return np.concatenate([bins, (q.sum() + noise.hole("η2"))[:, None]], axis=-1)


@sketch(holes=("η",), neighbors=replace_one(), domain=QUERIES, output=Output.numeric(),
        epsilon=1.0, length=5, textbook=[("1/ε",)], name="clamped_sum")
def clamped_sum(noise, q, *, epsilon):
    """The sum of the entries clamped to [0, 1], plus η."""
    return np.clip(q, 0.0, 1.0).sum() + noise.hole("η")


@sketch(holes=("η",), neighbors=all_differ(1), domain=INDEXED,
        output=Output.categorical(index_categories()), epsilon=1.0, length=5,
        textbook=[("2/ε",)], name="noisy_min")
def noisy_min(noise, q, *, epsilon):
    """Report noisy min: the index of the smallest noisy count."""
    return ops.argmin(_b(noise, q) + noise.hole("η", q.shape), axis=-1)


SKETCHES = {
    "textbook.coupled_pair": coupled_pair,
    "textbook.prefix_sums": prefix_sums,
    "textbook.two_level_histogram": two_level_histogram,
    "textbook.histogram_with_total": histogram_with_total,
    "textbook.clamped_sum": clamped_sum,
    "textbook.noisy_min": noisy_min,
}
