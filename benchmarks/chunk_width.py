"""Chunk sizes for wide outputs (issue 13): fixed chunks against chunks sized by width.

privet keeps a chunk's float64 output matrix within :data:`privet.execution.CHUNK_BYTES`
(16 MiB; :func:`privet.execution.chunk_for`): above glibc's largest mmap threshold
(32 MiB) every temporary of the mechanism is mapped and zeroed afresh in every chunk. This
script draws the same pairs of DP-Sniper's mechanisms through one process pool of as many
workers as cores, both ways, interleaved, ``--repeat`` times each:

* **white paired** -- the white box's paired certificate chunks (``search._paired_chunk``)
  of 250,000 pairs (the fixed size before) against :func:`privet.search.confirm_chunk`'s;
* **black runs** -- the vectorized black box's runs on both inputs through
  :func:`privet.execution.map_reduce`, chunks of 200,000 against ``chunk=None`` (sized by
  width, measured by one run of two samples);

each with a linear event on the outputs. It prints pairs per second and their ratio, and
then the time of privet's feature map (a logistic attack's features) on 250,000 integer
outputs against the same outputs as floats (best of 7): integer outputs are converted as
their columns are transposed.

    .venv/bin/python benchmarks/chunk_width.py [--pairs N] [--repeat R] [--only NAMES]
"""

from __future__ import annotations

import os
import time

import numpy as np
from worker_threads import _pair, arguments  # the same pairs, event and measurement
from worker_threads import measure as pairs_per_second

from privet.attacks.features import fit_features
from privet.core.mechanism import as_mechanism
from privet.execution import DEFAULT_CHUNK, ProcessPool
from privet.mechanisms import dpsniper as d

FIXED_WHITE = 250_000  # the paired confirmation's chunk before sizes followed the width


def measure(name: str, pool: ProcessPool, pairs: int, sized: bool) -> tuple[float, float]:
    """(white paired, black runs) pairs per second of ``pairs`` pairs through ``pool``,
    in fixed chunks or (``sized``) in chunks sized by the output's width."""
    if sized:
        return pairs_per_second(name, pool, pairs, None, None)
    return pairs_per_second(name, pool, pairs, FIXED_WHITE, DEFAULT_CHUNK)


def features(name: str, n: int = 250_000) -> tuple[float, float]:
    """Milliseconds of a feature map on ``n`` integer outputs and on the same as floats."""
    white = as_mechanism(d.get_local(name))
    x, _ = _pair(name)
    out = np.asarray(white.sample(x, n, seed=1))
    fmap = fit_features(out[:20_000])
    best = {}
    for label, arr in (("int", out), ("float", out.astype(float))):
        times = []
        for _ in range(7):
            tick = time.perf_counter()
            fmap.transform(arr)
            times.append(time.perf_counter() - tick)
        best[label] = 1e3 * min(times)
    return best["int"], best["float"]


def main(argv: list[str] | None = None) -> int:
    a = arguments(__doc__, ["one_time_rappor", "rappor", "prefix_sum", "svt34_parallel",
                            "report_noisy_max3"], argv)
    cores = os.cpu_count() or 1
    pool = ProcessPool(cores)
    try:
        measure("dpsniper.laplace", pool, 500_000, True)  # start the workers before timing
        print(f"{cores} workers on {cores} cores, {a.pairs:,} pairs per measurement, "
              f"{a.repeat} interleaved repeats; pairs per second (median), sized against "
              f"fixed chunks ({FIXED_WHITE:,} white, {DEFAULT_CHUNK:,} black)")
        for short in a.only:
            name = f"dpsniper.{short}"
            got: dict[bool, list] = {True: [], False: []}
            for _ in range(a.repeat):
                for sized in (False, True):
                    got[sized].append(measure(name, pool, a.pairs, sized))
            new, old = (np.median(np.array(got[s]), axis=0) for s in (True, False))
            ms_int, ms_float = features(name)
            print(f"  {short:18s} white paired {new[0]:.3g} vs {old[0]:.3g} "
                  f"({new[0] / old[0]:.2f}x)   black runs {new[1]:.3g} vs {old[1]:.3g} "
                  f"({new[1] / old[1]:.2f}x)   features: integers {ms_int:.1f} ms, "
                  f"floats {ms_float:.1f} ms", flush=True)
    finally:
        pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
