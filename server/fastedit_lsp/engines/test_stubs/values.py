"""The value model of the small evaluator for reaching ``raise`` statements: the unknown value
(a call into user code, an unknown attribute...), the evaluator's control-flow exceptions,
``self`` as the attributes ``__init__`` set, and the builtin values, functions, pure methods of
``str``/``list``/``dict`` and operators the evaluator may apply, with size limits and a step
budget.

These are the evaluator's public types (``UNKNOWN``, ``Raised``, ``Return``, ``Instance``,
``Iter``, ...): :mod:`.evaluator` and the other modules of the package import them by these
names, not as private ones.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class _Unknown:
    """A value this module does not model (a call into user code, an unknown attribute...)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN: object = _Unknown()
_OMIT: object = type("_Omit", (), {"__repr__": lambda self: "<default>"})()


class Abort(Exception):  # noqa: N818 (control flow of the evaluator)
    """The path depends on something unknown, or the step budget is spent."""


class Raised(Exception):  # noqa: N818 (control flow of the evaluator)
    """An exception inside the evaluated function (from a ``raise`` statement or a builtin)."""

    def __init__(
        self, type_name: str | None, node: ast.Raise | None = None, message: str | None = None
    ) -> None:
        super().__init__(type_name)
        self.type_name = type_name
        self.node = node
        #: The exception's one argument, when it is a string computed exactly.
        self.message = message


class Return(Exception):  # noqa: N818 (control flow of the evaluator)
    """A ``return`` statement, with the value it returns."""

    def __init__(self, value: object = None) -> None:
        super().__init__()
        self.value = value


@dataclass(eq=False)
class UserFunc:
    """A plain function of the user's project: the evaluator walks its body in turn, with
    ``module`` (a ``_ModuleInfo``) as its globals."""

    node: ast.FunctionDef
    module: object = None
    #: For a function defined inside the one walked: the scope it reads (late binding).
    scope: dict[str, object] | None = None

    def __deepcopy__(self, memo: dict[int, object]) -> UserFunc:
        return self  # code, not data


class Break(Exception):  # noqa: N818 (control flow of the evaluator)
    pass


class Continue(Exception):  # noqa: N818 (control flow of the evaluator)
    pass


class Instance:
    """``self``: the attributes ``__init__`` set, as far as they are known."""

    def __init__(self, attrs: dict[str, object]) -> None:
        self.attrs = attrs


class Iter:
    """An iterator over a list of known values (what ``iter([1, 2])`` gives a test): a real
    iterator, so builtins consume it as they would the real one (``sum``, ``list``, ``any``
    stop where Python stops), with no ``len`` and no indexing. Its text is never shown: an
    f-string or ``str()`` of it is unknown (Python shows an address). Its attributes have
    names no code asks ``hasattr`` about (``hasattr(x, "items")`` is a common mapping test)."""

    __slots__ = ("_fastedit_at", "_fastedit_items")

    def __init__(self, items: list[object]) -> None:
        self._fastedit_items = items
        self._fastedit_at = 0

    def __iter__(self) -> Iter:
        return self

    def __next__(self) -> object:
        if self._fastedit_at >= len(self._fastedit_items):
            raise StopIteration
        self._fastedit_at += 1
        return self._fastedit_items[self._fastedit_at - 1]

    def __repr__(self) -> str:
        return f"iter({_rest(self)!r})"


def _rest(value: Iter) -> list[object]:
    """The values an iterator has not given yet."""
    return value._fastedit_items[value._fastedit_at :]


def _iter(value: object) -> Iter:
    """``iter(value)`` on the values the evaluator models."""
    if isinstance(value, Iter):
        return value
    if isinstance(value, set | frozenset) and len(value) > 1:
        raise Abort  # the order it iterates in differs per process
    if isinstance(value, str | bytes | list | tuple | dict | set | frozenset | range):
        return Iter(list(value))
    raise TypeError(f"{type(value).__name__} object is not iterable")


def _next(value: object, *default: object) -> object:
    if not isinstance(value, Iter):
        raise TypeError("not an iterator")
    return next(value, *default)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: The longest text a regular expression is applied to: short enough that a pattern that
#: backtracks badly still answers at once.
_REGEX_TEXT = 40


