"""Implementation attacks on IEEE doubles: porosity (ε = ∞), float sums, library audits.

    .venv/bin/python benchmarks/floating_point.py            # 60 s porosity budgets
    .venv/bin/python benchmarks/floating_point.py --quick    # 10 s budgets, smaller samples
    .venv/bin/python benchmarks/floating_point.py --timing   # also the (optional) timing demo
    .venv/bin/python benchmarks/floating_point.py --quick --only 6   # one section

Prints, with wall-clock and CPU seconds (and the load average, since timings on a shared
machine are noisy):

1. the textbook float Laplace (NumPy, scale 1/ε, ε ∈ {0.1, 1}) on D1 = [0], D2 = [1]: the
   time to a certified ε = ∞ (an output of one input that the other provably cannot
   produce), its double in hex, the seed that replays it (checked by replaying it), the
   fraction of outputs that are holes and the δ lower bound they give, and the same event
   through detect.test_event and search.confirm. Mironov (CCS 2012, Sec. 3) shows the
   holes; he reports ε = ∞, no timings;
2. the same check, in the same budget, on the snapping mechanism, OpenDP's Laplace and
   Gaussian (no porosity expected: outputs checked are printed), and on the other
   samplers (NumPy's ziggurat Gaussian, the textbook inverse CDF, Box-Muller, polar,
   diffprivlib's Laplace and Gaussian);
3. float clamped sums: the neighbouring pair found by privet.floats.sum_sensitivity
   (float64, float32, int32), |f(D1) - f(D2)| against the declared sensitivity, and
   detect/search on the mechanism for the pair;
4. the bounded sums and means of diffprivlib and OpenDP against their own declared
   sensitivities;
5. detect on float features of black boxes (granularity: the coarsest power-of-two grid an
   output lies on);
6. black boxes without a declared sampler (the textbook Laplace written with NumPy, as a
   vectorized function and as a plain one-output function; snapping, a discrete mechanism
   and OpenDP's Laplace behind plain functions): detect and search with the classifier
   attacks' real-number features alone and with the float-exact features, the verdict, the
   certified ε, the fresh samples and the CPU seconds of each row;
7. with --timing (optional, clearly experimental): detect on wall-clock time.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import privet
import privet.mechanisms as lib
from privet import floats
from privet.core.neighbors import all_differ
from privet.implementation import certify_porosity, sensitivity
from privet.mechanisms import float_libs, libs


def clock():
    return time.perf_counter(), time.process_time()


def since(t):
    return f"{time.perf_counter() - t[0]:.2f} s wall, {time.process_time() - t[1]:.2f} s CPU"


def header(text: str) -> None:
    print(f"\n== {text} " + "=" * max(0, 86 - len(text)))


def textbook_laplace(quick: bool, seed: int) -> None:
    header("1. textbook float Laplace (NumPy), D1 = [0], D2 = [1]: certified ε = ∞")
    n = 2_000 if quick else 10_000
    for eps in (1.0, 0.1):
        mech = lib.get("floats.laplace").replace(epsilon=eps)
        t = clock()
        first = floats.porosity(mech, [0.0], [1.0], n=n, seed=seed, first=True)
        took = since(t)
        w = first.witness
        replay = mech.sample(list(w.d2), w.n, seed=w.seed).ravel()[w.index]
        print(f"ε = {eps:g} (scale {1 / eps:g}): {first.verdict} after {first.checked:,} "
              f"output(s), {took}")
        print(f"   witness y = {w.value_hex} ({w.value!r}), {w.reason}; M(D1) would need one "
              f"of {w.candidates:,} generator words, none gives y")
        print(f"   replay: floats.laplace (ε = {eps:g}).sample({list(w.d2)}, {w.n}, "
              f"seed={w.seed})[{w.index}] = {replay.hex()} -> "
              f"{'identical' if replay.hex() == w.value_hex else 'DIFFERENT'}; "
              f"D2's words {w.words}")
        t = clock()
        full = floats.porosity(mech, [0.0], [1.0], n=n, seed=seed)
        print(f"   all {full.checked:,} outputs (both directions): {full.unreachable:,} "
              f"unreachable ({full.unreachable / full.checked:.1%}), {full.undecided} "
              f"undecided; δ ≥ {full.delta_lower:.3f} for every ε (95%); {since(t)}")
        t = clock()
        cert = certify_porosity(mech, first, n=20_000 if quick else 100_000, seed=seed)
        cx, b = cert.detect, cert.bound
        print(f"   detect.test_event on the exact event: {cx.counts[0]:,} vs {cx.counts[1]:,} "
              f"of {cx.n[0]:,}, p = {cx.p_value:.3g}; search.confirm: ε ≥ {b.value:.3g} "
              f"(95%, grows with n); {since(t)}")
        print(f"   paper (Mironov 2012): ε = ∞; privet: ε = ∞ certified in {took}")


def same_budget(quick: bool, seed: int) -> None:
    budget = 10.0 if quick else 60.0
    header(f"2. the same check in the same budget ({budget:g} s each)")
    rows = []
    items = [("floats.snapping", lib.get("floats.snapping"), None),
             ("floats.gaussian (NumPy ziggurat)", lib.get("floats.gaussian"), None),
             ("floats.laplace_inverse_cdf", lib.get("floats.laplace_inverse_cdf"), None),
             ("floats.gaussian_box_muller", lib.get("floats.gaussian_box_muller"), None),
             ("floats.gaussian_polar", lib.get("floats.gaussian_polar"), None)]
    models = float_libs.models()
    for name, mech in float_libs.samplers().items():
        items.append((f"{name} ({mech.source})", mech, models.get(name)))
    for label, mech, model in items:
        t = clock()
        res = floats.porosity(mech, [0.0], [1.0], n=10 ** 7, budget=budget, seed=seed,
                              model=model)
        rows.append((label, res, since(t)))
        print(f"{label}: {res.verdict}; {res.checked:,} outputs checked "
              f"({res.reachable:,} proved reachable, {res.unreachable:,} unreachable, "
              f"{res.undecided:,} undecided) by {res.method}; {since(t)}")


def float_sums(quick: bool, seed: int) -> None:
    header("3. float clamped sums: neighbours that move the sum more than declared")
    for name, length in (("floats.clamped_sum", 1024), ("floats.clamped_sum_f32", 8192),
                         ("floats.int32_sum", 16)):
        t = clock()
        res = sensitivity(lib.get(name), length=length, seed=seed,
                          n_select=20_000 if quick else 50_000,
                          n_final=50_000 if quick else 200_000,
                          iterations=100 if quick else 400)
        print(f"{name} (at most {length:,} records, bounds {res.bounds}, declared "
              f"{res.declared:g}): |f(D1) - f(D2)| = {res.difference:.17g}, excess "
              f"{res.excess:.3g} ({res.family}; {res.evaluated:,} datasets); {since(t)}")
        if res.detect is not None:
            det = res.detect
            cx = det.counterexample
            print(f"   detect on the pair: {det.verdict}" +
                  (f", event {cx.event}, counts {cx.counts[0]:,} vs {cx.counts[1]:,}"
                   if cx else ""))
        if res.bound is not None:
            print(f"   search.confirm: ε ≥ {res.bound.value:.3g} with confidence 0.95 "
                  f"(claimed {res.claimed_epsilon:g}; expected ε·ratio = "
                  f"{res.claimed_epsilon * res.ratio:.3g})")


def library_sums(quick: bool, seed: int) -> None:
    length = 256 if quick else 1024
    header(f"4. library bounded sums and means ({length:,} records in [0, 1], replace one)")
    for name, a in float_libs.aggregates(length=length).items():
        t = clock()
        res = floats.sum_sensitivity(a.function, bounds=a.bounds, length=a.length,
                                     neighbors=a.neighbors, declared=a.declared,
                                     dtype=a.dtype, iterations=50 if quick else 200,
                                     seed=seed, name=name)
        print(f"{name} ({a.source}; {a.description}): declared {a.declared:.17g} -> "
              f"{res.verdict}; {since(t)}")


def features(quick: bool, seed: int) -> None:
    header("5. detect on the granularity of the outputs (black boxes), D = [0] vs [1]")
    n_sel, n_fin = (10_000, 20_000) if quick else (20_000, 100_000)
    items = [("floats.laplace", lib.get("floats.laplace")),
             ("floats.snapping", lib.get("floats.snapping"))]
    items += list(float_libs.samplers().items())
    for name, mech in items:
        t = clock()
        res = privet.detect(floats.view(mech, "granularity"),
                            inputs=[([0.0], [1.0]), ([1.0], [0.0])], n_select=n_sel,
                            n_final=n_fin, seed=seed)
        cx = res.counterexample
        print(f"{name}: {res.verdict}" + (f", event {cx.event}: {cx.counts[0]:,} vs "
                                          f"{cx.counts[1]:,}" if cx else "") + f"; {since(t)}")


def plain_laplace(scale: float):
    """The textbook float Laplace as a user writes it, without privet's noise API: one
    vectorized NumPy call, no declared sampler."""
    def m(a, n, rng=None):
        return float(a[0]) + rng.laplace(0.0, scale, size=n)

    m.__name__ = f"laplace_scale_{scale:g}"
    return m


def plain_laplace_one(x, rng=None):
    """The same, one output per call (a plain black-box function)."""
    return float(x[0]) + rng.laplace(0.0, 1.0)


class _Sampled:
    """A native library mechanism hidden behind a plain vectorized function (picklable)."""

    def __init__(self, mech):
        self.mech = mech

    def __call__(self, a, n, rng=None):
        seed = int(rng.integers(2**63))
        return np.asarray(self.mech.sample(list(a), n, seed=seed), float).ravel()


def _boxed(mech, name: str):
    return privet.from_vectorized(_Sampled(mech), epsilon=mech.epsilon, name=name,
                                  neighbors=mech.neighbors, domain=privet.Domain(
                                      length=1, low=-10, high=10,
                                      integer=mech.domain.integer))


def black_boxes(quick: bool, seed: int) -> None:
    n_sel, n_fin = (10_000, 50_000) if quick else (20_000, 100_000)
    n_conf = 1 << (18 if quick else 20)
    # one search budget for every row (OpenDP samples at about 40 µs per output, so the
    # default black-box sizes, up to 2^22 selection samples per finalist, would take hours)
    budget = {"iterations": 4, "n_cap": 1 << 12, "n_select": 1 << (16 if quick else 18),
              "finalists": 4, "n_confirm": n_conf}
    header("6. classifier attacks with float-exact features on black boxes (no declared "
           "sampler)")
    print(f"detect: fixed sizes, {n_sel:,} selection and {n_fin:,} final samples per input, "
          "D = [0] vs [1] both ways, α = 0.05; search: pairs and events found by the attack "
          f"(4 random pairs and 4 local moves, {budget['n_cap']:,} samples per screened pair, "
          f"4 finalists, at most {budget['n_select']:,} selection samples each), then "
          f"{n_conf:,} fresh samples per input certify ε ≥ L (90% confidence). "
          "'real': the real-number features alone (float_features='off'); 'float': "
          "granularity (exponent and ulp-grid position), low 4 mantissa bits, residue against "
          "the inputs' lattice ('auto' when the outputs are fractional doubles, 'all' to force "
          "them).")
    dom = privet.Domain(length=1, low=-10, high=10)
    rows = []
    for eps in (1.0, 0.1):
        rows.append((f"textbook Laplace, ε = {eps:g} (from_vectorized)",
                     privet.from_vectorized(plain_laplace(1 / eps), epsilon=eps,
                                            neighbors=all_differ(1), domain=dom),
                     ("off", "auto")))
    rows.append(("textbook Laplace, ε = 1 (plain function, one output per call)",
                 privet.from_blackbox(plain_laplace_one, epsilon=1.0, neighbors=all_differ(1),
                                      domain=dom), ("auto",)))
    rows.append(("snapping, ε = 1 (Λ = 2: integer outputs)",
                 _boxed(lib.get("floats.snapping"), "snapping_eps1"), ("auto", "all")))
    rows.append(("snapping, ε = 4 (Λ = 1/2)",
                 _boxed(lib.get("floats.snapping").replace(epsilon=4.0), "snapping_eps4"),
                 ("auto",)))
    rows.append(("geometric x + Geo, ε = 1 (integers)",
                 _boxed(lib.get("floats.geometric"), "geometric"), ("auto", "all")))
    try:
        od = libs.get("opendp.laplace")
        rows.append((f"OpenDP make_laplace, ε = {od.epsilon:g}", od, ("auto",)))
    except Exception as err:  # not installed: say so
        print(f"OpenDP's Laplace: not checked ({err})")
    print(f"{'mechanism':<58} {'features':<8} {'detect':<34} {'search: certified ε':<26} "
          f"{'samples':>9} {'CPU s':>7}")
    for label, mech, choices in rows:
        for which in choices:
            t = clock()
            det = privet.detect(mech, inputs=[([0.0], [1.0]), ([1.0], [0.0])],
                                n_select=n_sel, n_final=n_fin, seed=seed, sequential=False,
                                float_features=which)
            b = privet.search(mech, seed=seed, float_features=which, **budget)
            cpu = time.process_time() - t[1]
            feat = {"off": "real", "auto": "float", "all": "float*"}[which]
            dv = det.verdict if len(det.verdict) <= 34 else det.verdict[:33] + "…"
            cert = (f"ε ≥ {b.value:.4g} (90%)" + (" > claim" if b.violates else "")
                    if b.witness is not None else "none")
            print(f"{label:<58} {feat:<8} {dv:<34} {cert:<26} {n_conf:>9,} {cpu:>7.1f}")
            ev = b.witness.event if b.witness is not None and b.violates else None
            cx = det.counterexample
            if cx is not None:
                print(f"{'':<10}detect's event: {cx.event} ({cx.counts[0]:,} vs "
                      f"{cx.counts[1]:,} of {cx.n[0]:,})")
            if ev is not None:
                w = b.witness
                print(f"{'':<10}search's witness: D1 = {list(w.d1)}, D2 = {list(w.d2)}, event "
                      f"{ev}; {w.counts[0]:,} vs {w.counts[1]:,} of {w.n[0]:,}")
    print("(* 'all' forces the float features on outputs that 'auto' leaves alone. Every ε "
          "above is a finite bound with its confidence; ε = ∞ is certified only by the exact "
          "reachability check of section 1.)")


def _busy(x, rng=None):
    """A discrete sampler with a data-dependent loop: one unit of work per unit of x."""
    acc = 0
    for _ in range(int(abs(x[0])) * 20_000):
        acc += 1
    return float(x[0]) + float(rng.geometric(0.5) - rng.geometric(0.5))


def timing(seed: int) -> None:
    header("7. (optional, experimental) wall-clock time as part of the output")
    mech = floats.timed(_busy, epsilon=1.0, unit_ns=100_000, with_output=False)
    t = clock()
    res = privet.detect(mech, inputs=[([0.0], [1.0])], n_select=2_000, n_final=4_000,
                        seed=seed)
    print(f"loop of 20,000·|x| steps, time in 0.1 ms units: {res.verdict}; {since(t)} "
          "(depends on the machine and its load; never replayed by seed)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default=None, metavar="N,M",
                    help="run only these sections (numbers 1-6, comma-separated)")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; numpy "
          f"{np.__version__}; diffprivlib {_version('diffprivlib')}, OpenDP "
          f"{_version('opendp')}")
    t = clock()
    sections = (textbook_laplace, same_budget, float_sums, library_sums, features,
                black_boxes)
    chosen = range(1, 7) if args.only is None else {int(v) for v in args.only.split(",")}
    for i, section in enumerate(sections, 1):
        if i in chosen:
            section(args.quick, args.seed)
    if args.timing:
        timing(args.seed)
    print(f"\ntotal {since(t)}; load average {os.getloadavg()[0]:.2f}")


def _version(library: str) -> str:
    try:
        return libs.version(library)
    except Exception:
        return "not installed"


if __name__ == "__main__":
    main()
