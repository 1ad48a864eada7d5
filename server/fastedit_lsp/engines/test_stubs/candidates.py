"""Candidate arguments: values for the target's parameters, from their type hints, the
literals the function uses and how it uses each parameter, most ordinary first; the search for
arguments that reach each ``raise`` statement (``_explore``), and the call a test makes
with them.
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import operator
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .bindings import _literal, _ModuleInfo
from .doctests import _Context, _examples, _is_call_to, _own_nodes
from .domain import documented_types
from .evaluator import _Evaluator
from .render import _has_set, _render
from .scope import _dotted
from .targets import _Def, _FunctionNode
from .values import (
    _OMIT,
    UNKNOWN,
    Abort,
    Break,
    Continue,
    Func,
    Instance,
    Iter,
    Raised,
    Return,
    _rest,
    safe,
)


def _annotation_base(node: ast.expr | None) -> tuple[str | None, list[ast.expr]]:
    """("list", [int]) for ``list[int]``; ("Optional", [str]) for ``Optional[str]``."""
    if node is None:
        return None, []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _annotation_base(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None, []
    if isinstance(node, ast.Constant) and node.value is None:
        return "None", []
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return "Union", [node.left, node.right]
    if isinstance(node, ast.Subscript):
        base = _dotted(node.value)
        inner = node.slice
        args = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        return (base.split(".")[-1] if base else None), args
    name = _dotted(node)
    return (name.split(".")[-1] if name else None), []


_LIST_NAMES = {"list", "List", "Sequence", "Iterable", "Collection", "MutableSequence"}
_DICT_NAMES = {"dict", "Dict", "Mapping", "MutableMapping"}
_SET_NAMES = {"set", "Set", "AbstractSet", "MutableSet", "frozenset", "FrozenSet"}


def _typed_candidates(
    ann: ast.expr | None, ints: list[int], floats: list[float], strs: list[str], depth: int = 0
) -> list[object] | None:
    """Values of the annotated type, most ordinary first; None when the type is not modelled."""
    base, args = _annotation_base(ann)
    if depth > 3:
        return None
    if base == "int":
        return _dedupe([1, 0, -1, *ints])
    if base == "float":
        specials = [math.inf, -math.inf, math.nan]
        return _dedupe([1.0, 0.0, -1.0, *floats, *(float(i) for i in ints), *specials])
    if base == "str":
        return _dedupe(["a", "", *strs])
    if base == "bool":
        return [False, True]
    if base == "bytes":
        return [b"a", b""]
    if base == "None":
        return [None]
    if base in ("Optional", "Union"):
        options = [_typed_candidates(a, ints, floats, strs, depth + 1) for a in args]
        if base == "Optional":
            options.append([None])
        if any(o is None for o in options):
            return None
        present = [o for o in options if o is not None]
        merged: list[object] = [
            o[i] for i in range(max(len(o) for o in present)) for o in present if i < len(o)
        ]
        return _dedupe(merged)
    if base in _LIST_NAMES or base in ("tuple", "Tuple"):
        element = args[0] if args else None
        inner = _typed_candidates(element, ints, floats, strs, depth + 1) if element else [1, "a"]
        if inner is None:
            return None
        if (
            base in ("tuple", "Tuple")
            and len(args) > 1
            and not (isinstance(args[1], ast.Constant) and args[1].value is Ellipsis)
        ):
            parts = [_typed_candidates(a, ints, floats, strs, depth + 1) for a in args]
            if any(p is None for p in parts):
                return None
            return [tuple(p[0] for p in parts if p is not None)]
        lists: list[object] = [[inner[0]], [], *([v] for v in inner[1:8]), list(inner[:3])]
        if base in ("tuple", "Tuple"):
            return _dedupe([tuple(v) for v in lists if isinstance(v, list)])
        if base == "Iterable":
            # An iterator is iterable too, and goes through code a list does not (``iter(x) is
            # x``, no ``len``).
            lists += [Iter(list(inner[:2])), Iter([])]
        return _dedupe(lists)
    if base == "Iterator" and args:
        inner = _typed_candidates(args[0], ints, floats, strs, depth + 1)
        if inner is None:
            return None
        return _dedupe([Iter([inner[0]]), Iter([]), Iter(list(inner[:3]))])
    if base in _SET_NAMES:
        return [set(), {1}] if not args else None
    if base in _DICT_NAMES:
        keys = _typed_candidates(args[0], ints, floats, strs, depth + 1) if args else ["a"]
        values = _typed_candidates(args[1], ints, floats, strs, depth + 1) if len(args) > 1 else [1]
        if keys is None or values is None:
            return None
        return _dedupe([{keys[0]: values[0]}, {}, *({k: values[0]} for k in keys[1:6])])
    if base == "Literal":
        literals = [_literal(a) for a in args]
        return None if UNKNOWN in literals else _dedupe(literals)
    return None


def _dedupe(values: list[object]) -> list[object]:
    seen: set[str] = set()
    out: list[object] = []
    for value in values:
        key = f"{type(value).__name__}:{value!r}"
        if key not in seen and safe(value):
            seen.add(key)
            out.append(value)
    return out


def _literals(fn: _FunctionNode, info: _ModuleInfo) -> tuple[list[int], list[float], list[str]]:
    ints: list[int] = []
    floats: list[float] = []
    strs: list[str] = []

    def take(value: object, most: int = 10**9) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int) and abs(value) < most:
            ints.extend([value - 1, value, value + 1])
        elif isinstance(value, float) and math.isfinite(value):
            floats.extend([value - 0.5, value, value + 0.5])
        elif isinstance(value, str) and len(value) <= 40:
            strs.append(value)
        elif isinstance(value, list | tuple | set | frozenset):
            for item in sorted(value, key=repr) if isinstance(value, set | frozenset) else value:
                take(item)
        elif isinstance(value, dict):
            for item in value:
                take(item)

    for node in _own_nodes(fn):
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, int | float)
        ):
            take(-node.operand.value)
        elif isinstance(node, ast.Constant) and not (
            isinstance(node.value, str) and len(node.value) > 40
        ):
            take(node.value)
        elif isinstance(node, ast.Name) and node.id in info.constants:
            take(info.constants[node.id])
        elif isinstance(node, ast.BinOp) and (folded := _folded(node)) is not None:
            take(folded, _FOLDED_MOST)  # ``1 << 16``, ``2**32 - 1``: the bound a test is at
    # The docstring's examples show realistic arguments.
    for example in _examples(fn)[0]:
        for node in ast.walk(example.tree):
            if isinstance(node, ast.Call) and _is_call_to(node, fn.name):
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    value = _literal(arg)
                    if value is not UNKNOWN:
                        take(value)
    # Combinations of the string pieces the function looks for ("@", "."): "a@a", "a@a.a".
    pieces = _dedupe([s for s in strs if s])[:8]
    combos: list[str] = []
    for piece in pieces:
        if isinstance(piece, str):
            combos += [piece, f"a{piece}", f"{piece}a", f"a{piece}a"]
    # A text the pieces wrap (``"a"``, ``<a>``): what ``startswith`` and ``endswith`` together
    # look for.
    combos += [f"{piece}a{piece}" for piece in pieces]
    for first, second in itertools.permutations(pieces, 2):
        combos += [f"a{first}a{second}a", f"{first}a{second}"]
    for piece in pieces:
        if isinstance(piece, str):
            combos += [f"1{piece}0", f"0{piece}1"]
    lengths = [n for n in ints if 0 <= n <= 64]
    numbers = [str(n) for n in ints if n >= 0]
    combos = [" ", "abc", "1", "A", "a b", *("a" * n for n in lengths), *combos, *numbers]
    # After the code's own numbers, a few small ones of other shapes (odd, even, squares, a
    # product of small primes): what a guard on divisibility or size lets through.
    ints += _SMALL_INTS
    return (
        [i for i in _dedupe(list(ints)) if isinstance(i, int)],
        [f for f in _dedupe(list(floats)) if isinstance(f, float)],
        [s for s in _dedupe(list(combos)) if isinstance(s, str)],
    )


#: Bytes pieces of the body :func:`_byte_texts` combines (its first ones).
_BYTE_PIECES = 6


def _byte_texts(fn: _FunctionNode, info: _ModuleInfo) -> list[object]:
    """Bytes made of the bytes the function's body holds or names (``b"="``, ``b"\\r\\n"``), as
    :func:`_literals` makes texts of its texts: each alone, inside others, two together. A
    function that holds bytes is given bytes, and the text candidates never hold those."""
    pieces: list[bytes] = []
    for node in _own_nodes(fn):
        value: object = None
        if isinstance(node, ast.Constant):
            value = node.value
        elif isinstance(node, ast.Name) and node.id in info.constants:
            value = info.constants[node.id]
        if isinstance(value, bytes) and 0 < len(value) <= 40 and value not in pieces:
            pieces.append(value)
    pieces = pieces[:_BYTE_PIECES]
    found: list[object] = []
    for piece in pieces:
        found += [piece, b"a" + piece, piece + b"a", b"a" + piece + b"a"]
    for first, second in itertools.permutations(pieces[:3], 2):
        found.append(b"a" + first + b"a" + second + b"a")
    return _dedupe([*found, b"abc"]) if pieces else []


#: The largest number a constant expression of the body gives that is taken (``1 << 64``).
_FOLDED_MOST = 2**64 + 2
_FOLDS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.LShift: operator.lshift,
    ast.Pow: operator.pow,
}


def _folded(node: ast.expr) -> int | None:
    """The value of a constant expression of whole numbers (``1 << 16``, ``2**32 - 1``), when
    it is small enough to write; else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if not isinstance(node, ast.BinOp) or type(node.op) not in _FOLDS:
        return None
    left, right = _folded(node.left), _folded(node.right)
    if left is None or right is None or abs(left) > _FOLDED_MOST:
        return None
    if isinstance(node.op, ast.LShift | ast.Pow) and not 0 <= right <= 64:
        return None
    value = _FOLDS[type(node.op)](left, right)
    return value if abs(value) <= _FOLDED_MOST else None


