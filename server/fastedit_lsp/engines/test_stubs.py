"""Test stubs from the code: a pytest module for the function or method at a position.

Pure: no pygls, no httpx, no I/O. The caller passes the source text and what it knows of the
file system (which directories hold ``__init__.py``, which ``tests`` folders exist). The user's
code is parsed with :mod:`ast` and never imported or executed (DESIGN.md, invariant 7).

What becomes a test, for the target's own code only:

- each doctest example with an expected output: an assertion with that value
  (``test_<name>_example_<n>``); an expected traceback becomes ``pytest.raises``;
- each ``raise`` statement: a ``pytest.raises`` case (``test_<name>_raises_<exception>``) when
  arguments that reach it can be derived. They are found by walking the function body with a
  small evaluator of its own that understands literals, comparisons, ``isinstance``, ``len``,
  truthiness and the pure methods of ``str``/``list``/``dict`` applied to candidate argument
  values this module made itself; anything else (a call into the user's code, an attribute of an
  unknown object) is "unknown", and a branch that depends on an unknown is not taken. Such a
  call is assumed to return without raising, which is what can make a derived case wrong;
- the type hints: a hypothesis ``@given`` property stub (``test_<name>_property``) when every
  required parameter has a strategy; it asserts only the return type and lets through the
  exceptions the function raises on purpose;
- the rest: a test marked ``# TODO`` that calls ``pytest.skip("TODO: ...")``, so nothing passes
  vacuously (``test_<name>_todo...``): a raise it could not reach, hints without a strategy, a
  method whose class needs constructor arguments, or a function that shows nothing at all.

``<name>`` is the snake-cased qualname (``Parser.parse`` -> ``parser_parse``). The output is
deterministic and passes ruff's default rules and import sorting. :func:`merge` appends
generated tests to an existing test module (see its docstring for the one place it inserts
instead of appending, and ``append_only``).
"""

from __future__ import annotations

import ast
import builtins
import copy
import doctest
import itertools
import math
import os
import re
import sys
import textwrap
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TypeGuard

__all__ = [
    "NoTargetError",
    "Target",
    "find_target",
    "generate",
    "merge",
    "module_name",
    "test_path",
]


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


# -- Targets ---------------------------------------------------------------------------------------

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class _Def:
    node: _FunctionNode
    qualname: str
    classes: tuple[ast.ClassDef, ...]  # the enclosing classes, outermost first


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        msg = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise NoTargetError(f"the file does not parse: {msg}{where}") from None


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


# -- Module names and placement --------------------------------------------------------------------


def _norm(path: str, base: PurePath | None = None) -> PurePath:
    pure = PurePath(path)
    if base is not None and not pure.is_absolute():
        pure = base / pure
    return PurePath(os.path.normpath(str(pure)))


def _inside(path: PurePath, root: PurePath) -> bool:
    return path == root or root in path.parents


def module_name(
    module_path: str, workspace_root: str | None, package_dirs: Collection[str] = ()
) -> str:
    """The dotted import path of the module, e.g. ``"pkg.sub.mod"``.

    ``package_dirs`` are the directories the caller knows to contain ``__init__.py``; the name
    walks up through them, without leaving the workspace. Just the stem when there is no package.
    """
    root = _norm(workspace_root) if workspace_root else None
    path = _norm(module_path, root)
    packages = {_norm(d, root) for d in package_dirs}
    parts: list[str] = []
    directory = path.parent
    if path.stem == "__init__":
        packages.add(directory)
    else:
        parts.append(path.stem)
    while directory in packages and (
        root is None or (directory != root and _inside(directory, root))
    ):
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts) if parts else path.stem


def test_path(module_path: str, workspace_root: str | None, tests_dirs: Collection[str]) -> str:
    """Where the tests for the module go.

    ``tests/test_<module>.py`` in the nearest ``tests`` folder at or above the module within the
    workspace (``tests_dirs``: the ones that exist), else ``test_<module>.py`` beside the module.
    """
    root = _norm(workspace_root) if workspace_root else None
    path = _norm(module_path, root)
    stem = path.parent.name if path.stem == "__init__" else path.stem
    filename = f"test_{stem}.py"
    beside = str(path.parent / filename)
    if root is None or not _inside(path.parent, root):
        return beside
    known = {_norm(d, root) for d in tests_dirs}
    directory = path.parent
    while True:
        if directory in known and directory.name == "tests":
            return str(directory / filename)
        if directory / "tests" in known:
            return str(directory / "tests" / filename)
        if directory == root:
            return beside
        directory = directory.parent


# -- What the module binds -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Binding:
    """How a test module gets a module-level name of the user's module."""

    module: str  # "" for a plain ``import x``
    name: str  # the imported name (for ``import a.b``: "a.b")
    alias: str | None = None


@dataclass
class _ModuleInfo:
    module: str
    tree: ast.Module
    names: dict[str, _Binding] = field(default_factory=dict)
    constants: dict[str, object] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)  # by qualname

    @classmethod
    def of(cls, tree: ast.Module, module: str) -> _ModuleInfo:
        info = cls(module, tree)
        own = _Binding(module, "")
        for stmt in _nested_statements(tree.body):
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                info.names[stmt.name] = own
            elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    for node in ast.walk(target):
                        if isinstance(node, ast.Name):
                            info.names[node.id] = own
                if (
                    isinstance(stmt, ast.Assign | ast.AnnAssign)
                    and stmt.value is not None
                    and len(targets) == 1
                    and isinstance(targets[0], ast.Name)
                ):
                    value = _literal(stmt.value)
                    if value is not _UNKNOWN:
                        info.constants[targets[0].id] = value
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    info.names[bound] = _Binding("", alias.name, alias.asname)
            elif isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    bound = alias.asname or alias.name
                    if alias.name == "*":
                        continue
                    if stmt.level or not stmt.module:
                        info.names[bound] = own  # relative: the name is in the module's namespace
                    else:
                        info.names[bound] = _Binding(stmt.module, alias.name, alias.asname)
        for d in _all_classes(tree.body, ""):
            info.classes[d[0]] = d[1]
        return info

    def binding(self, name: str) -> _Binding | None:
        found = self.names.get(name)
        if found is not None and found.module == self.module and found.name == "":
            return _Binding(self.module, name)
        return found


def _all_classes(body: Sequence[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.ClassDef]]:
    for stmt in _nested_statements(body):
        if isinstance(stmt, ast.ClassDef):
            yield prefix + stmt.name, stmt
            yield from _all_classes(stmt.body, f"{prefix}{stmt.name}.")


def _literal(node: ast.expr) -> object:
    """The value of a literal expression (also ``frozenset({...})``/``set()``), else unknown."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("frozenset", "set", "tuple", "list")
        and len(node.args) <= 1
        and not node.keywords
    ):
        inner = _literal(node.args[0]) if node.args else ()
        if isinstance(inner, list | tuple | set | frozenset | str):
            kind: Callable[[object], object] = {
                "frozenset": frozenset,
                "set": set,
                "tuple": tuple,
                "list": list,
            }[node.func.id]
            return kind(inner)
        return _UNKNOWN
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


# -- Imports of the generated module ---------------------------------------------------------------


class _Imports:
    """The imports a generated module needs, rendered in isort/ruff order."""

    def __init__(self, first_party_root: str) -> None:
        self._root = first_party_root
        self._plain: set[tuple[str, str | None]] = set()  # import x [as y]
        self._from: set[tuple[str, str, str | None]] = set()  # from m import n [as a]

    def add(self, binding: _Binding) -> None:
        if binding.module:
            self._from.add((binding.module, binding.name, binding.alias))
        else:
            self._plain.add((binding.name, binding.alias))

    def plain(self, name: str) -> None:
        self._plain.add((name, None))

    def from_(self, module: str, name: str, alias: str | None = None) -> None:
        self._from.add((module, name, alias))

    def prune(self, used: set[str]) -> None:
        """Drop the imports whose bound name nothing uses (pytest, if only imported)."""
        self._plain = {(n, a) for n, a in self._plain if (a or n.split(".")[0]) in used}
        self._from = {(m, n, a) for m, n, a in self._from if (a or n) in used}

    def _section(self, module: str) -> int:
        top = module.split(".")[0]
        if top == self._root:
            return 2
        if top in sys.stdlib_module_names:
            return 0
        return 1

    def render(self) -> str:
        sections: list[list[str]] = [[], [], []]
        for name, alias in sorted(self._plain, key=lambda p: (p[0].lower(), p[0], p[1] or "")):
            line = f"import {name}" + (f" as {alias}" if alias else "")
            sections[self._section(name)].append(line)
        modules = sorted({m for m, _, _ in self._from}, key=lambda m: (m.lower(), m))
        for module in modules:
            section = sections[self._section(module)]
            members = sorted(
                (n for m, n, a in self._from if m == module and a is None), key=_member_key
            )
            if members:
                section.append(_from_line(module, members))
            for name, alias in sorted(
                ((n, a) for m, n, a in self._from if m == module and a is not None),
                key=lambda p: (_member_key(p[0]), p[1]),
            ):
                section.append(f"from {module} import {name} as {alias}")
        return "\n\n".join("\n".join(lines) for lines in sections if lines)


def _member_key(name: str) -> tuple[int, str, str]:
    # ruff's isort `order-by-type`: CONSTANTS, then Classes, then everything else.
    if len(name) > 1 and name.isupper():
        kind = 0
    elif name[:1].isupper():
        kind = 1
    else:
        kind = 2
    return kind, name.lower(), name


def _from_line(module: str, members: list[str]) -> str:
    line = f"from {module} import {', '.join(members)}"
    if len(line) <= 88:
        return line
    body = "".join(f"    {m},\n" for m in members)
    return f"from {module} import (\n{body})"


# -- Rendering helpers -----------------------------------------------------------------------------


def _quote(text: str) -> str:
    """A double-quoted Python string literal for ``text`` (ruff format's preference)."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1] + '"'
    return literal


_REGEX_SPECIAL = frozenset(".^$*+?{}[]\\|()")


def _escape(text: str) -> str:
    """``re.escape`` without escaping spaces, dashes and the like: a pattern a person can read."""
    return "".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in text)


