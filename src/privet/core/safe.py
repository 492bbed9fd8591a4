"""Reading untrusted input with bounds: files, JSON/YAML documents, numbers and expressions.

Everything privet reads from a file or a flag passes through here before anything is
evaluated, so a hostile or careless input ends as one sentence (:class:`InputError` or
:class:`ParameterError`) instead of a hang, a memory blow-up or a traceback:

* files: a regular file, at most ``max_bytes``, UTF-8 text (:func:`read_text`);
* documents: JSON and YAML nested at most :data:`MAX_DEPTH` levels; YAML with aliases is
  measured as if every alias were expanded (a "billion laughs" bomb is refused before it is
  built) and never constructs Python objects from tags (:func:`load_json`, :func:`load_yaml`);
* numbers: rationals written ``p/q``, decimals and exponents with bounded digits and
  exponents (:func:`parse_rational`), so ``1e100000000`` is refused rather than expanded;
* expressions: Python syntax restricted to numbers, names, ``+ - * /``, small integer powers
  and the functions a caller allows, with bounded length and literal sizes
  (:func:`check_expression`); :func:`parse_epsilon` reads a privacy budget such as ``0.5``,
  ``ln(2)``, ``4 ln 2`` or ``ln(288/73)`` and keeps e^ε exact when it is rational.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .errors import InputError, ParameterError

MAX_DEPTH = 100                   # nesting of a JSON/YAML document
MAX_YAML_NODES = 1_000_000        # nodes of a YAML document with every alias expanded
MAX_RESULT_BYTES = 64 * 2**20     # a saved result (privet report)
MAX_SPEC_BYTES = 2**20            # a Pufferfish spec
MAX_EXPRESSION_CHARS = 2_000
MAX_LITERAL_DIGITS = 100          # digits of one number in an expression or a flag
MAX_DECIMAL_EXPONENT = 400        # |e| of 1.5e-7 style literals (floats end near 1e308)
MAX_POWER = 1_000                 # product of the nested integer exponents of an expression
MAX_EPSILON = 700.0               # e^ε must be a finite double (e^709.8 overflows)


# -- files ---------------------------------------------------------------------------------------

def read_text(path: str | os.PathLike, what: str, max_bytes: int) -> str:
    """The UTF-8 text of the regular file ``path``, refused in one sentence when it does not
    exist, is a directory or a device, is larger than ``max_bytes`` or is not text."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} {str(p)!r} does not exist.") from None
    except OSError as err:
        raise InputError(f"cannot read {what} {str(p)!r}: {err.strerror or err}.") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{what} {str(p)!r} is a directory; give a file.")
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISFIFO(st.st_mode):
        raise InputError(f"{what} {str(p)!r} is not a regular file.")
    try:
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as err:
        raise InputError(f"cannot read {what} {str(p)!r}: {err.strerror or err}.") from None
    return decode_text(data, f"{what} {str(p)!r}", max_bytes)


def decode_text(data: bytes, what: str, max_bytes: int) -> str:
    """``data`` as UTF-8 text, refused when longer than ``max_bytes`` or not text."""
    if len(data) > max_bytes:
        raise InputError(f"{what} is larger than {max_bytes // 2**20} MB; privet refuses "
                         "documents this large.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{what} is not UTF-8 text (a binary file?).") from None
    if "\x00" in text:
        raise InputError(f"{what} contains NUL bytes: it is not a text document.")
    return text


# -- documents -----------------------------------------------------------------------------------

def check_depth(data: Any, what: str, max_depth: int = MAX_DEPTH) -> Any:
    """``data`` unchanged, or :class:`InputError` when lists/dicts nest deeper than
    ``max_depth`` (checked without recursion)."""
    stack = [(data, 1)]
    while stack:
        obj, depth = stack.pop()
        if isinstance(obj, dict):
            children: Iterable = obj.values()
        elif isinstance(obj, list):
            children = obj
        else:
            continue
        if depth > max_depth:
            raise InputError(f"{what} nests more than {max_depth} levels deep.")
        stack.extend((c, depth + 1) for c in children)
    return data


