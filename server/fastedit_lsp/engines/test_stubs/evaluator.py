"""A small evaluator for reaching ``raise`` and ``return`` statements: ``_Evaluator`` walks a
function body with candidate argument values this module made itself. It understands literals,
comparisons, f-strings, ``isinstance``, ``len``, truthiness, the pure methods of
``str``/``list``/``dict``, iterators over known values (``iter``, ``next``, ``for``), and calls
of the module's own plain functions (whose bodies it walks in turn, a few levels deep); anything
else (a call into other code, an attribute of an unknown object) is unknown, and a branch that
depends on an unknown is not taken. The user's functions are never called. It records the
statements a run went through (``covered``) and whether it approximated anything (``inexact``:
the order of a set), so that a value it computed is used as an expected result only when it is
exactly what Python computes.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Callable, Sequence

from .bindings import _ModuleInfo
from .scope import (
    _ITERATOR_TYPES,
    _dotted,
    _imported,
    _is_suppress,
    _Scope,
    _transparent,
    _yields,
)
from .values import (
    BINOPS,
    CMPOPS,
    LAZY_FUNCS,
    MAX_SIZE,
    SAFE_FUNCS,
    SAFE_METHODS,
    STEPS,
    UNKNOWN,
    Abort,
    Break,
    Continue,
    Func,
    Instance,
    Iter,
    Lambda,
    Match,
    Method,
    ModuleRef,
    Raised,
    Regex,
    Return,
    UserFunc,
    safe,
)

#: How deep calls of the module's own functions are followed.
_MAX_DEPTH = 3
#: Builtins whose result does not depend on the order of a set argument.
_ORDER_FREE = frozenset(
    {"len", "sorted", "min", "max", "any", "all", "set", "frozenset", "bool", "sum"}
)
_ORDER_FREE_METHODS = frozenset(
    {"union", "intersection", "difference", "issubset", "issuperset", "copy", "count"}
)
_HUGE_WIDTH = re.compile(r"\d{5,}")
#: Builtins and methods whose result shows an argument's text.
_SHOWS_TEXT = frozenset({"str", "repr", "format", "ascii"})
#: The builtin types of values (not the evaluator's models of iterators, patterns...).
_BUILTIN_TYPES = frozenset(
    {str, int, float, bool, bytes, list, tuple, dict, set, frozenset, range, type(None)}
)
#: Methods that pad to a width: a huge width asks for gigabytes.
_PADDING = frozenset({"zfill", "ljust", "rjust", "center", "expandtabs"})
#: The evaluator's models whose text Python shows with an address (or another repr).
_OPAQUE = (Iter, Regex, Match, Func, Lambda, Method, UserFunc)
#: Methods that change the object they are called on.
_MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "__setitem__"})


class _Evaluator(_Scope):
    """Walks a function body with concrete argument values of this module's making.

    Only builtin values (``_SAFE_TYPES``) are ever operated on, only with the operators and pure
    methods listed above, with size limits; the user's functions are never called (a call to one
    is unknown). ``raise`` statements are the outcome this looks for.
    """

    def __init__(self, info: _ModuleInfo) -> None:
        super().__init__(info)
        self.steps = 0
        self.depth = 0
        self.covered: set[int] = set()
        #: What a generator yielded so far (None: the function is not walked as a generator).
        self.yielded: list[object] | None = None
        #: The call depth of the generator whose yields are collected (0: the target).
        self.collect_depth = 0
        # Per loop statement: whether it can leave the function, and the names it may change.
        self._loops: dict[int, tuple[bool, frozenset[str]]] = {}

    def _step(self) -> None:
        self.steps += 1
        if self.steps > STEPS:
            raise Abort

    # expressions

    def value(self, node: ast.expr, env: dict[str, object]) -> object:
        self._step()
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, env)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, env)
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand, env)
            if operand is UNKNOWN or not safe(operand):
                return UNKNOWN
            return self._apply(node.op, operand)
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left, env), self.value(node.right, env)
            if (
                not (safe(left) and safe(right))
                or isinstance(left, _OPAQUE)
                or isinstance(right, _OPAQUE)
            ):
                return UNKNOWN  # (``"%s" % it`` would show the model, not Python's text)
            op = BINOPS.get(type(node.op))
            if op is None or self._too_big(node.op, left, right):
                return UNKNOWN
            return self._guarded(lambda: op(left, right))
        if isinstance(node, ast.Compare):
            return self._compare(node, env)
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, env)
            if isinstance(base, Instance):
                return base.attrs.get(node.attr, UNKNOWN)
            if isinstance(base, ModuleRef):
                return self._resolve(base.name, node.attr, 0)
            if isinstance(base, Func) and node.attr in ("__name__", "__qualname__"):
                return base.name  # a builtin function a test passes: ``len.__name__``
            if isinstance(base, UserFunc) and node.attr == "__name__":
                return base.node.name
            if isinstance(base, Func) and f"{base.name}.{node.attr}" in SAFE_FUNCS:
                return Func(f"{base.name}.{node.attr}")  # ``str.lower``, ``str.maketrans``
            if safe(base) and node.attr in SAFE_METHODS.get(type(base), ()):
                return Method(base, node.attr)
            if type(base) in _BUILTIN_TYPES and safe(base) and not hasattr(base, node.attr):
                raise Raised("AttributeError")  # ``(1).pop``: a builtin has no such attribute
            return UNKNOWN
        if isinstance(node, ast.Subscript):
            base = self.value(node.value, env)
            index = self.value(node.slice, env)
            if not (safe(base) and (safe(index) or isinstance(index, slice))):
                return UNKNOWN
            return self._guarded(lambda: base[index])  # type: ignore[index]
        if isinstance(node, ast.Slice):
            parts = [
                self.value(p, env) if p is not None else None
                for p in (node.lower, node.upper, node.step)
            ]
            if any(p is UNKNOWN or not (p is None or isinstance(p, int)) for p in parts):
                return UNKNOWN
            return slice(*parts)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = [self.value(e, env) for e in node.elts]
            if any(not safe(i) for i in items):
                return UNKNOWN
            if isinstance(node, ast.Tuple):
                return tuple(items)
            if isinstance(node, ast.List):
                return items
            return self._guarded(lambda: set(items))
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                return UNKNOWN
            keys = [self.value(k, env) for k in node.keys if k is not None]
            values = [self.value(v, env) for v in node.values]
            if not all(safe(x) for x in keys + values):
                return UNKNOWN
            return self._guarded(lambda: dict(zip(keys, values, strict=True)))
        if isinstance(node, ast.IfExp):
            return self.value(node.body if self.truth(node.test, env) else node.orelse, env)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            return self._comprehension(node, env)
        if isinstance(node, ast.Yield | ast.YieldFrom) and self.yielded is not None:
            return self._yield(node, env)
        if isinstance(node, ast.NamedExpr):
            result = self.value(node.value, env)
            env[node.target.id] = result
            return result
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, env)
        if isinstance(node, ast.Lambda):
            return Lambda(node, env)
        return UNKNOWN

    def _call_lambda(self, func: Lambda, args: list[object], kwargs: dict[str, object]) -> object:
        spec = func.node.args
        if (
            kwargs
            or spec.vararg
            or spec.kwarg
            or spec.kwonlyargs
            or spec.defaults
            or len(args) != len(spec.posonlyargs) + len(spec.args)
        ):
            raise Abort
        scope = dict(func.scope)
        for param, arg in zip([*spec.posonlyargs, *spec.args], args, strict=True):
            scope[param.arg] = arg
        return self.value(func.node.body, scope)

    def _callable(self, value: object) -> object:
        """What a builtin gets for a function value: the real builtin, or the lambda walked."""
        if isinstance(value, Func):
            return SAFE_FUNCS[value.name]
        if isinstance(value, Lambda):

            def walked(*args: object) -> object:
                result = self._call_lambda(value, list(args), {})
                if result is UNKNOWN or not safe(result):
                    raise Abort  # a builtin must not compare or hash what is not known
                return result

            return walked
        if isinstance(value, UserFunc):

            def followed(*args: object, **kwargs: object) -> object:
                result = self._user_call(value, list(args), kwargs)
                if result is UNKNOWN or not safe(result):
                    raise Abort
                return result

            return followed
        if isinstance(value, Method):
            return getattr(value.value, value.name)
        return value

    def _yield(self, node: ast.Yield | ast.YieldFrom, env: dict[str, object]) -> object:
        """A generator consumed by ``list()``: what it yields is collected; ``send`` is None."""
        assert self.yielded is not None
        if self.depth != self.collect_depth:
            raise Abort  # only the yields of the generator being collected
        value = self.value(node.value, env) if node.value is not None else None
        if isinstance(node, ast.YieldFrom):
            if isinstance(value, dict):
                value = list(value)
            if not isinstance(value, str | bytes | list | tuple | Iter) or not safe(value):
                raise Abort
            self.yielded.extend(value)
        else:
            self.yielded.append(value)
        if len(self.yielded) > MAX_SIZE:
            raise Abort
        return None

    def _fstring(self, node: ast.JoinedStr, env: dict[str, object]) -> object:
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
                continue
            if not isinstance(part, ast.FormattedValue):
                return UNKNOWN
            value = self.value(part.value, env)
            spec = self.value(part.format_spec, env) if part.format_spec is not None else ""
            if not (safe(value) and isinstance(spec, str)) or _HUGE_WIDTH.search(spec):
                return UNKNOWN
            if isinstance(value, _OPAQUE):
                return UNKNOWN  # Python shows an address
            if isinstance(value, set | frozenset) and len(value) > 1:
                self.inexact = True
            convert = {115: str, 114: repr, 97: ascii}.get(part.conversion)
            shown = self._guarded(
                lambda v=value, c=convert, f=spec: format(c(v) if c else v, f)  # type: ignore[misc]
            )
            if not isinstance(shown, str):
                return UNKNOWN
            parts.append(shown)
        text = "".join(parts)
        return text if safe(text) else UNKNOWN

    def _comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        env: dict[str, object],
    ) -> object:
        """Evaluated eagerly. A generator expression is an iterator over what it yields; its
        exceptions surface where it is consumed, not here: they make the path unknown."""
        if isinstance(node, ast.GeneratorExp):
            try:
                listed = self._comprehension(ast.ListComp(node.elt, node.generators), env)
            except Raised:
                raise Abort from None
            return Iter(listed) if isinstance(listed, list) else listed
        if len(node.generators) != 1 or node.generators[0].is_async:
            return UNKNOWN
        generator = node.generators[0]
        iterable = self._iterable(generator.iter, env)
        if isinstance(iterable, dict):
            iterable = list(iterable)
        if isinstance(iterable, int | float | type(None)):
            raise Raised("TypeError")  # not iterable
        if not isinstance(iterable, str | bytes | list | tuple | range | Iter) or not safe(
            iterable
        ):
            self.inexact = True  # it may raise
            return UNKNOWN
        scope = dict(env)
        items: list[object] = []
        pairs: list[tuple[object, object]] = []
        for item in iterable:
            self.assign(generator.target, item, scope)
            if not all(self.truth(test, scope) for test in generator.ifs):
                continue
            if isinstance(node, ast.DictComp):
                pairs.append((self.value(node.key, scope), self.value(node.value, scope)))
            else:
                items.append(self.value(node.elt, scope))
        if isinstance(node, ast.DictComp):
            if not all(safe(k) and safe(v) for k, v in pairs):
                return UNKNOWN
            return self._guarded(lambda: dict(pairs))
        if not all(safe(i) for i in items):
            return UNKNOWN
        if isinstance(node, ast.SetComp):
            return self._guarded(lambda: set(items))
        return items

    def _user_call(self, func: UserFunc, args: list[object], kwargs: dict[str, object]) -> object:
        """Walk a project function's body with these arguments (in its own module): its return
        value."""
        if self.depth >= _MAX_DEPTH:
            self.inexact = True  # it runs, unfollowed
            return UNKNOWN
        caller = self.info
        if isinstance(func.module, _ModuleInfo):
            self.info = func.module
        try:
            if not _yields(func.node):
                return self._walk_call(func.node, args, kwargs, func.scope)
            # A generator: what it yields, at once (its exceptions surface where it is
            # consumed, which this does not model: they make the path unknown).
            saved = self.yielded, self.collect_depth
            self.yielded, self.collect_depth = [], self.depth + 1
            try:
                self._walk_call(func.node, args, kwargs, func.scope)
                return Iter(self.yielded)
            except Raised:
                raise Abort from None
            finally:
                self.yielded, self.collect_depth = saved
        finally:
            self.info = caller

    def _walk_call(
        self,
        fn: ast.FunctionDef,
        args: list[object],
        kwargs: dict[str, object],
        scope: dict[str, object] | None = None,
    ) -> object:
        spec = fn.args
        positional = [*spec.posonlyargs, *spec.args]
        if len(args) > len(positional) and spec.vararg is None:
            raise Raised("TypeError")
        env: dict[str, object] = dict(scope) if scope is not None else {}
        for param, arg in zip(positional, args, strict=False):
            env[param.arg] = arg
        if spec.vararg is not None:
            env[spec.vararg.arg] = tuple(args[len(positional) :])
        kwargs = dict(kwargs)
        first_default = len(positional) - len(spec.defaults)
        for index, param in enumerate(positional[len(args) :], start=len(args)):
            if param.arg in kwargs and param not in spec.posonlyargs:
                env[param.arg] = kwargs.pop(param.arg)
            elif index >= first_default:
                env[param.arg] = self.value(spec.defaults[index - first_default], {})
            else:
                raise Raised("TypeError")
        for param, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
            if param.arg in kwargs:
                env[param.arg] = kwargs.pop(param.arg)
            elif default is not None:
                env[param.arg] = self.value(default, {})
            else:
                raise Raised("TypeError")
        if spec.kwarg is not None:
            env[spec.kwarg.arg] = kwargs
        elif kwargs:
            raise Raised("TypeError")
        self.depth += 1
        try:
            self.run(fn.body, env)
        except Return as returned:
            return returned.value
        except (Break, Continue):
            raise Abort from None
        finally:
            self.depth -= 1
        return None

    def _boolop(self, node: ast.BoolOp, env: dict[str, object]) -> object:
        result: object = UNKNOWN
        for operand in node.values:
            result = self.value(operand, env)
            if result is UNKNOWN or not safe(result):
                if isinstance(result, Instance):
                    result = True  # an object without __bool__/__len__ we know of is truthy
                else:
                    return UNKNOWN
            if isinstance(node.op, ast.And) and not result:
                return result
            if isinstance(node.op, ast.Or) and result:
                return result
        return result

    def _apply(self, op: ast.unaryop, operand: object) -> object:
        if isinstance(op, ast.Not):
            return not operand
        if isinstance(op, ast.USub):
            return self._guarded(lambda: -operand)  # type: ignore[operator]
        if isinstance(op, ast.UAdd):
            return self._guarded(lambda: +operand)  # type: ignore[operator]
        return self._guarded(lambda: ~operand)  # type: ignore[operator]

    @staticmethod
    def _too_big(op: ast.operator, left: object, right: object) -> bool:
        if isinstance(op, ast.Mod) and isinstance(left, str):
            return "*" in left or bool(_HUGE_WIDTH.search(left))  # "%1000000000d" % n
        if isinstance(op, ast.Pow):
            return not (isinstance(right, int) and abs(right) <= 64)
        if isinstance(op, ast.LShift):
            return not (isinstance(right, int) and right <= 512)
        if isinstance(op, ast.Mult):
            sizes = [v for v in (left, right) if isinstance(v, int)]
            sized = any(isinstance(v, str | bytes | list | tuple) for v in (left, right))
            return sized and any(abs(n) > MAX_SIZE for n in sizes)
        return False

    def _guarded(self, compute: Callable[[], object]) -> object:
        try:
            result = compute()
        except (Abort, Raised, Return, Break, Continue):
            raise
        except Exception as exc:  # a real exception of a builtin operation on our own values
            raise Raised(type(exc).__name__) from None
        if isinstance(
            result, dict().keys().__class__ | dict().values().__class__ | dict().items().__class__
        ):
            self.inexact = True  # a view, modelled as a list
            result = list(result)
        return result if safe(result) else UNKNOWN

    def _compare(self, node: ast.Compare, env: dict[str, object]) -> object:
        left = self.value(node.left, env)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.value(comparator, env)
            if isinstance(op, ast.Is | ast.IsNot) and (left is None or right is None):
                if left is UNKNOWN or right is UNKNOWN:
                    return UNKNOWN
                same = left is right if not isinstance(left, Instance) else right is left
                if (same if isinstance(op, ast.Is) else not same) is False:
                    return False
                left = right
                continue
            if not (safe(left) and safe(right)):
                return UNKNOWN
            compare = CMPOPS[type(op)]
            outcome = self._guarded(lambda c=compare, a=left, b=right: c(a, b))  # type: ignore[misc]
            if not outcome:
                return False
            left = right
        return True

    def _call(self, node: ast.Call, env: dict[str, object]) -> object:
        func = self.value(node.func, env)
        if (isinstance(func, Func) and func.name == "isinstance") or (
            isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and "isinstance" not in env
        ):
            return self._isinstance(node, env)
        if not isinstance(func, Func | Method | UserFunc | Lambda):
            # Other code ran: what it did (or raised) is not known. Its arguments were
            # evaluated first, and those can raise (``deque(iter(n))``).
            self._arguments_of_unknown(node, env)
            self.inexact = True
            return UNKNOWN
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            self.inexact = True  # a call that is not followed still runs
            return UNKNOWN
        args = [self.value(a, env) for a in node.args]
        kwargs = {k.arg: self.value(k.value, env) for k in node.keywords if k.arg}
        if not all(safe(a) for a in [*args, *kwargs.values()]):
            if isinstance(func, Method) and func.name in _MUTATORS:
                raise Abort  # ``items.append(unknown)``: what the list holds is not known
            self.inexact = True
            return UNKNOWN
        if isinstance(func, UserFunc):
            return self._user_call(func, args, kwargs)
        if isinstance(func, Lambda):
            return self._call_lambda(func, args, kwargs)
        if (
            isinstance(func, Method)
            and func.name == "format"
            and isinstance(func.value, str)
            and _HUGE_WIDTH.search(func.value)
        ):
            return UNKNOWN
        name = func.name
        if name in _PADDING and any(
            isinstance(a, int) and a > MAX_SIZE for a in [*args, *kwargs.values()]
        ):
            return UNKNOWN
        if name in _SHOWS_TEXT and any(isinstance(a, _OPAQUE) for a in [*args, *kwargs.values()]):
            return UNKNOWN  # str(it), "{}".format(it): Python shows an address
        receiver = func.value if isinstance(func, Method) else None
        ordered = [*args, *kwargs.values(), receiver]
        order_free = _ORDER_FREE_METHODS if isinstance(func, Method) else _ORDER_FREE
        shows_order = any(isinstance(a, set | frozenset) and len(a) > 1 for a in ordered)
        if shows_order and name not in order_free:
            self.inexact = True  # the result shows a set's order, which differs per process
        # Builtins get the real functions a test would pass (``sorted(xs, key=len)``); the
        # methods of containers keep them as data (``kwargs.pop("factory", dict)``).
        if isinstance(func, Func) or isinstance(func.value, Regex):
            args = [self._callable(a) for a in args]
            kwargs = {k: self._callable(v) for k, v in kwargs.items()}
        if isinstance(func, Func):
            call = SAFE_FUNCS[func.name]
            return self._guarded(lambda: call(*args, **kwargs))
        bound = getattr(func.value, func.name)
        return self._guarded(lambda: bound(*args, **kwargs))

    def _suppressed(self, stmt: ast.With | ast.AsyncWith, raised: Raised) -> bool:
        """Whether ``with suppress(...)`` swallows the exception (other context managers are
        assumed not to, as calls into other code are assumed to return)."""
        for item in stmt.items:
            call = item.context_expr
            if not _is_suppress(call):
                continue
            assert isinstance(call, ast.Call)
            if self._catches(call.args, raised):
                return True
        return False

    def _catches(self, specs: list[ast.expr], raised: Raised) -> bool:
        """Whether one of the exception classes ``specs`` names catches ``raised`` (unknown:
        :class:`Abort`)."""
        for spec in specs:
            caught = _dotted(spec)
            if caught is None or raised.type_name is None:
                raise Abort
            verdict = self._is_subclass(raised.type_name, caught)
            if verdict is None:
                raise Abort
            if verdict:
                return True
        return False

    def _arguments_of_unknown(self, node: ast.Call, env: dict[str, object]) -> None:
        """Evaluate the arguments of a call the evaluator does not follow, for what raises in
        them; lazy ones (a lambda, a generator expression) are not run."""
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            inner = arg.value if isinstance(arg, ast.Starred) else arg
            if isinstance(inner, ast.Lambda | ast.GeneratorExp):
                continue
            try:
                self.value(inner, env)
            except Abort:
                if self.steps > STEPS:
                    raise
                return  # a value that depends on what is unknown: the call may still run

    def _isinstance(self, node: ast.Call, env: dict[str, object]) -> object:
        if len(node.args) != 2 or node.keywords:
            return UNKNOWN
        subject = self.value(node.args[0], env)
        types = self._types(node.args[1], env, 0)
        if types is None or isinstance(subject, Instance) or subject is UNKNOWN:
            return UNKNOWN
        if isinstance(subject, Func | Lambda | Method | UserFunc | Iter) and not all(
            t.__module__ == "builtins" or t in _ITERATOR_TYPES for t in types
        ):
            # A function's model is not the function (``Callable``); an iterator's may stand
            # for a generator (``Generator``).
            return UNKNOWN
        return isinstance(subject, tuple(types))

    def truth(self, node: ast.expr, env: dict[str, object]) -> bool:
        result = self.value(node, env)
        if isinstance(result, Instance):
            return True
        if result is UNKNOWN or not safe(result):
            raise Abort
        return bool(result)

    # statements

    def run(self, body: Sequence[ast.stmt], env: dict[str, object]) -> None:
        for stmt in body:
            self.statement(stmt, env)

    def statement(self, stmt: ast.stmt, env: dict[str, object]) -> None:
        self._step()
        if self.depth == 0:
            self.covered.add(id(stmt))
        if isinstance(stmt, ast.Expr):
            if not isinstance(stmt.value, ast.Constant):
                self.value(stmt.value, env)
        elif isinstance(stmt, ast.Assign):
            result = self.value(stmt.value, env)
            for target in stmt.targets:
                self.assign(target, result, env)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.value(stmt.value, env), env)
        elif isinstance(stmt, ast.AugAssign):
            current = (
                self.value(stmt.target, env)
                if isinstance(stmt.target, ast.Name | ast.Attribute)
                else UNKNOWN
            )
            change = self.value(stmt.value, env)
            op = BINOPS.get(type(stmt.op))
            if (
                op is None
                or not (safe(current) and safe(change))
                or self._too_big(stmt.op, current, change)
            ):
                updated: object = UNKNOWN
            else:
                updated = self._guarded(lambda: op(current, change))
            self.assign(stmt.target, updated, env)
        elif isinstance(stmt, ast.If):
            self.run(stmt.body if self.truth(stmt.test, env) else stmt.orelse, env)
        elif isinstance(stmt, ast.Raise):
            self._raise(stmt, env)
        elif isinstance(stmt, ast.Return):
            if isinstance(stmt.value, ast.GeneratorExp):
                self.inexact = True  # a generator, modelled as the tuple it would produce
            raise Return(self.value(stmt.value, env) if stmt.value is not None else None)
        elif isinstance(stmt, ast.Assert):
            if not self.truth(stmt.test, env):
                raise Raised("AssertionError")
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            self._for(stmt, env)
        elif isinstance(stmt, ast.While):
            self._while(stmt, env)
        elif isinstance(stmt, ast.Break):
            raise Break
        elif isinstance(stmt, ast.Continue):
            raise Continue
        elif isinstance(stmt, ast.Try | ast.TryStar):
            self._try(stmt, env)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                if not _is_suppress(item.context_expr):  # modelled: see ``_suppressed``
                    self.value(item.context_expr, env)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, UNKNOWN, env)
            try:
                self.run(stmt.body, env)
            except Raised as raised:
                if not self._suppressed(stmt, raised):
                    raise
        elif (
            isinstance(stmt, ast.FunctionDef)
            and all(_transparent(d) for d in stmt.decorator_list)
            and not any(isinstance(n, ast.Global | ast.Nonlocal) for n in ast.walk(stmt))
        ):
            # A function defined here: walked when called, reading this scope as it is then.
            env[stmt.name] = UserFunc(stmt, self.info, env)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            env[stmt.name] = UNKNOWN
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                env[alias.asname or alias.name.split(".")[0]] = _imported(stmt, alias)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                self._delete(target, env)
        elif isinstance(stmt, ast.Pass | ast.Global | ast.Nonlocal):
            pass
        else:
            raise Abort  # match statements and anything newer

    def assign(self, target: ast.expr, result: object, env: dict[str, object]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = result
        elif isinstance(target, ast.Tuple | ast.List):
            if result is UNKNOWN or not safe(result):
                for element in target.elts:
                    self.assign(element, UNKNOWN, env)
                return
            if any(isinstance(e, ast.Starred) for e in target.elts):
                for element in target.elts:
                    inner = element.value if isinstance(element, ast.Starred) else element
                    self.assign(inner, UNKNOWN, env)
                return
            items = self._guarded(lambda: list(result))  # type: ignore[call-overload]
            if not isinstance(items, list):
                raise Abort
            if len(items) != len(target.elts):
                raise Raised("ValueError")
            for element, item in zip(target.elts, items, strict=True):
                self.assign(element, item, env)
        elif isinstance(target, ast.Attribute):
            base = self.value(target.value, env)
            if isinstance(base, Instance):
                base.attrs[target.attr] = result
        elif isinstance(target, ast.Subscript):
            base = self.value(target.value, env)
            index = self.value(target.slice, env)
            if isinstance(base, list | dict) and safe(index) and safe(result):
                self._guarded(lambda: base.__setitem__(index, result))  # type: ignore[call-overload]
            elif type(base) in _BUILTIN_TYPES and not isinstance(base, list | dict):
                raise Raised("TypeError")  # ``"abc"[0] = "x"``: it does not support it
            elif isinstance(target.value, ast.Name) and target.value.id in env:
                env[target.value.id] = UNKNOWN

    def _delete(self, target: ast.expr, env: dict[str, object]) -> None:
        if isinstance(target, ast.Name):
            if target.id not in env:
                raise Abort  # a global, or a name not bound: not modelled
            del env[target.id]
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._delete(element, env)
        elif isinstance(target, ast.Subscript):
            base = self.value(target.value, env)
            index = self.value(target.slice, env)
            if isinstance(base, list | dict) and (safe(index) or isinstance(index, slice)):
                self._guarded(lambda: base.__delitem__(index))  # type: ignore[arg-type]
            elif type(base) in _BUILTIN_TYPES:
                raise Raised("TypeError")
            else:
                raise Abort  # what it deletes from is not known
        else:
            raise Abort  # an attribute: not modelled

    def _raise(self, stmt: ast.Raise, env: dict[str, object]) -> None:
        if stmt.exc is None:
            current = env.get("<exception>")
            if isinstance(current, Raised):
                raise current
            raise Abort
        message: str | None = None
        if isinstance(stmt.exc, ast.Call):
            # Building the message can fail first (``"bad " + name`` with an int name).
            inexact = self.inexact
            self.inexact = False
            positional = [
                self.value(arg, env) for arg in stmt.exc.args if not isinstance(arg, ast.Starred)
            ]
            named = {k.arg or "": self.value(k.value, env) for k in stmt.exc.keywords}
            values = [*positional, *named.values()]
            if (
                len(values) == len(stmt.exc.args) == 1
                and not stmt.exc.keywords
                and isinstance(values[0], str)
                and not self.inexact
            ):
                message = values[0]
            self.inexact = self.inexact or inexact
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        dotted = _dotted(exc)
        if dotted is not None and dotted.split(".")[0] in env:
            dotted = None  # `raise error` with a local variable: its type is unknown
        if dotted is not None and isinstance(stmt.exc, ast.Call):
            self._construct(dotted, stmt.exc, positional, named)
        raise Raised(dotted, stmt, message)

    def _construct(
        self, dotted: str, call: ast.Call, positional: list[object], named: dict[str, object]
    ) -> None:
        """Build the module's own exception class the way a ``raise`` does: its ``__init__``
        can fail on the arguments first (``doc.count("\\n", 0, pos)`` on a list), and then
        that exception is what the call raises."""
        cls = self.info.classes.get(dotted)
        init = (
            next(
                (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"),
                None,
            )
            if cls is not None
            else None
        )
        if (
            init is None
            or self.depth >= _MAX_DEPTH
            or any(isinstance(a, ast.Starred) for a in call.args)
            or any(k.arg is None for k in call.keywords)
        ):
            return
        args, kwargs = [Instance({}), *positional], named
        inexact = self.inexact
        try:
            self._walk_call(init, args, kwargs)
        except Raised as failed:
            raise Raised(failed.type_name) from None
        except (Abort, Return, Break, Continue):
            if self.steps > STEPS:
                raise
        finally:
            self.inexact = inexact

    def _loop_body(self, body: list[ast.stmt], env: dict[str, object]) -> bool:
        """Run one iteration; False on ``break``."""
        try:
            self.run(body, env)
        except Continue:
            pass
        except Break:
            return False
        return True

    def _iterable(self, node: ast.expr, env: dict[str, object]) -> object:
        """What a ``for`` iterates: also ``enumerate``/``zip``/``reversed``/``range`` of known
        values, iterated at once (they are lazy elsewhere)."""
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in LAZY_FUNCS
            and node.func.id not in env
            and node.func.id not in self.info.names
            and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            args = [self.value(a, env) for a in node.args]
            if not all(safe(a) for a in args):
                return UNKNOWN
            if node.func.id == "range" and not all(isinstance(a, int) for a in args):
                return self._guarded(lambda: range(*args))  # type: ignore[call-overload]
            if node.func.id == "range":
                size = self._guarded(lambda: len(range(*args)))  # type: ignore[call-overload]
                if not isinstance(size, int) or size > MAX_SIZE:
                    return UNKNOWN
            lazy = LAZY_FUNCS[node.func.id]
            return self._guarded(lambda: list(lazy(*args)))  # type: ignore[call-overload]
        return self.value(node, env)

    def _for(self, stmt: ast.For | ast.AsyncFor, env: dict[str, object]) -> None:
        iterable = self._iterable(stmt.iter, env)
        if isinstance(iterable, dict):
            iterable = list(iterable)
        if isinstance(iterable, int | float | type(None)):
            raise Raised("TypeError")  # not iterable
        if not isinstance(
            iterable, str | bytes | list | tuple | set | frozenset | range | Iter
        ) or not safe(iterable):
            self._unknown_loop(stmt, env)
            return
        if isinstance(iterable, set | frozenset) and len(iterable) > 1:
            self.inexact = True  # iterated in an order of our choosing
        for item in (
            sorted(iterable, key=repr) if isinstance(iterable, set | frozenset) else iterable
        ):
            self.assign(stmt.target, item, env)
            if not self._loop_body(stmt.body, env):
                return
        self.run(stmt.orelse, env)

    def _while(self, stmt: ast.While, env: dict[str, object]) -> None:
        while True:
            try:
                going = self.truth(stmt.test, env)
            except Abort:
                if self.steps > STEPS:
                    raise
                self._unknown_loop(stmt, env)
                return
            if not going:
                break
            if not self._loop_body(stmt.body, env):
                return
        self.run(stmt.orelse, env)

    def _unknown_loop(
        self, stmt: ast.For | ast.AsyncFor | ast.While, env: dict[str, object]
    ) -> None:
        """A loop over something unknown: fine to pass only if it cannot leave the function.

        What it may change becomes unknown: the names it assigns, the objects it calls
        methods on (``items.append(...)``).
        """
        summary = self._loops.get(id(stmt))
        if summary is None:
            leaves = False
            touched: set[str] = set()
            for node in ast.walk(stmt):
                leaves = leaves or isinstance(
                    node, ast.Raise | ast.Return | ast.Yield | ast.YieldFrom
                )
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    touched.add(node.id)
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                ):
                    touched.add(node.func.value.id)
            summary = self._loops[id(stmt)] = (leaves, frozenset(touched))
        self._step()
        if summary[0]:
            raise Abort
        # What it did is not known: it may raise, or change what a call in it was given.
        self.inexact = True
        for name in summary[1]:
            env[name] = UNKNOWN

    def _try(self, stmt: ast.Try | ast.TryStar, env: dict[str, object]) -> None:
        try:
            try:
                self.run(stmt.body, env)
            except Raised as raised:
                handler = self._handler(stmt.handlers, raised)
                if handler is None:
                    raise
                saved = env.get("<exception>")
                env["<exception>"] = raised
                if handler.name:
                    env[handler.name] = UNKNOWN
                try:
                    self.run(handler.body, env)
                finally:
                    env["<exception>"] = saved
            else:
                self.run(stmt.orelse, env)
        finally:
            if stmt.finalbody:
                self.run(stmt.finalbody, env)

    def _handler(
        self, handlers: list[ast.ExceptHandler], raised: Raised
    ) -> ast.ExceptHandler | None:
        for handler in handlers:
            if handler.type is None:
                return handler
            specs = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            if self._catches(specs, raised):
                return handler
        return None

    def _is_subclass(self, raised: str, caught: str) -> bool | None:
        if raised.split(".")[-1] == caught.split(".")[-1]:
            return True
        chain = self._ancestors(raised.split(".")[-1], 0)
        if chain is None:
            return None
        caught_builtin = getattr(builtins, caught, None)
        for ancestor in chain:
            if ancestor == caught.split(".")[-1]:
                return True
            builtin = getattr(builtins, ancestor, None)
            if (
                isinstance(builtin, type)
                and isinstance(caught_builtin, type)
                and issubclass(builtin, caught_builtin)
            ):
                return True
        if isinstance(caught_builtin, type) or caught in self.info.classes:
            return False
        return None

    def _ancestors(self, name: str, depth: int) -> list[str] | None:
        """The class and its ancestors' names, as far as the module shows them."""
        if depth > 10:
            return None
        if isinstance(getattr(builtins, name, None), type):
            return [name]
        node = self.info.classes.get(name)
        if node is None:
            return None
        names = [name]
        for base in node.bases:
            base_name = _dotted(base)
            if base_name is None:
                return None
            found = self._ancestors(base_name.split(".")[-1], depth + 1)
            if found is None:
                return None
            names += found
        return names
