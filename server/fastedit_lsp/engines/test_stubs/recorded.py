"""Recorded tests: ``test_<name>_recorded_<n>`` asserts what the function really returned (or
raised) for an input, when the user opted in to running their code (``tests.run``).

Characterization as Pynguin and EvoSuite do it, split in two: this module stays pure. It plans
the recording (:func:`_plan`: the calls to make, as the tests write them, and the function's
one-change variants as source, from ``candidates`` and ``variants``), reads what the recorder
observed (:func:`recording_from`), picks a handful of calls whose outcomes tell the function
apart from the most variants (:func:`choose`, a greedy cover) and renders their tests. Running
the calls is the project layer's (``project.recorder``): a subprocess with time limits.

An outcome is kept only when it can be written as Python source that evaluates back to an equal
value (literals, containers of them, sets) or is an exception the test can name (a builtin one,
or one defined in the function's own package); the recorder drops calls whose outcome changed
between two runs.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import itertools
import math
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from .candidates import (
    _annotation_base,
    _call_text,
    _candidates,
    _combinations,
    _explore,
    _is_generator,
    _Param,
    _params,
    _takes_self,
)
from .doctests import _BUILTIN_NAMES, _Context, _examples, _is_call_to
from .domain import mutates_module_state
from .render import _assert, _escape, _fit, _pattern, _render, _Test
from .targets import _FunctionNode
from .variants import default_variants, variants

#: Calls the recorder makes per function (each twice, and once per variant).
MAX_CALLS = 200
#: Variants of the function the recorder runs the calls on.
MAX_VARIANTS = 80
#: Recorded tests per function at most.
MAX_RECORDED = 8
#: Recorded tests showing distinct outcomes when none tells a variant apart.
DISTINCT_OUTCOMES = 2
#: What a test takes of an iterator the function returns (the recorder's ``ITEMS``).
ITEMS = 10
#: How a test looks at what a call returned (:attr:`Observation.wrap`).
WRAPS = ("list", "islice", "parts", "vars", "repr", "pattern")
#: Longest expected value written into a test.
MAX_VALUE_CHARS = 300
#: The text a template's call passes where the recorder puts its own (``record_worker.MARKER``).
TEXT = "__fastedit_text__"
#: Templates per function (text parameters) at most.
MAX_TEMPLATES = 3


@dataclass(frozen=True)
class RecordPlan:
    """What to run for one function: calls written as the tests write them, and variants."""

    module: str
    """The module to import (dotted)."""
    qualname: str
    """The function's qualified name in it (``Parser.parse``)."""
    calls: tuple[str, ...]
    """Call expressions (``f(1, "a")``, ``Parser().parse("x")``, ``list(gen(2))``)."""
    variants: tuple[str, ...] = ()
    """The function's ``def`` with one change each, without decorators, as source."""
    imports: tuple[str, ...] = ()
    """Import statements the calls need beside the module's own names (``import asyncio``)."""
    templates: tuple[str, ...] = ()
    """Calls with :data:`TEXT` (as a literal) for one text argument: the recorder makes them
    with texts the function's module-level values match or hold (its compiled regular
    expressions, its tables), which no reading of its source finds."""


@dataclass(frozen=True)
class Observation:
    """What one call did, and which variants did otherwise."""

    call: str
    value: object = None
    """What it returned (when ``exception`` is None)."""
    exception: tuple[str, str] | None = None
    """(module, name) of the exception it raised."""
    kills: frozenset[int] = frozenset()
    """The variants (indices into ``RecordPlan.variants``) whose outcome differed."""
    wrap: str = ""
    """How the test looks at what the call returned. An iterator: ``list``, ``value`` is all
    it yields; ``islice``, its first :data:`ITEMS` (it yields more, maybe endlessly). Iterators
    side by side: ``parts``, what each yields. A value with no literal form: ``vars``, its
    attributes; ``repr``, the text its own ``__repr__`` gives; ``pattern``, a compiled regular
    expression's source."""
    message: str | None = None
    """The exception's whole message, when the recorder found it stable."""
    warning: tuple[str, str] | None = None
    """(module, name) of the category of the first warning the call emitted (every run the
    same), which the test asserts with ``pytest.warns``."""
    warning_message: str | None = None
    """That warning's whole message, when the recorder found it matchable."""

    def expression(self) -> str:
        """The call as the test writes it (an iterator's items taken)."""
        if self.wrap == "list":
            return f"list({self.call})"
        if self.wrap == "islice":
            return f"list(islice({self.call}, {ITEMS}))"
        if self.wrap == "parts":
            return f"[list(part) for part in {self.call}]"
        if self.wrap in ("vars", "repr"):
            return f"{self.wrap}({self.call})"
        if self.wrap == "pattern":
            return f"{self.call}.pattern"
        return self.call


