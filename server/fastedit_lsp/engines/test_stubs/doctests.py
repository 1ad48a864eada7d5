"""Doctest examples: each doctest example with an expected output becomes an assertion with
that value (``test_<name>_example_<n>``); an expected traceback becomes ``pytest.raises``; an
example that is itself an ``assert`` on the function runs as written. A ``+SKIP`` example is
kept only when what it shows is a literal dict or set (compared with ``==``). Also
``_Context``, what the generator knows while building one module, and the AST helpers the later
modules share (``_own_nodes``, ``_is_call_to``, ``_bound_names``, ``_used_names``).
"""

from __future__ import annotations

import ast
import builtins
import doctest
import io
import re
import sys
import textwrap
import tokenize
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from .bindings import _literal, _ModuleInfo
from .domain import may_return_none
from .imports import _Imports
from .render import _assert, _escape, _has_set, _operand, _pattern, _quote, _render, _Test
from .targets import _Def, _FunctionNode
from .values import UNKNOWN

_BUILTIN_NAMES = frozenset(dir(builtins))


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _used_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@dataclass
class _Example:
    source: str
    tree: ast.Module
    want: str  # expected output with <BLANKLINE> expanded; "" when none
    exc_msg: str | None
    options: dict[int, bool]
    lineno: int  # 1-based line in the file
    #: Marked ``+SKIP`` but kept: its value is compared with ``==`` (see ``_unordered_value``).
    skipped: bool = False


def _statement_text(source: str, stmt: ast.stmt) -> str:
    multiline_string = any(
        isinstance(n, ast.Constant)
        and isinstance(n.value, str | bytes)
        and n.lineno != n.end_lineno
        for n in ast.walk(stmt)
    )
    segment = None if multiline_string else ast.get_source_segment(source, stmt)
    decorators = getattr(stmt, "decorator_list", None)
    if segment is not None and decorators:
        # The segment of a decorated def starts at ``def``: the decorators are part of it.
        first = min(d.lineno for d in decorators)
        lines = source.splitlines()[first - 1 : stmt.end_lineno]
        segment = textwrap.dedent("\n".join(lines)) if stmt.col_offset == 0 else None
    return segment if segment is not None else ast.unparse(stmt)


def _example_lines(example: _Example) -> list[str]:
    return [_statement_text(example.source, s) for s in example.tree.body]


def _expr_text(example: _Example, node: ast.expr) -> str:
    text = ast.get_source_segment(example.source, node)
    if text is None or any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and n.lineno != n.end_lineno
        for n in ast.walk(node)
    ):
        text = ast.unparse(node)
    return text


def _is_call_to(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


_PRINTERS = frozenset({"print", "pprint", "pp"})


def _prints(ctx: _Context, node: ast.expr) -> bool:
    """A call whose doctest output is what it printed: ``print``, ``pprint``, or a function of
    the module that prints and returns nothing."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    if name in _PRINTERS:
        return True
    if name == ctx.target.node.name:
        return _prints_only(ctx.target.node)
    if isinstance(func, ast.Name):
        defined = next(
            (
                s
                for s in ctx.info.tree.body
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == name
            ),
            None,
        )
        return defined is not None and _prints_only(defined)
    return False


def _prints_only(fn: _FunctionNode) -> bool:
    """The function prints and returns nothing: a doctest shows what it printed."""
    body = list(_own_nodes(fn))
    returns_value = any(isinstance(n, ast.Return) and n.value is not None for n in body)
    yields = any(isinstance(n, ast.Yield | ast.YieldFrom) for n in body)
    prints = any(
        isinstance(n, ast.Call) and any(_is_call_to(n, p) for p in _PRINTERS) for n in body
    )
    return prints and not returns_value and not yields


def _own_nodes(fn: _FunctionNode) -> Iterator[ast.AST]:
    """The nodes of the function's own body (not of functions or classes nested in it)."""
    # Pre-order (source order): the stack holds what is left, last first.
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        children = list(ast.iter_child_nodes(node))
        children.reverse()
        stack += children


def _examples(fn: _FunctionNode) -> tuple[list[_Example], list[tuple[int, str]]]:
    """The docstring's examples that parse, and (line, reason) for those that do not."""
    # As doctest sees it (``__doc__``, not cleaned): example line numbers map to the file.
    docstring = ast.get_docstring(fn, clean=False)
    if not docstring or ">>>" not in docstring:
        return [], []
    first = fn.body[0].lineno
    try:
        raw = doctest.DocTestParser().get_examples(docstring)
    except ValueError as exc:
        return [], [(first, f"the docstring's examples do not parse as a doctest: {exc}")]
    examples: list[_Example] = []
    broken: list[tuple[int, str]] = []
    for ex in raw:
        skipped = bool(ex.options.get(doctest.SKIP))
        if skipped and not _unordered_value(ex.want):
            continue
        line = first + ex.lineno
        source = _without_directives(ex.source)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            broken.append((line, f"the example at line {line} is not valid Python"))
            continue
        want = "\n".join("" if w == "<BLANKLINE>" else w for w in ex.want.split("\n"))
        options = dict(ex.options)
        if "..." in want + (ex.exc_msg or "") and doctest.ELLIPSIS not in options:
            # An elided output: projects turn ELLIPSIS on in their doctest settings (without
            # it, doctest itself fails such an example).
            options[doctest.ELLIPSIS] = True
        examples.append(_Example(source, tree, want, ex.exc_msg, options, line, skipped))
    return examples, broken


_DIRECTIVE = re.compile(r"#\s*doctest:")


def _without_directives(source: str) -> str:
    """The example's source without its ``# doctest: +FLAG`` comments (doctest's, not the
    test's: a directive inside a multi-line call would land inside the assertion)."""
    lines = source.split("\n")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    for token in reversed(tokens):
        if token.type == tokenize.COMMENT and _DIRECTIVE.match(token.string):
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col].rstrip()
    return "\n".join(lines)


