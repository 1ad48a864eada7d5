"""The domain a property may range over, as far as the code shows it.

A property only asserts over inputs the function accepts. What this module reads from the code:
the exceptions the docstring declares (``Raises:`` sections, ``:raises X:``), whether the body
is *total* on values of its hinted types (it applies only operations that cannot fail on them:
no call into other code, no indexing, no division, no conversion such as ``float(text)``), and
whether every path returns a value (else the return type check allows ``None``). A function
that is not total gets a property that treats an exception as its answer, not as a failure.
"""

from __future__ import annotations

import ast
import builtins
import re

from .targets import _FunctionNode

# Builtins that return for every argument of a hinted type (no ValueError, no TypeError).
_TOTAL_CALLS = frozenset({"isinstance", "len", "str", "repr", "bool", "abs", "type", "id", "hash"})
_TOTAL_METHODS = frozenset(
    {
        *("strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "capitalize"),
        *("swapcase", "startswith", "endswith", "isdigit", "isdecimal", "isnumeric"),
        *("isalpha", "isalnum", "isspace", "isidentifier", "islower", "isupper", "istitle"),
        *("split", "rsplit", "splitlines", "replace", "count", "find", "rfind", "join"),
        *("removeprefix", "removesuffix", "copy", "keys", "values", "items", "get"),
    }
)
_PARTIAL_OPS = (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift, ast.MatMult)


def _own(fn: _FunctionNode) -> list[ast.AST]:
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def is_total(fn: _FunctionNode) -> bool:
    """The body cannot raise on its own for arguments of their hinted types (except by a
    ``raise`` statement of its own)."""
    nodes = _own(fn)
    # Building the exception a ``raise`` statement raises is the function's answer.
    raised = {id(n) for r in nodes if isinstance(r, ast.Raise) for n in ast.walk(r)}
    for node in nodes:
        if id(node) in raised:
            continue
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _TOTAL_CALLS:
                continue
            if isinstance(func, ast.Attribute) and func.attr in _TOTAL_METHODS:
                continue
            return False
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            return False
        if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, _PARTIAL_OPS):
            return False
        if isinstance(node, ast.Assert | ast.Await | ast.Yield | ast.YieldFrom | ast.Starred):
            return False
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and node.attr not in _TOTAL_METHODS
        ):
            return False  # an attribute of an object this module does not model
        if isinstance(node, ast.While | ast.For | ast.AsyncFor | ast.With | ast.AsyncWith):
            return False
        if isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Store):
            return False  # unpacking can fail
    return True


_SECTION = re.compile(r"^\s*(Raises|Raise|Exceptions)\s*:?\s*$")
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_SPHINX = re.compile(r":raises?\s+([\w.]+)\s*:")


def declared_raises(fn: _FunctionNode) -> list[str]:
    """Exception names the docstring declares the function raises."""
    doc = ast.get_docstring(fn) or ""
    names: list[str] = [m.group(1) for m in _SPHINX.finditer(doc)]
    lines = doc.splitlines()
    index = 0
    while index < len(lines):
        if not _SECTION.match(lines[index]):
            index += 1
            continue
        index += 1
        if index < len(lines) and _UNDERLINE.match(lines[index]):
            index += 1
        base: int | None = None
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
                if index < len(lines) and lines[index].strip() and base is not None:
                    indent = len(lines[index]) - len(lines[index].lstrip())
                    if indent < base:
                        break
                continue
            indent = len(line) - len(line.lstrip())
            if base is None:
                base = indent
            if indent < base:
                break
            if indent == base:
                match = re.match(r"\s*([A-Za-z_][\w.]*)\s*(:|$|\()", line)
                if match:
                    names.append(match.group(1))
            index += 1
    return [n for n in dict.fromkeys(names) if _exception_like(n)]


