"""Java's names check: each name a region reads is declared in the file, its package, an import,
``java.lang``, or inherited by the file's classes.

Pure. Lenient on scope: a name declared anywhere in the file (a local, a parameter, a field, a
method, a type, a type parameter, an enum constant, a pattern or lambda variable) counts for
every read, and Java's namespaces are not told apart. The package's other files (their types)
and the sources of types outside the file come from the caller (:class:`JavaPackage`, read from
disk in ``project/``); the JDK's public types of ``java.base`` from ``java_stdlib.txt`` (made by
``scripts/java_stdlib_table.py`` from JDK 17's ``src.zip``). A class's inherited members are
known when its whole chain of supertypes is (the file, the sources on disk, the table).

Not flagged (a false alarm costs more than a miss): unqualified names when the package is
unknown (None), when a class of the file has a supertype whose members cannot be known, or with
a static ``*`` import of an unknown type; a type name with a ``*`` import of an unknown package;
the first part of a lowercase dotted chain (a package: ``java.util.List``); labels, annotation
keys, ``case`` constants; members of anything but a type (``x.foo``).
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING

from ..parse_tree import grammar
from .bindings import Bindings
from .findings import Finding, JavaPackage, JavaType

if TYPE_CHECKING:
    from collections.abc import Callable

    from tree_sitter import Node, Query, Tree

    from .findings import Rules

#: Every class has these (``java.lang.Object``'s public and protected methods).
OBJECT_MEMBERS = frozenset(
    [
        "clone",
        "equals",
        "finalize",
        "getClass",
        "hashCode",
        "notify",
        "notifyAll",
        "toString",
        "wait",
    ]
)
_DECLARATIONS = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
#: Parents whose ``name`` field is not a binding (a use of a name).
_NOT_BINDING = frozenset(
    {"method_invocation", "annotation", "marker_annotation", "scoped_identifier", "field_access"}
)
_BINDINGS = """
(_ name: (identifier) @n)
(type_parameter (type_identifier) @b)
(inferred_parameters (identifier) @b)
(lambda_expression parameters: (identifier) @b)
(record_pattern_component (identifier) @b)
(type_pattern (identifier) @b)
"""
_READS = "[(identifier) (type_identifier)] @id"
#: Contexts where an identifier is no name to resolve.
_SKIPPED_PARENTS = frozenset(
    {
        "package_declaration",
        "import_declaration",
        "scoped_identifier",
        "labeled_statement",
        "break_statement",
        "continue_statement",
        "switch_label",
        "module_declaration",
        "requires_module_directive",
        "exports_module_directive",
        "opens_module_directive",
        "uses_module_directive",
        "provides_module_directive",
    }
)


@functools.cache
def _query(source: str) -> Query:
    from tree_sitter import Query

    return Query(grammar("java"), source)


@functools.cache
def stdlib() -> dict[str, JavaType]:
    """Each JDK public type of ``java.base`` (qualified: ``java.util.Map.Entry``) → its
    members and supertypes."""
    text = resources.files(__package__).joinpath("java_stdlib.txt").read_text("utf-8")
    table: dict[str, JavaType] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, supers, members = line.split("\t")
        package, path = head.split(" ")
        table[f"{package}.{path}"] = JavaType(
            frozenset(members.split()), tuple(s for s in supers.split(",") if s)
        )
    return table


@functools.cache
def stdlib_packages() -> dict[str, frozenset[str]]:
    """Each package of the table → its top-level types' simple names."""
    out: dict[str, set[str]] = {}
    text = resources.files(__package__).joinpath("java_stdlib.txt").read_text("utf-8")
    for line in text.splitlines():
        if line and not line.startswith("#"):
            package, path = line.split("\t", 1)[0].split(" ")
            if "." not in path:
                out.setdefault(package, set()).add(path)
    return {k: frozenset(v) for k, v in out.items()}


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


class Facts:
    """What a file says about names: its package, imports and declared types."""

    def __init__(self, tree: Tree) -> None:
        self.package = ""
        #: Single-type imports: simple name → qualified.
        self.imports: dict[str, str] = {}
        #: ``import a.b.*;`` packages (or types).
        self.wildcards: list[str] = []
        #: ``import static a.B.m;`` names and ``import static a.B.*;`` types.
        self.static_names: set[str] = set()
        self.static_wildcards: list[str] = []
        #: Types declared in the file: qualified (``pkg.Outer.Inner``) → (node, written supers).
        self.types: dict[str, tuple[Node, list[str]]] = {}
        #: Simple name of a type declared in the file → its qualified name.
        self.local: dict[str, str] = {}
        for top in tree.root_node.named_children:
            if top.type == "package_declaration" and top.named_children:
                self.package = _text(top.named_children[-1])
            elif top.type == "import_declaration":
                self._import(top)
        self._walk(tree.root_node, self.package)

    def _import(self, node: Node) -> None:
        parts = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
        if not parts:
            return
        path = _text(parts[0])
        star = any(c.type == "asterisk" for c in node.children)
        static = any(c.type == "static" for c in node.children)
        if static and star:
            self.static_wildcards.append(path)
        elif static:
            self.static_names.add(path.rsplit(".", 1)[-1])
        elif star:
            self.wildcards.append(path)
        else:
            self.imports[path.rsplit(".", 1)[-1]] = path

    def _walk(self, root: Node, prefix: str) -> None:
        stack = [(root, prefix)]
        while stack:
            node, outer = stack.pop()
            for child in node.named_children:
                if child.type in _DECLARATIONS:
                    name = _text(child.child_by_field_name("name"))
                    qualified = f"{outer}.{name}" if outer else name
                    self.types[qualified] = (child, supertypes_written(child))
                    self.local.setdefault(name, qualified)
                    body = child.child_by_field_name("body")
                    if body is not None:
                        stack.append((body, qualified))
                elif child.type in ("enum_body_declarations", "class_body", "interface_body"):
                    stack.append((child, outer))


