"""An elementwise op's maths, written once: its *scalar formula*.

Each elementwise op declares ``scalar``, a formula for one element in a small language
that every engine understands: Python expressions over the operands ``{0}``, ``{1}``,
float literals, ``+ - * /``, unary minus, and the functions ``exp log sqrt tanh fabs erf
power min max``. For example ``Sigmoid.scalar`` is
``"exp(min({0}, 0.0)) / (1.0 + exp(-fabs({0})))"``, overflow-free for any input.

The engines derive their code from it:

- chapter 07's CUDA fuser pastes it into a kernel (the kernel language *is* this language,
  with ``min``/``max`` of scalars and CUDA's math functions);
- on arrays (``array_function``) every name becomes an array function of numpy or cupy
  (``min`` is ``minimum``, ``fabs`` is ``abs``): the eager forward of a compound op, the
  reference the kernels are tested against;
- chapter 05's numpy fuser (``array_call``) writes the same translation with the result
  going into a preallocated buffer (``out=``).

Only ``erf`` needs code of its own on arrays (numpy has none): ``erf_array`` below, a
rational approximation as fast as a few ufunc passes and accurate to the dtype.

**Gradient formulas.** An elementwise op may also declare ``scalar_grad``: one formula per
operand for that operand's share of the gradient, in the same language with two more
names, ``{g}`` (the gradient of the op's result) and ``{out}`` (the result itself), and,
for the piecewise ops, comparisons (``>  <  ==  >=  <=``), ``&``, ``sign(x)`` and
``where(cond, a, b)``. ``Tanh.scalar_grad`` is ``("{g} * (1.0 - {out} * {out})",)``. They
say what the op's ``backward`` computes, op for op in the same order (a test holds them to
it), so that chapter 05's fuser can write a fused chain's whole backward as one generated
numpy function (``minitorch.jit.fused_backward``) instead of running each op's backward
in turn. ``fold`` works out the parts of a formula that are numbers alone (an operand
that is a number, such as the exponent of ``x ** 2.0``).
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: The formula's functions and operators, as array functions (numpy's names).
ARRAY_FUNCTIONS = {
    "exp": "exp",
    "log": "log",
    "sqrt": "sqrt",
    "tanh": "tanh",
    "fabs": "abs",
    "power": "power",
    "min": "minimum",
    "max": "maximum",
}
_OPERATORS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide"}


# W. J. Cody's rationals as Cephes writes them (ndtr.c), for float64: x * T(x^2) / U(x^2) for
# |x| <= 1, and 1 - exp(-x^2) * P(|x|) / Q(|x|) above (erfc(6) < 2^-55: past 6, erf is 1).
_CODY_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
           7.00332514112805075473e3, 5.55923013010394962768e4)  # fmt: skip
_CODY_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
           2.26290000613890934246e4, 4.92673942608635921086e4)  # fmt: skip
_CODY_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3,
           5.57535335369399327526e2)  # fmt: skip
_CODY_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)  # fmt: skip
# For float32: one rational in z = x^2 on [0, 4] (erf(4) rounds to 1 in float32), fitted to
# a relative error of 2.3e-9 and evaluated in float64, so that rounding once to float32
# lands within 1 ulp of math.erf: erf(x) = x * P(z) / Q(z), highest power first.
_ERF32_P = (-0.22313673884700652 / 16**6, 4.932473714741235 / 16**5, 24.928443602765217 / 16**4,
            15.781274535764245 / 16**3, 13.910210554212231 / 16**2, 2.9635953590571065 / 16,
            1.1283791684717444)  # fmt: skip
_ERF32_Q = (66.37071142305004 / 16**5, 85.80571453890572 / 16**4, 63.3692977402668 / 16**3,
            29.179488040774768 / 16**2, 7.9597524790746785 / 16, 1.0)  # fmt: skip
_ERF32_CHUNK = 32768  # elements per pass: the float64 scratch arrays stay in the L2 cache


def erf_array(m: Any, x: Any, out: Any = None) -> Any:
    """The error function on an array of module ``m`` (numpy or cupy), in ``x``'s dtype:
    within 1 ulp of ``math.erf`` for float32 (and float16/bfloat16, through float32), to
    float64 accuracy (Cody's rationals, a few ulp) otherwise; ``erf(+-0) = +-0``,
    ``erf(+-inf) = +-1``, NaN stays NaN. ``out``, if given, receives the result."""
    if m.__name__ == "numpy" and x.dtype.kind == "f" and x.dtype.itemsize <= 4:
        result = _erf_float32(x.astype(np.float32, copy=False)).astype(x.dtype, copy=False)
    else:
        result = _erf_float64(m, x.astype(m.float64, copy=False)).astype(x.dtype, copy=False)
    if out is None:
        return result
    m.copyto(out, result)
    return out


def _horner(m: Any, z: Any, coefficients: tuple, out: Any) -> Any:
    """``out = P(z)`` (coefficients highest power first), with no temporaries."""
    m.multiply(z, coefficients[0], out=out)
    for c in coefficients[1:-1]:
        out += c
        out *= z
    out += coefficients[-1]
    return out


def _erf_float32(x: Any) -> Any:
    """float32 erf, a chunk at a time: about 26 passes over a cache-sized float64 chunk."""
    flat = x.reshape(-1)
    result = np.empty(flat.shape, np.float32)
    n = min(flat.size, _ERF32_CHUNK)
    if n == 0:
        return result.reshape(x.shape)
    a, z, p, q = (np.empty(n) for _ in range(4))
    for start in range(0, flat.size, n):
        chunk = flat[start : start + n]
        k = chunk.size
        ak, zk = a[:k], z[:k]
        np.maximum(chunk, -4.0, out=ak)  # (NaN stays NaN; inf becomes 4, whose erf is 1)
        np.minimum(ak, 4.0, out=ak)
        np.multiply(ak, ak, out=zk)
        pk = _horner(np, zk, _ERF32_P, p[:k])
        pk *= ak
        np.divide(pk, _horner(np, zk, _ERF32_Q, q[:k]), out=result[start : start + k],
                  casting="same_kind")  # fmt: skip
    return result.reshape(x.shape)


def _erf_float64(m: Any, x: Any) -> Any:
    """float64 erf by Cody's two rationals (clamped, so that no branch overflows)."""
    small = m.clip(x, -1.0, 1.0)
    z = small * small
    inner = (
        small * _horner(m, z, _CODY_T, m.empty_like(z)) / _horner(m, z, _CODY_U, m.empty_like(z))
    )
    a = m.minimum(m.abs(x), 6.0)
    erfc = m.exp(-a * a) * _horner(m, a, _CODY_P, m.empty_like(a))
    erfc /= _horner(m, a, _CODY_Q, m.empty_like(a))
    return m.where(m.abs(x) <= 1.0, inner, m.sign(x) * (1.0 - erfc))


def arity(formula: str) -> int:
    """How many operands a formula reads (``{0}`` only: 1; ``{1}`` too: 2)."""
    return 2 if "{1}" in formula else 1


_COMPARISONS = {
    ast.Gt: "greater",
    ast.Lt: "less",
    ast.Eq: "equal",
    ast.GtE: "greater_equal",
    ast.LtE: "less_equal",
}

#: The array functions only gradient formulas use, and those whose result is a fresh array
#: (bools, or numpy.where, which has no ``out=``) rather than one written into a buffer.
GRADIENT_ONLY = frozenset({*_COMPARISONS.values(), "logical_and", "where", "sign"})
FRESH_RESULT = frozenset({*_COMPARISONS.values(), "logical_and", "where"})


def formula_call(node: ast.AST) -> tuple[str, list[ast.AST]]:
    """The array function (numpy's name; ``erf`` for :func:`erf_array`) that one node of a
    formula calls, and its operands: ``a + b`` is ``("add", [a, b])``. Every engine that
    writes array code walks a formula with this, so they all read the same language."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return "negative", [node.operand]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)], [node.left, node.right]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return "logical_and", [node.left, node.right]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
        return _COMPARISONS[type(node.ops[0])], [node.left, node.comparators[0]]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        if name in ("erf", "where", "sign"):
            return name, list(node.args)
        if name in ARRAY_FUNCTIONS:
            return ARRAY_FUNCTIONS[name], list(node.args)
    raise ValueError(f"scalar formula: {ast.unparse(node)!r} is not in the formula language")


def _translate(node: ast.AST, module: str, out: str | None) -> str:
    """Array code for one node of a forward formula; ``out`` (if given) receives the
    outermost result."""
    tail = f", out={out}" if out else ""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return repr(float(node.value)) if not out else f"{module}.copyto({out}, {node.value!r})"
    if isinstance(node, ast.Name):
        return node.id if not out else f"{module}.positive({node.id}{tail})"
    function, operands = formula_call(node)
    if function in GRADIENT_ONLY:
        raise ValueError(f"scalar formula: {ast.unparse(node)!r} belongs to gradient formulas")
    args = ", ".join(_translate(a, module, None) for a in operands)
    if function == "erf":
        return f"_erf({module}, {args}{tail})"
    return f"{module}.{function}({args}{tail})"


def array_call(formula: str, operands: list[str], module: str = "np", out: str = "") -> str:
    """One line of array code computing ``formula`` on the named ``operands`` (arrays or
    number literals), writing into ``out`` when it is given: ``np.exp(x0, out=s0)``."""
    tree = ast.parse(formula.format(*operands), mode="eval").body
    return _translate(tree, module, out or None)


_FOLD_FUNCTIONS = {
    "exp": math.exp,
    "log": lambda x: math.log(x) if x > 0 else math.nan,  # (as eager's 2 ** x takes it)
    "sqrt": lambda x: math.sqrt(x) if x >= 0 else math.nan,
    "tanh": math.tanh,
    "fabs": abs,
    "power": lambda a, b: float(a) ** b,
    "min": min,
    "max": max,
    "sign": lambda x: float((x > 0) - (x < 0)),
}


def fold(node: ast.AST) -> ast.AST:
    """``node`` with every sub-formula of numbers alone replaced by its value, and a
    ``where`` or ``&`` whose condition is a known bool reduced to the branch it takes."""
    if isinstance(node, ast.UnaryOp):
        node.operand = fold(node.operand)
    elif isinstance(node, ast.BinOp):
        node.left, node.right = fold(node.left), fold(node.right)
        if isinstance(node.op, ast.BitAnd):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if isinstance(a, ast.Constant):
                    return b if a.value else ast.Constant(False)
    elif isinstance(node, ast.Compare):
        node.left, node.comparators = fold(node.left), [fold(c) for c in node.comparators]
    elif isinstance(node, ast.Call):
        node.args = [fold(a) for a in node.args]
        if node.func.id == "where" and isinstance(node.args[0], ast.Constant):
            return node.args[1] if node.args[0].value else node.args[2]
        if node.func.id == "power" and _is_number(node.args[1], 1.0):
            return node.args[0]  # (x ** 1 is x, exactly)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        if _is_number(node.right, 1.0):
            return node.left  # (x * 1 and x / 1 are x, exactly)
        if isinstance(node.op, ast.Mult) and _is_number(node.left, 1.0):
            return node.right
    if not all(isinstance(n, ast.Constant) for n in _leaves(node)):
        return node
    try:
        value = eval(  # numbers, operators and the few math functions above, nothing else
            compile(ast.fix_missing_locations(ast.Expression(node)), "<folded>", "eval"),
            {"__builtins__": {}},
            dict(_FOLD_FUNCTIONS),
        )
    except (ArithmeticError, ValueError, TypeError):
        return node  # (left to the arrays: inf or nan there, as in eager)
    return ast.Constant(value if isinstance(value, bool) else float(value))


def _is_number(node: ast.AST, value: float) -> bool:
    return (
        isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value == value
    )


def _leaves(node: ast.AST) -> list[ast.AST]:
    """The operands at the bottom of a formula (names and numbers)."""
    if isinstance(node, (ast.Constant, ast.Name)):
        return [node]
    if isinstance(node, ast.UnaryOp):
        return _leaves(node.operand)
    if isinstance(node, ast.BinOp):
        return _leaves(node.left) + _leaves(node.right)
    if isinstance(node, ast.Compare):
        return _leaves(node.left) + [x for c in node.comparators for x in _leaves(c)]
    if isinstance(node, ast.Call):
        return [x for a in node.args for x in _leaves(a)]
    return [node]


@functools.cache
def array_function(formula: str) -> Callable[..., Any]:
    """``f(m, *arrays)``: the formula on arrays of module ``m`` (numpy or cupy)."""
    names = [f"x{i}" for i in range(arity(formula))]
    source = f"def scalar_formula(m, {', '.join(names)}):\n"
    source += f"    return {array_call(formula, names, 'm')}\n"
    namespace: dict = {"_erf": erf_array}
    exec(compile(source, f"<scalar formula {formula}>", "exec"), namespace)
    return namespace["scalar_formula"]
