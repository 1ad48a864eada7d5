"""A renamed variable's scope in the tree-sitter languages (JavaScript, TypeScript/TSX, Go, Rust,
Java, C, C++, C#): where the old and the new name are used in it, from the syntax tree.

Pure apart from the parse (``engines.parse``, the only module that imports tree-sitter). A whole
document is not parsed (~3 µs a line: 30 ms for 10,000 lines, more than a suggestion may take):
the lines parsed are the outermost indented block around the edit of at most
:data:`MAX_REGION` lines (a function with its header, found from the indentation that formatters
keep: ``gofmt``, ``rustfmt``, Prettier...), and the names are found in them by a whole-word text
search, each looked up in the tree: an ``identifier`` node is a use of the variable, a name in a
string, a comment, a member access (``a.name``, ``p->name``, ``ns::name``) or a type is not.

The scope is the innermost function or block around the edit that declares the old or the new
name itself (a parameter, a ``let``/``var``/``:=``/typed declaration, a loop or ``catch``
variable, a pattern), else the innermost function around it (else, in a function too long to
parse whole, the outermost block of it that was parsed); a nested function or block that
declares the old name again (shadowing it) is left out. A statement at the top of a file or a
class body (a module's, package's or class's variable) is scoped by the statements around it,
:data:`TOP_WINDOW` lines each way, functions included unless they declare the name again. Not
modelled:
JavaScript's ``var`` hoisting out of a block, declarations that tree-sitter reads as
expressions (a C++ most vexing parse), macros' bodies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.document import Point
from .lines import Lines, content, texts
from .tokens import indentation

if TYPE_CHECKING:
    from tree_sitter import Node

#: The most lines parsed for one rename (a block longer than that is not a rename's scope).
MAX_REGION = 300
#: Lines each way parsed around a statement at the top of a file or a class (its scope).
TOP_WINDOW = 80

_JS_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "generator_function_declaration",
        "generator_function",
    }
)
_JS_BLOCKS = frozenset({"statement_block", "for_statement", "for_in_statement", "catch_clause"})

#: Grammar -> (function-like node types, block node types that can declare a variable).
SCOPES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "javascript": (_JS_FUNCTIONS, _JS_BLOCKS),
    "typescript": (_JS_FUNCTIONS, _JS_BLOCKS),
    "tsx": (_JS_FUNCTIONS, _JS_BLOCKS),
    "go": (
        frozenset({"function_declaration", "method_declaration", "func_literal"}),
        frozenset(
            {
                "block",
                "for_statement",
                "if_statement",
                "expression_switch_statement",
                "type_switch_statement",
            }
        ),
    ),
    "rust": (
        frozenset({"function_item", "closure_expression"}),
        frozenset({"block", "for_expression", "match_arm", "if_expression", "while_expression"}),
    ),
    "java": (
        frozenset(
            {
                "method_declaration",
                "constructor_declaration",
                "compact_constructor_declaration",
                "lambda_expression",
            }
        ),
        frozenset(
            {
                "block",
                "for_statement",
                "enhanced_for_statement",
                "catch_clause",
                "try_with_resources_statement",
            }
        ),
    ),
    "c": (frozenset({"function_definition"}), frozenset({"compound_statement", "for_statement"})),
    "cpp": (
        frozenset({"function_definition", "lambda_expression"}),
        frozenset({"compound_statement", "for_statement", "for_range_loop", "catch_clause"}),
    ),
    "c_sharp": (
        frozenset(
            {
                "method_declaration",
                "constructor_declaration",
                "local_function_statement",
                "lambda_expression",
                "anonymous_method_expression",
                "accessor_declaration",
            }
        ),
        frozenset(
            {"block", "for_statement", "foreach_statement", "catch_clause", "using_statement"}
        ),
    ),
}
#: Node types of a variable's name (C#'s ``x => ...`` declares ``x`` as an implicit parameter).
_NAMES = frozenset({"identifier", "implicit_parameter"})
#: Grammars whose methods (or class members) may parse only inside a class body.
_CLASS_WRAPPED = frozenset({"javascript", "typescript", "tsx", "java", "c_sharp", "cpp"})
_JS = frozenset({"javascript", "typescript", "tsx"})
#: A JavaScript/TypeScript method's header: ``  async *name(args) {``, ``  private get x() {``.
_JS_METHOD = re.compile(
    r"\s+(?:(?:static|async|get|set|public|private|protected|readonly|override)\s+|\*)*"
    r"(?!(?:function|if|for|while|switch|catch|return|with)\b)[A-Za-z_$#][\w$]*\s*[(<]"
)
#: Parent types that declare the identifier they hold (by substring of the type's name).
_DECLARING = ("declarator", "parameter", "_spec", "pattern")
#: Statements whose named field declares a loop variable.
_FOREACH = frozenset(
    {"enhanced_for_statement", "foreach_statement", "for_range_loop", "for_in_statement"}
)
_COMMENT = ("//", "/*", "*", "#")
_CLOSERS = (")", "]", "}")
_OPENERS = ("{", "(", "[")


@dataclass(frozen=True)
class ScopedNames:
    """The uses of the old and the new name in the renamed variable's scope, in order."""

    old: list[Point]
    new: list[Point]
    #: False: the tree shows a keyword where the name changed (``var`` -> ``let``).
    variable: bool = True