class Regex:
    """A compiled regular expression (``re.compile`` of a pattern the code spells out)."""

    __slots__ = ("_fastedit_pattern",)

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self._fastedit_pattern = pattern

    def match(self, text: object, *args: int) -> object:
        return _wrap(self._fastedit_pattern.match(_text(text), *args))

    def search(self, text: object, *args: int) -> object:
        return _wrap(self._fastedit_pattern.search(_text(text), *args))

    def fullmatch(self, text: object, *args: int) -> object:
        return _wrap(self._fastedit_pattern.fullmatch(_text(text), *args))

    def sub(self, repl: object, text: object, count: int = 0) -> object:
        return self._fastedit_pattern.sub(_replacement(repl), _text(text), count)

    def subn(self, repl: object, text: object, count: int = 0) -> object:
        return self._fastedit_pattern.subn(_replacement(repl), _text(text), count)

    def split(self, text: object, maxsplit: int = 0) -> object:
        return self._fastedit_pattern.split(_text(text), maxsplit)

    def findall(self, text: object, *args: int) -> object:
        return self._fastedit_pattern.findall(_text(text), *args)

    def finditer(self, text: object, *args: int) -> object:
        return Iter([Match(m) for m in self._fastedit_pattern.finditer(_text(text), *args)])


class Match:
    """What a match of a ``Regex`` found."""

    __slots__ = ("_fastedit_match",)

    def __init__(self, match: re.Match[str]) -> None:
        self._fastedit_match = match

    def group(self, *which: int | str) -> object:
        return self._fastedit_match.group(*which)

    def groups(self, default: object = None) -> object:
        return self._fastedit_match.groups(default)

    def groupdict(self, default: object = None) -> object:
        return self._fastedit_match.groupdict(default)

    def start(self, which: int | str = 0) -> int:
        return self._fastedit_match.start(which)

    def end(self, which: int | str = 0) -> int:
        return self._fastedit_match.end(which)

    def span(self, which: int | str = 0) -> tuple[int, int]:
        return self._fastedit_match.span(which)

    def __getitem__(self, which: int | str) -> object:
        return self._fastedit_match[which]


def _text(value: object) -> str:
    if isinstance(value, bytes | Iter):
        raise Abort  # a bytes pattern, or Python's message shows an address
    if not isinstance(value, str):
        raise TypeError("expected string or bytes-like object")
    if len(value) > _REGEX_TEXT:
        raise Abort
    return value


def _replacement(value: object) -> str:
    if not isinstance(value, str):
        raise Abort  # a function called per match: not modelled
    return value


def _wrap(found: re.Match[str] | None) -> Match | None:
    return Match(found) if found is not None else None


def _compile(pattern: object, flags: int = 0) -> Regex:
    if isinstance(pattern, Regex):
        return pattern
    if not isinstance(pattern, str) or not isinstance(flags, int):
        raise Abort
    return Regex(re.compile(pattern, flags))


#: How many arguments ``re.<name>`` takes after the pattern and before ``flags``.
_BEFORE_FLAGS = {"match": 1, "search": 1, "fullmatch": 1, "findall": 1, "finditer": 1, "split": 2}


def _regex_function(name: str) -> Callable[..., object]:
    """``re.<name>(pattern, ...)``: the method of the compiled pattern."""
    before = _BEFORE_FLAGS.get(name, 3)

    def call(pattern: object, *args: object, flags: object = 0, **kwargs: object) -> object:
        if len(args) > before:
            args, flags = args[:before], args[before]
        if not isinstance(flags, int):
            raise Abort
        return getattr(_compile(pattern, flags), name)(*args, **kwargs)

    return call


# Pure functions of the standard library's ``math`` (no factorial, comb or perm: unbounded).
_MATH_FUNCS = _words(
    "isnan isinf isfinite floor ceil trunc fabs sqrt log log10 log2 exp pow copysign "
    "fmod modf frexp ldexp hypot gcd isclose degrees radians sin cos tan atan atan2"
)
_SAFE_TYPES = (
    *(str, int, float, bool, bytes, list, tuple, dict, set, frozenset, type(None)),
    *(range, Regex, Match),
)
_REGEX_METHODS = ("match", "search", "fullmatch", "sub", "subn", "split", "findall", "finditer")
_REGEX_FLAGS = _words("I IGNORECASE M MULTILINE S DOTALL X VERBOSE A ASCII U UNICODE")
_UNBOUND_STR = _words(
    "strip lstrip rstrip lower upper casefold title capitalize swapcase isdigit isalpha "
    "isalnum isspace isupper islower split join startswith endswith"
)


