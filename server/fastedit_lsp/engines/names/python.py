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

import bisect
import functools
import re
from typing import TYPE_CHECKING

from ..parse_tree import grammar
from .findings import Finding
from .python_stdlib import is_builtin, is_stdlib, members

if TYPE_CHECKING:
    from tree_sitter import Node, Query, Tree


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
        "get_ipython",
        "__IPYTHON__",
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

#: Modules whose members are not checked (the builtins: shadowed and extended at will).
_IMPLEMENTATION_SPECIFIC = frozenset({"builtins", "__builtin__", "distutils"})
#: Members of other Python implementations than typeshed's (PyPy's, Pyston's), not flagged.
_OTHER_IMPLEMENTATIONS = {
    "sys": frozenset(
        {"pypy_version_info", "pypy_translation_info", "pypy_objspace", "pyston_version_info"}
    )
}

#: Text that can define names no tree shows.
_DYNAMIC = re.compile(
    rb"globals\(\)\s*(?:\[[^\]\n]*\]\s*=[^=]|\.update|\.setdefault|\.__setitem__)"
    rb"|\bexec\((?:[^,()\n]*\)|[^)\n]*globals\(\))"  # exec(code) or exec(code, globals())
    rb"|vars\(\)\s*(?:\[[^\]\n]*\]\s*=[^=]|\.update)"
    rb"|__builtins__\["
    rb"|setattr\(\s*(?:builtins|__builtin__|sys\.modules)|sys\.modules\[__name__\]"
    rb"|[(,]\s*globals\(\)"  # the namespace handed to code that may write it
    rb"|\._convert_\("
)


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


#: Parents whose identifier children all bind (parameters, patterns, ``nonlocal``).
_BINDING_PARENTS = frozenset(
    {
        "parameters",
        "lambda_parameters",
        "typed_parameter",
        "list_splat_pattern",
        "dictionary_splat_pattern",
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "nonlocal_statement",
        "splat_pattern",
        "as_pattern_target",
    }
)
#: Parents whose ``field`` child binds.
_BINDING_FIELDS = {
    "default_parameter": "name",
    "typed_default_parameter": "name",
    "aliased_import": "alias",
    "assignment": "left",
    "augmented_assignment": "left",
    "for_statement": "left",
    "for_in_clause": "left",
}
#: Nodes an ``as`` target may nest its names in (``with open(p) as (a, b)``).
_NESTING = frozenset({"tuple", "list", "parenthesized_expression"})


def _binding(node: Node) -> str | None:
    """How identifier ``node`` binds its name: "local" (in the scope it is in), "outer" (a
    def's or class's name: the scope around it), "global", "walrus" (the nearest scope that is
    not a comprehension); None when it does not bind."""
    parent = node.parent
    if parent is None:
        return None
    kind = parent.type
    if kind in _BINDING_PARENTS:
        return "local"
    field = _BINDING_FIELDS.get(kind)
    if field is not None:
        return "local" if parent.child_by_field_name(field) == node else None
    if kind in ("function_definition", "class_definition"):
        return "outer" if parent.child_by_field_name("name") == node else None
    if kind == "named_expression":
        return "walrus" if parent.child_by_field_name("name") == node else None
    if kind == "global_statement":
        return "global"
    grand = parent.parent
    if grand is None:
        return None
    if kind == "type":
        first = grand.named_children[0] if grand.type == "type_alias_statement" else None
        return "local" if grand.type == "type_parameter" or first == parent else None
    if kind == "dotted_name":
        if grand.type == "import_statement":
            return "local" if parent.named_children[0] == node else None
        if grand.type == "import_from_statement":
            return "local" if grand.child_by_field_name("module_name") != parent else None
        if grand.type in ("case_pattern", "keyword_pattern") and parent.named_child_count == 1:
            return "local"  # a capture pattern
        return None
    if kind == "as_pattern":
        children = parent.named_children
        return "local" if children[-1] == node and children[0].type == "case_pattern" else None
    while kind in _NESTING and grand is not None:
        if grand.type == "as_pattern_target":
            return "local"
        kind, grand = grand.type, grand.parent
    return None


#: Occurrences of a name looked at around a read before all its bindings are gathered.
_NEAREST = 16