def _code(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith(_COMMENT)


def _block_end(rows: Sequence[str], start: int, limit: int, last: bool) -> int | None:
    """The line after the block that the line ``start`` opens (its closing line included), or
    None past ``limit`` lines: the first code line as little indented as ``start`` ends it (a
    closing bracket that opens again, ``} else {`` or ``) error {``, continues it). ``last``:
    ``rows`` end where the document does."""
    width = indentation(rows[start])
    for row in range(start + 1, min(len(rows), start + limit + 1)):
        text = rows[row]
        if not _code(text) or indentation(text) > width:
            continue
        stripped = text.strip()
        if stripped.startswith(_CLOSERS):
            if stripped.endswith(_OPENERS):
                continue
            return row + 1
        return row
    return len(rows) if last and start + limit + 1 >= len(rows) else None


def region(lines: Lines, line: int) -> tuple[int, int] | None:
    """``[start, end)``: the outermost block around ``line`` (a less indented header line and
    its body to its closing line) of at most :data:`MAX_REGION` lines."""
    lo = max(0, line - MAX_REGION)
    hi = min(lines.line_count, line + MAX_REGION + 1)
    rows = texts(lines, lo, hi)  # with their terminators: only indentation and strip() matter
    at = line - lo
    if not _code(rows[at]):
        return None
    last = hi == lines.line_count
    end = _block_end(rows, at, MAX_REGION, last)
    if end is None:
        return None
    best = (at, end)
    level = indentation(rows[at])
    for index in range(at - 1, -1, -1):
        if level == 0:
            break
        text = rows[index]
        if not _code(text) or text.lstrip().startswith(_CLOSERS) or indentation(text) >= level:
            continue
        end = _block_end(rows, index, MAX_REGION, last)
        if end is None or end - index > MAX_REGION or end <= at:
            break
        best = (index, end)
        level = indentation(text)
    return best[0] + lo, best[1] + lo


@dataclass
class _Site:
    name: str
    point: Point
    #: The function and block scopes around it, innermost first: (start byte, end byte, type).
    scopes: list[tuple[int, int, str]]
    declares: bool


def scoped_names(
    lines: Lines, grammar: str, at: Point, names: tuple[str, str]
) -> ScopedNames | None:
    """The uses of ``old`` and ``new`` in the scope of the variable renamed ``old -> new`` at
    ``at`` (where ``new`` now stands), or None when the syntax tree does not show one (not an
    identifier there, a block too long to parse)."""
    if grammar not in SCOPES:
        return None
    found = region(lines, at.line)
    if found is None:
        return None
    result = _in_region(lines, grammar, found, at, names, top=found[0] < at.line)
    if not isinstance(result, _Top):
        return result
    # A statement at the top of the file (or of a class): its siblings around it.
    window = siblings(lines, at.line)
    if window is None:
        return None
    result = _in_region(lines, grammar, window, at, names, top=True)
    return None if isinstance(result, _Top) else result


class _Top:
    """The renamed name is in no function or block of the region parsed."""


_TOP = _Top()
#: The scope of a name at the top of the lines parsed: all of them.
_ROOT = (-1, -1, "")


def _in_region(
    lines: Lines,
    grammar: str,
    span: tuple[int, int],
    at: Point,
    names: tuple[str, str],
    *,
    top: bool,
) -> ScopedNames | _Top | None:
    """:func:`scoped_names` on the lines ``span`` (``top``: a name in no function or block of
    them is scoped by all of them)."""
    from ..parse import parse

    start, end = span
    rows = [content(t) for t in texts(lines, start, end)]
    text = "\n".join(rows) + "\n"
    # A JavaScript/TypeScript method parses only in a class: its header is tried in one first
    # (one parse); anything else as it is, then in a class if that does not parse (the last
    # tree is kept when neither parses cleanly: tree-sitter recovers around errors).
    tries = [0, 1] if grammar in _CLASS_WRAPPED else [0]
    if (grammar in _JS and _JS_METHOD.match(rows[0])) or (
        top and indentation(rows[0]) and grammar in ("java", "c_sharp")
    ):
        tries.reverse()  # a method, or a Java/C# class's members
    closing = "};\n" if grammar == "cpp" else "}\n"
    for shift in tries:
        parsed = parse(grammar, "class __Scope {\n" + text + closing if shift else text)
        if not parsed.has_errors:
            break
    root = parsed.tree.root_node
    functions, blocks = SCOPES[grammar]
    kinds = functions | blocks
    sites: list[_Site] = []
    words = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")
    for index, row_text in enumerate(rows):
        if names[0] not in row_text and names[1] not in row_text:
            continue
        for match in words.finditer(row_text):
            head = row_text[: match.start()].rstrip()
            if head.endswith((".", "->", "::")):
                continue  # a member or a path, not the variable
            col = len(row_text[: match.start()].encode("utf-8", "surrogatepass"))
            width = len(match.group().encode("utf-8", "surrogatepass"))
            node = root.descendant_for_point_range(
                (index + shift, col), (index + shift, col + width)
            )
            if node is None or node.type not in _NAMES:
                continue  # in a string, a comment, a type, a field...
            sites.append(
                _Site(
                    match.group(),
                    Point(start + index, match.start()),
                    [*_scopes(node, kinds), _ROOT],
                    _declares(node),
                )
            )
    renamed = next((s for s in sites if s.point == at and s.name == names[1]), None)
    if renamed is None:
        # A keyword (an anonymous node: ``var`` -> ``let``) is a rewrite to carry; a name in a
        # comment, a string, a type or a field is not a variable: nothing.
        line = rows[at.line - start]
        col = len(line[: at.col].encode("utf-8", "surrogatepass"))
        node = root.descendant_for_point_range(
            (at.line - start + shift, col), (at.line - start + shift, col + len(names[1]))
        )
        keyword = node is not None and not node.is_named and node.type == names[1]
        return ScopedNames([], [], variable=False) if keyword else None
    declaring = {s.scopes[0] for s in sites if s.declares}
    scope = next((s for s in renamed.scopes[:-1] if s in declaring), None)
    if scope is None:
        scope = next((s for s in renamed.scopes if s[2] in functions), None)
    if scope is None and len(renamed.scopes) > 1 and end - start > 1:
        # A block of a function too long to parse whole: the variable is the same in it.
        scope = renamed.scopes[-2]
    if scope is None:
        if not top:
            return _TOP
        scope = _ROOT
    shadowing = {s.scopes[0] for s in sites if s.declares and s.name == names[0]}
    shadowing.discard(scope)
    old: list[Point] = []
    new: list[Point] = []
    for site in sites:
        if scope not in site.scopes:
            continue
        inner = site.scopes[: site.scopes.index(scope)]
        if site.name == names[0] and any(s in shadowing for s in inner):
            continue
        (old if site.name == names[0] else new).append(site.point)
    return ScopedNames(old, new)


def siblings(lines: Lines, line: int) -> tuple[int, int] | None:
    """``[start, end)``: the statements as indented as ``line`` around it, up to
    :data:`TOP_WINDOW` lines each way, within the block that holds them and cut between two
    statements (a statement starts on a code line as indented, not a closing bracket)."""
    level = indentation(lines.line(line))
    lo = max(0, line - TOP_WINDOW)
    hi = min(lines.line_count, line + TOP_WINDOW + 1)
    rows = texts(lines, lo, hi)
    at = line - lo

    def starts(index: int) -> bool:
        text = rows[index]
        return _code(text) and indentation(text) == level and not text.lstrip().startswith(_CLOSERS)

    first = at
    for index in range(at - 1, -1, -1):
        text = rows[index]
        if _code(text) and indentation(text) < level:
            break  # the block's header
        if starts(index):
            first = index
    last = at + 1
    for index in range(at + 1, len(rows)):
        text = rows[index]
        if _code(text) and indentation(text) < level:
            last = index
            break
        if starts(index):
            last = index  # the statements before it are whole
    else:
        last = len(rows) if hi == lines.line_count else last
    return (first + lo, last + lo) if last > at else None


def _scopes(node: Node, kinds: frozenset[str]) -> list[tuple[int, int, str]]:
    out = []
    parent = node.parent
    while parent is not None:
        if parent.type in kinds:
            out.append((parent.start_byte, parent.end_byte, parent.type))
        parent = parent.parent
    return out


def _field(parent: Node, node: Node, *fields: str) -> str | None:
    for name in fields:
        child = parent.child_by_field_name(name)
        if child is not None and child.id == node.id:
            return name
    return None


def _declares(node: Node) -> bool:
    """Whether the identifier is declared where it stands (not only used)."""
    parent = node.parent
    if parent is None or node.type == "implicit_parameter":
        return parent is not None
    kind = parent.type
    if any(word in kind for word in _DECLARING):
        return True
    if kind in _FOREACH:
        return _field(parent, node, "name", "left", "declarator") is not None
    if kind in ("for_expression", "let_declaration", "catch_clause"):
        return _field(parent, node, "pattern", "parameter") is not None
    if kind in ("arrow_function", "lambda_expression"):
        return _field(parent, node, "body") is None
    if kind == "expression_list":
        grand = parent.parent
        return (
            grand is not None
            and grand.type in ("short_var_declaration", "range_clause")
            and _field(grand, parent, "left") is not None
        )
    return False
