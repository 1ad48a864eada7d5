"""Property stubs: from the type hints, a hypothesis ``@given`` property stub
(``test_<name>_property``) when every required parameter has a strategy; it asserts the return
type (``None`` allowed when a path returns it). Only inputs the function accepts count: the
exceptions it raises on purpose or declares are its answer, and when its body is not total on
its hinted types (``domain``: it converts, indexes, divides or calls other code), any exception
is (the inputs it rejects are outside its domain, which the hints do not show). Hints without a
strategy give a test marked ``# TODO``.

A project without ``hypothesis`` (``_property_tests(..., hypothesis=False)``: the caller read the
project's environment) gets the same test over a few plain values of the hinted types instead
(``test_<name>_hinted_inputs``, ``pytest.mark.parametrize``): an import it cannot run is not a
test.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

from .bindings import _literal
from .candidates import (
    _DICT_NAMES,
    _LIST_NAMES,
    _SET_NAMES,
    _annotation_base,
    _is_generator,
    _params,
    _takes_self,
    _wrap_call,
)
from .doctests import _Context
from .domain import (
    declared_raises,
    is_total,
    may_return_none,
    mutates_module_state,
    wrapped,
)
from .render import _fit, _quote, _render, _Test, _todo
from .scope import _dotted
from .values import _TYPE_NAMES

_HASHABLE = {"int", "str", "bool", "bytes", "float", "None"}
_BOUNDED_INTEGERS = "st.integers(min_value=-1000, max_value=1000)"


def _scales(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The body multiplies, raises to a power or shifts: sizes grow with its arguments."""
    return any(
        isinstance(n, ast.BinOp | ast.AugAssign)
        and isinstance(n.op, ast.Mult | ast.Pow | ast.LShift)
        for n in ast.walk(fn)
    )


def _strategy(node: ast.expr | None, depth: int = 0, hashable: bool = False) -> str | None:
    base, args = _annotation_base(node)
    if node is None or depth > 4:
        return None
    simple = {
        "int": "st.integers()",
        "float": "st.floats(allow_nan=False, allow_infinity=False)",
        "str": "st.text()",
        "bytes": "st.binary()",
        "bool": "st.booleans()",
        "None": "st.none()",
        "complex": "st.complex_numbers(allow_nan=False, allow_infinity=False)",
        "Decimal": "st.decimals(allow_nan=False, allow_infinity=False)",
        "Fraction": "st.fractions()",
        "date": "st.dates()",
        "datetime": "st.datetimes()",
        "time": "st.times()",
        "timedelta": "st.timedeltas()",
        "UUID": "st.uuids()",
    }
    if base in ("object", "Any") and not args and not hashable:
        return "st.from_type(object)"
    if base in simple and not args:
        return simple[base] if not hashable or base in _HASHABLE else None
    if base in ("Optional", "Union"):
        # Members without a strategy (a callable) are left out: the property then draws from
        # part of the declared domain, still only values the function accepts.
        parts = [_strategy(a, depth + 1, hashable) for a in args]
        if not any(p not in (None, "st.none()") for p in parts):
            return None
        if base == "Optional":
            parts.append("st.none()")
        unique = list(dict.fromkeys(p for p in parts if p))
        return " | ".join(sorted(unique, key=lambda p: p == "st.none()"))
    if base == "Literal":
        values = [_literal(a) for a in args]
        rendered = [_render(v) for v in values]
        if any(r is None for r in rendered):
            return None
        return f"st.sampled_from([{', '.join(r for r in rendered if r)}])"
    if base == "Annotated" and args:
        return _strategy(args[0], depth + 1, hashable)
    if hashable:
        if base in ("tuple", "Tuple") and args:
            return _tuple_strategy(args, depth, hashable)
        return None
    if base in _LIST_NAMES and len(args) == 1:
        inner = _strategy(args[0], depth + 1)
        return f"st.lists({inner})" if inner else None
    if base in _SET_NAMES and len(args) == 1:
        inner = _strategy(args[0], depth + 1, hashable=True)
        kind = "frozensets" if base in ("frozenset", "FrozenSet") else "sets"
        return f"st.{kind}({inner})" if inner else None
    if base in _DICT_NAMES and len(args) == 2:
        key = _strategy(args[0], depth + 1, hashable=True)
        value = _strategy(args[1], depth + 1)
        return f"st.dictionaries({key}, {value})" if key and value else None
    if base in ("tuple", "Tuple") and args:
        return _tuple_strategy(args, depth, hashable)
    return None


def _tuple_strategy(args: list[ast.expr], depth: int, hashable: bool) -> str | None:
    if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
        inner = _strategy(args[0], depth + 1, hashable)
        return f"st.lists({inner}).map(tuple)" if inner else None
    parts = [_strategy(a, depth + 1, hashable) for a in args]
    if any(p is None for p in parts):
        return None
    return f"st.tuples({', '.join(p for p in parts if p)})"


