"""What code actions need to know about a Python document, parsed once per version.

Pure: no pygls. ``textDocument/codeAction`` must answer instantly while the user types, so the
parse behind it (``ast`` for the functions, ``compile`` for the first syntax error) is done at most
once per document version and kept.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class Function:
    """An importable function or method: where it is and what to call it."""

    qualname: str
    first_line: int  # 0-based, decorators included
    last_line: int  # 0-based, inclusive


@dataclass(frozen=True)
class Outline:
    version: int
    functions: tuple[Function, ...]
    #: The first syntax error: (0-based line, message), or None when the file parses.
    error: tuple[int, str] | None

    def function_at(self, line: int) -> Function | None:
        """The innermost importable function or method around ``line``."""
        found = [f for f in self.functions if f.first_line <= line <= f.last_line]
        return min(found, key=lambda f: f.last_line - f.first_line) if found else None


#: Larger documents are not parsed for code actions: parsing a 5 MB line took 7.6 s and 1.7 GB
#: (one AST node per element of a huge literal). Their code actions are those needing no parse.
MAX_SOURCE_CHARS = 1 << 20


def outline(source: str, version: int) -> Outline:
    """Parse ``source`` (Python) once: its functions, or its first syntax error."""
    if len(source) > MAX_SOURCE_CHARS:
        return Outline(version, (), None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            line = max(0, (exc.lineno or 1) - 1)
            return Outline(version, (), (line, exc.msg))
        except ValueError as exc:  # NUL bytes
            return Outline(version, (), (0, str(exc)))
    functions: list[Function] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
                last = (node.end_lineno or node.lineno) - 1
                functions.append(Function(prefix + node.name, first, last))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return Outline(version, tuple(functions), None)
