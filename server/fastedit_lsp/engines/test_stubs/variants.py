"""Variants: copies of a function's body with one small change each, the slips a person makes
(a comparison or arithmetic operator swapped, an ``and`` for an ``or``, a constant off by one,
a statement left out, ``None`` returned). Return tests are chosen to tell the function apart
from as many of them as the evaluator can compute: a test that only passes on the code as it is
catches the same slips when they are really made.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from typing import Any

from .targets import _FunctionNode

_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
}


_KEPT = (ast.Pass, ast.Global, ast.Nonlocal)
#: A function defined inside: its body changes (``nested``), not whether it is defined.
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Pre-order, children in field order: the same numbering for a node and its copy."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _walk(child)


def _nodes(body: list[ast.stmt]) -> list[ast.AST]:
    out: list[ast.AST] = []
    for stmt in body:
        out.extend(_walk(stmt))
    return out


def _docstring(fn: _FunctionNode) -> ast.AST | None:
    first = fn.body[0] if fn.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first
    return None


def _sites(fn: _FunctionNode, *, nested: bool = False) -> list[tuple[int, int]]:
    """(node index, which change) for every change this module makes to the body; with
    ``nested``, in the functions and lambdas it defines too (not their docstrings and type
    hints)."""
    nodes = _nodes(fn.body)
    doc = _docstring(fn)
    skipped = {id(n) for n in _walk(doc)} if doc is not None else set()
    for node in nodes:
        if isinstance(node, ast.ClassDef) or (
            not nested and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        ):
            skipped.update(id(n) for n in _walk(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = _docstring(node)
            hints = [a.annotation for a in ast.walk(node.args) if isinstance(a, ast.arg)]
            outside = [
                *(h for h in hints if h is not None),
                *([node.returns] if node.returns else []),
                *([inner] if inner is not None else []),
            ]
            skipped.update(id(n) for part in outside for n in _walk(part))
    for node in nodes:
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(v) for v in node.values)
    sites: list[tuple[int, int]] = []
    for index, node in enumerate(nodes):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.stmt) and not isinstance(node, (*_KEPT, *_DEFS)):
            sites.append((index, -1))  # left out
        if (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            sites.append((index, -2))  # returns None
        if isinstance(node, ast.Compare):
            sites += [(index, i) for i, op in enumerate(node.ops) if type(op) in _COMPARE]
        if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _ARITHMETIC:
            sites.append((index, 0))
        if isinstance(node, ast.BoolOp):
            sites.append((index, 0))
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, bool | int | float | str)
            and node.value != ""
        ):
            sites.append((index, 0))
    return sites


def copy_tree(value: Any) -> Any:
    """A copy of a tree (or a list of trees) to change: what ``copy.deepcopy`` gives for what
    ``ast.parse`` makes, faster."""
    if isinstance(value, list):
        return [copy_tree(v) for v in value]
    if not isinstance(value, ast.AST):
        return value  # a constant's value, a name, None: never changed in place
    node = copy.copy(value)
    for name, field in ast.iter_fields(value):
        setattr(node, name, copy_tree(field))
    return node


def _change(body: list[ast.stmt], index: int, which: int) -> list[ast.stmt]:
    body = copy_tree(body)
    nodes = _nodes(body)
    node = nodes[index]
    if which == -1:
        for parent in [*nodes]:
            for name, value in ast.iter_fields(parent):
                if isinstance(value, list) and any(v is node for v in value):
                    setattr(parent, name, [ast.Pass() if v is node else v for v in value])
        body = [ast.Pass() if s is node else s for s in body]
    elif which == -2:
        assert isinstance(node, ast.Return)
        node.value = ast.Constant(None)
    elif isinstance(node, ast.Compare):
        node.ops[which] = _COMPARE[type(node.ops[which])]()
    elif isinstance(node, ast.BinOp | ast.AugAssign):
        node.op = _ARITHMETIC[type(node.op)]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.Constant):
        node.value = _changed_constant(node.value)
    return body


def _changed_constant(value: Any) -> Any:
    """A constant as a slip changes it: a flag negated, a number one more, ``_`` after a text
    (anything else as it is)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "_"
    return value


def variants(fn: _FunctionNode, limit: int, *, nested: bool = False) -> list[list[ast.stmt]]:
    """Changed copies of the body, at most ``limit``, spread evenly over it; with ``nested``,
    changes inside the functions and lambdas it defines too (what a run of it can tell apart,
    where the evaluator cannot)."""
    sites = _sites(fn, nested=nested)
    if len(sites) > limit:
        step = len(sites) / limit
        sites = [sites[int(i * step)] for i in range(limit)]
    return [_change(fn.body, index, which) for index, which in sites]


def default_variants(fn: _FunctionNode) -> list[_FunctionNode]:
    """Copies of the function with one default value changed as a constant in the body is
    (a number one more, ``_`` after a text, a flag negated): slips in the signature, which
    only a call that leaves the parameter out tells apart."""
    out: list[_FunctionNode] = []
    defaults = [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]
    for index, node in enumerate(defaults):
        if not (
            isinstance(node, ast.Constant)
            and isinstance(node.value, bool | int | float | str)
            and node.value != ""
        ):
            continue
        changed = copy.deepcopy(fn)
        target = [
            *changed.args.defaults,
            *(d for d in changed.args.kw_defaults if d is not None),
        ][index]
        assert isinstance(target, ast.Constant)
        target.value = _changed_constant(target.value)
        out.append(changed)
    return out
