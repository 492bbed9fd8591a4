"""Dask executor: a real LocalCluster on loopback gives the same numbers as in-process.

Every comparison is exact equality for the same seed: chunk ``i`` draws from
``chunk_rng(seed, i)`` wherever it runs, and chunk results are combined in chunk order.
"""

from __future__ import annotations

import json
import socket
import textwrap
import time

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="the Dask executor needs dask[distributed] (pip install privet[dist])"
)

import privet  # noqa: E402
from privet import mechanisms  # noqa: E402
from privet.cli import main  # noqa: E402
from privet.core.errors import PrivetError  # noqa: E402
from privet.core.events import Interval  # noqa: E402
from privet.execution import (  # noqa: E402
    DaskExecutor,
    InProcess,
    _ByValue,
    _portable,
    collect,
    get_executor,
    map_reduce,
)

SEED = 20_261_126


@privet.mechanism(epsilon=1.0)
def noisy_count(noise, x, *, epsilon):
    return np.round(x.sum() + noise.laplace(1 / epsilon))


def histogram(out):
    return np.bincount(np.clip(out, 0, 30).astype(int), minlength=31)


def positive_count(out):  # module level: plain pickle can send this task by reference
    return int(np.count_nonzero(out > 0))


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=50) as lc:
        yield lc


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c