def _unordered_value(want: str) -> bool:
    """A ``+SKIP`` example still states a value: kept when what it shows is a literal holding a
    dict or a set. The order such a value prints in (hash order, insertion order) is why authors
    skip these examples, and ``==`` ignores it; an example skipped for another reason (random
    output, a network call) shows a plain value or none, and stays skipped."""
    is_literal, value = _want_literal(want)
    return is_literal and _has_unordered(value)


def _has_unordered(value: object) -> bool:
    if isinstance(value, dict | set | frozenset):
        return True
    if isinstance(value, list | tuple):
        return any(_has_unordered(v) for v in value)
    return False


@dataclass
class _Context:
    """What the generator knows while building one module."""

    info: _ModuleInfo
    target: _Def
    imports: _Imports
    call_prefix: str  # "f", "Cls().m", "Cls.m"
    instantiable: bool
    exception_types: set[str] = field(default_factory=set)  # rendered names, for property stubs
    #: Results later modules share (the argument search of ``candidates``).
    cache: dict[str, object] = field(default_factory=dict)

    def need(self, names: set[str]) -> None:
        package, _, own = self.info.module.rpartition(".")
        for name in sorted(names):
            binding = self.info.binding(name)
            if binding is not None:
                self.imports.add(binding)
            elif self.star_provides(name):
                # ``from .core import *`` binds it in the module, as doctest sees it.
                self.imports.from_(self.info.module, name)
            elif name == self.info.module.split(".")[0] != own:
                self.imports.plain(name)  # ``>>> pkg.helper(...)`` in pkg's own docstrings
            elif name == own:
                # `>>> textwrap.shorten(...)` in textwrap's own docstrings.
                if package:
                    self.imports.from_(package, own)
                else:
                    self.imports.plain(own)
            elif (exporter := self.package_exports(name)) is not None:
                # Docs written as the package's users see it (``spec=HTML4``, which the
                # package exports and this module never imports).
                self.imports.from_(exporter, name)

    def package_exports(self, name: str) -> str | None:
        """The module's top-level package, when it binds the public ``name`` (the module is
        one of its private modules); None otherwise."""
        root = self.info.module.split(".")[0]
        if root == self.info.module or name.startswith("_"):
            return None
        package = self.info.other(root)
        if package is None or name not in package.names:
            return None
        exported = package.constants.get("__all__")
        if isinstance(exported, list | tuple) and name not in exported:
            return None
        return root

    def star_provides(self, name: str) -> bool:
        """A module the module imports everything from binds the name (and exports it)."""
        for star in self.info.stars:
            other = self.info.other(star)
            if other is None or name not in other.names:
                continue
            exported = other.constants.get("__all__")
            if isinstance(exported, list | tuple):
                if name in exported:
                    return True
            elif not name.startswith("_"):
                return True
        return False

    def exception(self, dotted: str) -> str | None:
        """How the test names the exception class ``dotted``, importing it; None if unknown."""
        last = dotted.split(".")[-1]
        builtin = getattr(builtins, last, None)
        if (
            isinstance(builtin, type)
            and issubclass(builtin, BaseException)
            and ("." not in dotted or dotted.startswith("builtins."))
        ):
            return last
        root = dotted.split(".")[0]
        if "." not in dotted and self.info.binding(dotted) is not None:
            self.need({dotted})
            return dotted
        if self.info.binding(root) is not None and "." in dotted:
            self.need({root})
            return dotted
        # A doctest names a module's exception with its module path (mod.ParseError): take it
        # from our module when it is bound there.
        if self.info.binding(last) is not None:
            self.need({last})
            return last
        if isinstance(builtin, type) and issubclass(builtin, BaseException):
            return last
        return None