def _exception_like(name: str) -> bool:
    last = name.split(".")[-1]
    builtin = getattr(builtins, last, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return True
    return last.endswith(("Error", "Exception", "Warning")) or last[:1].isupper()


def may_return_none(fn: _FunctionNode) -> bool:
    """Some path returns ``None``: a bare ``return``, ``return None``, or the end of the body."""
    for node in _own(fn):
        if isinstance(node, ast.Return) and (
            node.value is None
            or (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            return True
    return not _ends(fn.body)


def _ends(body: list[ast.stmt]) -> bool:
    """The block never falls off its end."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return | ast.Raise):
        return True
    if isinstance(last, ast.If):
        return _ends(last.body) and _ends(last.orelse)
    if isinstance(last, ast.Try | ast.TryStar):
        if last.finalbody and _ends(last.finalbody):
            return True
        main = _ends(last.orelse) if last.orelse else _ends(last.body)
        return main and all(_ends(h.body) for h in last.handlers)
    if isinstance(last, ast.With | ast.AsyncWith):
        return _ends(last.body)
    if isinstance(last, ast.While):
        test = last.test
        infinite = isinstance(test, ast.Constant) and bool(test.value)
        return infinite and not any(isinstance(n, ast.Break) for n in ast.walk(last))
    if isinstance(last, ast.Match):
        return all(_ends(c.body) for c in last.cases) and any(
            isinstance(c.pattern, ast.MatchAs) and c.pattern.pattern is None and c.guard is None
            for c in last.cases
        )
    return False


_MUTATORS = frozenset(
    {
        *("append", "extend", "insert", "pop", "popitem", "remove", "clear", "update"),
        *("add", "discard", "setdefault", "sort", "reverse"),
    }
)


def mutates_module_state(fn: _FunctionNode, module_names: set[str]) -> bool:
    """The function changes module-level state (``global``, or a method that mutates, an item
    assignment or deletion on a module-level name): random inputs would leak into other tests."""
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    local = {
        n.id for n in _own(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    } | params
    shared = module_names - local
    lazy, filled = _filled_once(fn)
    for node in _own(fn):
        if isinstance(node, ast.Global) and not set(node.names) <= lazy:
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in shared
        ):
            return True
        if (
            isinstance(node, ast.Subscript | ast.Attribute)
            and isinstance(node.ctx, ast.Store | ast.Del)
            and isinstance(node.value, ast.Name)
            and node.value.id in shared
            and id(node) not in filled
        ):
            return True
    return False


def _filled_once(fn: _FunctionNode) -> tuple[set[str], set[int]]:
    """What the function fills in on the first call that needs it and never changes after: the
    names it declares ``global`` whose every assignment is under ``if NAME is None:`` or
    ``if not NAME:`` (a table or a compiled pattern built when first needed, as
    ``base64.a85encode`` does), and the item stores ``TABLE[KEY] = ...`` under
    ``if KEY not in TABLE:`` (``base64._b32encode``'s table per alphabet). A call after the one
    that filled them finds the module as that one left it: no test sees what another did."""
    guarded: dict[str, set[int]] = {}
    for node in _own(fn):
        if isinstance(node, ast.If):
            for name in _unset_test(node.test):
                inside = {id(n) for stmt in node.body for n in ast.walk(stmt)}
                guarded.setdefault(name, set()).update(inside)
    declared = {n for node in _own(fn) if isinstance(node, ast.Global) for n in node.names}
    # Tables built together are tested by one of them: ``if _a85chars2 is None:`` fills both.
    unset = {i for name in declared for i in guarded.get(name, set())}
    lazy = set(declared)
    items: set[int] = set()
    for node in _own(fn):
        changed = isinstance(node, ast.Name) and (
            isinstance(node.ctx, ast.Del)
            or (isinstance(node.ctx, ast.Store) and id(node) not in unset)
        )
        if changed and isinstance(node, ast.Name):
            lazy.discard(node.id)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and id(node) in guarded.get(f"{node.value.id}[{ast.unparse(node.slice)}]", set())
        ):
            items.add(id(node))
    return lazy, items


def _unset_test(test: ast.expr) -> set[str]:
    """What ``test`` finds unset: ``NAME`` for ``NAME is None`` and ``not NAME``,
    ``TABLE[KEY]`` for ``KEY not in TABLE``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return {test.operand.id} if isinstance(test.operand, ast.Name) else set()
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return set()
    op, right = test.ops[0], test.comparators[0]
    if (
        isinstance(op, ast.Is)
        and isinstance(test.left, ast.Name)
        and isinstance(right, ast.Constant)
        and right.value is None
    ):
        return {test.left.id}
    if isinstance(op, ast.NotIn) and isinstance(right, ast.Name):
        return {f"{right.id}[{ast.unparse(test.left)}]"}
    return set()


# ``text (str): ...`` (Google), ``:param str text:`` / ``:type text: str`` (Sphinx),
# ``text : str`` (NumPy).
_GOOGLE_PARAM = re.compile(r"^\s*\*{0,2}(\w+)\s*\(([^)]*)\)\s*:")
_SPHINX_PARAM = re.compile(r":param\s+([\w\[\], |.]+?)\s+(\w+)\s*:")
_SPHINX_TYPE = re.compile(r":type\s+(\w+)\s*:\s*([^\n]+)")
_NUMPY_PARAM = re.compile(r"^\s*(\w+)\s+:\s+([^\n]+)$")
_DOC_TYPES = {
    "str": "str",
    "string": "str",
    "unicode": "str",
    "text": "str",
    "int": "int",
    "integer": "int",
    "float": "float",
    "number": "float",
    "bool": "bool",
    "boolean": "bool",
    "bytes": "bytes",
    "list": "list",
    "tuple": "tuple",
    "dict": "dict",
    "mapping": "dict",
    "iterable": "Iterable",
    "sequence": "list",
}


def documented_types(fn: _FunctionNode) -> dict[str, str]:
    """Parameter types the docstring states (``text (str): ...``, ``:type n: int``), as
    annotation source for the types candidates are made of; vague ones (``callable``,
    ``object``, a union of several) are left out."""
    doc = ast.get_docstring(fn) or ""
    params = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    found: dict[str, str] = {}
    for line in doc.splitlines():
        for regex, order in ((_GOOGLE_PARAM, 1), (_NUMPY_PARAM, 1)):
            match = regex.match(line)
            if match:
                name, text = match.group(order), match.group(3 - order)
                if name in params and name not in found:
                    found[name] = text
    for match in _SPHINX_PARAM.finditer(doc):
        found.setdefault(match.group(2), match.group(1))
    for match in _SPHINX_TYPE.finditer(doc):
        found[match.group(1)] = match.group(2)
    out: dict[str, str] = {}
    for name, text in found.items():
        simple = _doc_type(text)
        if name in params and simple is not None:
            out[name] = simple
    return out


def _doc_type(text: str) -> str | None:
    words = [w for w in re.split(r"[\s,]+", text.strip().strip("`~.").lower()) if w]
    words = [w for w in words if w not in ("optional", "or", "none", "default")]
    if not words:
        return None
    first = words[0].strip("`:~").split(".")[-1]
    if first in ("list", "tuple", "sequence", "iterable") and len(words) >= 3:
        inner = _DOC_TYPES.get(words[2].rstrip("s").strip("`")) if words[1] == "of" else None
        base = _DOC_TYPES[first]
        return f"{base}[{inner}]" if inner in ("str", "int", "float") else base
    if len(words) > 1:
        return None  # a union, or a phrase
    return _DOC_TYPES.get(first)


#: Decorators that keep what the function returns and raises.
_TRANSPARENT = frozenset(
    {
        *("staticmethod", "classmethod", "property", "cache", "lru_cache", "cached_property"),
        *("functools.cache", "functools.lru_cache", "functools.cached_property"),
        *("typing.overload", "overload", "abc.abstractmethod", "abstractmethod", "override"),
    }
)


def wrapped(fn: _FunctionNode) -> bool:
    """A decorator of the function may change what a call returns or raises (a validator
    that turns exceptions into values, a retry, a converter)."""
    for decorator in fn.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        parts: list[str] = []
        while isinstance(target, ast.Attribute):
            parts.insert(0, target.attr)
            target = target.value
        if isinstance(target, ast.Name):
            parts.insert(0, target.id)
        name = ".".join(parts)
        if name not in _TRANSPARENT and not name.endswith((".setter", ".getter", ".deleter")):
            return True
    return False
