"""Targets: the function or method tests are generated for. :func:`find_target` finds the one
enclosing, or defined on, a 0-based line among the functions and methods reachable by attribute
access from the module (no ``<locals>``); a line inside a nested function belongs to the innermost
function a test can import. The user's code is parsed with :mod:`ast` and never imported or executed
(a cloned repository is untrusted: the server never runs its code unless the user opts in).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """The function or method tests are generated for."""

    qualname: str
    """``"parse"`` or ``"Parser.parse"`` (classes nested in classes: ``"Outer.Inner.parse"``)."""
    is_method: bool
    """Defined directly in a class body."""
    lineno: int
    """0-based line of the ``def`` keyword (not of its decorators)."""


class NoTargetError(ValueError):
    """No function or method at the position (or the source does not parse)."""


_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class _Def:
    node: _FunctionNode
    qualname: str
    classes: tuple[ast.ClassDef, ...]  # the enclosing classes, outermost first


def _parse(source: str) -> ast.Module:
    """The module's tree, shared by the calls of one job on one text (finding the target,
    the recorder's plan, the generation: a file is parsed once); never changed in place."""
    try:
        return _parsed(source)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        msg = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise NoTargetError(f"the file does not parse: {msg}{where}") from None


@functools.lru_cache(maxsize=8)
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


#: How many top-level blocks one that does not parse alone is tried with (a decorator and its
#: ``def``, a string spanning blocks).
_MERGE_LIMIT = 24


def parsable(source: str) -> tuple[str, int | None]:
    """``source`` with the top-level blocks that do not parse blanked out (every line kept, so
    positions stay), and the 1-based line of its first syntax error (None when it parses).

    Tests are written from a function's own text: a syntax error elsewhere in the file does not
    stop them. A block starts at a line that begins in column 0; one that does not parse alone
    is tried together with the blocks after it (a decorator, a string over several blocks)
    before it is blanked.
    """
    try:
        ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        error = (exc.lineno or 1) if isinstance(exc, SyntaxError) else 1
    else:
        return source, None
    lines = source.splitlines(keepends=True)
    starts = [
        i
        for i, line in enumerate(lines)
        if line[:1] not in ("", " ", "\t", "\r", "\n", "#", ")", "]", "}")
    ]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    bounds = [*starts, len(lines)]
    kept = [False] * len(lines)
    i = 0
    while i < len(starts):
        for j in range(i, min(i + _MERGE_LIMIT, len(starts))):
            text = "".join(lines[bounds[i] : bounds[j + 1]])
            try:
                ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            kept[bounds[i] : bounds[j + 1]] = [True] * (bounds[j + 1] - bounds[i])
            i = j + 1
            break
        else:
            i += 1
    blanked = [
        line if keep else line[len(line.rstrip("\r\n")) :] or ""
        for line, keep in zip(lines, kept, strict=True)
    ]
    return "".join(blanked), error


def _nested_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` and of the blocks of its ``if``/``try``/``with`` statements.

    A ``def`` inside ``if TYPE_CHECKING:`` or ``try:`` at module level is still a module-level name.
    """
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If | ast.With | ast.AsyncWith | ast.Try | ast.TryStar):
            blocks: list[list[ast.stmt]] = [stmt.body]
            if isinstance(stmt, ast.If):
                blocks.append(stmt.orelse)
            if isinstance(stmt, ast.Try | ast.TryStar):
                blocks += [stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)]
            for block in blocks:
                yield from _nested_statements(block)


def _importable_defs(tree: ast.Module) -> Iterator[_Def]:
    """Functions and methods reachable by attribute access from the module (no ``<locals>``)."""

    def walk(
        body: Sequence[ast.stmt], prefix: str, classes: tuple[ast.ClassDef, ...]
    ) -> Iterator[_Def]:
        for stmt in _nested_statements(body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                yield _Def(stmt, prefix + stmt.name, classes)
            elif isinstance(stmt, ast.ClassDef):
                yield from walk(stmt.body, f"{prefix}{stmt.name}.", (*classes, stmt))

    yield from walk(tree.body, "", ())


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _contains(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, line1: int) -> bool:
    return _first_line(node) <= line1 <= (node.end_lineno or node.lineno)


def find_target(source: str, line: int) -> Target:
    """The function or method enclosing, or defined on, the 0-based ``line``.

    Decorator lines belong to the function they decorate. A line inside a nested function
    belongs to the innermost function a test can import (the enclosing one).
    """
    tree = _parse(source)
    line1 = line + 1
    best: _Def | None = None
    for candidate in _importable_defs(tree):
        if _contains(candidate.node, line1) and (
            best is None or _first_line(candidate.node) >= _first_line(best.node)
        ):
            best = candidate
    if best is not None:
        return Target(best.qualname, bool(best.classes), best.node.lineno - 1)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and _contains(node, line1):
            raise NoTargetError(
                f"line {line1} is in class {node.name} but not inside one of its methods"
            )
    raise NoTargetError(f"no function or method at line {line1}")


def _find_def(tree: ast.Module, target: Target) -> _Def:
    same_name = [d for d in _importable_defs(tree) if d.qualname == target.qualname]
    for candidate in same_name:
        if candidate.node.lineno - 1 == target.lineno:
            return candidate
    if same_name:
        return same_name[-1]  # the source moved since the target was found: the binding that wins
    raise NoTargetError(f"no function or method named {target.qualname} in the file")
