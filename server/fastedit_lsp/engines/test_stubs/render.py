"""Rendering helpers: Python source for literal values, strings and regular expressions, calls
and assertions split the way ruff format does when too long, snake-cased names, and ``_Test``,
one generated test function (``_todo``: a test marked ``# TODO`` that calls
``pytest.skip("TODO: ...")``, so nothing passes vacuously).
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from dataclasses import dataclass, field


def _quote(text: str) -> str:
    """A double-quoted Python string literal for ``text`` (ruff format's preference)."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1] + '"'
    return literal


_REGEX_SPECIAL = frozenset(".^$*+?{}[]\\|()")


def _escape(text: str) -> str:
    """``re.escape`` without escaping spaces, dashes and the like: a pattern a person can read."""
    return "".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in text)


def _pattern(text: str) -> str:
    """A string literal for a regular expression: raw when that is possible."""
    if '"' not in text and "\n" not in text and not text.endswith("\\") and text.isprintable():
        return f'r"{text}"' if "\\" in text else f'"{text}"'
    return _quote(text)


def _has_set(value: object) -> bool:
    if isinstance(value, set | frozenset):
        return True
    if isinstance(value, list | tuple):
        return any(_has_set(v) for v in value)
    if isinstance(value, dict):
        return any(_has_set(k) or _has_set(v) for k, v in value.items())
    return False


def _render(value: object, *, equality: bool = False) -> str | None:
    """Python source for a value built of literals, or None (sets: their order is not stable).

    Infinities and NaN are ``float("inf")``... With ``equality`` (the source is what ``==``
    compares a result with, as a recorded test does): sets too, their items sorted (``==`` does
    not care about their order), and no NaN (it equals nothing)."""
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        if equality and math.isnan(value):
            return None
        return repr(value) if math.isfinite(value) else f'float("{value}")'  # inf, -inf, nan
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, bytes | complex):
        return repr(value)
    if equality and isinstance(value, set | frozenset):
        members = [_render(v, equality=True) for v in value]
        if any(m is None for m in members):
            return None
        inner = ", ".join(sorted(m for m in members if m is not None))
        if isinstance(value, frozenset):
            return f"frozenset({{{inner}}})" if members else "frozenset()"
        return f"{{{inner}}}" if members else "set()"
    if isinstance(value, list | tuple):
        items = [_render(v, equality=equality) for v in value]
        if any(i is None for i in items):
            return None
        inner = ", ".join(i for i in items if i is not None)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(items) == 1 else f"({inner})"
    if isinstance(value, dict):
        pairs = [
            (_render(k, equality=equality), _render(v, equality=equality)) for k, v in value.items()
        ]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


def _fit(text: str, base: int = 0, width: int = 88) -> str:
    """A call expression split one argument per line, ruff-format style, where it is too long.

    ``base`` is the column the block the expression sits in starts at; continuation lines are
    indented relative to that block (the caller indents the result).
    """
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text
    return _fit_node(text, node, 0, 0, base, width)


def _fit_node(text: str, node: ast.expr, indent: int, col: int, base: int, width: int) -> str:
    flat = ast.get_source_segment(text, node) or ast.unparse(node)
    if base + col + len(flat) + 1 <= width or not isinstance(node, ast.Call):
        return flat
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        head = _fit_node(text, func.value, indent, col, base, width) + "." + func.attr
    else:
        head = ast.get_source_segment(text, func) or ast.unparse(func)
    inner = indent + 4
    args = [_fit_node(text, a, inner, inner, base, width) for a in node.args]
    for k in node.keywords:
        name = k.arg or ""
        value = _fit_node(text, k.value, inner, inner + len(name) + 1, base, width)
        args.append(f"{name}={value}")
    pad = " " * inner
    return head + "(\n" + "".join(f"{pad}{a},\n" for a in args) + " " * indent + ")"


def _assert(left: str, op: str, right: str) -> str:
    """``assert left op right``, split the way ruff format does when it is too long."""
    line = f"assert {left} {op} {right}"
    if len(line) + 4 <= 88 or "\n" in line:
        return line
    return f"assert (\n    {left}\n    {op} {right}\n)"


def _snake(name: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"_+", "_", name.lower()).strip("_") or "target"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.splitlines())


# Binds tighter than `==`/`is` and needs no parentheses on the left of one.
_ATOMS = (
    ast.Call,
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Constant,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.JoinedStr,
    ast.BinOp,
    ast.Await,
)


def _operand(node: ast.expr, text: str) -> str:
    if isinstance(node, _ATOMS) or (
        isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not)
    ):
        return text
    return f"({text})"


@dataclass
class _Test:
    name: str
    body: list[str]  # lines, unindented
    params: list[str] = field(default_factory=list)
    decorators: list[str] = field(default_factory=list)
    kind: str = "todo"  # example | raises | property | todo

    def render(self) -> str:
        head = "".join(f"@{d}\n" for d in self.decorators)
        body = _indent("\n".join(self.body))
        return f"{head}def {self.name}({', '.join(self.params)}) -> None:\n{body}\n"


def _todo(name: str, reason: str, hint: str | None = None) -> _Test:
    comment = textwrap.wrap(
        f"TODO: {hint or reason}",
        width=84,
        initial_indent="# ",
        subsequent_indent="#   ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return _Test(name, [*comment, f"pytest.skip({_quote('TODO: ' + reason)})"], kind="todo")