def _pattern(text: str) -> str:
    """A string literal for a regular expression: raw when that is possible."""
    if '"' not in text and "\n" not in text and not text.endswith("\\") and text.isprintable():
        return f'r"{text}"' if "\\" in text else f'"{text}"'
    return _quote(text)


def _has_set(value: object) -> bool:
    if isinstance(value, set | frozenset):
        return True
    if isinstance(value, list | tuple):
        return any(_has_set(v) for v in value)
    if isinstance(value, dict):
        return any(_has_set(k) or _has_set(v) for k, v in value.items())
    return False


def _render(value: object) -> str | None:
    """Python source for a value built of literals, or None (sets: their order is not stable)."""
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, bytes | complex):
        return repr(value)
    if isinstance(value, list | tuple):
        items = [_render(v) for v in value]
        if any(i is None for i in items):
            return None
        inner = ", ".join(i for i in items if i is not None)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(items) == 1 else f"({inner})"
    if isinstance(value, dict):
        pairs = [(_render(k), _render(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


def _fit(text: str, base: int = 0, width: int = 88) -> str:
    """A call expression split one argument per line, ruff-format style, where it is too long.

    ``base`` is the column the block the expression sits in starts at; continuation lines are
    indented relative to that block (the caller indents the result).
    """
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text
    return _fit_node(text, node, 0, 0, base, width)


def _fit_node(text: str, node: ast.expr, indent: int, col: int, base: int, width: int) -> str:
    flat = ast.get_source_segment(text, node) or ast.unparse(node)
    if base + col + len(flat) + 1 <= width or not isinstance(node, ast.Call):
        return flat
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        head = _fit_node(text, func.value, indent, col, base, width) + "." + func.attr
    else:
        head = ast.get_source_segment(text, func) or ast.unparse(func)
    inner = indent + 4
    args = [_fit_node(text, a, inner, inner, base, width) for a in node.args]
    for k in node.keywords:
        name = k.arg or ""
        value = _fit_node(text, k.value, inner, inner + len(name) + 1, base, width)
        args.append(f"{name}={value}")
    pad = " " * inner
    return head + "(\n" + "".join(f"{pad}{a},\n" for a in args) + " " * indent + ")"


def _assert(left: str, op: str, right: str) -> str:
    """``assert left op right``, split the way ruff format does when it is too long."""
    line = f"assert {left} {op} {right}"
    if len(line) + 4 <= 88 or "\n" in line:
        return line
    return f"assert (\n    {left}\n    {op} {right}\n)"


def _snake(name: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"_+", "_", name.lower()).strip("_") or "target"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.splitlines())


# Binds tighter than `==`/`is` and needs no parentheses on the left of one.
_ATOMS = (
    ast.Call,
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Constant,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.BinOp,
    ast.Await,
)


def _operand(node: ast.expr, text: str) -> str:
    if isinstance(node, _ATOMS) or (
        isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not)
    ):
        return text
    return f"({text})"


@dataclass
class _Test:
    name: str
    body: list[str]  # lines, unindented
    params: list[str] = field(default_factory=list)
    decorators: list[str] = field(default_factory=list)
    kind: str = "todo"  # example | raises | property | todo

    def render(self) -> str:
        head = "".join(f"@{d}\n" for d in self.decorators)
        body = _indent("\n".join(self.body))
        return f"{head}def {self.name}({', '.join(self.params)}) -> None:\n{body}\n"


def _todo(name: str, reason: str, hint: str | None = None) -> _Test:
    comment = textwrap.wrap(
        f"TODO: {hint or reason}",
        width=84,
        initial_indent="# ",
        subsequent_indent="#   ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return _Test(name, [*comment, f"pytest.skip({_quote('TODO: ' + reason)})"], kind="todo")


# -- Doctest examples ------------------------------------------------------------------------------

_BUILTIN_NAMES = frozenset(dir(builtins))


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _used_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@dataclass
class _Example:
    source: str
    tree: ast.Module
    want: str  # expected output with <BLANKLINE> expanded; "" when none
    exc_msg: str | None
    options: dict[int, bool]
    lineno: int  # 1-based line in the file


def _statement_text(source: str, stmt: ast.stmt) -> str:
    multiline_string = any(
        isinstance(n, ast.Constant)
        and isinstance(n.value, str | bytes)
        and n.lineno != n.end_lineno
        for n in ast.walk(stmt)
    )
    segment = None if multiline_string else ast.get_source_segment(source, stmt)
    return segment if segment is not None else ast.unparse(stmt)


def _example_lines(example: _Example) -> list[str]:
    return [_statement_text(example.source, s) for s in example.tree.body]


def _expr_text(example: _Example, node: ast.expr) -> str:
    text = ast.get_source_segment(example.source, node)
    if text is None or any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.lineno != n.end_lineno
        for n in ast.walk(node)
    ):
        text = ast.unparse(node)
    return text


def _is_call_to(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


_PRINTERS = frozenset({"print", "pprint", "pp"})


def _prints(ctx: _Context, node: ast.expr) -> bool:
    """A call whose doctest output is what it printed: ``print``, ``pprint``, or a function of
    the module that prints and returns nothing."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    if name in _PRINTERS:
        return True
    if name == ctx.target.node.name:
        return _prints_only(ctx.target.node)
    if isinstance(func, ast.Name):
        defined = next(
            (
                s
                for s in ctx.info.tree.body
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == name
            ),
            None,
        )
        return defined is not None and _prints_only(defined)
    return False


def _prints_only(fn: _FunctionNode) -> bool:
    """The function prints and returns nothing: a doctest shows what it printed."""
    body = list(_own_nodes(fn))
    returns_value = any(isinstance(n, ast.Return) and n.value is not None for n in body)
    yields = any(isinstance(n, ast.Yield | ast.YieldFrom) for n in body)
    prints = any(
        isinstance(n, ast.Call) and any(_is_call_to(n, p) for p in _PRINTERS) for n in body
    )
    return prints and not returns_value and not yields


def _own_nodes(fn: _FunctionNode) -> Iterator[ast.AST]:
    """The nodes of the function's own body (not of functions or classes nested in it)."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop(0)
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack[0:0] = list(ast.iter_child_nodes(node))


def _examples(fn: _FunctionNode) -> tuple[list[_Example], list[tuple[int, str]]]:
    """The docstring's examples that parse, and (line, reason) for those that do not."""
    # As doctest sees it (``__doc__``, not cleaned): example line numbers map to the file.
    docstring = ast.get_docstring(fn, clean=False)
    if not docstring or ">>>" not in docstring:
        return [], []
    first = fn.body[0].lineno
    try:
        raw = doctest.DocTestParser().get_examples(docstring)
    except ValueError as exc:
        return [], [(first, f"the docstring's examples do not parse as a doctest: {exc}")]
    examples: list[_Example] = []
    broken: list[tuple[int, str]] = []
    for ex in raw:
        if ex.options.get(doctest.SKIP):
            continue
        line = first + ex.lineno
        try:
            tree = ast.parse(ex.source)
        except SyntaxError:
            broken.append((line, f"the example at line {line} is not valid Python"))
            continue
        want = "\n".join("" if w == "<BLANKLINE>" else w for w in ex.want.split("\n"))
        examples.append(_Example(ex.source, tree, want, ex.exc_msg, dict(ex.options), line))
    return examples, broken


@dataclass
class _Context:
    """What the generator knows while building one module."""

    info: _ModuleInfo
    target: _Def
    imports: _Imports
    call_prefix: str  # "f", "Cls().m", "Cls.m"
    instantiable: bool
    exception_types: set[str] = field(default_factory=set)  # rendered names, for property stubs

    def need(self, names: set[str]) -> None:
        package, _, own = self.info.module.rpartition(".")
        for name in sorted(names):
            binding = self.info.binding(name)
            if binding is not None:
                self.imports.add(binding)
            elif name == own:
                # `>>> textwrap.shorten(...)` in textwrap's own docstrings.
                if package:
                    self.imports.from_(package, own)
                else:
                    self.imports.plain(own)

    def exception(self, dotted: str) -> str | None:
        """How the test names the exception class ``dotted``, importing it; None if unknown."""
        last = dotted.split(".")[-1]
        builtin = getattr(builtins, last, None)
        if (
            isinstance(builtin, type)
            and issubclass(builtin, BaseException)
            and ("." not in dotted or dotted.startswith("builtins."))
        ):
            return last
        root = dotted.split(".")[0]
        if "." not in dotted and self.info.binding(dotted) is not None:
            self.need({dotted})
            return dotted
        if self.info.binding(root) is not None and "." in dotted:
            self.need({root})
            return dotted
        # A doctest names a module's exception with its module path (mod.ParseError): take it
        # from our module when it is bound there.
        if self.info.binding(last) is not None:
            self.need({last})
            return last
        if isinstance(builtin, type) and issubclass(builtin, BaseException):
            return last
        return None


def _want_literal(want: str) -> tuple[bool, object]:
    text = want.strip()
    if not text:
        return False, None
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return False, None
    value = _literal(tree.body)
    if value is _UNKNOWN:
        return False, None
    return True, value


def _output_check(subject: str, want: str, options: dict[int, bool], ctx: _Context) -> str:
    """An assertion that the text ``subject`` evaluates to matches the doctest's ``want``."""
    if options.get(doctest.NORMALIZE_WHITESPACE):
        subject = f'" ".join({subject}.split())'
        want = " ".join(want.split())
    if options.get(doctest.ELLIPSIS) and "..." in want:
        ctx.imports.plain("re")
        pieces = [_escape(p) for p in want.split("...")]
        return f"assert re.fullmatch({_pattern('.*'.join(pieces))}, {subject}, re.DOTALL)"
    return _assert(subject, "==", _quote(want))


def _exception_block(
    exc_msg: str, options: dict[int, bool], ctx: _Context, body: list[str]
) -> list[str]:
    header = exc_msg.strip()
    type_part, sep, message = header.partition(":")
    type_part = type_part.strip()
    message = message.strip()
    name = ctx.exception(type_part) if re.fullmatch(r"[\w.]+", type_part) else None
    args = name or "Exception"
    match: str | None = None
    if sep and message and not options.get(doctest.IGNORE_EXCEPTION_DETAIL):
        if options.get(doctest.ELLIPSIS) and "..." in message:
            match = ".*".join(_escape(p) for p in message.split("...") if p)
        else:
            match = _escape(message)
    if match:
        args += f", match={_pattern(match)}"
    lines = [f"with pytest.raises({args})" + (" as excinfo:" if name is None else ":")]
    lines += ["    " + line for stmt in body for line in stmt.splitlines()]
    if name is None:
        lines.append(f"assert excinfo.type.__name__ == {_quote(type_part.split('.')[-1])}")
    return lines


def _example_tests(ctx: _Context, examples: list[_Example], prefix: str) -> list[_Test]:
    """One test per example that shows something: an output, a traceback, or a call of the
    target that shows nothing (so it returned None, or printed nothing)."""
    tests: list[_Test] = []
    bound_before: set[str] = set()
    for index, example in enumerate(examples):
        body = _example_check(ctx, example)
        if body is not None:
            lines, capsys = body
            used = _used_names(example.tree)
            local = _bound_names(example.tree)
            replay: list[str] = []
            if used & bound_before:
                # It uses names earlier examples bound: replay them (doctest shares one namespace).
                replay = _replay(examples[:index])
                for earlier in examples[:index]:
                    local |= _bound_names(earlier.tree)
                    used |= _used_names(earlier.tree)
            test = _Test(f"test_{prefix}_example_{len(tests) + 1}", replay, kind="example")
            if capsys:
                test.params.append("capsys: pytest.CaptureFixture[str]")
                if replay:
                    test.body.append("capsys.readouterr()")
            test.body += lines
            ctx.need(used - local - _BUILTIN_NAMES)
            tests.append(test)
        bound_before |= _bound_names(example.tree)
    return tests


def _example_check(ctx: _Context, example: _Example) -> tuple[list[str], bool] | None:
    """The lines that run the example and assert what it showed, and whether they use capsys."""
    tree = example.tree
    expr = (
        tree.body[0].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) else None
    )
    target_call = expr is not None and _is_call_to(expr, ctx.target.node.name)
    printed = expr is None or _prints(ctx, expr)
    if example.exc_msg is not None:
        return _exception_block(
            example.exc_msg, example.options, ctx, _example_lines(example)
        ), False
    if not example.want:
        if not target_call or expr is None:
            return None  # a setup statement: replayed by the examples that need it
        if printed:
            return [*_example_lines(example), 'assert capsys.readouterr().out == ""'], True
        return [_assert(_operand(expr, _expr_text(example, expr)), "is", "None")], False
    if printed or expr is None:
        check = _output_check("capsys.readouterr().out", example.want, example.options, ctx)
        return [*_example_lines(example), check], True
    text = _operand(expr, _expr_text(example, expr))
    is_literal, value = _want_literal(example.want)
    if not is_literal or (example.options.get(doctest.ELLIPSIS) and "..." in example.want):
        want = example.want.rstrip("\n")
        return [_output_check(f"repr({text})", want, example.options, ctx)], False
    if value is True or value is False or value is None:
        return [_assert(text, "is", repr(value))], False
    rendered = None if _has_set(value) else _render(value)
    if rendered is None:  # sets keep the order the docstring shows
        want = example.want.strip()
        rendered = ast.unparse(ast.parse(want, mode="eval").body) if "\n" in want else want
    return [_assert(text, "==", rendered)], False


def _replay(examples: list[_Example]) -> list[str]:
    """The earlier examples as plain statements: the state a later example depends on."""
    lines: list[str] = []
    for example in examples:
        if example.exc_msg is not None:
            continue
        for stmt in example.tree.body:
            if isinstance(stmt, ast.Expr) and example.want:
                # An expression whose output was compared: keep it only for its side effects.
                if isinstance(stmt.value, ast.Call | ast.Await):
                    lines.append(_statement_text(example.source, stmt))
                continue
            lines.append(_statement_text(example.source, stmt))
    return lines


# -- A small evaluator for reaching `raise` statements ---------------------------------------------


class _Unknown:
    """A value this module does not model (a call into user code, an unknown attribute...)."""

    def __repr__(self) -> str:
        return "<unknown>"


_UNKNOWN: object = _Unknown()
_OMIT: object = type("_Omit", (), {"__repr__": lambda self: "<default>"})()


class _Abort(Exception):  # noqa: N818 (control flow of the evaluator)
    """The path depends on something unknown, or the step budget is spent."""


class _Raised(Exception):  # noqa: N818 (control flow of the evaluator)
    """An exception inside the evaluated function (from a ``raise`` statement or a builtin)."""

    def __init__(self, type_name: str | None, node: ast.Raise | None = None) -> None:
        super().__init__(type_name)
        self.type_name = type_name
        self.node = node


class _Return(Exception):  # noqa: N818 (control flow of the evaluator)
    pass


class _Break(Exception):  # noqa: N818 (control flow of the evaluator)
    pass


class _Continue(Exception):  # noqa: N818 (control flow of the evaluator)
    pass


class _Instance:
    """``self``: the attributes ``__init__`` set, as far as they are known."""

    def __init__(self, attrs: dict[str, object]) -> None:
        self.attrs = attrs


_SAFE_TYPES = (str, int, float, bool, bytes, list, tuple, dict, set, frozenset, type(None))
_SAFE_FUNCS: dict[str, Callable[..., object]] = {
    "len": len,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "sum": sum,
    "any": any,
    "all": all,
    "sorted": sorted,
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "ord": ord,
    "chr": chr,
    "repr": repr,
}
_TYPE_NAMES: dict[str, type] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "bytes": bytes,
    "list": list,
    "tuple": tuple,
    "dict": dict,
    "set": set,
    "frozenset": frozenset,
    "complex": complex,
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SAFE_METHODS: dict[type, frozenset[str]] = {
    str: _words(
        "strip lstrip rstrip lower upper casefold title capitalize startswith endswith isdigit "
        "isdecimal isnumeric isalpha isalnum isspace isidentifier islower isupper istitle split "
        "rsplit splitlines partition rpartition replace count find rfind index rindex join "
        "removeprefix removesuffix encode"
    ),
    bytes: _words("decode startswith endswith strip split count find"),
    list: _words("count index copy append extend insert pop remove reverse"),
    tuple: _words("count index"),
    dict: _words("get keys values items copy pop setdefault update"),
    set: _words("add discard copy union intersection difference issubset issuperset"),
    frozenset: _words("union intersection difference issubset issuperset"),
    int: _words("bit_length"),
    float: _words("is_integer"),
}
_MAX_SIZE = 2000
_STEPS = 3000


def _safe(value: object) -> bool:
    if type(value) not in _SAFE_TYPES:
        return False
    if isinstance(value, str | bytes):
        return len(value) <= _MAX_SIZE
    if isinstance(value, int):
        return value.bit_length() <= 512
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) <= _MAX_SIZE and all(_safe(v) for v in value)
    if isinstance(value, dict):
        return len(value) <= _MAX_SIZE and all(_safe(k) and _safe(v) for k, v in value.items())
    return True