@dataclass(frozen=True)
class Recording:
    """What the recorder observed for one function."""

    observations: tuple[Observation, ...] = ()
    variants: int = 0
    """Variants that compiled and ran."""
    dropped: Mapping[str, int] = field(default_factory=dict)
    """Calls left out, by reason (``unstable``, ``timeout``, ``unrenderable``...)."""
    error: str = ""
    """Why nothing was recorded (the module did not import...)."""


# -- the plan ------------------------------------------------------------------------------------


def _plan(ctx: _Context) -> RecordPlan | None:
    """The calls worth recording for the context's target, and its variants; None when the
    generator cannot write a call to it (a method of a class it cannot build, an async
    generator, parameters of a type it does not model, a function that changes the module's
    state)."""
    fn = ctx.target.node
    if isinstance(fn, ast.AsyncFunctionDef) and _is_generator(fn):
        return None
    if _takes_self(ctx.target) and not ctx.instantiable:
        return None
    if mutates_module_state(fn, set(ctx.info.names)):
        return None  # its tests would change what the module's other tests see
    params, varargs, kwargs = _params(fn, skip_first=_takes_self(ctx.target))
    calls: list[str] = []

    generator = isinstance(fn, ast.FunctionDef) and _is_generator(fn)

    def text(values: Sequence[object]) -> str | None:
        call = _call_text(ctx, params, list(values))
        if call is not None and generator:
            # The recorder takes what the generator yields, at most ``ITEMS`` (it may be endless).
            call = call.removeprefix("list(").removesuffix(")")
        return call

    def add(values: Sequence[object]) -> None:
        call = text(values)
        if call is not None and call not in calls and len(calls) < MAX_CALLS:
            calls.append(call)

    # The docstring's own calls first: realistic arguments the evaluator may not follow.
    for example in _examples(fn)[0]:
        for node in ast.walk(example.tree):
            if isinstance(node, ast.Call) and _is_call_to(node, fn.name) and _literal_args(node):
                args = [ast.unparse(a) for a in node.args]
                args += [f"{k.arg}={ast.unparse(k.value)}" for k in node.keywords if k.arg]
                call = f"{ctx.call_prefix}({', '.join(args)})"
                if isinstance(fn, ast.AsyncFunctionDef):
                    call = f"asyncio.run({call})"
                if call not in calls and len(calls) < MAX_CALLS // 4:
                    calls.append(call)
    explored = _explore(ctx, params, (varargs, kwargs))
    # The evaluator's runs that go through statements no run before them did, then (below)
    # the rest: many runs may differ only in a value the function passes through.
    covered: set[int] = set()
    rest: list[Sequence[object]] = []
    for run in explored.returns:
        if run.covered <= covered:
            rest.append(run.values)
        else:
            covered |= run.covered
            add(run.values)
    for values in explored.raises.values():
        add(values)
    candidates = _candidates(fn, params, ctx.info)
    if candidates is None:
        # A parameter of a type the generator does not model: running is cheap, so the values
        # it tries where there is no hint (what the function does with them is its answer).
        plain = [dataclasses.replace(p, annotation=None) for p in params]
        candidates = _candidates(fn, plain, ctx.info)
    sweeps: list[Sequence[object]] = []
    combos: Iterable[Sequence[object]] = ()
    if candidates is not None:
        # One parameter's value changed, the others ordinary: each parameter in turn, so
        # that every one has a few of its values tried when the calls run out.
        base = [c[0] for c in candidates]
        # Then values of other shapes a run may take other paths with (text of numbers,
        # bytes, accents...), where the hint allows them.
        candidates = [
            [*options, *(v for v in _extra(param) if v not in options)]
            for param, options in zip(params, candidates, strict=True)
        ]
        # Last, where a parameter takes text: texts of several pieces the body looks for, in
        # turn, between digits and letters (``"a 1-2/3"``), what a parser that takes the text
        # apart at each of them gets through whole. (Put before the other values, they
        # pushed calls that told variants apart out of the plan: tuning modules lost some.)
        joined = _joined_texts(fn)
        candidates = [
            [*options, *(t for t in joined if t not in options)]
            if any(isinstance(o, str) for o in options)
            else options
            for options in candidates
        ]
        for rank in range(1, max(len(c) for c in candidates) if candidates else 1):
            for index, options in enumerate(candidates):
                if rank < len(options):
                    sweeps.append([*base[:index], options[rank], *base[index + 1 :]])
        found = candidates
        combos = (
            [found[i][j] for i, j in enumerate(combo)]
            for combo in _combinations([len(c) for c in found], 4 * MAX_CALLS)
        )
    # Each source in turn (one at a time, the evaluator's other runs, combinations): what
    # one source lacks (other values of the first parameter...), another has.
    sources: list[Iterator[Sequence[object]]] = [iter(sweeps), iter(rest), iter(combos)]
    while sources and len(calls) < MAX_CALLS:
        for source in list(sources):
            picked = next(source, None)
            if picked is None:
                sources.remove(source)
            else:
                add(picked)
    if not calls:
        return None
    templates: list[str] = []
    if candidates is not None:
        # A parameter the function may be given text: the recorder fills it in.
        base = [c[0] for c in candidates]
        for index, options in enumerate(candidates):
            template = text([*base[:index], TEXT, *base[index + 1 :]])
            if any(isinstance(o, str) for o in options) and template is not None:
                templates.append(template)
    # A callback of a regular expression's ``sub`` is given a match of it: those first.
    templates = [*_match_templates(ctx, fn), *templates][:MAX_TEMPLATES]
    if candidates is not None:
        # A parameter that takes an enumeration's members: the recorder makes each.
        base = [c[0] for c in candidates]
        for index, param in enumerate(params):
            for member in _member_sources(fn, param)[:MAX_MEMBER_SOURCES]:
                template = text([*base[:index], MEMBER_SLOT, *base[index + 1 :]])
                if template is not None:
                    slot = f"{MEMBERS}{member})"
                    templates.append(template.replace(f'"{MEMBER_SLOT}"', slot, 1))
    imports = ("import asyncio",) if any(c.startswith("asyncio.") for c in calls) else ()
    if any(MATCH in t for t in templates):
        imports = (*imports, "import re")
    return RecordPlan(
        ctx.info.module,
        ctx.target.qualname,
        tuple(calls),
        tuple(
            [_variant_source(fn, body) for body in variants(fn, MAX_VARIANTS, nested=True)]
            + [_variant_source(changed, changed.body) for changed in default_variants(fn)]
        ),
        imports,
        tuple(templates),
    )


