"""``jit.script``: compile a typed subset of Python, from its AST, into a graph.

Where tracing runs the code once and records what happened, scripting reads the code
and translates every statement, so control flow survives: an ``if`` on a tensor becomes
an ``If`` node with both branches as sub-blocks, a ``for i in range(n)`` or ``while`` a
``Loop`` node whose body is a sub-block, carrying the variables the body updates.

The subset: arithmetic and tensor ops, calls to minitorch functions and Tensor methods,
``if``/``else`` (on tensors or Python values), ``for`` over ``range`` (or, unrolled, over
a module's submodules), ``while``, local variables, ``raise``, calls to other functions
and submodules (compiled and inlined). Parameters are Tensors unless annotated ``int``,
``float`` or ``bool``. Values known at compile time (``self.training``, module settings,
literals) are *static*: they are computed while compiling, as TorchScript's constant
propagation does, and an ``if`` on one keeps only the branch taken.

Anything else is a ``ScriptError`` that shows the source line and says what is not
supported.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
import textwrap
import types
from typing import Any

from .. import ops as _ops
from ..nn import Module
from ..nn import functional as _functional
from ..tensor import Tensor
from .ir import Block, Graph, Value, inline_graph
from .module import ScriptFunction, ScriptModule
from .ops import ELEMENTWISE, function_for, library_call


class ScriptError(RuntimeError):
    """Code ``jit.script`` can't compile; the message shows the line and what is wrong.
    A RuntimeError, as PyTorch's scripting errors are (``except RuntimeError`` catches it);
    ``lineno`` is the line in the file."""


class Static:
    """A value known while compiling (a number, a module, a function, ...)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_BINARY = {
    ast.Add: ("add", "prim.add", operator.add),
    ast.Sub: ("sub", "prim.sub", operator.sub),
    ast.Mult: ("mul", "prim.mul", operator.mul),
    ast.Div: ("div", "prim.div", operator.truediv),
    ast.Pow: ("pow", "prim.pow", operator.pow),
    ast.MatMult: ("matmul", None, operator.matmul),
    ast.FloorDiv: (None, "prim.floordiv", operator.floordiv),
    ast.Mod: (None, "prim.mod", operator.mod),
    ast.BitAnd: ("bitwise_and", None, operator.and_),  # masks: (x > 0) & (y < 1)
    ast.BitOr: ("bitwise_or", None, operator.or_),
    ast.BitXor: ("bitwise_xor", None, operator.xor),
}
_COMPARE = {
    ast.Lt: ("lt", "prim.lt", operator.lt),
    ast.LtE: ("le", "prim.le", operator.le),
    ast.Gt: ("gt", "prim.gt", operator.gt),
    ast.GtE: ("ge", "prim.ge", operator.ge),
    ast.Eq: ("eq", "prim.eq", operator.eq),
    ast.NotEq: ("ne", "prim.ne", operator.ne),
}
_SCALAR_TYPES = {"int": "int", "float": "float", "bool": "bool", "str": "str"}
#: Tensor methods and attributes whose result is a Python value, not a tensor.
_RESULT_TYPES = {"item": "float", "dim": "int", "numel": "int", "ndim": "int", "shape": "tuple"}


def _function_ops() -> dict[Any, Any]:
    """minitorch functions that are exactly one elementwise Function (so fusion sees them)."""
    table = {}
    for name in ELEMENTWISE:
        cls = function_for(name)
        for module in (_ops, _functional):
            fn = getattr(module, name, None)
            if cls is not None and inspect.isfunction(fn):
                table[fn] = cls
    return table


