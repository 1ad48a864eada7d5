"""CPython's own parser as the last word on a Python draft's syntax.

Pure. tree-sitter recovers where CPython does not (``def f():\\n    def g():\\n    return 1``
parses for it; CPython says "expected an indented block"), so a Python draft that passes the
tree-sitter check is compiled too — to an AST only (``PyCF_ONLY_AST``: nothing is executed,
no bytecode is made) — as the top-level statements around the region (a function, a class:
what CPython's parser rejects there it rejects in the file; compiling them costs what they
cost, not the file's length, and an error of the user's elsewhere does not count). A draft
fails when CPython rejects the statements around it where it accepted them before. The
judge is the Python the server runs on: syntax newer than it (a 3.13 feature on a 3.11
server) is rejected where the code around did not use it before.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Tree


@dataclass(frozen=True)
class Rejection:
    """CPython's message and its 1-based line in the text."""

    line: int
    message: str


def rejects(text: str) -> Rejection | None:
    """CPython's syntax error in ``text``, or None when it compiles."""
    try:
        compile(text, "<draft>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:  # IndentationError and TabError are SyntaxErrors
        return Rejection(error.lineno or 1, error.msg)
    except (ValueError, MemoryError, RecursionError) as error:  # NUL bytes, nesting too deep
        return Rejection(1, str(error) or type(error).__name__)
    return None


def block(tree: Tree, data: bytes, start: int, end: int) -> tuple[str, int]:
    """The top-level statements of ``tree`` overlapping bytes ``[start, end)``, as text, and
    the 0-based line it starts on (whole lines)."""
    children = [c for c in tree.root_node.children if c.end_byte >= start and c.start_byte <= end]
    if not children:
        lo, hi = start, end
    else:
        lo, hi = min(children[0].start_byte, start), max(children[-1].end_byte, end)
    lo = data.rfind(b"\n", 0, lo) + 1
    newline = data.find(b"\n", hi)
    hi = len(data) if newline < 0 else newline
    return data[lo:hi].decode("utf-8", "surrogatepass"), data.count(b"\n", 0, lo)
