"""Write ``benchmarks/out/report_demo.html`` from a few real runs and time the rendering.

Runs: ``privet.detect`` on StatDP's histogram with ε0 = 0.7 (its true ε is 1/0.7: a
counterexample with the event's histograms and a p-value curve, StatDP Fig. 1 style),
``privet.detect`` on iSVT1 (a categorical event), ``privet.search`` on DP-Finder's
noisy max (a certified lower bound), ``privet.exact`` on randomized response (exact ε and
the witness pair's exact distributions) and its (α, β)-accuracy. Prints the page's size and
the render time next to the engines' time.

    /work/venv/bin/python benchmarks/report_demo.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import privet
from privet import mechanisms
from privet.exact import accuracy
from privet.report.html import to_html, write_html

OUT = Path(__file__).resolve().parent / "out" / "report_demo.html"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller samples, no search run")
    ap.add_argument("--out", default=str(OUT))
    opts = ap.parse_args()
    n_select, n_final = (5_000, 20_000) if opts.quick else (20_000, 100_000)
    t0 = time.perf_counter()
    results = [
        privet.detect(mechanisms.get("statdp.histogram_eps"), n_select=n_select,
                      n_final=n_final, seed=1, test_epsilons=[0.4, 0.7, 1.0, 1.3, 1.6, 2.0]),
        privet.detect(mechanisms.get("statdp.isvt1"), n_select=n_select, n_final=n_final,
                      seed=1),
    ]
    if not opts.quick:
        results.append(privet.search(mechanisms.get("dpfinder.noisy_max"), iterations=1,
                                     seed=0))
    results.append(privet.exact(mechanisms.get("wmc.randomized_response"), length=3,
                                fractions=True))
    results.append(accuracy(mechanisms.get("wmc.rr_count"), 1, length=3,
                                         fractions=True))
    engines = time.perf_counter() - t0
    t1 = time.perf_counter()
    fragment = to_html(results)
    render = time.perf_counter() - t1
    t2 = time.perf_counter()
    path = write_html(opts.out, results, title="privet report demo")
    write = time.perf_counter() - t2
    size = path.stat().st_size
    print(f"engines: {engines:.2f} s for {len(results)} results")
    print(f"to_html: {render:.2f} s ({len(fragment):,} characters, "
          f"{fragment.count('<svg')} inline SVG plots)")
    print(f"write_html: {write:.2f} s -> {path} ({size / 1024:.0f} KiB)")
    print("paper figures: none to compare (issue 8 asks for the report, not a number)")


if __name__ == "__main__":
    main()