def _eager(lazy: Callable[..., Iterator[object]]) -> Callable[..., object]:
    def call(*args: object, **kwargs: object) -> object:
        try:
            items = list(itertools.islice(lazy(*args, **kwargs), MAX_SIZE + 1))
        except Exception:
            raise Abort from None
        if len(items) > MAX_SIZE:
            raise Abort
        return Iter(items)

    return call


def _materialized(items: Iterator[tuple[object, Iterator[object]]]) -> Iterator[object]:
    """``groupby``'s groups, each read out before the next key is taken."""
    for key, group in items:
        yield key, Iter(list(group))


def _finite_repeat(value: object, times: int) -> Iterator[object]:
    return itertools.repeat(value, times)


#: ``itertools`` functions that end on finite arguments (``count``, ``cycle`` and an endless
#: ``repeat`` do not): computed at once, as ``map`` and ``zip`` are.
_ITERTOOLS: dict[str, Callable[..., object]] = {
    f"itertools.{name}": _eager(getattr(itertools, name))
    for name in (
        *("islice", "chain", "zip_longest", "accumulate", "compress", "takewhile"),
        *("dropwhile", "filterfalse", "starmap", "pairwise", "product", "permutations"),
        *("combinations", "combinations_with_replacement"),
    )
}
_ITERTOOLS["itertools.chain.from_iterable"] = _eager(itertools.chain.from_iterable)
_ITERTOOLS["itertools.groupby"] = _eager(lambda *a, **k: _materialized(itertools.groupby(*a, **k)))
_ITERTOOLS["itertools.repeat"] = _eager(_finite_repeat)


def _fspath(path: object) -> object:
    """``os.fspath`` on the values the evaluator makes (none is a path object)."""
    if isinstance(path, str | bytes):
        return path
    raise TypeError("expected str, bytes or os.PathLike object")


def _pow(base: object, exponent: object, modulus: object = None) -> object:
    if modulus is None and not (isinstance(exponent, int) and abs(exponent) <= 64):
        raise Abort  # unbounded
    return pow(base, exponent, modulus)  # type: ignore[call-overload]


def _finite(value: object) -> object:
    if isinstance(value, Iter):
        return _rest(value)
    return value


SAFE_FUNCS: dict[str, Callable[..., object]] = {
    "len": len,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "sum": sum,
    "any": any,
    "all": all,
    "sorted": sorted,
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "dict": dict,
    "ord": ord,
    "chr": chr,
    "repr": repr,
    "callable": callable,
    "divmod": divmod,
    "hasattr": hasattr,  # on builtin values only: no user code runs
    "iter": _iter,  # one argument only (the two-argument form calls a function)
    "next": _next,
    "pow": lambda *args: _pow(*args),
    "range": range,  # a real range (``safe`` bounds its length)
    # Lazy in Python, computed at once here: what they would raise while consumed (or what a
    # function they call does) makes the path unknown.
    **{name: _eager(getattr(builtins, name)) for name in ("map", "filter", "zip", "enumerate")},
    "reversed": _eager(reversed),
    **_ITERTOOLS,
    "os.fspath": _fspath,
    "re.compile": _compile,
    "re.escape": lambda text: re.escape(_text(text)),
    **{f"re.{name}": _regex_function(name) for name in _REGEX_METHODS},
    **{f"math.{name}": getattr(math, name) for name in sorted(_MATH_FUNCS)},
    # Methods through their class (``key=str.lower``, ``str.maketrans(...)``).
    "str.maketrans": str.maketrans,
    "dict.fromkeys": lambda keys, value=None: dict.fromkeys(_finite(keys), value),  # type: ignore[call-overload]
    **{f"str.{name}": getattr(str, name) for name in sorted(_UNBOUND_STR)},
}
_SAFE_CONSTANTS: dict[str, object] = {
    **{f"math.{name}": getattr(math, name) for name in ("pi", "e", "tau", "inf", "nan")},
    **{f"re.{name}": int(getattr(re, name)) for name in _REGEX_FLAGS},
}
#: Builtins whose result the evaluator iterates at once (in ``for`` and comprehensions only:
#: elsewhere they are lazy objects it does not model).
LAZY_FUNCS: dict[str, Callable[..., object]] = {
    "enumerate": enumerate,
    "zip": zip,
    "reversed": reversed,
    "range": range,
}


