"""Property-based hostile input (Hypothesis): random bytes, random JSON/YAML and mutated saved
results to ``privet report`` and ``privet pufferfish``, random flag values to the shared
flag parsers. Whatever comes in, privet answers with an exit code it documents and, on bad
input, one sentence -- never a traceback, never a half-written report.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privet import cli_support as flags
from privet.cli import main
from privet.core.errors import ParameterError, PrivetError
from privet.core.results import Bound, Counterexample, to_json
from privet.core.safe import MAX_EPSILON, check_expression, parse_epsilon
from privet.pufferfish.scenario import SPEC_KEYS

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


_MADE: list[Path] = []  # each example's folder, removed when the module's tests end


@pytest.fixture(autouse=True, scope="module")
def _remove_example_folders():
    yield
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


def run(argv: list[str], files: dict[str, bytes | str]) -> tuple[int, str, str, Path]:
    tmp = Path(tempfile.mkdtemp(prefix="privet-prop-"))
    _MADE.append(tmp)
    for name, content in files.items():
        (tmp / name).write_bytes(content if isinstance(content, bytes) else
                                 content.encode("utf-8", "surrogatepass"))
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(cwd)
    return code, out.getvalue(), err.getvalue(), tmp


def one_sentence(err: str) -> bool:
    lines = err.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("privet: error: ") and lines[0].endswith(".")


@SETTINGS
@given(data=st.binary(max_size=3000))
def test_random_bytes_to_report(data):
    code, _, err, _ = run(["report", "r.json"], {"r.json": data})
    assert code == 2 and one_sentence(err), err


@SETTINGS
@given(data=st.binary(max_size=3000), suffix=st.sampled_from([".yaml", ".json"]))
def test_random_bytes_to_pufferfish(data, suffix):
    code, _, err, _ = run(["pufferfish", "spec" + suffix, "--epsilon", "1"],
                          {"spec" + suffix: data})
    assert code == 2 and one_sentence(err), err


@SETTINGS
@given(value=json_values)
def test_random_json_to_report(value):
    code, _, err, _ = run(["report", "r.json"], {"r.json": json.dumps(value)})
    assert code in (0, 2)
    assert code == 0 or one_sentence(err), err


def _saved_results() -> list:
    """Saved results of several types, the documents the mutations start from."""
    from privet import exact, mechanisms, pufferfish

    cx = Counterexample(mechanism="m", d1=(1, 1), d2=(2, 1), args={"k": 1}, event="ω ≤ 1",
                        counts=(10, 3), n=(100, 100), p_value=0.01, test_epsilon=0.5,
                        epsilon_witnessed=0.7, confidence=0.9, seed=3)
    bound = Bound(mechanism="m", value=0.7, confidence=0.9, method="dpfinder", witness=cx,
                  claimed_epsilon=0.5, seed=3, seconds=1.0, details={"trace": [{"n": 3}]})
    rr = exact(mechanisms.get("wmc.randomized_response"), length=2, fractions=True)
    pf = pufferfish("ex2")
    return [json.loads(to_json(r)) for r in (bound, rr, pf)]


SAVED = _saved_results()


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _replace(doc, path, value):
    if not path:
        return value
    doc = json.loads(json.dumps(doc))
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@st.composite
def mutated(draw):
    doc = draw(st.sampled_from(SAVED))
    path = draw(st.sampled_from(list(_paths(doc))))
    return _replace(doc, path, draw(json_values))


@SETTINGS
@given(doc=mutated(), html=st.booleans())
def test_mutated_saved_results_to_report(doc, html):
    argv = ["report", "r.json"] + (["--html", "out.html"] if html else [])
    code, _, err, tmp = run(argv, {"r.json": json.dumps(doc)})
    assert code in (0, 2), err
    assert code == 0 or one_sentence(err), err
    page = tmp / "out.html"
    if html and code == 0:
        assert page.read_text(encoding="utf-8").endswith("</html>\n")
    else:
        assert not page.exists()
    assert not [p for p in tmp.iterdir() if ".part" in p.name]


@SETTINGS
@given(spec=st.dictionaries(st.sampled_from(SPEC_KEYS), json_values, min_size=1,
                            max_size=4),
       as_json=st.booleans())
def test_random_specs_to_pufferfish(spec, as_json):
    # random values never form a spec that names a real example or built-in model, so
    # every one is bad input; YAML and JSON give the same answer
    if as_json:
        files = {"spec.json": json.dumps(spec)}
    else:
        import yaml

        files = {"spec.json": "", "spec.yaml": yaml.safe_dump(spec)}
    name = "spec.json" if as_json else "spec.yaml"
    code, _, err, _ = run(["pufferfish", name, "--epsilon", "1"], files)
    assert code == 2 and one_sentence(err), err


YAML_TOKENS = [
    "&a ", "&b ", "*a", "*b", "<<: ", "!!python/object/apply:os.system ", "!!binary ",
    "!!float ", "!!int ", "!!map ", "---\n", "...\n", "%YAML 1.1\n", "%TAG !e! tag:x,1:\n",
    "- ", ": ", "? ", "{", "}", "[", "]", ", ", "'", '"', "\n", "  ", "# c", "|\n", ">\n",
    "1e999", "-.inf", ".nan", "0x1F", "1_000", "3**99999", "ln(1/0)", "~", "yes", "2001-12-14",
    "9" * 200, "builtin", "truncated_geometric", "noisy_max", "mechanism: x.py:f\n",
    *[f"{k}: " for k in SPEC_KEYS]]

JSON_TOKENS = [
    "{", "}", "[", "]", ",", ":", '"__fraction__"', '"__float__"', '"__type__"', '"Bound"',
    '"ExactBound"', '"DetectResult"', '"PufferfishVerdict"', '"1/0"', '"1e100000000"',
    '"inf"', '"nan"', '"abc"', "1e999", "-0", "NaN", "Infinity", "null", "true", "0.5",
    '"p_value"', '"value"', '"mechanism"', '"details"', '"interrupted"', "9" * 400,
    '"\\ud800"', '"\\u0000"', " "]


@SETTINGS
@given(tokens=st.lists(st.sampled_from(YAML_TOKENS), max_size=60))
def test_random_yaml_text_to_pufferfish(tokens):
    # aliases, merge keys, tags, directives and spec keys in any order: a spec that parses
    # is still data (no code runs: no --allow-code), and nothing else leaves exit 2
    code, _, err, tmp = run(["pufferfish", "spec.yaml", "--epsilon", "1"],
                            {"spec.yaml": "".join(tokens)})
    assert code == 2 and one_sentence(err), err
    assert not (tmp / "PWNED").exists()


@SETTINGS
@given(tokens=st.lists(st.sampled_from(JSON_TOKENS), max_size=60))
def test_random_json_text_to_report(tokens):
    code, _, err, _ = run(["report", "r.json"], {"r.json": "".join(tokens)})
    assert code in (0, 2)
    assert code == 0 or one_sentence(err), err


FLAG_TYPES = {
    "seed": (flags.seed, lambda v: isinstance(v, int) and 0 <= v <= flags.MAX_SEED),
    "count": (flags.count("n"), lambda v: isinstance(v, int) and 1 <= v <= flags.MAX_SAMPLES),
    "epsilon": (flags.epsilon, lambda v: 0 < v <= MAX_EPSILON),
    "range": (flags.epsilon_range,
              lambda v: 1 <= len(v) <= flags.MAX_CURVE_POINTS and v == sorted(v)),
    "probability": (flags.probability("alpha"), lambda v: 0 < v < 1),
    "memory": (flags.memory_size, lambda v: v >= 0),
    "inputs": (flags.input_list, lambda v: len(v) >= 1),
}

flag_text = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"-?[0-9]{0,30}(\.[0-9]{0,5})?(e[+-]?[0-9]{1,12})?", fullmatch=True),
    st.from_regex(r"[0-9.e-]{1,8}:[0-9.e-]{1,8}:[0-9e]{1,14}", fullmatch=True),
    st.from_regex(r"([0-9]{1,3} ?)?(ln|log) ?\(?[0-9/.]{1,12}\)?", fullmatch=True))


@pytest.mark.parametrize("kind", sorted(FLAG_TYPES))
@settings(max_examples=60, deadline=None, derandomize=True)  # every flag: test_flags.py
@given(text=flag_text)
def test_random_flag_values(kind, text):
    parse, valid = FLAG_TYPES[kind]
    try:
        value = parse(text)
    except argparse.ArgumentTypeError as err:
        assert "\n" not in str(err) and str(err)
        return
    assert valid(value), (text, value)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(text=st.text(max_size=60) | st.from_regex(
    r"[0-9a-z (),*/+.-]{0,20}\*\*[0-9]{1,12}", fullmatch=True))
def test_epsilon_text_and_expressions_are_bounded(text):
    try:
        e = parse_epsilon(text)
    except ParameterError:
        pass
    else:
        assert 0 < e.value <= MAX_EPSILON
    try:
        check_expression(text)
    except PrivetError:
        pass


def test_the_flag_parsers_reach_argparse_as_one_sentence(capsys):
    assert main(["sample", "statdp.noisy_max_v1a", "-x", "1", "-n", "1e30"]) == 2
    err = capsys.readouterr().err
    assert one_sentence(err) and "-n" in err and "usage" not in err
