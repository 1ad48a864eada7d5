"""The recorder's worker: runs the user's function on planned calls and records what it did.

Run as a script by :mod:`fastedit_lsp.project.recorder` (``python record_worker.py JOB.json``),
in a subprocess whose ``sys.path`` starts with the project (as pytest sees it) and whose working
directory is a temporary one; never imported by the server. Standard library only: it runs in
the user's environment beside their code.

``JOB.json``: ``targets`` (each ``module``, ``qualname``, ``calls``, ``variants``, ``imports``,
``templates``),
``workdir`` (the empty working directory the recorder made for this process: what a call leaves
there is removed after it, so that no later call sees it),
``paths`` put first on ``sys.path``, ``call_seconds`` (the limit of one call), ``seconds`` (of the
whole job), ``target_seconds`` (of one target), ``output`` and ``progress`` (a file that says
which target it records and how many of its variants it went through, ``[index, tried]``). For
each target it appends JSON lines to ``output``, its answer so far, once its calls are recorded
and after each variant; the last is its answer (a job killed for time keeps what it finished):

- ``observations``: per kept call, ``value`` (tagged: ``["int", "3"]``, ``["list", [...]]``...,
  only when decoding it gives back an equal value) or ``exception`` (``[module, name]``, only when
  the name finds the class there; ``message``, its message when short, the same in both runs and
  free of what changes between processes), ``warning`` (``[module, name]`` of the category of
  the first warning it emitted, when every run emitted the same ones; ``warning_message``, its
  message when matchable as an exception's is), and ``kills``, the variants whose outcome
  differed (another message counts, and a warning missing);
- ``dropped``: calls left out, by reason (``unstable`` when two runs disagreed, ``timeout``,
  ``unrenderable``, ``unnamed`` exception, ``crash`` for what the process should not record,
  ``stdin`` for a call that read the standard input, ``files`` for a call that left files in
  the working directory);
- ``variants``: how many variants compiled and ran; ``tried``, how many it went through (the
  progress); ``error``: why nothing was recorded.

A member template is a call with ``record_members.MEMBERS_CALL`` for an argument: it is made
with each member of the enumeration the expression in it names (``record_members``).
A template is a call with ``record_texts.MARKER`` for a text argument: it is made with texts the
function's own module-level values match or hold (``record_texts``: texts a compiled regular
expression it uses matches, the keys of a table it translates with, strings it keeps in a set),
values no static reading of its body finds (they are built when the module is imported).

After the variants, a kill-guided search (:func:`neighbours`) tries, in the time left, calls
made of the kept calls' arguments, or with one of them changed a little (:func:`nudges`), then
with one of them as a value of another type (:func:`retyped`: a text as bytes), on the
variants no call told apart yet; then the same around the calls it found, for a few rounds.
It is also coverage-guided (``record_coverage``): a call that runs lines of the function no
call before it ran is searched around (:func:`around`) before anything else.

A call that returns a function is followed by calls of that function on a few ``PROBES``
(``getter(1)([1, 2])``); one that returns an iterator records what it yields (its first
``ITEMS``; ``wrap`` says how), iterators side by side what each yields (``parts``), and a value
with no literal form a view of it: its attributes (``vars``), its own ``repr`` (``repr``) or,
for a compiled regular expression, its source (``pattern``).
Each call is made twice, from its source (fresh arguments each time), and once more after the
others (in the other order): a call whose outcome changed is left out. A variant
replaces the function's ``__code__``, so every reference to the function (a recursive call, a
wrapper) runs it, and is restored before the next. Each target is recorded in a forked child.

With ``check`` in the job (its targets carry the ``observations`` a recording kept, and
``clock_shift``), the worker runs each observed call once more, with the wall clock shifted
(:func:`shift_clock`; the recorder starts it with another hash seed), and answers per target
the ``unstable`` ones: their outcome is not the one observed.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import itertools
import json
import os
import re
import signal
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO, cast

try:
    from . import record_texts  # imported with the package (the tests)
    from .record_caches import cache_may_answer
    from .record_coverage import Lines
    from .record_env import CLOCK_SHIFT, NoStdin, StdinRead, Workdir, shift_clock
    from .record_members import MEMBERS_CALL, member_calls
    from .record_search import alternated, around, held, infused, neighbours, retyped
    from .record_values import decode, encode, has_nan, matches
except ImportError:  # run as a script: its folder is first on ``sys.path`` until main()
    import record_texts  # type: ignore[no-redef, import-not-found]
    from record_caches import cache_may_answer  # type: ignore[no-redef, import-not-found]
    from record_coverage import Lines  # type: ignore[no-redef, import-not-found]
    from record_env import (  # type: ignore[no-redef, import-not-found]
        CLOCK_SHIFT,
        NoStdin,
        StdinRead,
        Workdir,
        shift_clock,
    )
    from record_members import (  # type: ignore[no-redef, import-not-found]
        MEMBERS_CALL,
        member_calls,
    )
    from record_search import (  # type: ignore[no-redef, import-not-found]
        alternated,
        around,
        held,
        infused,
        neighbours,
        retyped,
    )
    from record_values import (  # type: ignore[no-redef, import-not-found]
        decode,
        encode,
        has_nan,
        matches,
    )

MEMORY_LIMIT = 2 * 1024**3
#: Outcomes no test should pin: they depend on the machine, not on the function.
_NOT_RECORDED = (MemoryError, RecursionError, KeyboardInterrupt, SystemExit, GeneratorExit)


class _Timeout(BaseException):
    pass


def _namespace(target: dict[str, Any], deadline: float) -> tuple[dict[str, Any] | None, str]:
    """The target module's namespace with its ``imports`` run in it, under the time limit; or
    None and the error its import raised."""
    _limit(max(1.0, min(30.0, deadline - time.monotonic())))
    try:
        module = importlib.import_module(target["module"])
        namespace = dict(vars(module))
        for line in target.get("imports", []):
            exec(line, namespace)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        _limit(0)
    return namespace, ""


def _limit(seconds: float) -> None:
    """Raise :class:`_Timeout` in ``seconds`` (0: never). Where there is no ``setitimer``
    (Windows), calls have no limit of their own: the recorder kills the process at its end."""
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, seconds)


class _Alarm:
    """The time limit of a call: raises :class:`_Timeout` in it, and remembers that it did (the
    code may turn the exception into another one, as ``except exception:`` does when
    ``exception`` is not a class)."""

    def __init__(self) -> None:
        self.fired = False

    def __call__(self, _signum: int, _frame: object) -> None:
        self.fired = True
        raise _Timeout


_alarm = _Alarm()


# -- running -------------------------------------------------------------------------------------


class _Outcome:
    """What one call did: returned ``value``, raised ``error``, or ran out of time. ``wrap``:
    the call returned an iterator, and ``value`` lists what it yields (``list``: all of it;
    ``islice``: its first ``ITEMS``, when it yields more)."""

    def __init__(
        self,
        value: object = None,
        error: BaseException | None = None,
        timeout: bool = False,
        wrap: str = "",
    ) -> None:
        self.value = value
        self.error = error
        self.timeout = timeout
        self.wrap = wrap
        self.seconds = 0.0
        #: The call left files in the working directory (removed since).
        self.wrote = False
        #: The warnings it emitted: (category, message), in order.
        self.warned: list[tuple[type[Warning], str]] = []


#: What a test takes of an iterator the function returns (it may be endless).
ITEMS = 10
#: What a function the target returns is applied to (``getter(1)([1, 2])``), for at most
#: ``MAX_APPLIED`` of its calls.
PROBES = ("[1, 2]", '"a1b2"', "1", '{"a": 1}', '("b", "a")', '"A b-10.5"', "[3, 1, 2]", "-2.5")
MAX_APPLIED = 20
#: Calls of one target that may run out of time before the rest are not tried.
MAX_TIMEOUTS = 3
#: How often the answer so far is written while the calls are recorded (seconds).
EMIT_SECONDS = 0.5
#: Calls slower than this are recorded but not replayed on every variant.
VARIANT_CALL_SECONDS = 0.05


def _call(code: types.CodeType, namespace: dict[str, Any], seconds: float) -> _Outcome:
    _alarm.fired = False
    started = time.monotonic()
    _limit(seconds)
    outcome = _Outcome(timeout=True)
    try:
        outcome = _run(code, namespace)
    except _Timeout:
        pass
    finally:
        _limit(0)
    wrote = _workdir.tidy()
    if _alarm.fired:
        return _Outcome(timeout=True)
    outcome.seconds = time.monotonic() - started
    outcome.wrote = wrote
    return outcome


_workdir = Workdir()


_NO_STDIN = cast(TextIO, NoStdin())


def _run(code: types.CodeType, namespace: dict[str, Any]) -> _Outcome:
    # Every warning the call emits, as ``pytest.warns`` sees them (each time, whatever filters
    # the package set).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = _run_caught(code, namespace)
    outcome.warned = [(w.category, str(w.message)) for w in caught]
    return outcome


def _run_caught(code: types.CodeType, namespace: dict[str, Any]) -> _Outcome:
    wrap = ""
    streams = sys.stdin, sys.stdout, sys.stderr
    # Swapped by hand: ``contextlib.redirect_stdout`` costs as much as a small call.
    sys.stdin, sys.stdout, sys.stderr = _NO_STDIN, io.StringIO(), io.StringIO()
    try:
        value = eval(code, namespace)
        if isinstance(value, Iterator):
            wrap = "list"
            items = list(itertools.islice(value, ITEMS + 1))
            if len(items) > ITEMS:
                wrap, items = "islice", items[:ITEMS]
            value = items
        elif (
            isinstance(value, tuple | list)
            and any(isinstance(v, Iterator) for v in value)
            and all(isinstance(v, Iterable) for v in value)
        ):
            # Iterators side by side (``partition``): what each yields, when it ends soon
            # (an exception on the way is what the test sees too).
            wrap = "parts"
            parts = [list(itertools.islice(v, ITEMS + 1)) for v in value]
            if all(len(p) <= ITEMS for p in parts):
                value = parts
            else:
                wrap = ""
        return _Outcome(value, wrap=wrap)
    except BaseException as exc:  # the function's answer
        if isinstance(exc, KeyboardInterrupt | _Timeout):
            raise
        return _Outcome(error=exc, wrap=wrap)
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams


def _is_function(value: object) -> bool:
    """A function or other callable object (not a class, whose instances say little)."""
    return callable(value) and not isinstance(value, type)


def _exception(exc: BaseException) -> list[str] | None:
    """[module, name] naming the exception's class, when the name finds it there."""
    return _class_name(type(exc))


