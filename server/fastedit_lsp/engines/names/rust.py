"""Rust's names check: each name a region reads is declared in the file (a module's items, a
``use``, a ``let``/parameter/closure/pattern binding, a generic parameter) or the prelude.

Pure. A Rust file is its own module: names from other files arrive through ``use`` (or a path,
``crate::x::y``), so the file alone says what is in scope. Lenient on scope: a name bound
anywhere in the file counts for every read (found lazily, :mod:`.bindings`). Only the first
segment of a path is checked (``Foo::new``: ``Foo``), and a lowercase one only when the package's
crates are known (``Cargo.toml``, read in ``project/``) and it is none of them.

Not flagged (a false alarm costs more than a miss): anything inside a macro's arguments or an
attribute, macro names; every name in a module with a glob import (``use super::*;``) or a file
that ``include!``s code; the members of paths.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from ..parse_tree import grammar
from .bindings import Bindings
from .findings import Finding

if TYPE_CHECKING:
    from tree_sitter import Node, Query, Tree

    from .findings import Rules

#: The standard prelude (2021 edition), primitive types used as paths (``u8::MAX``) and the
#: names every module has.
PRELUDE = frozenset(
    (
        "Copy",
        "Send",
        "Sized",
        "Sync",
        "Unpin",
        "Drop",
        "Fn",
        "FnMut",
        "FnOnce",
        "drop",
        "Box",
        "ToOwned",
        "Clone",
        "PartialEq",
        "PartialOrd",
        "Eq",
        "Ord",
        "AsRef",
        "AsMut",
        "Into",
        "From",
        "Default",
        "Iterator",
        "Extend",
        "IntoIterator",
        "DoubleEndedIterator",
        "ExactSizeIterator",
        "Option",
        "Some",
        "None",
        "Result",
        "Ok",
        "Err",
        "String",
        "ToString",
        "Vec",
        "TryFrom",
        "TryInto",
        "FromIterator",
        "Self",
        "bool",
        "char",
        "str",
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "f32",
        "f64",
        "std",
        "core",
        "_",
        "alloc",
    )
)
#: The standard library's top-level modules: a path's first segment that names one needs a
#: ``use std::…;`` (``cmp::max`` without ``use std::cmp;`` is an error, unless a crate has the
#: name, which these are not on crates.io's well-known list).
STD_MODULES = frozenset(
    (
        "any",
        "array",
        "ascii",
        "borrow",
        "cell",
        "cmp",
        "collections",
        "convert",
        "env",
        "ffi",
        "fmt",
        "fs",
        "hash",
        "hint",
        "io",
        "iter",
        "marker",
        "mem",
        "net",
        "num",
        "ops",
        "path",
        "pin",
        "process",
        "ptr",
        "rc",
        "slice",
        "string",
        "sync",
        "thread",
        "time",
        "vec",
        "result",
        "option",
        "error",
        "default",
        "os",
        "panic",
        "boxed",
        "future",
        "task",
    )
)
_PATTERN_HOLDERS = """
(let_declaration pattern: (_) @p)
(parameter pattern: (_) @p)
(closure_parameters (_) @p)
(for_expression pattern: (_) @p)
(match_pattern) @p
(let_condition pattern: (_) @p)
(field_pattern name: (shorthand_field_identifier) @b)
(use_declaration) @p
(extern_crate_declaration name: (identifier) @b)
(type_parameter name: (type_identifier) @b)
(const_parameter name: (identifier) @b)
"""
_ITEMS = (
    "function_item",
    "function_signature_item",
    "struct_item",
    "enum_item",
    "enum_variant",
    "union_item",
    "trait_item",
    "type_item",
    "const_item",
    "static_item",
    "mod_item",
    "macro_definition",
    "associated_type",
)
_BINDINGS = _PATTERN_HOLDERS + "".join(f"({item} name: (_) @b)\n" for item in _ITEMS)
_READS = "[(identifier) (type_identifier)] @id"
#: Parents whose identifiers are no names to resolve here.
_SKIPPED_PARENTS = frozenset(
    {
        "token_tree",
        "attribute",
        "label",
        "lifetime",
        "use_declaration",
        "use_list",
        "use_as_clause",
        "scoped_use_list",
        "use_wildcard",
        "extern_crate_declaration",
        "meta_item",
        "macro_definition",
        "macro_rule",
        "token_repetition",
        "token_binding_pattern",
    }
)
_GLOB = re.compile(rb"::\s*\*")


@functools.cache
def _query(source: str) -> Query:
    from tree_sitter import Query

    return Query(grammar("rust"), source)


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _bound(captures: dict[str, list[Node]]) -> set[str]:
    out = {_text(n) for n in captures.get("b", ())}
    for holder in captures.get("p", ()):
        if holder.type == "use_declaration":
            out |= use_names(holder)
            continue
        if holder.type in _PATH_PATTERNS:
            stack = [c for c in holder.named_children if c != holder.child_by_field_name("type")]
        else:
            stack = [holder]
        while stack:
            node = stack.pop()
            if node.type in ("identifier", "type_identifier", "shorthand_field_identifier"):
                out.add(_text(node))
            if node.type in _PATH_PATTERNS:
                typed = node.child_by_field_name("type")
                stack.extend(c for c in node.named_children if c != typed)
            elif node.type not in ("scoped_identifier", "scoped_type_identifier"):
                stack.extend(node.named_children)
    return out


def use_names(node: Node, parent: str = "") -> set[str]:
    """The names a ``use`` binds: a path's last segment (``use a::b::c;``: ``c``), an alias,
    each of a list's (``self`` in a list: the path's last segment); a glob binds none here."""
    kind = node.type
    if kind == "use_declaration":
        argument = node.child_by_field_name("argument")
        return use_names(argument) if argument is not None else set()
    if kind in ("identifier", "type_identifier"):
        return {_text(node)}
    if kind == "self":
        return {parent} if parent else set()
    if kind == "scoped_identifier":
        name = node.child_by_field_name("name")
        if name is not None and name.type == "self":
            return {_last(node.child_by_field_name("path"))}
        return {_text(name)} if name is not None else set()
    if kind == "use_as_clause":
        alias = node.child_by_field_name("alias")
        return {_text(alias)} if alias is not None else set()
    if kind == "scoped_use_list":
        items = node.child_by_field_name("list")
        head = _last(node.child_by_field_name("path"))
        return use_names(items, head) if items is not None else set()
    if kind == "use_list":
        out: set[str] = set()
        for child in node.named_children:
            out |= use_names(child, parent)
        return out
    return set()


def _last(path: Node | None) -> str:
    """A path's last segment (``a::b``: ``b``)."""
    if path is None:
        return ""
    if path.type == "scoped_identifier":
        name = path.child_by_field_name("name")
        return _text(name)
    return _text(path)


