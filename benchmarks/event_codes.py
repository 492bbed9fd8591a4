"""Evaluating a discrete event on black-box outputs: the row codes of
:func:`privet.core.noise.value_codes` (issue 13).

A classifier attack's table score on outputs with few values (sparse vector's True, False
and ABORTED) codes every output row as one integer and looks it up; the fresh sample of a
black-box certificate evaluates it on every pair. Measured on 2^20 outputs of DP-Sniper's
SVT4 (10 answers each), best of 7, interleaved in one process:

* **bytes** -- ``value_codes`` today: one byte per digit, each equality mask reused in place,
  one matrix-vector product;
* **doubles** -- the formula it replaced (commit b269aa8): a float64 digit matrix built by
  one multiply-add per value.

Then the share of the certificate's time the event takes: drawing the same 2^20 outputs
through ``Mechanism.sample`` against evaluating the event on them.

    .venv/bin/python benchmarks/event_codes.py [--n N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privet.core.noise import value_codes
from privet.mechanisms import dpsniper as d


def doubles(rows: np.ndarray, values) -> np.ndarray:
    """The replaced formula (for comparison only)."""
    digits = np.zeros(rows.shape)
    for k, v in enumerate(values):
        digits += (rows == v) * (k + 1.0)
    weights = float(len(values) + 1) ** np.arange(rows.shape[1] - 1, -1, -1)
    return (digits @ weights).astype(np.int64)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="output rows")
    ap.add_argument("--repeat", type=int, default=7, help="timings per side (best is kept)")
    a = ap.parse_args(argv)
    mech = d.vectorized("dpsniper.svt4")
    x = np.r_[np.zeros(9), 1.0]
    tick = time.perf_counter()
    rows = mech.sample(x, a.n, seed=1)
    drawn = time.perf_counter() - tick
    values = np.unique(rows)
    if not np.array_equal(value_codes(rows, values), doubles(rows, values)):
        raise SystemExit("the two codings differ")
    best = {"bytes": np.inf, "doubles": np.inf}
    for _ in range(a.repeat):  # interleaved: one of each per round
        for name, fn in (("bytes", value_codes), ("doubles", doubles)):
            t = time.perf_counter()
            fn(rows, values)
            best[name] = min(best[name], time.perf_counter() - t)
    print(f"{a.n:,} rows of {rows.shape[1]} entries ({len(values)} values), best of {a.repeat}:")
    print(f"  bytes (value_codes): {best['bytes'] * 1e3:7.1f} ms")
    print(f"  doubles (replaced):  {best['doubles'] * 1e3:7.1f} ms")
    print(f"  ratio doubles / bytes: {best['doubles'] / best['bytes']:.2f}")
    print(f"  drawing the rows (Mechanism.sample, one call): {drawn * 1e3:.0f} ms; coding them "
          f"was {best['doubles'] / (drawn + best['doubles']):.0%} of draw + code, now "
          f"{best['bytes'] / (drawn + best['bytes']):.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
