"""The recorder's search: new calls made of the kept ones (:func:`neighbours`). Part of the
recorder's worker (``record_worker.py``, which imports it beside itself): standard library only,
never imported by the server.
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import random
import re
import types
from collections.abc import Iterator
from typing import Any


def neighbours(calls: list[str], most: int, kills: list[list[int]] | None = None) -> list[str]:
    """New calls made of the given ones, at most ``most``: one argument of a call replaced by
    the one another call of the same shape passes at its place, or two texts joined where
    both pass text there (:func:`_crossed`), taken in turn with calls whose one argument is
    changed a little (:func:`_nudged`); each kind in a fixed pseudo-random order, within
    blocks of :data:`SEEDS` given calls, the first ones' first: with ``kills`` (the variants
    each call told apart), those that told the most apart, the calls furthest into the
    function."""
    if kills is not None:
        # The calls that told the most variants apart (``kills``, per call) first.
        order = sorted(range(len(calls)), key=lambda i: -len(kills[i]))
        calls = [calls[i] for i in order]
    known = set(calls)
    out: dict[str, None] = {}
    kinds = [iter(_crossed(calls)), iter(_nudged(calls))]
    while kinds and len(out) < most:
        for kind in list(kinds):
            call = next(kind, None)
            if call is None:
                kinds.remove(kind)
            elif call not in known:
                out[call] = None
    return list(out)[:most]


def around(call: str, others: list[str], most: int) -> list[str]:
    """New calls made of ``call``, at most ``most``: one of its arguments replaced by the one
    another call of the same shape passes at its place (the kept calls: ``others``), taken in
    turn with ``call`` changed a little (:func:`_nudged`), each kind in a fixed pseudo-random
    order. The search's way on from a call that reached lines of the function no call
    before it did."""
    parsed = _parsed([call])
    if not parsed:
        return []
    node = parsed[0]
    crossed: list[str] = []
    for other in _parsed(others):
        if _shape(other) != _shape(node):
            continue
        theirs = [*other.args, *(k.value for k in other.keywords)]
        crossed += [_with(node, index, value) for index, value in enumerate(theirs)]
    random.Random(0).shuffle(crossed)
    known = {call, *others}
    out: dict[str, None] = {}
    kinds = [iter(crossed), iter(_nudged([call]))]
    while kinds and len(out) < most:
        for kind in list(kinds):
            found = next(kind, None)
            if found is None:
                kinds.remove(kind)
            elif found not in known:
                out[found] = None
    return list(out)[:most]


def retyped(calls: list[str], most: int) -> list[str]:
    """New calls made of the given ones, at most ``most``, in order: one literal argument as a
    value of another type that holds the same (:func:`retypes`: a text as bytes, bytes as a
    text, a list as a tuple...). A function that takes either (``isinstance(s, bytes)``) has a
    branch for each; a plan whose values all have one type reaches one."""
    out: dict[str, None] = {}
    known = set(calls)
    for node in _parsed(calls):
        for index, arg in enumerate([*node.args, *(k.value for k in node.keywords)]):
            try:
                options = retypes(ast.literal_eval(arg))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            for option in options:
                try:
                    value = ast.parse(repr(option), mode="eval").body
                except (SyntaxError, ValueError, MemoryError, RecursionError):
                    continue
                call = _with(node, index, value)
                if call not in known:
                    out[call] = None
            if len(out) >= most:
                return list(out)[:most]
    return list(out)


def retypes(value: object) -> list[object]:
    """``value`` as values of other types that hold the same (see :func:`retyped`)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, str):
        return [value.encode("utf-8", "surrogatepass")]
    if isinstance(value, bytes):
        return [value.decode("latin-1"), bytearray(value)]
    if isinstance(value, int):
        return [float(value), str(value)]
    if isinstance(value, float):
        return [int(value)] if value.is_integer() else [str(value)]
    if isinstance(value, list):
        return [tuple(value)]
    if isinstance(value, tuple):
        return [list(value)]
    return []


