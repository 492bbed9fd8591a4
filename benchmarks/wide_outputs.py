"""A time budget and flat memory on wide outputs: ``privet.search`` on a vectorized histogram
of 100, 1,000 and 10,000 noisy counts (``m(a, n_samples)``, each count plus Lap(2): 0.5-DP
under one_differs(1), claimed 0.5), at privet's default budget of 55 s.

    .venv/bin/python benchmarks/wide_outputs.py                   # widths 100 1000 10000
    .venv/bin/python benchmarks/wide_outputs.py --widths 1000 --seconds 30

Each width runs in a fresh Python process (started the same way for every width, one after
the other), so its peak resident memory is its own. Printed per width: the budget, the wall
time of the ``privet.search`` call and its ratio to the budget, the peak resident memory of
the process, the stage ends (fits, race, certificate), the fresh sample, the certified bound
and the verdict. The float-exact features are on (privet's default for black boxes):
integer counts plus NumPy's Laplace noise are porous in doubles, so the certified bound
exceeds the real-number epsilon (``benchmarks/floating_point.py`` explains why); what this
benchmark measures is time and memory.

Before the wide-output changes (commit 9362a71, measured once on this machine, not re-run
here): width 1,000 took 716 s with a fixed fresh sample of 2^16 pairs and peaked at 16.9 GB
(logistic regression on 16,000 one-hot features of the float-exact codes), and its default
run with the 2^22-pair least fresh sample was stopped after 15 minutes; width 10,000 was
killed by the kernel at 24 GiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
import privet
from privet.neighbors import one_differs

def histogram(a, n_samples):
    a = np.asarray(a, dtype=float)
    return a[None, :] + np.random.laplace(0.0, 2.0, size=(n_samples, a.size))

width, seconds, seed = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
mech = privet.from_vectorized(histogram, epsilon=0.5, neighbors=one_differs(1),
                              domain=privet.Domain(length=width, low=0, high=10, integer=True),
                              name=f"histogram of {width}")
t0 = time.perf_counter()
b = privet.search(mech, seed=seed, seconds=seconds, progress=False)
wall = time.perf_counter() - t0
print(json.dumps({"wall": wall, "value": b.value, "verdict": b.details.get("verdict", ""),
                  "stages": b.details.get("stages"), "n": b.details.get("n_confirm"),
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", type=int, nargs="*", default=[100, 1000, 10_000])
    ap.add_argument("--seconds", type=float, default=55.0, help="the search's time budget")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    print(f"privet search on a vectorized histogram of Lap(2) counts (0.5-DP, claimed 0.5), "
          f"budget {a.seconds:g} s, one process per width")
    head = (f"{'width':>7} {'wall s':>8} {'/budget':>8} {'peak RSS':>9} {'fits s':>7} "
            f"{'race s':>7} {'fresh n':>9} {'certified':>10}  verdict")
    print(head)
    print("-" * len(head))
    worst = 0.0
    for width in a.widths:
        run = subprocess.run([sys.executable, "-c", CHILD, str(width), str(a.seconds),
                              str(a.seed)], capture_output=True, text=True)
        if run.returncode != 0:
            tail = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
            print(f"{width:>7} failed (exit {run.returncode}): {tail}")
            continue
        r = json.loads(run.stdout.strip().splitlines()[-1])
        st = r["stages"] or {}
        worst = max(worst, r["wall"] / a.seconds)
        print(f"{width:>7} {r['wall']:8.1f} {r['wall'] / a.seconds:8.2f} "
              f"{r['rss'] / 2**30:7.2f} G {st.get('fits', float('nan')):7.1f} "
              f"{st.get('race', float('nan')):7.1f} {r['n'] or 0:9,d} {r['value']:10.4g}  "
              f"{r['verdict'][:60]}")
    print(f"longest run: {worst:.2f} x the budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