@dataclass
class _Method:
    value: object
    name: str


@dataclass
class _Func:
    name: str


_BINOPS: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: lambda a, b: a + b,  # type: ignore[operator]
    ast.Sub: lambda a, b: a - b,  # type: ignore[operator]
    ast.Mult: lambda a, b: a * b,  # type: ignore[operator]
    ast.Div: lambda a, b: a / b,  # type: ignore[operator]
    ast.FloorDiv: lambda a, b: a // b,  # type: ignore[operator]
    ast.Mod: lambda a, b: a % b,  # type: ignore[operator]
    ast.Pow: lambda a, b: a**b,  # type: ignore[operator]
    ast.BitAnd: lambda a, b: a & b,  # type: ignore[operator]
    ast.BitOr: lambda a, b: a | b,  # type: ignore[operator]
    ast.BitXor: lambda a, b: a ^ b,  # type: ignore[operator]
}
_CMPOPS: dict[type[ast.cmpop], Callable[[object, object], object]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
    ast.In: lambda a, b: a in b,  # type: ignore[operator]
    ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}


class _Evaluator:
    """Walks a function body with concrete argument values of this module's making.

    Only builtin values (``_SAFE_TYPES``) are ever operated on, only with the operators and pure
    methods listed above, with size limits; the user's functions are never called (a call to one
    is unknown). ``raise`` statements are the outcome this looks for.
    """

    def __init__(self, info: _ModuleInfo) -> None:
        self.info = info
        self.steps = 0
        # Per loop statement: whether it can leave the function, and the names it may change.
        self._loops: dict[int, tuple[bool, frozenset[str]]] = {}

    def _step(self) -> None:
        self.steps += 1
        if self.steps > _STEPS:
            raise _Abort

    # expressions

    def value(self, node: ast.expr, env: dict[str, object]) -> object:
        self._step()
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, env)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, env)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand, env)
            if operand is _UNKNOWN or not _safe(operand):
                return _UNKNOWN
            return self._apply(node.op, operand)
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left, env), self.value(node.right, env)
            if not (_safe(left) and _safe(right)):
                return _UNKNOWN
            op = _BINOPS.get(type(node.op))
            if op is None or self._too_big(node.op, left, right):
                return _UNKNOWN
            return self._guarded(lambda: op(left, right))
        if isinstance(node, ast.Compare):
            return self._compare(node, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, env)
            if isinstance(base, _Instance):
                return base.attrs.get(node.attr, _UNKNOWN)
            if _safe(base) and node.attr in _SAFE_METHODS.get(type(base), ()):
                return _Method(base, node.attr)
            return _UNKNOWN
        if isinstance(node, ast.Subscript):
            base = self.value(node.value, env)
            index = self.value(node.slice, env)
            if not (_safe(base) and (_safe(index) or isinstance(index, slice))):
                return _UNKNOWN
            return self._guarded(lambda: base[index])  # type: ignore[index]
        if isinstance(node, ast.Slice):
            parts = [
                self.value(p, env) if p is not None else None
                for p in (node.lower, node.upper, node.step)
            ]
            if any(p is _UNKNOWN or not (p is None or isinstance(p, int)) for p in parts):
                return _UNKNOWN
            return slice(*parts)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = [self.value(e, env) for e in node.elts]
            if any(not _safe(i) for i in items):
                return _UNKNOWN
            if isinstance(node, ast.Tuple):
                return tuple(items)
            if isinstance(node, ast.List):
                return items
            return self._guarded(lambda: set(items))
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                return _UNKNOWN
            keys = [self.value(k, env) for k in node.keys if k is not None]
            values = [self.value(v, env) for v in node.values]
            if not all(_safe(x) for x in keys + values):
                return _UNKNOWN
            return self._guarded(lambda: dict(zip(keys, values, strict=True)))
        if isinstance(node, ast.IfExp):
            return self.value(node.body if self.truth(node.test, env) else node.orelse, env)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            return self._comprehension(node, env)
        if isinstance(node, ast.NamedExpr):
            result = self.value(node.value, env)
            env[node.target.id] = result
            return result
        return _UNKNOWN

    def _comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        env: dict[str, object],
    ) -> object:
        """Evaluated eagerly: a generator's exceptions surface where it is consumed, which for
        the unpacking and ``list()`` calls this models is the same statement."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            return _UNKNOWN
        generator = node.generators[0]
        iterable = self.value(generator.iter, env)
        if isinstance(iterable, dict):
            iterable = list(iterable)
        if not isinstance(iterable, str | bytes | list | tuple) or not _safe(iterable):
            return _UNKNOWN
        scope = dict(env)
        items: list[object] = []
        pairs: list[tuple[object, object]] = []
        for item in iterable:
            self.assign(generator.target, item, scope)
            if not all(self.truth(test, scope) for test in generator.ifs):
                continue
            if isinstance(node, ast.DictComp):
                pairs.append((self.value(node.key, scope), self.value(node.value, scope)))
            else:
                items.append(self.value(node.elt, scope))
        if isinstance(node, ast.DictComp):
            if not all(_safe(k) and _safe(v) for k, v in pairs):
                return _UNKNOWN
            return self._guarded(lambda: dict(pairs))
        if not all(_safe(i) for i in items):
            return _UNKNOWN
        if isinstance(node, ast.SetComp):
            return self._guarded(lambda: set(items))
        return items if isinstance(node, ast.ListComp) else tuple(items)

    def _name(self, name: str, env: dict[str, object]) -> object:
        if name in env:
            return env[name]
        if name in self.info.constants:
            return copy.deepcopy(self.info.constants[name])
        if name in self.info.names:
            return _UNKNOWN
        if name in _SAFE_FUNCS:
            return _Func(name)
        return _UNKNOWN

    def _boolop(self, node: ast.BoolOp, env: dict[str, object]) -> object:
        result: object = _UNKNOWN
        for operand in node.values:
            result = self.value(operand, env)
            if result is _UNKNOWN or not _safe(result):
                if isinstance(result, _Instance):
                    result = True  # an object without __bool__/__len__ we know of is truthy
                else:
                    return _UNKNOWN
            if isinstance(node.op, ast.And) and not result:
                return result
            if isinstance(node.op, ast.Or) and result:
                return result
        return result

    def _apply(self, op: ast.unaryop, operand: object) -> object:
        if isinstance(op, ast.Not):
            return not operand
        if isinstance(op, ast.USub):
            return self._guarded(lambda: -operand)  # type: ignore[operator]
        if isinstance(op, ast.UAdd):
            return self._guarded(lambda: +operand)  # type: ignore[operator]
        return self._guarded(lambda: ~operand)  # type: ignore[operator]

    @staticmethod
    def _too_big(op: ast.operator, left: object, right: object) -> bool:
        if isinstance(op, ast.Pow):
            return not (isinstance(right, int) and abs(right) <= 64)
        if isinstance(op, ast.Mult):
            sizes = [v for v in (left, right) if isinstance(v, int)]
            sized = any(isinstance(v, str | bytes | list | tuple) for v in (left, right))
            return sized and any(abs(n) > _MAX_SIZE for n in sizes)
        return False

    def _guarded(self, compute: Callable[[], object]) -> object:
        try:
            result = compute()
        except Exception as exc:  # a real exception of a builtin operation on our own values
            raise _Raised(type(exc).__name__) from None
        if isinstance(
            result, dict().keys().__class__ | dict().values().__class__ | dict().items().__class__
        ):
            result = list(result)
        return result if _safe(result) else _UNKNOWN

    def _compare(self, node: ast.Compare, env: dict[str, object]) -> object:
        left = self.value(node.left, env)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.value(comparator, env)
            if isinstance(op, ast.Is | ast.IsNot) and (left is None or right is None):
                if left is _UNKNOWN or right is _UNKNOWN:
                    return _UNKNOWN
                same = left is right if not isinstance(left, _Instance) else right is left
                if (same if isinstance(op, ast.Is) else not same) is False:
                    return False
                left = right
                continue
            if not (_safe(left) and _safe(right)):
                return _UNKNOWN
            compare = _CMPOPS[type(op)]
            outcome = self._guarded(lambda c=compare, a=left, b=right: c(a, b))  # type: ignore[misc]
            if not outcome:
                return False
            left = right
        return True

    def _call(self, node: ast.Call, env: dict[str, object]) -> object:
        func = self.value(node.func, env)
        if (isinstance(func, _Func) and func.name == "isinstance") or (
            isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and "isinstance" not in env
        ):
            return self._isinstance(node, env)
        if not isinstance(func, _Func | _Method):
            return _UNKNOWN
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            return _UNKNOWN
        args = [self.value(a, env) for a in node.args]
        kwargs = {k.arg: self.value(k.value, env) for k in node.keywords if k.arg}
        if not all(_safe(a) for a in [*args, *kwargs.values()]):
            return _UNKNOWN
        if isinstance(func, _Func):
            call = _SAFE_FUNCS[func.name]
            return self._guarded(lambda: call(*args, **kwargs))
        bound = getattr(func.value, func.name)
        return self._guarded(lambda: bound(*args, **kwargs))

    def _isinstance(self, node: ast.Call, env: dict[str, object]) -> object:
        if len(node.args) != 2 or node.keywords:
            return _UNKNOWN
        subject = self.value(node.args[0], env)
        spec = node.args[1]
        names = [e for e in spec.elts] if isinstance(spec, ast.Tuple) else [spec]
        types: list[type] = []
        for item in names:
            if isinstance(item, ast.Name) and item.id in _TYPE_NAMES and item.id not in env:
                types.append(_TYPE_NAMES[item.id])
            elif isinstance(item, ast.Constant) and item.value is None:
                types.append(type(None))
            elif not (isinstance(item, ast.Name) and item.id in self.info.classes):
                # Our values are builtins: never instances of the user's own classes.
                return _UNKNOWN
                return _UNKNOWN
        if isinstance(subject, _Instance) or subject is _UNKNOWN:
            return _UNKNOWN
        return isinstance(subject, tuple(types))

    def truth(self, node: ast.expr, env: dict[str, object]) -> bool:
        result = self.value(node, env)
        if isinstance(result, _Instance):
            return True
        if result is _UNKNOWN or not _safe(result):
            raise _Abort
        return bool(result)

    # statements

    def run(self, body: Sequence[ast.stmt], env: dict[str, object]) -> None:
        for stmt in body:
            self.statement(stmt, env)

    def statement(self, stmt: ast.stmt, env: dict[str, object]) -> None:
        self._step()
        if isinstance(stmt, ast.Expr):
            if not isinstance(stmt.value, ast.Constant):
                self.value(stmt.value, env)
        elif isinstance(stmt, ast.Assign):
            result = self.value(stmt.value, env)
            for target in stmt.targets:
                self.assign(target, result, env)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.value(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign):
            current = (
                self.value(stmt.target, env)
                if isinstance(stmt.target, ast.Name | ast.Attribute)
                else _UNKNOWN
            )
            change = self.value(stmt.value, env)
            op = _BINOPS.get(type(stmt.op))
            if (
                op is None
                or not (_safe(current) and _safe(change))
                or self._too_big(stmt.op, current, change)
            ):
                updated: object = _UNKNOWN
            else:
                updated = self._guarded(lambda: op(current, change))
            self.assign(stmt.target, updated, env)
        elif isinstance(stmt, ast.If):
            self.run(stmt.body if self.truth(stmt.test, env) else stmt.orelse, env)
        elif isinstance(stmt, ast.Raise):
            self._raise(stmt, env)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                self.value(stmt.value, env)
            raise _Return
        elif isinstance(stmt, ast.Assert):
            if not self.truth(stmt.test, env):
                raise _Raised("AssertionError")
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            self._for(stmt, env)
        elif isinstance(stmt, ast.While):
            self._while(stmt, env)
        elif isinstance(stmt, ast.Break):
            raise _Break
        elif isinstance(stmt, ast.Continue):
            raise _Continue
        elif isinstance(stmt, ast.Try | ast.TryStar):
            self._try(stmt, env)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                self.value(item.context_expr, env)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, _UNKNOWN, env)
            self.run(stmt.body, env)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            env[stmt.name] = _UNKNOWN
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                env[alias.asname or alias.name.split(".")[0]] = _UNKNOWN
        elif isinstance(stmt, ast.Pass | ast.Global | ast.Nonlocal | ast.Delete):
            pass
        else:
            raise _Abort  # match statements and anything newer

    def assign(self, target: ast.expr, result: object, env: dict[str, object]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = result
        elif isinstance(target, ast.Tuple | ast.List):
            if result is _UNKNOWN or not _safe(result):
                for element in target.elts:
                    self.assign(element, _UNKNOWN, env)
                return
            if any(isinstance(e, ast.Starred) for e in target.elts):
                for element in target.elts:
                    inner = element.value if isinstance(element, ast.Starred) else element
                    self.assign(inner, _UNKNOWN, env)
                return
            items = self._guarded(lambda: list(result))  # type: ignore[call-overload]
            if not isinstance(items, list):
                raise _Abort
            if len(items) != len(target.elts):
                raise _Raised("ValueError")
            for element, item in zip(target.elts, items, strict=True):
                self.assign(element, item, env)
        elif isinstance(target, ast.Attribute):
            base = self.value(target.value, env)
            if isinstance(base, _Instance):
                base.attrs[target.attr] = result
        elif isinstance(target, ast.Subscript):
            base = self.value(target.value, env)
            index = self.value(target.slice, env)
            if isinstance(base, list | dict) and _safe(index) and _safe(result):
                self._guarded(lambda: base.__setitem__(index, result))  # type: ignore[call-overload]
            elif isinstance(target.value, ast.Name) and target.value.id in env:
                env[target.value.id] = _UNKNOWN

    def _raise(self, stmt: ast.Raise, env: dict[str, object]) -> None:
        if stmt.exc is None:
            current = env.get("<exception>")
            if isinstance(current, _Raised):
                raise current
            raise _Abort
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        dotted = _dotted(exc)
        if dotted is not None and dotted.split(".")[0] in env:
            dotted = None  # `raise error` with a local variable: its type is unknown
        raise _Raised(dotted, stmt)

    def _loop_body(self, body: list[ast.stmt], env: dict[str, object]) -> bool:
        """Run one iteration; False on ``break``."""
        try:
            self.run(body, env)
        except _Continue:
            pass
        except _Break:
            return False
        return True

    def _for(self, stmt: ast.For | ast.AsyncFor, env: dict[str, object]) -> None:
        iterable = self.value(stmt.iter, env)
        if isinstance(iterable, dict):
            iterable = list(iterable)
        if not isinstance(iterable, str | bytes | list | tuple | set | frozenset) or not _safe(
            iterable
        ):
            self._unknown_loop(stmt, env)
            return
        for item in (
            sorted(iterable, key=repr) if isinstance(iterable, set | frozenset) else iterable
        ):
            self.assign(stmt.target, item, env)
            if not self._loop_body(stmt.body, env):
                return
        self.run(stmt.orelse, env)

    def _while(self, stmt: ast.While, env: dict[str, object]) -> None:
        while True:
            try:
                going = self.truth(stmt.test, env)
            except _Abort:
                if self.steps > _STEPS:
                    raise
                self._unknown_loop(stmt, env)
                return
            if not going:
                break
            if not self._loop_body(stmt.body, env):
                return
        self.run(stmt.orelse, env)

    def _unknown_loop(
        self, stmt: ast.For | ast.AsyncFor | ast.While, env: dict[str, object]
    ) -> None:
        """A loop over something unknown: fine to pass only if it cannot leave the function.

        What it may change becomes unknown: the names it assigns, the objects it calls
        methods on (``items.append(...)``).
        """
        summary = self._loops.get(id(stmt))
        if summary is None:
            leaves = False
            touched: set[str] = set()
            for node in ast.walk(stmt):
                leaves = leaves or isinstance(
                    node, ast.Raise | ast.Return | ast.Yield | ast.YieldFrom
                )
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    touched.add(node.id)
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                ):
                    touched.add(node.func.value.id)
            summary = self._loops[id(stmt)] = (leaves, frozenset(touched))
        self._step()
        if summary[0]:
            raise _Abort
        for name in summary[1]:
            env[name] = _UNKNOWN

    def _try(self, stmt: ast.Try | ast.TryStar, env: dict[str, object]) -> None:
        try:
            try:
                self.run(stmt.body, env)
            except _Raised as raised:
                handler = self._handler(stmt.handlers, raised)
                if handler is None:
                    raise
                saved = env.get("<exception>")
                env["<exception>"] = raised
                if handler.name:
                    env[handler.name] = _UNKNOWN
                try:
                    self.run(handler.body, env)
                finally:
                    env["<exception>"] = saved
            else:
                self.run(stmt.orelse, env)
        finally:
            if stmt.finalbody:
                self.run(stmt.finalbody, env)

    def _handler(
        self, handlers: list[ast.ExceptHandler], raised: _Raised
    ) -> ast.ExceptHandler | None:
        for handler in handlers:
            if handler.type is None:
                return handler
            specs = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            for spec in specs:
                caught = _dotted(spec)
                if caught is None or raised.type_name is None:
                    raise _Abort
                verdict = self._is_subclass(raised.type_name, caught)
                if verdict is None:
                    raise _Abort
                if verdict:
                    return handler
        return None

    def _is_subclass(self, raised: str, caught: str) -> bool | None:
        if raised.split(".")[-1] == caught.split(".")[-1]:
            return True
        chain = self._ancestors(raised.split(".")[-1], 0)
        if chain is None:
            return None
        caught_builtin = getattr(builtins, caught, None)
        for ancestor in chain:
            if ancestor == caught.split(".")[-1]:
                return True
            builtin = getattr(builtins, ancestor, None)
            if (
                isinstance(builtin, type)
                and isinstance(caught_builtin, type)
                and issubclass(builtin, caught_builtin)
            ):
                return True
        if isinstance(caught_builtin, type) or caught in self.info.classes:
            return False
        return None

    def _ancestors(self, name: str, depth: int) -> list[str] | None:
        """The class and its ancestors' names, as far as the module shows them."""
        if depth > 10:
            return None
        if isinstance(getattr(builtins, name, None), type):
            return [name]
        node = self.info.classes.get(name)
        if node is None:
            return None
        names = [name]
        for base in node.bases:
            base_name = _dotted(base)
            if base_name is None:
                return None
            found = self._ancestors(base_name.split(".")[-1], depth + 1)
            if found is None:
                return None
            names += found
        return names


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