def _identifiers(node: Node) -> set[str]:
    out: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("identifier", "type_identifier"):
            out.add(_text(current))
        stack.extend(current.named_children)
    return out


#: Patterns that name a type or variant (``Some(x)``, ``Point { x, .. }``): that name is read.
_PATH_PATTERNS = frozenset({"tuple_struct_pattern", "struct_pattern"})


def _open_spans(tree: Tree, data: bytes) -> list[tuple[int, int, bool]]:
    """Where a glob import may bring names: (start, end, only capitalized ones) — the block or
    module the ``use`` is in; an enum's or type's glob (``use self::Kind::*;``) brings its
    variants only. ``include!`` opens the whole file."""
    if b"include!" in data and re.search(rb"\binclude!\s*\(", data) is not None:
        return [(0, len(data), False)]
    spans: list[tuple[int, int, bool]] = []
    for match in _GLOB.finditer(data):
        head = data[max(0, match.start() - 200) : match.start()]
        last = re.search(rb"(\w+)\s*$", head)
        variants = last is not None and last.group(1)[:1].isupper()
        node = tree.root_node.descendant_for_byte_range(match.start(), match.end())
        while node is not None and node.type not in ("block", "mod_item", "source_file"):
            node = node.parent
        if node is not None:
            spans.append((node.start_byte, node.end_byte, variants))
    return spans


def rules(crates: frozenset[str] | None) -> Rules:
    """The rules, given the crates the file's package may name (None: unknown)."""

    def check(tree: Tree, data: bytes, start: int, end: int) -> list[Finding] | str:
        return findings(tree, data, start, end, crates)

    return check


def findings(
    tree: Tree, data: bytes, start: int, end: int, crates: frozenset[str] | None = None
) -> list[Finding]:
    """The names read in bytes ``[start, end)`` that nothing in the file declares. A path's
    lowercase first segment is checked when ``crates`` (the package's) is known."""
    from tree_sitter import QueryCursor

    bound = Bindings(_query(_BINDINGS), tree, data, start, _bound)
    imported: set[str] | None = None
    spans: list[tuple[int, int, bool]] | None = None
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
        if name in PRELUDE and not (context == "path" and name in STD_MODULES):
            continue
        if spans is None:
            spans = _open_spans(tree, data)
        capitalized = name[:1].isupper()
        if any(lo <= node.start_byte < hi and (capitalized or not v) for lo, hi, v in spans):
            continue
        crate = context == "path" and not name[:1].isupper() and name not in STD_MODULES
        if crate and (crates is None or name in crates):
            continue  # a crate, or a module the file binds
        if imported is None:  # the file's top-level ``use``s (read once, not searched for)
            imported = set()
            for top in tree.root_node.named_children:
                if top.type in ("use_declaration", "extern_crate_declaration", "mod_item"):
                    if top.type == "use_declaration":
                        imported |= use_names(top)
                    elif top.type == "extern_crate_declaration":
                        imported |= _identifiers(top)
                    name_node = top.child_by_field_name("name")
                    if top.type == "mod_item" and name_node is not None:
                        imported.add(_text(name_node))
        if name in imported or name in bound:
            continue
        row, column = node.start_point
        out.append(Finding("undefined", name, node.start_byte, node.end_byte, row, column))
    return out


def _context(node: Node) -> str | None:
    """ "name", "path" (the first segment of a path) or None (not a name to resolve)."""
    parent = node.parent
    if parent is None or parent.type == "ERROR" or parent.type in _SKIPPED_PARENTS:
        return None
    if parent.type == "macro_invocation":
        return None
    if parent.type in ("scoped_identifier", "scoped_type_identifier"):
        if parent.child_by_field_name("name") == node:
            return None
        return "path"
    if parent.type == "generic_function" and parent.child_by_field_name("function") != node:
        return None
    if parent.type == "type_binding" and parent.child_by_field_name("name") == node:
        return None  # Iterator<Item = T>: the trait's associated type
    return "name"
