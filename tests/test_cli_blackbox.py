"""Implementations that do not use the noise API on the command line: --calling,
--neighbors, --domain, --length, and their errors (one sentence, exit 2)."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

import privet
from privet.cli import main
from privet.cli_support import load_target, parse_domain, parse_length, parse_neighbors
from privet.core.errors import MechanismError, PrivetError

USER = textwrap.dedent('''
    import numpy as np

    def vec(a, n_samples):
        return np.sum(a) + np.random.laplace(scale=2.0, size=n_samples)

    def statdp_style(prng, queries, epsilon):
        return float(np.sum(queries) + prng.laplace(scale=1 / epsilon))

    def one(a):
        return float(np.sum(a) + np.random.laplace(scale=2.0))

    def two(a, b):
        return a
''')


def _module(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture()
def user_file(tmp_path):
    return _module(tmp_path, "impls.py", USER)


def test_flag_parsers_read_their_forms_and_name_the_flag_on_errors():
    assert parse_neighbors("all:1") == privet.neighbors.all_differ(1)
    assert parse_neighbors("one:0.5") == privet.neighbors.one_differs(0.5)
    assert parse_neighbors("add-remove").kind == "add_remove"
    assert parse_domain("int:0:10") == {"integer": True, "low": 0.0, "high": 10.0}
    assert parse_domain("float:-10:10")["low"] == -10.0
    assert parse_length("5") == 5
    for bad, call in (("all:x", parse_neighbors), ("int:3", parse_domain),
                      ("float:2:1", parse_domain), ("0", parse_length)):
        with pytest.raises(PrivetError, match="--(neighbors|domain|length)"):
            call(bad)


def test_calling_is_read_off_the_signature(user_file):
    assert load_target(f"{user_file}:vec").kind == "vectorized"
    assert load_target(f"{user_file}:statdp_style", epsilon=0.5).kind == "statdp"
    assert load_target(f"{user_file}:one").kind == "blackbox"
    m = load_target(f"{user_file}:vec", neighbors="one:1", domain="int:0:5", length="3")
    assert m.neighbors == privet.neighbors.one_differs(1)
    assert m.domain.integer and m.domain.length == 3 and m.domain.high == 5
    with pytest.raises(PrivetError, match="--calling"):
        load_target(f"{user_file}:two")


def test_bad_input_gets_one_sentence_and_exit_2(user_file, capsys):
    cases = [
        (["search", f"{user_file}:one", "--calling", "vectorized"], "use --calling blackbox"),
        (["search", f"{user_file}:vec", "--domain", "int:0:0", "--length", "1"], "--domain"),
        (["detect", f"{user_file}:vec", "--neighbors", "add-remove", "--domain", "int:0:2",
          "--length", "2", "--claimed", "1"], "drop --length"),
        (["search", f"{user_file}:vec", "--method", "slsqp"], "--method slsqp"),
    ]
    for argv, text in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert text in err and err.count("\n") == 0 and "Traceback" not in err


def test_nan_outputs_and_changing_shapes_are_one_sentence():
    def nan_box(a, n_samples):
        out = np.zeros(n_samples)
        out[0] = np.nan
        return out

    with pytest.raises(MechanismError, match="returned NaN; return a number"):
        privet.from_vectorized(nan_box).sample([1.0], 10, seed=0)

    def growing(a, n_samples):
        return np.zeros((n_samples, 2 if n_samples > 5 else 3))

    with pytest.raises(MechanismError, match="shape .* in one call and .* in another"):
        privet.from_vectorized(growing).sample([1.0], 13, seed=0, chunk=10)

    def scalar_or_list(a, rng):
        return 1.0 if rng.random() < 0.5 else [1.0, 2.0]

    with pytest.raises(MechanismError, match="a scalar in one call and an array"):
        privet.from_blackbox(scalar_or_list).sample([1.0], 50, seed=0)


def test_seconds_flag_reaches_search_and_bad_values_name_it(user_file, monkeypatch, capsys):
    import importlib

    search_module = importlib.import_module("privet.search")  # the package, not the function
    seen = []

    def fake_search(mech, epsilon=None, **kw):
        seen.append(kw.get("seconds", "absent"))
        raise PrivetError("stopped by the test.")

    monkeypatch.setattr(search_module, "search", fake_search)
    base = ["search", f"{user_file}:vec", "--claimed", "0.5"]
    for extra in (["--seconds", "0"], ["--seconds", "12.5"], []):
        assert main(base + extra) == 2  # the fake's error
    assert seen == [None, 12.5, "absent"]  # 0 is no limit; no flag: search's own default
    capsys.readouterr()
    assert main(base + ["--seconds", "-3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--seconds" in err and err.count("\n") == 0 and "Traceback" not in err


def test_couple_flag_reaches_search(user_file, monkeypatch):
    import importlib

    search_module = importlib.import_module("privet.search")
    seen = []

    def fake_search(mech, epsilon=None, **kw):
        seen.append(kw.get("couple"))
        raise PrivetError("stopped by the test.")

    monkeypatch.setattr(search_module, "search", fake_search)
    base = ["search", f"{user_file}:vec", "--claimed", "0.5"]
    for extra in (["--couple", "off"], ["--couple", "on"], []):
        assert main(base + extra) == 2  # the fake's error
    assert seen == [False, True, "auto"]


def test_a_typo_suggests_the_file_s_own_functions_not_its_imports(user_file):
    # "hostile.py:nope" suggested 'np'
    with pytest.raises(PrivetError) as err:
        load_target(f"{user_file}:vek")
    text = str(err.value)
    assert "did you mean 'vec'?" in text and "'np'" not in text
    assert "Its functions: one, statdp_style, two, vec." in text


def test_a_relation_that_leaves_the_domain_names_the_flag_to_change(user_file):
    # both were blamed on the neighbor distance
    with pytest.raises(PrivetError, match="drop --length"):
        load_target(f"{user_file}:vec", neighbors="add-remove", domain="int:0:3", length="4")
    with pytest.raises(PrivetError, match="holds no integer"):
        load_target(f"{user_file}:vec", neighbors="one:1", domain="int:0.5:0.7", length="4")


@pytest.mark.parametrize("returned, said", [(None, "returned None"),
                                            (3.0, "returned float 3.0"),
                                            ("rows+1", "returned 65 outputs")])
def test_a_vectorized_box_that_returns_no_batch_is_told_so_in_its_own_terms(returned, said):
    # "returned a scalar for a batch of 64; every draw has a leading batch axis" is the
    # noise API's wording, which a vectorized box never sees
    from privet.core.noise import Sampler

    def m(a, n_samples):
        return np.zeros(n_samples + 1) if returned == "rows+1" else returned

    box = privet.from_vectorized(m, epsilon=1.0, name="m")
    with pytest.raises(MechanismError, match=r"m\(a, n_samples\) must return n_samples") as e:
        box.run(Sampler(0, 64), [0.0])
    assert said in str(e.value)


def test_a_distance_wider_than_the_domain_still_finds_pairs_inside_it(user_file, capsys):
    # 'all:5' on the integers 0..2 was refused, though every two inputs of the domain are
    # neighbors: the patterns are clipped to it, and the violation is found (sum + Lap(2)
    # moves by up to 4 on two entries: ε = 2 against the claimed 1)
    argv = ["detect", f"{user_file}:vec", "--neighbors", "all:5", "--domain", "int:0:2",
            "--length", "2", "--claimed", "1", "--n-select", "5000", "--n-final", "20000",
            "--float-features", "off", "--no-progress", "--seed", "1"]
    assert main(argv) == 1
    assert "violation found" in capsys.readouterr().out


RNG_POSITIONAL = textwrap.dedent('''
    import numpy as np

    def box(x, rng):
        return float(x[0] + rng.laplace())

    def vec(a, n_samples, rng):
        return a[0] + rng.laplace(size=n_samples)

    def as_dict(x, rng=None):
        return {"count": float(x[0])}
''')


def test_a_positional_rng_is_given_by_keyword_as_the_api_does(tmp_path):
    """``f(x, rng)`` and ``m(a, n_samples, rng)`` run from the CLI as from Python (the
    generator is passed as ``rng=``): read off the signature, and under --calling."""
    path = tmp_path / "rngs.py"
    path.write_text(RNG_POSITIONAL)
    box = load_target(f"{path}:box", epsilon=1.0)
    vec = load_target(f"{path}:vec", epsilon=1.0, calling="vectorized")
    assert box.kind == "blackbox" and vec.kind == "vectorized"
    assert np.asarray(box.sample([1.0], 5, seed=1)).shape == (5,)
    assert np.asarray(vec.sample([1.0], 5, seed=1)).shape == (5,)


def test_an_epsilon_delta_claim_and_dict_outputs_on_the_command_line(tmp_path, capsys):
    """``--claimed E,D`` states an (ε, δ) claim for a plain function; a box returning a dict
    is told what privet reads, not that it raised."""
    from privet.cli_support import claim

    assert claim("1,1e-5") == (1.0, 1e-5) and claim("ln(3)") == pytest.approx(math.log(3))
    path = tmp_path / "rngs.py"
    path.write_text(RNG_POSITIONAL)
    mech = load_target(f"{path}:box", epsilon=claim("1,1e-5"))
    assert (mech.epsilon, mech.delta) == (1.0, 1e-5)
    code = main(["detect", "--claimed", "1,2", f"{path}:box"])
    err = capsys.readouterr().err
    assert code == 2 and "claimed δ" in err and err.count("\n") == 1
    with pytest.raises(MechanismError, match="returned a dict .*cannot read as numbers"):
        load_target(f"{path}:as_dict", epsilon=1.0).sample([1.0], 3, seed=1)


def test_sample_takes_calling_for_plain_functions(user_file, capsys):
    code = main(["sample", f"{user_file}:vec", "--claimed", "1", "--calling", "vectorized",
                 "--input", "1,2", "-n", "50", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"mechanism": "vec"' in out


HOSTILE = textwrap.dedent('''
    import numpy as np

    def mutates(x, rng=None):
        v = float(np.sum(x))
        x[...] = 0  # zeroes its input after reading it
        return v

    def mutates_vec(a, n_samples):
        v = float(np.sum(a))
        a[...] = 0
        return v + np.zeros(n_samples)

    def imaginary(a, n_samples):
        return np.zeros(n_samples) + 1j * float(np.sum(a))

    def none_out(x, rng=None):
        return None

''')


@pytest.fixture()
def hostile_file(tmp_path):
    return _module(tmp_path, "hostile.py", HOSTILE)


def test_every_call_gets_its_own_copy_of_the_input(hostile_file):
    """A box that zeroes its input after reading it must not feed its later calls another
    input: every output is the exact sum (a deterministic, non-private mechanism)."""
    box = load_target(f"{hostile_file}:mutates", epsilon=1.0)
    vec = load_target(f"{hostile_file}:mutates_vec", epsilon=1.0, calling="vectorized")
    x = np.array([1.0, 2.0, 3.0])
    assert set(np.asarray(box.sample(x, 20, seed=1)).tolist()) == {6.0}
    assert set(np.asarray(vec.sample(x, 20, seed=1)).tolist()) == {6.0}
    assert x.tolist() == [1.0, 2.0, 3.0]


def test_complex_and_none_outputs_and_a_dying_worker_are_one_sentence(hostile_file, capsys,
                                                                      monkeypatch):
    with pytest.raises(MechanismError, match="complex numbers"):
        load_target(f"{hostile_file}:imaginary", epsilon=1.0,
                    calling="vectorized").sample([1.0], 4, seed=1)
    with pytest.raises(MechanismError, match="returned None"):
        load_target(f"{hostile_file}:none_out", epsilon=1.0).sample([1.0], 4, seed=1)
    from concurrent.futures.process import BrokenProcessPool

    import privet.cli as cli

    def dies(args):  # a pool whose worker the mechanism ended (os._exit): not run here,
        raise BrokenProcessPool("a process in the pool was terminated abruptly")  # it
        # would end pytest's own process whenever the sample ran in-process

    monkeypatch.setitem(cli.COMMANDS, "sample", dies)
    code = main(["sample", f"{hostile_file}:none_out", "--input", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "worker process died" in err and err.count("\n") == 1
    assert parse_length("256") == 256
    with pytest.raises(PrivetError, match="from 1 to 100,000"):
        parse_length("100000000")


def test_an_empty_distance_and_a_file_without_a_function_are_one_sentence():
    with pytest.raises(PrivetError, match="names no distance"):
        parse_neighbors("all:")
    with pytest.raises(PrivetError, match=r"is a file; name the function in it as x\.py:NAME"):
        load_target("x.py", epsilon=1.0)


def test_empty_outputs_are_refused_by_search_as_by_detect():
    from privet.core.errors import InputError

    box = privet.from_vectorized(lambda a, n: np.zeros((n, 0)), epsilon=1.0,
                                 domain=privet.Domain(length=2, low=0, high=3))
    with pytest.raises(InputError, match="returns empty outputs"):
        privet.search(box, seed=1, n_cap=4096, n_select=1 << 14, n_confirm=1 << 16,
                      iterations=1, progress=False)


def test_an_integer_domain_with_fractional_ends_names_the_whole_one():
    with pytest.raises(PrivetError, match=r"give whole ends \(int:2:3\) or float:1.5:3"):
        parse_domain("int:1.5:3")
    with pytest.raises(PrivetError, match="not a number"):
        parse_domain("float:nan:1")
    assert parse_domain("int:0:inf")["high"] == float("inf")


CHATTY = textwrap.dedent('''
    import numpy as np

    def vec(a, n_samples):
        print("debug: a =", a)
        return np.sum(a) + np.random.laplace(scale=2.0, size=n_samples)
''')


def test_json_stays_parseable_when_the_mechanism_prints(tmp_path, capsys):
    path = _module(tmp_path, "chatty.py", CHATTY)
    code = main(["sample", f"{path}:vec", "--input", "[1, 2]", "-n", "1000", "--json",
                 "--seed", "0"])
    out, err = capsys.readouterr()
    assert code == 0
    data = __import__("json").loads(out)  # the mechanism's prints did not land in it
    assert data["mechanism"] and "debug: a =" not in out
    assert "debug: a =" in err  # they went to stderr instead
    # without --json nothing is moved: the table and the prints share stdout as before
    main(["sample", f"{path}:vec", "--input", "[1, 2]", "-n", "1000", "--seed", "0"])
    assert "debug: a =" in capsys.readouterr().out


def test_json_stays_parseable_when_worker_processes_write_to_descriptor_1(tmp_path):
    import json
    import subprocess
    import sys

    path = _module(tmp_path, "raw.py", CHATTY.replace(
        'print("debug: a =", a)', '__import__("os").write(1, b"raw write\\n")'))
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from privet.cli import main; sys.exit(main())",
         "sample", f"{path}:vec", "--input", "[1, 2]", "-n", "1000", "--json", "--seed", "0",
         "--executor", "processes"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["mechanism"]
    assert "raw write" in run.stderr and "raw write" not in run.stdout