def _return_check(ctx: _Context, node: ast.expr | None, result: str) -> str | None:
    base, args = _annotation_base(node)
    if node is None:
        return None
    if base == "None":
        return f"assert {result} is None"
    optional = base == "Optional" or (
        base == "Union" and any(_annotation_base(a)[0] == "None" for a in args)
    )
    members = args if base in ("Optional", "Union") else [node]
    types: list[str] = []
    for member in members:
        member_base, _ = _annotation_base(member)
        if member_base == "None":
            continue
        runtime = _runtime_type(ctx, member, member_base)
        if runtime is None:
            return None
        types += [t for t in runtime if t not in types]
    if not types:
        return None
    spec = types[0] if len(types) == 1 else f"({', '.join(types)})"
    check = f"isinstance({result}, {spec})"
    return f"assert {result} is None or {check}" if optional else f"assert {check}"


def _runtime_type(ctx: _Context, node: ast.expr, base: str | None) -> list[str] | None:
    runtime = {
        "int": ["int"],
        "float": ["int", "float"],  # PEP 484: an int is acceptable where a float is expected
        "str": ["str"],
        "bytes": ["bytes"],
        "bool": ["bool"],
        "complex": ["int", "float", "complex"],
    }
    if base in runtime:
        return runtime[base]
    containers = {
        "list": "list",
        "List": "list",
        "dict": "dict",
        "Dict": "dict",
        "set": "set",
        "Set": "set",
        "frozenset": "frozenset",
        "FrozenSet": "frozenset",
        "tuple": "tuple",
        "Tuple": "tuple",
    }
    if base in containers:
        return [containers[base]]
    name = (
        _dotted(node)
        if not isinstance(node, ast.Constant)
        else (node.value if isinstance(node.value, str) else None)
    )
    if name and "." not in name and name in ctx.info.classes and ctx.info.binding(name):
        ctx.need({name})
        return [name]
    return None


def _builtin_annotation(node: ast.expr | None) -> TypeGuard[ast.expr]:
    """An annotation made of builtin names only: the test can repeat it without imports."""
    if node is None:
        return False
    for part in ast.walk(node):
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return False  # a forward reference
        if isinstance(part, ast.Name) and part.id not in _TYPE_NAMES and part.id != "object":
            return False
    return True


def _property_tests(ctx: _Context, prefix: str, hypothesis: bool = True) -> list[_Test]:
    fn = ctx.target.node
    params, _, _ = _params(fn, skip_first=_takes_self(ctx.target))
    required = [p for p in params if not p.has_default]
    annotated = any(p.annotation is not None for p in params) or fn.returns is not None
    if not required or not annotated:
        return []
    if mutates_module_state(fn, set(ctx.info.names)):
        return []  # random inputs would change what the module's other functions see
    name = f"test_{prefix}_property"
    strategies = {p.name: _strategy(p.annotation) for p in required}
    rows: list[tuple[str, ...]] = []
    if not hypothesis:
        name = f"test_{prefix}_hinted_inputs"
        plain = {p.name: _plain_values(p.annotation) for p in required}
        # Plain values stand in for the strategies (the names without any are named below).
        strategies = {n: ("plain" if values else None) for n, values in plain.items()}
        rows = _rows([plain[p.name] or [] for p in required])
    if not is_total(fn) or _scales(fn):
        # An integer may be a size, a count or an exponent: unbounded, it can ask for
        # gigabytes (``"-" * width``) before the function answers.
        strategies = {
            n: s.replace("st.integers()", _BOUNDED_INTEGERS) if s else s
            for n, s in strategies.items()
        }
    missing = [n for n, s in strategies.items() if s is None]
    if ctx.target.classes and not ctx.instantiable and _takes_self(ctx.target):
        cls = ctx.target.classes[-1].name
        return [
            _todo(
                name.replace("_property", "_todo_property"),
                f"a property test for {ctx.target.qualname}",
                f"{cls}() needs arguments: build one to test {ctx.target.qualname} on",
            )
        ]
    if missing or (isinstance(fn, ast.AsyncFunctionDef) and _is_generator(fn)):
        what = ", ".join(missing) if missing else "an async generator"
        if not hypothesis:
            return [
                _todo(
                    f"test_{prefix}_todo_hinted_inputs",
                    f"input values for {what}",
                    f"no plain values could be inferred for {what} of {ctx.target.qualname}",
                )
            ]
        return [
            _todo(
                name.replace("_property", "_todo_property"),
                f"a hypothesis strategy for {what}",
                f"no strategy could be inferred for {what} of {ctx.target.qualname}",
            )
        ]
    if hypothesis:
        ctx.imports.from_("hypothesis", "given")
        ctx.imports.from_("hypothesis", "strategies", "st")
        given = ", ".join(f"{n}={s}" for n, s in strategies.items())
        decorator = _fit(f"given({given})", base=1)
    else:
        names = ", ".join(p.name for p in required)
        cases = [row[0] if len(row) == 1 else f"({', '.join(row)})" for row in rows]
        decorator = f"pytest.mark.parametrize({_quote(names)}, [{', '.join(cases)}])"
        if len(decorator) + 1 > 88:  # one case a line, as ruff format splits it
            listed = "".join(f"        {case},\n" for case in cases)
            decorator = f"pytest.mark.parametrize(\n    {_quote(names)},\n    [\n{listed}    ],\n)"
    test_params = [
        f"{p.name}: {ast.unparse(p.annotation)}" if _builtin_annotation(p.annotation) else p.name
        for p in required
    ]
    args = ", ".join(f"{p.name}={p.name}" if p.kind == "keyword" else p.name for p in required)
    call = _wrap_call(ctx, f"{ctx.call_prefix}({args})")
    result = "result" if "result" not in strategies else "returned"
    check = _return_check(ctx, fn.returns, result) if not wrapped(fn) else None
    if check and may_return_none(fn) and " is None" not in check:
        check = check.replace("assert ", f"assert {result} is None or ", 1)
    expected = set(ctx.exception_types)
    for declared in declared_raises(fn):
        shown = ctx.exception(declared)
        if shown is not None:
            expected.add(shown)
    body: list[str] = []
    line = f"{result} = {call}" if check else call
    if not is_total(fn):
        body += [
            "try:",
            f"    {line}",
            "except Exception:",
            "    return  # outside the domain the hints show: the exception is its answer",
        ]
    elif expected:
        ordered = sorted(expected)
        caught = ordered[0] if len(ordered) == 1 else f"({', '.join(ordered)})"
        body += [
            "try:",
            f"    {line}",
            f"except {caught}:",
            f"    return  # raised on purpose by {ctx.target.qualname}",
        ]
    else:
        body.append(line)
    if check:
        body.append(check)
    return [_Test(name, body, test_params, [decorator], kind="property")]


