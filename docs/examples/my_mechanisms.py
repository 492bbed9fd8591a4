"""Two mechanisms of a user's own, used by docs/tour.md and docs/examples/test_my_mechanisms.py.

Audit them from a shell in this folder:

    privet detect my_mechanisms.py:report_noisy_max --html report.html
    privet detect my_mechanisms.py:report_noisy_max_value      # the classic mistake
"""

import math

import privet
from privet import ops


@privet.mechanism(epsilon=0.5, neighbors=privet.neighbors.all_differ(1))
def report_noisy_max(noise, queries, *, epsilon):
    """Report noisy max: the index of the largest query plus Lap(2/ε) noise."""
    noisy = queries + noise.laplace(scale=2 / epsilon, shape=queries.shape)
    return ops.argmax(noisy, axis=-1)


@privet.mechanism(epsilon=0.5, neighbors=privet.neighbors.all_differ(1))
def report_noisy_max_value(noise, queries, *, epsilon):
    """The same noise, but it releases the noisy maximum itself: not 0.5-DP."""
    noisy = queries + noise.laplace(scale=2 / epsilon, shape=queries.shape)
    return ops.max(noisy, axis=-1)


@privet.mechanism(epsilon=math.log(3), neighbors=privet.neighbors.one_differs(1),
                  domain=privet.Domain(length=3, integer=True, low=0, high=1))
def randomized_response(noise, bits, *, epsilon):
    """Each bit is kept with probability 3/4 and flipped otherwise: ln(3)-DP when one
    person's bit changes."""
    flip = noise.bernoulli(0.25, shape=bits.shape)
    return (bits + flip) % 2