_SMALL_INTS = [2, 3, 4, 5, 7, 9, 10, 16, 21, 25, 100]
_MIXED: list[object] = [1, "a", 0, "", -1, None, 1.5, [], [1], {}, True]
#: Iterators a test can pass (``iter([1, 2])``): one with distinct values, one with a repeat.
_ITERS: list[object] = [Iter([1, 2]), Iter([1, 2, 1])]


@dataclass
class _Param:
    name: str
    kind: str  # positional-only | positional | keyword
    default: object  # _OMIT-able when not _NO_DEFAULT
    annotation: ast.expr | None
    has_default: bool
    #: The default's expression, for a default that is not a literal (``factory=dict``).
    default_node: ast.expr | None = None


def _params(fn: _FunctionNode, skip_first: bool) -> tuple[list[_Param], bool, bool]:
    """The parameters a test passes, and whether there are ``*args``/``**kwargs``."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(
        args.defaults
    )
    params: list[_Param] = []
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        if index == 0 and skip_first:
            continue
        kind = "positional-only" if index < len(args.posonlyargs) else "positional"
        value = _literal(default) if default is not None else UNKNOWN
        params.append(_Param(arg.arg, kind, value, arg.annotation, default is not None, default))
    if args.vararg is not None:
        # ``*args``: a tuple of what the call passes after the positional parameters.
        params.append(_Param(args.vararg.arg, "varargs", (), args.vararg.annotation, True))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        value = _literal(kw_default) if kw_default is not None else UNKNOWN
        params.append(
            _Param(arg.arg, "keyword", value, arg.annotation, kw_default is not None, kw_default)
        )
    return params, args.vararg is not None, args.kwarg is not None


def _isinstance_names(fn: _FunctionNode) -> set[str]:
    names: set[str] = set()
    for node in _own_nodes(fn):
        if _is_call_to(node, "isinstance") and isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Name):
                names.add(first.id)
    return names


#: Functions of the standard library that iterate over an argument (``deque(x)``,
#: ``islice(x, 3)``): what a function passes them is an iterable, even where the evaluator
#: does not follow the call. The first argument, or every one, or every one after the first.
_ITERATING_FIRST = frozenset(
    {
        *("len", "iter", "list", "tuple", "set", "frozenset", "sorted", "reversed", "enumerate"),
        *("sum", "min", "max", "any", "all", "deque", "Counter", "islice", "tee", "cycle"),
        *("groupby", "compress", "accumulate", "permutations", "combinations", "pairwise"),
        *("combinations_with_replacement", "batched", "from_iterable"),
    }
)
_ITERATING_ALL = frozenset({"zip", "chain", "product", "zip_longest"})
_ITERATING_REST = frozenset({"map", "filter", "starmap", "takewhile", "dropwhile", "filterfalse"})


def _iterated_arguments(node: ast.Call) -> list[ast.expr]:
    name = (_dotted(node.func) or "").split(".")[-1]
    if name in _ITERATING_FIRST:
        return node.args[:1]
    if name in _ITERATING_ALL:
        return list(node.args)
    if name in _ITERATING_REST:
        return node.args[1:]
    return []


def _sized_names(fn: _FunctionNode) -> set[str]:
    """Names the function measures (``len(x)``), iterates (``for _ in x``, ``deque(x)``) or
    indexes."""
    names: set[str] = set()
    for node in _own_nodes(fn):
        subject: ast.AST | None = None
        if isinstance(node, ast.Call):
            names.update(a.id for a in _iterated_arguments(node) if isinstance(a, ast.Name))
        elif isinstance(node, ast.For | ast.comprehension):
            subject = node.iter
        elif isinstance(node, ast.Subscript):
            subject = node.value
        if isinstance(subject, ast.Name):
            names.add(subject.id)
    return names


#: Longest sequence :func:`_shaped` builds (``a, b, ..., f = x``: six).
_MAX_SHAPE = 8


def _unpacked_subject(node: ast.expr) -> str | None:
    """``x`` of ``x`` or ``x[1:]`` / ``x[:6]`` (what a tuple target takes apart)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _tuple_size(target: ast.expr) -> int | None:
    if isinstance(target, ast.Tuple | ast.List) and not any(
        isinstance(e, ast.Starred) for e in target.elts
    ):
        return len(target.elts) if 2 <= len(target.elts) <= _MAX_SHAPE else None
    return None