def _want_literal(want: str) -> tuple[bool, object]:
    text = want.strip()
    if not text:
        return False, None
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return False, None
    value = _literal(tree.body)
    if value is UNKNOWN:
        return False, None
    return True, value


def _output_check(subject: str, want: str, options: dict[int, bool], ctx: _Context) -> str:
    """An assertion that the text ``subject`` evaluates to matches the doctest's ``want``."""
    if options.get(doctest.NORMALIZE_WHITESPACE):
        subject = f'" ".join({subject}.split())'
        want = " ".join(want.split())
    if options.get(doctest.ELLIPSIS) and "..." in want:
        ctx.imports.plain("re")
        pieces = [_escape(p) for p in want.split("...")]
        return f"assert re.fullmatch({_pattern('.*'.join(pieces))}, {subject}, re.DOTALL)"
    return _assert(subject, "==", _quote(want))


def _exception_block(
    exc_msg: str, options: dict[int, bool], ctx: _Context, body: list[str]
) -> list[str]:
    header = exc_msg.strip()
    type_part, sep, message = header.partition(":")
    type_part = type_part.strip()
    message = message.strip()
    name = ctx.exception(type_part) if re.fullmatch(r"[\w.]+", type_part) else None
    args = name or "Exception"
    match: str | None = None
    if sep and message and not options.get(doctest.IGNORE_EXCEPTION_DETAIL):
        if options.get(doctest.ELLIPSIS) and "..." in message:
            match = ".*".join(_escape(p) for p in message.split("...") if p)
        else:
            match = _escape(message)
    if match:
        args += f", match={_pattern(match)}"
    lines = [f"with pytest.raises({args})" + (" as excinfo:" if name is None else ":")]
    lines += ["    " + line for stmt in body for line in stmt.splitlines()]
    if name is None:
        lines.append(f"assert excinfo.type.__name__ == {_quote(type_part.split('.')[-1])}")
    return lines


def _example_tests(ctx: _Context, examples: list[_Example], prefix: str) -> list[_Test]:
    """One test per example that shows something: an output, a traceback, or a call of the
    target that shows nothing (so it returned None, or printed nothing)."""
    tests: list[_Test] = []
    bound_before: set[str] = set()
    printers: set[str] = set()
    for index, example in enumerate(examples):
        printers = _printers(example.tree, printers)
        body = _example_check(ctx, example, printers)
        if example.skipped and not _resolvable(ctx, example, bound_before):
            body = None  # it uses names only the docstring's skipped examples bind
        if body is not None:
            lines, capsys = body
            used = _used_names(example.tree)
            local = _bound_names(example.tree)
            replay: list[str] = []
            if used & bound_before:
                # It uses names earlier examples bound: replay them (doctest shares one namespace).
                replay = _replay(examples[:index])
                for earlier in examples[:index]:
                    local |= _bound_names(earlier.tree)
                    used |= _used_names(earlier.tree)
            test = _Test(f"test_{prefix}_example_{len(tests) + 1}", replay, kind="example")
            if capsys:
                test.params.append("capsys: pytest.CaptureFixture[str]")
                if replay:
                    test.body.append("capsys.readouterr()")
            test.body += lines
            ctx.need(used - local - _BUILTIN_NAMES)
            shown = [example, *(examples[:index] if replay else [])]
            for missing in _optional_imports(ctx, shown):
                test.body.insert(0, f"pytest.importorskip({_quote(missing)})")
            tests.append(test)
        bound_before |= _bound_names(example.tree)
    return tests


