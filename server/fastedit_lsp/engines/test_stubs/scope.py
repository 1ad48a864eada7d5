"""What a name means to the evaluator (``_Scope``, the base of ``_Evaluator``): the walked
scope, then the module's constants, values it computes once, its own plain functions (one value
each), what it imports from the project's other modules (also with ``*``), the standard library
modules the evaluator models, the builtins; and the classes an ``isinstance`` check names. Also
the AST helpers the later modules share (``_dotted``, ``_imported``...).
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import copy
import numbers
import weakref

from .bindings import _ModuleInfo
from .values import (
    _SAFE_CONSTANTS,
    SAFE_FUNCS,
    UNKNOWN,
    Abort,
    Break,
    Continue,
    Func,
    ModuleRef,
    Raised,
    Return,
    UserFunc,
    safe,
)

#: The abstract classes of the standard library an ``isinstance`` check may name.
_ABSTRACT_TYPES = {
    "collections.abc": frozenset(
        {
            *("Iterable", "Iterator", "Sequence", "MutableSequence", "Mapping", "Set"),
            *("MutableMapping", "MutableSet", "Sized", "Container", "Collection", "Hashable"),
            *("Reversible", "Generator", "ByteString"),
        }
    ),
    "numbers": frozenset({"Number", "Integral", "Real", "Rational", "Complex"}),
}
_ITERATOR_TYPES = (collections.abc.Iterable, collections.abc.Iterator)
_ABSTRACT_MODULES = {"collections.abc": collections.abc, "numbers": numbers}
#: Standard library modules whose functions the evaluator applies (``SAFE_FUNCS``).
_MODELLED_MODULES = frozenset({"math", "re", "itertools", "os"})


class _Scope:
    """Name resolution for the evaluator; ``value`` is the evaluator's."""

    def __init__(self, info: _ModuleInfo) -> None:
        self.info = info
        self.inexact = False
        self._user_funcs: dict[int, UserFunc] = {}
        self._constants: dict[tuple[int, str], object] = {}

    def value(self, node: ast.expr, env: dict[str, object]) -> object:
        raise NotImplementedError

    def _name(self, name: str, env: dict[str, object]) -> object:
        if name in env:
            return env[name]
        if name in self.info.constants:
            return copy.deepcopy(self.info.constants[name])
        if name in self.info.computed:
            return self._computed(self.info, name)
        function = self._module_function(self.info, name)
        if function is not None:
            return self._user_func(function, self.info)
        for module, attr in self.info.origins.get(name, []):
            found = self._resolve(module, attr, 0)
            if found is not UNKNOWN:
                return found
        binding = self.info.names.get(name)
        if binding is not None:
            if binding.module == self.info.module:
                return UNKNOWN
            stmt = ast.ImportFrom(binding.module, [], 0) if binding.module else ast.Import([])
            return _imported(stmt, ast.alias(binding.name, binding.alias))
        for star in self.info.stars:
            found = self._resolve(star, name, 0)
            if found is not UNKNOWN:
                return found
        if name in SAFE_FUNCS:
            return Func(name)
        return UNKNOWN

    def _computed(self, info: _ModuleInfo, name: str) -> object:
        """A module-level name bound once to an expression: its value when the evaluator
        computes it exactly (once per module and name)."""
        key = (id(info), name)
        if key not in self._constants:
            self._constants[key] = UNKNOWN  # a cycle ends here
            caller, inexact = self.info, self.inexact
            self.info, self.inexact = info, False
            try:
                value = self.value(info.computed[name], {})
            except (Abort, Raised, Return, Break, Continue, RecursionError):
                value = UNKNOWN
            finally:
                exact = not self.inexact
                self.info, self.inexact = caller, inexact
            self._constants[key] = value if exact and safe(value) else UNKNOWN
        return copy.deepcopy(self._constants[key])

    def _resolve(self, module: str, attr: str, depth: int) -> object:
        """``module.attr`` for another module of the project the reader has: a plain function,
        a constant, a submodule, or what that module imported under the name."""
        if depth > 4:
            return UNKNOWN
        if module in _MODELLED_MODULES:
            return _imported(ast.ImportFrom(module, [], 0), ast.alias(attr))
        info = self.info.other(module)
        if info is None:
            # A package whose ``__init__`` is not read (or a namespace package): a submodule?
            submodule = self.info.other(f"{module}.{attr}")
            return ModuleRef(f"{module}.{attr}") if submodule is not None else UNKNOWN
        function = self._module_function(info, attr)
        if function is not None:
            return self._user_func(function, info)
        if attr in info.constants:
            return copy.deepcopy(info.constants[attr])
        if attr in info.computed:
            return self._computed(info, attr)
        for origin, name in info.origins.get(attr, []):
            found = self._resolve(origin, name, depth + 1)
            if found is not UNKNOWN:
                return found
        if attr not in info.names and info.other(f"{module}.{attr}") is not None:
            return ModuleRef(f"{module}.{attr}")
        if attr not in info.names:
            for star in info.stars:
                found = self._resolve(star, attr, depth + 1)
                if found is not UNKNOWN:
                    return found
        return UNKNOWN

    def _user_func(self, node: ast.FunctionDef, info: _ModuleInfo) -> UserFunc:
        """One value per function (``f is g`` holds for two reads of one name)."""
        found = self._user_funcs.get(id(node))
        if found is None:
            found = self._user_funcs[id(node)] = UserFunc(node, info)
        return found

    def _module_function(self, info: _ModuleInfo, name: str) -> ast.FunctionDef | None:
        """The module's plain top-level function ``name`` (no decorator but a cache, bound
        once, declaring nothing ``global``); the module's are found once, kept on its info."""
        if info.functions is None:
            defined: dict[str, list[ast.stmt]] = {}
            for stmt in info.tree.body:
                for bound in _assigned_names(stmt):
                    defined.setdefault(bound, []).append(stmt)
            info.functions = {
                bound: stmts[0]
                for bound, stmts in defined.items()
                if len(stmts) == 1
                and isinstance(stmts[0], ast.FunctionDef)
                and all(_transparent(d) for d in stmts[0].decorator_list)
            }
        function = info.functions.get(name)
        return None if function is None or _declares_global(function) else function

    def _types(self, spec: ast.expr, env: dict[str, object], depth: int) -> list[type] | None:
        """The classes an ``isinstance`` spec names, for the values the evaluator makes: the
        builtins, ``collections.abc`` and ``numbers``, a module constant holding a tuple of
        them; the module's own classes count as none (our values are never theirs)."""
        if depth > 3:
            return None
        if isinstance(spec, ast.Tuple):
            found: list[type] = []
            for item in spec.elts:
                inner = self._types(item, env, depth + 1)
                if inner is None:
                    return None
                found += inner
            return found
        if isinstance(spec, ast.Constant) and spec.value is None:
            return [type(None)]
        dotted = _dotted(spec)
        if dotted is None or dotted.split(".")[0] in env:
            return None
        if "." not in dotted:
            if dotted in self.info.classes:
                return []
            if dotted in self.info.computed:
                return self._types(self.info.computed[dotted], {}, depth + 1)
            binding = self.info.names.get(dotted)
            if binding is None:
                builtin = getattr(builtins, dotted, None)
                return [builtin] if isinstance(builtin, type) else None
            module, name = binding.module, binding.name
        else:
            binding = self.info.names.get(dotted.split(".")[0])
            if binding is None or binding.module:
                return None
            module, _, name = dotted.rpartition(".")
        if module in _ABSTRACT_TYPES and name in _ABSTRACT_TYPES[module]:
            return [getattr(_ABSTRACT_MODULES[module], name)]
        return None