def _shaped(fn: _FunctionNode, ints: list[int], strs: list[str]) -> dict[str, list[object]]:
    """Sequences of the size the function takes a name apart into, by name: ``year, month, day
    = x[:3]`` or ``x[2]`` (a sequence of three: texts, then numbers), ``for name, value in x``
    (a few pairs). No plain value of another shape goes down those paths."""
    sizes: dict[str, set[int]] = {}
    item_sizes: dict[str, set[int]] = {}
    # A parameter given a new value (``s = s.group(1)``) is taken apart as that value.
    rebound = {
        n.id for n in _own_nodes(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    for node in _own_nodes(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            size, name = _tuple_size(node.targets[0]), _unpacked_subject(node.value)
            if size is not None and name is not None:
                sizes.setdefault(name, set()).add(size)
        elif isinstance(node, ast.For | ast.comprehension):
            size, name = _tuple_size(node.target), _unpacked_subject(node.iter)
            if size is not None and name is not None:
                item_sizes.setdefault(name, set()).add(size)
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int
            and -_MAX_SHAPE <= node.slice.value < _MAX_SHAPE
        ):
            index = node.slice.value
            sizes.setdefault(node.value.id, set()).add(index + 1 if index >= 0 else -index)
    pool = [*dict.fromkeys(s for s in strs if s.strip()), "a", "b", "c", "d", "e", "f", "g", "h"]
    numbers = [*dict.fromkeys(i for i in ints if i > 0), *range(1, _MAX_SHAPE + 1)]

    def texts(size: int, start: int = 0) -> tuple[object, ...]:
        return tuple(pool[(start + i) % len(pool)] for i in range(size))

    shaped: dict[str, list[object]] = {}
    for name in rebound:
        sizes.pop(name, None)
        item_sizes.pop(name, None)
    for name, found in sizes.items():
        size = max(found)
        if size >= 2:  # ``x[0]``, ``x[-1]``: any sequence has that
            shaped[name] = [texts(size), tuple(numbers[:size])]
    for name, found in item_sizes.items():
        size = max(found)
        items = [texts(size, start=size * i) for i in range(3)]
        shaped.setdefault(name, []).extend([items, [tuple(numbers[:size])]])
    return shaped


#: Methods only a mapping has: a parameter the function calls them on is a dict.
_MAPPING_METHODS = frozenset({"items", "keys", "values", "popitem", "setdefault"})


def _mapping_names(fn: _FunctionNode) -> set[str]:
    """Names the function uses as a mapping (``kwargs.popitem()``, ``d.items()``)."""
    return {
        node.value.id
        for node in _own_nodes(fn)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.attr in _MAPPING_METHODS
    }


def _called_names(fn: _FunctionNode) -> set[str]:
    """Names the function calls (``key(item)``), passes as ``key=`` or names (``f.__name__``):
    callables."""
    names: set[str] = set()
    for node in _own_nodes(fn):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.attr in ("__name__", "__qualname__")
        ):
            names.add(node.value.id)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                names.add(node.func.id)
            names.update(
                k.value.id
                for k in node.keywords
                if k.arg == "key" and isinstance(k.value, ast.Name)
            )
    return names


#: For a parameter the function calls: builtins a test can pass, most ordinary first.
_CALLABLES: list[object] = [Func("len"), Func("bool"), Func("str"), Func("abs")]


def _candidates(
    fn: _FunctionNode, params: list[_Param], info: _ModuleInfo
) -> list[list[object]] | None:
    ints, floats, strs = _literals(fn, info)
    checked = _isinstance_names(fn)
    sized = _sized_names(fn)
    shaped = _shaped(fn, ints, strs)
    raw = _byte_texts(fn, info)
    called = _called_names(fn)
    mappings = _mapping_names(fn)
    documented = documented_types(fn)
    result: list[list[object]] = []
    for param in params:
        values: list[object] | None
        base = _annotation_base(param.annotation)[0]
        doc_type = documented.get(param.name) if param.annotation is None else None
        if param.kind == "varargs":
            # One value, then two: of the hinted type, else sequences first when the
            # function iterates what it is given.
            items = _typed_candidates(param.annotation, ints, floats, strs) if base else None
            if items is None:
                items = (
                    [[1], [1, 2], {"a": 1}, "a", 1]
                    if param.name in sized
                    else [1, "a", {"a": 1}, [1], None]
                )
            values = [*((v,) for v in items[:5]), *itertools.pairwise(items[:3])]
            if not base:
                values.append(({"a": 1}, {"b": 2}))
            result.append([_OMIT, *_dedupe(values)])
            continue
        if param.name in called and base in (None, "Any", "object", "Callable"):
            values = [*_CALLABLES, None, 1, "a"]  # then what a guard may reject
        # ``Any`` and ``object`` say nothing of the values: as if there were no hint.
        elif base not in (None, "Any", "object"):
            values = _typed_candidates(param.annotation, ints, floats, strs)
        elif doc_type is not None and (
            typed := _typed_candidates(ast.parse(doc_type, mode="eval").body, ints, floats, strs)
        ):
            # The type the docstring states first, then what a guard may reject.
            values = _dedupe([*typed, *_MIXED])
        elif param.name in mappings and base in (None, "Any", "object"):
            # A mapping: one with an item the function may look for, and an empty one.
            keys = [k for k in strs if k][:3]
            values = _dedupe([{"a": 1}, {}, *({k: 1} for k in keys), *_MIXED])
        elif param.name in sized:
            # Measured, iterated or indexed: a sequence first, then the rest.
            # Iterators last: code that iterates may take one (``iter(x) is x``, no ``len``).
            values = _dedupe([[1], [], "a", "", [0], [1, 2, 3], *strs, *_MIXED, *ints, *_ITERS])
        elif param.has_default and param.default is not UNKNOWN:
            if isinstance(param.default, bool):
                values = [not param.default]
            elif isinstance(param.default, int | float | str) or param.default is None:
                values = _dedupe([*ints, *strs[:12], *_MIXED])
            else:
                values = []
        else:
            values = _dedupe([*_MIXED[:6], *ints, *strs, *_MIXED[6:]])
        if values is not None and param.name in checked:
            values = _dedupe([*values, *_MIXED])
        if values and param.name in shaped and base in (None, "Any", "object"):
            values = _dedupe([*values[:1], *shaped[param.name], *values[1:]])
        if (
            values
            and raw
            and base in (None, "Any", "object", "bytes")
            and param.name not in called
            and not isinstance(param.default, bool)
        ):
            values = _dedupe([*values[:2], *raw, *values[2:]])
        if param.has_default:
            values = [_OMIT, *(values or [])]
        if not values:
            return None  # a required parameter of a type we do not model
        result.append(values)
    return result


def _combinations(sizes: list[int], limit: int) -> Iterator[tuple[int, ...]]:
    """Index tuples by increasing total distance from the first (most ordinary) candidates."""
    if not sizes:
        yield ()
        return
    produced = 0
    for total in range(sum(s - 1 for s in sizes) + 1):
        for combo in _compositions(total, sizes):
            yield combo
            produced += 1
            if produced >= limit:
                return


def _compositions(total: int, sizes: list[int]) -> Iterator[tuple[int, ...]]:
    if len(sizes) == 1:
        if total < sizes[0]:
            yield (total,)
        return
    for first in range(min(total, sizes[0] - 1) + 1):
        for rest in _compositions(total - first, sizes[1:]):
            yield (first, *rest)


_MAX_RUNS = 1500
#: Combinations tried for statements no run went through, once every ``raise`` is reached.
_MORE_RUNS = 400
# All runs for one function together: keeps the worst case around a few tenths of a second.
_TOTAL_STEPS = 200_000


@dataclass
class _Run:
    """One evaluated call: its arguments, what it returned, the statements it went through."""

    values: list[object]
    result: object
    covered: frozenset[int]


@dataclass
class _Exploration:
    #: For each reachable ``raise`` (by node id), argument values that reach it.
    raises: dict[int, list[object]]
    #: Calls that returned a value the evaluator computed exactly, in the order found.
    returns: list[_Run]
    #: For a reached ``raise`` (by node id): its message with the arguments in ``raises``,
    #: when the evaluator computed it exactly.
    messages: dict[int, str] = field(default_factory=dict)
    #: Runs a body (the function's, or a changed copy of it) with a run's argument values:
    #: what it returns, ``Raised`` for an exception, ``UNKNOWN`` when not known exactly.
    replay: Callable[[list[ast.stmt], list[object]], object] | None = None


def _explore(ctx: _Context, params: list[_Param], has_varargs: tuple[bool, bool]) -> _Exploration:
    """Arguments that reach each ``raise``, and calls whose return value is known exactly.

    The search starts from the most ordinary arguments and changes one parameter at a time;
    arguments that get further (to a new ``raise``, or through statements no run went through
    before) become new starting points, since they pass the guards before it. What remains of
    the budget then goes to combinations by increasing distance from the ordinary arguments.
    The result is kept on the context: raise tests and return tests share one search.
    """
    cached = ctx.cache.get("explore")
    if isinstance(cached, _Exploration):
        return cached
    explored = _search(ctx, params, has_varargs)
    ctx.cache["explore"] = explored
    return explored


def _search(ctx: _Context, params: list[_Param], has_varargs: tuple[bool, bool]) -> _Exploration:
    fn = ctx.target.node
    wanted = {id(n) for n in _own_nodes(fn) if isinstance(n, ast.Raise) and n.exc is not None}
    candidates = _candidates(fn, params, ctx.info)
    nothing = _Exploration({}, [])
    if candidates is None:
        return nothing
    decorators = {_dotted(d) for d in fn.decorator_list}
    self_value: Instance | None = None
    if _takes_self(ctx.target) and "classmethod" not in decorators:
        if not ctx.instantiable:
            return nothing
        self_value = _initial_self(ctx)
    evaluator = _Evaluator(ctx.info)
    returns: list[_Run] = []
    generator = isinstance(fn, ast.FunctionDef) and _is_generator(fn)

    def outcome(values: list[object]) -> int | None:
        """The id of the ``raise`` reached, 0 for a normal return, None otherwise."""
        result = run(fn.body, values)
        if isinstance(result, Raised):
            if result.node is None:
                return None
            last_message[0] = result.message if not evaluator.inexact else None
            return id(result.node)
        if result is UNKNOWN:
            return None
        if not evaluator.inexact and safe(result):
            returns.append(_Run(values, result, frozenset(evaluator.covered)))
        return 0

    def replay(body: list[ast.stmt], values: list[object]) -> object:
        result = run(body, values)
        if evaluator.inexact or (not isinstance(result, Raised) and not safe(result)):
            return UNKNOWN
        return result

    def run(body: list[ast.stmt], values: list[object]) -> object:
        """What the body returns with these arguments (a list of what a generator yields),
        ``Raised``, or ``UNKNOWN``."""
        env: dict[str, object] = {}
        first = fn.args.posonlyargs + fn.args.args
        if ctx.target.classes and first and "staticmethod" not in decorators:
            env[first[0].arg] = (
                Instance(copy.deepcopy(self_value.attrs)) if self_value is not None else UNKNOWN
            )
        evaluator.steps = 0
        evaluator.depth = 0
        evaluator.inexact = False
        evaluator.covered = set()
        evaluator.yielded = [] if generator else None
        evaluator.collect_depth = 0
        result: object = None
        try:
            for param, value in zip(params, values, strict=True):
                if value is _OMIT and param.default is UNKNOWN and param.default_node is not None:
                    # Evaluated where the function is defined: builtins and module constants.
                    env[param.name] = evaluator.value(param.default_node, {})
                else:
                    env[param.name] = copy.deepcopy(param.default if value is _OMIT else value)
        except (Abort, Raised, Return, Break, Continue, RecursionError):
            return UNKNOWN  # a default the evaluator cannot compute (or one that raises)
        if has_varargs[1] and fn.args.kwarg:
            env[fn.args.kwarg.arg] = {}
        try:
            evaluator.run(body, env)
        except Raised as raised:
            return raised
        except Return as returned:
            result = returned.value
        except (Abort, Break, Continue, RecursionError):
            return UNKNOWN
        if evaluator.yielded is not None:
            result = list(evaluator.yielded)  # what list() of the generator returns
        return result

    found: dict[int, list[object]] = {}
    messages: dict[int, str] = {}
    last_message: list[str | None] = [None]  # the message of the last run's raise
    tried: set[str] = set()
    seen: set[int] = set()
    runs = 0
    steps = 0

    def attempt(values: list[object]) -> tuple[int | None, bool]:
        """The outcome, and whether the run went through a statement none did before."""
        nonlocal runs, steps
        key = repr(values)
        if key in tried:
            return None, False
        tried.add(key)
        runs += 1
        last_message[0] = None
        result = outcome(values)
        steps += evaluator.steps
        if steps > _TOTAL_STEPS:
            runs = _MAX_RUNS  # spent: stop searching
        if result and result in wanted and result not in found:
            found[result] = values
            if last_message[0] is not None:
                messages[result] = last_message[0]
        fresh = not evaluator.covered <= seen
        seen.update(evaluator.covered)
        return result, fresh

    bases = [[c[0] for c in candidates]]
    attempt(bases[0])
    while bases and runs < _MAX_RUNS:
        base = bases.pop(0)
        for index, options in enumerate(candidates):
            for option in options[1:]:
                values = [*base[:index], option, *base[index + 1 :]]
                before = len(found)
                _, fresh = attempt(values)
                if len(found) > before or fresh:
                    bases.append(values)
                if runs >= _MAX_RUNS:
                    return _Exploration(found, returns, messages, replay)
    # Combinations, for the raises not reached yet and for statements no run went through
    # (a long text *and* a small limit); fewer when only the statements are left.
    statements = {id(n) for n in _own_nodes(fn) if isinstance(n, ast.stmt)}
    limit = _MAX_RUNS if len(found) < len(wanted) else min(_MAX_RUNS, runs + _MORE_RUNS)
    if len(found) < len(wanted) or not statements <= seen:
        for combo in _combinations([len(c) for c in candidates], limit - runs):
            attempt([candidates[i][j] for i, j in enumerate(combo)])
            if (len(found) == len(wanted) and statements <= seen) or runs >= limit:
                break
    return _Exploration(found, returns, messages, replay)


def _initial_self(ctx: _Context) -> Instance:
    """``self`` after a no-argument ``__init__``, as far as it can be followed."""
    cls = ctx.target.classes[-1]
    attrs: dict[str, object] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                attrs[target.id] = _literal(stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
            attrs[stmt.target.id] = _literal(stmt.value)
    instance = Instance(attrs)
    init = next(
        (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is not None and (init.args.posonlyargs + init.args.args):
        env: dict[str, object] = {(init.args.posonlyargs + init.args.args)[0].arg: instance}
        params, _, _ = _params(init, skip_first=True)
        for param in params:
            env[param.name] = param.default
        try:
            _Evaluator(ctx.info).run(init.body, env)
        except (Abort, Raised, Return, Break, Continue, RecursionError):
            return Instance({})
    return instance


def _call_text(ctx: _Context, params: list[_Param], values: list[object]) -> str | None:
    parts: list[str] = []
    keyword_only = False
    for param, value in zip(params, values, strict=True):
        if param.kind == "varargs":
            if value is _OMIT or value == ():
                continue
            if keyword_only or not isinstance(value, tuple):
                return None  # a positional parameter before it was left out
            items = [_render(v) if not isinstance(v, Iter) else None for v in value]
            if any(i is None for i in items):
                return None
            parts += [i for i in items if i is not None]
            continue
        if value is _OMIT:
            keyword_only = True
            continue
        rendered = _render(value) if not _has_set(value) else None
        if isinstance(value, Func):
            rendered = value.name  # a builtin function
        if isinstance(value, Iter):
            shown = _render(_rest(value))
            rendered = f"iter({shown})" if shown is not None else None
        if rendered is None:
            if isinstance(value, set | frozenset):
                items = [_render(v) for v in sorted(value, key=repr)]
                if any(i is None for i in items):
                    return None
                rendered = "{" + ", ".join(i for i in items if i) + "}" if items else "set()"
            else:
                return None
        if param.kind == "keyword" or (keyword_only and param.kind == "positional"):
            parts.append(f"{param.name}={rendered}")
        elif keyword_only:
            return None  # a positional-only parameter after an omitted one
        else:
            parts.append(rendered)
    return _wrap_call(ctx, f"{ctx.call_prefix}({', '.join(parts)})")


def _wrap_call(ctx: _Context, call: str) -> str:
    node = ctx.target.node
    if isinstance(node, ast.AsyncFunctionDef):
        if _is_generator(node):
            return call  # an async generator: TODO territory, see _raise_tests
        ctx.imports.plain("asyncio")
        return f"asyncio.run({call})"
    if _is_generator(node):
        return f"list({call})"
    return call


#: :func:`_is_generator` of each function node met (asked for every call text written).
_GENERATORS: weakref.WeakKeyDictionary[ast.AST, bool] = weakref.WeakKeyDictionary()


def _is_generator(fn: _FunctionNode) -> bool:
    found = _GENERATORS.get(fn)
    if found is None:
        found = _GENERATORS[fn] = any(
            isinstance(n, ast.Yield | ast.YieldFrom) for n in _own_nodes(fn)
        )
    return found


def _takes_self(target: _Def) -> bool:
    decorators = {_dotted(d) for d in target.node.decorator_list}
    return bool(target.classes) and "staticmethod" not in decorators