def supertypes_written(node: Node) -> list[str]:
    """A declaration's supertypes as written (``Map.Entry``), and the implicit ones."""
    out: list[str] = []
    for field in ("superclass", "interfaces"):
        out += _type_names(node.child_by_field_name(field))
    for child in node.named_children:
        if child.type == "extends_interfaces":
            out += _type_names(child)
    implicit = {
        "enum_declaration": "java.lang.Enum",
        "record_declaration": "java.lang.Record",
        "annotation_type_declaration": "java.lang.annotation.Annotation",
    }
    if node.type in implicit:
        out.append(implicit[node.type])
    return out


def _type_names(node: Node | None) -> list[str]:
    if node is None:
        return []
    out: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("type_identifier", "scoped_type_identifier"):
            out.append("".join(_text(current).split()))
        elif current.type != "type_arguments":
            stack.extend(current.named_children)
    return out


def members_declared(node: Node) -> frozenset[str]:
    """The names a type declaration's body declares (fields, methods, member types, enum
    constants), every visibility."""
    body = node.child_by_field_name("body")
    out: set[str] = set()
    if body is None:
        return frozenset()
    members = list(body.named_children)
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            members += child.named_children
    if node.type == "record_declaration":
        parameters = node.child_by_field_name("parameters")
        for parameter in parameters.named_children if parameters else ():
            out.add(_text(parameter.child_by_field_name("name")))
    for member in members:
        if member.type in ("field_declaration", "constant_declaration"):
            for declarator in member.children_by_field_name("declarator"):
                out.add(_text(declarator.child_by_field_name("name")))
        else:
            name = member.child_by_field_name("name")
            if name is not None:
                out.add(_text(name))
    return frozenset(out)


def resolve(written: str, facts: Facts, exists: Callable[[str], bool]) -> str | None:
    """The qualified name of a type as written in a file (``Entry``, ``Map.Entry``), or None."""
    if "." in written and exists(written):
        return written
    head, _, rest = written.partition(".")
    base: str | None = None
    if head in facts.local:
        base = facts.local[head]
    elif head in facts.imports:
        base = facts.imports[head]
    else:
        package = f"{facts.package}.{head}" if facts.package else head
        for candidate in (package, f"java.lang.{head}"):
            if exists(candidate):
                base = candidate
                break
        else:
            hits = [w for w in facts.wildcards if exists(f"{w}.{head}")]
            if len(hits) == 1:
                base = f"{hits[0]}.{head}"
    if base is None:
        return None
    return f"{base}.{rest}" if rest else base


class _Resolver:
    """Types' members (declared and inherited) for one check."""

    def __init__(self, facts: Facts, package: JavaPackage | None) -> None:
        self.facts, self.package = facts, package
        self._seen: dict[str, frozenset[str] | None] = {}

    def find(self, qualified: str) -> JavaType | None:
        if qualified in self.facts.types:
            node, written = self.facts.types[qualified]
            supers = tuple(resolve(w, self.facts, self.exists) or "?" for w in written)
            return JavaType(members_declared(node), supers)
        if self.package is not None:
            found = self.package.lookup(qualified)
            if found is not None:
                return found
        return stdlib().get(qualified)

    def exists(self, qualified: str) -> bool:
        if qualified in self.facts.types or qualified in stdlib():
            return True
        return self.package is not None and self.package.lookup(qualified) is not None

    def members(self, qualified: str) -> frozenset[str] | None:
        """All members of a type, inherited ones too; None when a supertype is unknown."""
        if qualified in self._seen:
            return self._seen[qualified]
        self._seen[qualified] = OBJECT_MEMBERS  # a cycle ends here
        found = self.find(qualified)
        out: frozenset[str] | None = None
        if found is not None:
            names = set(found.members) | OBJECT_MEMBERS
            for parent in found.supertypes:
                inherited = None if parent == "?" else self.members(parent)
                if inherited is None:
                    names = set()
                    break
                names |= inherited
            out = frozenset(names) if names else None
        self._seen[qualified] = out
        return out

    def package_types(self, name: str) -> frozenset[str] | None:
        known = stdlib_packages().get(name)
        if known is not None:
            return known
        return self.package.package_types(name) if self.package is not None else None


