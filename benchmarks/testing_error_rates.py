"""How often privet.testing's assertions are wrong, measured over seeds (issue 8, item 3).

``assert_dp`` should fail on a mechanism that really is ε-DP with probability at most α
(its documented false-failure rate); ``assert_not_dp`` should pass on a broken one (its
power). This script runs both over many seeds and prints the observed rates with 95%
Clopper–Pearson intervals next to α.

    python benchmarks/testing_error_rates.py [--quick] [--seeds N] [--alpha A]
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table
from scipy.stats import beta

from privet import mechanisms
from privet.testing import assert_dp

CORRECT = ["statdp.noisy_max_v1a", "statdp.histogram", "statdp.svt", "dpfinder.noisy_max"]
BROKEN = ["statdp.noisy_max_v1b", "statdp.histogram_eps", "statdp.isvt1", "statdp.isvt3"]


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    a = 1 - level
    lo = 0.0 if k == 0 else float(beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def failures(name: str, seeds: int, alpha: float, sizes: dict) -> int:
    mech = mechanisms.get(name)
    count = 0
    for s in range(seeds):
        try:
            assert_dp(mech, alpha=alpha, seed=1000 + s, **sizes)
        except AssertionError:
            count += 1
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="40 seeds instead of 200")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--alpha", type=float, default=0.05)
    opts = ap.parse_args()
    seeds = opts.seeds or (40 if opts.quick else 200)
    sizes = dict(n_select=20_000, n_final=100_000)
    console = Console(width=140)
    t = Table(title=f"privet.testing over {seeds} seeds (α = {opts.alpha}, "
                    f"n_select {sizes['n_select']:,}, n_final {sizes['n_final']:,})")
    for col in ("mechanism", "truth", "assert_dp failed", "rate", "95% interval",
                "what it should be", "s"):
        t.add_column(col)
    for group, names in (("ε-DP", CORRECT), ("broken", BROKEN)):
        for name in names:
            start = time.perf_counter()
            k = failures(name, seeds, opts.alpha, sizes)
            lo, hi = clopper_pearson(k, seeds)
            should = f"≤ α = {opts.alpha}" if group == "ε-DP" else "near 1 (power)"
            t.add_row(name, group, f"{k}/{seeds}", f"{k / seeds:.3f}", f"[{lo:.3f}, {hi:.3f}]",
                      should, f"{time.perf_counter() - start:.0f}")
            console.print(f"{name}: {k}/{seeds}")
    console.print(t)
    console.print("A false failure of assert_dp is a rejection of a true claim: StatDP's final "
                  "test is a one-sided exact binomial test on fresh samples, so its rate is at "
                  "most α (conservative: the selected event is rarely the worst case).")


if __name__ == "__main__":
    main()
