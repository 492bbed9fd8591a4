"""The expression grammar of KOLAHAL's appendix: enumeration, values, parsing, extension."""

import pytest

from privet.core.errors import PrivetError
from privet.synth import BOTTOM, Grammar, parse_expr


def test_default_grammar_size_and_bottom():
    g = Grammar.default()
    exprs = g.expressions()
    # [1-4] x |q|^[0-2] x (1/eps)^[1-2] = 4 * 3 * 2 expressions, plus bottom
    assert len(exprs) == 4 * 3 * 2 + 1
    assert exprs[0] is BOTTOM
    assert len({e.describe() for e in exprs}) == len(exprs)
    assert g.size(2) == 25 ** 2
    assert sum(1 for _ in g.vectors(2)) == 625


def test_values_and_descriptions():
    e = parse_expr("2/ε")
    assert e.value(5, {"epsilon": 0.5}) == pytest.approx(4.0)
    q = parse_expr("3·|q|²/ε²")
    assert q.value(5, {"epsilon": 0.5}) == pytest.approx(3 * 25 / 0.25)
    assert BOTTOM.value(5, {"epsilon": 1.0}) == 0.0
    assert parse_expr("⊥") is BOTTOM
    for expr in Grammar.default().expressions():
        assert parse_expr(expr.describe()).key() == expr.key()


def test_extend_with_an_argument():
    g = Grammar.default().extend("N", powers=(0, 1))
    assert len(g.expressions()) == 4 * 3 * 2 * 2 + 1
    e = next(x for x in g.expressions() if x.describe() == "4·N/ε")
    assert e.value(5, {"epsilon": 1.0, "N": 3}) == pytest.approx(12.0)
    with pytest.raises(PrivetError, match="argument 'N'"):
        e.value(5, {"epsilon": 1.0})


def test_parse_rejects_expressions_outside_the_grammar():
    with pytest.raises(PrivetError, match="not an expression"):
        parse_expr("5/ε")