# -- Candidate arguments ---------------------------------------------------------------------------


def _annotation_base(node: ast.expr | None) -> tuple[str | None, list[ast.expr]]:
    """("list", [int]) for ``list[int]``; ("Optional", [str]) for ``Optional[str]``."""
    if node is None:
        return None, []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _annotation_base(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None, []
    if isinstance(node, ast.Constant) and node.value is None:
        return "None", []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return "Union", [node.left, node.right]
    if isinstance(node, ast.Subscript):
        base = _dotted(node.value)
        inner = node.slice
        args = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        return (base.split(".")[-1] if base else None), args
    name = _dotted(node)
    return (name.split(".")[-1] if name else None), []


_LIST_NAMES = {"list", "List", "Sequence", "Iterable", "Collection", "MutableSequence"}
_DICT_NAMES = {"dict", "Dict", "Mapping", "MutableMapping"}
_SET_NAMES = {"set", "Set", "AbstractSet", "MutableSet", "frozenset", "FrozenSet"}


def _typed_candidates(
    ann: ast.expr | None, ints: list[int], floats: list[float], strs: list[str], depth: int = 0
) -> list[object] | None:
    """Values of the annotated type, most ordinary first; None when the type is not modelled."""
    base, args = _annotation_base(ann)
    if depth > 3:
        return None
    if base == "int":
        return _dedupe([1, 0, -1, *ints])
    if base == "float":
        return _dedupe([1.0, 0.0, -1.0, *floats, *(float(i) for i in ints)])
    if base == "str":
        return _dedupe(["a", "", *strs])
    if base == "bool":
        return [False, True]
    if base == "bytes":
        return [b"a", b""]
    if base == "None":
        return [None]
    if base in ("Optional", "Union"):
        options = [_typed_candidates(a, ints, floats, strs, depth + 1) for a in args]
        if base == "Optional":
            options.append([None])
        if any(o is None for o in options):
            return None
        present = [o for o in options if o is not None]
        merged: list[object] = [
            o[i] for i in range(max(len(o) for o in present)) for o in present if i < len(o)
        ]
        return _dedupe(merged)
    if base in _LIST_NAMES or base in ("tuple", "Tuple"):
        element = args[0] if args else None
        inner = _typed_candidates(element, ints, floats, strs, depth + 1) if element else [1, "a"]
        if inner is None:
            return None
        if (
            base in ("tuple", "Tuple")
            and len(args) > 1
            and not (isinstance(args[1], ast.Constant) and args[1].value is Ellipsis)
        ):
            parts = [_typed_candidates(a, ints, floats, strs, depth + 1) for a in args]
            if any(p is None for p in parts):
                return None
            return [tuple(p[0] for p in parts if p is not None)]
        lists: list[object] = [[inner[0]], [], *([v] for v in inner[1:8]), list(inner[:3])]
        if base in ("tuple", "Tuple"):
            return _dedupe([tuple(v) for v in lists if isinstance(v, list)])
        return _dedupe(lists)
    if base in _SET_NAMES:
        return [set(), {1}] if not args else None
    if base in _DICT_NAMES:
        keys = _typed_candidates(args[0], ints, floats, strs, depth + 1) if args else ["a"]
        values = _typed_candidates(args[1], ints, floats, strs, depth + 1) if len(args) > 1 else [1]
        if keys is None or values is None:
            return None
        return _dedupe([{keys[0]: values[0]}, {}, *({k: values[0]} for k in keys[1:6])])
    if base == "Literal":
        literals = [_literal(a) for a in args]
        return None if _UNKNOWN in literals else _dedupe(literals)
    return None


def _dedupe(values: list[object]) -> list[object]:
    seen: set[str] = set()
    out: list[object] = []
    for value in values:
        key = f"{type(value).__name__}:{value!r}"
        if key not in seen and _safe(value):
            seen.add(key)
            out.append(value)
    return out


def _literals(fn: _FunctionNode, info: _ModuleInfo) -> tuple[list[int], list[float], list[str]]:
    ints: list[int] = []
    floats: list[float] = []
    strs: list[str] = []

    def take(value: object) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int) and abs(value) < 10**9:
            ints.extend([value - 1, value, value + 1])
        elif isinstance(value, float) and math.isfinite(value):
            floats.extend([value - 0.5, value, value + 0.5])
        elif isinstance(value, str) and len(value) <= 40:
            strs.append(value)
        elif isinstance(value, list | tuple | set | frozenset):
            for item in sorted(value, key=repr) if isinstance(value, set | frozenset) else value:
                take(item)
        elif isinstance(value, dict):
            for item in value:
                take(item)

    for node in _own_nodes(fn):
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, int | float)
        ):
            take(-node.operand.value)
        elif isinstance(node, ast.Constant) and not (
            isinstance(node.value, str) and len(node.value) > 40
        ):
            take(node.value)
        elif isinstance(node, ast.Name) and node.id in info.constants:
            take(info.constants[node.id])
    # Combinations of the string pieces the function looks for ("@", "."): "a@a", "a@a.a".
    pieces = _dedupe([s for s in strs if s])[:8]
    combos: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            combos += [piece, f"a{piece}", f"{piece}a", f"a{piece}a"]
    for first, second in itertools.permutations(pieces, 2):
        combos.append(f"a{first}a{second}a")
    for piece in pieces:
        if isinstance(piece, str):
            combos += [f"1{piece}0", f"0{piece}1"]
    lengths = [n for n in ints if 0 <= n <= 64]
    numbers = [str(n) for n in ints if n >= 0]
    combos = [" ", "abc", "1", "A", "a b", *("a" * n for n in lengths), *combos, *numbers]
    return (
        [i for i in _dedupe(list(ints)) if isinstance(i, int)],
        [f for f in _dedupe(list(floats)) if isinstance(f, float)],
        [s for s in _dedupe(list(combos)) if isinstance(s, str)],
    )