def load_json(text: str, what: str) -> Any:
    """Parse JSON text with bounded nesting; one sentence on any error."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputError(f"{what} nests more than {MAX_DEPTH} levels deep.") from None
    except ValueError as err:  # JSONDecodeError, or an integer with too many digits
        raise InputError(f"{what} is not valid JSON ({_first_line(err)}).") from None
    return check_depth(data, what)


def load_yaml(text: str, what: str, max_nodes: int = MAX_YAML_NODES) -> Any:
    """Parse YAML safely: no Python tags, bounded nesting and bounded alias expansion."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        def get_single_node(self):
            node = super().get_single_node()
            if node is not None:
                _check_yaml_size(node, what, max_nodes)
            return node

    try:
        data = yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    except (InputError, MemoryError):
        raise
    except RecursionError:
        raise InputError(f"{what} nests more than {MAX_DEPTH} levels deep.") from None
    except Exception as err:  # noqa: BLE001 - YAMLError, or the constructors' own failures
        # (PyYAML raises IndexError on a bare "!!int" tag, ValueError, OverflowError...)
        raise InputError(f"{what} is not valid YAML ({_first_line(err)}).") from None
    return check_depth(data, what)


def _check_yaml_size(root: Any, what: str, max_nodes: int) -> None:
    """Refuse a YAML node graph whose expansion (each alias counted in full) exceeds
    ``max_nodes`` nodes, or that refers to itself -- before any object is constructed."""
    import yaml

    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = _yaml_children(node)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            if size[key] > max_nodes:
                raise InputError(f"{what} expands to more than {max_nodes:,} values (YAML "
                                 "aliases repeat their anchor); privet refuses it.")
            continue
        if key in size:
            continue
        if key in on_path:
            raise InputError(f"{what} refers to itself through a YAML alias.")
        if depth > MAX_DEPTH:
            raise InputError(f"{what} nests more than {MAX_DEPTH} levels deep.")
        on_path.add(key)
        stack.append((node, depth, True))
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            stack.extend((k, depth + 1, False) for k in _yaml_children(node)
                         if id(k) not in size)


def _yaml_children(node: Any) -> list:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [x for pair in node.value for x in pair]
    return []


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__).rstrip(".")[:200]


# -- numbers -------------------------------------------------------------------------------------

_RATIONAL = re.compile(r"^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?(?:\s*/\s*(\d+))?\s*$")


def parse_rational(text: str, what: str = "number") -> Fraction:
    """``"3"``, ``"-1/4"``, ``"0.25"``, ``"2.5e-3"`` as an exact Fraction, with at most
    :data:`MAX_LITERAL_DIGITS` digits and a decimal exponent of at most
    :data:`MAX_DECIMAL_EXPONENT`; :class:`ParameterError` otherwise (``1e100000000``, ``1/0``,
    ``abc``)."""
    m = _RATIONAL.match(str(text))
    if not m or not (m.group(2) or m.group(3)):
        raise ParameterError(f"cannot read {what} {str(text)[:60]!r} as a number.")
    sign, whole, frac, exp, den = m.groups()
    digits = len(whole) + len(frac or "") + len(den or "")
    if digits > MAX_LITERAL_DIGITS:
        raise ParameterError(f"{what} {str(text)[:40]!r}... has more than "
                             f"{MAX_LITERAL_DIGITS} digits.")
    e = 0
    if exp:
        if len(exp.lstrip("+-")) > 6 or abs(int(exp)) > MAX_DECIMAL_EXPONENT:
            raise ParameterError(f"the exponent of {what} {str(text)[:60]!r} is beyond "
                                 f"±{MAX_DECIMAL_EXPONENT}.")
        e = int(exp)
    value = Fraction(int((whole or "0") + (frac or "")), 10 ** len(frac or ""))
    value *= Fraction(10) ** e
    if den is not None:
        if int(den) == 0:
            raise ParameterError(f"{what} {str(text)[:60]!r} divides by zero.")
        value /= int(den)
    return -value if sign == "-" else value


def power_count(base: int, exponent: int) -> float:
    """``base ** exponent`` (the size of a grid of inputs), or inf beyond 2^63 -- never the
    huge integer itself, which could take long to compute and cannot be printed."""
    base, exponent = int(base), int(exponent)
    if base <= 1 or exponent <= 0:
        return float(base ** max(exponent, 0)) if base >= 0 else float("nan")
    if exponent * math.log2(base) > 63:
        return math.inf
    return base ** exponent


def power_text(base: int, exponent: int) -> str:
    """``1,024``, or ``2^1000 (about 10^301)`` when the count is beyond 2^63."""
    n = power_count(base, exponent)
    if n != math.inf:
        return f"{int(n):,}"
    return f"{base}^{exponent} (about 10^{exponent * math.log10(base):.0f})"