@dataclass(eq=False)
class Lambda:
    """A ``lambda`` of the walked code, with the scope it reads (late binding, as Python's)."""

    node: ast.Lambda
    scope: dict[str, object]

    def __deepcopy__(self, memo: dict[int, object]) -> Lambda:
        return self  # it reads its scope, it does not own it


@dataclass(frozen=True)
class ModuleRef:
    """A standard library module the evaluator models (``math``)."""

    name: str


_TYPE_NAMES: dict[str, type] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "bytes": bytes,
    "list": list,
    "tuple": tuple,
    "dict": dict,
    "set": set,
    "frozenset": frozenset,
    "complex": complex,
}


SAFE_METHODS: dict[type, frozenset[str]] = {
    str: _words(
        "format strip lstrip rstrip lower upper casefold title capitalize startswith endswith "
        "isdigit isdecimal isnumeric isalpha isalnum isspace isidentifier islower isupper istitle "
        "split rsplit splitlines partition rpartition replace count find rfind index rindex join "
        "removeprefix removesuffix encode translate zfill ljust rjust center expandtabs swapcase "
        "isascii isprintable"
    ),
    bytes: _words("decode startswith endswith strip split count find"),
    list: _words("count index copy append extend insert pop remove reverse"),
    tuple: _words("count index"),
    dict: _words("get keys values items copy pop popitem setdefault update"),
    set: _words("add discard copy union intersection difference issubset issuperset"),
    frozenset: _words("union intersection difference issubset issuperset"),
    int: _words("bit_length"),
    float: _words("is_integer"),
    Regex: frozenset(_REGEX_METHODS),
    Match: _words("group groups groupdict start end span"),
}
MAX_SIZE = 2000
STEPS = 3000


def safe(value: object) -> bool:
    if isinstance(value, Iter):
        rest = _rest(value)
        return len(rest) <= MAX_SIZE and all(safe(v) for v in rest)
    if isinstance(value, Func):
        return value.name in SAFE_FUNCS  # a builtin function passed as a value (``key=len``)
    if isinstance(value, Lambda | UserFunc):
        return True  # walked by the evaluator when called
    if type(value) not in _SAFE_TYPES:
        return False
    if isinstance(value, str | bytes):
        return len(value) <= MAX_SIZE
    if isinstance(value, int):
        return value.bit_length() <= 512
    if isinstance(value, range):
        return len(value) <= MAX_SIZE
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) <= MAX_SIZE and all(safe(v) for v in value)
    if isinstance(value, dict):
        return len(value) <= MAX_SIZE and all(safe(k) and safe(v) for k, v in value.items())
    return True


@dataclass
class Method:
    value: object
    name: str


@dataclass
class Func:
    name: str


BINOPS: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: lambda a, b: a + b,  # type: ignore[operator]
    ast.Sub: lambda a, b: a - b,  # type: ignore[operator]
    ast.Mult: lambda a, b: a * b,  # type: ignore[operator]
    ast.Div: lambda a, b: a / b,  # type: ignore[operator]
    ast.FloorDiv: lambda a, b: a // b,  # type: ignore[operator]
    ast.Mod: lambda a, b: a % b,  # type: ignore[operator]
    ast.Pow: lambda a, b: a**b,  # type: ignore[operator]
    ast.BitAnd: lambda a, b: a & b,  # type: ignore[operator]
    ast.BitOr: lambda a, b: a | b,  # type: ignore[operator]
    ast.BitXor: lambda a, b: a ^ b,  # type: ignore[operator]
    ast.LShift: lambda a, b: a << b,  # type: ignore[operator]
    ast.RShift: lambda a, b: a >> b,  # type: ignore[operator]
}
CMPOPS: dict[type[ast.cmpop], Callable[[object, object], object]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
    ast.In: lambda a, b: a in b,  # type: ignore[operator]
    ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
}
