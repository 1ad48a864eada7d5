"""The package's layer rules (docs/architecture.md), checked on the source text alone.

Every module under ``server/fastedit_lsp/`` is parsed once with :mod:`ast`; nothing of the package
is imported, so the file costs one parse of the sources and nothing else. There is no silent
exemption: a rule that does not fit the code is changed here, in the open, or the code is changed;
the list of what is still being cut (``KNOWN_TYPE_ONLY_CYCLES``) names each entry, and a test
fails once an entry is gone so that the list shrinks with the code.

What counts as an import
    Every ``import`` and ``from ... import`` anywhere in a module: at the top, inside functions
    and methods, inside ``try``. Relative imports are resolved. ``from pkg import name`` is an
    import of the module ``pkg.name`` when that module exists, otherwise of ``pkg`` (its
    ``__init__``). Importing ``a.b.c`` is an import of ``a.b.c`` only: the parents' ``__init__``
    files always run first, so a child naming its parent adds no dependency.

``if TYPE_CHECKING:`` imports
    They never run, so they are not edges of the *run-time* import graph; but a type-only import
    that closes a circle still ties the two modules together (each needs the other to be read),
    so the package has no import cycle, type-only included (``KNOWN_TYPE_ONLY_CYCLES`` lists
    the ones being cut right now, each named, and the test says they must go). They count for
    every other rule (who may import pygls, lsprotocol, httpx, ``tools``, which layer may import
    which, ``core`` is the stdlib and orjson only): a type-only import still ties a layer to the
    other layer's API, which is what those rules are about. Example: ``pipeline/`` may not name
    the LSP server's class even in an annotation; it reaches the world through its ``JobHost``
    protocol.

The LSP layer
    Each helper and each feature in ``lsp/`` is handed the owners it uses by the composition
    root (``lsp/server.py``, its ``register_all`` for the features): no other module of
    ``lsp/`` names ``FasteditServer``, not even in an annotation. A job's unverified-draft
    flags are updated from one module, the job reporter (``lsp/reporter.py``).

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

#: Third-party distributions only some layers or modules may import (by top-level import name;
#: an entry is a layer, or a module as in ``ALLOWED``). aiohttp is the wire under the httpx
#: client, glue in one module: the rest of the server speaks httpx.
RESTRICTED_THIRD_PARTY: dict[str, frozenset[str]] = {
    "pygls": frozenset({"lsp", "tools"}),
    "lsprotocol": frozenset({"lsp", "tools"}),
    "httpx": frozenset({"backends", "tools"}),
    "aiohttp": frozenset({"backends.aio_transport"}),
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


#: Type-only cycles another issue is cutting while this rule lands. They must go: each is
#: removed from here with the commit that cuts it (the test below fails once one is cut).
#: (actions/base <-> parse_check was cut by the checks issue: ParseTrees is engines'.)
KNOWN_TYPE_ONLY_CYCLES: frozenset[frozenset[str]] = frozenset()


def full_graph() -> tuple[dict[str, set[str]], dict[tuple[str, str], list[str]]]:
    """Module -> every module it imports, type-only included; and where each edge is written."""
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    where: dict[tuple[str, str], list[str]] = {}
    for found in imports():
        if found.internal is None:
            continue
        graph[found.source].add(found.internal)
        where.setdefault((found.source, found.internal), []).append(at(found))
    return graph, where


def test_the_package_has_no_import_cycle_type_only_included() -> None:
    graph, where = full_graph()
    violations = []
    for cycle in find_cycles(graph):
        if frozenset(short(name) for name in cycle) in KNOWN_TYPE_ONLY_CYCLES:
            continue
        chain = " -> ".join(short(name) for name in cycle)
        edges = "; ".join(", ".join(where[edge]) for edge in pairwise(cycle))
        violations.append(f"{chain}  ({edges})")
    assert not violations, report("import cycles, type-only imports included", violations)


def test_each_known_type_only_cycle_is_still_there_until_it_is_removed_from_the_list() -> None:
    graph, _ = full_graph()
    present = {frozenset(short(name) for name in cycle) for cycle in find_cycles(graph)}
    gone = sorted(" <-> ".join(sorted(cycle)) for cycle in KNOWN_TYPE_ONLY_CYCLES - present)
    assert not gone, report("cut: remove from KNOWN_TYPE_ONLY_CYCLES", gone)


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
        if found.external == distribution
        and layer_of(found.source) not in allowed
        and short(found.source) not in allowed
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


def test_only_the_transport_module_imports_aiohttp() -> None:
    violations = third_party_violations("aiohttp")
    assert not violations, report("aiohttp imported outside backends/aio_transport.py", violations)


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


#: Names the standard library documents as public although they start with "_".
DOCUMENTED_PUBLIC = frozenset({"os._exit", "sys._getframe"})
#: The one module where pygls's own private names may be touched (DESIGN: "all pygls fixes in
#: one module"); anywhere else they go through what that module exposes.
PYGLS_FIXES = "lsp.protocol"


def defined_names(tree: ast.Module) -> set[str]:
    """The names a module defines itself: its functions, methods and classes, the names its
    class bodies assign or annotate, and every attribute it assigns (``self._x = ...``,
    ``context._lock = ...``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def is_own_receiver(node: ast.expr) -> bool:
    """``self``, ``cls`` or ``super()``."""
    if isinstance(node, ast.Name):
        return node.id in {"self", "cls"}
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def private_violations(module: Module) -> list[str]:
    """Where ``module`` touches a private attribute it does not define itself."""
    own = defined_names(module.tree)
    found = []
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Attribute) or not is_private(node.attr):
            continue
        if is_own_receiver(node.value) or node.attr in own:
            continue
        if ast.unparse(node) in DOCUMENTED_PUBLIC or module.short == PYGLS_FIXES:
            continue
        found.append(
            (node.lineno, node.col_offset, f"{module.where}:{node.lineno}: {ast.unparse(node)}")
        )
    return [text for *_, text in sorted(found)]