def _resolvable(ctx: _Context, example: _Example, bound_before: set[str]) -> bool:
    """Every name the example uses is bound: by it, by an earlier example, by the module."""
    free = _used_names(example.tree) - _bound_names(example.tree) - bound_before
    own = ctx.info.module.rpartition(".")[2]
    return all(
        name in _BUILTIN_NAMES
        or name in (own, ctx.info.module.split(".")[0])
        or ctx.info.binding(name) is not None
        or ctx.star_provides(name)
        for name in free
    )


def _optional_imports(ctx: _Context, examples: list[_Example]) -> list[str]:
    """Third-party modules the examples import that the module itself does not: an example
    shows them, the tested code does not need them, so a test skips where they are missing."""
    own = ctx.info.module.split(".")[0]
    imported = {b.module.split(".")[0] or b.name.split(".")[0] for b in ctx.info.names.values()}
    found: list[str] = []
    for example in examples:
        for node in ast.walk(example.tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                if root in (own, *sys.stdlib_module_names) or root in imported:
                    continue
                if root not in found:
                    found.append(root)
    return sorted(found, reverse=True)


def _printers(tree: ast.Module, before: set[str]) -> set[str]:
    """Names bound to functions that print (``def show(x): print(x)``, ``f = lambda x:
    print(x)``) after the example, given those bound before it: what a later example calls
    through them may print before it returns."""
    found = set(before)
    for stmt in tree.body:
        value: ast.AST | None = None
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            value = stmt
        elif isinstance(stmt, ast.Assign):
            value = stmt.value
        prints = value is not None and any(
            any(_is_call_to(n, p) for p in _PRINTERS) for n in ast.walk(value)
        )
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            targets = {stmt.name}
        else:
            targets = {
                n.id
                for n in ast.walk(stmt)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)
            }
        for name in targets:
            if prints and isinstance(value, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                found.add(name)
            else:
                found.discard(name)  # rebound to something else
    return found


def _shown_check(ctx: _Context, example: _Example, expr: ast.expr) -> list[str]:
    """What doctest compares for a call that may print: the printed text, then the value's
    repr unless it is None."""
    text = _expr_text(example, expr)
    shown = 'capsys.readouterr().out + ("" if result is None else repr(result) + "\\n")'
    return [
        f"result = {text}",
        "# doctest shows what the call printed, then the value it returned",
        f"shown = {shown}",
        _output_check("shown", example.want, example.options, ctx),
    ]


def _example_check(
    ctx: _Context, example: _Example, printers: AbstractSet[str] = frozenset()
) -> tuple[list[str], bool] | None:
    """The lines that run the example and assert what it showed, and whether they use capsys.

    ``printers``: names the examples so far bound to functions that print."""
    split = _last_expression(example)
    if split is not None:
        # ``>>> table = build(); show(table) == expected``: doctest shows the last value.
        setup, last = split
        checked = _example_check(ctx, last, printers)
        if checked is None:
            return None
        return [*setup, *checked[0]], checked[1]
    tree = example.tree
    expr = (
        tree.body[0].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) else None
    )
    target_call = expr is not None and _is_call_to(expr, ctx.target.node.name)
    printed = expr is None or _prints(ctx, expr)
    if expr is not None and _literal(expr) is not UNKNOWN:
        return None  # `>>> "deja vu"` echoes a literal: asserting it would test nothing
    if example.skipped and (expr is None or printed):
        return None  # kept for its value only: a value the expression itself returns
    if example.exc_msg is not None:
        return _exception_block(
            example.exc_msg, example.options, ctx, _example_lines(example)
        ), False
    if not example.want and _asserts_on_target(ctx, tree):
        # `>>> assert f(x) == y`: the docstring's own check, run as it is written.
        return _example_lines(example), False
    if not example.want:
        if not target_call or expr is None:
            return None  # a setup statement: replayed by the examples that need it
        if printed:
            return [*_example_lines(example), 'assert capsys.readouterr().out == ""'], True
        text = _operand(expr, _expr_text(example, expr))
        comment = _trailing_comment(example.source)
        if comment is not None:
            # ``>>> is_even(2)  # returns True``: the docstring states the value in a comment
            # (doctest would see no output: this is not a doctest the project runs).
            stated = _stated_value(comment)
            if stated is UNKNOWN:
                return None
            rendered = _render(stated)
            if rendered is None:
                return None
            op = "is" if stated is None or isinstance(stated, bool) else "=="
            return [_assert(text, op, rendered)], False
        if _never_none(ctx.target.node):
            return None  # showing no output, it shows nothing: the function returns a value
        return [_assert(text, "is", "None")], False
    if printed or expr is None:
        check = _output_check("capsys.readouterr().out", example.want, example.options, ctx)
        return [*_example_lines(example), check], True
    if printers and isinstance(expr, ast.Call):
        return _shown_check(ctx, example, expr), True
    text = _operand(expr, _expr_text(example, expr))
    is_literal, value = _want_literal(example.want)
    if not is_literal or (example.options.get(doctest.ELLIPSIS) and "..." in example.want):
        want = example.want.rstrip("\n")
        return [_output_check(f"repr({text})", want, example.options, ctx)], False
    if value is True or value is False or value is None:
        return [_assert(text, "is", repr(value))], False
    rendered = None if _has_set(value) else _render(value)
    if rendered is None:  # sets keep the order the docstring shows
        want = example.want.strip()
        rendered = ast.unparse(ast.parse(want, mode="eval").body) if "\n" in want else want
    return [_assert(text, "==", rendered)], False


