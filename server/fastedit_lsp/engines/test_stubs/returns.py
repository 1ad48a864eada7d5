"""Return tests: ``test_<name>_returns_<n>`` asserts the value a call returns, when the
evaluator computed it exactly from the code (builtin operations on values of this module's
making, the module's own plain functions walked in turn; never the user's code run). The calls
are chosen to go through as many of the function's statements as possible, then to show
different results, so that a change to the function shows in some test.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from .candidates import (
    _annotation_base,
    _call_text,
    _explore,
    _is_generator,
    _params,
    _Run,
    _takes_self,
)
from .doctests import _Context, _own_nodes
from .domain import mutates_module_state
from .render import _assert, _fit, _has_set, _render, _Test
from .scope import _dotted
from .targets import _FunctionNode
from .values import UNKNOWN, Raised
from .variants import variants

#: At most this many return tests per function.
MAX_RETURN_TESTS = 6
#: After the calls that cover the body, at most this many that show other results.
MORE_RESULTS = 3
#: Calls considered, variants of the function tried, and evaluator runs spent on them.
MAX_CANDIDATE_RUNS = 40
MAX_VARIANTS = 60
MAX_REPLAYS = 1200
# Decorators that do not change what the function returns.
_TRANSPARENT = frozenset(
    {"staticmethod", "cache", "lru_cache", "functools.cache", "functools.lru_cache"}
)


def _eligible(ctx: _Context) -> bool:
    fn = ctx.target.node
    if isinstance(fn, ast.AsyncFunctionDef) and _is_generator(fn):
        return False
    for decorator in fn.decorator_list:
        name = _dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
        if name not in _TRANSPARENT:
            return False
    if _takes_self(ctx.target):
        cls = ctx.target.classes[-1]
        plain_class = not cls.decorator_list and all(_dotted(b) == "object" for b in cls.bases)
        if not (ctx.instantiable and plain_class and not cls.keywords):
            return False
    return not mutates_module_state(fn, set(ctx.info.names))


def _chosen(
    fn_statements: set[int], runs: list[_Run], typed: bool, kills: list[frozenset[int]]
) -> list[_Run]:
    """The runs that tell the function apart from the most variants of it (``kills[i]``: the
    variants run ``i`` tells apart), then those that cover the most statements, then (for typed
    parameters: other values are guesses) a few that show new results."""
    chosen: list[_Run] = []
    killed: set[int] = set()
    while len(chosen) < MAX_RETURN_TESTS:
        best, gain = -1, 0
        for index, kill in enumerate(kills):
            new = len(kill - killed)
            if new > gain:
                best, gain = index, new
        if best < 0:
            break
        chosen.append(runs[best])
        killed |= kills[best]
    covered: set[int] = set().union(*(r.covered for r in chosen))
    chosen += _covering(fn_statements, runs, covered, MAX_RETURN_TESTS - len(chosen))
    shown = {repr(r.result) for r in chosen}
    limit = min(MAX_RETURN_TESTS, len(chosen) + (MORE_RESULTS if typed else 1))
    for run in runs:
        if len(chosen) >= limit:
            break
        if repr(run.result) not in shown:
            chosen.append(run)
            shown.add(repr(run.result))
    return chosen


def _covering(
    fn_statements: set[int], runs: list[_Run], covered: set[int], most: int
) -> list[_Run]:
    """At most ``most`` runs, each the one covering the most statements of the function not in
    ``covered`` nor covered by those before it (``covered`` grows with them)."""
    found: list[_Run] = []
    while len(found) < most:
        best: _Run | None = None
        more = 0
        for run in runs:
            new = len((run.covered & fn_statements) - covered)
            if new > more:
                best, more = run, new
        if best is None:
            break
        found.append(best)
        covered |= best.covered
    return found


def _by_coverage(fn_statements: set[int], runs: list[_Run]) -> list[_Run]:
    """The runs, those that cover statements no earlier one covered first."""
    first = _covering(fn_statements, runs, set(), len(runs))
    return first + [r for r in runs if not any(r is f for f in first)]


def _same(expected: object, got: object) -> bool:
    return type(expected) is type(got) and repr(expected) == repr(got)


def _kills(
    fn: _FunctionNode,
    runs: list[_Run],
    replay: Callable[[list[ast.stmt], list[object]], object] | None,
) -> list[frozenset[int]]:
    """For each run, the variants of the function (``variants``) whose result for the run's
    arguments differs from the function's, as far as the evaluator computes it."""
    if replay is None or not runs:
        return [frozenset() for _ in runs]
    bodies = variants(fn, MAX_VARIANTS)
    kills: list[set[int]] = [set() for _ in runs]
    budget = MAX_REPLAYS
    for number, body in enumerate(bodies):
        for index, run in enumerate(runs):
            if budget <= 0:
                break
            budget -= 1
            got = replay(body, run.values)
            if got is UNKNOWN:
                continue
            if isinstance(got, Raised) or not _same(run.result, got):
                kills[index].add(number)
    return [frozenset(k) for k in kills]


def _has_nan(value: object) -> bool:
    if isinstance(value, float):
        return value != value
    if isinstance(value, list | tuple):
        return any(_has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nan(k) or _has_nan(v) for k, v in value.items())
    return False


def _return_tests(ctx: _Context, prefix: str, shown_calls: set[str]) -> list[_Test]:
    """Tests of the values the function returns, where the evaluator knows them exactly."""
    if not _eligible(ctx):
        return []
    fn = ctx.target.node
    params, varargs, kwargs = _params(fn, skip_first=_takes_self(ctx.target))
    explored = _explore(ctx, params, (varargs, kwargs))
    statements = {id(n) for n in _own_nodes(fn) if isinstance(n, ast.stmt)}
    tests: list[_Test] = []
    typed = all(_annotation_base(p.annotation)[0] not in (None, "Any", "object") for p in params)
    # The runs a test can show: a set's order varies, NaN equals nothing.
    runs: list[_Run] = []
    texts: dict[int, tuple[str, str]] = {}
    calls: set[str] = set()
    for run in explored.returns:
        if _has_set(run.result) or _has_nan(run.result):
            continue
        rendered = _render(run.result)
        call = _call_text(ctx, params, run.values)
        if rendered is None or call is None or call in shown_calls:
            continue
        if call in calls:
            continue
        calls.add(call)
        texts[id(run)] = (call, rendered)
        runs.append(run)
    # The calls that cover the body first: the variants are tried on those.
    runs = _by_coverage(statements, runs)
    kills = _kills(fn, runs[:MAX_CANDIDATE_RUNS], explored.replay)
    kills += [frozenset()] * (len(runs) - len(kills))
    for run in _chosen(statements, runs, typed, kills):
        call, rendered = texts[id(run)]
        if call in shown_calls:
            continue
        shown_calls.add(call)
        if run.result is None or isinstance(run.result, bool):
            check = _assert(call, "is", rendered)
        else:
            check = _assert(_fit(call, base=7), "==", rendered)
        tests.append(_Test(f"test_{prefix}_returns_{len(tests) + 1}", [check], kind="returns"))
    return tests