def test_the_private_name_rule_tells_own_names_from_others() -> None:
    source = """
class Box:
    _size = 0
    def grow(self, other):
        other._size += self._size
        other._colour = 1
        return other._weight + super()._parent() + os._exit
    def _parent(self): ...
"""
    module = Module("fastedit_lsp.core.box", ROOT / "core" / "box.py", False, ast.parse(source), 9)
    assert private_violations(module) == ["core/box.py:7: other._weight"]


def test_no_module_touches_another_modules_private_attribute() -> None:
    """A name starting with "_" belongs to the module that defines it: no module reaches into
    another's (``plan_run`` calling the runner's ``_prepare`` was the import cycle between
    them), and pygls's private names are touched only in the module of pygls fixes."""
    violations = [v for module in modules().values() for v in private_violations(module)]
    assert not violations, report("private attributes of other modules touched", violations)


#: At most this many lines per function in the job pipeline (its stages stay small and named).
MAX_PIPELINE_FUNCTION_LINES = 60


def test_no_function_in_the_pipeline_is_over_sixty_lines() -> None:
    violations = [
        f"{module.where}:{node.lineno}: {node.name} has {node.end_lineno - node.lineno + 1} lines"
        for module in modules().values()
        if layer_of(module.name) == "pipeline"
        for node in ast.walk(module.tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_PIPELINE_FUNCTION_LINES
    ]
    assert not violations, report(
        f"pipeline functions over {MAX_PIPELINE_FUNCTION_LINES} lines", violations
    )


def test_no_pipeline_stage_imports_the_runner() -> None:
    """The runner composes the stages; a stage naming it (even for a type) is a cycle."""
    violations = [
        at(found)
        for found in imports()
        if found.internal == f"{PACKAGE}.pipeline.runner"
        and layer_of(found.source) == "pipeline"
        and found.source != f"{PACKAGE}.pipeline.runner"
    ]
    assert not violations, report("pipeline modules importing the runner", violations)


# --- the LSP layer: narrow dependencies, one job reporter ------------------------------------

SERVER_CLASS = "FasteditServer"
#: The composition root: it defines the server and hands each helper its owners.
COMPOSITION_ROOT = "lsp.server"


def annotation_nodes(tree: ast.AST) -> Iterator[ast.expr]:
    """Every annotation in ``tree``: of parameters, returns and annotated assignments."""
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            yield node.annotation
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def names_of(tree: ast.AST, name: str) -> list[int]:
    """Lines where ``tree`` names ``name``: an identifier, an attribute, an import, or a quoted
    annotation (prose in docstrings and comments does not count)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        identifier = (isinstance(node, ast.Name) and node.id == name) or (
            isinstance(node, ast.Attribute) and node.attr == name
        )
        imported = isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names)
        if identifier or imported:
            lines.add(node.lineno)
    for annotation in annotation_nodes(tree):
        for node in ast.walk(annotation):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                words = node.value.replace("[", " ").replace("]", " ").replace("|", " ").split()
                if name in words or any(w.endswith("." + name) for w in words):
                    lines.add(node.lineno)
    return sorted(lines)


def server_naming_modules() -> dict[str, list[int]]:
    return {
        module.short: lines
        for module in modules().values()
        if layer_of(module.name) == "lsp" and (lines := names_of(module.tree, SERVER_CLASS))
    }


def test_the_name_finder_sees_imports_annotations_and_quoted_annotations() -> None:
    source = (
        "from .server import FasteditServer as S\n"
        "def f(ls: 'FasteditServer') -> list['x.FasteditServer']: ...\n"
        "y: server.FasteditServer\n"
        "def g(ls: Other) -> None:\n"
        "    'FasteditServer in a docstring is prose.'\n"
    )
    assert names_of(ast.parse(source), SERVER_CLASS) == [1, 2, 3]


def test_no_module_of_lsp_but_the_composition_root_names_the_server_class() -> None:
    violations = [
        f"{modules()[PACKAGE + '.' + name].where}:{','.join(map(str, lines))}"
        for name, lines in sorted(server_naming_modules().items())
        if name != COMPOSITION_ROOT
    ]
    assert not violations, report(
        f"lsp/ modules naming {SERVER_CLASS} (hand them the owners they use)", violations
    )


#: The one module that updates a job's unverified-draft flags, and the flags' own module.
FLAGS_OWNER = "lsp.reporter"
FLAGS_MODULE = "lsp.flags"


def flag_updates(tree: ast.AST) -> list[ast.Attribute]:
    """``<...>.flags.refresh`` / ``<...>._flags.on_change`` and the like."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in {"refresh", "on_change"}):
            continue
        owner = node.value
        name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", None)
        if name in {"flags", "_flags"}:
            found.append(node)
    return found


def test_the_flag_update_finder_sees_the_chains_it_forbids() -> None:
    source = (
        "ls.client.flags.refresh(u, d, j)\nself._flags.on_change(u)\nflags.refresh()\nx.refresh()"
    )
    assert [n.lineno for n in flag_updates(ast.parse(source))] == [1, 2, 3]


def test_a_jobs_flags_are_updated_from_one_module_only() -> None:
    exempt = {FLAGS_OWNER, FLAGS_MODULE}
    violations = [
        f"{at(found)}: {short(found.source)} imports {FLAGS_MODULE}"
        for found in imports()
        if found.internal == f"{PACKAGE}.{FLAGS_MODULE}" and short(found.source) not in exempt
    ]
    violations += [
        f"{module.where}:{node.lineno}: {ast.unparse(node)}"
        for module in modules().values()
        if module.short not in exempt
        for node in flag_updates(module.tree)
    ]
    assert not violations, report(f"flags updated outside {FLAGS_OWNER}", violations)