# -- expressions ---------------------------------------------------------------------------------

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def check_expression(text: str, what: str = "expression",
                     functions: Iterable[str] = (), shown: str | None = None) -> ast.AST:
    """Parse ``text`` and check it is a bounded arithmetic expression (see module doc).

    Allowed: numeric literals (at most :data:`MAX_LITERAL_DIGITS` digits, finite), names,
    ``+ - * /``, unary ``-``/``+``, ``**`` with a literal non-negative integer exponent such
    that the product of nested exponents stays within :data:`MAX_POWER`, and calls of the
    one-argument ``functions``. Returns the expression's AST body. Messages quote ``shown``
    (default ``text``).
    """
    text = str(text).strip()
    quoted = repr((shown if shown is not None else text)[:60])
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ParameterError(f"the {what} is longer than {MAX_EXPRESSION_CHARS} characters.")
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        allowed = ", ".join(functions)
        raise ParameterError(
            f"cannot read the {what} {quoted}; use numbers, + - * / and integer powers"
            + (f", and {allowed}" if allowed else "") + ".") from None
    allowed = set(functions)
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, power = stack.pop()
        if isinstance(node, ast.Constant):
            _check_literal(node.value, quoted, what)
        elif isinstance(node, ast.Name):
            pass
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            stack.append((node.operand, power))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, _BINOPS):
            if isinstance(node.op, ast.Pow):
                n = node.right
                if not (isinstance(n, ast.Constant) and type(n.value) is int and n.value >= 0):
                    raise ParameterError(f"only non-negative integer powers are allowed in "
                                         f"the {what} {quoted}.")
                if power * max(n.value, 1) > MAX_POWER:
                    raise ParameterError(f"the powers in the {what} {quoted} exceed "
                                         f"{MAX_POWER} in total.")
                stack.append((node.left, power * max(n.value, 1)))
            else:
                stack.extend([(node.left, power), (node.right, power)])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in allowed and len(node.args) == 1 and not node.keywords:
            stack.append((node.args[0], power))
        else:
            kind = type(getattr(node, "op", node)).__name__
            raise ParameterError(f"{kind} is not allowed in the {what} {quoted}; use "
                                 "numbers, names, + - * / and integer powers.")
    return tree


