"""Arithmetic in config values: ``budget = "=20*n"``, ``k = "=n//2"``, ``budget = "=ceil(h1)"``.

A string that starts with ``=`` is an expression. It may use numbers, ``+ - * / // % **``,
parentheses, the functions ``ceil floor round int min max sqrt log exp`` (``ceil`` and
``floor`` first round to 9 decimals, so that float noise such as ``H1 = 1250.0000000000007``
gives 1250, as the papers' exact arithmetic would) and the names
the caller provides (the runner provides ``n`` and ``k`` of the point's instance and,
lazily, its hardness ``h1`` and ``h2``; see :mod:`topk_bench.config`). Nothing else is
evaluated: no attribute access, no other calls.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ExpressionError", "evaluate", "is_expression", "names_in"]

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}


def _ceil(x: float) -> int:
    """``ceil`` that ignores float noise: 1250.0000000000007 -> 1250 (rounds to 9 decimals)."""
    return math.ceil(round(x, 9))


def _floor(x: float) -> int:
    """``floor`` that ignores float noise: 99.99999999999997 -> 100."""
    return math.floor(round(x, 9))


_FUNCS: dict[str, Callable[..., Any]] = {
    "ceil": _ceil,
    "floor": _floor,
    "round": round,
    "int": int,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "log": math.log,
    "exp": math.exp,
}


class ExpressionError(ValueError):
    """A malformed expression or an unknown name."""


class _NameFailed(Exception):
    """Carries an error raised while computing a name's value (re-raised unchanged)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def is_expression(value: Any) -> bool:
    """Whether ``value`` is an expression string (starts with ``=``)."""
    return isinstance(value, str) and value.startswith("=")


def _parse(text: str) -> ast.Expression:
    try:
        return ast.parse(text[1:].strip(), mode="eval")
    except SyntaxError as err:
        raise ExpressionError(f"cannot parse expression {text!r}: {err.msg}") from None


def names_in(text: str) -> set[str]:
    """The variable names an expression uses (function names excluded)."""
    tree = _parse(text)
    called = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called


def evaluate(text: str, names: Mapping[str, Any | Callable[[], Any]]) -> int | float:
    """Evaluate expression ``text`` (with its leading ``=``).

    ``names`` maps a variable to its value, or to a zero-argument callable computed on
    first use (for costly values such as hardness); an error raised by such a callable
    propagates unchanged. A float result that is a whole
    number is returned as ``int`` (budgets and k must be integers).
    """
    tree = _parse(text)
    cache: dict[str, Any] = {}

    def lookup(name: str) -> Any:
        if name not in names:
            allowed = ", ".join(sorted(names)) or "(none)"
            raise ExpressionError(f"unknown name {name!r} in {text!r}; names: {allowed}")
        if name not in cache:
            value = names[name]
            try:
                cache[name] = value() if callable(value) else value
            except Exception as err:  # the caller's error, e.g. a bad instance
                raise _NameFailed(err) from err
        return cache[name]

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)
        ):
            return node.value
        if isinstance(node, ast.Name):
            return lookup(node.id)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](ev(node.operand))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS
            and not node.keywords
        ):
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))
        raise ExpressionError(f"unsupported syntax {ast.dump(node)[:60]!r} in {text!r}")

    try:
        value = ev(tree)
    except _NameFailed as failed:
        raise failed.error from None
    except ExpressionError:
        raise
    except (ArithmeticError, ValueError, TypeError) as err:
        raise ExpressionError(f"cannot evaluate {text!r}: {err}") from None
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    return value