class _Compiler:
    def __init__(self, root: Any) -> None:
        self.graph = Graph()
        self.block: Block = self.graph
        self.attrs: dict[str, Tensor] = {}
        self.paths = {id(m): name for name, m in root.named_modules()} if root is not None else {}
        self.function_ops = _function_ops()
        self.source_lines: list[str] = []
        self.filename = "<unknown>"
        self.first_line = 1
        self.depth = 0
        self.optional: set[Value] = set()  # arguments that may be None (Optional)

    # --- errors ---------------------------------------------------------------------------
    def error(self, node: ast.AST, what: str) -> ScriptError:
        line = getattr(node, "lineno", 1)
        text = self.source_lines[line - 1] if 0 < line <= len(self.source_lines) else ""
        col = getattr(node, "col_offset", 0)
        where = f'  File "{self.filename}", line {line + self.first_line - 1}'
        pointer = " " * col + "~" * max(1, len(text.rstrip()) - col) + " <--- HERE"
        err = ScriptError(f"{what}:\n{where}\n    {text.rstrip()}\n    {pointer}")
        err.lineno = line + self.first_line - 1
        return err

    # --- emitting -------------------------------------------------------------------------
    def emit(self, op: str, args: tuple, kwargs: dict | None = None, type_: str = "Tensor",
             target: Any = None, outputs: int = 1) -> Any:  # fmt: skip
        args = tuple(self.materialize_nested(a) for a in args)
        kwargs = {k: self.materialize_nested(v) for k, v in (kwargs or {}).items()}
        outs = [self.graph.new_value(type=type_) for _ in range(outputs)]
        if target is None:
            from .ops import resolve

            target = resolve(op)
        self.graph.create(op, args, kwargs, outs, target=target, block=self.block)
        return outs[0] if outputs == 1 else outs

    def materialize_nested(self, x: Any) -> Any:
        """Statics become plain constants inside arguments; Values stay."""
        if isinstance(x, Static):
            return x.value
        if isinstance(x, tuple):
            return tuple(self.materialize_nested(i) for i in x)
        if isinstance(x, list):
            return [self.materialize_nested(i) for i in x]
        return x

    def value(self, x: Any, node: ast.AST) -> Value:
        """A graph Value for ``x`` (a constant node for a static number or tensor)."""
        if isinstance(x, Value):
            return x
        if isinstance(x, Static) and isinstance(x.value, (int, float, bool, str, Tensor)):
            out = self.graph.new_value(x.value, "const")
            self.graph.create("constant", (x.value,), outputs=[out], block=self.block)
            return out
        raise self.error(node, f"this value ({_describe(x)}) can't be used here at run time")

    # --- functions ------------------------------------------------------------------------
    def compile_function(self, fn: Any, args: list[Any], self_obj: Any = None) -> Any:
        """Compile ``fn``'s body with ``args`` bound to its parameters; returns its result."""
        self.depth += 1
        if self.depth > 50:
            raise ScriptError(f"jit.script: recursion too deep while compiling {fn.__qualname__}")
        saved = (self.source_lines, self.filename, self.first_line)
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as err:
            raise ScriptError(f"jit.script: can't read the source of {fn!r}: {err}") from None
        source = textwrap.dedent("".join(lines))
        self.source_lines = source.splitlines()
        self.filename, self.first_line = inspect.getsourcefile(fn) or "<unknown>", first
        tree = ast.parse(source)
        fdef = tree.body[0]
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise self.error(fdef, "jit.script compiles functions and Modules")
        scope = _Scope(fn, self_obj)
        variadic = fdef.args.vararg or fdef.args.kwarg
        if variadic is not None:
            star = "*" if variadic is fdef.args.vararg else "**"
            raise self.error(
                fdef,
                f"{fn.__name__} takes {star}{variadic.arg}: TorchScript compiles functions with "
                "a fixed list of arguments only (name each one, or pass a tuple)",
            )
        params = [a.arg for a in fdef.args.args]
        if self_obj is not None:
            scope.vars[params[0]] = Static(self_obj)
            params = params[1:]
        if len(args) != len(params):
            raise self.error(fdef, f"{fn.__name__} takes {len(params)} arguments, got {len(args)}")
        for name, a in zip(params, args, strict=True):
            scope.vars[name] = a
        body = self.lift_returns([s for s in fdef.body if not _is_docstring(s)])
        result = self.statements(body, scope, top=True)
        self.source_lines, self.filename, self.first_line = saved
        self.depth -= 1
        return result

    # --- statements -----------------------------------------------------------------------
    def statements(self, stmts: list[ast.stmt], scope: _Scope, top: bool = False) -> Any:
        for i, stmt in enumerate(stmts):
            last = i == len(stmts) - 1
            if isinstance(stmt, ast.Return):
                if not top or not last:
                    raise self.error(
                        stmt,
                        "return is supported only as the last statement of the function "
                        "(assign to a variable in each branch and return it at the end)",
                    )
                return Static(None) if stmt.value is None else self.expr(stmt.value, scope)
            if top and last and isinstance(stmt, ast.If) and _ends([stmt]):
                return self.returning_if(stmt, scope)
            self.statement(stmt, scope)
            if top and last and isinstance(stmt, ast.Raise):
                return _NO_RETURN
        return Static(None)

    # --- early returns ----------------------------------------------------------------
    def lift_returns(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        """Move what follows an ``if`` that returns into its branches, so every ``return``
        ends its branch: ``if c: return a`` / ``return b`` becomes ``if c: return a else:
        return b`` (TorchScript's early-return transform). A return inside a loop is refused
        here, at compile time, naming its line."""
        if not any(isinstance(n, ast.Return) for st in stmts for n in ast.walk(st)):
            return stmts
        if not _ends(stmts):
            stmts = [*stmts, ast.copy_location(ast.Return(value=None), stmts[-1])]
        return self._lift(stmts)

    def _lift(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, stmt in enumerate(stmts):
            out.append(stmt)
            if isinstance(stmt, (ast.Return, ast.Raise)):
                return out  # what follows never runs
            inner = [n for n in ast.walk(stmt) if isinstance(n, ast.Return)]
            if not inner:
                continue
            if isinstance(stmt, (ast.For, ast.While)):
                raise self.error(
                    inner[0],
                    "return inside a loop is not supported by jit.script (assign the result "
                    "to a variable, leave the loop, and return after it)",
                )
            if isinstance(stmt, ast.If):
                rest = stmts[i + 1 :]
                lifted = ast.If(
                    test=stmt.test,
                    body=self._lift(stmt.body + rest),
                    orelse=self._lift(stmt.orelse + rest),
                )
                out[-1] = ast.copy_location(lifted, stmt)
                return out
            raise self.error(inner[0], "return is not supported inside this statement")
        return out

    def returning_if(self, stmt: ast.If, scope: _Scope) -> Any:
        """An ``if`` each of whose branches ends in ``return`` (or ``raise``): an ``If``
        node whose outputs are the returned values."""
        cond = self.expr(stmt.test, scope)
        if isinstance(cond, Static):  # known now: compile only the branch taken
            return self.statements(stmt.body if cond.value else stmt.orelse, scope, top=True)
        branches = []  # (block, body, result, values or None when the branch raises)
        for body in (stmt.body, stmt.orelse):
            block, inner = Block(), scope.child()
            outer, self.block = self.block, block
            result = self.statements(body, inner, top=True)
            values = None
            if result is not _NO_RETURN and not _is_none(result):
                where = _last_return(body) or stmt
                values = [self.value(x, where) for x in _as_items(result)]
            self.block = outer
            branches.append((block, body, result, values))
        returning = [b for b in branches if b[2] is not _NO_RETURN]
        for (_, body0, result0, values0), (_, body1, result1, values1) in zip(
            returning, returning[1:], strict=False
        ):
            kind0, kind1 = _kind(result0, values0), _kind(result1, values1)
            if kind0 != kind1:
                first = (_last_return(body0) or stmt).lineno + self.first_line - 1
                raise self.error(
                    _last_return(body1) or stmt,
                    f"Previous return statement (line {first}) returned a value of type "
                    f"{kind0} but this return statement returns a value of type {kind1}",
                )
        node = self.graph.create(
            "If", (self.value(cond, stmt.test),), block=self.block, target="If"
        )
        node.blocks = [b[0] for b in branches]
        if not returning:
            return _NO_RETURN
        result0, values0 = returning[0][2], returning[0][3]
        if values0 is None:  # every branch returns None
            return Static(None)
        outs = []
        for k, v in enumerate(values0):
            out = self.graph.new_value(type=v.type)
            same = {(b[3][k].dtype, b[3][k].shape) for b in returning}
            if v.type == "Tensor" and len(same) == 1 and len(returning) == 2:
                out.dtype, out.shape = v.dtype, v.shape
            out.node = node
            outs.append(out)
        node.outputs = outs
        for block, _, _, values in branches:
            if values is None:  # this branch raises: its outputs are never read
                outer, self.block = self.block, block
                values = [self.emit("prim.uninitialized", (), type_=o.type) for o in outs]
                self.block = outer
            block.outputs = list(values)
        return tuple(outs) if isinstance(result0, tuple) else outs[0]

    def statement(self, stmt: ast.stmt, scope: _Scope) -> None:
        if isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value, scope)
            for target in stmt.targets:
                self.assign(target, value, scope)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.expr(stmt.value, scope), scope)
        elif isinstance(stmt, ast.AugAssign):
            current = self.expr(_load(stmt.target), scope)
            value = self.binary(stmt.op, current, self.expr(stmt.value, scope), stmt)
            self.assign(stmt.target, value, scope)
        elif isinstance(stmt, ast.If):
            self.if_statement(stmt, scope)
        elif isinstance(stmt, ast.For):
            self.for_statement(stmt, scope)
        elif isinstance(stmt, ast.While):
            self.while_statement(stmt, scope)
        elif isinstance(stmt, ast.Expr):
            if not _is_docstring(stmt):
                self.expr(stmt.value, scope)
        elif isinstance(stmt, ast.Raise):
            self.raise_statement(stmt, scope)
        elif isinstance(stmt, ast.Pass):
            pass
        else:
            kind = type(stmt).__name__
            raise self.error(
                stmt, f"{_STATEMENT_NAMES.get(kind, kind)} is not supported by jit.script"
            )

    def assign(self, target: ast.expr, value: Any, scope: _Scope) -> None:
        if isinstance(target, ast.Name):
            scope.vars[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items, strict=True):
                self.assign(t, v, scope)
        else:
            raise self.error(target, "only assignments to local variable names are supported")

    def unpack(self, value: Any, n: int, node: ast.AST) -> list[Any]:
        if isinstance(value, Static):
            value = tuple(Static(v) for v in value.value)
        if isinstance(value, tuple):
            if len(value) != n:
                raise self.error(node, f"can't unpack {len(value)} values into {n} names")
            return list(value)
        return [self.emit("prim.getitem", (value, i), type_="Tensor") for i in range(n)]

    def raise_statement(self, stmt: ast.Raise, scope: _Scope) -> None:
        kind, message = "RuntimeError", Static("")
        exc = stmt.exc
        if isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name):
            kind = exc.func.id
            if exc.args:
                message = self.expr(exc.args[0], scope)
        elif isinstance(exc, ast.Name):
            kind = exc.id
        self.emit("prim.raise", (kind, message), outputs=0)

    def if_statement(self, stmt: ast.If, scope: _Scope) -> None:
        cond = self.expr(stmt.test, scope)
        if isinstance(cond, Static):  # known now: compile only the branch taken
            self.statements(stmt.body if cond.value else stmt.orelse, scope)
            return
        branches = []
        for body in (stmt.body, stmt.orelse):
            inner = scope.child()
            block = Block()
            outer, self.block = self.block, block
            self.statements(body, inner)
            self.block = outer
            branches.append((block, inner))
        assigned = [n for n in _assigned_names(stmt.body + stmt.orelse) if not n.startswith("_")]
        merged = []
        for name in dict.fromkeys(assigned):
            in_both = all(name in s.vars or scope.lookup_var(name) is not None for _, s in branches)
            if in_both:
                merged.append(name)
        outs = []
        for name in merged:
            values = []
            for block, inner in branches:
                v = inner.vars.get(name, scope.lookup_var(name))
                outer, self.block = self.block, block
                values.append(self.value(v, stmt))
                self.block = outer
            for (block, _), v in zip(branches, values, strict=True):
                block.outputs.append(v)
            a, b = values
            if a.type != b.type:
                raise self._type_mismatch(stmt, name, a.type, b.type)
            out = self.graph.new_value(type=a.type)
            if a.type == "Tensor" and (a.dtype, a.shape) == (b.dtype, b.shape):
                out.dtype, out.shape = a.dtype, a.shape
            outs.append(out)
        node = self.graph.create(
            "If", (self.value(cond, stmt.test),), outputs=outs, block=self.block, target="If"
        )
        node.blocks = [b for b, _ in branches]
        for name, out in zip(merged, outs, strict=True):
            scope.vars[name] = out

    def _type_mismatch(self, stmt: ast.If, name: str, true_type: str, false_type: str) -> Any:
        """TorchScript's error for a variable that each branch gives another type."""

        def line(body: list[ast.stmt]) -> str:
            found = [n.lineno for n in _assignments(body, name)]
            return f"line {found[-1] + self.first_line - 1}" if found else "before the if"

        return self.error(
            stmt,
            f"Type mismatch: {name} is set to type {true_type} in the true branch "
            f"({line(stmt.body)}) and type {false_type} in the false branch "
            f"({line(stmt.orelse)}); a variable keeps one type in TorchScript: make both "
            "branches give it the same type",
        )

    def _loop(self, stmt: ast.stmt, scope: _Scope, trips: Any, index_name: str | None,
              start: Any, cond_expr: ast.expr | None) -> None:  # fmt: skip
        names = [
            n for n in dict.fromkeys(_assigned_names(stmt.body)) if scope.lookup_var(n) is not None
        ]
        init = [self.value(scope.lookup_var(n), stmt) for n in names]
        if cond_expr is not None:
            cond0 = self.value(self.expr(cond_expr, scope), cond_expr)
        else:
            cond0 = True
        body = Block()
        i = self.graph.new_value(type="int", name="i")
        carried = [
            self.graph.new_value(type=v.type, name=n) for n, v in zip(names, init, strict=True)
        ]
        body.inputs = [i, *carried]
        inner = scope.child()
        inner.vars.update(zip(names, carried, strict=True))
        outer, self.block = self.block, body
        if index_name is not None:
            inner.vars[index_name] = (
                i if _is_zero(start) else self.binary(ast.Add(), start, i, stmt)
            )
        self.statements(stmt.body, inner)
        next_cond = (
            True if cond_expr is None else self.value(self.expr(cond_expr, inner), cond_expr)
        )
        body.outputs = [self.value(Static(next_cond), stmt) if next_cond is True else next_cond]
        body.outputs += [self.value(inner.vars[n], stmt) for n in names]
        self.block = outer
        outs = [self.graph.new_value(type=v.type, name=n) for n, v in zip(names, init, strict=True)]
        node = self.graph.create(
            "Loop", (trips, cond0, *init), outputs=outs, block=self.block, target="Loop"
        )
        node.blocks = [body]
        scope.vars.update(zip(names, outs, strict=True))

    def for_statement(self, stmt: ast.For, scope: _Scope) -> None:
        if stmt.orelse:
            raise self.error(stmt, "for ... else is not supported by jit.script")
        it = stmt.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            if not isinstance(stmt.target, ast.Name):
                raise self.error(stmt.target, "a for loop over range needs one loop variable")
            bounds = [self.expr(a, scope) for a in it.args]
            if len(bounds) == 3 or it.keywords or not bounds:
                raise self.error(it, "only range(stop) and range(start, stop) are supported")
            start, stop = (Static(0), bounds[0]) if len(bounds) == 1 else bounds
            trips = stop if _is_zero(start) else self.binary(ast.Sub(), stop, start, it)
            trips = trips.value if isinstance(trips, Static) else trips
            self._loop(stmt, scope, trips, stmt.target.id, start, None)
            return
        seq = self.expr(it, scope)
        if isinstance(seq, Static):  # a static sequence (submodules, a tuple): unroll
            for item in list(seq.value):
                self.assign(stmt.target, Static(item), scope)
                self.statements(stmt.body, scope)
            return
        raise self.error(
            it, "for loops run over range(...) or over a sequence known at compile time"
        )

    def while_statement(self, stmt: ast.While, scope: _Scope) -> None:
        if stmt.orelse:
            raise self.error(stmt, "while ... else is not supported by jit.script")
        tested = {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}
        cond = self.expr(stmt.test, scope)
        if isinstance(cond, Static) and not tested & set(_assigned_names(stmt.body)):
            if cond.value:
                raise self.error(stmt.test, "this while loop's condition is always true")
            return
        self._loop(stmt, scope, None, None, Static(0), stmt.test)

    # --- expressions ----------------------------------------------------------------------
    def expr(self, node: ast.expr, scope: _Scope) -> Any:
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            kind = type(node).__name__
            raise self.error(
                node, f"{_EXPRESSION_NAMES.get(kind, kind)} is not supported by jit.script"
            )
        return method(node, scope)

    def expr_Constant(self, node: ast.Constant, scope: _Scope) -> Any:  # noqa: N802
        return Static(node.value)

    def expr_Name(self, node: ast.Name, scope: _Scope) -> Any:  # noqa: N802
        found = scope.lookup(node.id)
        if found is _MISSING:
            raise self.error(
                node, f"undefined name {node.id!r} (or one defined only in one branch)"
            )
        return found

    def expr_Tuple(self, node: ast.Tuple, scope: _Scope) -> Any:  # noqa: N802
        items = tuple(self.expr(e, scope) for e in node.elts)
        if all(isinstance(i, Static) for i in items):
            return Static(tuple(i.value for i in items))
        return items

    expr_List = expr_Tuple  # noqa: N815

    def expr_Attribute(self, node: ast.Attribute, scope: _Scope) -> Any:  # noqa: N802
        base = self.expr(node.value, scope)
        if isinstance(base, Static):
            obj = base.value
            try:
                value = getattr(obj, node.attr)
            except AttributeError:
                raise self.error(
                    node, f"{_describe(base)} has no attribute {node.attr!r}"
                ) from None
            if isinstance(value, Tensor) and isinstance(obj, Module):
                return self.module_tensor(obj, node.attr, value)
            if isinstance(value, Tensor):
                return self.value(Static(value), node)
            return Static(value)
        if isinstance(base, Value):
            return self.emit(
                "prim.attr", (base, node.attr), type_=_RESULT_TYPES.get(node.attr, "Tensor")
            )
        raise self.error(node, f"can't read attribute {node.attr!r} of {_describe(base)}")

    def module_tensor(self, module: Module, attr: str, t: Tensor) -> Value:
        """A parameter/buffer of a module: a get_attr node (a plain tensor: a constant)."""
        registered = attr in module._parameters or attr in module._buffers
        if not registered or id(module) not in self.paths:
            return self.value(Static(t), ast.Constant(0))
        prefix = self.paths[id(module)]
        name = f"{prefix}.{attr}" if prefix else attr
        self.attrs[name] = t
        out = self.graph.new_value(t, f"self.{name}")
        self.graph.create("get_attr", (name,), outputs=[out], block=self.block, target="get_attr")
        return out

    def binary(self, op: ast.operator, a: Any, b: Any, node: ast.AST) -> Any:
        if type(op) not in _BINARY:
            raise self.error(node, f"the operator {type(op).__name__} is not supported")
        tensor_op, prim, fn = _BINARY[type(op)]
        if isinstance(a, Static) and isinstance(b, Static):
            return Static(fn(a.value, b.value))
        if _is_tensor(a) or _is_tensor(b):
            if tensor_op is None:
                raise self.error(node, f"{type(op).__name__} on tensors is not supported")
            return self.emit(tensor_op, (a, b))
        if prim is None:
            raise self.error(node, f"{type(op).__name__} needs tensors")
        return self.emit(prim, (a, b), type_=_scalar_type(a, b))

    def expr_BinOp(self, node: ast.BinOp, scope: _Scope) -> Any:  # noqa: N802
        return self.binary(node.op, self.expr(node.left, scope), self.expr(node.right, scope), node)

    def expr_UnaryOp(self, node: ast.UnaryOp, scope: _Scope) -> Any:  # noqa: N802
        x = self.expr(node.operand, scope)
        if isinstance(node.op, ast.UAdd):
            return x
        if isinstance(x, Static):
            fns = {ast.USub: operator.neg, ast.Not: operator.not_, ast.Invert: operator.invert}
            return Static(fns[type(node.op)](x.value))
        if isinstance(node.op, ast.USub):
            return (
                self.emit("neg", (x,))
                if _is_tensor(x)
                else self.emit("prim.neg", (x,), type_=x.type)
            )
        if isinstance(node.op, ast.Not):
            return self.emit("prim.not", (x,), type_="bool")
        return self.emit("bitwise_not", (x,))  # ~ on a tensor: bitwise (logical on bools)

    def expr_Compare(self, node: ast.Compare, scope: _Scope) -> Any:  # noqa: N802
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons (a < b < c) are not supported")
        a, b = self.expr(node.left, scope), self.expr(node.comparators[0], scope)
        op = node.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)):
            value, other = (a, b) if isinstance(b, Static) else (b, a)
            if value in self.optional and isinstance(other, Static) and other.value is None:
                # an argument that may be None (its default is): decided when it runs
                found = self.emit("prim.is_none", (value,), type_="bool")
                return found if isinstance(op, ast.Is) else self.emit("prim.not", (found,), "bool")
            if not (isinstance(a, Static) and isinstance(b, Static)):
                return Static(isinstance(op, ast.IsNot))  # a run-time Value is never None
            same = a.value is b.value
            return Static(same if isinstance(op, ast.Is) else not same)
        if isinstance(op, (ast.In, ast.NotIn)):
            if isinstance(a, Static) and isinstance(b, Static):
                found = a.value in b.value
                return Static(found if isinstance(op, ast.In) else not found)
            found = self.emit("prim.contains", (b, a), type_="bool")
            return (
                found if isinstance(op, ast.In) else self.emit("prim.not", (found,), type_="bool")
            )
        tensor_op, prim, fn = _COMPARE[type(op)]
        if isinstance(a, Static) and isinstance(b, Static):
            return Static(fn(a.value, b.value))
        if _is_tensor(a) or _is_tensor(b):
            return self.emit(tensor_op, (a, b))
        return self.emit(prim, (a, b), type_="bool")

    def expr_BoolOp(self, node: ast.BoolOp, scope: _Scope) -> Any:  # noqa: N802
        is_and = isinstance(node.op, ast.And)
        result = self.expr(node.values[0], scope)
        for value_node in node.values[1:]:
            if isinstance(result, Static):
                if bool(result.value) != is_and:  # short-circuits now
                    return result
                result = self.expr(value_node, scope)
                continue
            other = self.expr(value_node, scope)
            result = self.emit("prim.and" if is_and else "prim.or", (result, other), type_="bool")
        return result

    def expr_IfExp(self, node: ast.IfExp, scope: _Scope) -> Any:  # noqa: N802
        cond = self.expr(node.test, scope)
        if isinstance(cond, Static):
            return self.expr(node.body if cond.value else node.orelse, scope)
        stmt = ast.If(
            test=node.test,
            body=[ast.Assign(targets=[ast.Name("__ifexp", ast.Store())], value=node.body)],
            orelse=[ast.Assign(targets=[ast.Name("__ifexp", ast.Store())], value=node.orelse)],
        )
        ast.copy_location(stmt, node)
        ast.fix_missing_locations(stmt)
        inner = scope.child()
        inner.vars["__ifexp"] = _MISSING_VALUE
        self.if_statement_named(stmt, inner, "__ifexp")
        return inner.vars["__ifexp"]

    def if_statement_named(self, stmt: ast.If, scope: _Scope, name: str) -> None:
        """An if whose only output is ``name`` (used for ``a if c else b``)."""
        branches = []
        for body in (stmt.body, stmt.orelse):
            block, inner = Block(), scope.child()
            outer, self.block = self.block, block
            self.statements(body, inner)
            block.outputs = [self.value(inner.vars[name], stmt)]
            self.block = outer
            branches.append(block)
        out = self.graph.new_value(type=branches[0].outputs[0].type)
        cond = self.value(self.expr(stmt.test, scope), stmt.test)
        node = self.graph.create("If", (cond,), outputs=[out], block=self.block, target="If")
        node.blocks = branches
        scope.vars[name] = out

    def expr_Subscript(self, node: ast.Subscript, scope: _Scope) -> Any:  # noqa: N802
        base = self.expr(node.value, scope)
        index = self.index(node.slice, scope)
        if isinstance(base, Static) and isinstance(index, Static):
            return Static(base.value[index.value])
        if isinstance(base, tuple) and isinstance(index, Static):
            return base[index.value]
        if _is_tensor(base):
            return self.emit("minitorch.getitem", (base, index))
        return self.emit(
            "prim.getitem", (base, index), type_="Tensor" if base.type != "tuple" else "int"
        )

    def index(self, node: ast.expr, scope: _Scope) -> Any:
        if isinstance(node, ast.Slice):
            parts = [
                None if p is None else self.expr(p, scope)
                for p in (node.lower, node.upper, node.step)
            ]
            if any(p is not None and not isinstance(p, Static) for p in parts):
                raise self.error(node, "slice bounds must be known at compile time")
            return Static(slice(*(None if p is None else p.value for p in parts)))
        if isinstance(node, ast.Tuple):
            items = tuple(self.index(e, scope) for e in node.elts)
            if all(isinstance(i, Static) for i in items):
                return Static(tuple(i.value for i in items))
            return items
        return self.expr(node, scope)

    def expr_JoinedStr(self, node: ast.JoinedStr, scope: _Scope) -> Any:  # noqa: N802
        template, values = "", []
        for part in node.values:
            if isinstance(part, ast.Constant):
                template += str(part.value).replace("{", "{{").replace("}", "}}")
                continue
            value = self.expr(part.value, scope)
            if isinstance(value, Static):
                template += str(value.value).replace("{", "{{").replace("}", "}}")
            else:
                template += "{}"
                values.append(value)
        if not values:
            return Static(template.format())
        return self.emit("prim.format", (template, *values), type_="str")

    def expr_Call(self, node: ast.Call, scope: _Scope) -> Any:  # noqa: N802
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise self.error(node, "*args and **kwargs in calls are not supported")
        func = node.func
        # a method of a run-time value: x.relu(), x.sum(dim=1)
        if isinstance(func, ast.Attribute):
            base = self.expr(func.value, scope)
            if isinstance(base, Value) and base.type == "Tensor":
                args = [self.expr(a, scope) for a in node.args]
                kwargs = {k.arg: self.expr(k.value, scope) for k in node.keywords}
                return self.tensor_method(base, func.attr, args, kwargs, node)
            callee = self.expr_Attribute(func, scope) if isinstance(base, Static) else None
        else:
            callee = self.expr(func, scope)
        if not isinstance(callee, Static):
            raise self.error(node, "only functions known at compile time can be called")
        fn = callee.value
        args = [self.expr(a, scope) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, scope) for k in node.keywords}
        return self.call(fn, args, kwargs, node)

    def tensor_method(self, base: Value, name: str, args: list, kwargs: dict, node: ast.AST) -> Any:
        cls = function_for(name) if name in ELEMENTWISE and not args and not kwargs else None
        if cls is not None:
            return self.emit(name, (base,), target=cls)
        target = library_call(f"Tensor.{name}")
        if target is None:
            raise self.error(node, f"the Tensor method {name!r} is not supported by jit.script")
        return self.emit(
            f"Tensor.{name}",
            (base, *args),
            kwargs,
            type_=_RESULT_TYPES.get(name, "Tensor"),
            target=target,
        )

    def call(self, fn: Any, args: list, kwargs: dict, node: ast.AST) -> Any:
        static = all(isinstance(a, Static) for a in [*args, *kwargs.values()])
        if isinstance(fn, ScriptModule):
            return self.inline(fn, args, node)
        if (
            isinstance(fn, types.MethodType)
            and isinstance(fn.__self__, Module)
            and not fn.__func__.__module__.startswith("minitorch")
        ):  # self.helper(x): a method of the module, compiled and inlined
            if kwargs:
                raise self.error(node, "keyword arguments to scripted methods are not supported")
            return self.compile_function(fn.__func__, args, self_obj=fn.__self__)
        if isinstance(fn, Module):
            if kwargs:
                raise self.error(
                    node, "calling a submodule with keyword arguments is not supported"
                )
            return self.compile_function(type(fn).forward, args, self_obj=fn)
        if fn in self.function_ops and not kwargs:
            return self.emit(self.function_ops[fn].name, tuple(args), target=self.function_ops[fn])
        op = _library_name(fn)
        if op is not None:
            if (
                static
                and op.startswith("minitorch.")
                and fn.__name__ in ("tensor", "zeros", "ones")
            ):
                pass  # creation functions run at run time like any other call
            return self.emit(op, tuple(args), kwargs, target=library_call(op))
        if isinstance(fn, types.FunctionType) and not fn.__module__.startswith("minitorch"):
            if kwargs:
                raise self.error(node, "keyword arguments to scripted functions are not supported")
            return self.compile_function(fn, args)
        if static:  # a builtin or helper on values known now: run it now
            try:
                return Static(
                    fn(*(a.value for a in args), **{k: v.value for k, v in kwargs.items()})
                )
            except Exception as err:
                raise self.error(
                    node, f"calling {_describe(Static(fn))} at compile time failed: {err}"
                ) from None
        if fn in (
            builtins.int,
            builtins.float,
            builtins.bool,
            builtins.len,
            builtins.min,
            builtins.max,
        ):
            prim = f"prim.{fn.__name__}"
            type_ = {"int": "int", "float": "float", "bool": "bool", "len": "int"}.get(
                fn.__name__, "float"
            )
            return self.emit(prim, tuple(args), type_=type_)
        raise self.error(
            node,
            f"calling {_describe(Static(fn))} on run-time values is not supported by jit.script",
        )

    def inline(self, scripted: ScriptModule, args: list, node: ast.AST) -> Any:
        """Copy a scripted module's graph into this one, its ``If``/``Loop`` blocks and
        parameters included (a scripted submodule's ``get_attr`` names gain its path)."""
        scripted._fresh()
        tensors = scripted.attr_values()
        prefix = self.paths.get(id(scripted))
        if tensors and prefix is None:
            raise self.error(
                node,
                "calling a scripted module with parameters that is not a submodule of the "
                "module being scripted: make it an attribute of that module",
            )

        def attr(name: str) -> Value:
            full = f"{prefix}.{name}" if prefix else name
            self.attrs[full] = tensors[name]
            out = self.graph.new_value(tensors[name], f"self.{full}")
            self.graph.create(
                "get_attr", (full,), outputs=[out], block=self.block, target="get_attr"
            )
            return out

        inputs = [self.value(a, node) for a in args]
        if len(inputs) != len(scripted.graph.inputs):
            raise self.error(
                node,
                f"{scripted.original_name} takes {len(scripted.graph.inputs)} arguments, got "
                f"{len(inputs)}",
            )
        nodes, outs = inline_graph(self.graph, scripted.graph, inputs, attr)
        for n in nodes:
            self.block.append(n)
        return tuple(outs) if scripted.graph.tuple_output else outs[0]