def _last_expression(example: _Example) -> tuple[list[str], _Example] | None:
    """Statements then one expression (the only one), as setup lines and an example of the
    expression alone; None for any other shape."""
    body = example.tree.body
    if (
        len(body) < 2
        or not isinstance(body[-1], ast.Expr)
        or any(isinstance(stmt, ast.Expr) for stmt in body[:-1])
        or example.exc_msg is not None
    ):
        return None
    text = _statement_text(example.source, body[-1])
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    setup = [_statement_text(example.source, stmt) for stmt in body[:-1]]
    last = _Example(
        text, tree, example.want, None, example.options, example.lineno, example.skipped
    )
    return setup, last


def _trailing_comment(source: str) -> str | None:
    """The comment ending the example's last line, without its ``#``."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    last = max((t.start[0] for t in tokens if t.type == tokenize.COMMENT), default=None)
    code = max((t.start[0] for t in tokens if t.type == tokenize.NAME), default=0)
    if last is None or last < code:
        return None
    comment = next(t.string for t in tokens if t.type == tokenize.COMMENT and t.start[0] == last)
    return comment.lstrip("#").strip()


_STATED = re.compile(
    r"^(?:returns?|result|gives|outputs?|evaluates to|->|=>|==|=|:)?\s*:?\s*(.+?)\s*$",
    re.IGNORECASE,
)
_WORDS = {"true": True, "false": False, "none": None}


def _stated_value(comment: str) -> object:
    """The value a comment states (``returns true``, ``-> 3``, ``'abc'``), else unknown."""
    match = _STATED.match(comment)
    if match is None:
        return UNKNOWN
    rest = match.group(1)
    first = re.split(r"[\s,;.(]", rest, maxsplit=1)[0]
    if first.lower() in _WORDS:
        return _WORDS[first.lower()]
    try:
        return _literal(ast.parse(rest, mode="eval").body)
    except SyntaxError:
        return UNKNOWN


def _never_none(fn: _FunctionNode) -> bool:
    """A call of the function never evaluates to None: a generator or a coroutine, or a plain
    function every path of which returns a value."""
    if isinstance(fn, ast.AsyncFunctionDef) or any(
        isinstance(n, ast.Yield | ast.YieldFrom) for n in _own_nodes(fn)
    ):
        return True
    return not fn.decorator_list and not may_return_none(fn)


def _asserts_on_target(ctx: _Context, tree: ast.Module) -> bool:
    name = ctx.target.node.name
    return any(
        isinstance(stmt, ast.Assert) and any(_is_call_to(n, name) for n in ast.walk(stmt.test))
        for stmt in tree.body
    )


def _replay(examples: list[_Example]) -> list[str]:
    """The earlier examples as plain statements: the state a later example depends on."""
    lines: list[str] = []
    for example in examples:
        if example.exc_msg is not None:
            continue
        for stmt in example.tree.body:
            if isinstance(stmt, ast.Assert) and not _bound_names(stmt):
                continue  # an earlier check: its own test runs it
            if isinstance(stmt, ast.Expr) and example.want:
                # An expression whose output was compared: keep it only for its side effects.
                if any(isinstance(n, ast.Call | ast.Await) for n in ast.walk(stmt.value)):
                    lines.append(_statement_text(example.source, stmt))
                continue
            lines.append(_statement_text(example.source, stmt))
    return lines