def _within(seconds: float, fn, *args, **kwargs):
    """``fn(...)``, failing (not hanging) when a worker stalls on a task it cannot unpickle."""
    import concurrent.futures

    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(fn, *args, **kwargs).result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"no result within {seconds} s: did the task reach the workers?")
    finally:
        pool.shutdown(wait=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _strip_timing(obj):
    """A result's JSON without wall-clock fields (the only thing an executor may change)."""
    if isinstance(obj, dict):
        return {k: _strip_timing(v) for k, v in obj.items()
                if "seconds" not in k and k != "timing"}
    if isinstance(obj, list):
        return [_strip_timing(v) for v in obj]
    return obj


def test_map_reduce_histograms_equal(client):
    kw = dict(seed=SEED, chunk=6_000)
    a = map_reduce(noisy_count, [3.0, 4.0, 5.0], 40_000, histogram, executor=InProcess(), **kw)
    b = map_reduce(noisy_count, [3.0, 4.0, 5.0], 40_000, histogram, executor=client, **kw)
    assert a.n == b.n == 40_000 and not b.interrupted
    assert np.array_equal(a.value, b.value)
    assert client.status == "running"  # a Client the user passes is not closed by privet


def test_library_mechanism_counts_equal(client):
    mech = mechanisms.get("statdp.noisy_max_v1a")
    x = [1.0, 1.0, 1.0, 1.0, 1.0]
    a = map_reduce(mech, x, 30_000, lambda o: np.bincount(o.astype(int), minlength=5),
                   seed=7, chunk=4_000, executor="inprocess")
    b = map_reduce(mech, x, 30_000, lambda o: np.bincount(o.astype(int), minlength=5),
                   seed=7, chunk=4_000, executor=client)
    assert np.array_equal(a.value, b.value) and a.value.sum() == 30_000


def test_collect_outputs_equal(client):
    mech = mechanisms.get("dpfinder.sum")
    x = [0.0, 0.5, -0.5, 1.0]
    a = collect(mech, x, 9_000, seed=SEED, chunk=2_500)
    b = collect(mech, x, 9_000, seed=SEED, chunk=2_500, executor=client)
    assert a.shape == b.shape and np.array_equal(a, b)


def test_detect_equal(client):
    mech = mechanisms.get("statdp.noisy_max_v1a")
    kw = dict(inputs=[([1.0, 1.0, 1.0], [0.0, 2.0, 2.0])], args={}, n_select=4_000,
              n_final=8_000, seed=11, test_epsilons=[0.5, 1.0])
    a = privet.detect(mech, executor="inprocess", **kw)
    b = privet.detect(mech, executor=client, **kw)
    assert a.p_value == b.p_value
    assert [c.counts for c in a.candidates] == [c.counts for c in b.candidates]
    assert _strip_timing(json.loads(privet.core.results.to_json(a))) == \
        _strip_timing(json.loads(privet.core.results.to_json(b)))
    assert client.status == "running"


def test_pvalue_curve_and_confirm_equal(client):
    from privet.detect import pvalue_curve
    from privet.search import confirm

    mech = mechanisms.get("statdp.noisy_max_v1a")
    kw = dict(inputs=[([1.0, 1.0, 1.0], [0.0, 2.0, 2.0])], args={}, n_select=3_000,
              n_final=5_000, seed=5)
    a = pvalue_curve(mech, [0.5, 1.5], **kw)
    b = pvalue_curve(mech, [0.5, 1.5], executor=client, **kw)
    assert a.p_values == b.p_values
    summ = mechanisms.get("dpfinder.sum")
    event = Interval(0.5, np.inf, "coord", 0)
    for certify in ("paired", "marginal"):
        ca = confirm(summ, [0.0] * 4, [1.0, 0, 0, 0], event, n=300_000, seed=3,
                     certify=certify)
        cb = confirm(summ, [0.0] * 4, [1.0, 0, 0, 0], event, n=300_000, seed=3,
                     certify=certify, executor=client)
        assert ca["counts"] == cb["counts"] and ca["value"] == cb["value"]


def test_cli_address_matches_inprocess(cluster, capsys):
    addr = cluster.scheduler_address.removeprefix("tcp://")
    argv = ["detect", "statdp.noisy_max_v1a", "--n-select", "3000", "--n-final", "6000",
            "--seed", "4", "--json"]
    code_a = main(argv)
    out_a = capsys.readouterr().out
    code_b = main(argv + ["--executor", f"dask://{addr}"])
    out_b = capsys.readouterr().out
    assert code_a == code_b
    assert _strip_timing(json.loads(out_a)) == _strip_timing(json.loads(out_b))


def test_user_file_mechanism_travels_by_value(cluster, client, tmp_path, capsys):
    path = tmp_path / "my_mech.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        import privet

        SHIFT = 2.0

        def shifted(v):  # a helper the workers must receive too
            return np.floor(v + SHIFT)

        @privet.mechanism(epsilon=0.5)
        def my_count(noise, x, *, epsilon):
            return shifted(x.sum() + noise.laplace(1 / epsilon))
    """))
    from privet.cli_support import load_object

    mech = load_object(f"{path}:my_count")
    assert mech.fn.__module__.startswith("_privet_user_")
    # pickled by reference it would stall the workers (they cannot import the module)
    assert isinstance(_portable(mech), _ByValue)
    a = map_reduce(mech, [4.0], 20_000, histogram, seed=SEED, chunk=3_000)
    b = _within(30, map_reduce, mech, [4.0], 20_000, histogram, seed=SEED, chunk=3_000,
                executor=client)
    assert np.array_equal(a.value, b.value)
    addr = cluster.scheduler_address.removeprefix("tcp://")
    argv = ["sample", f"{path}:my_count", "-x", "4", "-n", "5000", "--seed", "9", "--json"]
    assert main(argv) == 0
    out_a = capsys.readouterr().out
    assert main(argv + ["--executor", f"dask://{addr}"]) == 0
    assert json.loads(out_a) == json.loads(capsys.readouterr().out)


def test_user_file_black_box_travels_by_value(client, tmp_path):
    path = tmp_path / "my_box.py"
    path.write_text(textwrap.dedent("""
        import numpy as np

        def noise(rng):  # a helper: plain pickle would send it by reference
            return rng.laplace(scale=0.5)

        def leaky_sum(x, rng):
            return float(np.sum(x) + noise(rng))
    """))
    from privet.cli_support import load_mechanism

    mech = load_mechanism(f"{path}:leaky_sum", epsilon=1.0)
    assert mech.kind == "blackbox"

    a = map_reduce(mech, [0.0, 0.0], 6_000, positive_count, seed=SEED, chunk=1_000,
                   executor="inprocess")
    b = _within(30, map_reduce, mech, [0.0, 0.0], 6_000, positive_count, seed=SEED,
                chunk=1_000, executor=client)
    assert a.value == b.value and b.n == 6_000


def first_outputs(out):  # a list, so that chunks combine into the list of their firsts
    return [float(np.ravel(out)[0])]


def test_a_generator_at_the_top_of_a_user_file_draws_afresh_in_every_chunk(client, tmp_path):
    # the function travels by value, and its module's generator with it, in the state it
    # had when each task was pickled: every chunk drew the same numbers (six chunks, one
    # first output), so a certificate's "independent" sample was one chunk six times over
    path = tmp_path / "own_rng.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        from random import random

        RNG = np.random.default_rng(7)

        class Box:
            rng = np.random.RandomState(7)  # a class attribute travels too

        def box(a, n_samples):
            return np.asarray(a, dtype=float)[0] + RNG.laplace(size=n_samples)

        def legacy(a, n_samples):
            return np.asarray(a, dtype=float)[0] + Box.rng.laplace(size=n_samples)

        def stdlib(a, n_samples):
            return np.asarray(a, dtype=float)[0] + np.array([random() for _ in
                                                              range(n_samples)])
    """))
    from privet.core.loading import load_object

    for name in ("box", "legacy", "stdlib"):
        mech = privet.from_vectorized(load_object(f"{path}:{name}"), epsilon=1.0, name=name)
        run = _within(30, map_reduce, mech, [0.0], 6_000, first_outputs, seed=SEED,
                      chunk=1_000, executor=client)
        assert len(set(run.value)) == 6, (name, run.value)
        again = _within(30, map_reduce, mech, [0.0], 6_000, first_outputs, seed=SEED,
                        chunk=1_000, executor=client)
        assert again.value == run.value, name  # from each task's own seed and index


