"""privet exact under add/remove neighbors: the inputs of lengths L and L + 1, every longer
input against every removal of one of its entries, both ways.

Prints, per length, the inputs and ordered pairs checked, the tight e^ε (exact fractions)
and the wall time of one ``privet.exact`` call in this process, for two mechanisms written
here: a count of nonzero entries plus a two-sided geometric (α = 1/2, truncated to ±6)
clamped to [0, 3], whose e^ε is 2 while the noise reaches the clamp from every count (L + 1
≤ 6) and ∞ beyond (a count of 7 can no longer output 0, a count of 6 can); and the number
of ones after randomized response on every entry (keep 3/4), plus a geometric truncated to
±2 and clamped to [0, 4]. Where a hand enumeration is small enough (L ≤ 3), it is run too
and must agree.

    .venv/bin/python benchmarks/exact_add_remove.py [--max-length L]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction
from itertools import product

import numpy as np

import privet


@privet.mechanism(epsilon=0.5, neighbors=privet.neighbors.add_remove(),
                  domain=privet.Domain(length=(0, 16), integer=True, low=0, high=2))
def clamped_count(noise, x):
    s = np.sum(np.minimum(x, 1), axis=-1)
    return np.clip(s + noise.geometric(0.5, low=-6, high=6), 0, 3)


@privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.add_remove(),
                  domain=privet.Domain(length=(0, 16), integer=True, low=0, high=1))
def rr_total(noise, x):
    flips = noise.bernoulli(0.25, shape=x.shape)
    s = np.sum((x + flips) % 2, axis=-1)
    return np.clip(s + noise.geometric(0.5, low=-2, high=2), 0, 4)


def by_hand(mech, values: int, length: int) -> Fraction | float:
    best: Fraction | float = Fraction(0)
    for x in product(range(values), repeat=length + 1):
        d1 = mech.distribution(np.asarray(x), exact=True).as_dict()
        for k in range(length + 1):
            d2 = mech.distribution(np.asarray(x[:k] + x[k + 1:]), exact=True).as_dict()
            for a, b in ((d1, d2), (d2, d1)):
                for y, p in a.items():
                    best = max(best, p / b[y]) if b.get(y, 0) else float("inf")
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-length", type=int, default=8)
    a = ap.parse_args(argv)
    print(f"{'mechanism':14s} {'L':>3s} {'inputs':>8s} {'pairs':>9s} {'e^eps':>10s} "
          f"{'by hand':>10s} {'s':>7s}")
    for mech, values in ((clamped_count, 3), (rr_total, 2)):
        for L in range(1, a.max_length + 1):
            t0 = time.perf_counter()
            b = privet.exact(mech, length=L, fractions=True)
            s = time.perf_counter() - t0
            hand = by_hand(mech, values, L) if L <= 3 else None
            if hand is not None and hand != b.e_epsilon:
                raise SystemExit(f"{mech.name} at L = {L}: exact {b.e_epsilon} against the "
                                 f"hand enumeration {hand}")
            print(f"{mech.name:14s} {L:3d} {b.details['inputs']:8,d} {b.details['pairs']:9,d} "
                  f"{str(b.e_epsilon):>10s} {str(hand) if hand is not None else '':>10s} "
                  f"{s:7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
