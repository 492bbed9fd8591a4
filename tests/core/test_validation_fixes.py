"""Input validation at the door: the spec, the domain, the adapters, result objects and
given pairs refuse a wrong value in one sentence, instead of failing later elsewhere."""

import json
import math

import numpy as np
import pytest

import privet
from privet.core.errors import NeighborError, ParameterError, PrivetError
from privet.core.results import _TYPES, Bound, ExactBound, from_json, is_result

BIT = privet.Domain(length=1, integer=True, low=0, high=1)


def _flip(noise, x):
    return x[0] + noise.bernoulli(0.25)


def _laplace_statdp(prng, queries, epsilon):
    return float(queries[0]) + prng.laplace(scale=1.0 / epsilon)


def _laplace_vectorized(a, n_samples):
    return a[0] + np.random.laplace(size=n_samples)


# 1. the claim is stored as the checked floats ---------------------------------------------

def test_claim_given_as_text_or_int_is_stored_as_float():
    m = privet.mechanism(epsilon="1", domain=BIT)(_flip)
    assert m.epsilon == 1.0 and isinstance(m.epsilon, float)
    approx = privet.mechanism(epsilon=1, delta="1e-5")(_flip)
    assert isinstance(approx.epsilon, float) and approx.delta == 1e-5
    assert isinstance(approx.delta, float)
    zcdp = privet.mechanism(rho="0.5")(_flip)
    assert zcdp.rho == 0.5 and isinstance(zcdp.rho, float) and zcdp.epsilon is None
    assert isinstance(privet.from_blackbox(lambda x: x[0], epsilon="2").epsilon, float)
    assert isinstance(m.replace(epsilon="3").epsilon, float)


def test_exact_runs_on_a_claim_given_as_text():
    r = privet.exact(privet.mechanism(epsilon="1", domain=BIT)(_flip))
    assert r.claimed_epsilon == 1.0 and not r.verified


# 2. Domain checks its length and bounds --------------------------------------------------

@pytest.mark.parametrize("length", [0, -3, (3, 1), (-1, 4), 2.5, "5"])
def test_domain_refuses_a_length_that_is_not_one(length):
    with pytest.raises(ParameterError, match="length="):
        privet.Domain(length=length)


def test_domain_keeps_every_legal_length():
    assert privet.Domain().length is None
    assert privet.Domain(length=np.int64(3)).length == 3
    assert privet.Domain(length=[0, 1000]).length == (0, 1000)  # add/remove: empty allowed
    assert privet.Domain(length=(2, 2)).length == (2, 2)


def test_domain_refuses_low_above_high():
    with pytest.raises(ParameterError, match=r"low=5 is above its high=1; give low <= high"):
        privet.Domain(low=5, high=1)
    with pytest.raises(ParameterError, match="must both be numbers"):
        privet.Domain(low=math.nan)
    assert privet.Domain(low=2, high=2).describe().startswith("reals in [2, 2]")


# 3. the adapters check the spec's types and keywords -------------------------------------

@pytest.mark.parametrize("wrap", [
    lambda **kw: privet.from_vectorized(_laplace_vectorized, epsilon=0.5, **kw),
    lambda **kw: privet.from_statdp(_laplace_statdp, epsilon=0.5, **kw),
    lambda **kw: privet.from_blackbox(lambda x: x[0], epsilon=0.5, **kw),
    lambda **kw: privet.mechanism(epsilon=0.5, **kw)(_flip),
])
def test_adapters_refuse_a_wrong_domain_neighbors_or_keyword(wrap):
    with pytest.raises(PrivetError, match=r"domain=\(0, 10\) is not a privet.Domain"):
        wrap(domain=(0, 10))
    with pytest.raises(PrivetError, match="neighbors='all' is not a privet neighbor relation"):
        wrap(neighbors="all")
    with pytest.raises(PrivetError, match="unknown argument 'neighbours'.*did you mean "
                                          "'neighbors'.*domain"):
        wrap(neighbours=privet.neighbors.all_differ())


# 4. from_statdp needs its epsilon -------------------------------------------------------

