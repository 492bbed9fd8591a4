"""Outputs privet cannot read get the sentence that names what came back, in every engine
(a default exact backend, per-sample black boxes), and verdicts name what they cover."""

import numpy as np
import pytest

import privet
from privet.core.errors import InputError, MechanismError


def _rr(ret):
    @privet.mechanism(epsilon=float(np.log(3)), neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=1, low=0, high=1, integer=True))
    def rr(noise, x):
        f = noise.bernoulli(0.25, shape=x.shape)
        g = noise.bernoulli(0.25, shape=x.shape)
        return ret(x, f, g)
    return rr


@pytest.mark.parametrize("ret, said", [
    (lambda x, f, g: {"a": (x + f) % 2}, "returned dict, not an array"),
    (lambda x, f, g: ((x + f) % 2, (x + g) % 2), "returned a tuple of 2 arrays with one row "
                                                 "per sample each; return one array"),
    (lambda x, f, g: 1, "returned int, not an array"),
])
def test_the_default_exact_backend_names_the_output_not_the_compiler(ret, said):
    # "auto" tried the BDD compiler after the probe run failed and reported its complaint
    # ("int() argument must be ... not 'Sym'") instead of the run's
    with pytest.raises(MechanismError, match=said):
        privet.exact(_rr(ret))


@pytest.mark.parametrize("ret, said", [
    (lambda a, rng: str(a[0] + rng.laplace()), r"returned text \('"),
    (lambda a, rng: "yes", r"returned text \('yes'\)"),
    (lambda a, rng: (a[0] + rng.laplace(), np.array([1.0, 2.0])),
     r"returned a tuple holding float64, ndarray .*flatten the nested parts into one list"),
])
def test_a_per_sample_box_returning_text_or_nested_parts_is_told_so(ret, said):
    # text was read as a number by NumPy ("0.16" -> 0.16); a nested tuple raised NumPy's
    # "inhomogeneous shape" as if the mechanism had
    box = privet.from_blackbox(ret, epsilon=1.0, domain=privet.Domain(length=1, low=0,
                                                                       high=10))
    with pytest.raises(MechanismError, match=said):
        box.sample([1.0], n=4, seed=0)


def test_add_remove_on_a_fixed_length_asks_for_a_range_in_python():
    box = privet.from_vectorized(lambda a, n: np.sum(a) + np.random.laplace(size=n),
                                 epsilon=1.0, neighbors=privet.neighbors.add_remove(),
                                 domain=privet.Domain(length=5, low=0, high=1))
    with pytest.raises(InputError, match=r"fixes the length at 5.*length=\(1, 5\)"):
        privet.search(box, seed=0, seconds=2, float_features="off")


def test_exact_on_given_inputs_names_them_not_the_whole_domain():
    @privet.mechanism(epsilon=float(np.log(3)), neighbors=privet.neighbors.one_differs(1))
    def rr_real(noise, x):
        return (x + noise.bernoulli(0.25, shape=x.shape)) % 2  # private on {0, 1} only

    b = privet.exact(rr_real, inputs=[[0], [1]])
    assert "the given inputs [0], [1] only" in b.domain and "inf" not in b.domain
    assert "on the given inputs [0], [1] only" in b.describe()


def test_an_open_interval_of_finite_values_says_so():
    from privet.detect.space import FiniteInterval

    e = FiniteInterval(2.0, np.inf, "coord", 0)
    assert e.describe() == "2 < ω[0] < ∞"
    assert e.contains(np.array([[3.0], [np.inf], [1.0]])).tolist() == [True, False, False]
