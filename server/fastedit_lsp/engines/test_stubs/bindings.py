"""What the module binds: the module-level names of the user's module and how a test module
gets each one (``_Binding``), its literal constants and its classes (``_ModuleInfo``), and
``_literal``, the value of a literal expression (else unknown).
"""

from __future__ import annotations

import ast
import functools
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from .targets import _nested_statements
from .values import UNKNOWN


@dataclass(frozen=True)
class _Binding:
    """How a test module gets a module-level name of the user's module."""

    module: str  # "" for a plain ``import x``
    name: str  # the imported name (for ``import a.b``: "a.b")
    alias: str | None = None


@functools.lru_cache(maxsize=32)
def _parsed(source: str) -> ast.Module | None:
    """Another module's tree, parsed once for the functions of one file written in turn (trees
    are only read here, never changed); None when it does not parse. A server forgets them
    when its job ends (:func:`forget_parsed`)."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def forget_parsed() -> None:
    """Drop the trees of other modules kept by :func:`_parsed`: a write-tests job calls it as it
    ends, so a long session keeps no tree of the project's modules (up to 32 of them, tens of MB
    for a large project) after its jobs."""
    _parsed.cache_clear()


#: The source of another module of the project by dotted name (None: not one, or unreadable).
ModuleReader = Callable[[str], str | None]


@dataclass
class _ModuleInfo:
    module: str
    tree: ast.Module
    names: dict[str, _Binding] = field(default_factory=dict)
    constants: dict[str, object] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)  # by qualname
    #: Where an imported name comes from: (absolute module, name); a relative import's module
    #: is given for both places its package can be (the module is a package, or is in one).
    origins: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: Module-level names bound once to an expression that is not a literal (the evaluator
    #: computes them when it can: ``SIZES = [2**i for i in range(4)]``).
    computed: dict[str, ast.expr] = field(default_factory=dict)
    reader: ModuleReader | None = None
    #: Modules the module imports everything from (``from .patterns import *``), absolute,
    #: each given for both places a relative one can be.
    stars: list[str] = field(default_factory=list)
    #: Other modules of the project, parsed once (shared by every module read through this one).
    others: dict[str, _ModuleInfo | None] = field(default_factory=dict)
    #: The module's plain top-level functions by name, once an evaluator asked (``scope``).
    functions: dict[str, ast.FunctionDef] | None = field(default=None, compare=False, repr=False)

    def other(self, dotted: str) -> _ModuleInfo | None:
        """Another module of the project, if the reader has it."""
        if dotted == self.module:
            return self
        if dotted not in self.others:
            self.others[dotted] = None  # an import cycle ends here
            source = self.reader(dotted) if self.reader is not None else None
            if source is not None:
                tree = _parsed(source)
                if tree is not None:
                    found = _ModuleInfo.of(tree, dotted, self.reader)
                    found.others = self.others
                    self.others[dotted] = found
        return self.others[dotted]

    @classmethod
    def of(cls, tree: ast.Module, module: str, reader: ModuleReader | None = None) -> _ModuleInfo:
        info = cls(module, tree, reader=reader)
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
                    if value is not UNKNOWN:
                        info.constants[targets[0].id] = value
                    else:
                        info.computed[targets[0].id] = stmt.value
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    info.names[bound] = _Binding("", alias.name, alias.asname)
            elif isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    bound = alias.asname or alias.name
                    if alias.name == "*":
                        info.stars += _absolute(module, stmt.level, stmt.module)
                        continue
                    info.origins[bound] = [
                        (base, alias.name) for base in _absolute(module, stmt.level, stmt.module)
                    ]
                    if stmt.level or not stmt.module:
                        info.names[bound] = own  # relative: the name is in the module's namespace
                    else:
                        info.names[bound] = _Binding(stmt.module, alias.name, alias.asname)
        for d in _all_classes(tree.body, ""):
            info.classes[d[0]] = d[1]
        for name in _changed_names(tree):
            info.constants.pop(name, None)
            info.computed.pop(name, None)
        return info

    def binding(self, name: str) -> _Binding | None:
        found = self.names.get(name)
        if found is not None and found.module == self.module and found.name == "":
            return _Binding(self.module, name)
        return found


_MUTATORS = frozenset(
    {
        *("append", "extend", "insert", "pop", "popitem", "remove", "clear", "update"),
        *("add", "discard", "setdefault", "sort", "reverse", "__setitem__", "__delitem__"),
    }
)


#: :func:`_changed_names` of each module tree met (a tree is read for each generation).
_CHANGED: weakref.WeakKeyDictionary[ast.Module, frozenset[str]] = weakref.WeakKeyDictionary()


def _changed_names(tree: ast.Module) -> frozenset[str]:
    """Module-level names whose literal value may not be the one they hold when a test runs:
    bound more than once at module level, declared ``global`` somewhere, or changed in place."""
    found = _CHANGED.get(tree)
    if found is None:
        found = _CHANGED[tree] = frozenset(_find_changed_names(tree))
    return found


def _find_changed_names(tree: ast.Module) -> set[str]:
    counts: dict[str, int] = {}
    for stmt in _nested_statements(tree.body):
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        counts[node.id] = counts.get(node.id, 0) + 1
                    if isinstance(stmt, ast.AugAssign) and isinstance(node, ast.Name):
                        counts[node.id] += 1
    changed = {name for name, count in counts.items() if count > 1}
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            changed.update(node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, ast.Name)
        ):
            changed.add(node.func.value.id)
        elif (
            isinstance(node, ast.Subscript | ast.Attribute)
            and isinstance(node.ctx, ast.Store | ast.Del)
            and isinstance(node.value, ast.Name)
        ):
            changed.add(node.value.id)
    return changed


def _absolute(module: str, level: int, name: str | None) -> list[str]:
    """The modules ``from <level dots><name> import ...`` may mean in ``module``."""
    if not level:
        return [name] if name else []
    parts = module.split(".")
    bases = [".".join(parts[: len(parts) - level + 1]), ".".join(parts[: len(parts) - level])]
    return [f"{b}.{name}" if b and name else (b or name or "") for b in bases if b or name]


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
        return UNKNOWN
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN
