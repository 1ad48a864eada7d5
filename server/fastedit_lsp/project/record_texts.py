"""Texts for the recorder's templates: what a function's module-level values match or hold.

Part of the recorder's worker (``record_worker.py``, which imports it beside itself): standard
library only, never imported by the server. A function's text parameter is tried with texts no
static reading of its body finds, since they are built when its module is imported: texts a
compiled regular expression it uses matches (one per branch of its alternatives), a
translation table's keys, the strings a collection it keeps holds; and so for the functions of
its package it calls, two calls deep.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import re
import types
from collections.abc import Callable
from typing import Any

#: Where a template takes a text (the literal the plan wrote for it).
MARKER = '"__fastedit_text__"'
#: Texts tried per template at most, and templates per target.
SAMPLES = 40
TEMPLATES = 3
#: Texts a match template's pattern is searched in (one per branch of its alternatives).
MATCHES = 12
_SHORT = 40


def quote(text: str) -> str:
    """A string literal, double-quoted where that needs no escape (as ruff format writes it)."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1] + '"'
    return literal


def _names(code: types.CodeType) -> list[str]:
    """The global and attribute names a function's code (and the code nested in it) uses."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _names(const)
    return names


def _used_values(
    function: types.FunctionType, depth: int = 0, seen: set[int] | None = None
) -> list[object]:
    """The module-level values the function uses: its globals, and the attributes it reads
    of the modules among them (``chardata.LIGATURES``), in a stable order; then those of the
    functions of its own package it calls (two calls deep)."""
    seen = seen if seen is not None else {id(function)}
    names = sorted(set(_names(function.__code__)))
    found: list[object] = []
    called: list[types.FunctionType] = []
    space = function.__globals__
    top = str(space.get("__name__", "")).split(".")[0]
    modules = [v for n in names if isinstance(v := space.get(n), types.ModuleType)]
    for name in names:
        values = [space[name]] if name in space else []
        values += [getattr(m, name) for m in modules if hasattr(m, name)]
        for value in values:
            if isinstance(value, types.FunctionType):
                if value.__module__.split(".")[0] == top and id(value) not in seen:
                    seen.add(id(value))
                    called.append(value)
            elif not isinstance(value, types.ModuleType | type) and not callable(value):
                found.append(value)
    if depth < 2:
        for callee in called:
            found += _used_values(callee, depth + 1, seen)
    return found


def texts(function: types.FunctionType) -> list[str]:
    """Texts the function's module-level values match or hold: for a compiled regular
    expression, texts it matches (each branch); for a table, its keys (a translation table's
    code points as characters); for a collection of strings, its members."""
    out: list[str] = []
    for value in _used_values(function):
        out += _texts_of(value)
    # Then the texts written in its own body (``if "-" in word``), which the template's
    # others put inside a longer text.
    own = _constants(function.__code__)
    out += [t for t in own if 0 < len(t) <= _SHORT and t != function.__doc__]
    return list(dict.fromkeys(out))[: SAMPLES // 2]


def _constants(code: types.CodeType) -> list[str]:
    """The strings a function's code (and the code nested in it) holds."""
    found: list[str] = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _constants(const)
        elif isinstance(const, str):
            found.append(const)
    return found


