"""JavaScript's and TypeScript's names check: each name a region reads is declared in the file.

Pure. Lenient on scope: a name declared anywhere in the file (a ``var``, ``let``, ``const``,
a function or class, a parameter, an import, a ``catch`` binding, a destructured name, an
assignment to an undeclared name) counts for every read, hoisted or not; so a misspelled local
is found when the misspelling is declared nowhere. Globals of every environment count
(``js_globals``). Members are checked on the standard namespaces only (``Math.clamp``,
``JSON.load``), where the file does not shadow or extend them.

Not flagged: any name in a file that runs ``eval``, uses ``with``, or lists globals for a
linter (``/* global x */``) — they are counted as declared; JSX's lowercase tags (HTML's);
names in a text that does not parse.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from ..parse_tree import grammar
from .findings import Finding
from .js_globals import GLOBALS, MEMBERS, WEB_INTERFACE

if TYPE_CHECKING:
    from tree_sitter import Node, Query, Tree

    from .findings import Rules

#: Binding patterns (each kept where the grammar has its node types).
_BINDINGS = (
    "(variable_declarator name: (identifier) @b)",
    "(function_declaration name: (identifier) @b)",
    "(generator_function_declaration name: (identifier) @b)",
    "(function_expression name: (identifier) @b)",
    "(function_signature name: (identifier) @b)",
    "(class_declaration name: (identifier) @b)",
    "(class_declaration name: (type_identifier) @b)",
    "(abstract_class_declaration name: (type_identifier) @b)",
    "(class name: (identifier) @b)",
    "(class name: (type_identifier) @b)",
    "(formal_parameters (identifier) @b)",
    "(arrow_function parameter: (identifier) @b)",
    "(required_parameter pattern: (identifier) @b)",
    "(optional_parameter pattern: (identifier) @b)",
    "(required_parameter name: (identifier) @b)",
    "(optional_parameter name: (identifier) @b)",
    "(enum_assignment name: (property_identifier) @b)",
    "(enum_body (property_identifier) @b)",
    "(assignment_pattern left: (identifier) @b)",
    "(shorthand_property_identifier_pattern) @b",
    "(pair_pattern value: (identifier) @b)",
    "(rest_pattern (identifier) @b)",
    "(array_pattern (identifier) @b)",
    "(import_clause (identifier) @b)",
    "(namespace_import (identifier) @b)",
    "(import_specifier (identifier) @b)",
    "(import_alias (identifier) @b)",
    "(import_require_clause (identifier) @b)",
    "(catch_clause parameter: (identifier) @b)",
    "(for_in_statement left: (identifier) @b)",
    "(assignment_expression left: (identifier) @b)",
    "(enum_declaration name: (identifier) @b)",
    "(internal_module name: (identifier) @b)",
    "(module name: (identifier) @b)",
    "(export_specifier (identifier) @x)",
)

#: Every object has these members (``Math.toString``).
_OBJECT_MEMBERS = frozenset(
    (
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toString",
        "toLocaleString",
        "valueOf",
        "constructor",
        "__proto__",
        "__defineGetter__",
        "__defineSetter__",
        "__lookupGetter__",
        "__lookupSetter__",
    )
)

_DYNAMIC = re.compile(rb"\beval\s*\(|\bwith\s*\(|new\s+Function\s*\(")
_LINTER_GLOBALS = re.compile(rb"/\*\s*globals?\s+([^*]*)\*/")


@functools.cache
def _query(language: str) -> Query:
    from tree_sitter import Query, QueryError

    kept = []
    for pattern in _BINDINGS:
        try:
            Query(grammar(language), pattern)
        except QueryError:
            continue  # a node type of another dialect (TypeScript's, JavaScript's)
        kept.append(pattern)
    return Query(grammar(language), "\n".join(kept))


@functools.cache
def _reads_query(language: str) -> Query:
    from tree_sitter import Query

    return Query(grammar(language), "[(identifier) (shorthand_property_identifier)] @id")


def rules(language: str) -> Rules:
    """The rules for grammar ``language`` (javascript, typescript or tsx)."""

    def check(tree: Tree, data: bytes, start: int, end: int) -> list[Finding] | str:
        return findings(language, tree, data, start, end)

    return check


def _text(node: Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text else ""


def _is_read(node: Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    kind = parent.type
    if kind in ("import_specifier", "export_specifier", "namespace_export"):
        return False
    if kind in ("jsx_opening_element", "jsx_closing_element", "jsx_self_closing_element"):
        name = _text(node)
        return parent.child_by_field_name("name") == node and name[:1].isupper()
    if kind == "unary_expression":
        operator = parent.child_by_field_name("operator")
        if operator is not None and operator.type == "typeof":
            return False  # typeof x: the guard for a global that may not exist
    if kind in ("nested_identifier", "jsx_namespace_name", "index_signature"):
        return False  # ... and TypeScript's { [key: string]: T }: a name of the type's own
    return kind != "ERROR"


def findings(language: str, tree: Tree, data: bytes, start: int, end: int) -> list[Finding] | str:
    """The names read in bytes ``[start, end)`` declared nowhere (or unknown members of the
    standard namespaces)."""
    from tree_sitter import QueryCursor

    captures = QueryCursor(_query(language)).captures(tree.root_node)
    bound = {_text(n) for n in captures.get("b", ())}
    positions = {n.start_byte for n in captures.get("b", ())}
    for match in _LINTER_GLOBALS.finditer(data):
        bound.update(w.split(":")[0] for w in re.split(r"[\s,]+", match.group(1).decode()) if w)
    dynamic = _DYNAMIC.search(data) is not None
    cursor = QueryCursor(_reads_query(language))
    cursor.set_byte_range(start, end)
    out: list[Finding] = []
    for node in cursor.captures(tree.root_node).get("id", ()):
        if node.start_byte < start or node.end_byte > end or node.start_byte in positions:
            continue
        if not _is_read(node):
            continue
        name = _text(node)
        if name in bound:
            continue
        if name in MEMBERS:
            found = _member(node, name, data)
            if found is not None:
                out.append(found)
            continue
        if dynamic or name in GLOBALS or WEB_INTERFACE.match(name) or name in ("$", "_"):
            continue
        row, column = node.start_point
        out.append(Finding("undefined", name, node.start_byte, node.end_byte, row, column))
    return out


def _member(node: Node, name: str, data: bytes) -> Finding | None:
    """``Math.clamp``: a static member a standard namespace does not have."""
    parent = node.parent
    if parent is None or parent.type != "member_expression":
        return None
    if parent.child_by_field_name("object") != node:
        return None
    prop = parent.child_by_field_name("property")
    if prop is None or prop.type != "property_identifier":
        return None
    member = _text(prop)
    if member in MEMBERS[name] or member in _OBJECT_MEMBERS:
        return None
    # Defined or feature-tested by the file (a polyfill: Math.clamp = ..., typeof Math.clamp).
    access = re.escape(f"{name}.{member}".encode())
    if re.search(
        rb"(?:typeof\s+|\bif\s*\(\s*!?\s*)"
        + access
        + rb"|"
        + access
        + rb"\s*(?:=[^=]|\|\||\?\?|&&)",
        data,
    ):
        return None
    if re.search(rb"defineProperty\(\s*" + re.escape(name.encode()), data):
        return None
    grand = parent.parent
    if grand is not None and grand.type == "assignment_expression":
        return None
    row, column = prop.start_point
    return Finding("member", member, prop.start_byte, prop.end_byte, row, column, name)