def _class_name(cls: type) -> list[str] | None:
    """[module, name] naming the class, when the name finds it there."""
    module = sys.modules.get(cls.__module__)
    if module is None or "." in cls.__qualname__ or getattr(module, cls.__name__, None) is not cls:
        return None
    return [cls.__module__, cls.__name__]


def function_behind(
    module: types.ModuleType, qualname: str
) -> tuple[types.FunctionType, list[Any]]:
    """The function object behind ``qualname`` and the caches in front of it (a property's
    getter, a static or class method's function, what ``functools`` wrappers wrap; the mutation
    test's worker finds its targets with it too)."""
    obj: Any = module
    for part in qualname.split("."):
        obj = vars(obj)[part] if isinstance(obj, type) else getattr(obj, part)
    caches: list[Any] = []
    for _ in range(10):
        if isinstance(obj, property):
            obj = obj.fget
        elif isinstance(obj, staticmethod | classmethod):
            obj = obj.__func__
        elif hasattr(obj, "cache_clear"):
            caches.append(obj)
            obj = obj.__wrapped__
        elif isinstance(obj, types.FunctionType) and not hasattr(obj, "__wrapped__"):
            break
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        else:
            break
    if not isinstance(obj, types.FunctionType):
        raise TypeError(f"{qualname} is not a Python function")
    return obj, caches