_MIXED: list[object] = [1, "a", 0, "", -1, None, 1.5, [], [1], {}, True]


@dataclass
class _Param:
    name: str
    kind: str  # positional-only | positional | keyword
    default: object  # _OMIT-able when not _NO_DEFAULT
    annotation: ast.expr | None
    has_default: bool


def _params(fn: _FunctionNode, skip_first: bool) -> tuple[list[_Param], bool, bool]:
    """The parameters a test passes, and whether there are ``*args``/``**kwargs``."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(
        args.defaults
    )
    params: list[_Param] = []
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        if index == 0 and skip_first:
            continue
        kind = "positional-only" if index < len(args.posonlyargs) else "positional"
        value = _literal(default) if default is not None else _UNKNOWN
        params.append(_Param(arg.arg, kind, value, arg.annotation, default is not None))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        value = _literal(kw_default) if kw_default is not None else _UNKNOWN
        params.append(_Param(arg.arg, "keyword", value, arg.annotation, kw_default is not None))
    return params, args.vararg is not None, args.kwarg is not None


def _isinstance_names(fn: _FunctionNode) -> set[str]:
    names: set[str] = set()
    for node in _own_nodes(fn):
        if _is_call_to(node, "isinstance") and isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Name):
                names.add(first.id)
    return names


def _sized_names(fn: _FunctionNode) -> set[str]:
    """Names the function measures (``len(x)``), iterates (``for _ in x``) or indexes."""
    names: set[str] = set()
    for node in _own_nodes(fn):
        subject: ast.AST | None = None
        if isinstance(node, ast.Call) and _is_call_to(node, "len") and node.args:
            subject = node.args[0]
        elif isinstance(node, ast.For | ast.comprehension):
            subject = node.iter
        elif isinstance(node, ast.Subscript):
            subject = node.value
        if isinstance(subject, ast.Name):
            names.add(subject.id)
    return names


def _candidates(
    fn: _FunctionNode, params: list[_Param], info: _ModuleInfo
) -> list[list[object]] | None:
    ints, floats, strs = _literals(fn, info)
    checked = _isinstance_names(fn)
    sized = _sized_names(fn)
    result: list[list[object]] = []
    for param in params:
        values: list[object] | None
        if param.annotation is not None:
            values = _typed_candidates(param.annotation, ints, floats, strs)
        elif param.name in sized:
            # Measured, iterated or indexed: a sequence first, then the rest.
            values = _dedupe([[1], [], "a", "", [0], [1, 2, 3], *strs, *_MIXED, *ints])
        elif param.has_default and param.default is not _UNKNOWN:
            if isinstance(param.default, bool):
                values = [not param.default]
            elif isinstance(param.default, int | float | str) or param.default is None:
                values = _dedupe([*ints, *strs[:12], *_MIXED])
            else:
                values = []
        else:
            values = _dedupe([*_MIXED[:6], *ints, *strs, *_MIXED[6:]])
        if values is not None and param.name in checked:
            values = _dedupe([*values, *_MIXED])
        if param.has_default:
            values = [_OMIT, *(values or [])]
        if not values:
            return None  # a required parameter of a type we do not model
        result.append(values)
    return result


def _combinations(sizes: list[int], limit: int) -> Iterator[tuple[int, ...]]:
    """Index tuples by increasing total distance from the first (most ordinary) candidates."""
    if not sizes:
        yield ()
        return
    produced = 0
    for total in range(sum(s - 1 for s in sizes) + 1):
        for combo in _compositions(total, sizes):
            yield combo
            produced += 1
            if produced >= limit:
                return


def _compositions(total: int, sizes: list[int]) -> Iterator[tuple[int, ...]]:
    if len(sizes) == 1:
        if total < sizes[0]:
            yield (total,)
        return
    for first in range(min(total, sizes[0] - 1) + 1):
        for rest in _compositions(total - first, sizes[1:]):
            yield (first, *rest)


_MAX_RUNS = 1500
# All runs for one function together: keeps the worst case around a few tenths of a second.
_TOTAL_STEPS = 200_000


def _reach_raises(
    ctx: _Context, params: list[_Param], has_varargs: tuple[bool, bool]
) -> dict[int, list[object]]:
    """For each reachable ``raise`` (by node id), argument values that reach it.

    The search starts from the most ordinary arguments and changes one parameter at a time;
    arguments that get further (to a new ``raise``, or through the whole function) become new
    starting points, since they pass the guards before it. What remains of the budget then
    goes to combinations by increasing distance from the ordinary arguments.
    """
    fn = ctx.target.node
    wanted = {id(n) for n in _own_nodes(fn) if isinstance(n, ast.Raise) and n.exc is not None}
    candidates = _candidates(fn, params, ctx.info)
    if not wanted or candidates is None:
        return {}
    decorators = {_dotted(d) for d in fn.decorator_list}
    self_value: _Instance | None = None
    if _takes_self(ctx.target) and "classmethod" not in decorators:
        if not ctx.instantiable:
            return {}
        self_value = _initial_self(ctx)
    evaluator = _Evaluator(ctx.info)

    def outcome(values: list[object]) -> int | None:
        """The id of the ``raise`` reached, 0 for a normal return, None otherwise."""
        env: dict[str, object] = {}
        first = fn.args.posonlyargs + fn.args.args
        if ctx.target.classes and first and "staticmethod" not in decorators:
            env[first[0].arg] = (
                _Instance(copy.deepcopy(self_value.attrs)) if self_value is not None else _UNKNOWN
            )
        for param, value in zip(params, values, strict=True):
            env[param.name] = copy.deepcopy(param.default if value is _OMIT else value)
        if has_varargs[0] and fn.args.vararg:
            env[fn.args.vararg.arg] = ()
        if has_varargs[1] and fn.args.kwarg:
            env[fn.args.kwarg.arg] = {}
        evaluator.steps = 0
        try:
            evaluator.run(fn.body, env)
        except _Raised as raised:
            return id(raised.node) if raised.node is not None else None
        except _Return:
            return 0
        except (_Abort, _Break, _Continue, RecursionError):
            return None
        return 0

    found: dict[int, list[object]] = {}
    tried: set[str] = set()
    runs = 0
    steps = 0

    def attempt(values: list[object]) -> int | None:
        nonlocal runs, steps
        key = repr(values)
        if key in tried:
            return None
        tried.add(key)
        runs += 1
        result = outcome(values)
        steps += evaluator.steps
        if steps > _TOTAL_STEPS:
            runs = _MAX_RUNS  # spent: stop searching
        if result and result in wanted and result not in found:
            found[result] = values
        return result

    bases = [[c[0] for c in candidates]]
    returned = 0
    attempt(bases[0])
    while bases and runs < _MAX_RUNS and len(found) < len(wanted):
        base = bases.pop(0)
        for index, options in enumerate(candidates):
            for option in options[1:]:
                values = [*base[:index], option, *base[index + 1 :]]
                before = len(found)
                result = attempt(values)
                if len(found) > before or (result == 0 and returned < 3):
                    returned += result == 0
                    bases.append(values)
                if runs >= _MAX_RUNS or len(found) == len(wanted):
                    return found
    for combo in _combinations([len(c) for c in candidates], _MAX_RUNS - runs):
        attempt([candidates[i][j] for i, j in enumerate(combo)])
        if len(found) == len(wanted) or runs >= _MAX_RUNS:
            break
    return found


def _initial_self(ctx: _Context) -> _Instance:
    """``self`` after a no-argument ``__init__``, as far as it can be followed."""
    cls = ctx.target.classes[-1]
    attrs: dict[str, object] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                attrs[target.id] = _literal(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            attrs[stmt.target.id] = _literal(stmt.value)
    instance = _Instance(attrs)
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is not None and (init.args.posonlyargs + init.args.args):
        env: dict[str, object] = {(init.args.posonlyargs + init.args.args)[0].arg: instance}
        params, _, _ = _params(init, skip_first=True)
        for param in params:
            env[param.name] = param.default
        try:
            _Evaluator(ctx.info).run(init.body, env)
        except (_Abort, _Raised, _Return, _Break, _Continue, RecursionError):
            return _Instance({})
    return instance


def _call_text(ctx: _Context, params: list[_Param], values: list[object]) -> str | None:
    parts: list[str] = []
    keyword_only = False
    for param, value in zip(params, values, strict=True):
        if value is _OMIT:
            keyword_only = True
            continue
        rendered = _render(value) if not _has_set(value) else None
        if rendered is None:
            if isinstance(value, set | frozenset):
                items = [_render(v) for v in sorted(value, key=repr)]
                if any(i is None for i in items):
                    return None
                rendered = "{" + ", ".join(i for i in items if i) + "}" if items else "set()"
            else:
                return None
        if param.kind == "keyword" or (keyword_only and param.kind == "positional"):
            parts.append(f"{param.name}={rendered}")
        elif keyword_only:
            return None  # a positional-only parameter after an omitted one
        else:
            parts.append(rendered)
    return _wrap_call(ctx, f"{ctx.call_prefix}({', '.join(parts)})")


def _wrap_call(ctx: _Context, call: str) -> str:
    node = ctx.target.node
    if isinstance(node, ast.AsyncFunctionDef):
        if _is_generator(node):
            return call  # an async generator: TODO territory, see _raise_tests
        ctx.imports.plain("asyncio")
        return f"asyncio.run({call})"
    if _is_generator(node):
        return f"list({call})"
    return call


def _is_generator(fn: _FunctionNode) -> bool:
    return any(isinstance(n, ast.Yield | ast.YieldFrom) for n in _own_nodes(fn))


# -- Raise tests -----------------------------------------------------------------------------------


def _exception_name(node: ast.Raise) -> str | None:
    exc = node.exc
    if exc is None:
        return None
    return _dotted(exc.func if isinstance(exc, ast.Call) else exc)


def _message_prefix(ctx: _Context, node: ast.Raise, dotted: str) -> str | None:
    """The literal start of the raise's message, when ``str(exc)`` will show it."""
    exc = node.exc
    if not isinstance(exc, ast.Call) or len(exc.args) != 1 or exc.keywords:
        return None
    if not _plain_str_exception(ctx, dotted.split(".")[-1], 0):
        return None
    message = exc.args[0]
    text = ""
    if isinstance(message, ast.Constant) and isinstance(message.value, str):
        text = message.value
    elif isinstance(message, ast.JoinedStr):
        for part in message.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            text += part.value
    if dotted.split(".")[-1] == "KeyError":
        return None  # str(KeyError("x")) is "'x'"
    text = text.split("\n")[0]
    return text if text.strip() else None