#: :func:`_yields` of each function node met (trees are never changed in place: a variant is a
#: changed copy).
_YIELDS: weakref.WeakKeyDictionary[ast.AST, bool] = weakref.WeakKeyDictionary()


def _yields(fn: ast.FunctionDef) -> bool:
    """The function's own body yields: calling it makes a generator."""
    found = _YIELDS.get(fn)
    if found is None:
        found = _YIELDS[fn] = _body_yields(fn)
    return found


_GLOBALS: weakref.WeakKeyDictionary[ast.AST, bool] = weakref.WeakKeyDictionary()


def _declares_global(fn: ast.FunctionDef) -> bool:
    """A ``global`` or ``nonlocal`` statement anywhere in the function."""
    found = _GLOBALS.get(fn)
    if found is None:
        found = _GLOBALS[fn] = any(isinstance(n, ast.Global | ast.Nonlocal) for n in ast.walk(fn))
    return found


def _body_yields(fn: ast.FunctionDef) -> bool:
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _transparent(decorator: ast.expr) -> bool:
    """A decorator that keeps what the function returns (a cache in front of it)."""
    name = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
    return name.split(".")[-1] in ("cache", "lru_cache") and name.split(".")[0] in (
        "cache",
        "lru_cache",
        "functools",
    )


def _is_suppress(node: ast.expr) -> bool:
    """``contextlib.suppress(SomeError, ...)``: exception classes by name."""
    return (
        isinstance(node, ast.Call)
        and (_dotted(node.func) or "").split(".")[-1] == "suppress"
        and not node.keywords
        and all(_dotted(a) is not None for a in node.args)
    )


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _assigned_names(stmt: ast.stmt) -> list[str]:
    """The names a module-level statement binds."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt.name]
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return [a.asname or a.name.split(".")[0] for a in stmt.names]
    return [
        n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]


def _imported(stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> object:
    """The value an import binds, for the modules the evaluator models (else unknown)."""
    if isinstance(stmt, ast.Import):
        # A module: its attributes are resolved when read (math, or the project's modules).
        return ModuleRef(alias.name if alias.asname else alias.name.split(".")[0])
    if stmt.module in _MODELLED_MODULES and not stmt.level:
        dotted = f"{stmt.module}.{alias.name}"
        if dotted in SAFE_FUNCS:
            return Func(dotted)
        return _SAFE_CONSTANTS.get(dotted, UNKNOWN)
    return UNKNOWN
