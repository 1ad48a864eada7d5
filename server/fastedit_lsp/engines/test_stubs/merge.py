"""Merge: :func:`merge` appends generated tests to an existing test module, never changing its
text (see its docstring for the one place it inserts instead of appending, and
``append_only``); a generated test ``existing`` already has is skipped.
"""

from __future__ import annotations

import ast
import re

from .doctests import _bound_names, _used_names
from .raises import _unique


def merge(existing: str, generated: str, *, append_only: bool = False) -> str:
    """``existing`` with the generated tests appended.

    Existing text is never changed: the result is ``existing`` followed by the new tests, except
    for the import lines the new tests need and ``existing`` lacks. Those are inserted as whole
    lines after the last import of ``existing``'s leading import block (at the end they would
    be E402; an action may add a missing import line, its one edit outside its range), or after its
    docstring when it has no imports; they are not merged into existing ``from`` lines, so
    ``ruff check --fix`` may want to combine them. With ``append_only`` (an editor edit that
    must be a pure insertion at the end), or when ``existing`` does not parse, they go at the
    end instead, just before the new tests: the result then always starts with ``existing``.

    A generated test whose name is taken is appended as ``<name>_2`` (``_3``...), unless
    ``existing`` already has that very test under that name or a suffixed one: then it is
    skipped, so generating twice for the same function adds nothing the second time.
    """
    if not existing.strip():
        return existing + generated
    new = ast.parse(generated)
    try:
        old: ast.Module | None = ast.parse(existing)
    except SyntaxError:
        old = None
    if old is not None:
        taken = {
            name
            for stmt in old.body
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for name in _bound_names(stmt)
        }
        existing_defs = {
            stmt.name: _def_key(ast.get_source_segment(existing, stmt) or "", stmt.name)
            for stmt in old.body
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
    else:
        taken = set()
        existing_defs = {
            m.group(2): "" for m in re.finditer(r"^(async\s+)?def\s+(\w+)", existing, re.M)
        }
    taken |= set(existing_defs)

    gen_lines = generated.splitlines()
    blocks: list[str] = []
    used: set[str] = set()
    for stmt in new.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        text = "\n".join(gen_lines[start - 1 : stmt.end_lineno])
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            key = _def_key(ast.get_source_segment(generated, stmt) or "", stmt.name)
            same_name = re.compile(rf"{re.escape(stmt.name)}(_\d+)?")
            if any(k == key and same_name.fullmatch(n) for n, k in existing_defs.items()):
                continue
            name = _unique(stmt.name, taken)
            if name != stmt.name:
                pattern = rf"^((?:async\s+)?(?:def|class)\s+){re.escape(stmt.name)}\b"
                text = re.sub(pattern, rf"\g<1>{name}", text, count=1, flags=re.M)
            taken.add(name)
        used |= _used_names(stmt)
        blocks.append(text)
    if not blocks:
        return existing

    present = _bound_names(old) if old is not None else set()
    missing: list[str] = []
    for stmt in new.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound in used and bound not in present:
                    missing.append(_import_line(stmt, alias))
                    present.add(bound)

    head = existing
    if missing and old is not None and not append_only:
        line, after_import = _import_insertion_line(old)
        head = _insert_lines(existing, line, missing, after_import)
    elif missing:
        blocks.insert(0, "\n".join(missing))
    stripped = head.rstrip("\n")
    separator = "\n" * max(0, 3 - (len(head) - len(stripped)))
    return head + separator + "\n\n\n".join(blocks) + "\n"


def _def_key(text: str, name: str) -> str:
    """A definition's text with its name left out: the same test under another name."""
    return re.sub(rf"^((?:async\s+)?(?:def|class)\s+){re.escape(name)}\b", r"\g<1>_", text.strip())


def _import_line(stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> str:
    name = alias.name + (f" as {alias.asname}" if alias.asname else "")
    if isinstance(stmt, ast.Import):
        return f"import {name}"
    return f"from {'.' * stmt.level}{stmt.module or ''} import {name}"


def _import_insertion_line(tree: ast.Module) -> tuple[int, bool]:
    """The 0-based line before which missing imports go (after the leading import block), and
    whether that follows an import."""
    after = 0
    after_import = False
    for index, stmt in enumerate(tree.body):
        is_docstring = (
            index == 0
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        )
        if is_docstring or isinstance(stmt, ast.Import | ast.ImportFrom):
            after = stmt.end_lineno or stmt.lineno
            after_import = not is_docstring
            continue
        break
    return after, after_import


def _insert_lines(text: str, line: int, new_lines: list[str], after_import: bool) -> str:
    """``text`` with ``new_lines`` inserted before its 0-based ``line``, blank lines around them
    where the neighbours are not imports."""
    lines = text.splitlines(keepends=True)
    before, after = lines[:line], lines[line:]
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"  # the file ended on its last import: the inserted lines follow it
    block = "".join(f"{n}\n" for n in new_lines)
    if before and not after_import:
        block = "\n" + block  # after the docstring
    if after and after[0].strip():
        block += "\n\n"  # before code
    return "".join(before) + block + "".join(after)