def _plain_str_exception(ctx: _Context, name: str, depth: int) -> bool:
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return True
    node = ctx.info.classes.get(name)
    if node is None or depth > 10:
        return False
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in ("__init__", "__str__", "__new__"):
            return False
    return all(
        (b := _dotted(base)) is not None and _plain_str_exception(ctx, b.split(".")[-1], depth + 1)
        for base in node.bases
    ) and bool(node.bases)


def _raise_tests(
    ctx: _Context, prefix: str, examples: list[_Example], example_tests: list[_Test]
) -> list[_Test]:
    """A ``pytest.raises`` case per ``raise`` statement a doctest example does not already show."""
    fn = ctx.target.node
    raises = [n for n in _own_nodes(fn) if isinstance(n, ast.Raise) and n.exc is not None]
    if not raises:
        return []
    params, varargs, kwargs = _params(fn, skip_first=_takes_self(ctx.target))
    found: dict[int, list[object]] = {}
    async_gen = isinstance(fn, ast.AsyncFunctionDef) and _is_generator(fn)
    if not async_gen:
        found = _reach_raises(ctx, params, (varargs, kwargs))
    shown = [_shown_exception(ctx, e.exc_msg) for e in examples if e.exc_msg is not None]
    tests: list[_Test] = []
    names: set[str] = set()
    for node in raises:
        dotted = _exception_name(node)
        exc_name = ctx.exception(dotted) if dotted else None
        message = _message_prefix(ctx, node, dotted or "")
        if exc_name is not None:
            ctx.exception_types.add(exc_name)
        if message and any(t == exc_name and m.startswith(message) for t, m in shown):
            continue  # a doctest example reaches this raise: its test is the example's
        label = _snake(dotted.split(".")[-1]) if dotted else "exception"
        name = _unique(f"test_{prefix}_raises_{label}", names)
        names.add(name)
        values = found.get(id(node))
        call = _call_text(ctx, params, values) if values is not None else None
        where = f"`raise {_raise_text(node)}` (line {node.lineno})"
        if exc_name is None or call is None:
            reason = _unreached_reason(ctx, exc_name, async_gen)
            tests.append(
                _todo(
                    name.replace("_raises_", "_todo_raises_", 1),
                    f"arguments that reach the raise at line {node.lineno}",
                    f"call {ctx.target.qualname} with arguments that reach {where}; {reason}",
                )
            )
            continue
        args = exc_name
        if message:
            args += f", match={_pattern(_escape(message))}"
        if any(
            f"    {call}" in t.body
            and any(line.startswith(f"with pytest.raises({exc_name}") for line in t.body)
            for t in example_tests
        ):
            continue  # an example makes the same call and expects the same exception
        body = [f"with pytest.raises({args}):", *_indent(_fit(call, base=8)).splitlines()]
        tests.append(_Test(name, body, kind="raises"))
    return tests


