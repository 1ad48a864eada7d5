"""Python's names check: each name a region reads is bound in a scope that encloses it.

Pure. The bindings of the whole text are found with one tree-sitter query (in C); the names read
are those of the region only, so the check costs the query plus the region. A binding counts
for a read when its scope (the function, lambda, class or comprehension it is bound in, or the
module) encloses the read, wherever it is bound in that scope (before or after the read: Python
resolves a function's names when it runs). Lenient where Python is subtle (a class body's names
count for its methods too): a miss costs less than a false alarm.

Not flagged, because they cannot be known from the text: any name, when the text has a star
import, writes ``globals()``, ``builtins`` or runs ``exec``; names of other Python versions'
builtins (typeshed's, every branch; Python 2's too, which old code guards); ``_`` (gettext's).
Members are checked for the standard library's modules only (``json.parse``), and only when the
module's name is bound by nothing but its import.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from ..parse import grammar
from .findings import Finding
from .python_stdlib import builtins, is_stdlib, members

if TYPE_CHECKING:
    from tree_sitter import Node, Query, Tree

_BINDINGS = """
(function_definition name: (identifier) @inner)
(class_definition name: (identifier) @inner)
(parameters (identifier) @b)
(lambda_parameters (identifier) @b)
(typed_parameter . (identifier) @b)
(default_parameter name: (identifier) @b)
(typed_default_parameter name: (identifier) @b)
(list_splat_pattern (identifier) @b)
(dictionary_splat_pattern (identifier) @b)
(type_parameter (type (identifier) @b))
(type_alias_statement . (type (identifier) @b))
(import_statement name: (dotted_name . (identifier) @b))
(aliased_import alias: (identifier) @b)
(import_from_statement name: (dotted_name (identifier) @b))
(assignment left: (identifier) @b)
(augmented_assignment left: (identifier) @b)
(pattern_list (identifier) @b)
(tuple_pattern (identifier) @b)
(list_pattern (identifier) @b)
(for_statement left: (identifier) @b)
(for_in_clause left: (identifier) @b)
(named_expression name: (identifier) @walrus)
(global_statement (identifier) @global)
(nonlocal_statement (identifier) @b)
(as_pattern alias: (_) @alias)
(as_pattern (case_pattern) (identifier) @b)
(case_pattern (dotted_name . (identifier) @capture .))
(keyword_pattern (dotted_name . (identifier) @capture .))
(splat_pattern (identifier) @b)
(import_from_statement (wildcard_import) @star)
"""

#: Nodes that open a scope.
_SCOPES = frozenset(
    {
        "function_definition",
        "lambda",
        "class_definition",
        "list_comprehension",
        "set_comprehension",
        "dictionary_comprehension",
        "generator_expression",
    }
)
_COMPREHENSIONS = frozenset(
    {"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"}
)

#: Names every module and class body has, and those of type checkers and Python 2 that code
#: guards by version (``unicode``, ``xrange``): never flagged.
_ALWAYS = frozenset(
    (
        "__name__",
        "__file__",
        "__doc__",
        "__package__",
        "__spec__",
        "__loader__",
        "__builtins__",
        "__path__",
        "__cached__",
        "__annotations__",
        "__dict__",
        "__debug__",
        "__class__",
        "__module__",
        "__qualname__",
        "__all__",
        "_",
        "reveal_type",
        "reveal_locals",
        "WindowsError",
    )
)

#: Python 2's builtins: not flagged in code that tells the versions apart (it guards them).
_PYTHON2 = frozenset(
    (
        "unicode",
        "basestring",
        "xrange",
        "long",
        "raw_input",
        "reduce",
        "file",
        "unichr",
        "cmp",
        "execfile",
        "buffer",
        "apply",
        "intern",
        "coerce",
        "__builtin__",
    )
)
_TELLS_VERSIONS = re.compile(rb"version_info|\bPY2\b|\bPY3\b|\bsix\b|\bPY3K\b")

#: Text that can define names no tree shows.
_DYNAMIC = re.compile(
    rb"globals\(\)\s*(?:\[[^\]\n]*\]\s*=[^=]|\.update|\.setdefault|\.__setitem__)"
    rb"|\bexec\((?:[^,()\n]*\)|[^)\n]*globals\(\))"  # exec(code) or exec(code, globals())
    rb"|vars\(\)\s*(?:\[[^\]\n]*\]\s*=[^=]|\.update)"
    rb"|\b(?:builtins|__builtin__|__builtins__)\.\w+\s*=[^=]|__builtins__\["
    rb"|setattr\(\s*(?:builtins|__builtin__|sys\.modules)|sys\.modules\[__name__\]"
    rb"|[(,]\s*globals\(\)"  # the namespace handed to code that may write it
    rb"|\b_convert_\b"
)


@functools.cache
def _query() -> Query:
    from tree_sitter import Query

    return Query(grammar("python"), _BINDINGS)


@functools.cache
def _reads_query() -> Query:
    from tree_sitter import Query

    return Query(grammar("python"), "(identifier) @id")


def _scope(node: Node, *, skip_comprehensions: bool = False) -> Node | None:
    """The scope ``node`` is bound in (None: the module)."""
    parent = node.parent
    while parent is not None:
        if parent.type in _SCOPES and not (skip_comprehensions and parent.type in _COMPREHENSIONS):
            return parent
        parent = parent.parent
    return None


def _identifiers(node: Node) -> list[Node]:
    if node.type == "identifier":
        return [node]
    out: list[Node] = []
    for child in node.named_children:
        if child.type in ("attribute", "subscript"):
            continue
        out.extend(_identifiers(child))
    return out


class _Bindings:
    """Every binding of the text, by name, with its scope."""

    def __init__(self, tree: Tree) -> None:
        from tree_sitter import QueryCursor

        captures = QueryCursor(_query()).captures(tree.root_node)
        #: A star import of a module whose names cannot be known (not the stdlib's).
        self.star = False
        #: The names star imports of stdlib modules bring.
        self.starred: set[str] = set()
        for node in captures.get("star", ()):
            statement = node.parent
            module = statement.child_by_field_name("module_name") if statement else None
            source = module.text.decode() if module is not None and module.text else ""
            known = members(source) if module is not None and module.type == "dotted_name" else None
            if known is None or not is_stdlib(source):
                self.star = True
            else:
                self.starred.update(known)
        #: name → the scopes binding it (None: the module).
        self.scopes: dict[str, list[Node | None]] = {}
        #: (start byte) of every identifier in a binding position.
        self.positions: set[int] = set()
        #: name → how it is bound at module level: an ``import X`` of X (the module) or other.
        self.imports: dict[str, list[str | None]] = {}
        for kind, nodes in captures.items():
            for node in nodes:
                if kind == "alias":
                    for name in _identifiers(node):
                        self._add(name, _scope(name))
                elif kind == "inner":
                    # A def's or class's name is bound in the scope around it.
                    assert node.parent is not None
                    self._add(node, _scope(node.parent))
                elif kind == "global":
                    self._add(node, None)
                elif kind == "walrus":
                    self._add(node, _scope(node, skip_comprehensions=True))
                elif kind in ("b", "capture"):
                    self._add(node, _scope(node))

    def _add(self, node: Node, scope: Node | None) -> None:
        name = node.text.decode("utf-8", "replace") if node.text else ""
        self.scopes.setdefault(name, []).append(scope)
        self.positions.add(node.start_byte)
        if scope is None:
            self.imports.setdefault(name, []).append(_imported(node))

    def resolves(self, name: str, read: Node) -> bool:
        for scope in self.scopes.get(name, ()):
            if scope is None or scope.start_byte <= read.start_byte < scope.end_byte:
                return True
        return False


def _imported(node: Node) -> str | None:
    """``X`` for the X of ``import X`` (a top-level module, no alias), else None."""
    parent = node.parent
    if parent is None or parent.type != "dotted_name" or parent.named_child_count != 1:
        return None
    statement = parent.parent
    if statement is None or statement.type != "import_statement":
        return None
    return node.text.decode() if node.text else None


def _is_read(node: Node, bindings: _Bindings) -> bool:
    """Whether identifier ``node`` reads a name (not a member, a keyword, an import's path, a
    binding)."""
    if node.start_byte in bindings.positions:
        return False
    parent = node.parent
    if parent is None:
        return False
    kind = parent.type
    if kind == "attribute":
        return parent.child_by_field_name("object") == node
    if kind == "keyword_argument":
        return parent.child_by_field_name("name") != node
    if kind == "dotted_name":
        grand = parent.parent
        if grand is None or grand.type in (
            "import_statement",
            "import_from_statement",
            "aliased_import",
            "relative_import",
            "future_import_statement",
        ):
            return False
        return parent.named_children[0] == node  # a pattern's dotted value: X.Y reads X
    if kind in ("keyword_pattern", "global_statement", "nonlocal_statement"):
        return kind == "keyword_pattern" and parent.named_children[0] != node
    if kind == "aliased_import":
        return False
    return kind != "ERROR"


def findings(tree: Tree, data: bytes, start: int, end: int) -> list[Finding] | str:
    """The names read in bytes ``[start, end)`` that resolve nowhere."""
    from tree_sitter import QueryCursor

    bindings = _Bindings(tree)
    dynamic = bindings.star or _DYNAMIC.search(data) is not None
    known = builtins()
    cursor = QueryCursor(_reads_query())
    cursor.set_byte_range(start, end)
    out: list[Finding] = []
    for node in cursor.captures(tree.root_node).get("id", ()):
        if node.start_byte < start or node.end_byte > end or not _is_read(node, bindings):
            continue
        name = node.text.decode("utf-8", "replace") if node.text else ""
        if bindings.resolves(name, node):
            found = _member(node, name, bindings, data)
            if found is not None:
                out.append(found)
            continue
        if dynamic or name in known or name in _ALWAYS or name in bindings.starred:
            continue
        if name in _PYTHON2 and _TELLS_VERSIONS.search(data):
            continue
        out.append(_finding("undefined", node, name, data))
    out.extend(_from_imports(tree, data, start, end))
    return out


def _finding(kind: str, node: Node, name: str, data: bytes, module: str = "") -> Finding:
    row, column = node.start_point
    return Finding(kind, name, node.start_byte, node.end_byte, row, column, module)  # type: ignore[arg-type]


def _member(node: Node, name: str, bindings: _Bindings, data: bytes) -> Finding | None:
    """``json.parse``: a member a stdlib module bound only by ``import json`` does not have."""
    parent = node.parent
    if parent is None or parent.type != "attribute":
        return None
    imported = bindings.imports.get(name)
    if not imported or any(m != name for m in imported) or len(bindings.scopes[name]) != 1:
        return None
    if not is_stdlib(name):
        return None
    attribute = parent.child_by_field_name("attribute")
    if attribute is None or attribute.text is None:
        return None
    member = attribute.text.decode()
    if member.startswith("_"):
        return None
    grand = parent.parent
    if (
        grand is not None
        and grand.type in ("assignment", "augmented_assignment")
        and grand.child_by_field_name("left") == parent
    ):
        return None  # json.x = ...: setting a member is legal
    names = members(name)
    if names is None or member in names:
        return None
    return _finding("member", attribute, member, data, name)


def _from_imports(tree: Tree, data: bytes, start: int, end: int) -> list[Finding]:
    """``from json import parse`` in the region: a name a stdlib module does not define."""
    out: list[Finding] = []
    root = tree.root_node
    statements = [c for c in root.named_children if c.end_byte > start and c.start_byte < end]
    for statement in statements:
        if statement.type != "import_from_statement":
            continue
        module_node = statement.child_by_field_name("module_name")
        if module_node is None or module_node.type != "dotted_name" or module_node.text is None:
            continue
        module = module_node.text.decode()
        if not is_stdlib(module):
            continue
        names = members(module)
        if names is None:
            continue
        for child in statement.children_by_field_name("name"):
            target = child.child_by_field_name("name") if child.type == "aliased_import" else child
            if target is None or target.text is None:
                continue
            imported = target.text.decode()
            if imported.startswith("_") or imported in names:
                continue
            out.append(_finding("import", target, imported, data, module))
    return out