# --- scopes ------------------------------------------------------------------------------
_MISSING = object()
_MISSING_VALUE = Static(None)


class _Scope:
    """Local variables (name -> Value or Static), then the function's globals, then builtins."""

    def __init__(self, fn: Any, self_obj: Any, parent: _Scope | None = None) -> None:
        self.fn, self.self_obj, self.parent = fn, self_obj, parent
        self.vars: dict[str, Any] = {}

    def child(self) -> _Scope:
        return _Scope(self.fn, self.self_obj, self)

    def lookup_var(self, name: str) -> Any:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        return None

    def lookup(self, name: str) -> Any:
        found = self.lookup_var(name)
        if found is not None:
            return found
        closure = inspect.getclosurevars(self.fn) if self.fn.__closure__ else None
        if closure is not None and name in closure.nonlocals:
            return Static(closure.nonlocals[name])
        if name in self.fn.__globals__:
            return Static(self.fn.__globals__[name])
        if hasattr(builtins, name):
            return Static(getattr(builtins, name))
        return _MISSING


# --- helpers -----------------------------------------------------------------------------
#: What a branch that ends in ``raise`` returns (nothing: its outputs are never read).
_NO_RETURN = Static(NotImplemented)


def _ends(stmts: list[ast.stmt]) -> bool:
    """Every path through ``stmts`` ends in ``return`` or ``raise``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    return isinstance(last, ast.If) and _ends(last.body) and _ends(last.orelse)


def _last_return(stmts: list[ast.stmt]) -> ast.stmt | None:
    """The ``return`` that ends ``stmts`` (the last one on the last path)."""
    if not stmts:
        return None
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return last
    if isinstance(last, ast.If):
        return _last_return(last.orelse) or _last_return(last.body)
    return None


def _as_items(result: Any) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def _is_none(result: Any) -> bool:
    return isinstance(result, Static) and result.value is None


def _kind(result: Any, values: list[Value] | None) -> str:
    """TorchScript's name for the type a branch returns: Tensor, int, Tuple[Tensor, int]."""
    if values is None:
        return "NoneType"
    if isinstance(result, tuple):
        return f"Tuple[{', '.join(v.type for v in values)}]"
    return values[0].type


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _assignments(body: list[ast.stmt], name: str) -> list[ast.stmt]:
    """The statements of ``body`` (nested ones too) that assign to ``name``."""
    found = []
    for stmt in body:
        for node in ast.walk(stmt):
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            for target in targets:
                if target is not None and any(
                    isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)
                ):
                    found.append(node)
    return found


