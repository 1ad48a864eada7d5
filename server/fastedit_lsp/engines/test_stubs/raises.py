"""Raise tests: a ``pytest.raises`` case (``test_<name>_raises_<exception>``) per ``raise``
statement a doctest example does not already show, when arguments that reach it can be derived,
else a test marked ``# TODO``. A call into the user's code is assumed to return without
raising, which is what can make a derived case wrong.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import re
from collections.abc import Collection

from .candidates import _call_text, _Exploration, _explore, _is_generator, _params, _takes_self
from .doctests import _Context, _Example, _own_nodes
from .domain import wrapped
from .render import _escape, _fit, _indent, _pattern, _snake, _Test, _todo
from .scope import _dotted


def _exception_name(node: ast.Raise) -> str | None:
    exc = node.exc
    if exc is None:
        return None
    return _dotted(exc.func if isinstance(exc, ast.Call) else exc)


def _shows_message(ctx: _Context, node: ast.Raise, dotted: str) -> bool:
    """``str(exc)`` is the one argument the exception is built with."""
    exc = node.exc
    if not isinstance(exc, ast.Call) or len(exc.args) != 1 or exc.keywords:
        return False
    if isinstance(exc.args[0], ast.Starred) or dotted.split(".")[-1] == "KeyError":
        return False  # str(KeyError("x")) is "'x'"
    return _plain_str_exception(ctx, dotted.split(".")[-1], 0)


def _message_prefix(ctx: _Context, node: ast.Raise, dotted: str) -> str | None:
    """The literal start of the raise's message, when ``str(exc)`` will show it."""
    exc = node.exc
    if not isinstance(exc, ast.Call) or not _shows_message(ctx, node, dotted):
        return None
    message = exc.args[0]
    text = ""
    if isinstance(message, ast.Constant) and isinstance(message.value, str):
        text = message.value
    elif isinstance(message, ast.JoinedStr):
        for part in message.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            text += part.value
    text = text.split("\n")[0]
    return text if text.strip() else None


def _plain_str_exception(ctx: _Context, name: str, depth: int) -> bool:
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return True
    node = ctx.info.classes.get(name)
    if node is None or depth > 10:
        return False
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in ("__init__", "__str__", "__new__"):
            return False
    return all(
        (b := _dotted(base)) is not None and _plain_str_exception(ctx, b.split(".")[-1], depth + 1)
        for base in node.bases
    ) and bool(node.bases)


def _raise_tests(
    ctx: _Context, prefix: str, examples: list[_Example], example_tests: list[_Test]
) -> list[_Test]:
    """A ``pytest.raises`` case per ``raise`` statement a doctest example does not already show."""
    fn = ctx.target.node
    raises = [n for n in _own_nodes(fn) if isinstance(n, ast.Raise) and n.exc is not None]
    if not raises:
        return []
    params, varargs, kwargs = _params(fn, skip_first=_takes_self(ctx.target))
    explored = _Exploration({}, [])
    async_gen = isinstance(fn, ast.AsyncFunctionDef) and _is_generator(fn)
    if not async_gen:
        explored = _explore(ctx, params, (varargs, kwargs))
    found = explored.raises
    shown = [_shown_exception(ctx, e.exc_msg) for e in examples if e.exc_msg is not None]
    tests: list[_Test] = []
    names: set[str] = set()
    for node in raises:
        dotted = _exception_name(node)
        exc_name = ctx.exception(dotted) if dotted else None
        message = _message_prefix(ctx, node, dotted or "")
        if exc_name is not None:
            ctx.exception_types.add(exc_name)
        if message and any(t == exc_name and m.startswith(message) for t, m in shown):
            continue  # a doctest example reaches this raise: its test is the example's
        label = _snake(dotted.split(".")[-1]) if dotted else "exception"
        name = _unique(f"test_{prefix}_raises_{label}", names)
        names.add(name)
        values = found.get(id(node))
        call = _call_text(ctx, params, values) if values is not None else None
        where = f"`raise {_raise_text(node)}` (line {node.lineno})"
        if exc_name is None or call is None or wrapped(fn):
            reason = (
                "a decorator of it may handle what it raises"
                if wrapped(fn) and exc_name is not None and call is not None
                else _unreached_reason(ctx, exc_name, async_gen)
            )
            tests.append(
                _todo(
                    name.replace("_raises_", "_todo_raises_", 1),
                    f"arguments that reach the raise at line {node.lineno}",
                    f"call {ctx.target.qualname} with arguments that reach {where}; {reason}",
                )
            )
            continue
        args = exc_name
        exact = explored.messages.get(id(node))
        if exact is not None and "\n" not in exact and _shows_message(ctx, node, dotted or ""):
            # The whole message, as the evaluator computed it for these arguments.
            args += f", match={_pattern('^' + _escape(exact) + '$')}"
        elif message:
            args += f", match={_pattern(_escape(message))}"
        if any(
            f"    {call}" in t.body
            and any(line.startswith(f"with pytest.raises({exc_name}") for line in t.body)
            for t in example_tests
        ):
            continue  # an example makes the same call and expects the same exception
        body = [*_with_raises(exc_name, args), *_indent(_fit(call, base=8)).splitlines()]
        tests.append(_Test(name, body, kind="raises"))
    return tests


def _with_raises(exc_name: str, args: str) -> list[str]:
    """``with pytest.raises(args):`` in a test's body, split as ruff format splits it."""
    line = f"with pytest.raises({args}):"
    if 4 + len(line) <= 88:
        return [line]
    if 8 + len(args) <= 88:
        return ["with pytest.raises(", f"    {args}", "):"]
    return ["with pytest.raises(", f"    {exc_name},", f"    {args[len(exc_name) + 2 :]},", "):"]


def _shown_exception(ctx: _Context, exc_msg: str) -> tuple[str | None, str]:
    type_part, _, message = exc_msg.strip().partition(":")
    type_part = type_part.strip()
    name = ctx.exception(type_part) if re.fullmatch(r"[\w.]+", type_part) else None
    return name, message.strip()


def _unreached_reason(ctx: _Context, exc_name: str | None, async_gen: bool) -> str:
    if exc_name is None:
        return "its exception class is not a name this test can import"
    if async_gen:
        return "it is an async generator"
    if ctx.target.classes and not ctx.instantiable:
        return f"{ctx.target.classes[-1].name}() needs arguments, so there is no instance to call"
    return "the condition depends on values this generator does not model"


def _raise_text(node: ast.Raise) -> str:
    text = ast.unparse(node.exc) if node.exc is not None else ""
    return text if len(text) <= 60 else text[:57] + "..."


def _unique(name: str, taken: Collection[str]) -> str:
    if name not in taken:
        return name
    for n in itertools.count(2):
        if f"{name}_{n}" not in taken:
            return f"{name}_{n}"
    raise AssertionError("unreachable")