#: How a member template passes a member (``record_members.MEMBERS_CALL``): the recorder writes
#: each member of the enumeration the expression inside names.
MEMBERS = "__fastedit_members__("
#: The value the plan writes where a member template's member goes (replaced by ``MEMBERS``).
MEMBER_SLOT = "__fastedit_member__"
#: Expressions per parameter whose enumeration's members are tried.
MAX_MEMBER_SOURCES = 2
_TYPING = frozenset({"Any", "Callable", "Iterable", "Iterator", "Sequence", "Mapping", "AnyStr"})
_BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor)
_EQUALITY = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot, ast.In, ast.NotIn)


def _constant_name(node: ast.expr) -> bool:
    """``ns.FLOAT``, ``Kind.A``, ``mod.Kind.A``: a dotted name, as an enumeration's member is."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _member_sources(fn: _FunctionNode, param: _Param) -> list[str]:
    """Expressions that may name a member of an enumeration the parameter takes: its default
    when that is a dotted name (``alg=ns.DEFAULT``), its hint when one (``kind: Kind``), the
    dotted names the body compares or combines it with (``alg & ns.FLOAT``, ``kind ==
    Kind.A``, ``kind in (Kind.A, Kind.B)``). The recorder keeps the ones that are."""
    found: list[str] = []
    owners: set[str] = set()

    def add(node: ast.expr | None) -> None:
        if node is not None and _constant_name(node) and isinstance(node, ast.Attribute | ast.Name):
            text = ast.unparse(node)
            # ``Style.PLAIN``, ``Style`` and ``Style.BOLD`` name one enumeration: the first.
            owner = ast.unparse(node.value) if isinstance(node, ast.Attribute) else text
            if owner not in owners and text != param.name:
                found.append(text)
                owners.add(owner)

    default = param.default_node
    if isinstance(default, ast.Attribute) or (
        isinstance(default, ast.Name) and default.id not in _BUILTIN_NAMES
    ):
        add(default)
    hint = param.annotation
    if isinstance(hint, ast.Attribute) or (
        isinstance(hint, ast.Name) and hint.id not in _BUILTIN_NAMES and hint.id not in _TYPING
    ):
        add(hint)

    def is_param(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == param.name

    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, _BITWISE):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if is_param(side) and isinstance(other, ast.Attribute):
                    add(other)
        elif isinstance(node, ast.Compare) and all(isinstance(o, _EQUALITY) for o in node.ops):
            sides = [node.left, *node.comparators]
            if any(is_param(s) for s in sides):
                for side in sides:
                    items = (
                        side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                    )
                    for item in items:
                        if isinstance(item, ast.Attribute):
                            add(item)
    return found


#: How a match template passes the match (``re.search(PATTERN, TEXT)``: the recorder writes
#: the pattern's source for ``PATTERN``, a module-level name or a literal, and texts it matches
#: for the text).
MATCH = "re.search("


def _match_templates(ctx: _Context, fn: _FunctionNode) -> list[str]:
    """Templates for a function the module hands a regular expression's ``sub`` (``subn``)
    as the replacement, directly or through a lambda (``PATTERN.sub(lambda m: f(m, 10),
    text)``): the function called with a match of that pattern."""
    if ctx.call_prefix != fn.name or fn.name not in {
        n.name for n in ctx.info.tree.body if isinstance(n, ast.FunctionDef)
    }:
        return []
    re_names = {
        alias.asname or alias.name
        for node in ctx.info.tree.body
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "re"
    }
    assigned = {
        t.id
        for node in ctx.info.tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    found: list[str] = []
    for node in ast.walk(ctx.info.tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("sub", "subn")
            and isinstance(node.func.value, ast.Name)
        ):
            continue
        owner = node.func.value.id
        if owner in re_names and len(node.args) >= 2:
            pattern, repl = node.args[0], node.args[1]
        elif owner in assigned and node.args:
            pattern, repl = node.func.value, node.args[0]
        else:
            continue
        if isinstance(pattern, ast.Name) and pattern.id not in assigned:
            continue
        if not (
            isinstance(pattern, ast.Name)
            or (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str))
        ):
            continue
        match = f"{MATCH}{ast.unparse(pattern)}, {TEXT!r})".replace(repr(TEXT), f'"{TEXT}"')
        args: list[str] | None = None
        if isinstance(repl, ast.Name) and repl.id == fn.name:
            args = [match]
        elif (
            isinstance(repl, ast.Lambda)
            and len(repl.args.args) == 1
            and isinstance(repl.body, ast.Call)
            and isinstance(repl.body.func, ast.Name)
            and repl.body.func.id == fn.name
            and not repl.body.keywords
        ):
            param = repl.args.args[0].arg
            args = []
            for arg in repl.body.args:
                if isinstance(arg, ast.Name) and arg.id == param:
                    args.append(match)
                elif isinstance(arg, ast.Constant):
                    args.append(ast.unparse(arg))
                else:
                    args = None
                    break
        if args is not None:
            template = f"{fn.name}({', '.join(args)})"
            if template not in found:
                found.append(template)
    return found[:MAX_TEMPLATES]


#: Values of other shapes the recorder tries, by the parameter's hint (the static search's
#: candidates come first): numbers written as text, bytes, non-ASCII and blank text, floats
#: that are not whole, very large and very small numbers.
_TEXTS: list[object] = ["1.5", "-1", "inf", "A b", "é", "a\nb", "\t", "0x1f", "1e3"]
_NUMBERS: list[object] = [0.5, -2.5, 1e-9, 1e9, 10**20, -(10**20), math.inf, -math.inf, math.nan]
#: Sequences of several items, out of order, with repeats: what sorting, grouping and
#: splitting code treats otherwise than one item or none.
_TEXT_ITEMS: list[object] = [["b", "a10", "a2", "A1", "a2"], ["1.5", "-1", "10", ""], ["a b", "é"]]
_NUMBER_ITEMS: list[object] = [[3, 1, 2, 2], [-1.5, 0, 10], [0, 0]]
#: Bytes beyond ASCII: UTF-8 of an accent, a byte no UTF-8 starts with, a line break.
_BYTES: list[object] = [b"caf\xc3\xa9", b"\xff\x80", b"a\r\nb", b"A b"]
_EXTRAS: dict[str | None, list[object]] = {
    None: [
        b"a",
        b"",
        1.5,
        *_TEXTS[:6],
        10**20,
        ("a", 1),
        [3, 1, 2, 2],
        ["b", "a10", "a2"],
        *_BYTES[:2],
        math.inf,
        math.nan,
    ],
    "str": _TEXTS,
    "bytes": _BYTES,
    "float": _NUMBERS,
    "int": [-2, 255, 256, 1000, 10**20, -(10**20)],
}
#: Hints whose values the candidates already cover (no values of other shapes for them).
_MODELLED = frozenset({"bool", "dict", "Dict", "Mapping", "tuple", "Tuple", "Callable", "set"})
_SEQUENCES = {"list", "List", "Sequence", "Iterable", "Collection", "MutableSequence"}


def _extra(param: _Param) -> list[object]:
    if param.kind == "varargs":
        return []
    base, args = _annotation_base(param.annotation)
    if base in _SEQUENCES:
        # Several items of the hinted type (texts, numbers; of any type: both).
        item = _annotation_base(args[0])[0] if args else None
        if item == "str":
            return _TEXT_ITEMS
        if item in ("int", "float"):
            return _NUMBER_ITEMS
        return [*_TEXT_ITEMS[:1], *_NUMBER_ITEMS[:1]] if item in (None, "Any", "object") else []
    if base in _EXTRAS:
        return _EXTRAS[base]
    # No hint, ``Any``, or one the generator does not model (an alias, ``Number``): values of
    # every shape (what the function does with them is its answer).
    return _EXTRAS[None] if base not in _MODELLED else []


#: Texts :func:`_joined_texts` gives at most.
MAX_JOINED = 16
#: Pieces :func:`_joined_texts` joins (the body's first ones) and their longest.
_JOINED_PIECES = 4
_PIECE_CHARS = 3
_SPLITS = frozenset({"split", "rsplit", "partition", "rpartition"})
_TAKES_APART = _SPLITS | {"find", "rfind", "index", "rindex", "splitlines"}


def _joined_texts(fn: _FunctionNode) -> list[str]:
    """Texts made of three of the short texts the body holds (``"/"``, ``"-"``; a space where
    it splits at whitespace), each between digits or letters, in every order: what a parser
    that takes the text apart at each in turn gets through whole (``"1 2-3/4"``). None for a
    function that takes no text apart (``split``, ``partition``, ``find``...)."""
    pieces: list[str] = []
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _SPLITS
            and (
                not node.args
                or (isinstance(node.args[0], ast.Constant) and node.args[0].value is None)
            )
            and " " not in pieces
        ):
            pieces.append(" ")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and 0 < len(node.value) <= _PIECE_CHARS
            and not node.value.isalnum()
            and node.value not in pieces
        ):
            pieces.append(node.value)
    pieces = pieces[:_JOINED_PIECES]
    splits = any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _TAKES_APART
        for node in ast.walk(fn)
    )
    if len(pieces) < 2 or not splits:
        return []  # a function that takes no text apart
    found: list[str] = []
    for order in itertools.permutations(pieces, min(3, len(pieces))):
        found.append("1" + "".join(f"{p}{n}" for n, p in enumerate(order, 2)))
        found.append("a" + "".join(f"{p}{n}" for n, p in enumerate(order, 1)))
    return found[:MAX_JOINED]


def _literal_args(call: ast.Call) -> bool:
    try:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            ast.literal_eval(arg)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return all(k.arg for k in call.keywords) and not any(
        isinstance(a, ast.Starred) for a in call.args
    )


def _variant_source(fn: _FunctionNode, body: list[ast.stmt]) -> str:
    changed = copy.copy(fn)
    changed.body = body
    changed.decorator_list = []
    return ast.unparse(ast.fix_missing_locations(changed))


# -- what the recorder observed -----------------------------------------------------------------


def decode(tagged: object) -> object:
    """A value from the recorder's tagged form (``["int", "3"]``, ``["list", [...]]``...).

    Raises :class:`ValueError` for anything else.
    """
    if not isinstance(tagged, list) or not tagged or not isinstance(tagged[0], str):
        raise ValueError(f"not a recorded value: {tagged!r}")
    tag, *rest = tagged
    arg = rest[0] if rest else None
    scalars = {"int": int, "float": float, "str": str}
    if tag == "none":
        return None
    if tag == "bool" and isinstance(arg, bool):
        return arg
    if tag in scalars and isinstance(arg, str):
        return scalars[tag](arg)
    if tag == "bytes" and isinstance(arg, str):
        return bytes.fromhex(arg)
    if tag == "complex" and len(rest) == 2:
        return complex(float(rest[0]), float(rest[1]))
    if isinstance(arg, list):
        if tag == "list":
            return [decode(v) for v in arg]
        if tag == "tuple":
            return tuple(decode(v) for v in arg)
        if tag in ("set", "frozenset"):
            items = {decode(v) for v in arg}
            return items if tag == "set" else frozenset(items)
        if tag == "dict":
            return {decode(k): decode(v) for k, v in arg}
    raise ValueError(f"not a recorded value: {tagged!r}")


def recording_from(answer: Mapping[str, object]) -> Recording:
    """A :class:`Recording` from the recorder's JSON answer for one function; observations it
    cannot read are left out."""
    observations: list[Observation] = []
    raw = answer.get("observations")
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("call"), str):
            continue
        kills = frozenset(k for k in item.get("kills") or [] if isinstance(k, int))
        exc = item.get("exception")
        wrap = item.get("wrap") if item.get("wrap") in WRAPS else ""
        assert isinstance(wrap, str)
        warned = item.get("warning")
        warning = (
            (warned[0], warned[1])
            if isinstance(warned, list)
            and len(warned) == 2
            and all(isinstance(w, str) for w in warned)
            else None
        )
        if "warning" in item and warning is None:
            continue  # its kills count the warning, which the test could not assert
        warned_message = item.get("warning_message")
        warning_message = warned_message if isinstance(warned_message, str) else None
        try:
            if isinstance(exc, list) and len(exc) == 2 and all(isinstance(e, str) for e in exc):
                message = item.get("message")
                observations.append(
                    Observation(
                        item["call"],
                        None,
                        (exc[0], exc[1]),
                        kills,
                        wrap,
                        message if isinstance(message, str) else None,
                        warning,
                        warning_message,
                    )
                )
            elif "value" in item:
                value = decode(item["value"])
                observations.append(
                    Observation(
                        item["call"], value, None, kills, wrap, None, warning, warning_message
                    )
                )
        except (ValueError, TypeError, OverflowError):
            continue
    dropped = answer.get("dropped")
    count = answer.get("variants")
    error = answer.get("error")
    return Recording(
        tuple(observations),
        count if isinstance(count, int) else 0,
        {k: v for k, v in dropped.items() if isinstance(v, int)}
        if isinstance(dropped, dict)
        else {},
        error if isinstance(error, str) else "",
    )


# -- the tests -----------------------------------------------------------------------------------


def _source(value: object) -> str | None:
    """Python source that evaluates to a value equal to ``value`` (sets included), or None."""
    return _render(value, equality=True)


def _exception_name(ctx: _Context, exception: tuple[str, str], *, dry: bool = False) -> str | None:
    """How the test names the exception (importing it when needed, unless ``dry``): a builtin,
    one of the function's own package, or one of a public standard library module; None
    otherwise."""
    module, name = exception
    if not name.isidentifier():
        return None
    if module == "builtins":
        return name
    if module.split(".")[0] == ctx.info.module.split(".")[0]:
        if not dry:
            ctx.imports.from_(module, name)
        return name
    public = not any(part.startswith("_") for part in module.split("."))
    if public and module.split(".")[0] in sys.stdlib_module_names:
        if not dry:
            ctx.imports.plain(module)  # ``re.error``, ``json.decoder.JSONDecodeError``
        return f"{module}.{name}"
    return None


#: Names a recorded call may use that the test imports itself.
_OWN_NAMES = frozenset({"asyncio", "re", "islice"})


def _names_in(ctx: _Context, call: str) -> set[str] | None:
    """The module's names the call uses beside the function (an enumeration's member,
    ``ns.FLOAT``), which the test imports; None when one is not a name a test can import."""
    try:
        tree = ast.parse(call, mode="eval")
    except SyntaxError:
        return None
    local = {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
    root = ctx.call_prefix.split(".")[0].split("(")[0]
    used = {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and n.id not in local and n.id != root
    }
    wanted = used - _BUILTIN_NAMES - _OWN_NAMES
    if any(ctx.info.binding(n) is None and not ctx.star_provides(n) for n in wanted):
        return None
    return wanted


def choose(observations: Sequence[Observation], limit: int = MAX_RECORDED) -> list[Observation]:
    """At most ``limit`` observations: each the one that tells apart the most variants the
    ones before it do not (the shorter test on a tie); when none tells any apart, one per
    distinct outcome (at most :data:`DISTINCT_OUTCOMES`), to pin down what the function does."""
    chosen: list[Observation] = []
    killed: set[int] = set()
    while len(chosen) < limit:
        best: Observation | None = None
        key = (0, 0)
        for obs in observations:
            gain = len(obs.kills - killed)
            candidate = (gain, -len(obs.call) - len(repr(obs.value)))
            if gain and (best is None or candidate > key):
                best, key = obs, candidate
        if best is None:
            break
        chosen.append(best)
        killed |= best.kills
    # None tells a variant apart: distinct outcomes, to pin down what the function does.
    shown: set[str] = set()
    most = 0 if chosen else min(limit, DISTINCT_OUTCOMES)
    for obs in observations:
        if len(chosen) >= most:
            break
        if _outcome(obs) not in shown:
            chosen.append(obs)
            shown.add(_outcome(obs))
    return chosen


def _outcome(obs: Observation) -> str:
    warned = f"{obs.warning!r}:{obs.warning_message!r}:" if obs.warning else ""
    if obs.exception:
        return f"{warned}{obs.exception!r}:{obs.message!r}"
    return f"{warned}{type(obs.value).__name__}:{obs.value!r}"


def _recorded_tests(
    ctx: _Context, prefix: str, recording: Recording, shown: Iterable[str]
) -> list[_Test]:
    """Tests of the chosen observations (calls the other tests already make are left out)."""
    lines = list(shown)
    usable: list[Observation] = []
    for obs in recording.observations:
        if any(obs.call in line for line in lines) or _names_in(ctx, obs.call) is None:
            continue
        if obs.exception is None:
            rendered = _source(obs.value)
            if rendered is None or len(rendered) > MAX_VALUE_CHARS:
                continue
        elif _exception_name(ctx, obs.exception, dry=True) is None:
            continue
        usable.append(obs)
    tests: list[_Test] = []
    for obs in choose(usable):
        name = f"test_{prefix}_recorded_{len(tests) + 1}"
        call = obs.expression()
        # Inside ``pytest.warns``, the lines are indented once more.
        indent = 4 if obs.warning is not None else 0
        if obs.exception is not None:
            exc = _exception_name(ctx, obs.exception)
            if exc is None:
                continue
            raises = f"pytest.raises({exc})"
            if obs.message is not None:
                # The whole message: a slip in it (or another raise of the same class) fails.
                pattern = _pattern("^" + _escape(obs.message) + "$")
                raises = _fit(f"pytest.raises({exc}, match={pattern})", base=5 + indent)
            body = [f"with {raises}:", f"    {_fit(call, base=4 + indent)}"]
        else:
            rendered = _source(obs.value) or ""
            if obs.value is None or isinstance(obs.value, bool):
                body = [_assert(call, "is", rendered)]
            else:
                body = [_assert(_fit(call, base=7 + indent), "==", rendered)]
        if obs.warning is not None:
            # The warning it emits (its whole message): a slip that drops or changes it fails.
            category = _exception_name(ctx, obs.warning) or "Warning"
            warns = f"pytest.warns({category})"
            if obs.warning_message is not None:
                pattern = _pattern("^" + _escape(obs.warning_message) + "$")
                warns = _fit(f"pytest.warns({category}, match={pattern})", base=5)
            lines = [line for part in body for line in part.split("\n")]
            body = [f"with {warns}:", *(f"    {line}" for line in lines)]
        ctx.need(_names_in(ctx, obs.call) or set())
        if obs.wrap == "islice":
            ctx.imports.from_("itertools", "islice")
        if "asyncio." in obs.call:
            ctx.imports.plain("asyncio")
        if MATCH in obs.call:
            ctx.imports.plain("re")
        tests.append(_Test(name, body, kind="recorded"))
    return tests


#: How a repaired example's comment starts (:func:`amended_tests` finds them by it).
AMENDED = "# The docstring shows that it"


def amended_tests(generated: str) -> list[str]:
    """The tests of a generated module whose docstring example was repaired from the
    recording (:func:`_amend_examples`)."""
    found: list[str] = []
    for block in re.split(r"\n(?=def |@)", generated):
        name = re.match(r"def (test_\w+)\(", block)
        if name is not None and AMENDED in block:
            found.append(name.group(1))
    return found


def _key(node: ast.expr) -> str:
    return ast.dump(node, annotate_fields=False)


def _raises_of(stmt: ast.With) -> tuple[ast.Call, ast.expr] | None:
    """``with pytest.raises(...): call``: the ``raises`` call and the call inside."""
    if len(stmt.items) != 1 or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Expr):
        return None
    raises = stmt.items[0].context_expr
    if not (isinstance(raises, ast.Call) and ast.unparse(raises.func) == "pytest.raises"):
        return None
    return raises, stmt.body[0].value


def _amend_examples(ctx: _Context, tests: list[_Test], recording: Recording) -> list[str]:
    """Docstring examples the function, run, does not do as shown (a stale docstring): each
    such check is written as the recorder saw it, with a comment saying what the docstring
    shows. A test that would fail on the unchanged code is repaired, as ``tests.run`` asks.
    Returns the names of the tests repaired."""
    seen: dict[str, Observation] = {}
    for obs in recording.observations:
        if obs.wrap:
            continue
        with contextlib.suppress(SyntaxError):
            seen.setdefault(_key(ast.parse(obs.call, mode="eval").body), obs)
    repaired: list[str] = []
    for test in tests:
        if test.kind != "example" or not seen:
            continue
        text = "\n".join(test.body)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.split("\n")
        for stmt in reversed(tree.body):
            amended = _amended(ctx, text, stmt, seen)
            if amended is not None and stmt.end_lineno is not None:
                lines[stmt.lineno - 1 : stmt.end_lineno] = amended
        if lines != text.split("\n"):
            test.body = lines
            repaired.append(test.name)
    return repaired


def _amended(
    ctx: _Context, text: str, stmt: ast.stmt, seen: Mapping[str, Observation]
) -> list[str] | None:
    """The statement as the recorder saw its call behave, or None when it agrees (or the
    recorder did not make that call)."""
    call: ast.expr | None = None
    shown = ""
    if (
        isinstance(stmt, ast.Assert)
        and isinstance(stmt.test, ast.Compare)
        and len(stmt.test.ops) == 1
        and isinstance(stmt.test.ops[0], ast.Eq | ast.Is)
    ):
        call, expected_node = stmt.test.left, stmt.test.comparators[0]
        try:
            expected = ast.literal_eval(expected_node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        obs = seen.get(_key(call))
        if obs is None or (obs.exception is None and expected == obs.value):
            return None
        shown = f"returns {ast.unparse(expected_node)}"
    elif isinstance(stmt, ast.With) and (found := _raises_of(stmt)) is not None:
        raises, call = found
        obs = seen.get(_key(call))
        if obs is None:
            return None
        if obs.exception is not None:
            name = _exception_name(ctx, obs.exception, dry=True)
            same = raises.args and ast.unparse(raises.args[0]).split(".")[-1] == obs.exception[1]
            pattern = next((k.value for k in raises.keywords if k.arg == "match"), None)
            if same and (
                pattern is None
                or obs.message is None
                or not isinstance(pattern, ast.Constant)
                or not isinstance(pattern.value, str)
                or re.search(pattern.value, obs.message) is not None
            ):
                return None
            if name is None:
                return None
        shown = f"raises {ast.unparse(raises.args[0]) if raises.args else 'an exception'}"
    else:
        return None
    source = ast.get_source_segment(text, call) or ast.unparse(call)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    note = f"{AMENDED} {shown}; run, it does this (tests.run)."
    if obs.exception is not None:
        exc = _exception_name(ctx, obs.exception)
        raises_text = f"pytest.raises({exc})"
        if obs.message is not None:
            pattern_text = _pattern("^" + _escape(obs.message) + "$")
            raises_text = _fit(f"pytest.raises({exc}, match={pattern_text})", base=5)
        return [note, f"with {raises_text}:", f"    {_fit(source, base=4)}"]
    rendered = _source(obs.value)
    if rendered is None or len(rendered) > MAX_VALUE_CHARS:
        return None
    op = "is" if obs.value is None or isinstance(obs.value, bool) else "=="
    return [note, *_assert(_fit(source, base=7), op, rendered).split("\n")]


__all__ = [
    "AMENDED",
    "MAX_CALLS",
    "MAX_RECORDED",
    "MAX_VARIANTS",
    "Observation",
    "RecordPlan",
    "Recording",
    "amended_tests",
    "choose",
    "decode",
    "recording_from",
]