def _load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.copy_location(ast.Name(target.id, ast.Load()), target)
    return target


def _assigned_names(stmts: list[ast.stmt]) -> list[str]:
    names = []
    for stmt in stmts:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.append(n.id)
    return names


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Value) and x.type == "Tensor"


def _is_zero(x: Any) -> bool:
    return isinstance(x, Static) and x.value == 0


def _scalar_type(a: Any, b: Any) -> str:
    types_ = {x.type if isinstance(x, Value) else type(x.value).__name__ for x in (a, b)}
    return "float" if "float" in types_ else "int" if "int" in types_ else "bool"


def _describe(x: Any) -> str:
    if isinstance(x, Static):
        v = x.value
        return getattr(v, "__qualname__", None) or type(v).__name__
    if isinstance(x, Value):
        return f"%{x.name} ({x.type})"
    return type(x).__name__


def _library_name(fn: Any) -> str | None:
    """``F.gelu`` / ``minitorch.cat`` for a public minitorch function, else None."""
    if not inspect.isfunction(fn):
        return None
    module = getattr(fn, "__module__", "")
    prefix = "F" if module == _functional.__name__ else "minitorch"
    op = f"{prefix}.{fn.__name__}"
    return op if library_call(op) is fn else None


_STATEMENT_NAMES = {
    "With": "a 'with' statement",
    "Try": "try/except",
    "FunctionDef": "a nested function definition",
    "ClassDef": "a class definition",
    "Delete": "del",
    "Global": "global",
    "Nonlocal": "nonlocal",
    "Import": "import",
    "ImportFrom": "import",
    "Assert": "assert",
    "Break": "break",
    "Continue": "continue",
}
_EXPRESSION_NAMES = {
    "Lambda": "a lambda",
    "ListComp": "a list comprehension",
    "DictComp": "a dict comprehension",
    "SetComp": "a set comprehension",
    "GeneratorExp": "a generator expression",
    "Dict": "a dict display",
    "Yield": "yield",
    "Await": "await",
    "Starred": "*unpacking",
    "NamedExpr": "the walrus operator (:=)",
}