def _check_literal(value: Any, quoted: str, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterError(f"only numbers are allowed as constants in the {what} "
                             f"{quoted}.")
    if isinstance(value, int) and value.bit_length() > MAX_LITERAL_DIGITS * 3.33:
        raise ParameterError(f"a number in the {what} {quoted} has more than "
                             f"{MAX_LITERAL_DIGITS} digits.")
    if isinstance(value, float) and (not math.isfinite(value) or (
            value != 0 and not 1e-300 < abs(value) < 1e300)):
        raise ParameterError(f"a number in the {what} {quoted} is out of range.")


def literal(value: Any) -> Fraction:
    """The exact value of a literal checked by :func:`check_expression` (0.1 means 1/10)."""
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


# -- privacy budgets -----------------------------------------------------------------------------

@dataclass(frozen=True)
class EpsilonText:
    """A budget read from text: its value, and e^ε exactly when it is rational."""

    text: str
    value: float
    factor: Fraction | None = None


_SPACED_LN = re.compile(r"(?<![A-Za-z_])(ln|log)\s*([0-9][0-9./]*(?:[eE][+-]?[0-9]+)?)")
_IMPLICIT = re.compile(r"([0-9.)])\s*(ln|log|exp)\b")


def parse_epsilon(value: Any, what: str = "epsilon") -> EpsilonText:
    """A positive finite ε (at most :data:`MAX_EPSILON`) from a number or text such as
    ``0.5``, ``1/3``, ``ln(2)``, ``4*ln(2)``, ``4 ln 2``, ``ln(288/73)``, ``ln(3) - ln(2)``.

    Text may combine rational numbers with ``+ - * /`` and ``ln``/``log`` (natural) of
    positive rationals. ``factor`` is e^ε as an exact Fraction when ε is a sum of integer
    multiples of logs of rationals (``4 ln 2`` -> 16), else None.
    """
    if isinstance(value, bool):
        raise ParameterError(f"{what} must be a number, got {value!r}.")
    if isinstance(value, (int, float, Fraction)) or hasattr(value, "__float__") and \
            not isinstance(value, str):
        try:
            eps = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ParameterError(f"cannot read {what} {value!r} as a number.") from None
        return EpsilonText(f"{eps:g}", _check_eps(eps, value, what))
    text = str(value).strip()
    src = _SPACED_LN.sub(r"\1(\2)", text)
    src = _IMPLICIT.sub(r"\1*\2", src)
    tree = check_expression(src, what, functions=("ln", "log"), shown=text)
    form = _log_form(tree, text, what)
    try:
        eps = float(form[0]) + sum(float(c) * _log(q) for q, c in form[1].items())
    except OverflowError:
        eps = math.inf
    _check_eps(eps, text, what)
    factor = None
    if form[0] == 0 and all(c.denominator == 1 and abs(c) <= MAX_POWER
                            for c in form[1].values()):
        factor = Fraction(1)
        for q, c in form[1].items():
            factor *= q ** int(c)
        if factor <= 1:
            factor = None
    return EpsilonText(text, eps, factor)


def _check_eps(eps: float, shown: Any, what: str) -> float:
    if not (eps > 0 and math.isfinite(eps)):
        raise ParameterError(f"{what} must be a positive finite number, got {shown!r}.")
    if eps > MAX_EPSILON:
        raise ParameterError(f"{what} {shown!r} is {eps:.3g}, above {MAX_EPSILON:g} (e^ε must "
                             "be a finite number); give a smaller epsilon.")
    return eps


def _log(q: Fraction) -> float:
    return math.log(q.numerator) - math.log(q.denominator)


def _log_form(node: ast.AST, text: str, what: str) -> tuple[Fraction, dict]:
    """``node`` as r + sum_q c_q ln(q) with rationals r, c_q and q > 0 (exact)."""
    def bad(reason: str) -> ParameterError:
        return ParameterError(f"cannot read {what} {text[:60]!r}: {reason}.")

    def rational(form: tuple[Fraction, dict]) -> Fraction | None:
        return form[0] if not form[1] else None

    def walk(n: ast.AST) -> tuple[Fraction, dict]:
        if isinstance(n, ast.Constant):
            return literal(n.value), {}
        if isinstance(n, ast.Name):
            raise bad(f"unknown name {n.id!r}; write a number such as 0.5 or ln(2)")
        if isinstance(n, ast.UnaryOp):
            r, t = walk(n.operand)
            return (-r, {q: -c for q, c in t.items()}) if isinstance(n.op, ast.USub) else (r, t)
        if isinstance(n, ast.Call):
            arg = rational(walk(n.args[0]))
            if arg is None or arg <= 0:
                raise bad("ln needs a positive rational number")
            return Fraction(0), ({arg: Fraction(1)} if arg != 1 else {})
        assert isinstance(n, ast.BinOp)
        a, b = walk(n.left), walk(n.right)
        if isinstance(n.op, (ast.Add, ast.Sub)):
            s = 1 if isinstance(n.op, ast.Add) else -1
            terms = dict(a[1])
            for q, c in b[1].items():
                terms[q] = terms.get(q, Fraction(0)) + s * c
            return a[0] + s * b[0], {q: c for q, c in terms.items() if c}
        if isinstance(n.op, ast.Mult):
            ra, rb = rational(a), rational(b)
            if ra is None and rb is None:
                raise bad("a product of two logarithms is not supported")
            k, other = (ra, b) if ra is not None else (rb, a)
            return k * other[0], {q: k * c for q, c in other[1].items() if k * c}
        if isinstance(n.op, ast.Div):
            rb = rational(b)
            if rb is None:
                raise bad("dividing by a logarithm is not supported")
            if rb == 0:
                raise bad("division by zero")
            return a[0] / rb, {q: c / rb for q, c in a[1].items()}
        ra = rational(a)  # Pow, exponent checked by check_expression
        if ra is None:
            raise bad("a power of a logarithm is not supported")
        return ra ** n.right.value, {}  # type: ignore[attr-defined]

    return walk(node)


__all__ = ["EpsilonText", "MAX_DEPTH", "MAX_EPSILON", "MAX_POWER", "MAX_RESULT_BYTES",
           "MAX_SPEC_BYTES", "check_depth", "check_expression", "decode_text", "literal",
           "load_json", "load_yaml", "parse_epsilon", "parse_rational", "power_count",
           "power_text", "read_text"]