def rules(package: JavaPackage | None) -> Rules:
    """The rules, given what the package and the sources on disk declare (None: unknown)."""

    def check(tree: Tree, data: bytes, start: int, end: int) -> list[Finding] | str:
        return findings(tree, data, start, end, package)

    return check


def _known(facts: Facts, resolver: _Resolver) -> tuple[set[str], bool]:
    """Names every part of the file may read unqualified (inherited members, static imports,
    ``*``-imported types), and whether that set is open (something cannot be known)."""
    known: set[str] = set(facts.static_names)
    open_ended = False
    for qualified, (_, written) in facts.types.items():
        for parent in written:
            target = resolve(parent, facts, resolver.exists)
            inherited = None if target is None else resolver.members(target)
            if inherited is None:
                open_ended = True
            else:
                known |= inherited
        del qualified
    for path in facts.static_wildcards:
        target = resolve(path, facts, resolver.exists) or path
        inherited = resolver.members(target)
        if inherited is None:
            open_ended = True
        else:
            known |= inherited
    for path in facts.wildcards:
        types = resolver.package_types(path)
        if types is None:
            inherited = resolver.members(path)  # import a.B.*: B's member types
            if inherited is None:
                open_ended = True
                continue
            types = inherited
        known |= types
    return known, open_ended


def findings(
    tree: Tree, data: bytes, start: int, end: int, package: JavaPackage | None
) -> list[Finding]:
    """The names read in bytes ``[start, end)`` declared nowhere, or members a known type
    does not have."""
    from tree_sitter import QueryCursor

    facts = Facts(tree)
    resolver = _Resolver(facts, package)
    bound = Bindings(_query(_BINDINGS), tree, data, start, _bound)
    java_lang = stdlib_packages().get("java.lang", frozenset())
    known: set[str] | None = None
    open_ended = False
    reads = QueryCursor(_query(_READS))
    reads.set_byte_range(start, end)
    out: list[Finding] = []
    for node in reads.captures(tree.root_node).get("id", ()):
        if node.start_byte < start or node.end_byte > end:
            continue
        context = _context(node)
        if context is None:
            continue
        name = _text(node)
        if context == "member":
            member = _member(node, name, facts, resolver, bound)
            if member is not None:
                out.append(member)
            continue
        if name in java_lang or name in OBJECT_MEMBERS or name == "var":
            continue
        if name in facts.local or name in facts.imports:
            continue
        if package is not None and name in package.types:
            continue
        if known is None:
            known, open_ended = _known(facts, resolver)
        if name in known or open_ended or package is None:
            continue
        if context == "package?" and name[:1].islower():
            continue
        if name in bound:
            continue
        row, column = node.start_point
        out.append(Finding("undefined", name, node.start_byte, node.end_byte, row, column))
    return out


def _bound(captures: dict[str, list[Node]]) -> set[str]:
    out = {_text(n) for n in captures.get("b", ())}
    out |= {
        _text(n)
        for n in captures.get("n", ())
        if n.parent is not None and n.parent.type not in _NOT_BINDING
    }
    return out


def _context(node: Node) -> str | None:
    """How an identifier is read: "name", "member" (after a dot), "package?" (may be the first
    part of a package's name), None (not a name to resolve)."""
    parent = node.parent
    if parent is None or parent.type == "ERROR" or parent.type in _SKIPPED_PARENTS:
        return None
    kind = parent.type
    if kind == "element_value_pair" and parent.child_by_field_name("key") == node:
        return None
    if kind == "method_reference" and parent.named_children[0] != node:
        return None
    if kind in ("field_access", "method_invocation"):
        if kind == "field_access" and parent.child_by_field_name("field") == node:
            return "member"
        if kind == "method_invocation" and parent.child_by_field_name("name") == node:
            return "member" if parent.child_by_field_name("object") is not None else "name"
        grand = parent.parent
        if (
            kind == "field_access"
            and grand is not None
            and grand.type
            in (
                "field_access",
                "method_invocation",
            )
        ):
            return "package?"
        return "name"
    if kind == "scoped_type_identifier":
        if parent.named_children[0] != node:
            return "member"
        return "package?"
    return "name"


def _member(
    node: Node, name: str, facts: Facts, resolver: _Resolver, bound: Bindings
) -> Finding | None:
    """``Math.clamp``, ``Map.Entri``: a member a type known to the end of its chain lacks."""
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "scoped_type_identifier":
        owner = parent.named_children[0]
        if owner.type != "type_identifier":
            return None
    else:
        owner_node = parent.child_by_field_name("object")
        if owner_node is None or owner_node.type != "identifier":
            return None
        owner = owner_node
    written = _text(owner)
    if not written[:1].isupper():
        return None
    target = resolve(written, facts, resolver.exists)
    members = None if target is None else resolver.members(target)
    if members is None or name in members or name in ("length", "this", "class", "super"):
        return None
    if written not in facts.local and written not in facts.imports and written in bound:
        return None  # a variable (or a type shadowed by one)
    row, column = node.start_point
    return Finding("member", name, node.start_byte, node.end_byte, row, column, written)
