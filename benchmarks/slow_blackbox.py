"""A time budget on slow black boxes: ``privet search --seconds`` on per-sample black boxes
that take a millisecond or ten a call (a DP library's function behind a service call).

    .venv/bin/python benchmarks/slow_blackbox.py              # 1 ms and 10 ms, 20 s budget
    .venv/bin/python benchmarks/slow_blackbox.py --seconds 60

Each box is a two-sided geometric count (true epsilon ln 2 = 0.693 for a count that moves
by one), claimed 0.5-DP, so a search should certify a violation. Printed per box: the
budget, the wall time of one ``privet.search`` call (in this process, one after the
other), its ratio to the budget, the box's measured milliseconds a call, the pairs kept
and screened, the fresh sample, and the certified bound next to the true epsilon. Before
the squeeze (commit eca033f) the 1 ms box ran a 20 s search for more than 15 minutes (it
was stopped there): every candidate pair was screened on at least 2^11 pairs and the fresh
sample took at least 2^17.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from privet.neighbors import one_differs

import privet

TRUE_EPSILON = math.log(2.0)


def box(delay: float):
    def noisy_count(x, rng=None):
        time.sleep(delay)
        rng = rng or np.random.default_rng()
        return int(np.sum(x) + rng.geometric(0.5) - rng.geometric(0.5))
    noisy_count.__name__ = f"noisy_count_{delay * 1e3:g}ms"
    return noisy_count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="the search's time budget")
    ap.add_argument("--delays", type=float, nargs="*", default=[1.0, 10.0],
                    help="milliseconds a call")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    print(f"privet search on slow per-sample black boxes, budget {a.seconds:g} s, "
          f"true ε ln 2 = {TRUE_EPSILON:.4f}, claimed 0.5")
    head = (f"{'ms/call':>8} {'wall s':>8} {'/budget':>8} {'measured':>9} {'pairs':>7} "
            f"{'screen n':>9} {'fresh n':>8} {'certified':>10} {'verdict'}")
    print(head)
    print("-" * len(head))
    for ms in a.delays:
        mech = privet.from_blackbox(box(ms / 1e3), epsilon=0.5, neighbors=one_differs(1),
                                    domain=privet.Domain(length=3, low=0, high=3, integer=True))
        t0 = time.perf_counter()
        b = privet.search(mech, seed=a.seed, seconds=a.seconds, progress=False)
        wall = time.perf_counter() - t0
        sq = b.details.get("squeezed") or {}
        per_call = 1e3 * sq.get("seconds_per_pair", float("nan")) / 2
        pairs = f"{sq['pairs']}/{sq['of']}" if sq else "—"
        print(f"{ms:8g} {wall:8.1f} {wall / a.seconds:8.2f} {per_call:9.2f} {pairs:>7} "
              f"{sq.get('n_train', 0):9,} {b.details.get('n_confirm') or 0:8,} "
              f"{b.value:10.4f} {b.details.get('verdict', '')[:40]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
