"""The package's layer rules (docs/architecture.md), checked on the source text alone.

Every module under ``server/fastedit_lsp/`` is parsed once with :mod:`ast`; nothing of the package
is imported, so the file costs one parse of the sources and nothing else. There is no exemption
list: a rule that does not fit the code is changed here, in the open, or the code is changed.

What counts as an import
    Every ``import`` and ``from ... import`` anywhere in a module: at the top, inside functions
    and methods, inside ``try``. Relative imports are resolved. ``from pkg import name`` is an
    import of the module ``pkg.name`` when that module exists, otherwise of ``pkg`` (its
    ``__init__``). Importing ``a.b.c`` is an import of ``a.b.c`` only: the parents' ``__init__``
    files always run first, so a child naming its parent adds no dependency.

``if TYPE_CHECKING:`` imports
    They never run, so they are *not* edges of the import graph the cycle test walks: a type-only
    import is the ordinary way to name a type without an import cycle. They *do* count for every
    other rule (who may import pygls, lsprotocol, httpx, ``tools``, which layer may import which,
    ``core`` is the stdlib and orjson only): a type-only import still ties a layer to the other
    layer's API, which is what those rules are about. Example: ``pipeline/`` may not name the LSP
    server's class even in an annotation; it reaches the world through its ``JobHost`` protocol.

Layers
    A module's layer is its first component below ``fastedit_lsp``: ``lsp/features/commands.py``
    is in ``lsp``, ``engines/regex/synth.py`` in ``engines``. The top-level modules are layers of
    their own: ``settings``, ``cli``, ``__main__`` and ``__init__`` (the package's root, which
    holds only ``__version__``). ``ALLOWED`` below says, per layer, what it may import.
"""

from __future__ import annotations

import ast
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

PACKAGE = "fastedit_lsp"
ROOT = Path(__file__).resolve().parents[2] / "server" / PACKAGE

MAX_LINES = 1_000
MAX_SERVER_ATTRIBUTES = 15

#: Layer -> what its modules may import from the package, besides their own layer. An entry is a
#: layer ("backends": any module in it) or a module ("backends.base": that module only).
#: Read bottom-up, this is the layer table of docs/architecture.md:
#:   core <- engines, prompting <- actions, completion <- pipeline <- lsp;
#:   backends and project are leaves that only lsp (the composition root) and tools wire in;
#:   backends.base (types and the Backend protocol) and backends.fim (the FIM request types)
#:   are the only backend modules a pure layer may name.
#: Every layer the composition root (``lsp``) may wire together.
_BELOW_LSP = frozenset(
    {"__init__", "core", "engines", "prompting", "completion", "actions", "pipeline"}
    | {"settings", "backends", "project"}
)
ALLOWED: dict[str, frozenset[str]] = {
    "__init__": frozenset(),
    "core": frozenset(),
    "engines": frozenset({"core"}),
    "prompting": frozenset({"core", "backends.base"}),
    "completion": frozenset(
        {"core", "engines", "prompting", "backends.base", "backends.fim", "settings"},
    ),
    "actions": frozenset({"core", "engines", "prompting", "backends.base"}),
    "pipeline": frozenset(
        {"core", "engines", "prompting", "actions", "backends.base", "settings"},
    ),
    "settings": frozenset({"core", "prompting", "backends.presets", "actions.registry"}),
    "backends": frozenset({"core", "settings"}),
    "project": frozenset({"core", "engines"}),
    "lsp": _BELOW_LSP,
    "tools": _BELOW_LSP | {"lsp"},
    "cli": _BELOW_LSP | {"lsp", "tools"},
    "__main__": frozenset({"cli"}),
}

#: Third-party distributions only some layers may import (by top-level import name).
RESTRICTED_THIRD_PARTY: dict[str, frozenset[str]] = {
    "pygls": frozenset({"lsp", "tools"}),
    "lsprotocol": frozenset({"lsp", "tools"}),
    "httpx": frozenset({"backends", "tools"}),
}

#: Layers with no I/O of their own; listed for the docs, enforced by ALLOWED and the rules above.
PURE_LAYERS = ("core", "engines", "prompting", "completion", "actions", "pipeline")