def _shown_exception(ctx: _Context, exc_msg: str) -> tuple[str | None, str]:
    type_part, _, message = exc_msg.strip().partition(":")
    type_part = type_part.strip()
    name = ctx.exception(type_part) if re.fullmatch(r"[\w.]+", type_part) else None
    return name, message.strip()


def _unreached_reason(ctx: _Context, exc_name: str | None, async_gen: bool) -> str:
    if exc_name is None:
        return "its exception class is not a name this test can import"
    if async_gen:
        return "it is an async generator"
    if ctx.target.classes and not ctx.instantiable:
        return f"{ctx.target.classes[-1].name}() needs arguments, so there is no instance to call"
    return "the condition depends on values this generator does not model"


def _raise_text(node: ast.Raise) -> str:
    text = ast.unparse(node.exc) if node.exc is not None else ""
    return text if len(text) <= 60 else text[:57] + "..."


def _unique(name: str, taken: Collection[str]) -> str:
    if name not in taken:
        return name
    for n in itertools.count(2):
        if f"{name}_{n}" not in taken:
            return f"{name}_{n}"
    raise AssertionError("unreachable")


def _takes_self(target: _Def) -> bool:
    decorators = {_dotted(d) for d in target.node.decorator_list}
    return bool(target.classes) and "staticmethod" not in decorators


# -- Property stubs --------------------------------------------------------------------------------

_HASHABLE = {"int", "str", "bool", "bytes", "float", "None"}


def _strategy(node: ast.expr | None, depth: int = 0, hashable: bool = False) -> str | None:
    base, args = _annotation_base(node)
    if node is None or depth > 4:
        return None
    simple = {
        "int": "st.integers()",
        "float": "st.floats(allow_nan=False, allow_infinity=False)",
        "str": "st.text()",
        "bytes": "st.binary()",
        "bool": "st.booleans()",
        "None": "st.none()",
        "complex": "st.complex_numbers(allow_nan=False, allow_infinity=False)",
        "Decimal": "st.decimals(allow_nan=False, allow_infinity=False)",
        "Fraction": "st.fractions()",
        "date": "st.dates()",
        "datetime": "st.datetimes()",
        "time": "st.times()",
        "timedelta": "st.timedeltas()",
        "UUID": "st.uuids()",
    }
    if base in ("object", "Any") and not args and not hashable:
        return "st.from_type(object)"
    if base in simple and not args:
        return simple[base] if not hashable or base in _HASHABLE else None
    if base in ("Optional", "Union"):
        parts = [_strategy(a, depth + 1, hashable) for a in args]
        if any(p is None for p in parts):
            return None
        if base == "Optional":
            parts.append("st.none()")
        unique = list(dict.fromkeys(p for p in parts if p))
        return " | ".join(sorted(unique, key=lambda p: p == "st.none()"))
    if base == "Literal":
        values = [_literal(a) for a in args]
        rendered = [_render(v) for v in values]
        if any(r is None for r in rendered):
            return None
        return f"st.sampled_from([{', '.join(r for r in rendered if r)}])"
    if base == "Annotated" and args:
        return _strategy(args[0], depth + 1, hashable)
    if hashable:
        if base in ("tuple", "Tuple") and args:
            return _tuple_strategy(args, depth, hashable)
        return None
    if base in _LIST_NAMES and len(args) == 1:
        inner = _strategy(args[0], depth + 1)
        return f"st.lists({inner})" if inner else None
    if base in _SET_NAMES and len(args) == 1:
        inner = _strategy(args[0], depth + 1, hashable=True)
        kind = "frozensets" if base in ("frozenset", "FrozenSet") else "sets"
        return f"st.{kind}({inner})" if inner else None
    if base in _DICT_NAMES and len(args) == 2:
        key = _strategy(args[0], depth + 1, hashable=True)
        value = _strategy(args[1], depth + 1)
        return f"st.dictionaries({key}, {value})" if key and value else None
    if base in ("tuple", "Tuple") and args:
        return _tuple_strategy(args, depth, hashable)
    return None


def _tuple_strategy(args: list[ast.expr], depth: int, hashable: bool) -> str | None:
    if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
        inner = _strategy(args[0], depth + 1, hashable)
        return f"st.lists({inner}).map(tuple)" if inner else None
    parts = [_strategy(a, depth + 1, hashable) for a in args]
    if any(p is None for p in parts):
        return None
    return f"st.tuples({', '.join(p for p in parts if p)})"


def _return_check(ctx: _Context, node: ast.expr | None, result: str) -> str | None:
    base, args = _annotation_base(node)
    if node is None:
        return None
    if base == "None":
        return f"assert {result} is None"
    optional = base == "Optional" or (
        base == "Union" and any(_annotation_base(a)[0] == "None" for a in args)
    )
    members = args if base in ("Optional", "Union") else [node]
    types: list[str] = []
    for member in members:
        member_base, _ = _annotation_base(member)
        if member_base == "None":
            continue
        runtime = _runtime_type(ctx, member, member_base)
        if runtime is None:
            return None
        types += [t for t in runtime if t not in types]
    if not types:
        return None
    spec = types[0] if len(types) == 1 else f"({', '.join(types)})"
    check = f"isinstance({result}, {spec})"
    return f"assert {result} is None or {check}" if optional else f"assert {check}"


def _runtime_type(ctx: _Context, node: ast.expr, base: str | None) -> list[str] | None:
    runtime = {
        "int": ["int"],
        "float": ["int", "float"],  # PEP 484: an int is acceptable where a float is expected
        "str": ["str"],
        "bytes": ["bytes"],
        "bool": ["bool"],
        "complex": ["int", "float", "complex"],
    }
    if base in runtime:
        return runtime[base]
    containers = {
        "list": "list",
        "List": "list",
        "dict": "dict",
        "Dict": "dict",
        "set": "set",
        "Set": "set",
        "frozenset": "frozenset",
        "FrozenSet": "frozenset",
        "tuple": "tuple",
        "Tuple": "tuple",
    }
    if base in containers:
        return [containers[base]]
    name = (
        _dotted(node)
        if not isinstance(node, ast.Constant)
        else (node.value if isinstance(node.value, str) else None)
    )
    if name and "." not in name and name in ctx.info.classes and ctx.info.binding(name):
        ctx.need({name})
        return [name]
    return None