class _Bindings:
    """The bindings of the names a region reads, found lazily where they can be seen from it:
    the module's own statements, and the top-level definition the region is in (a name bound
    only inside another function is no binding for it; a ``global`` line is). Each read looks
    at its name's occurrences nearest first, and stops at the first binding it sees."""

    def __init__(self, tree: Tree, data: bytes, names: set[str], start: int, end: int) -> None:
        #: A star import of a module whose names cannot be known (not the stdlib's).
        self.star = False
        #: The names star imports of stdlib modules bring.
        self.starred: set[str] = set()
        # Names a module adds to the builtins (``builtins._ = value``) are known from then on.
        self.starred.update(m.group(1).decode() for m in _SETS_BUILTIN.finditer(data))
        for match in _STAR.finditer(data):
            source = match.group(1).decode()
            known = members(source) if is_stdlib(source) else None
            if known is None:
                self.star = True
            else:
                self.starred.update(known)
        self._root = tree.root_node
        self._data = data
        #: name → the byte offsets where it occurs (as a word), in order.
        self._spans: dict[str, list[int]] = {}
        #: offset → (the name's binding there: its scope, or None for the module; bound?)
        self._seen: dict[int, tuple[Node | None, bool]] = {}
        #: name → the scopes of all its bindings (None: the module), once a read needed them.
        self._bindings: dict[str, list[Node | None]] = {}
        if not names:
            return
        # The bodies of the top-level definitions the region does not overlap.
        hidden: list[tuple[int, int]] = []
        for child in self._root.children:
            node = child
            if child.type == "decorated_definition":
                node = child.child_by_field_name("definition") or child
            if node.type not in ("function_definition", "class_definition"):
                continue
            body = node.child_by_field_name("body")
            if body is not None and (body.end_byte <= start or body.start_byte >= end):
                hidden.append((body.start_byte, body.end_byte))
        words = b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))
        pattern = re.compile(rb"(?<![\w.])(?:" + words + rb")(?!\w)")
        visible, position = [], 0
        for lo, hi in hidden:
            visible.append((position, lo))
            position = hi
        visible.append((position, len(data)))
        spans: list[tuple[str, int]] = []
        for lo, hi in visible:
            spans.extend((m.group(0).decode(), m.start()) for m in pattern.finditer(data, lo, hi))
        # ``global`` lines in the bodies left out bind at module level.
        for line in _GLOBAL.finditer(data):
            spans.extend(
                (m.group(0).decode(), m.start())
                for m in pattern.finditer(data, line.start(), line.end())
            )
        for name, at in sorted(set(spans), key=lambda span: span[1]):
            self._spans.setdefault(name, []).append(at)

    def _at(self, at: int, size: int) -> tuple[Node | None, bool]:
        """The binding at byte ``at`` (a name of ``size`` bytes): (its scope, True), or
        (None, False) where the name is not bound there."""
        seen = self._seen.get(at)
        if seen is not None:
            return seen
        node = self._root.descendant_for_byte_range(at, at + size)
        how = None
        if node is not None and node.type == "identifier" and node.start_byte == at:
            how = _binding(node)
        result: tuple[Node | None, bool] = (None, False)
        if node is not None and how is not None:
            if how == "outer":
                result = (_scope(node.parent) if node.parent is not None else None, True)
            elif how == "global":
                result = (None, True)
            else:
                result = (_scope(node, skip_comprehensions=how == "walrus"), True)
        self._seen[at] = result
        return result

    def resolves(self, name: str, read: Node) -> bool:
        where = read.start_byte
        scopes = self._bindings.get(name)
        if scopes is None:
            # The occurrences nearest the read first: a binding is usually close by.
            spans = self._spans.get(name, [])
            size = len(name.encode())
            index = bisect.bisect_left(spans, where)
            before, after = index - 1, index
            for _ in range(min(_NEAREST, len(spans))):
                if before >= 0 and (
                    after >= len(spans) or where - spans[before] <= spans[after] - where
                ):
                    at, before = spans[before], before - 1
                else:
                    at, after = spans[after], after + 1
                scope, bound = self._at(at, size)
                if bound and (scope is None or scope.start_byte <= where < scope.end_byte):
                    return True
            if len(spans) <= _NEAREST:
                return False
            # A name read far from its binding, or never bound (a builtin): its bindings once,
            # so that each further read costs their number, not the name's occurrences.
            scopes = [scope for at in spans for scope, bound in [self._at(at, size)] if bound]
            self._bindings[name] = scopes
        return any(scope is None or scope.start_byte <= where < scope.end_byte for scope in scopes)

    def module_bindings(self, name: str) -> list[Node]:
        """The identifiers binding ``name`` anywhere it can be seen from the region."""
        out: list[Node] = []
        size = len(name.encode())
        for at in self._spans.get(name, []):
            if self._at(at, size)[1]:
                node = self._root.descendant_for_byte_range(at, at + size)
                if node is not None:
                    out.append(node)
        return out