# --- reading the package ----------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One import statement's target, as seen from ``source`` (a module's dotted name)."""

    source: str
    line: int
    #: A module of the package (dotted, with the ``fastedit_lsp.`` prefix), or None.
    internal: str | None
    #: The top-level name of an import from outside the package (``httpx``, ``os``), or None.
    external: str | None
    type_only: bool


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    lines: int

    @property
    def where(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def short(self) -> str:
        return short(self.name)


def short(name: str) -> str:
    """``fastedit_lsp.lsp.server`` -> ``lsp.server``; the root itself -> ``__init__``."""
    return name.removeprefix(PACKAGE + ".") if name != PACKAGE else "__init__"


def layer_of(name: str) -> str:
    return short(name).split(".")[0]


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


@cache
def modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(ROOT.rglob("*.py")):
        name, is_package = module_name(path)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        found[name] = Module(name, path, is_package, tree, len(text.splitlines()))
    return found


def is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def collect_imports(
    tree: ast.Module, name: str, is_package: bool, known: Iterable[str]
) -> list[Import]:
    """Every import in ``tree`` (module ``name``), resolved against the ``known`` module names."""
    known = frozenset(known)
    package = name if is_package else name.rpartition(".")[0]
    found: list[Import] = []

    def internal(target: str) -> str:
        # The deepest module the dotted name reaches (``a.b.C`` with no module ``a.b.C`` -> a.b).
        while target not in known and "." in target:
            target = target.rpartition(".")[0]
        return target

    def add(node: ast.stmt, target: str, type_only: bool) -> None:
        top = target.split(".")[0]
        if top == PACKAGE:
            found.append(Import(name, node.lineno, internal(target), None, type_only))
        else:
            found.append(Import(name, node.lineno, None, top, type_only))

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(node, alias.name, type_only)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                add(node, submodule if submodule in known else origin, type_only)
        # Imports are statements, and statements nest only in statements (bodies, handlers,
        # match cases): expressions need no walking.
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                visit(child, type_only)

    visit(tree, False)
    # ``from x import a, b`` names the module x once.
    return list(dict.fromkeys(found))


@cache
def imports() -> tuple[Import, ...]:
    known = modules().keys()
    return tuple(
        found
        for module in modules().values()
        for found in collect_imports(module.tree, module.name, module.is_package, known)
    )


def at(found: Import) -> str:
    return f"{modules()[found.source].where}:{found.line}"


def report(title: str, violations: list[str]) -> str:
    return f"{title} ({len(violations)}):\n  " + "\n  ".join(violations)


# --- cycles -----------------------------------------------------------------------------------


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def shortest_cycle(graph: Mapping[str, Iterable[str]], start: str, within: set[str]) -> list[str]:
    """The shortest path ``start -> ... -> start`` inside ``within`` (breadth first)."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph.get(node, ())):
            if child not in within:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    return []


def find_cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One shortest cycle through every module that is on a cycle, without repeats.

    Each cycle is a list that starts and ends with the same node: ``[a, b, a]``.
    """
    cycles: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for component in strongly_connected(graph):
        members = set(component)
        if len(component) == 1 and component[0] not in graph.get(component[0], ()):
            continue
        for start in component:
            cycle = shortest_cycle(graph, start, members)
            ring = cycle[:-1]
            first = ring.index(min(ring))
            key = tuple(ring[first:] + ring[:first])
            if key not in seen:
                seen.add(key)
                cycles.append([*key, key[0]])
    return cycles


def runtime_graph() -> tuple[dict[str, set[str]], dict[tuple[str, str], list[str]]]:
    """Module -> modules it imports when it runs; and where each edge is written."""
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    where: dict[tuple[str, str], list[str]] = {}
    for found in imports():
        if found.internal is None or found.type_only:
            continue
        graph[found.source].add(found.internal)
        where.setdefault((found.source, found.internal), []).append(at(found))
    return graph, where


def test_the_cycle_finder_reports_a_synthetic_cycle_as_a_chain() -> None:
    graph = {
        "a": {"b"},
        "b": {"c", "d"},
        "c": {"a"},
        "d": set(),
        "e": {"e"},
        "f": {"g"},
        "g": {"f", "a"},
    }
    assert find_cycles(graph) == [["a", "b", "c", "a"], ["e", "e"], ["f", "g", "f"]]
    assert find_cycles({"x": {"y"}, "y": set()}) == []


def test_imports_are_resolved_as_the_rules_say() -> None:
    source = """
from typing import TYPE_CHECKING
import httpx.auth
from . import sibling, not_a_module
from ..core.document import Document
from .. import core
if TYPE_CHECKING:
    from ..lsp.server import Server
else:
    import os
def later():
    from ..engines import lookup
"""
    known = [
        "fastedit_lsp",
        "fastedit_lsp.core",
        "fastedit_lsp.core.document",
        "fastedit_lsp.engines",
        "fastedit_lsp.engines.lookup",
        "fastedit_lsp.lsp",
        "fastedit_lsp.lsp.server",
        "fastedit_lsp.pipeline",
        "fastedit_lsp.pipeline.sibling",
        "fastedit_lsp.pipeline.runner",
    ]
    found = collect_imports(ast.parse(source), "fastedit_lsp.pipeline.runner", False, known)
    assert [(i.internal or i.external, i.type_only) for i in found] == [
        ("typing", False),
        ("httpx", False),
        ("fastedit_lsp.pipeline.sibling", False),
        ("fastedit_lsp.pipeline", False),
        ("fastedit_lsp.core.document", False),
        ("fastedit_lsp.core", False),
        ("fastedit_lsp.lsp.server", True),
        ("os", False),
        ("fastedit_lsp.engines.lookup", False),
    ]
    # In a package's __init__, "." is the package itself.
    package = "fastedit_lsp.pipeline"
    found = collect_imports(ast.parse("from . import sibling"), package, True, known)
    assert [i.internal for i in found] == ["fastedit_lsp.pipeline.sibling"]


def test_no_module_imports_itself_back_through_a_cycle() -> None:
    graph, where = runtime_graph()
    violations = []
    for cycle in find_cycles(graph):
        chain = " -> ".join(short(name) for name in cycle)
        edges = "; ".join(", ".join(where[edge]) for edge in pairwise(cycle))
        violations.append(f"{chain}  ({edges})")
    assert not violations, report("import cycles (type-only imports excluded)", violations)


# --- who may import what ----------------------------------------------------------------------


def third_party_violations(distribution: str) -> list[str]:
    allowed = RESTRICTED_THIRD_PARTY[distribution]
    return [
        f"{at(found)}: {short(found.source)} imports {distribution}"
        for found in imports()
        if found.external == distribution and layer_of(found.source) not in allowed
    ]


def test_only_lsp_and_tools_import_pygls() -> None:
    violations = third_party_violations("pygls")
    assert not violations, report("pygls imported outside lsp/ and tools/", violations)


def test_only_lsp_and_tools_import_lsprotocol() -> None:
    violations = third_party_violations("lsprotocol")
    assert not violations, report("lsprotocol imported outside lsp/ and tools/", violations)


def test_only_backends_and_tools_import_httpx() -> None:
    violations = third_party_violations("httpx")
    assert not violations, report("httpx imported outside backends/ and tools/", violations)


def test_only_the_cli_imports_tools() -> None:
    violations = [
        f"{at(found)}: {short(found.source)} imports {short(found.internal)}"
        for found in imports()
        if found.internal is not None
        and layer_of(found.internal) == "tools"
        and layer_of(found.source) not in {"tools", "cli"}
    ]
    assert not violations, report("tools/ imported by other than cli.py", violations)


#: What ``core`` may import besides the standard library: the JSON codec of
#: ``core/json_codec.py`` (no I/O, no state; the hot paths' JSON).
CORE_THIRD_PARTY = frozenset({"orjson"})


def test_core_imports_only_the_standard_library_and_core() -> None:
    violations = [
        f"{at(found)}: {short(found.source)} imports {found.external or short(found.internal)}"
        for found in imports()
        if layer_of(found.source) == "core"
        and (
            (
                found.external is not None
                and found.external not in sys.stdlib_module_names
                and found.external not in CORE_THIRD_PARTY
            )
            or (found.internal is not None and layer_of(found.internal) != "core")
        )
    ]
    assert not violations, report("core/ importing beyond the stdlib, orjson and core/", violations)


def test_every_layer_is_in_the_rules_matrix() -> None:
    listed = set(ALLOWED)
    unknown = sorted(
        f"{module.where}: layer {layer_of(module.name)!r}"
        for module in modules().values()
        if layer_of(module.name) not in listed
    )
    assert not unknown, report("layers missing from ALLOWED (add them, with their rule)", unknown)
    assert set(PURE_LAYERS) <= listed
    for layer, entries in ALLOWED.items():
        assert all(entry.split(".")[0] in listed for entry in entries), layer


def may_import(source_layer: str, target: str) -> bool:
    target_short = short(target)
    target_layer = target_short.split(".")[0]
    if target_layer == source_layer:
        return True
    return any(
        target_short == entry or target_short.startswith(entry + ".")
        for entry in ALLOWED.get(source_layer, frozenset())
    )


def test_layers_import_only_what_the_matrix_allows() -> None:
    violations = [
        f"{at(found)}: {short(found.source)} imports {short(found.internal)}"
        + (" (type-only)" if found.type_only else "")
        for found in imports()
        if found.internal is not None and not may_import(layer_of(found.source), found.internal)
    ]
    assert not violations, report("imports the layer matrix (ALLOWED) forbids", violations)


# --- size and shape ---------------------------------------------------------------------------


def test_no_module_is_over_a_thousand_lines() -> None:
    violations = [
        f"{module.where}: {module.lines} lines"
        for module in modules().values()
        if module.lines > MAX_LINES
    ]
    assert not violations, report(f"modules over {MAX_LINES:,} lines", violations)


def subclasses_language_server(node: ast.ClassDef) -> bool:
    return any(
        (isinstance(base, ast.Name) and base.id == "LanguageServer")
        or (isinstance(base, ast.Attribute) and base.attr == "LanguageServer")
        for base in node.bases
    )


def own_attributes(node: ast.ClassDef) -> dict[str, int]:
    """``self.X = ...`` / ``self.X: T = ...`` / ``self.X += ...`` in the class's methods.

    Attribute name -> the first line assigning it. ``self`` is each method's first parameter.
    """
    found: dict[str, int] = {}

    def targets(target: ast.expr) -> Iterator[ast.expr]:
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                yield from targets(element)
        elif isinstance(target, ast.Starred):
            yield from targets(target.value)
        else:
            yield target

    for method in node.body:
        if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
            continue
        params = method.args.posonlyargs + method.args.args
        if not params:
            continue
        me = params[0].arg
        for statement in ast.walk(method):
            if isinstance(statement, ast.Assign):
                assigned = statement.targets
            elif isinstance(statement, ast.AnnAssign | ast.AugAssign):
                assigned = [statement.target]
            else:
                continue
            for outer in assigned:
                for target in targets(outer):
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == me
                    ):
                        found.setdefault(target.attr, statement.lineno)
    return found