def _texts_of(value: object, depth: int = 0) -> list[str]:
    if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
        return pattern_texts(value, 4 if depth == 0 else 1)
    if isinstance(value, str):
        if depth and set(value) & set("\\()[]?*+^$|{"):
            # A rule's pattern, as source: texts it matches.
            with contextlib.suppress(re.error, RecursionError, OverflowError, ValueError):
                return pattern_texts(re.compile(value), 1)
        return [value] if 0 < len(value) <= _SHORT else []
    if not isinstance(value, dict | set | frozenset | list | tuple) or depth >= 2:
        return []
    out: list[str] = []
    members = list(itertools.islice(value, 400))
    if isinstance(value, list | tuple):
        # Rules (a pattern and its replacement): a few of them, spread over the list.
        nested = [m for m in members if isinstance(m, re.Pattern | tuple | list)]
        for member in nested[:: max(1, len(nested) // 6)][:6]:
            out += _texts_of(member, depth + 1)
    texts = [m for m in members if isinstance(m, str) and 0 < len(m) <= _SHORT]
    if depth and isinstance(value, list | tuple):
        texts = [t for m in texts for t in _texts_of(m, depth + 1)]
    if isinstance(value, dict) and not texts:
        # A translation table: its code points as characters.
        texts = [chr(m) for m in members if isinstance(m, int) and 0 < m < 0x110000]
    if not isinstance(value, list | tuple):
        texts.sort()  # a set's order changes from run to run
    if len(texts) > 4:
        texts = [texts[i * (len(texts) - 1) // 3] for i in range(4)]  # first, ..., last
    return out + texts


def pattern_texts(pattern: re.Pattern[str], most: int = 4) -> list[str]:
    """Texts the pattern matches (searched for), one per branch of its alternatives where
    they differ, at most ``most``; none where the sketch below does not match."""
    import re._parser as parser  # type: ignore[import-not-found]  # the server's Python (3.11+)

    try:
        parsed = parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return []
    out: list[str] = []
    for choice in range(most * 2):
        try:
            text = _sketch(list(parsed), choice, {})
        except (RecursionError, ValueError, TypeError, IndexError, OverflowError):
            continue
        if text not in out and len(text) <= _SHORT and pattern.search(text):
            out.append(text)
        if len(out) >= most:
            break
    return out


#: Characters a class of characters is searched for (a negated class gets the first it lacks).
_CLASS_TRY = ("a", "1", " ", "A", "-", ".", "_", "\n", "é", "\t", "x", "0")
_CATEGORY = {
    "CATEGORY_DIGIT": "1",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": " ",
    "CATEGORY_LINEBREAK": "\n",
    "CATEGORY_NOT_LINEBREAK": "a",
}


def _sketch(items: list[Any], choice: int, groups: dict[int, str]) -> str:
    """A text the parsed pattern matches, ``choice`` picking among alternatives."""
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("a" if arg != ord("a") else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_class_char(arg, choice))
        elif name == "BRANCH":
            branches = arg[1]
            out.append(_sketch(list(branches[choice % len(branches)]), choice, groups))
        elif name == "SUBPATTERN":
            group, inner = arg[0], arg[-1]
            text = _sketch(list(inner), choice, groups)
            if group is not None:
                groups[group] = text
            out.append(text)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, inner = arg
            count = min(max(low, 1), 3, high)
            out.append("".join(_sketch(list(inner), choice, groups) for _ in range(count)))
        elif name == "GROUPREF":
            out.append(groups.get(arg, ""))
        elif name == "ATOMIC_GROUP":
            out.append(_sketch(list(arg), choice, groups))
        # Anchors, lookarounds, conditionals: nothing (the match is checked afterwards).
    return "".join(out)


def _class_char(items: list[Any], choice: int) -> str:
    chars: list[str] = []
    negated = False
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negated = True
        elif name == "LITERAL":
            chars.append(chr(arg))
        elif name == "RANGE":
            chars += [chr(arg[0]), chr(arg[1])]
        elif name == "CATEGORY":
            chars.append(_CATEGORY.get(str(arg), "a"))
    if negated:
        return next((c for c in _CLASS_TRY if c not in chars), "\x00")
    return chars[choice % len(chars)] if chars else "a"


#: How a match template passes the match (the plan's ``MATCH``).
MATCH_CALL = "re.search("


def slot_of(
    template: str, wanted: Callable[[ast.Call], bool]
) -> tuple[ast.Expression, ast.Call] | None:
    """A template's parsed form and its first call ``wanted`` picks (where the recorder puts
    its values), or None."""
    try:
        tree = ast.parse(template, mode="eval")
    except SyntaxError:
        return None
    found = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and wanted(n)), None)
    return (tree, found) if found is not None else None


def match_calls(template: str, module: types.ModuleType) -> list[str]:
    """A match template (``f(re.search(PATTERN, MARKER), 10)``) made with texts the pattern
    (a module-level name or a literal) matches, its source written in place of the name, and
    its flags."""
    slot = slot_of(
        template,
        lambda n: (
            ast.unparse(n.func) == "re.search"
            and len(n.args) == 2
            and isinstance(n.args[1], ast.Constant)
        ),
    )
    if slot is None:
        return []
    tree, search = slot
    source = search.args[0]
    pattern: object = None
    with contextlib.suppress(Exception):
        if isinstance(source, ast.Name):
            pattern = getattr(module, source.id)
        elif isinstance(source, ast.Constant) and isinstance(source.value, str):
            pattern = re.compile(source.value)
    if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
        return []
    flags = pattern.flags & ~re.UNICODE
    search.args[0] = ast.Constant(pattern.pattern)
    if flags:
        names = [m for m in re.RegexFlag if m.name and m.value & flags and m.value.bit_count() == 1]
        shown = " | ".join(f"re.{m.name}" for m in names)
        exact = sum(m.value for m in names) == flags
        search.args.append(ast.parse(shown, mode="eval").body if exact else ast.Constant(flags))
    calls: list[str] = []
    for text in pattern_texts(pattern, MATCHES):
        search.args[1] = ast.Constant(text)
        calls.append(ast.unparse(tree))
    return calls