def test_a_generator_of_a_script_draws_afresh_in_every_chunk(client):
    # a function of __main__ (a script or a notebook) travels by value as well
    scope = {"__name__": "__main__", "np": np}
    exec(textwrap.dedent("""
        RNG = np.random.default_rng(7)

        def box(a, n_samples):
            return np.asarray(a, dtype=float)[0] + RNG.laplace(size=n_samples)
    """), scope)
    mech = privet.from_vectorized(scope["box"], epsilon=1.0, name="script box")
    run = _within(30, map_reduce, mech, [0.0], 6_000, first_outputs, seed=SEED, chunk=1_000,
                  executor=client)
    assert len(set(run.value)) == 6, run.value


def test_a_global_generator_box_is_refused_on_workers_of_several_threads():
    # privet seeds NumPy's global generator before each chunk of such a box; two threads of
    # one worker would draw from it at once, and their chunks would share numbers
    box = privet.from_vectorized(lambda a, n: a[0] + np.random.laplace(size=n), epsilon=1.0,
                                 name="global box")
    own = privet.from_vectorized(lambda a, n, rng: a[0] + rng.laplace(size=n), epsilon=1.0,
                                 name="own box")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None, silence_logs=50) as lc, \
            distributed.Client(lc) as c:
        with pytest.raises(PrivetError, match="--nthreads 1"):
            map_reduce(box, [0.0], 2_000, positive_count, seed=SEED, chunk=1_000, executor=c)
        got = map_reduce(own, [0.0], 2_000, positive_count, seed=SEED, chunk=1_000,
                         executor=c)
        assert got.n == 2_000


def test_ctrl_c_keeps_prefix_and_cancels(client):
    calls = {"k": 0}

    def progress(k):
        calls["k"] += 1
        if calls["k"] == 2:
            raise KeyboardInterrupt

    full = map_reduce(noisy_count, [2.0], 60_000, histogram, seed=1, chunk=5_000)
    part = map_reduce(noisy_count, [2.0], 60_000, histogram, seed=1, chunk=5_000,
                      executor=client, progress=progress)
    assert part.interrupted and part.n == 10_000 and part.value.sum() == 10_000
    first_two = map_reduce(noisy_count, [2.0], 10_000, histogram, seed=1, chunk=5_000)
    assert np.array_equal(part.value, first_two.value)
    assert not np.array_equal(part.value, full.value)
    deadline = time.monotonic() + 10
    while client.futures and time.monotonic() < deadline:  # cancellation is asynchronous
        time.sleep(0.05)
    assert not client.futures  # the 10 outstanding chunks were cancelled and released


def test_unreachable_address_is_one_sentence(capsys):
    port = _free_port()
    t0 = time.monotonic()
    with pytest.raises(PrivetError, match=rf"cannot reach the Dask scheduler at "
                                          rf"127\.0\.0\.1:{port} \(connection refused\)"):
        get_executor(f"dask://127.0.0.1:{port}")
    assert time.monotonic() - t0 < 10  # a refused connection does not wait for the timeout
    code = main(["sample", "statdp.noisy_max_v1a", "-x", "1,1,1", "-n", "100",
                 "--executor", f"dask://127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "start one with `dask scheduler` or check the address." in err


def test_bad_specs_are_one_sentence():
    with pytest.raises(PrivetError, match="unknown executor"):
        get_executor("daks")
    with pytest.raises(PrivetError, match="cannot read"):
        get_executor("dask://:notaport")
    with pytest.raises(PrivetError, match="cannot use"):
        DaskExecutor(42)


def test_synth_verification_equal(client):
    from privet.synth import sketch
    from privet.synth.examples import fix_params, internal_tester
    from privet.synth.findexpr import verify
    from privet.synth.grammar import parse_expr

    @sketch(holes=("η",), neighbors=privet.neighbors.one_differs(1), textbook=[("1/ε",)])
    def hist(noise, q, *, epsilon):
        return np.broadcast_to(q, (noise.size, q.shape[0])) + noise.hole("η", q.shape)

    settings = fix_params(hist)
    exprs = [parse_expr("1/ε", hist.grammar)]  # the textbook noise
    kw = dict(tester=internal_tester(1_000, 2_000), seed=2, use_detect=True,
              n=(3_000, 6_000))
    a = verify(hist, exprs, settings, **kw)
    b = verify(hist, exprs, settings, executor=client, **kw)
    assert a.method == b.method == "detect"
    assert a.p_value == b.p_value and a.passed == b.passed
    assert a.detail == b.detail


def test_suite_equal_on_one_shared_client(client):
    from privet.suite import suite

    kw = dict(only=["dpfinder.sum", "statdp.noisy_max_v1a"], engines=["detect", "search"],
              quick=True, seed=5)
    local = suite(**kw)
    remote = suite(executor=client, **kw)
    assert [ln.verdict for ln in remote.lines] == [ln.verdict for ln in local.lines]
    assert [ln.lower_bound for ln in remote.lines] == [ln.lower_bound for ln in local.lines]
    from privet.core.results import to_jsonable

    assert [_strip_timing(to_jsonable(r.result)) for r in remote.rows] == \
        [_strip_timing(to_jsonable(r.result)) for r in local.rows]
    assert client.status == "running"  # a client the user passes is never closed