def test_the_attribute_counter_sees_every_kind_of_assignment() -> None:
    source = """
class Server(LanguageServer):
    limit = 3
    def __init__(me, x):
        me.a = me.b = x
        me.c: int = 0
        me.d, (me.e, *me.f) = x
        me.a += 1
        other.g = 1
        def later():
            me.h = 2
    @staticmethod
    def helper(self):
        self.i = 3
"""
    (server,) = ast.parse(source).body
    assert isinstance(server, ast.ClassDef)
    assert subclasses_language_server(server)
    assert list(own_attributes(server)) == ["a", "b", "c", "d", "e", "f", "h"]


def test_the_server_composes_state_owners_instead_of_holding_many_fields() -> None:
    servers = [
        (module, node)
        for module in modules().values()
        if layer_of(module.name) == "lsp"
        for node in ast.walk(module.tree)
        if isinstance(node, ast.ClassDef) and subclasses_language_server(node)
    ]
    assert servers, "no class in lsp/ subclasses pygls' LanguageServer: nothing to check"
    violations = []
    for module, node in servers:
        attributes = own_attributes(node)
        if len(attributes) > MAX_SERVER_ATTRIBUTES:
            listing = ", ".join(
                f"{name} ({module.where}:{line})"
                for name, line in sorted(attributes.items(), key=lambda item: item[1])
            )
            violations.append(
                f"{module.where}:{node.lineno}: {node.name} has {len(attributes)} attributes"
                f" of its own (at most {MAX_SERVER_ATTRIBUTES}): {listing}"
            )
    assert not violations, report("servers holding too many fields", violations)


def is_private(attr: str) -> bool:
    return attr.startswith("_") and not (attr.startswith("__") and attr.endswith("__"))


def test_features_touch_no_private_attribute() -> None:
    violations = [
        f"{module.where}:{node.lineno}: {ast.unparse(node)}"
        for module in modules().values()
        if short(module.name) == "lsp.features" or short(module.name).startswith("lsp.features.")
        for node in sorted(
            (n for n in ast.walk(module.tree) if isinstance(n, ast.Attribute)),
            key=lambda n: (n.lineno, n.col_offset),
        )
        if is_private(node.attr)
        and not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
    ]
    assert not violations, report("private attributes touched in lsp/features/", violations)
