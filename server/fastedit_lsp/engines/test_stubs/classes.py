"""Classes: whether a method's class can be built with no arguments (``Cls()``), as far as the
module shows; a method whose class needs constructor arguments gets tests marked ``# TODO``.
"""

from __future__ import annotations

import ast

from .bindings import _ModuleInfo
from .candidates import _annotation_base
from .scope import _dotted


def _instantiable(info: _ModuleInfo, cls: ast.ClassDef, depth: int = 0) -> bool:
    """``Cls()`` works: no ``__init__`` argument is required, as far as the module shows."""
    if depth > 10:
        return False
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in (
            "__init__",
            "__new__",
        ):
            args = stmt.args
            positional = args.posonlyargs + args.args
            required = len(positional) - 1 - len(args.defaults)
            kw_required = sum(d is None for d in args.kw_defaults)
            return required <= 0 and kw_required == 0
    decorators = {
        (_dotted(d.func if isinstance(d, ast.Call) else d) or "").split(".")[-1]
        for d in cls.decorator_list
    }
    if decorators & {"dataclass", "define", "attrs", "frozen", "mutable"}:
        return all(
            stmt.value is not None or _is_classvar(stmt.annotation)
            for stmt in cls.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
        )
    if decorators:
        return False
    for base in cls.bases:
        name = _dotted(base)
        if name == "object" or (name and name.split(".")[-1] in ("Exception", "ABC")):
            continue
        parent = info.classes.get(name or "")
        if parent is None or not _instantiable(info, parent, depth + 1):
            return False
    return not cls.keywords


def _is_classvar(node: ast.expr) -> bool:
    base, _ = _annotation_base(node)
    return base == "ClassVar"