def test_from_statdp_refuses_no_epsilon():
    with pytest.raises(ParameterError, match="from_statdp needs the claimed epsilon"):
        privet.from_statdp(_laplace_statdp, epsilon=None)


def test_statdp_runner_without_epsilon_does_not_blame_the_function():
    m = privet.from_statdp(_laplace_statdp, epsilon=1.0).replace(epsilon=None)
    with pytest.raises(ParameterError, match="takes its epsilon.*claims none"):
        m.sample([1.0], 4, seed=0)


# 5. a non-callable is refused at wrap time ----------------------------------------------

@pytest.mark.parametrize("wrap, obj", [
    (privet.from_vectorized, 42), (privet.from_blackbox, "abc"),
    (lambda f: privet.from_statdp(f, epsilon=1.0), None),
])
def test_adapters_refuse_what_is_not_a_function(wrap, obj):
    with pytest.raises(PrivetError, match="wraps a function.*pass the function itself"):
        wrap(obj)


# 6. result objects: to_json(), Bound.lower_bound, violates only against an ε ---------------

def test_every_result_type_has_to_json():
    for name, cls in _TYPES.items():
        assert callable(getattr(cls, "to_json", None)), name
    b = Bound("m", 0.5, 0.9, "dpfinder", claimed_epsilon=0.1)
    assert json.loads(b.to_json())["__type__"] == "Bound"
    assert from_json(b.to_json()) == b
    assert b.to_json(indent=None) == json.dumps(json.loads(b.to_json()), ensure_ascii=False)


def test_entry_point_results_have_to_json():
    mech = privet.mechanism(epsilon=1.0, domain=BIT)(_flip)
    results = [privet.exact(mech), privet.search(mech, iterations=1, seed=1),
               privet.detect(mech, n_select=2_000, n_final=2_000, seed=1)]
    for r in results:
        assert is_result(r), type(r)
        assert from_json(r.to_json()) is not None
    assert isinstance(results[0], ExactBound) and isinstance(results[1], Bound)


def test_bound_lower_bound_and_violates_in_repr():
    b = Bound("m", 0.5, 0.9, "dpfinder")
    assert b.lower_bound == 0.5
    with pytest.raises(AttributeError):
        b.lower_bound = 1.0
    assert "violates" not in repr(b) and "lower_bound=0.5" in repr(b)
    assert "violates=True" in repr(Bound("m", 0.5, 0.9, "dpfinder", claimed_epsilon=0.1))
    assert "violates=False" in repr(Bound("m", 0.5, 0.9, "dpfinder", claimed_epsilon=1.0))


# 7. a given pair of one input twice is refused -------------------------------------------

def test_identical_pair_is_refused():
    mech = privet.mechanism(epsilon=1.0, domain=BIT)(_flip)
    with pytest.raises(NeighborError, match="D1 and D2 are the same input.*must differ"):
        privet.exact(mech, pairs=[([0], [0])])
    with pytest.raises(NeighborError, match="same input"):
        privet.neighbors.all_differ().check([1.0, 2.0], np.array([1, 2]))
    privet.neighbors.all_differ().check([1.0, 2.0], [1.0, 3.0])  # neighbors: no error


def test_patterns_wider_than_the_domain_are_shifted_or_clipped_into_it():
    # 'one:3' on the integers 0..3 and 'all:5' on {0, 1} were refused ("no neighbor pattern
    # fits the domain"), though [0] and [3], [0] and [1] are neighbors inside it
    from privet.core.neighbors import all_differ, one_differs

    dom = privet.Domain(length=1, integer=True, low=0, high=3)
    got = list(one_differs(3).pairs(domain=dom))
    assert got and all(_inside(p, dom) and one_differs(3).are_neighbors(p.d1, p.d2)
                       and not np.array_equal(p.d1, p.d2) for p in got)
    assert any(abs(float(p.d1[0] - p.d2[0])) == 3 for p in got)  # the full distance, shifted
    bit = privet.Domain(length=1, integer=True, low=0, high=1)
    got = list(all_differ(5).pairs(domain=bit))
    assert got and all(_inside(p, bit) and not np.array_equal(p.d1, p.d2) for p in got)
    # where patterns fit, nothing changes: the same pairs as before, none shifted
    wide = privet.Domain(length=5, low=-10, high=10)
    assert not any("shifted" in p.pattern or "clipped" in p.pattern
                   for p in all_differ(1).pairs(domain=wide))