def export(fn: Any) -> Any:
    """``@jit.export``: compile this method of a Module too when the Module is scripted
    (``scripted.method(x)``), as ``torch.jit.export``; the function itself is unchanged."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"jit.export: expected a function (a method), but got {type(fn).__name__}")
    fn._jit_export = True
    return fn


def _exported(cls: type) -> dict[str, Any]:
    """The ``@jit.export`` methods of ``cls`` and its bases, by name."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, member in vars(klass).items():
            if getattr(member, "_jit_export", False) and name != "forward":
                found[name] = member
    return found


def _defaults(fn: Any, self_obj: Any) -> dict[str, Any]:
    """The parameters' default values (numbers, strings, None), by name."""
    params = list(inspect.signature(fn).parameters.values())[1 if self_obj is not None else 0 :]
    return {
        p.name: p.default
        for p in params
        if p.default is not p.empty and isinstance(p.default, (bool, int, float, str, type(None)))
    }


def _compile_graph(fn: Any, self_obj: Any, root: Any) -> tuple[Graph, dict[str, Tensor]]:
    """One function (a method of ``self_obj`` when given) compiled into a linted graph."""
    from .lint import lint

    compiler = _Compiler(root)
    params = list(inspect.signature(fn).parameters.values())
    if self_obj is not None:
        params = params[1:]
    inputs = [compiler.graph.add_input(name=p.name) for p in params]
    _annotate(inputs, params)
    compiler.optional = {
        v for v, p in zip(inputs, params, strict=True) if p.default is None or _optional(p)
    }
    result = compiler.compile_function(fn, list(inputs), self_obj=self_obj)
    g = compiler.graph
    if isinstance(result, tuple):
        g.tuple_output = True
        g.outputs = [compiler.value(r, ast.Constant(0)) for r in result]
    else:
        g.outputs = [compiler.value(result, ast.Constant(0))]
    lint(g)
    return g, compiler.attrs


