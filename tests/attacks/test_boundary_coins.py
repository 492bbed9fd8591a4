"""A threshold event's randomized boundary where a certificate counts it: exact
probabilities take its share of each output, and sampled counts draw its coins from the
sample's own generator (a hash of the tied rows froze them: every chunk whose tied rows
were alike drew the same coins)."""

from __future__ import annotations

import numpy as np

import privet
from privet.attacks.events import Threshold
from privet.attacks.scores import Stat
from privet.core.events import Hits
from privet.core.mechanism import Domain, Output
from privet.execution import map_reduce
from privet.search import confirm


@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1.0),
                  domain=Domain(length=1, integer=True, low=0, high=3),
                  output=Output.categorical((0, 1, 2, 3, 4)))
def coin_shift(noise, x):
    """x + Bernoulli(1/2)."""
    return x[0] + noise.bernoulli(0.5)


@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1.0))
def constant(noise, x):
    """Always 0 (it draws, so it is sampled as any mechanism is)."""
    return 0.0 * noise.bernoulli(0.5)


def test_exact_probabilities_count_the_boundary_by_its_share():
    # {ω > 1}, and ω = 1 with probability 1/2: P = 1/4 under x = 0 (ω in {0, 1}) and
    # 1/2 + 1/4 = 3/4 under x = 1 (ω in {1, 2}); coins per output gave 0 or 1/2, 1/2 or 1
    event = Threshold(Stat("entry", 0), 1.0, 0.5)
    got = confirm(coin_shift, [0], [1], event)
    assert got["exact"]
    assert got["probabilities"] == (0.25, 0.75)
    assert np.allclose(event.weights(np.array([[0.0], [1.0], [2.0]])), [0.0, 0.5, 1.0])


def test_sampled_counts_draw_fresh_coins_for_every_chunk():
    # every output ties: the count is Binomial(n, 1/2); coins seeded by the tied rows were
    # the same in every chunk of the same size, so every seed gave the same count
    event = Threshold(Stat("entry", 0), 0.0, 0.5)
    n = 40_000
    counts = [map_reduce(constant, [0.0], n, Hits(event), seed=s, chunk=10_000).value
              for s in range(4)]
    assert len(set(counts)) > 1, counts
    sd = (n * 0.25) ** 0.5
    assert all(abs(c - n / 2) < 5 * sd for c in counts), counts
    # the same seed gives the same count on every executor
    again = map_reduce(constant, [0.0], n, Hits(event), seed=0, chunk=10_000,
                       executor="processes").value
    assert again == counts[0]