def _inside(pair, dom) -> bool:
    both = np.r_[pair.d1, pair.d2]
    return bool(np.all(both >= dom.low) and np.all(both <= dom.high)
                and np.all(both == np.round(both)))


def test_an_output_outside_the_declared_categories_is_refused():
    # Output.categorical((0, 1)) was not enforced: a mechanism returning 2 and 3 was
    # analysed silently
    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.all_differ(1),
                      domain=privet.Domain(length=1, integer=True, low=0, high=1),
                      output=privet.Output.categorical((0, 1)))
    def wrong_values(noise, x):
        return x[0] + 2 + noise.bernoulli(0.5)

    for run in (privet.exact, lambda m: privet.detect(m, seed=0)):
        with pytest.raises(PrivetError, match="declares the output values 0, 1 but returned"):
            run(wrong_values)


def test_dir_shows_the_public_names():
    names = dir(privet)
    assert {"detect", "search", "exact", "mechanism", "from_vectorized"} <= set(names)
    assert not {"importlib", "types", "annotations", "TYPE_CHECKING"} & set(names)


def test_an_exact_verdict_names_the_inputs_it_checked():
    # "verified ε ≤ 1 on the checked domain" did not say which
    r = privet.exact(privet.mechanisms.get("wmc.randomized_response"), length=2)
    assert str(r).endswith(f"verified ε ≤ 1.386 on {r.domain.split(';')[0]} (exact ε = 1.386)")
    assert "4 inputs (integers in [0, 1]" in str(r)


def test_a_closed_form_of_a_float_parameter_reads_as_a_decimal():
    from fractions import Fraction

    from privet.exact import closed_form

    assert closed_form(Fraction(288, 73)) == "ln(288/73)"
    assert closed_form(Fraction(1 / math.e)) == "ln(0.3678794412)"  # not 17-digit p/q


def test_an_added_record_takes_the_domain_s_extremes():
    from privet.core.neighbors import add_remove

    dom = privet.Domain(length=(1, 10), low=0, high=3)
    added = {float(p.d2[-1]) for p in add_remove().pairs(domain=dom, both_orders=False)
             if len(p.d2) == len(p.d1) + 1}
    assert {0.0, 3.0} <= added


def test_a_wide_integer_domain_is_refused_before_any_compile():
    # [0, 10^9] went into the BDD trial compile and ran for minutes; enumeration refused it
    from fractions import Fraction

    from privet.core.errors import GridTooLargeError

    @privet.mechanism(epsilon=math.log(2), neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=1, integer=True, low=0, high=10**9))
    def wide(noise, x):
        return x + noise.bernoulli(Fraction(1, 3), shape=x.shape)

    for backend in ("auto", "bdd", "enumerate"):
        with pytest.raises(GridTooLargeError, match="1,000,000,001 inputs, above the cap"):
            privet.exact(wide, backend=backend)


def test_an_exact_ratio_is_compared_exactly_with_the_claim():
    # e^ε = 3 exactly was "verified" against a claim of ln 3 - 1e-12 (a float tolerance)
    from fractions import Fraction

    def bound(claimed: float) -> ExactBound:
        return ExactBound(mechanism="rr", epsilon=math.log(3), e_epsilon=Fraction(3),
                          witness=None, domain="2 inputs", claimed_epsilon=claimed)

    assert not bound(math.log(3) - 1e-12).verified
    assert bound(math.log(3) + 1e-12).verified
    assert bound(math.log(3)).verified   # the float ln 3 lies within 1 ulp of the real one
    assert bound(math.nextafter(math.log(3), 0)).verified  # a claim's own rounding is allowed


