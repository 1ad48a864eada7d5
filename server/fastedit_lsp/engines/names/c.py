"""C's and C++'s names check: each name a region reads is declared in the file, in a header the
file includes, or is reserved to the implementation.

Pure. A file's names come from its own declarations (anywhere in the file: lenient on scope, a
struct's field counts too) and from what it includes: a system header's names from the table
made from glibc's and libstdc++'s headers (``c_stdlib.txt``, every word of each header's
preprocessed text and the files it includes: a superset); a header of the project or any other
one on disk through :class:`~.findings.CIncludes` (read in ``project/``). Only identifiers that
are read are checked (not types, not members after ``.``/``->``, not qualified ``a::b``).

Not flagged (a false alarm costs more than a miss): names in a template (dependent names),
arguments of a macro (an all-caps call or a function-like macro of the file, ``offsetof``,
``va_arg``), names reserved to the implementation (``__x``, ``_X``), and — the file is then
"not checked" when a name does not resolve — a header that cannot be read or is not in the
table, ``#include`` of a macro, a ``using namespace`` of a namespace whose members are unknown,
a macro of the file that pastes tokens (``##``), a file another includes (a unity build's
part) unless what the including file brings is known (:attr:`.CIncludes.including`). Even
then, a local's or parameter's name mistyped (one letter inside the word, read nowhere else
in the file: :func:`_one_slip`) is flagged: no header or macro can rightly bring it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING

from .bindings import _places as places
from .findings import CIncludes, Finding

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

    from .findings import Rules

#: Names every C or C++ file may read: the language's own (C23 keywords older grammars read as
#: names, C++'s contextual ones) and predefined macros not reserved by their spelling.
BUILTINS = frozenset(
    (
        "NULL",
        "main",
        "defined",
        "static_assert",
        "alignof",
        "alignas",
        "typeof",
        "asm",
        "override",
        "final",
        "import",
        "module",
        "thread_local",
        "nullptr",
        "true",
        "false",
        "bool",
        "unix",
        "linux",
    )
)
#: Macros whose arguments are not expressions (a type, a member's name).
_TYPE_MACROS = frozenset(("offsetof", "va_arg", "container_of", "sizeof", "alignof", "typeof"))
#: Parents naming what they declare in their ``name`` field.
_NAMERS = frozenset(
    (
        "enumerator",
        "preproc_def",
        "preproc_function_def",
        "namespace_definition",
        "namespace_alias_definition",
        "concept_definition",
        "alias_declaration",
        "class_specifier",
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
        "type_parameter_declaration",
    )
)
#: A declarator's fields that hold no declared name.
_NOT_DECLARED = frozenset(("value", "parameters", "size", "default_value"))
#: Ancestors whose identifiers are not names read by the code.
_SKIPPED = frozenset(
    (
        "preproc_include",
        "preproc_def",
        "preproc_function_def",
        "preproc_call",
        "preproc_params",
        "preproc_defined",
        "attribute",
        "attribute_declaration",
        "attribute_specifier",
        "ms_declspec_modifier",
        "using_declaration",
        "qualified_identifier",
        "requires_clause",
        "requires_expression",
        "gnu_asm_expression",
        "offsetof_expression",
        "ERROR",
    )
)
_WORD = re.compile(rb"[A-Za-z_]\w*")
_PASTES = re.compile(rb"^[ \t]*#[ \t]*define(?:[^\n]|\\\n)*##", re.M)
_NAMESPACE = re.compile(rb"(?<!using )\bnamespace\s+([A-Za-z_]\w*)\s*[{=]")


@functools.cache
def _table() -> tuple[dict[str, tuple[str, ...]], dict[str, frozenset[str]]]:
    """The system headers' table: a file's includes, a file's words."""
    text = resources.files(__package__).joinpath("c_stdlib.txt").read_text("utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    includes: dict[str, tuple[str, ...]] = {}
    words: dict[str, frozenset[str]] = {}
    for head, names in zip(lines[::2], lines[1::2], strict=False):
        file, _, rest = head.partition(" < ")
        includes[file] = tuple(rest.split())
        words[file] = frozenset(names.split())
    return includes, words


@functools.cache
def system_header(header: str, cpp: bool) -> frozenset[str] | None:
    """Every word ``#include <header>`` may bring (the table's closure), None when the table
    does not know the header."""
    includes, words = _table()
    key = f"c++:{header}" if cpp and f"c++:{header}" in words else header
    if key not in words:
        return None
    seen = {key}
    todo = [key]
    out: set[str] = set()
    while todo:
        file = todo.pop()
        out |= words.get(file, frozenset())
        for nested in includes.get(file, ()):
            if nested not in seen:
                seen.add(nested)
                todo.append(nested)
    return frozenset(out)


def in_table(header: str) -> bool:
    """Whether the table knows ``<header>`` (as C's or C++'s)."""
    words = _table()[1]
    return header in words or f"c++:{header}" in words


def reserved(name: str) -> bool:
    """A name reserved to the implementation (``__x``, ``_X``): never flagged."""
    return name.startswith("__") or (name[:1] == "_" and name[1:2].isupper())


def rules(language: str, includes: CIncludes | None) -> Rules:
    """The rules for ``c`` or ``cpp``, given what the disk says around the file (None:
    unknown: a quoted include or a header outside the table then makes the file uncertain)."""

    def check(tree: Tree, data: bytes, start: int, end: int) -> list[Finding] | str:
        return findings(tree, data, start, end, cpp=language == "cpp", includes=includes)

    return check


def _field(node: Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    for index, child in enumerate(parent.children):
        if child == node:
            return parent.field_name_for_child(index)
    return None


def declares(node: Node) -> bool:
    """Whether ``node`` (an identifier of any kind) is the name a declaration declares."""
    parent = node.parent
    if parent is None:
        return False
    field = _field(node)
    kind = parent.type
    if field == "declarator" or (kind.endswith("declarator") and field not in _NOT_DECLARED):
        return True
    if field == "name" and kind in _NAMERS:
        return True
    if kind in ("preproc_params", "using_declaration"):
        return True
    if kind == "lambda_capture_initializer" and field == "left":
        return True
    if kind == "qualified_identifier" and field == "name":
        return declares(parent)
    return False


class _Bound:
    """``name in bound``: whether the file declares ``name`` somewhere (its occurrences found as
    words, each classified by its node; a word in a macro's body counts, as the macro may
    declare it when expanded)."""

    def __init__(self, tree: Tree, data: bytes, near: int) -> None:
        self._tree, self._data, self._near = tree, data, near
        self._known: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name not in self._known:
            self._known[name] = self._find(name)
        return self._known[name]

    def _find(self, name: str, skip: int = -1) -> bool:
        word = name.encode()
        for at in places(self._data, word, self._near):  # nearest the region first
            if at == skip:
                continue
            node = self._tree.root_node.descendant_for_byte_range(at, at + len(word))
            if node is not None and _binds(node):
                return True
        return False

    def elsewhere(self, node: Node) -> bool:
        """Whether the file declares ``node``'s name other than at ``node`` (a macro's
        argument counts as declared there, but not for itself)."""
        return self._find(_text(node), node.start_byte)


def _binds(node: Node) -> bool:
    if node.type in ("preproc_arg", "preproc_def", "preproc_function_def", "preproc_call"):
        return True  # a macro's body (may declare the name when expanded), a #define's line
    if node.type == "parameter_list" and node.parent is not None:
        head = _text(node.parent.child_by_field_name("declarator"))
        return len(head) > 1 and head.isupper()  # ``NAN_METHOD(name)``, read as no node
    if node.type in ("identifier", "type_identifier") and _macro_argument(node):
        return True  # ``STATEMENT_MUTEX(mtx);``: a macro may declare what it is handed
    if node.type not in ("identifier", "field_identifier", "type_identifier"):
        return node.type == "namespace_identifier" and _field(node) == "name"
    if declares(node):
        return True
    # A name handed to a macro outside any function (``DEFINE_THING(name);``) may be declared.
    current: Node | None = node.parent
    in_call = False
    inside = False
    while current is not None:
        if current.type == "ERROR":
            return True  # code tree-sitter cannot read may declare it
        if current.type in ("function_definition", "lambda_expression"):
            inside = True
        if current.type in ("call_expression", "macro_type_specifier"):
            in_call = True
        current = current.parent
    return in_call and not inside


def _macro_argument(node: Node) -> bool:
    """Whether ``node`` is an argument of an all-caps call (a macro, as a rule), or in the
    parameters of a function head written with one (``NAN_METHOD(name) { … }``)."""
    parent = node.parent
    if parent is not None and parent.type == "parameter_declaration":
        parent = parent.parent
    if parent is None or parent.parent is None:
        return False
    if parent.type == "argument_list":
        callee = _text(parent.parent.child_by_field_name("function"))
    elif parent.type == "parameter_list" and parent.parent.type == "function_declarator":
        callee = _text(parent.parent.child_by_field_name("declarator"))
    else:
        return False
    return len(callee) > 1 and callee.isupper()


def _reads(tree: Tree, start: int, end: int) -> list[Node]:
    out: list[Node] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.end_byte <= start or node.start_byte >= end or node.type in _SKIPPED:
            continue
        if node.type == "identifier":
            if node.start_byte >= start and node.end_byte <= end:
                out.append(node)
            continue
        if node.type.startswith("preproc_"):  # not an #if's condition nor #ifdef's name
            skipped = (node.child_by_field_name("condition"), node.child_by_field_name("name"))
            stack.extend(c for c in node.children if c not in skipped)
            continue
        stack.extend(node.children)
    out.sort(key=lambda n: n.start_byte)
    return out


def _broken_near(tree: Tree, start: int, end: int) -> bool:
    """Whether a syntax error lies in the region or its function (the names read there could
    be read wrongly); errors elsewhere (a macro tree-sitter cannot expand) only widen what
    counts as declared."""
    node = tree.root_node.descendant_for_byte_range(start, max(start, end - 1))
    while node is not None and node.type not in ("function_definition", "translation_unit"):
        node = node.parent
    if node is None or node.type == "translation_unit":
        node = tree.root_node
        return any(c.has_error and c.start_byte < end and c.end_byte > start for c in node.children)
    return node.has_error


def _in_macro_arguments(node: Node, macros: frozenset[str]) -> bool:
    current = node.parent
    while current is not None and current.type not in ("compound_statement", "translation_unit"):
        if current.type == "argument_list" and current.parent is not None:
            callee = current.parent.child_by_field_name("function")
            text = _text(callee)
            if text in macros or text in _TYPE_MACROS or (text.isupper() and len(text) > 1):
                return True
        current = current.parent
    return False


def _in_template(node: Node) -> bool:
    """Whether ``node`` is in a template where its lookup may wait for the instantiation: a
    call's function with arguments (argument-dependent lookup), or any name in a class with a
    base class or in a member defined outside its class (a dependent base's members; MSVC
    finds them unqualified). A plain name read elsewhere in a template is looked up where it
    is written."""
    templated = False
    current = node.parent
    while current is not None:
        if current.type == "template_declaration":
            templated = True
        elif current.type in ("class_specifier", "struct_specifier"):
            if any(c.type == "base_class_clause" for c in current.children):
                return _encloses_template(current)
        elif current.type == "function_definition":
            declarator = current.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            name = declarator.child_by_field_name("declarator") if declarator else None
            if name is not None and name.type in ("qualified_identifier", "field_identifier"):
                return _encloses_template(current)
        current = current.parent
    if not templated:
        return False
    parent = node.parent
    if parent is not None and parent.type == "call_expression":
        arguments = parent.child_by_field_name("arguments")
        return arguments is not None and arguments.named_child_count > 0
    return False


def _encloses_template(node: Node) -> bool:
    current: Node | None = node
    while current is not None:
        if current.type == "template_declaration":
            return True
        current = current.parent
    return False


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


# (A literal '#' first: the search skips to it; a line-start anchor made it scan every line.)
_INCLUDE = re.compile(rb"#[ \t]*include[ \t]*([<\"][^>\"\n]*[>\"]|[^\s]+)")
_FUNCTION_MACRO = re.compile(rb"#[ \t]*define[ \t]+(\w+)\(")


def _includes(data: bytes) -> Iterator[re.Match[bytes]]:
    """The text's ``#include`` directives (a '#' first on its line)."""
    if b"include" not in data:
        return
    for match in _INCLUDE.finditer(data):
        if not data[data.rfind(b"\n", 0, match.start()) + 1 : match.start()].strip():
            yield match


_CONDITIONALS = frozenset(
    ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_else", "preproc_elifdef")
)


def _conditional(node: Node | None) -> bool:
    """Whether ``node`` is under an ``#if``/``#ifdef`` (code for some configurations only; a
    header's include guard does not count)."""
    while node is not None:
        if node.type in _CONDITIONALS and not _guard(node):
            return True
        node = node.parent
    return False


def _guard(node: Node) -> bool:
    parent = node.parent
    if node.type != "preproc_ifdef" or parent is None or parent.type != "translation_unit":
        return False
    code = [c for c in parent.named_children if c.type != "comment"]
    return len(code) == 1


def _include_names(
    tree: Tree, data: bytes, cpp: bool, includes: CIncludes | None
) -> tuple[list[frozenset[str]], str | None, str | None]:
    """Every word the file's includes may bring, and why they are not all known: a header not
    known (None: all are), one not known under an ``#if`` (another platform's, as a rule: it
    makes only the reads under an ``#if`` uncertain). Every ``#include`` line counts, whatever
    ``#if`` it is under (a superset)."""
    names: list[frozenset[str]] = []
    unknown: str | None = None
    conditional: str | None = None
    unreadable: list[tuple[Node | None, str]] = []  # under an #if
    for match in _includes(data):
        raw = match.group(1).decode("utf-8", "replace")
        if raw[:1] not in ("<", '"') or len(raw) < 3:
            unknown = unknown or f"'#include {raw}' names a macro"
            continue
        header, quoted = raw[1:-1].strip(), raw[0] == '"'
        table = None if quoted else system_header(header, cpp)
        if table is not None:
            names.append(table)
            continue
        found = includes.header(header, quoted) if includes is not None else None
        if found is not None:
            names.append(found.words)
            for system in found.system:
                table = system_header(system, cpp)
                if table is not None:
                    names.append(table)
            continue
        table = system_header(header, cpp)
        if table is not None:
            names.append(table)
            continue
        why = f"the header {raw} cannot be read"
        at = tree.root_node.descendant_for_byte_range(*match.span(1))
        if _conditional(at):
            unreadable.append((at, why))
        else:
            unknown = unknown or why
    spots = [at.start_byte for at, _why in unreadable if at is not None]
    for at, why in unreadable:
        if _always(at, spots):
            unknown = unknown or why
        else:
            conditional = conditional or why
    return names, unknown, conditional


def _always(node: Node | None, spots: list[int]) -> bool:
    """Whether the ``#if`` around ``node`` (an unreadable include) includes an unreadable
    header whichever way it goes (``#if A`` one, ``#else`` another: Tcl's ``sqlite_tcl.h`` or
    ``tcl.h``), at the file's top level: the names read outside it may come from them."""
    branch = node
    while branch is not None and branch.type not in _CONDITIONALS:
        branch = branch.parent
    head = branch
    while (
        head is not None
        and head.parent is not None
        and head.type in ("preproc_elif", "preproc_elifdef", "preproc_else")
    ):
        head = head.parent
    if head is None or _conditional(head.parent):
        return False
    current: Node | None = head
    while current is not None:
        alternative = current.child_by_field_name("alternative")
        end = alternative.start_byte if alternative is not None else current.end_byte
        if not any(current.start_byte <= spot < end for spot in spots):
            return False
        if current.type == "preproc_else":
            return True
        current = alternative
    return False  # no #else: one configuration includes none of them


def _namespaces_unknown(
    tree: Tree, data: bytes, known: list[frozenset[str]], reads: list[Node]
) -> str | None:
    """Why a ``using namespace`` makes the file's names uncertain (None: it does not)."""
    if b"using" not in data:
        return None
    declared = {m.group(1).decode() for m in _NAMESPACE.finditer(data)}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        scoped = node.type in ("function_definition", "class_specifier", "struct_specifier")
        if scoped and not any(node.start_byte <= r.start_byte < node.end_byte for r in reads):
            continue
        if node.type == "using_declaration" and node.child_count >= 3:
            if node.children[1].type != "namespace":
                continue
            target = _text(node.children[2])
            head = re.split(r"::", target.lstrip(":"))[0]
            if head != "std" and head not in declared and not any(head in k for k in known):
                return f"'using namespace {target}' brings names not known"
            continue
        stack.extend(node.children)
    return None


def findings(
    tree: Tree,
    data: bytes,
    start: int,
    end: int,
    *,
    cpp: bool = False,
    includes: CIncludes | None = None,
) -> list[Finding] | str:
    """The names read in bytes ``[start, end)`` that nothing the file declares or includes
    declares; a string (why) when such a name may still come from something unknown."""
    if tree.root_node.has_error and _broken_near(tree, start, end):
        return "the text around the draft does not parse"
    bound = _Bound(tree, data, start)
    reads = _reads(tree, start, end)
    macros: frozenset[str] | None = None
    candidates: list[Node] = []
    #: Names whose lookup cannot be judged here (a macro's argument, a template's): if one
    #: does not resolve, the answer is "not checked", never "ok".
    unsure: list[tuple[Node, str]] = []
    for node in reads:
        name = _text(node)
        if not name or reserved(name) or name in BUILTINS or declares(node):
            continue
        if macros is None:
            macros = frozenset(m.group(1).decode() for m in _FUNCTION_MACRO.finditer(data))
        if _in_macro_arguments(node, macros):
            unsure.append((node, "a macro's argument"))
        elif cpp and _in_template(node):
            unsure.append((node, "a template's name (looked up when it is instantiated)"))
        else:
            candidates.append(node)
    if not candidates and not unsure:
        return []
    # What the includes bring first (sets: cheap), then the file's declarations (searched).
    known, unknown, conditional = _include_names(tree, data, cpp, includes)

    def resolves(node: Node) -> bool:
        name = _text(node)
        return any(name in words for words in known) or name in bound

    candidates = [n for n in candidates if not resolves(n)]
    #: Whether what the files including this one bring is known too (a unity build's part).
    whole = False
    if candidates and includes is not None and includes.including is not None:
        around = includes.including()
        if around is not None:
            whole = True
            known.append(around.words)
            known.extend(t for t in (system_header(h, cpp) for h in around.system) if t)
            candidates = [n for n in candidates if not resolves(n)]
    verdict: list[Finding] | str = []
    if candidates:
        verdict = _verdict(
            tree, data, cpp, includes, known, (unknown, conditional), candidates, whole=whole
        )
    if isinstance(verdict, list) and (verdict or candidates):
        return verdict
    # Of the names whose lookup cannot be judged here, those resolving nowhere known.
    unjudged = [
        (node, why)
        for node, why in unsure
        if not any(_text(node) in words for words in known) and not bound.elsewhere(node)
    ]
    if not candidates and not unjudged:
        return []
    if not candidates:
        verdict = f"'{_text(unjudged[0][0])}' is {unjudged[0][1]}"
    # Even then, a local's name mistyped is no name a header or a macro may bring.
    unresolved = candidates + [node for node, _why in unjudged]
    return _misspelled_locals(unresolved, data, start, end) or verdict


def _verdict(
    tree: Tree,
    data: bytes,
    cpp: bool,
    includes: CIncludes | None,
    known: list[frozenset[str]],
    why: tuple[str | None, str | None],
    candidates: list[Node],
    *,
    whole: bool,
) -> list[Finding] | str:
    """The findings for names that resolve nowhere known, or why they may still resolve
    (``why``: a header not known, one not known under an ``#if``; ``whole``: the names of the
    files including this one are known too)."""
    unknown, conditional = why
    if not whole and next(_includes(data), None) is None:
        return "the file includes nothing (a part another file includes?)"
    if candidates and any(_conditional(n) for n in candidates):
        # Code under an #if may be another configuration's (or dead: #if 0).
        conditional = conditional or "the name is read under an #if"
    if conditional is not None and candidates:
        certain = [n for n in candidates if not _conditional(n)]
        if not certain:
            return conditional
        candidates = certain
    if not candidates:
        return []
    if unknown is None and includes is not None and includes.part and not whole:
        unknown = "another file includes this one (names may come from its includes)"
    if unknown is None and _PASTES.search(data) is not None:
        unknown = "a macro of the file pastes tokens (##)"
    if unknown is None and cpp:
        unknown = _namespaces_unknown(tree, data, known, candidates)
    if unknown is not None:
        return unknown
    return [_finding(node) for node in candidates]


def _finding(node: Node) -> Finding:
    row, column = node.start_point
    return Finding("undefined", _text(node), node.start_byte, node.end_byte, row, column)


def _misspelled_locals(candidates: list[Node], data: bytes, start: int, end: int) -> list[Finding]:
    """Of names that resolve nowhere known, those that are a local's or parameter's name
    mistyped: one letter dropped, added, swapped with the next or replaced, inside the word
    (not its first or last letter: ``item``/``items``, ``x_pos``/``y_pos`` are other names),
    not read as a function, and found nowhere in the file but the region. No header may declare
    such a name and be right: a header cannot see the function's locals, and a global one edit
    from a local in scope, read once, is a typo far more often than a name of an unknown
    header. Found even when what the includes bring is not all known."""
    out: list[Finding] = []
    for node in candidates:
        name = _text(node)
        if len(name) < 3 or _called(node) or _dead(node):
            continue
        word = name.encode()
        if any(not start <= at < end for at in places(data, word, start)):
            continue
        if any(_one_slip(name, local) for local in _locals_before(node)):
            out.append(_finding(node))
    return out


def _called(node: Node) -> bool:
    parent = node.parent
    return (
        parent is not None
        and parent.type == "call_expression"
        and parent.child_by_field_name("function") == node
    )


def _dead(node: Node) -> bool:
    """Whether ``node`` is under an ``#if 0`` (code kept as text, its names stale)."""
    current = node.parent
    while current is not None:
        if current.type == "preproc_if" and _text(current.child_by_field_name("condition")) in (
            "0",
            "false",
        ):
            return True
        current = current.parent
    return False


def _locals_before(node: Node) -> Iterator[str]:
    """The names the functions around ``node`` declare (parameters, locals; ``T name(x);``,
    which tree-sitter reads as a function's declaration, too) before it."""
    current = node.parent
    while current is not None:
        if current.type in ("function_definition", "lambda_expression"):
            own = _defined(current)
            stack = [
                c
                for c in current.children
                if c.type not in ("primitive_type", "type_identifier")
                and c.start_byte < node.start_byte
            ]
            while stack:
                child = stack.pop()
                if child.start_byte >= node.start_byte:
                    continue
                if child.type == "identifier":
                    if child != own and declares(child):
                        yield _text(child)
                    continue
                stack.extend(child.children)
        current = current.parent


def _defined(function: Node) -> Node | None:
    """The name a function definition defines (its last segment when qualified)."""
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    name = declarator.child_by_field_name("declarator") if declarator is not None else None
    while name is not None and name.type == "qualified_identifier":
        name = name.child_by_field_name("name")
    return name


def _one_slip(read: str, local: str) -> bool:
    """Whether ``read`` is ``local`` with one letter dropped, added or replaced inside the word
    (not the first or last: ``item``/``items``, ``x_pos``/``y_pos`` are other names; a doubled
    letter at the end may lose its inner copy: ``proces``), or two neighbours swapped (not the
    first: ``lenght``); no digit (``buf1``/``buf2``), nor a change of case only."""
    if len(local) < 4 or abs(len(read) - len(local)) > 1 or read.lower() == local.lower():
        return False
    return _inner_slip(read, local) or _inner_slip(read[::-1], local[::-1], swap=False)


def _inner_slip(read: str, local: str, *, swap: bool = True) -> bool:
    """:func:`_one_slip` with the common head taken first, then the common tail."""
    shortest = min(len(read), len(local))
    head = 0
    while head < shortest and read[head] == local[head]:
        head += 1
    tail = 0
    while tail < shortest - head and read[-1 - tail] == local[-1 - tail]:
        tail += 1
    mine, theirs = read[head : len(read) - tail], local[head : len(local) - tail]
    if head == 0 or any(c.isdigit() for c in mine + theirs):
        return False
    if swap and len(mine) == len(theirs) == 2 and mine == theirs[::-1]:
        return True  # two neighbours swapped
    return tail > 0 and (len(mine) + len(theirs) == 1 or len(mine) == len(theirs) == 1)


def words(data: bytes) -> frozenset[str]:
    """Every identifier of a text (a header read from disk: a superset of what it declares)."""
    return frozenset(w.decode() for w in _WORD.findall(data))
