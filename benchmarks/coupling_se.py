"""How much common random numbers sharpen an event's estimated ratio on a seeded black box.

    .venv/bin/python benchmarks/coupling_se.py                  # svt2's best answer, 2^20 pairs
    .venv/bin/python benchmarks/coupling_se.py --pairs 18 --seeds 5

On DP-Sniper's svt2 as a vectorized black box (``privet.mechanisms.dpsniper``), for the pair
(0, ..., 0, 2) against (1, ..., 1) and the answer "nine FALSE, then True" (probability about
0.0065, the event its black-box searches certify), it draws 2^k pairs of outputs per seed
twice: coupled (both inputs run with the same seed, as the search trains and selects on a
seeded box) and independent (as DP-Sniper samples). Printed per seed: the pair counts
(n11, n10, n01), the estimated ln(k1/k2) and its standard error (the search's own,
``privet.attacks.witness.spread``: sqrt((n10 + n01) / (k1 k2)) for coupled pairs, the
binomial sqrt(1/k1 + 1/k2) for independent ones); then, over the seeds, the standard
deviation of the estimates themselves, which checks the formula.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np


def main(argv: list[str] | None = None) -> int:
    from privet.attacks.sampling import COUPLED, draw_pair
    from privet.attacks.witness import spread
    from privet.mechanisms import dpsniper as d

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=20, metavar="K", help="2^K pairs per seed")
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args(argv)
    mech = d.vectorized("dpsniper.svt2")
    x, x2 = [0] * 9 + [2], [1] * 10
    answer = np.array([0] * 9 + [1], dtype=float)
    n = 1 << a.pairs
    print(f"svt2 as a vectorized black box, x = {x}, x' = {x2}, event: ω = {answer.tolist()}; "
          f"2^{a.pairs} pairs per seed")
    for paired, label in ((COUPLED, "coupled"), (False, "independent")):
        logs, ses = [], []
        for s in range(a.seeds):
            o1, o2 = draw_pair(mech, x, x2, n, None, seed=s, paired=paired)
            in1, in2 = np.all(o1 == answer, axis=1), np.all(o2 == answer, axis=1)
            counts = (int(np.sum(in1 & in2)), int(np.sum(in1 & ~in2)),
                      int(np.sum(~in1 & in2)))
            k1, k2 = counts[0] + counts[1], counts[0] + counts[2]
            logs.append(float(np.log(k1 / k2)))
            ses.append(spread(counts, n, paired == COUPLED))
            print(f"  {label:11s} seed {s}: (n11, n10, n01) = {counts}, ln(k1/k2) = "
                  f"{logs[-1]:.4f}, standard error {ses[-1]:.4f}")
        sd = statistics.stdev(logs) if len(logs) > 1 else float("nan")
        print(f"  {label:11s} median standard error {statistics.median(ses):.4f}; standard "
              f"deviation of the {len(logs)} estimates {sd:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