def _builtin_annotation(node: ast.expr | None) -> TypeGuard[ast.expr]:
    """An annotation made of builtin names only: the test can repeat it without imports."""
    if node is None:
        return False
    for part in ast.walk(node):
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return False  # a forward reference
        if isinstance(part, ast.Name) and part.id not in _TYPE_NAMES and part.id != "object":
            return False
    return True


def _property_tests(ctx: _Context, prefix: str) -> list[_Test]:
    fn = ctx.target.node
    params, _, _ = _params(fn, skip_first=_takes_self(ctx.target))
    required = [p for p in params if not p.has_default]
    annotated = any(p.annotation is not None for p in params) or fn.returns is not None
    if not required or not annotated:
        return []
    name = f"test_{prefix}_property"
    strategies = {p.name: _strategy(p.annotation) for p in required}
    missing = [n for n, s in strategies.items() if s is None]
    if ctx.target.classes and not ctx.instantiable and _takes_self(ctx.target):
        cls = ctx.target.classes[-1].name
        return [
            _todo(
                name.replace("_property", "_todo_property"),
                f"a property test for {ctx.target.qualname}",
                f"{cls}() needs arguments: build one to test {ctx.target.qualname} on",
            )
        ]
    if missing or (isinstance(fn, ast.AsyncFunctionDef) and _is_generator(fn)):
        what = ", ".join(missing) if missing else "an async generator"
        return [
            _todo(
                name.replace("_property", "_todo_property"),
                f"a hypothesis strategy for {what}",
                f"no strategy could be inferred for {what} of {ctx.target.qualname}",
            )
        ]
    ctx.imports.from_("hypothesis", "given")
    ctx.imports.from_("hypothesis", "strategies", "st")
    given = ", ".join(f"{n}={s}" for n, s in strategies.items())
    decorator = _fit(f"given({given})", base=1)
    test_params = [
        f"{p.name}: {ast.unparse(p.annotation)}" if _builtin_annotation(p.annotation) else p.name
        for p in required
    ]
    args = ", ".join(f"{p.name}={p.name}" if p.kind == "keyword" else p.name for p in required)
    call = _wrap_call(ctx, f"{ctx.call_prefix}({args})")
    result = "result" if "result" not in strategies else "returned"
    check = _return_check(ctx, fn.returns, result)
    expected = sorted(ctx.exception_types)
    body: list[str] = []
    line = f"{result} = {call}" if check else call
    if expected:
        caught = expected[0] if len(expected) == 1 else f"({', '.join(expected)})"
        body += [
            "try:",
            f"    {line}",
            f"except {caught}:",
            f"    return  # raised on purpose by {ctx.target.qualname}",
        ]
    else:
        body.append(line)
    if check:
        body.append(check)
    return [_Test(name, body, test_params, [decorator], kind="property")]


# -- Classes ---------------------------------------------------------------------------------------


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


# -- Generate --------------------------------------------------------------------------------------


def generate(source: str, target: Target, module: str) -> str:
    """A complete pytest module testing ``target`` of the module importable as ``module``."""
    tree = _parse(source)
    found = _find_def(tree, target)
    info = _ModuleInfo.of(tree, module)
    imports = _Imports(module.split(".")[0])
    imports.plain("pytest")
    prefix = "_".join(_snake(part) for part in found.qualname.split("."))
    root = found.qualname.split(".")[0]
    imports.from_(module, root)
    decorators = {_dotted(d) for d in found.node.decorator_list}
    instantiable = True
    if found.classes:
        class_path = found.qualname.rsplit(".", 1)[0]
        instantiable = _instantiable(info, found.classes[-1])
        if {"staticmethod", "classmethod"} & decorators:
            call_prefix = found.qualname
        else:
            call_prefix = f"{class_path}().{found.node.name}"
    else:
        call_prefix = found.qualname
    ctx = _Context(info, found, imports, call_prefix, instantiable)

    todos: list[_Test] = []
    examples, broken = _examples(found.node)
    tests = _example_tests(ctx, examples, prefix)
    for line, reason in broken:
        todos.append(
            _todo(
                f"test_{prefix}_todo_example_line_{line}",
                reason,
                f"{reason}; write the assertion it meant",
            )
        )
    raise_tests = _raise_tests(ctx, prefix, examples, tests)
    tests += [t for t in raise_tests if t.kind == "raises"]
    todos += [t for t in raise_tests if t.kind == "todo"]
    properties = _property_tests(ctx, prefix)
    tests += [t for t in properties if t.kind == "property"]
    todos += [t for t in properties if t.kind == "todo"]
    if not tests and not todos:
        todos.append(
            _todo(
                f"test_{prefix}_todo",
                f"test {found.qualname}",
                f"{found.qualname} has no doctest, raise or type hint to derive a test from; "
                "call it and assert what it should return",
            )
        )
    all_tests = tests + todos
    what = "docstrings, raises and type hints"
    header = f'"""Tests for {module}, generated by fastedit from {what}."""'
    if len(header) > 88:
        header = f'"""Tests for {module}.\n\nGenerated by fastedit from {what}.\n"""'
    rendered = [t.render() for t in all_tests]
    imports.prune(_used_names(ast.parse("\n\n".join(rendered))))
    parts = [header, imports.render(), *rendered]
    return parts[0] + "\n\n" + parts[1] + "\n\n\n" + "\n\n".join(parts[2:])


# -- Merge -----------------------------------------------------------------------------------------


def merge(existing: str, generated: str, *, append_only: bool = False) -> str:
    """``existing`` with the generated tests appended.

    Existing text is never changed: the result is ``existing`` followed by the new tests, except
    for the import lines the new tests need and ``existing`` lacks. Those are inserted as whole
    lines after the last import of ``existing``'s leading import block (at the end they would
    be E402; DESIGN.md's first invariant allows adding a missing import line), or after its
    docstring when it has no imports; they are not merged into existing ``from`` lines, so
    ``ruff check --fix`` may want to combine them. With ``append_only`` (an editor edit that
    must be a pure insertion at the end), or when ``existing`` does not parse, they go at the
    end instead, just before the new tests: the result then always starts with ``existing``.

    A generated test whose name is taken is appended as ``<name>_2`` (``_3``...), unless
    ``existing`` already has that very test under that name or a suffixed one: then it is
    skipped, so generating twice for the same function adds nothing the second time.
    """
    if not existing.strip():
        return existing + generated
    new = ast.parse(generated)
    try:
        old: ast.Module | None = ast.parse(existing)
    except SyntaxError:
        old = None
    if old is not None:
        taken = {
            name
            for stmt in old.body
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for name in _bound_names(stmt)
        }
        existing_defs = {
            stmt.name: _def_key(ast.get_source_segment(existing, stmt) or "", stmt.name)
            for stmt in old.body
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
    else:
        taken = set()
        existing_defs = {
            m.group(2): "" for m in re.finditer(r"^(async\s+)?def\s+(\w+)", existing, re.M)
        }
    taken |= set(existing_defs)

    gen_lines = generated.splitlines()
    blocks: list[str] = []
    used: set[str] = set()
    for stmt in new.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        text = "\n".join(gen_lines[start - 1 : stmt.end_lineno])
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            key = _def_key(ast.get_source_segment(generated, stmt) or "", stmt.name)
            same_name = re.compile(rf"{re.escape(stmt.name)}(_\d+)?")
            if any(k == key and same_name.fullmatch(n) for n, k in existing_defs.items()):
                continue
            name = _unique(stmt.name, taken)
            if name != stmt.name:
                pattern = rf"^((?:async\s+)?(?:def|class)\s+){re.escape(stmt.name)}\b"
                text = re.sub(pattern, rf"\g<1>{name}", text, count=1, flags=re.M)
            taken.add(name)
        used |= _used_names(stmt)
        blocks.append(text)
    if not blocks:
        return existing

    present = _bound_names(old) if old is not None else set()
    missing: list[str] = []
    for stmt in new.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound in used and bound not in present:
                    missing.append(_import_line(stmt, alias))
                    present.add(bound)

    head = existing
    if missing and old is not None and not append_only:
        line, after_import = _import_insertion_line(old)
        head = _insert_lines(existing, line, missing, after_import)
    elif missing:
        blocks.insert(0, "\n".join(missing))
    stripped = head.rstrip("\n")
    separator = "\n" * max(0, 3 - (len(head) - len(stripped)))
    return head + separator + "\n\n\n".join(blocks) + "\n"


def _def_key(text: str, name: str) -> str:
    """A definition's text with its name left out: the same test under another name."""
    return re.sub(rf"^((?:async\s+)?(?:def|class)\s+){re.escape(name)}\b", r"\g<1>_", text.strip())


def _import_line(stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
    name = alias.name + (f" as {alias.asname}" if alias.asname else "")
    if isinstance(stmt, ast.Import):
        return f"import {name}"
    return f"from {'.' * stmt.level}{stmt.module or ''} import {name}"


def _import_insertion_line(tree: ast.Module) -> tuple[int, bool]:
    """The 0-based line before which missing imports go (after the leading import block), and
    whether that follows an import."""
    after = 0
    after_import = False
    for index, stmt in enumerate(tree.body):
        is_docstring = (
            index == 0
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        )
        if is_docstring or isinstance(stmt, ast.Import | ast.ImportFrom):
            after = stmt.end_lineno or stmt.lineno
            after_import = not is_docstring
            continue
        break
    return after, after_import


def _insert_lines(text: str, line: int, new_lines: list[str], after_import: bool) -> str:
    """``text`` with ``new_lines`` inserted before its 0-based ``line``, blank lines around them
    where the neighbours are not imports."""
    lines = text.splitlines(keepends=True)
    before, after = lines[:line], lines[line:]
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"  # the file ended on its last import: the inserted lines follow it
    block = "".join(f"{n}\n" for n in new_lines)
    if before and not after_import:
        block = "\n" + block  # after the docstring
    if after and after[0].strip():
        block += "\n\n"  # before code
    return "".join(before) + block + "".join(after)