#: Plain values of the simple hinted types: an empty or zero one, a small one, an unusual one.
_PLAIN = {
    "int": ["0", "1", "-7", "42"],
    "float": ["0.0", "1.5", "-2.25"],
    "str": ['""', '"a"', '"Hello, World!"', '"  spaced out  "'],
    "bytes": ['b""', 'b"a"', 'b"\\x00\\xff"'],
    "bool": ["False", "True"],
    "None": ["None"],
    "complex": ["0j", "(1+2j)"],
}
#: At most this many cases per test.
_MAX_ROWS = 4


def _plain_values(node: ast.expr | None, depth: int = 0, hashable: bool = False) -> list[str]:
    """Source texts of a few values of the hinted type (what ``_strategy`` would draw from,
    written out); empty when none can be written without an import."""
    base, args = _annotation_base(node)
    if node is None or depth > 4:
        return []
    if base in ("object", "Any") and not args:
        return ["None", "0", '"a"']
    if base in _PLAIN and not args:
        return _PLAIN[base] if not hashable or base in _HASHABLE else []
    if base in ("Optional", "Union"):
        members = [_plain_values(a, depth + 1, hashable) for a in args]
        merged = [v for group in zip(*[m for m in members if m], strict=False) for v in group]
        merged += [v for m in members for v in m if v not in merged]
        if base == "Optional":
            merged.append("None")
        unique = list(dict.fromkeys(merged))
        return unique if any(v != "None" for v in unique) else []
    if base == "Literal":
        rendered = [_render(_literal(a)) for a in args]
        return [r for r in rendered if r is not None] if all(rendered) else []
    if base == "Annotated" and args:
        return _plain_values(args[0], depth + 1, hashable)
    if base in ("tuple", "Tuple") and args:
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
            inner = _plain_values(args[0], depth + 1, hashable)
            return (
                ["()", f"({inner[0]},)", f"({inner[1 % len(inner)]}, {inner[0]})"] if inner else []
            )
        parts = [_plain_values(a, depth + 1, hashable) for a in args]
        if not all(parts):
            return []
        return [f"({', '.join(row)}{',' if len(row) == 1 else ''})" for row in _rows(parts)]
    if hashable:
        return []
    if base in _LIST_NAMES and len(args) == 1:
        inner = _plain_values(args[0], depth + 1)
        return ["[]", f"[{inner[0]}]", f"[{', '.join(inner[1:3] or inner)}]"] if inner else []
    if base in _SET_NAMES and len(args) == 1:
        inner = _plain_values(args[0], depth + 1, hashable=True)
        if not inner:
            return []
        if base in ("frozenset", "FrozenSet"):
            return ["frozenset()", f"frozenset({{{inner[0]}}})"]
        return ["set()", f"{{{inner[0]}}}", f"{{{', '.join(inner[:2])}}}"]
    if base in _DICT_NAMES and len(args) == 2:
        keys = _plain_values(args[0], depth + 1, hashable=True)
        values = _plain_values(args[1], depth + 1)
        if not keys or not values:
            return []
        return ["{}", f"{{{keys[0]}: {values[0]}}}", f"{{{keys[-1]}: {values[-1]}}}"]
    return []


def _rows(columns: list[list[str]]) -> list[tuple[str, ...]]:
    """Cases for parameters with these values each: the i-th value of every one (cycled), as
    many as the longest list has (at most ``_MAX_ROWS``), without repeats."""
    if not columns or not all(columns):
        return []
    count = min(max(len(c) for c in columns), _MAX_ROWS)
    rows = [tuple(c[i % len(c)] for c in columns) for i in range(count)]
    return list(dict.fromkeys(rows))