def infused(calls: list[str], values: list[object], most: int) -> list[str]:
    """New calls made of the given ones, at most ``most``: one literal text (or bytes)
    argument with one of the texts (bytes) among ``values`` (what the function holds:
    :func:`held`) in its place or put inside it (at its start, middle, end), or one whole
    number argument as one of the numbers among them, or one more or less; each kind in a
    fixed pseudo-random order, within blocks of :data:`SEEDS` given calls, the first ones'
    first. What a comparison in the function is against (``if part == ".."``, ``if n >
    12``), which no nudge of the plan's values makes."""
    texts = [v for v in values if isinstance(v, str | bytes)]
    numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    out: list[tuple[int, ast.Call, int, object]] = []
    for rank, node in enumerate(_parsed(calls)):
        for index, arg in enumerate([*node.args, *(k.value for k in node.keywords)]):
            try:
                value = ast.literal_eval(arg)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            options: list[object] = []
            if isinstance(value, str | bytes):
                options = _inside(value, [t for t in texts if type(t) is type(value)])
            elif isinstance(value, int) and not isinstance(value, bool):
                options = [n + step for n in numbers for step in (0, 1, -1)]
            out += [(rank // SEEDS, node, index, o) for o in options if o != value]
    random.Random(0).shuffle(out)
    out.sort(key=lambda option: option[0])
    found: dict[str, None] = {}
    known = set(calls)
    for _, node, index, option in out:
        try:
            call = _with(node, index, ast.parse(repr(option), mode="eval").body)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        if call not in known:
            found[call] = None
        if len(found) >= most:
            break
    return list(found)


def _inside(value: Any, texts: list[Any]) -> list[object]:
    """Each of ``texts`` (of ``value``'s type) instead of ``value``, and put at its start,
    middle and end."""
    middle = len(value) // 2
    return [
        option
        for text in texts
        for option in (text, text + value, value[:middle] + text + value[middle:], value + text)
    ]


#: The longest text :func:`held` gives, and the largest number.
HELD_CHARS = 40
HELD_NUMBER = 10**6


def held(function: types.FunctionType) -> list[object]:
    """The texts, bytes and whole numbers the function's code holds (and the code nested in
    it: its lambdas, comprehensions), and the texts of its default values; not its
    docstring."""
    found: list[str | bytes | int] = []

    def walk(code: types.CodeType) -> None:
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)
            elif isinstance(const, str | bytes):
                if 0 < len(const) <= HELD_CHARS and const != function.__doc__:
                    found.append(const)
            elif (
                isinstance(const, int) and not isinstance(const, bool) and abs(const) <= HELD_NUMBER
            ):
                found.append(const)

    walk(function.__code__)
    defaults = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
    found += [d for d in defaults if isinstance(d, str) and 0 < len(d) <= HELD_CHARS]
    return list(dict.fromkeys(found))


def alternated(*kinds: list[str]) -> list[str]:
    """The calls of each list taken in turn, each once: a kind of few calls is tried early
    whatever the others' length (the search may run out of time)."""
    out: dict[str, None] = {}
    for calls in itertools.zip_longest(*kinds):
        out.update((c, None) for c in calls if c is not None)
    return list(out)


def _shape(node: ast.Call) -> tuple[str, int, tuple[str | None, ...]]:
    return ast.unparse(node.func), len(node.args), tuple(k.arg for k in node.keywords)


def _parsed(calls: list[str]) -> list[ast.Call]:
    nodes: list[ast.Call] = []
    for call in calls:
        try:
            node = ast.parse(call, mode="eval").body
        except SyntaxError:
            continue
        if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
            nodes.append(node)
    return nodes


def _with(call: ast.Call, index: int, option: ast.expr) -> str:
    """``call`` with its ``index``-th argument (positional, then keyword) ``option``."""
    values = [*call.args, *(k.value for k in call.keywords)]
    changed = [*values[:index], option, *values[index + 1 :]]
    node = ast.Call(
        call.func,
        changed[: len(call.args)],
        [
            ast.keyword(k.arg, v)
            for k, v in zip(call.keywords, changed[len(call.args) :], strict=True)
        ],
    )
    return ast.unparse(node)


#: How many of the given calls :func:`neighbours` takes together, in a pseudo-random order,
#: before the next ones.
SEEDS = 8


def _crossed(calls: list[str]) -> Iterator[str]:
    shapes: dict[tuple[str, int, tuple[str | None, ...]], list[tuple[int, ast.Call]]] = {}
    for rank, node in enumerate(_parsed(calls)):
        shapes.setdefault(_shape(node), []).append((rank, node))
    pairs = [p for nodes in shapes.values() for p in itertools.permutations(nodes, 2)]
    random.Random(0).shuffle(pairs)
    pairs.sort(key=lambda pair: min(pair[0][0], pair[1][0]) // SEEDS)
    for (_, first), (_, second) in pairs:
        values = [*first.args, *(k.value for k in first.keywords)]
        others = [*second.args, *(k.value for k in second.keywords)]
        for index, (mine, theirs) in enumerate(zip(values, others, strict=True)):
            yield _with(first, index, theirs)
            if (
                isinstance(mine, ast.Constant)
                and isinstance(theirs, ast.Constant)
                and isinstance(mine.value, str)
                and isinstance(theirs.value, str)
                and mine.value != theirs.value
            ):
                yield _with(first, index, ast.Constant(mine.value + theirs.value))


#: Most calls :func:`_nudged` makes of the given ones (before its order is drawn).
MAX_NUDGED = 4000


def _nudged(calls: list[str]) -> Iterator[str]:
    """Calls with one literal argument changed a little (:func:`nudges`: a number one more,
    halved, a third; a text cut short, doubled, in other case; a list reversed, one item
    shorter): the values next to a boundary the given calls fall either side of. Written out
    as they are taken: the search takes a few hundred of the thousands it orders."""
    out: list[tuple[int, ast.Call, int, ast.expr, ast.expr, object]] = []
    for rank, node in enumerate(_parsed(calls)):
        for index, arg in enumerate([*node.args, *(k.value for k in node.keywords)]):
            try:
                options = [(arg, nudges(ast.literal_eval(arg)))]
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                # An argument built by a call (``re.search(PATTERN, "&#1;")``, ``Cls(2)``):
                # the texts and numbers in it.
                options = [
                    (c, nudges(c.value))
                    for c in ast.walk(arg)
                    if isinstance(c, ast.Constant) and not isinstance(c.value, bool)
                ]
            out += [
                (rank // SEEDS, node, index, arg, place, value)
                for place, nudged in options
                for value in nudged
            ]
            if len(out) >= MAX_NUDGED:
                break
    random.Random(0).shuffle(out)
    out.sort(key=lambda nudged: nudged[0])
    for _, node, index, arg, place, value in out:
        try:
            option = ast.parse(repr(value), mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        yield _with(node, index, _replaced(arg, place, option))


def _replaced(tree: ast.expr, old: ast.expr, new: ast.expr) -> ast.expr:
    """A copy of ``tree`` with its node ``old`` (itself, or one inside it) replaced by
    ``new``."""
    if tree is old:
        return new
    where = next(i for i, n in enumerate(ast.walk(tree)) if n is old)
    copied = copy.deepcopy(tree)
    target = list(ast.walk(copied))[where]
    for parent in ast.walk(copied):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, new)
            elif isinstance(value, list) and any(v is target for v in value):
                setattr(parent, name, [new if v is target else v for v in value])
    return copied


#: Nudges of an item :func:`nudges` puts in a list, per item changed.
MAX_ITEM_NUDGES = 6


def nudges(value: object) -> list[object]:
    """Values a little away from ``value``, of its type (see :func:`_nudged`)."""
    found: list[object] = []
    if isinstance(value, bool):
        found = [not value]
    elif isinstance(value, int | float) and math.isfinite(value) and abs(value) < 1e15:
        found = [value + 1, value - 1, -value, value * 2, value / 2, value / 3]
    elif isinstance(value, str):
        found = [
            value[:-1],
            value[1:],
            value + value,
            value.upper(),
            value.lower(),
            value.swapcase(),
            f" {value}",
            f"{value}1",
            # Long: past a width, a limit, a truncation.
            " ".join([value or "a"] * (1 + 100 // (len(value) + 1))),
            # Lines: two of it, its lines indented (the first otherwise than the others).
            f"{value}\n{value}",
            "\n".join(f"  {line}" for line in value.split("\n")),
            value.replace("\n", "\n\t "),
            # Beyond ASCII: an accent (composed and not), a space that does not break.
            f"{value}é",
            f"e\u0301{value}",
            value.replace(" ", "\u00a0"),
        ]
        # A number written in the text, changed as a number is (its first two).
        for digits in itertools.islice(re.finditer(r"\d+", value), 2):
            number = int(digits.group())
            for other in (str(number + 1), str(max(number - 1, 0)), f"{number}0", f"{number}.5"):
                found.append(value[: digits.start()] + other + value[digits.end() :])
            found.append(value[: digits.start()] + "-" + value[digits.start() :])
    elif isinstance(value, bytes):
        found = [value[:-1], value + value, value.upper()]
    elif isinstance(value, list | tuple) and value:
        items: list[Any] = list(value)
        changed = [items[::-1], items[1:], items[:-1], items + items[:1]]
        # One item changed a little (the first and the last), two neighbours swapped.
        for index in sorted({0, len(items) - 1}):
            others = nudges(items[index])
            others = others[:: 1 + len(others) // MAX_ITEM_NUDGES][:MAX_ITEM_NUDGES]
            changed += [[*items[:index], other, *items[index + 1 :]] for other in others]
        if len(items) > 2:
            changed.append([items[1], items[0], *items[2:]])
        found = [type(value)(v) for v in changed]
    unique: list[object] = []
    for option in found:
        same_kind = type(option) is type(value) or isinstance(value, int | float)
        if (
            same_kind
            and option != value
            and all(not (type(option) is type(u) and option == u) for u in unique)
        ):
            unique.append(option)
    return unique
