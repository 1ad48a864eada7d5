"""Go's names check: each name a region reads is declared in the file, its package, an import
or the language.

Pure. Lenient on scope: a name declared anywhere in the file (a function, method receiver or
parameter, ``var``/``const``/``type``, ``:=``, a range or type-switch variable, a type
parameter) counts for every read. Names declared by the package's other files come from the
caller (``package``: read from disk in ``project/``); when they are unknown (None), a name
declared nowhere in the file is not flagged — it may be another file's. Members of standard
library packages are checked from ``go_stdlib.txt`` (``strings.Reverse``), made by
``scripts/go_stdlib_table.py`` from a Go distribution's API files (Go 1.19.8).

Not flagged: anything in a file with a dot import (``import . "x"``) or cgo (``import "C"``)
for undefined names; members of packages outside the standard library; keys of composite
literals (a struct's field names).
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING

from ..parse_tree import grammar
from .bindings import Bindings
from .findings import Finding

if TYPE_CHECKING:
    from tree_sitter import Node, Query, Tree

    from .findings import Rules

#: The predeclared identifiers (the Go spec's universe block, up to Go 1.21).
PREDECLARED = frozenset(
    (
        "any",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "true",
        "false",
        "iota",
        "nil",
        "append",
        "cap",
        "clear",
        "close",
        "complex",
        "copy",
        "delete",
        "imag",
        "len",
        "make",
        "max",
        "min",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
        "_",
    )
)

_BINDINGS = """
(function_declaration name: (identifier) @b)
(parameter_declaration name: (identifier) @b)
(variadic_parameter_declaration name: (identifier) @b)
(type_parameter_declaration name: (identifier) @b)
(type_spec name: (type_identifier) @b)
(type_alias name: (type_identifier) @b)
(var_spec) @s
(const_spec) @s
(short_var_declaration left: (expression_list (identifier) @b))
(range_clause left: (expression_list (identifier) @b))
(type_switch_statement alias: (expression_list (identifier) @b))
(receive_statement left: (expression_list (identifier) @b))
"""

#: Top-level declarations (what one file gives its package).
_TOP = """
(source_file (function_declaration name: (identifier) @d))
(source_file (type_declaration (type_spec name: (type_identifier) @d)))
(source_file (type_declaration (type_alias name: (type_identifier) @d)))
(source_file (var_declaration (var_spec) @s))
(source_file (var_declaration (var_spec_list (var_spec) @s)))
(source_file (const_declaration (const_spec) @s))
"""


@functools.cache
def _query(source: str) -> Query:
    from tree_sitter import Query

    return Query(grammar("go"), source)


@functools.cache
def stdlib() -> dict[str, frozenset[str]]:
    """Each standard library package's import path → its exported names."""
    text = resources.files(__package__).joinpath("go_stdlib.txt").read_text("utf-8")
    table: dict[str, frozenset[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            path, *members = line.split()
            table[path] = frozenset(members)
    return table


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text else ""


def declared(tree: Tree) -> frozenset[str]:
    """The package-level names one file declares (a package's other files' share)."""
    from tree_sitter import QueryCursor

    captures = QueryCursor(_query(_TOP)).captures(tree.root_node)
    return frozenset(_text(n) for n in captures.get("d", ())) | _spec_names(captures)


def _spec_names(captures: dict[str, list[Node]]) -> set[str]:
    """The names of ``var``/``const`` specs (``const a, b = 1, 2``: a query's field pattern
    matches the first name only)."""
    specs = captures.get("s", ())
    return {
        _text(n) for s in specs for n in s.children_by_field_name("name") if n.type == "identifier"
    }


def package_name(tree: Tree) -> str | None:
    """The file's ``package`` clause's name."""
    for child in tree.root_node.named_children:
        if child.type == "package_clause":
            for part in child.named_children:
                return _text(part)
    return None


def _imports(tree: Tree) -> tuple[dict[str, str], bool]:
    """Each imported package's name in the file → its import path; and whether the file has a
    dot or cgo import (any name may come from it)."""
    names: dict[str, str] = {}
    open_ended = False
    for spec in _specs(tree.root_node):
        path_node = spec.child_by_field_name("path")
        if path_node is None:
            continue
        path = _text(path_node).strip('"`')
        alias = spec.child_by_field_name("name")
        if alias is not None and alias.type == "dot":
            open_ended = True
        elif alias is not None and alias.type == "package_identifier":
            names[_text(alias)] = path
        elif alias is None:
            if path == "C":
                open_ended = True
            names[_default_name(path)] = path
    return names, open_ended


def _specs(root: Node) -> list[Node]:
    out: list[Node] = []
    for child in root.named_children:
        if child.type != "import_declaration":
            continue
        for part in child.named_children:
            out.extend(p for p in part.named_children if p.type == "import_spec")
            if part.type == "import_spec":
                out.append(part)
    return out


def _default_name(path: str) -> str:
    """The name an import binds without an alias: its last element (``gopkg.in/yaml.v3``:
    yaml; ``.../v2``: the element before)."""
    parts = path.split("/")
    last = parts[-1]
    if len(parts) > 1 and last[:1] == "v" and last[1:].isdigit():
        last = parts[-2]
    for prefix in ("go-",):
        last = last.removeprefix(prefix)
    return last.split(".")[0].replace("-", "_")


def rules(package: frozenset[str] | None) -> Rules:
    """The rules, given the names the package's other files declare (None: unknown)."""

    def check(tree: Tree, data: bytes, start: int, end: int) -> list[Finding] | str:
        return findings(tree, data, start, end, package)

    return check


def _is_read(node: Node) -> bool:
    parent = node.parent
    if parent is None or parent.type == "ERROR":
        return False
    if parent.type == "qualified_type" and parent.child_by_field_name("name") == node:
        return False  # strings.Builder: the member, checked with its package
    if parent.type == "literal_element":
        grand = parent.parent
        if grand is not None and grand.child_by_field_name("key") == parent:
            return False  # T{Name: x}: a field's name
    return True


def findings(
    tree: Tree, data: bytes, start: int, end: int, package: frozenset[str] | None
) -> list[Finding]:
    """The names read in bytes ``[start, end)`` declared nowhere, or members a standard
    library package does not have."""
    from tree_sitter import QueryCursor

    bound = Bindings(_query(_BINDINGS), tree, data, start, _bound)
    imported, open_ended = _imports(tree)
    reads = QueryCursor(_query("[(identifier) (type_identifier) (package_identifier)] @id"))
    reads.set_byte_range(start, end)
    out: list[Finding] = []
    for node in reads.captures(tree.root_node).get("id", ()):
        if node.start_byte < start or node.end_byte > end or not _is_read(node):
            continue
        parent = node.parent
        if parent is not None and parent.type in ("package_clause", "import_spec"):
            continue
        name = _text(node)
        if package is not None and name in package:
            continue
        if name in imported:
            member = _member(node, name, imported[name])
            if member is not None and name not in bound:
                out.append(member)
            continue
        if name in PREDECLARED or open_ended or package is None or name in bound:
            continue
        row, column = node.start_point
        out.append(Finding("undefined", name, node.start_byte, node.end_byte, row, column))
    return out


def _bound(captures: dict[str, list[Node]]) -> set[str]:
    return {_text(n) for n in captures.get("b", ())} | _spec_names(captures)


def _member(node: Node, name: str, path: str) -> Finding | None:
    """``strings.Reverse``: a member the standard library package does not have."""
    members = stdlib().get(path)
    parent = node.parent
    if members is None or parent is None:
        return None
    if parent.type == "selector_expression" and parent.child_by_field_name("operand") == node:
        field = parent.child_by_field_name("field")
    elif parent.type == "qualified_type" and parent.child_by_field_name("package") == node:
        field = parent.child_by_field_name("name")
    else:
        return None
    if field is None or _text(field) in members:
        return None
    row, column = field.start_point
    return Finding("member", _text(field), field.start_byte, field.end_byte, row, column, name)