def script(obj: Any) -> ScriptModule:
    """Compile a Module (its ``forward``, and its ``@jit.export`` methods) into a
    ``ScriptModule``, a function into a ``ScriptFunction``."""
    if isinstance(obj, ScriptModule):
        return obj
    if isinstance(obj, Module):
        fn = type(obj).forward
        graph, attrs = _compile_graph(fn, obj, obj)
        methods = {
            name: _compile_graph(method, obj, obj)[0]
            for name, method in _exported(type(obj)).items()
        }
        module = ScriptModule(
            graph, attrs, name=type(obj).__name__, source=obj, methods=methods, scripted=True
        )
    elif isinstance(obj, types.FunctionType):
        fn = obj
        graph, attrs = _compile_graph(fn, None, None)
        module = ScriptFunction(graph, attrs, name=obj.__name__, scripted=True)
        object.__setattr__(module, "_function", True)  # (prints as torch.jit.ScriptFunction)
    else:
        raise TypeError(f"jit.script: expected a function or a Module, got {type(obj).__name__}")
    object.__setattr__(module, "_defaults", _defaults(fn, obj if fn is not obj else None))
    module._watch_reads(obj, fn, script)
    return module


def _optional(p: inspect.Parameter) -> bool:
    """An ``Optional[...]`` / ``... | None`` annotation."""
    text = str(p.annotation)
    return "Optional" in text or "None" in text


def _annotate(inputs: list[Value], params: list[inspect.Parameter]) -> None:
    for v, p in zip(inputs, params, strict=True):
        ann = p.annotation
        ann = getattr(ann, "__name__", ann)
        v.type = _SCALAR_TYPES.get(str(ann), "Tensor")
        v.dtype = v.shape = None