def _compile_variant(
    source: str, qualname: str, module: types.ModuleType
) -> types.FunctionType | None:
    """The variant's function, compiled in the module's namespace (inside its classes, so that
    ``super()`` and private names work as in the original)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    body: ast.stmt = tree.body[0]
    classes = qualname.split(".")[:-1]
    for cls in reversed(classes):
        wrapper = ast.parse(f"class {cls}:\n    pass").body[0]
        assert isinstance(wrapper, ast.ClassDef)
        wrapper.body = [body]
        body = wrapper
    tree = ast.fix_missing_locations(ast.Module(body=[body], type_ignores=[]))
    namespace = dict(vars(module))
    try:
        exec(compile(tree, module.__file__ or "<variant>", "exec"), namespace)
    except Exception:
        return None
    obj: Any = namespace[classes[0]] if classes else namespace[qualname]
    for part in qualname.split(".")[1:]:
        obj = vars(obj)[part]
    return obj if isinstance(obj, types.FunctionType) else None


def _raises_otherwise(
    cls: type[BaseException], wrap: str, message: str | None = None
) -> Callable[[_Outcome], bool]:
    """Whether an outcome fails ``with pytest.raises(cls)`` around the call (with
    ``match`` the whole ``message``, when there is one)."""

    def differs(got: _Outcome) -> bool:
        return (
            got.timeout
            or got.error is None
            or not isinstance(got.error, cls)
            or got.wrap != wrap
            or (message is not None and str(got.error) != message)
        )

    return differs


#: Longest exception message a test matches.
MESSAGE_CHARS = 120


def _message(exc: BaseException | None) -> str | None:
    """The exception's message, when a test can match it whole in any process: short, on one
    line, without notes, and with nothing that differs from one run of Python to the next (an
    address, a set's order, a temporary folder)."""
    if exc is None or getattr(exc, "__notes__", None):
        return None
    try:
        text = str(exc)
    except Exception:
        return None
    return _matchable(text)


def _matchable(text: str) -> str | None:
    """The text, when a test can match it whole in any process (see :func:`_message`)."""
    if not text or len(text) > MESSAGE_CHARS or not text.isprintable():
        return None
    if re.search(r"0x[0-9a-fA-F]{6,}|[{}]| at 0x|object at", text):
        return None
    if os.getcwd() in text or tempfile.gettempdir() in text:
        return None
    return text


def _returns_otherwise(
    want: object, wrap: str, view: Callable[[object], object] | None = None
) -> Callable[[_Outcome], bool]:
    """Whether an outcome fails the assertion that the call returns ``want`` (that ``view``
    of what it returns is ``want``)."""

    def differs(got: _Outcome) -> bool:
        if got.timeout or got.error is not None:
            return True
        if view is None:
            return got.wrap != wrap or not matches(got.value, want)
        try:
            return got.wrap != "" or not matches(view(got.value), want)
        except Exception:
            return True

    return differs


def _vars(value: object) -> object:
    return dict(vars(value))


def _pattern_of(value: object) -> object:
    return value.pattern if isinstance(value, re.Pattern) else None


def _view(value: object) -> tuple[str, Callable[[object], object], list[Any]] | None:
    """For a value with no literal form: how a test can look at it (``vars``: its attributes,
    when they have one; ``repr``: its own ``__repr__``'s text, when that shows no address, no
    set and no mapping, which may differ from one run of Python to the next), that view and its
    tagged form."""
    if isinstance(value, types.ModuleType) or _is_function(value):
        return None
    if isinstance(value, re.Pattern):
        return "pattern", _pattern_of, encode(value.pattern) or ["none"]
    with contextlib.suppress(Exception):
        if not isinstance(value, type) and hasattr(value, "__dict__") and vars(value):
            tagged = encode(_vars(value))
            if tagged is not None and not has_nan(_vars(value)):
                return "vars", _vars, tagged
    if type(value).__repr__ is object.__repr__:
        return None
    try:
        text = repr(value)
    except Exception:
        return None
    if len(text) > 300 or re.search(r"0x[0-9a-fA-F]{6,}| at 0x|[{}]|set\(", text):
        return None
    return "repr", repr, ["str", text]


def _template_calls(target: dict[str, Any], module: types.ModuleType) -> list[str]:
    """The target's templates made: member templates with the members of their enumeration,
    text templates with the texts its module-level values give."""
    marker = record_texts.MARKER
    calls: list[str] = []
    for template in target.get("templates", []):
        if MEMBERS_CALL in template:
            calls += member_calls(template, module)
    templates = [t for t in target.get("templates", []) if marker in t][: record_texts.TEMPLATES]
    if not templates:
        return calls
    for template in [t for t in templates if record_texts.MATCH_CALL in t]:
        calls += record_texts.match_calls(template, module)
    templates = [t for t in templates if record_texts.MATCH_CALL not in t]
    try:
        function, _ = function_behind(module, target["qualname"])
        texts = record_texts.texts(function) if templates else []
    except Exception:
        return calls
    # Each text alone, and inside others (what the function finds in a longer text).
    quote = record_texts.quote
    shown = [quote(t) for t in texts] + [quote(f"a {t} b") for t in texts]
    return calls + [
        t.replace(marker, s, 1) for t in templates for s in shown[: record_texts.SAMPLES]
    ]


def _observe(
    call: str, code: types.CodeType, namespace: dict[str, Any], call_seconds: float
) -> tuple[dict[str, Any] | None, Callable[[_Outcome], bool] | None, _Outcome] | str:
    """One call, made twice: what a test can assert of it and how a variant fails that (None
    when its outcome has no form a test can write), with its first outcome; or why it is
    left out (``timeout``, ``crash``, ``unstable``, ``unnamed``). The first warning it
    emitted, when both runs emitted the same ones and a test can name its category, is part
    of what the test asserts (``warning``, and ``warning_message`` when matchable)."""
    observed = _observe_outcome(call, code, namespace, call_seconds)
    if isinstance(observed, str):
        return observed
    obs, differs, first = observed
    if obs is None or differs is None or not first.warned:
        return observed
    second = _call(code, namespace, call_seconds)
    category, message = first.warned[0]
    name = _class_name(category)
    if second.warned != first.warned or name is None:
        return observed  # a test cannot count on it (nor name it): the warnings are not asserted
    obs["warning"] = name
    matched = _matchable(message)
    if matched is not None:
        obs["warning_message"] = matched
    return obs, _warns_otherwise(category, matched, differs), first


def _warns_otherwise(
    category: type[Warning], message: str | None, differs: Callable[[_Outcome], bool]
) -> Callable[[_Outcome], bool]:
    """Whether an outcome fails the test ``differs`` checks inside ``with
    pytest.warns(category)`` (with ``match`` the whole ``message``, when there is one)."""

    def warns_otherwise(got: _Outcome) -> bool:
        return differs(got) or not any(
            issubclass(c, category) and (message is None or m == message) for c, m in got.warned
        )

    return warns_otherwise


def _observe_outcome(
    call: str, code: types.CodeType, namespace: dict[str, Any], call_seconds: float
) -> tuple[dict[str, Any] | None, Callable[[_Outcome], bool] | None, _Outcome] | str:
    """:func:`_observe` without the warnings."""
    first = _call(code, namespace, call_seconds)
    second = first if first.timeout else _call(code, namespace, call_seconds)
    if first.timeout or second.timeout:
        return "timeout"
    if first.wrote or second.wrote:
        # Its test would write into the folder pytest runs in: the user's project.
        return "files"
    if first.error is not None:
        if isinstance(first.error, StdinRead):
            return "stdin"
        if isinstance(first.error, _NOT_RECORDED):
            return "crash"
        if (
            second.error is None
            or type(second.error) is not type(first.error)
            or second.wrap != first.wrap
        ):
            return "unstable"
        name = _exception(first.error)
        if name is None:
            return "unnamed"
        obs: dict[str, Any] = {"call": call, "exception": name, "wrap": first.wrap, "kills": []}
        message = _message(first.error)
        if message is not None and message == _message(second.error):
            obs["message"] = message
        return obs, _raises_otherwise(type(first.error), first.wrap, obs.get("message")), first
    tagged = encode(first.value)
    view: Callable[[object], object] | None = None
    seen_as = ""
    if tagged is None and first.wrap == "" and not _is_function(first.value):
        # No literal form: a view of it, the same for both runs.
        found = _view(first.value)
        if found is not None:
            seen_as, view, tagged = found
            try:
                if second.error is not None or view(second.value) != decode(tagged):
                    tagged = None
            except Exception:
                tagged = None
    if tagged is None or (view is None and has_nan(first.value)):
        return None, None, first
    try:
        expected = decode(tagged)
        same = view is not None or (
            second.error is None
            and second.wrap == first.wrap
            and encode(second.value) == tagged
            and matches(first.value, expected)
            and matches(second.value, expected)
        )
    except Exception:
        same = False
    if not same:
        return "unstable"
    shown = seen_as if view is not None else first.wrap
    obs = {"call": call, "value": tagged, "wrap": shown, "kills": []}
    return obs, _returns_otherwise(expected, first.wrap, view), first


def record(
    target: dict[str, Any],
    call_seconds: float,
    deadline: float,
    emit: Callable[[dict[str, Any]], None] = lambda _: None,
) -> dict[str, Any]:
    """One target's observations (see the module docstring); ``emit`` is given the answer so
    far once the calls are recorded and after each variant (a process killed in a call its
    alarm cannot stop keeps them)."""
    answer: dict[str, Any] = {"qualname": target["qualname"], "module": target["module"]}
    dropped: dict[str, int] = {}
    answer["dropped"] = dropped
    answer["observations"] = []
    answer["variants"] = 0

    def drop(reason: str) -> None:
        dropped[reason] = dropped.get(reason, 0) + 1

    namespace, error = _namespace(target, deadline)
    if namespace is None:
        answer["error"] = error
        return answer
    _workdir.settle()
    module = importlib.import_module(target["module"])  # imported just now
    kept: list[tuple[dict[str, Any], types.CodeType, Callable[[_Outcome], bool]]] = []
    calls = list(target["calls"])
    planned = set(calls)
    calls += [c for c in dict.fromkeys(_template_calls(target, module)) if c not in planned]
    applied = 0
    emitted = time.monotonic()
    spent: dict[int, float] = {}
    for call in calls:
        if time.monotonic() > deadline:
            drop("time")
            continue
        if time.monotonic() - emitted > EMIT_SECONDS:
            # What is recorded so far, should a call its alarm cannot stop come next.
            answer["observations"] = [obs for obs, _, _ in kept]
            emit(answer)
            emitted = time.monotonic()
        try:
            code = compile(call, "<recorded>", "eval")
        except SyntaxError:
            drop("syntax")
            continue
        if dropped.get("timeout", 0) >= MAX_TIMEOUTS:
            drop("timeout")  # the others would likely hang too: the time goes to the variants
            continue
        observed = _observe(call, code, namespace, call_seconds)
        if isinstance(observed, str):
            drop(observed)
            continue
        obs, differs, first = observed
        if _is_function(first.value) and applied < MAX_APPLIED:
            # A function made by the function: what it does to a few values says what it is.
            calls += [f"{call}({probe})" for probe in PROBES]
            applied += 1
        if obs is None or differs is None:
            drop("unrenderable")
            continue
        if first.seconds <= VARIANT_CALL_SECONDS:
            obs["fast"] = True
            spent[id(obs)] = first.seconds
        kept.append((obs, code, differs))
    # Once more, in the other order: a call whose outcome depends on what the others changed
    # (a registry they add to) would not pass as a test either.
    again = {
        id(obs)
        for obs, code, differs in reversed(kept)
        if differs(_call(code, namespace, call_seconds))
    }
    # A fast call, twice more: an outcome drawn at random from a few agrees by chance less
    # often with five runs than with three.
    for _ in range(2):
        again |= {
            id(obs)
            for obs, code, differs in kept
            if "fast" in obs
            and id(obs) not in again
            and differs(_call(code, namespace, call_seconds))
        }
    for _ in again:
        drop("unstable")
    kept = [k for k in kept if id(k[0]) not in again]
    answer["observations"] = [obs for obs, _, _ in kept]
    kept = [k for k in kept if k[0].pop("fast", False)]
    emit(answer)
    if not kept or not target.get("variants"):
        return answer
    kept = _affordable(kept, spent, len(target["variants"]), deadline - time.monotonic())
    try:
        original, caches = function_behind(module, target["qualname"])
    except (TypeError, KeyError, AttributeError) as exc:
        answer["variant_error"] = f"{type(exc).__name__}: {exc}"
        return answer
    saved = (original.__code__, original.__defaults__, original.__kwdefaults__)
    variants = list(target["variants"])
    compiled: list[tuple[int, types.FunctionType]] = []
    # Spread over the body, should the time run out before the last.
    order = [i for start in range(4) for i in range(start, len(variants), 4)]
    for tried, number in enumerate(order, 1):
        source = variants[number]
        if time.monotonic() > deadline:
            break
        answer["tried"] = tried
        variant = _compile_variant(source, target["qualname"], module)
        if variant is None or variant.__code__.co_freevars != saved[0].co_freevars:
            continue
        answer["variants"] += 1
        compiled.append((number, variant))
        original.__code__ = variant.__code__
        original.__defaults__ = variant.__defaults__
        original.__kwdefaults__ = variant.__kwdefaults__
        try:
            for obs, code, differs in kept:
                for cache in caches:
                    cache.cache_clear()
                got = _call(code, namespace, call_seconds)
                if differs(got):
                    obs["kills"].append(number)
                if got.timeout or time.monotonic() > deadline:
                    break  # a variant that hangs would spend the budget on every call
        finally:
            original.__code__, original.__defaults__, original.__kwdefaults__ = saved
            for cache in caches:
                cache.cache_clear()
        emit(answer)
    _search(answer, kept, compiled, original, caches, namespace, call_seconds, deadline)
    emit(answer)
    return answer


#: New calls the search tries at most, for the variants no planned call told apart.
MAX_SEARCHED = 600
#: Calls with an argument of another type the search tries in its first round, and calls with
#: the texts and numbers the function holds for an argument.
MAX_RETYPED = 100
MAX_INFUSED = 150
#: New calls the search makes around a call that ran lines no call before it did.
AROUND = 40
#: Runs a found call makes once more, all to agree, before it is kept (a planned call makes
#: five in all): of the thousand calls searched, one drawing from a few outcomes at random
#: agrees with itself over fewer by chance (jinja2.filters.do_random's found test failed).
FOUND_RUNS = 8
#: Rounds of the search: the first from the kept calls, each next from the calls the one
#: before found.
SEARCH_ROUNDS = 3


def _search(
    answer: dict[str, Any],
    kept: list[tuple[dict[str, Any], types.CodeType, Callable[[_Outcome], bool]]],
    compiled: list[tuple[int, types.FunctionType]],
    original: types.FunctionType,
    caches: list[Any],
    namespace: dict[str, Any],
    call_seconds: float,
    deadline: float,
) -> None:
    """Kill-guided search, in the time left: calls made of the kept ones' arguments
    (:func:`neighbours`, :func:`retyped`), each run on the variants no call told apart yet;
    one that tells some apart is kept (its ``kills`` are among those only), once it proved
    stable. Coverage-guided too: the calls made around one that ran lines of the function no
    call before it did (kept or not: it may tell nothing apart itself) are tried next."""
    killed = {n for obs, _, _ in kept for n in obs["kills"]}
    left = [(n, v) for n, v in compiled if n not in killed]
    if not left or time.monotonic() > deadline:
        return
    saved = (original.__code__, original.__defaults__, original.__kwdefaults__)
    tried = {obs["call"] for obs, _, _ in kept}
    found: list[str] = []
    # Round one from the kept calls (the most telling first); then from those found, if any.
    seeds, told = [o["call"] for o, _, _ in kept], [o["kills"] for o, _, _ in kept]
    # In turn: the neighbours, an argument of another type, the texts and numbers it holds.
    ranked = [c for _, c in sorted(enumerate(seeds), key=lambda p: -len(told[p[0]]))]
    planned = alternated(
        neighbours(seeds, MAX_SEARCHED, told),
        retyped(ranked, MAX_RETYPED),
        infused(ranked, held(original), MAX_INFUSED),
    )
    # The lines the kept calls run: a call found that runs others is searched around first.
    lines = Lines(original)
    covered: set[tuple[int, int]] = set()
    for _, code, _ in kept:
        covered |= lines.run(_call, code, namespace, call_seconds)[1]
    rounds = SEARCH_ROUNDS
    while planned or (found and rounds > 1):
        if not planned:
            rounds -= 1
            planned = [c for c in neighbours(found, MAX_SEARCHED // 2) if c not in tried]
            found = []
            continue
        call = planned.pop(0)
        if not left or time.monotonic() > deadline:
            break
        tried.add(call)
        if caches and cache_may_answer(call):
            continue  # its test could find another test's entry in the cache (record_caches)
        try:
            code = compile(call, "<recorded>", "eval")
        except SyntaxError:
            continue
        observed, reached = lines.run(_observe, call, code, namespace, call_seconds)
        if not reached <= covered and observed != "timeout":
            covered |= reached
            planned[:0] = [c for c in around(call, seeds, AROUND) if c not in tried]
        if isinstance(observed, str):
            continue
        obs, differs, first = observed
        if obs is None or differs is None or first.seconds > VARIANT_CALL_SECONDS:
            continue
        kills: list[int] = []
        for number, variant in left:
            original.__code__ = variant.__code__
            original.__defaults__ = variant.__defaults__
            original.__kwdefaults__ = variant.__kwdefaults__
            try:
                for cache in caches:
                    cache.cache_clear()
                if differs(_call(code, namespace, call_seconds)):
                    kills.append(number)
            finally:
                original.__code__, original.__defaults__, original.__kwdefaults__ = saved
                for cache in caches:
                    cache.cache_clear()
        # Kept only if more runs agree (:data:`FOUND_RUNS`).
        runs = range(FOUND_RUNS)
        if kills and not any(differs(_call(code, namespace, call_seconds)) for _ in runs):
            obs["kills"] = kills
            answer["observations"].append(obs)
            answer["searched"] = answer.get("searched", 0) + 1
            left = [(n, v) for n, v in left if n not in kills]
            found.append(call)


def _affordable(
    kept: list[tuple[dict[str, Any], types.CodeType, Callable[[_Outcome], bool]]],
    spent: dict[int, float],
    variants: int,
    seconds: float,
) -> list[tuple[dict[str, Any], types.CodeType, Callable[[_Outcome], bool]]]:
    """The calls to replay on every variant within ``seconds``: all when there is time, else
    as many as fit, one per distinct outcome first."""
    each = sum(spent.get(id(obs), 0.0) for obs, _, _ in kept) or 1e-6
    if each * variants <= seconds * 0.8:
        return kept
    fit = max(1, int(len(kept) * seconds * 0.8 / (each * variants)))
    first: dict[str, int] = {}
    for index, (obs, _, _) in enumerate(kept):
        first.setdefault(json.dumps([obs.get("value"), obs.get("exception")]), index)
    lead = sorted(first.values())
    ranked = lead + [i for i in range(len(kept)) if i not in set(lead)]
    return [kept[i] for i in sorted(ranked[:fit])]


def _isolated(
    target: dict[str, Any],
    call_seconds: float,
    deadline: float,
    out: Path,
    index: int,
    progress: Path | None = None,
) -> None:
    """Record ``target`` in a forked child, so that what its calls change in the modules they
    share (a registry, a cache) does not reach the next target's; the child is killed at the
    deadline (a call its alarm cannot stop)."""
    _limit(max(1.0, deadline - time.monotonic()))
    # Imported once, before the fork: each child starts from the module as imported.
    with contextlib.suppress(BaseException):
        importlib.import_module(target["module"])
    _limit(0)
    pid = os.fork() if hasattr(os, "fork") else 0
    if pid == 0:

        def emit(answer: dict[str, Any]) -> None:
            # A file, not stdout: the code under test may print. A target's last line is its
            # answer.
            with out.open("a", encoding="utf-8") as file:
                file.write(json.dumps({**answer, "index": index}) + "\n")
            if progress is not None:
                progress.write_text(json.dumps([index, answer.get("tried", 0)]), encoding="utf-8")

        emit(record(target, call_seconds, deadline, emit))
        if hasattr(os, "fork"):
            os._exit(0)
        return
    _reap(pid, deadline)


# -- the check in another process ---------------------------------------------------------------


def _differs_from(obs: dict[str, Any]) -> Callable[[_Outcome], bool] | None:
    """How an outcome fails the test ``obs`` becomes (None: its exception or warning class is
    not found)."""
    differs = _differs_without_warning(obs)
    if differs is None or "warning" not in obs:
        return differs
    module_name, name = obs["warning"]
    module = sys.modules.get(module_name)
    cls = getattr(module, name, None) if module is not None else None
    if not (isinstance(cls, type) and issubclass(cls, Warning)):
        return None
    return _warns_otherwise(cls, obs.get("warning_message"), differs)


def _differs_without_warning(obs: dict[str, Any]) -> Callable[[_Outcome], bool] | None:
    if "exception" in obs:
        module_name, name = obs["exception"]
        module = sys.modules.get(module_name)
        cls = getattr(module, name, None) if module is not None else None
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return None
        return _raises_otherwise(cls, obs.get("wrap", ""), obs.get("message"))
    views = {"vars": _vars, "repr": repr, "pattern": _pattern_of}
    view = views.get(obs.get("wrap", ""))
    wrap = "" if view is not None else obs.get("wrap", "")
    return _returns_otherwise(decode(obs["value"]), wrap, view)


def check(target: dict[str, Any], call_seconds: float, deadline: float) -> dict[str, Any]:
    """Which of ``target``'s observations another process sees otherwise (``unstable``: their
    indices; ``checked``: how many it went through). Run with another hash seed and the
    clock shifted (:func:`shift_clock`): an outcome that depends on either (a set of texts in
    the order it iterates, a timestamp) would make a test that fails later or elsewhere."""
    answer: dict[str, Any] = {"unstable": [], "checked": 0}
    # The module imported in the recording: one that does not now is not the calls' fault.
    namespace, error = _namespace(target, deadline)
    if namespace is None:
        answer["error"] = error
        return answer
    _workdir.settle()
    for index, obs in enumerate(target["observations"]):
        if time.monotonic() > deadline:
            break
        answer["checked"] = index + 1
        try:
            code = compile(obs["call"], "<recorded>", "eval")
            differs = _differs_from(obs)
        except Exception:
            differs = None
        if differs is None or differs(_call(code, namespace, call_seconds)):
            answer["unstable"].append(index)
    return answer


def _in_child(work: Callable[[], dict[str, Any]], out: Path, index: int, deadline: float) -> None:
    """``work`` in a forked child, its answer appended to ``out``; killed at the deadline."""
    pid = os.fork() if hasattr(os, "fork") else 0
    if pid == 0:
        with out.open("a", encoding="utf-8") as file:
            file.write(json.dumps({**work(), "index": index}) + "\n")
        if hasattr(os, "fork"):
            os._exit(0)
        return
    _reap(pid, deadline)


def _reap(pid: int, deadline: float) -> None:
    while True:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        if time.monotonic() > deadline + 1:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return
        time.sleep(0.005)


def main() -> None:
    job = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    if job.get("check"):
        shift_clock(float(job.get("clock_shift", CLOCK_SHIFT)))
    with contextlib.suppress(ValueError, OSError, ImportError):
        # A call that asks for gigabytes gets a MemoryError, not the machine's memory.
        import resource  # not on Windows

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    sys.path[:0] = job.get("paths", [])
    _workdir.use(job.get("workdir"))
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _alarm)
    deadline = time.monotonic() + float(job["seconds"])
    call_seconds = float(job["call_seconds"])
    # Each target's share: one that is slow leaves time for the next.
    each = float(job.get("target_seconds") or job["seconds"])
    out = Path(job["output"])
    out.touch()
    progress = Path(job["progress"]) if job.get("progress") else None
    for index, target in enumerate(job["targets"]):
        if time.monotonic() > deadline:
            break
        until = min(deadline, time.monotonic() + each)
        if job.get("check"):
            # Imported once, before the forks (as the recording does).
            _limit(max(1.0, until - time.monotonic()))
            with contextlib.suppress(BaseException):
                importlib.import_module(target["module"])
            _limit(0)

            def work(target: dict[str, Any] = target, until: float = until) -> dict[str, Any]:
                return check(target, call_seconds, until)

            _in_child(work, out, index, until)
        else:
            _isolated(target, call_seconds, until, out, index, progress)


if __name__ == "__main__":
    main()