def test_accuracy_names_its_f_and_refuses_the_counting_query_for_vectors():
    # a 3-bin histogram's accuracy read 0: every bin was compared with sum(x), unnamed
    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=3, integer=True, low=0, high=1))
    def hist(noise, x):
        return x + noise.geometric(0.5, shape=x.shape, low=-2, high=2)

    with pytest.raises(ParameterError, match="returns 3 entries per output; give truth="):
        privet.exact.accuracy(hist, 1)
    r = privet.exact.accuracy(hist, 1, truth=lambda x: np.asarray(x))
    # each bin within 1 with probability 1/3 + 2/6 (two-sided geometric, α = 1/2): (2/3)^3
    assert r.details["truth"] == "the truth= given"
    assert r.one_minus_beta == pytest.approx(8 / 27, rel=1e-9)

    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=2, integer=True, low=0, high=1))
    def count(noise, x):
        return x.sum(axis=-1) + noise.geometric(0.5, low=-2, high=2)

    assert privet.exact.accuracy(count, 1).details["truth"] == "sum(x), the counting query"


def test_an_exact_delta_is_never_below_the_true_one():
    # e^ε as a float rounds up as often as down: δ taken with it could print as an "exact"
    # fraction below the true δ (dsvt: ...253099 for ...253157)
    import decimal
    from fractions import Fraction

    @privet.mechanism(epsilon=math.log(3), neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=1, integer=True, low=0, high=1))
    def rr(noise, x):
        return (x[0] + noise.bernoulli(Fraction(1, 4))) % 2

    with decimal.localcontext() as ctx:
        ctx.prec = 50
        for eps in (0.5, 0.3, 0.7):
            true = Fraction(decimal.Decimal("0.75") - decimal.Decimal("0.25")
                            * decimal.Decimal(eps).exp())   # P = (3/4, 1/4) against (1/4, 3/4)
            got = privet.exact.delta_for(rr, eps, fractions=True).delta
            assert true <= got <= true + Fraction(1, 10**30)


def test_an_integer_domain_without_an_integer_is_refused_when_built():
    # exact said "input [0., 0.] is outside the domain [0.2, 0.7]" about an input privet made
    with pytest.raises(ParameterError, match=r"\[0.2, 0.7\] holds no integer"):
        privet.Domain(length=2, integer=True, low=0.2, high=0.7)
    assert privet.Domain(length=1, integer=True, low=0.5).low == 0.5   # [0.5, ∞) has some


def test_irrational_noise_skips_the_exact_counting_path_instead_of_failing():
    # auto tried the exact-rational counting backend first and stopped with "cannot be
    # enumerated with Fractions; ... (fractions=False)" though no Fractions were asked for
    @privet.mechanism(epsilon=1.0, neighbors=privet.neighbors.one_differs(1),
                      domain=privet.Domain(length=2, integer=True, low=0, high=1))
    def dg_sum(noise, x):
        return x.sum(axis=-1) + noise.discrete_gaussian(3)

    r = privet.exact(dg_sum)
    # a discrete Gaussian is not pure ε-DP for any ε (its ratio grows along the tail): ∞,
    # as enumeration says too
    assert r.epsilon == math.inf and not r.verified
    assert privet.exact(dg_sum, backend="enumerate").epsilon == math.inf


def test_exact_arguments_that_are_not_numbers_are_refused():
    # accuracy(m, "1") raised a raw TypeError; profile(epsilons=[nan]) reported δ(nan) = 0
    rr = privet.mechanisms.get("wmc.randomized_response")
    with pytest.raises(ParameterError, match="alpha must be a finite number"):
        privet.exact.accuracy(rr, "1", length=2)
    for bad in ({"epsilons": [float("nan")]}, {"epsilons": [-1.0]}, {"orders": [0.5]}):
        with pytest.raises(ParameterError, match="must be finite numbers"):
            privet.exact.profile(rr, length=2, **bad)


def test_the_vocabulary_modules_import_under_their_short_names():
    # privet.neighbors.all_differ worked, "from privet.neighbors import all_differ" did not
    from privet.events import Interval
    from privet.neighbors import all_differ

    assert all_differ is privet.neighbors.all_differ and Interval is privet.events.Interval