#: Words without which :data:`_DYNAMIC` cannot match (found in C, before the regex runs).
_DYNAMIC_WORDS = (b"globals(", b"exec(", b"vars(", b"builtin", b"_convert_", b"sys.modules")


def _dynamic(data: bytes) -> bool:
    """Whether the text may define names no tree shows."""
    return any(word in data for word in _DYNAMIC_WORDS) and _DYNAMIC.search(data) is not None


_GLOBAL = re.compile(rb"^[ \t]*global[ \t][^\n]*", re.M)

_LAZY_ANNOTATIONS = re.compile(rb"^from __future__ import [^\n]*\bannotations\b", re.M)
_SETS_BUILTIN = re.compile(rb"\b(?:builtins|__builtin__|__builtins__)\.(\w+)\s*=[^=]")
_STAR = re.compile(rb"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]*\*", re.M)


def _imported(node: Node) -> str | None:
    """``X`` for the X of ``import X`` (a top-level module, no alias), else None."""
    parent = node.parent
    if parent is None or parent.type != "dotted_name" or parent.named_child_count != 1:
        return None
    statement = parent.parent
    if statement is None or statement.type != "import_statement":
        return None
    return node.text.decode() if node.text else None


def _unevaluated(node: Node, lazy: bool) -> bool:
    """Whether the name ``node`` reads is never evaluated, or its failing handled: in an
    annotation under ``from __future__ import annotations`` (``lazy``), a variable's annotation
    in a function (``x: Dict = {}``), or the body of a ``try`` that catches ``NameError``
    (``try: long except NameError: ...``)."""
    parent = node.parent
    annotation = None
    while parent is not None and parent.type not in ("module", "class_definition"):
        kind = parent.type
        if kind == "type" and annotation is None:
            annotation = parent
            if lazy:
                return True
        elif kind == "function_definition":
            if annotation is not None and annotation.parent is not None:
                return annotation.parent.type == "assignment"
            return False
        elif kind == "try_statement" and _catches(parent, b"NameError"):
            return True
        elif kind == "if_statement" and _version_test(parent):
            return True  # a branch for another Python version (if PY2: ... else: ...)
        parent = parent.parent
    return False


def _version_test(statement: Node) -> bool:
    condition = statement.child_by_field_name("condition")
    return condition is not None and _TELLS_VERSIONS.search(condition.text or b"") is not None


def _catches(statement: Node, error: bytes) -> bool:
    """Whether the ``try`` ``statement`` has an ``except`` naming ``error``."""
    for clause in statement.children:
        if clause.type == "except_clause":
            caught = clause.named_children[0] if clause.named_child_count > 1 else None
            if caught is not None and error in (caught.text or b""):
                return True
    return False


def _is_read(node: Node) -> bool:
    """Whether identifier ``node`` reads a name (not a member, a keyword, an import's path, a
    binding)."""
    if _binding(node) is not None:
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

    cursor = QueryCursor(_reads_query())
    cursor.set_byte_range(start, end)
    reads = [
        (node, node.text.decode("utf-8", "replace") if node.text else "")
        for node in cursor.captures(tree.root_node).get("id", ())
        if start <= node.start_byte and node.end_byte <= end and _is_read(node)
    ]
    lazy = _LAZY_ANNOTATIONS.search(data) is not None
    reads = [(node, name) for node, name in reads if not _unevaluated(node, lazy)]
    bindings = _Bindings(tree, data, {name for _, name in reads}, start, end)
    dynamic = bindings.star or _dynamic(data)
    out: list[Finding] = []
    for node, name in reads:
        if bindings.resolves(name, node):
            found = _member(node, name, bindings, data)
            if found is not None:
                out.append(found)
            continue
        if dynamic or name in _ALWAYS or name in bindings.starred or is_builtin(name):
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
    if not is_stdlib(name) or name in _IMPLEMENTATION_SPECIFIC:
        return None
    bound = bindings.module_bindings(name)
    if len(bound) != 1 or _imported(bound[0]) != name:
        return None  # bound otherwise too (json = ..., import simplejson as json)
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
    if names is None or member in names or member in _OTHER_IMPLEMENTATIONS.get(name, ()):
        return None
    if re.search(rb"hasattr\(\s*" + name.encode() + rb"\s*,", data):
        return None  # the file feature-tests the module (hasattr(base64, "decodebytes"))
    ancestor = parent.parent
    while ancestor is not None and ancestor.type not in ("function_definition", "module"):
        if (ancestor.type == "try_statement" and _catches(ancestor, b"AttributeError")) or (
            ancestor.type == "if_statement" and _version_test(ancestor)
        ):
            return None  # the code handles its failing (try: ... except AttributeError)
        ancestor = ancestor.parent
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
